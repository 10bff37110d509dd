"""The run data cut as checkprofile 0.1.0 made it, before issue 13 made it faster: the oracle
the property tests compare the new cut with, byte for byte (tests/test_bundle_speed_props.py).

Frozen on purpose: a copy of the old ``checkprofile/_bundle.py`` cut (commit 9b689fb), with
imports made absolute and the public classes left out. Never change it to make a test pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, TypeGuard, cast

import attrs

from checkprofile._convert import NotJson, plain
from checkprofile._shown import escape_surrogates, show
from checkprofile.errors import MaterialError, pointer_token

_ASCII = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False)
_UTF8 = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def canonical_json(value: Any) -> str:
    """The one JSON text form the evaluator is shown: compact, keys sorted, not ASCII-escaped.

    Equal to ``json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))``,
    except that a lone surrogate (half of a UTF-16 pair, which JSON parsers let through) stays
    escaped as ``\\udXXX``, as JavaScript's ``JSON.stringify`` writes it: the text is always
    valid UTF-8. Raises :class:`ValueError` for a value that is not JSON data (see
    :func:`~checkprofile._convert.plain`; NaN and the infinities included).
    """
    try:
        value = plain(value, finite=False)
    except NotJson as error:
        raise ValueError(f"not JSON data: {error}") from None
    return _canonical(value)


def _canonical(value: Any) -> str:
    """:func:`canonical_json` of a value already plain (the bundle's pieces are)."""
    # The ASCII encoder is the C fast path (ensure_ascii=False costs about 1.6 times as much).
    # Its output differs from the UTF-8 form only where it wrote a \u escape, so only then is
    # the value encoded again. (A one-character search is a memchr; most text has no "\\".)
    ascii_text = _ASCII.encode(value)
    if "\\" not in ascii_text or "\\u" not in ascii_text:
        return ascii_text
    text = _UTF8.encode(value)
    # Only a \ud8xx-\udfxx escape (a pair for a character beyond U+FFFF, or a lone half) can
    # have left a surrogate in the UTF-8 form; pairs came through as one character.
    return escape_surrogates(text) if "\\ud" in ascii_text else text


def json_problem(error: Exception) -> str:
    """Why a value could not be written as JSON, in the same words on every Python."""
    if isinstance(error, RecursionError):
        return "it is nested too deeply"
    if isinstance(error, ValueError) and str(error).startswith("Out of range float"):
        return "it holds NaN or an infinity, which JSON cannot write"
    if isinstance(error, TypeError):
        return f"it holds a value that is not JSON data ({error})"
    return str(error)


def _size(text: str) -> int:
    # UTF-8 byte length; most run data is ASCII, where the length is the byte count.
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


@attrs.frozen
class _View:
    text: str
    dropped_steps: tuple[str, ...]
    dropped_fields: tuple[str, ...]


def _piece(key: str, value: Any, path: tuple[str, ...], *, step: bool = False) -> str:
    """One ``"key":value`` member of a JSON object, in the canonical form (one encoder call).
    ``path`` says where it is in run data; a ``step`` is a step record under its id."""
    try:
        return _encode({key: _shown(value, path, step=step)}, steps=step)[1:-1]
    except (TypeError, ValueError, RecursionError) as error:
        raise MaterialError(
            f"run data {'.'.join(path)} cannot be shown as JSON: {json_problem(error)}",
            path=path,
        ) from None


def _shown(value: object, path: tuple[str, ...], *, step: bool = False) -> Any:
    """``value`` as plain JSON data (NaN is left for the encoder to name), and a step record
    without its evidence ``url``s; a :class:`MaterialError` naming where it is not JSON data."""
    try:
        data = plain(value, finite=False)
    except NotJson as error:
        raise MaterialError(
            f"run data {'.'.join(path)} cannot be shown as JSON: {error}",
            path=(*path, *error.path),
        ) from None
    return _without_urls(data) if step else data


def _encode(members: Mapping[str, Any], *, steps: bool = False) -> str:
    """``members`` as canonical JSON with every evidence ``url`` removed, wherever it is.

    The common places (a step's ``evidence`` and its history's) are already stripped by
    :func:`_without_urls`; the text then says whether a ``"url"`` key is left anywhere, and
    only then is the value walked (a scan of the text costs a fraction of encoding it). With
    ``steps``, the members are step records under their ids: an id is not a field name, so a
    step whose id is ``evidence`` is a step, not an evidence entry.
    """
    text = _canonical(members)
    if '"url"' in text:
        if steps:
            text = _canonical({key: _deep_without_urls(value) for key, value in members.items()})
        else:
            text = _canonical(_deep_without_urls(members))
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


def _object(pieces: Mapping[str, str]) -> str:
    return "{" + ",".join(pieces[key] for key in sorted(pieces)) + "}"


def _object_size(sizes: Mapping[str, int]) -> int:
    return 2 + sum(sizes.values()) + max(len(sizes) - 1, 0)


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


def _members(value: object, what: str) -> dict[str, Any]:
    """The members of a map of run data (the root, ``steps``, ``inputs``) keyed by plain text,
    the values as they are; a :class:`MaterialError` for anything else."""
    kind = type(value)
    if issubclass(kind, dict):
        pairs: Iterable[tuple[Any, Any]] = dict.items(value)  # type: ignore[arg-type]
    elif isinstance(value, Mapping):
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


def _cut(run_data: object, budget: int) -> _View:
    if not (issubclass(type(run_data), dict) or isinstance(run_data, Mapping)):
        raise MaterialError(f"run data must be a JSON object, got {show(run_data)}")
    top = _members(run_data, "run data")
    for name in ("steps", "inputs"):
        value = top.get(name, {})
        if not (issubclass(type(value), dict) or isinstance(value, Mapping)):
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
    input_sizes = _Members({name: _size(piece) for name, piece in input_pieces.items()})
    top_sizes = _Members({key: _size(piece) for key, piece in other_pieces.items()})
    if "inputs" in top:
        top_sizes.set("inputs", len('"inputs":') + input_sizes.size)
    if "steps" in top:
        top_sizes.set("steps", len('"steps":{}'))

    room = budget - top_sizes.size
    steps_text = _all_steps(steps, room)
    if steps_text is not None:
        dropped_steps: tuple[str, ...] = ()
        if "steps" in top_sizes:
            top_sizes.set("steps", top_sizes.sizes["steps"] + _size(steps_text) - 2)
    else:
        kept, dropped_steps = _newest_steps(steps, room)
        steps_text = _object(kept)
        if "steps" in top_sizes:
            grown = sum(_size(p) for p in kept.values()) + max(len(kept) - 1, 0)
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
    return _View(_object(members), dropped_steps, tuple(dropped_fields))


# Phase A encodes steps in batches of consecutive ids, doubling from this size: few encoder
# calls when everything fits, and at most about twice the budget encoded when it does not.
_FIRST_BATCH = 8


def _all_steps(steps: Mapping[str, Any], room: int) -> str | None:
    """The whole ``steps`` object as canonical text when it fits in ``room``, else ``None``.

    Batches of consecutive step ids (in key order) are encoded as objects; since the batches
    follow each other in key order, their members joined with commas are exactly the members
    of the whole object, sorted. Encoding stops as soon as the running size is over ``room``.
    """
    ids = sorted(steps)
    inners: list[str] = []
    used = 2  # the braces
    if used > room:
        return None if ids else "{}"
    start, size = 0, _FIRST_BATCH
    while start < len(ids):
        batch = ids[start : start + size]
        try:
            text = _encode(
                {
                    step_id: _shown(steps[step_id], ("steps", step_id), step=True)
                    for step_id in batch
                },
                steps=True,
            )
        except (TypeError, ValueError, RecursionError, MaterialError):
            return None  # phase B names the step that cannot be shown
        used += _size(text) - 2 + (1 if inners else 0)
        if used > room:
            return None
        inners.append(text[1:-1])
        start, size = start + size, size * 2
    return "{" + ",".join(inners) + "}"


def _newest_steps(steps: Mapping[str, Any], room: int) -> tuple[dict[str, str], tuple[str, ...]]:
    """Phase B: the newest steps that fit in ``room`` (as pieces) and the dropped ids, oldest
    first. Each step is encoded only when it is reached; the first that does not fit ends it.
    Greedy on purpose: a newer step is never dropped while an older one is kept."""
    order = sorted(steps, key=lambda step_id: _age_key(step_id, steps[step_id]))  # oldest first
    kept: dict[str, str] = {}
    for step_id in reversed(order):
        if room <= 0:
            break
        piece = _piece(step_id, steps[step_id], ("steps", step_id), step=True)
        cost = _size(piece) + (1 if kept else 0)
        if cost > room:
            break
        kept[step_id] = piece
        room -= cost
    return kept, tuple(step_id for step_id in order if step_id not in kept)


# RFC 3339 `date-time` (section 5.6), exactly its grammar: ASCII digits only ([0-9] and
# re.ASCII, never \d, which takes any script's digits), "T" or "t" (ABNF literals are
# case-insensitive; a space is not in the grammar), a leap second :60, a fraction of any
# length, and "Z", "z" or a numeric offset (-00:00 included: the same instant as Z). The field
# ranges are in the pattern (month 13 or hour 24 do not match), so the usual "...Z" timestamp
# needs no parsing at all.
_RFC3339 = re.compile(
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])[Tt]"
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)"
    r"(\.[0-9]+)?([Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])\Z",
    re.ASCII,
)
# Sorts before every instant: a step with no readable `at` is the oldest.
_NO_AGE = ""
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_DAY_MINUTES = 24 * 60


def _instant(value: object) -> str | None:
    """An RFC 3339 timestamp as a UTC key that sorts in time order, or ``None``.

    The key is ``YYYY-MM-DDTHH:MM:SS`` in UTC, followed by ``.`` and the fraction of a second
    without trailing zeros when it has one: a shorter key sorts first, and ``20`` < ``20.5`` <
    ``21``, so plain string order is time order and equal instants have equal keys. A leap
    second ``:60`` sorts after ``:59`` and before the next minute. Run data is full of
    timestamps (every step and history entry has one), so the usual ``...Z`` form is keyed by
    one slice; only a timestamp with an offset is shifted to UTC, by plain arithmetic on the
    proleptic Gregorian calendar (any year 0000-9999, as RFC 3339 allows). A value that is not
    RFC 3339, or names no real day (month 13, 31 February), counts as no ``at``.
    """
    if type(value) is not str:
        if not issubclass(type(value), str):
            return None
        value = str.__str__(value)
    match = _RFC3339.match(value)
    if match is None:
        return None
    if value[8:10] > "28" and int(value[8:10]) > _days_in(int(value[:4]), int(value[5:7])):
        return None  # 31 April, 29 February of a common year
    fraction, zone = match.groups()
    if zone in ("Z", "z"):
        key = value[:19] if value[10] == "T" else value[:10] + "T" + value[11:19]
    else:
        year, month, day = int(value[:4]), int(value[5:7]), int(value[8:10])
        offset = int(zone[1:3]) * 60 + int(zone[4:6])
        minutes = (
            int(value[11:13]) * 60 + int(value[14:16]) + (-offset if zone[0] == "+" else offset)
        )
        if minutes < 0:
            minutes += _DAY_MINUTES
            year, month, day = _day_before(year, month, day)
        elif minutes >= _DAY_MINUTES:
            minutes -= _DAY_MINUTES
            year, month, day = _day_after(year, month, day)
        key = f"{_year_key(year)}-{month:02d}-{day:02d}T{minutes // 60:02d}:{minutes % 60:02d}"
        key += value[16:19]
    if fraction:
        digits = fraction[1:].rstrip("0")
        if digits:
            key += "." + digits
    return key


def _days_in(year: int, month: int) -> int:
    # The Gregorian rule, proleptic: 0000 is a leap year, 1900 is not, 2000 is.
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 29 if month == 2 and leap else _MONTH_DAYS[month - 1]


def _day_before(year: int, month: int, day: int) -> tuple[int, int, int]:
    if day > 1:
        return year, month, day - 1
    if month > 1:
        return year, month - 1, _days_in(year, month - 1)
    return year - 1, 12, 31


def _day_after(year: int, month: int, day: int) -> tuple[int, int, int]:
    if day < _days_in(year, month):
        return year, month, day + 1
    if month < 12:
        return year, month + 1, 1
    return year + 1, 1, 1


def _year_key(year: int) -> str:
    # An offset can carry 0000-01-01 into year -1 and 9999-12-31 into 10000 (UTC). Keys keep
    # four characters and still sort in time order: "-001" before "0000", ":000" after "9999".
    if year < 0:
        return "-001"
    return ":000" if year > 9999 else f"{year:04d}"


def _age_key(step_id: str, record: object) -> tuple[str, str]:
    # A step's age is the latest `at` of its record and its history; no `at` at all is oldest.
    # Ties go by step id, so the order never depends on the map's order. The record is as the
    # host gave it (it is made plain only if it is shown): it is read by dict's own methods.
    latest = _NO_AGE
    try:
        stamp = _instant(_field(record, "at"))
        if stamp is not None and stamp > latest:
            latest = stamp
        history = _field(record, "history")
        if issubclass(type(history), list):
            for entry in list.__iter__(cast(list[Any], history)):
                stamp = _instant(_field(entry, "at"))
                if stamp is not None and stamp > latest:
                    latest = stamp
    except Exception:  # a key of a host's own type whose __eq__ raises: no age, oldest
        return (_NO_AGE, step_id)
    return (latest, step_id)


def _field(record: object, key: str) -> object:
    # Run data is nearly all plain dicts; the exact type test skips the slower subclass check.
    if type(record) is dict:
        return record.get(key)
    return dict.get(cast(dict[str, Any], record), key) if issubclass(type(record), dict) else None


def _is_map(value: object) -> TypeGuard[dict[str, Any]]:
    # What is walked here is plain JSON data already (see _shown).
    return type(value) is dict


def _strip_evidence(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    # Plain loops: this runs once per step and history entry, on the hot path.
    if "evidence" not in entry:
        return entry
    evidence = entry["evidence"]
    if type(evidence) is not list:
        return entry
    for item in evidence:
        if _is_map(item) and "url" in item:
            break
    else:
        return entry
    copy = dict(entry)
    copy["evidence"] = [
        {k: v for k, v in item.items() if k != "url"} if _is_map(item) else item
        for item in evidence
    ]
    return copy


def _without_urls(record: object) -> object:
    """The step record without evidence ``url``s (short-lived links), in it and its history.

    Only the parts that change are copied; the host's run data is never modified.
    """
    if not _is_map(record):
        return record
    result = _strip_evidence(record)
    if "history" not in record:
        return result
    history = record["history"]
    if type(history) is not list:
        return result
    stripped = None
    for index, entry in enumerate(history):
        if _is_map(entry):
            new = _strip_evidence(entry)
            if new is not entry:
                if stripped is None:
                    stripped = list(history)
                stripped[index] = new
    if stripped is None:
        return result
    result = dict(result)
    result["history"] = stripped
    return result
