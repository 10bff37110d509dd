"""The fast cut shows the evaluator the same bytes as before (issue 13).

Three proofs, on generated run data: the step order (bulk-judged stamps) is the old per-stamp
order; the whole cut (text, dropped steps, dropped fields, or the error) is the old cut's,
with and without the ``fast`` extra; and the ``fast`` extra (orjson) writes exactly the pure
path's bytes, or is not used. The old cut is frozen in ``tests/bundle_before.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import bundle_before
import pytest
from hostile import raw_hostile
from hypothesis import given, settings
from hypothesis import strategies as st

from checkprofile import MaterialError, _convert, _json_text, canonical_json
from checkprofile._cut import cut_run_data
from checkprofile._step_ages import oldest_first

orjson = pytest.importorskip("orjson")  # in the test extra: both paths are always tested


@contextmanager
def writer(fast: bool) -> Iterator[None]:
    """The pure path, or the ``fast`` extra (looked up afresh), for the time of a block."""
    saved = _json_text._fast_dumps
    _json_text._fast_dumps = _json_text._UNSET if fast else None
    try:
        if fast:
            assert _json_text._fast() is not None
        yield
    finally:
        _json_text._fast_dumps = saved


both = pytest.mark.parametrize("fast", [False, True], ids=["pure", "fast"])


class Stamp(str):
    """Text whose own methods must never be called (a hostile host's str subclass)."""

    def __eq__(self, other: object) -> bool:
        raise AssertionError("a stamp's own __eq__ was called")

    def __lt__(self, other: object) -> bool:
        raise AssertionError("a stamp's own __lt__ was called")

    def __gt__(self, other: object) -> bool:
        raise AssertionError("a stamp's own __gt__ was called")

    def __getitem__(self, index: Any) -> str:
        raise AssertionError("a stamp's own __getitem__ was called")

    __hash__ = str.__hash__


def two(low: int, high: int) -> st.SearchStrategy[str]:
    return st.integers(low, high).map(lambda n: f"{n:02d}")


# Stamps as run data has them: mostly UTC to the second (the bulk path), and every way off it.
zulu = st.builds(
    lambda y, mo, d, h, mi, s: f"{y:04d}-{mo}-{d}T{h}:{mi}:{s}Z",
    st.sampled_from([0, 1900, 2000, 2023, 2024, 2026, 9999]),
    two(1, 12),
    st.one_of(two(1, 28), two(28, 31)),  # days 29-31 are judged against their month
    two(0, 23),
    two(0, 59),
    st.one_of(two(0, 59), st.just("60")),
)


def _changed(stamp: str, change: str) -> str:
    if change == "lower":
        return stamp.replace("T", "t").replace("Z", "z")
    if change == "fraction":
        return stamp[:19] + ".500Z"
    if change == "zeros":
        return stamp[:19] + ".000Z"
    if change == "offset+":
        return stamp[:19] + "+05:30"
    if change == "offset-":
        return stamp[:19] + "-00:00"
    if change == "month13":
        return stamp[:5] + "13" + stamp[7:]
    if change == "hour24":
        return stamp[:11] + "24" + stamp[13:]
    if change == "second61":
        return stamp[:17] + "61Z"
    if change == "day00":
        return stamp[:8] + "00" + stamp[10:]
    if change == "space":
        return stamp[:10] + " " + stamp[11:]
    if change == "digits":
        return "٢" + stamp[1:]  # another script's digit
    if change == "newline":
        return stamp[:19] + "\nZ"
    if change == "short":
        return stamp[:19]
    return stamp


stamps: st.SearchStrategy[object] = st.one_of(
    zulu,
    zulu,
    zulu,
    st.builds(
        _changed,
        zulu,
        st.sampled_from(
            [
                "lower",
                "fraction",
                "zeros",
                "offset+",
                "offset-",
                "month13",
                "hour24",
                "day00",
                "second61",
                "space",
                "digits",
                "newline",
                "short",
            ]
        ),
    ),
    zulu.map(Stamp),
    st.sampled_from([None, 20261006, "", "yesterday", ["2026-10-06T09:04:20Z"]]),
)


@st.composite
def step_records(draw: st.DrawFn, *, uniform: bool) -> object:
    """A step record; ``uniform`` draws core-2's usual shape (an ``at`` and a history of
    one entry each, the bulk path) far more often."""
    if not uniform and draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([None, "a step", 3, ["at"]]))
    record: dict[str, Any] = {"output": {"n": draw(st.integers(0, 5))}}
    at = draw(zulu if uniform else stamps)
    if uniform or draw(st.booleans()):
        record["at"] = at
    if uniform:
        history = [{"at": draw(zulu), "verdict": "returned"}]
    elif draw(st.booleans()):
        history = draw(
            st.lists(
                st.one_of(
                    st.builds(lambda a: {"at": a}, stamps),
                    st.just({"verdict": "returned"}),
                    st.just("not an entry"),
                ),
                max_size=3,
            )
        )
    else:
        history = draw(st.sampled_from([None, {}, "history"]))
    if history is not None:
        record["history"] = history
    return record


def step_maps(*, uniform: bool) -> st.SearchStrategy[dict[str, Any]]:
    ids = st.text("abAB_0é\x00😀", min_size=1, max_size=4)
    return st.dictionaries(ids, step_records(uniform=uniform), max_size=25)


@settings(max_examples=300)
@given(steps=st.one_of(step_maps(uniform=True), step_maps(uniform=False)))
def test_the_order_of_steps_is_the_old_order(steps: dict[str, Any]) -> None:
    old = sorted(steps, key=lambda step_id: bundle_before._age_key(step_id, steps[step_id]))
    assert oldest_first(steps, sorted(steps)) == old


def test_days_29_to_31_count_only_in_months_that_have_them() -> None:
    steps = {
        "a": {"at": "2023-02-29T10:00:00Z", "history": [{"at": "2023-01-01T00:00:00Z"}]},
        "b": {"at": "2024-02-29T10:00:00Z", "history": [{"at": "2023-01-01T00:00:00Z"}]},
        "c": {"at": "2026-04-31T10:00:00Z", "history": [{"at": "2022-01-01T00:00:00Z"}]},
        "d": {"at": "2026-05-31T10:00:00Z", "history": [{"at": "2022-01-01T00:00:00Z"}]},
        "e": {"at": "1900-02-29T10:00:00Z", "history": [{"at": "2021-01-01T00:00:00Z"}]},
    }
    # 29 February 2023, 31 April and 29 February 1900 name no day: those steps are aged by
    # their history alone.
    assert oldest_first(steps, sorted(steps)) == ["e", "c", "a", "b", "d"]


def test_a_stamps_own_methods_are_never_run() -> None:
    steps = {
        "a": {"at": Stamp("2026-10-06T09:04:20Z"), "history": [{"at": "2026-10-01T00:00:00Z"}]},
        "b": {"at": "2026-10-05T09:04:20Z", "history": [{"at": Stamp("2026-10-07T00:00:00Z")}]},
    }
    assert oldest_first(steps, ["a", "b"]) == ["a", "b"]


# Whole cuts, old against new ---------------------------------------------------------------

texts = st.text(
    st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(["\ud800", "\udfff", "\x00", "\x1f", "\x7f", '"', "\\", "`", "\u2028"]),
    ),
    max_size=12,
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1]),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
# Keys the cut treats specially wherever they are, so that an evidence entry or a "url" turns up
# where the steps' evidence is not (it is the host's data there, or stripped by the deep walk).
keys = st.one_of(texts, st.sampled_from(["evidence", "url", "history", "at", "steps", "inputs"]))
evidence_lists = st.lists(
    st.fixed_dictionaries({"kind": st.just("link"), "ref": texts}, optional={"url": texts}),
    max_size=2,
)
values = st.recursive(
    st.one_of(scalars, evidence_lists),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=12,
)


@st.composite
def cut_steps(draw: st.DrawFn) -> dict[str, Any]:
    steps = draw(step_maps(uniform=draw(st.booleans())))
    if draw(st.booleans()):
        steps["evidence"] = {"at": "2026-10-06T09:04:20Z", "url": "a step's own"}
    shared = {"kind": "file", "ref": "s.pdf", "url": "https://x/?shared"}  # in several steps
    for record in steps.values():
        if type(record) is dict:
            record["output"] = draw(values)
            if draw(st.booleans()):
                record["evidence"] = [{"kind": "file", "ref": "r.pdf", "url": "https://x/?sig"}]
            if draw(st.booleans()):
                record.setdefault("evidence", []).append(shared)
            if draw(st.integers(0, 3)) == 0:
                record["evidence"] = draw(st.one_of(values, st.just(shared)))
            history: Any = record.get("history")
            for index, entry in enumerate(history if type(history) is list else []):
                if type(entry) is dict and draw(st.booleans()):  # a copy: st.just's is shared
                    evidence = draw(st.one_of(evidence_lists, st.just([shared])))
                    history[index] = {**entry, "evidence": evidence}
    return steps


@st.composite
def runs(draw: st.DrawFn) -> dict[str, Any]:
    run: dict[str, Any] = {"steps": draw(cut_steps())}
    if draw(st.booleans()):
        run["inputs"] = draw(st.dictionaries(texts, values, max_size=3))
    extra = draw(st.dictionaries(texts, values, max_size=2))
    run.update({key: value for key, value in extra.items() if key not in ("steps", "inputs")})
    if draw(st.integers(0, 19)) == 0:
        run["steps"]["x"] = {"at": "2026-10-06T09:04:20Z", "output": float("nan")}
    return run


def cut_of(cut: Any, run: dict[str, Any], budget: int) -> tuple[object, ...]:
    try:
        view = cut(run, budget)
    except MaterialError as error:
        return ("error", str(error), error.path)
    return (view.text, view.dropped_steps, view.dropped_fields)


@both
@settings(max_examples=300)
@given(run=runs(), budget=st.integers(2, 4000))
def test_the_cut_is_the_old_cut_byte_for_byte(fast: bool, run: dict[str, Any], budget: int) -> None:
    with writer(fast):
        assert cut_of(cut_run_data, run, budget) == cut_of(bundle_before._cut, run, budget)


@both
@settings(max_examples=50)
@given(run=runs())
def test_a_long_run_cut_to_a_small_budget_is_the_old_cut(fast: bool, run: dict[str, Any]) -> None:
    # Many more steps than fit: the first pass gives up from its projection.
    many = {**run, "steps": {f"{i:04d}{k}": v for i in range(40) for k, v in run["steps"].items()}}
    with writer(fast):
        for budget in (64, 600, 5000):
            assert cut_of(cut_run_data, many, budget) == cut_of(bundle_before._cut, many, budget)


# The fast extra -------------------------------------------------------------------------------


@settings(max_examples=500)
@given(value=values)
def test_the_fast_extra_writes_the_pure_paths_bytes(value: object) -> None:
    with writer(fast=False):
        pure = canonical_json(value)
    with writer(fast=True):
        assert canonical_json(value) == pure
    assert pure == bundle_before.canonical_json(value)


def test_the_fast_extra_is_used_only_where_it_writes_the_same_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written: list[object] = []

    def spy(value: object) -> bytes:
        written.append(value)
        result: bytes = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        return result

    monkeypatch.setattr(_json_text, "_fast_dumps", spy)
    plain_data = {"b": [1, "é", None, True, 2**63], "a": {"\x00": "😀"}}
    assert canonical_json(plain_data) == json.dumps(
        plain_data, ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )
    assert written == [plain_data]
    # A float (orjson writes 1e16, Python 1e+16), NaN (orjson writes null): never given to it.
    written.clear()
    assert canonical_json({"x": 1e16}) == '{"x":1e+16}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})
    assert written == []
    # What it refuses (an integer beyond 64 bits, a lone surrogate) the pure path writes.
    assert canonical_json([2**64, "\ud800"]) == '[18446744073709551616,"\\ud800"]'
    assert len(written) == 1


# The quick look at plain data -------------------------------------------------------------------


def same(a: object, b: object) -> bool:
    """Equal plain values, of the same types all through (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and a != a:
        return b != b
    return a == b


def _slow(value: object, finite: bool) -> tuple[Any, bool] | str:
    walker = _convert._Plain(finite)
    try:
        return walker.walk(value, 0), walker.floats
    except (_convert.NotJson, RecursionError) as error:
        return f"refused: {error}"


@settings(max_examples=500)
@given(value=st.one_of(raw_hostile, values), finite=st.booleans())
def test_the_quick_look_says_as_is_only_when_the_full_walk_would(value: Any, finite: bool) -> None:
    seen = _convert._as_is(value, finite)
    if seen >= 0:
        slow = _slow(value, finite)
        assert not isinstance(slow, str), slow
        assert slow[0] is value
        assert slow[1] is bool(seen)
    # And plain() answers as the full walk does, whichever way it went.
    try:
        quick: object = _convert.plain_floats(value, finite=finite)
    except _convert.NotJson as error:
        quick = f"refused: {error}"
    slow = _slow(value, finite)
    if isinstance(slow, str) or isinstance(quick, str):
        assert quick == slow
    else:
        assert isinstance(quick, tuple)
        assert same(quick[0], slow[0]) and quick[1] == slow[1]


def test_the_quick_look_leaves_a_bomb_a_cycle_and_deep_nesting_to_the_full_walk() -> None:
    bomb: list[Any] = ["x" * 2000]
    for _ in range(40):
        bomb = [bomb, bomb]
    cycle: list[Any] = []
    cycle.append(cycle)
    deep: list[Any] = []
    for _ in range(_convert.MAX_DEPTH + 1):
        deep = [deep]
    for value, words in ((bomb, "shared parts"), (cycle, "contains itself"), (deep, "nested")):
        assert _convert._as_is(value, True) == -1
        with pytest.raises(_convert.NotJson, match=words):
            _convert.plain(value)
