"""The run data the evaluator is shown: the host's run data cut to a budget.

The run data view is the exact JSON text the evaluator is shown -- compact, keys sorted, UTF-8
-- and the budget is measured on that text (design decision 13). Run data that is plain JSON
data and fits is looked at once and encoded once, whole (:func:`_whole`). Else, to cost what
it shows, the text is assembled from separately serialized pieces (per input field, per other
top-level key, and steps in batches or one by one). Steps are first encoded in doubling
batches of consecutive ids, stopping as soon as the running size is over the budget; only if
they do not all fit are they ordered by age and encoded newest first, stopping at the first
that does not fit. So a 9 MB run cut to 64 KB encodes about twice the budget. Joining the
pieces in key order gives exactly the bytes
``json.dumps(view, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` would.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

import attrs

from ._convert import NotJson, look, plain_floats
from ._json_text import canonical_plain, json_problem, utf8_size
from ._shown import show
from ._step_ages import oldest_first
from ._types import all_of_type, is_mapping
from .errors import MaterialError, pointer_token

__all__ = ["RunDataView", "cut_run_data"]


@attrs.frozen
class RunDataView:
    """The run data text shown (within the budget), and what was cut from it: the step ids
    dropped, oldest first, and JSON Pointers of other run data removed, in the order removed."""

    text: str
    dropped_steps: tuple[str, ...]
    dropped_fields: tuple[str, ...]


def cut_run_data(run_data: object, budget: int) -> RunDataView:
    """``run_data`` as the evaluator is shown it, within ``budget`` bytes of UTF-8: whole when
    it fits; else the oldest steps dropped first, then top-level keys the profile does not
    name, then input fields. Raises :class:`~checkprofile.MaterialError` naming what cannot be
    shown as JSON."""
    whole = _whole(run_data, budget)
    if whole is not None:
        return RunDataView(whole, (), ())
    if not (issubclass(type(run_data), dict) or is_mapping(run_data)):
        raise MaterialError(f"run data must be a JSON object, got {show(run_data)}")
    top = _members(run_data, "run data")
    for name in ("steps", "inputs"):
        value = top.get(name, {})
        if not (issubclass(type(value), dict) or is_mapping(value)):
            raise MaterialError(
                f"run data {name} must be a map keyed by strings, got {show(value)}"
            )
    steps = _members(top.get("steps", {}), "run data steps")
    inputs = _members(top.get("inputs", {}), "run data inputs")

    # Pieces other than steps are serialized whole: they are what stays longest.
    input_pieces = {name: _piece(name, value, ("inputs", name)) for name, value in inputs.items()}
    other_pieces = {
        key: _piece(key, value, (key,))
        for key, value in top.items()
        if key not in ("steps", "inputs")
    }
    input_sizes = _Members({name: utf8_size(piece) for name, piece in input_pieces.items()})
    top_sizes = _Members({key: utf8_size(piece) for key, piece in other_pieces.items()})
    if "inputs" in top:
        top_sizes.set("inputs", len('"inputs":') + input_sizes.size)
    if "steps" in top:
        top_sizes.set("steps", len('"steps":{}'))

    room = budget - top_sizes.size
    ids = sorted(steps)
    steps_text = _all_steps(steps, ids, room)
    if steps_text is not None:
        dropped_steps: tuple[str, ...] = ()
        if "steps" in top_sizes:
            top_sizes.set("steps", top_sizes.sizes["steps"] + utf8_size(steps_text) - 2)
    else:
        kept, dropped_steps = _newest_steps(steps, ids, room)
        steps_text = _object(kept)
        if "steps" in top_sizes:
            grown = sum(utf8_size(p) for p in kept.values()) + max(len(kept) - 1, 0)
            top_sizes.set("steps", top_sizes.sizes["steps"] + grown)

    # Still over with every step gone: top-level keys the profile does not name, then input
    # fields (inputs are the last thing the evaluator loses), each largest first (ties by
    # name); then, for a budget smaller than the empty containers, the containers themselves.
    # Each removal costs the same however many keys there are (the sizes are kept as totals).
    dropped_fields: list[str] = []

    def drop_top_level(keys: list[str]) -> None:
        for key in sorted(keys, key=lambda k: (-top_sizes.sizes[k], k)):
            if top_sizes.size <= budget:
                return
            top_sizes.remove(key)
            dropped_fields.append("/" + pointer_token(key))

    if top_sizes.size > budget:
        drop_top_level([key for key in top_sizes.sizes if key not in ("inputs", "steps")])
        for name in sorted(input_sizes.sizes, key=lambda n: (-input_sizes.sizes[n], n)):
            if top_sizes.size <= budget:
                break
            input_sizes.remove(name)
            top_sizes.set("inputs", len('"inputs":') + input_sizes.size)
            del input_pieces[name]
            dropped_fields.append("/inputs/" + pointer_token(name))
        drop_top_level(list(top_sizes.sizes))

    members = {key: piece for key, piece in other_pieces.items() if key in top_sizes}
    if "inputs" in top_sizes:
        members["inputs"] = '"inputs":' + _object(input_pieces)
    if "steps" in top_sizes:
        members["steps"] = '"steps":' + steps_text
    return RunDataView(_object(members), dropped_steps, tuple(dropped_fields))


def _members(value: object, what: str) -> dict[str, Any]:
    """The members of a map of run data (the root, ``steps``, ``inputs``) keyed by plain text,
    the values as they are; a :class:`MaterialError` for anything else."""
    kind = type(value)
    if kind is dict and all_of_type(str, cast(dict[Any, Any], value)):
        return dict(cast(dict[str, Any], value))  # plain text keys: nothing to check
    if issubclass(kind, dict):
        pairs: Iterable[tuple[Any, Any]] = dict.items(value)  # type: ignore[arg-type]
    elif is_mapping(value):
        try:
            pairs = list(value.items())
        except Exception:  # a Mapping of a host's own that cannot list itself
            raise MaterialError(f"{what} cannot be read as a map, got {show(value)}") from None
    else:
        raise MaterialError(f"{what} must be a JSON object, got {show(value)}")
    members: dict[str, Any] = {}
    for key, item in pairs:
        if not issubclass(type(key), str):
            raise MaterialError(f"{what} keys must be strings, got {show(key)}")
        name = str.__str__(key)
        if name in members:
            raise MaterialError(f"{what} has the key {show(name)} twice")
        members[name] = item
    return members


class _Members:
    """The sizes of an object's members and the object's size, kept as members are added and
    removed: each change costs the same however many members there are."""

    def __init__(self, sizes: Mapping[str, int]) -> None:
        self.sizes = dict(sizes)
        self.total = sum(self.sizes.values())

    def __contains__(self, key: str) -> bool:
        return key in self.sizes

    def set(self, key: str, size: int) -> None:
        self.total += size - self.sizes.get(key, 0)
        self.sizes[key] = size

    def remove(self, key: str) -> None:
        self.total -= self.sizes.pop(key)

    @property
    def size(self) -> int:
        return 2 + self.total + max(len(self.sizes) - 1, 0)


def _object(pieces: Mapping[str, str]) -> str:
    return "{" + ",".join(pieces[key] for key in sorted(pieces)) + "}"


def _whole(run_data: object, budget: int) -> str | None:
    """The whole run data as its canonical text when it is plain JSON data that fits in
    ``budget``, in one encoding; ``None`` when it is not (the pieces then judge, cut, and name
    what cannot be shown).

    Run data that fits is nearly always plain already. One quick look, which gives up as soon
    as it has seen more than the budget could hold, and one encoding of the whole with the
    steps' evidence ``url``s left out give exactly the bytes the pieces would join to. The
    look counts the maps that hold a ``url`` key: when the steps' evidence held them all, no
    ``"url"`` is left anywhere (the text need not be searched); else the pieces judge.
    """
    if type(run_data) is not dict:
        return None
    steps = run_data.get("steps", _NO_STEPS)
    if type(steps) is not dict or type(run_data.get("inputs", _NO_STEPS)) is not dict:
        return None
    if len(steps) > 64:
        # A guess from the first step at what they all weigh, to give up at once on a long
        # run (a few steps are looked at whole): a wrong guess costs time only.
        first = look(next(iter(steps.values())), finite=False, limit=budget)
        if first is not None and first[2] * len(steps) > 2 * budget:
            return None
    seen = look(run_data, finite=False, limit=budget, counting="url")
    if seen is None:
        return None
    floats, urls, _ = seen
    shown = run_data
    if urls:
        shown = dict(run_data)
        shown_steps = {}
        for step_id, record in steps.items():
            shown_steps[step_id], removed = _without_urls_counted(record)
            urls -= removed
        if urls:
            return None  # a "url" kept: the pieces say where the evidence ones are
        shown["steps"] = shown_steps
    try:
        text = canonical_plain(shown, floats=bool(floats))
    except (TypeError, ValueError, RecursionError):
        return None  # NaN, say: the pieces name where
    return text if utf8_size(text) <= budget else None


_NO_STEPS: dict[str, Any] = {}


def _all_steps(steps: Mapping[str, Any], ids: list[str], room: int) -> str | None:
    """The whole ``steps`` object as canonical text when it fits in ``room``, else ``None``.

    Batches of consecutive step ids (``ids``, in key order) are encoded as objects; since the
    batches follow each other in key order, their members joined with commas are exactly the
    members of the whole object, sorted. Batches double from one step, and encoding stops as
    soon as the running size is over ``room``, or the steps encoded so far, as an average, say
    the rest cannot fit: a run that is cut costs about its budget here, never its size. (A
    wrong guess costs time only: the cut keeps every step that fits, the same bytes.)
    """
    if room < 2:
        return None if ids else "{}"
    inners: list[str] = []
    used = 2  # the braces
    start, size, count = 0, 1, len(ids)
    while start < count:
        members = {}
        floats = False
        clean = True
        try:
            for step_id in ids[start : start + size]:
                shown, has_float, has_none = _shown(steps[step_id], ("steps", step_id), step=True)
                members[step_id] = shown
                floats = floats or has_float
                clean = clean and has_none
            text = _encode(members, floats=floats, steps=True, clean=clean)
        except (TypeError, ValueError, RecursionError, MaterialError):
            return None  # the cut names the step that cannot be shown
        used += utf8_size(text) - 2 + (1 if inners else 0)
        if used > room:
            return None
        inners.append(text[1:-1])
        start += len(members)
        if start < count and used + (used - 2) * (count - start) // start > room:
            return None
        size *= 2
    return "{" + ",".join(inners) + "}"


def _newest_steps(
    steps: Mapping[str, Any], ids: list[str], room: int
) -> tuple[dict[str, str], tuple[str, ...]]:
    """The newest steps that fit in ``room`` (as pieces) and the dropped ids, oldest first.
    Each step is encoded only when it is reached; the first that does not fit ends it. Greedy
    on purpose: a newer step is never dropped while an older one is kept, so the kept steps
    are the newest ones and the dropped ones are the rest of the order, a slice."""
    order = oldest_first(steps, ids)  # oldest first
    kept: dict[str, str] = {}
    for step_id in reversed(order):
        if room <= 0:
            break
        piece = _piece(step_id, steps[step_id], ("steps", step_id), step=True)
        cost = utf8_size(piece) + (1 if kept else 0)
        if cost > room:
            break
        kept[step_id] = piece
        room -= cost
    return kept, tuple(order[: len(order) - len(kept)])


def _piece(key: str, value: Any, path: tuple[str, ...], *, step: bool = False) -> str:
    """One ``"key":value`` member of a JSON object, in the canonical form (one encoder call).
    ``path`` says where it is in run data; a ``step`` is a step record under its id."""
    shown, floats, clean = _shown(value, path, step=step)
    try:
        return _encode({key: shown}, floats=floats, steps=step, clean=clean)[1:-1]
    except (TypeError, ValueError, RecursionError) as error:
        raise MaterialError(
            f"run data {'.'.join(path)} cannot be shown as JSON: {json_problem(error)}",
            path=path,
        ) from None


def _shown(value: object, path: tuple[str, ...], *, step: bool = False) -> tuple[Any, bool, bool]:
    """``value`` as plain JSON data (NaN is left for the encoder to name), and a step record
    without its evidence ``url``s; a :class:`MaterialError` naming where it is not JSON data.
    Also whether it holds a float, and whether it is known to hold no ``url`` key any more
    (the quick look counted the maps that hold one, and the steps' evidence held them all)."""
    seen = look(value, finite=False, counting="url")
    if seen is not None:
        floats, urls, _ = seen
        if step and urls:
            value, removed = _without_urls_counted(value)
            urls -= removed
        return value, bool(floats), not urls
    try:
        data, has_float = plain_floats(value, finite=False)
    except NotJson as error:
        raise MaterialError(
            f"run data {'.'.join(path)} cannot be shown as JSON: {error}",
            path=(*path, *error.path),
        ) from None
    return (_without_urls(data) if step else data), has_float, False


def _encode(
    members: Mapping[str, Any], *, floats: bool = True, steps: bool = False, clean: bool = False
) -> str:
    """``members`` as canonical JSON with every evidence ``url`` removed, wherever it is.

    The common places (a step's ``evidence`` and its history's) are already stripped by
    :func:`_without_urls`. With ``clean`` no ``url`` key is left in the values (see
    :func:`_shown`); else the text says whether a ``"url"`` key is left anywhere, and only
    then is the value walked (a scan of the text costs a fraction of encoding it). With
    ``steps``, the members are step records under their ids: an id is not a field name, so a
    step whose id is ``evidence`` is a step, not an evidence entry.
    """
    text = canonical_plain(members, floats=floats)
    if not clean and '"url"' in text:
        if steps:
            stripped = {key: _deep_without_urls(value) for key, value in members.items()}
            text = canonical_plain(stripped, floats=floats)
        else:
            text = canonical_plain(_deep_without_urls(members), floats=floats)
    return text


def _evidence_without_urls(evidence: object) -> object:
    if type(evidence) is dict:
        return {k: _deep_without_urls(v) for k, v in evidence.items() if k != "url"}
    if type(evidence) is list:
        return [_evidence_without_urls(item) if type(item) is dict else item for item in evidence]
    return evidence


def _deep_without_urls(value: object) -> object:
    """A copy of ``value`` (plain JSON data) in which every ``evidence`` entry (a map, or a list
    of maps) at any depth has lost its ``url``. Other ``url`` keys are the host's data and
    stay."""
    if type(value) is dict:
        return {
            key: _evidence_without_urls(item) if key == "evidence" else _deep_without_urls(item)
            for key, item in value.items()
        }
    if type(value) is list:
        return [_deep_without_urls(item) for item in value]
    return value


def _strip_evidence(entry: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The entry (a map) without its evidence ``url``s, and how many were removed."""
    # Plain loops, no call per item: this runs once per step and history entry, on the hot
    # path of every bundle.
    evidence = entry.get("evidence")
    if type(evidence) is not list:
        return entry, 0
    copies = None
    removed = 0
    for index, item in enumerate(evidence):
        if type(item) is dict and "url" in item:
            if copies is None:
                copies = list(evidence)
            item = dict(item)
            del item["url"]
            copies[index] = item
            removed += 1
    if copies is None:
        return entry, 0
    copy = dict(entry)
    copy["evidence"] = copies
    return copy, removed


def _without_urls(record: object) -> object:
    """The step record without evidence ``url``s (short-lived links), in it and its history.

    Only the parts that change are copied; the host's run data is never modified.
    """
    return _without_urls_counted(record)[0]


def _without_urls_counted(record: object) -> tuple[object, int]:
    """:func:`_without_urls`, and how many ``url`` keys were removed."""
    if type(record) is not dict:
        return record, 0
    result, removed = _strip_evidence(record)
    history = record.get("history")
    if type(history) is not list:
        return result, removed
    stripped = None
    for index, entry in enumerate(history):
        if type(entry) is dict and "evidence" in entry:
            new, count = _strip_evidence(entry)
            if count:
                removed += count
                if stripped is None:
                    stripped = list(history)
                stripped[index] = new
    if stripped is None:
        return result, removed
    if result is record:
        result = dict(record)
    result["history"] = stripped
    return result, removed
