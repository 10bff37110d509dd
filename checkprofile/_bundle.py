"""What the evaluator sees: the material of one submission, with run data cut to a budget.

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

import json
from collections.abc import Callable, Iterable, Mapping
from itertools import chain, repeat
from typing import Any, cast

import attrs

from ._check import Check
from ._convert import (
    NotJson,
    converter,
    escape_surrogates,
    look,
    override,
    plain,
    plain_floats,
    plain_text,
    register_renamed,
    show,
)
from ._shapes import described, shallow_members, step_record_problems, submission_problems
from ._time import days_in as _days_in
from ._time import instant as _instant
from ._types import all_of_type, is_mapping
from .errors import LimitsError, MaterialError, pointer_token

__all__ = [
    "Bundle",
    "Evidence",
    "Material",
    "Submission",
    "build_bundle",
    "canonical_json",
    "evidence_items",
    "shown_submission",
]


def _encoder(ensure_ascii: bool) -> Callable[[Any], str]:
    """The canonical writer, ASCII-escaped or not, for plain data (which holds no cycle: it
    is written without the cycle check's bookkeeping, a tenth of the cost of a text of long
    strings). A cycle that slipped through would be a RecursionError, as deep nesting is."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # an interpreter without the C accelerator
        encode = json.JSONEncoder(
            ensure_ascii=ensure_ascii, sort_keys=True, separators=(",", ":"), allow_nan=False
        ).encode
        return encode
    strings = (
        json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    )

    def refuse(value: object) -> Any:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    write = make(None, refuse, strings, None, ":", ",", True, False, False)
    join = "".join
    return lambda value: join(write(value, 0))


_ascii_encode = _encoder(ensure_ascii=True)
_utf8_encode = _encoder(ensure_ascii=False)


def canonical_json(value: Any) -> str:
    """The one JSON text form the evaluator is shown: compact, keys sorted, not ASCII-escaped.

    Equal to ``json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))``,
    except that a lone surrogate (half of a UTF-16 pair, which JSON parsers let through) stays
    escaped as ``\\udXXX``, as JavaScript's ``JSON.stringify`` writes it: the text is always
    valid UTF-8. Raises :class:`ValueError` for a value that is not JSON data (see
    :func:`~checkprofile._convert.plain`; NaN and the infinities included).
    """
    try:
        value, floats = plain_floats(value, finite=False)
    except NotJson as error:
        raise ValueError(f"not JSON data: {error}") from None
    return _canonical(value, floats=floats)


# orjson's dumps when the `fast` extra is installed, else None; looked up at first use (a heavy
# import only where it is needed). Tests set it to None to check the pure path's bytes.
_UNSET: Any = object()
_fast_dumps: Any = _UNSET


def _fast() -> Any:
    global _fast_dumps
    if _fast_dumps is _UNSET:
        try:
            import orjson
        except ImportError:
            _fast_dumps = None
        else:
            option = orjson.OPT_SORT_KEYS
            _fast_dumps = lambda value: orjson.dumps(value, option=option)  # noqa: E731
    return _fast_dumps


def _canonical(value: Any, *, floats: bool = True) -> str:
    """:func:`canonical_json` of a value already plain (the bundle's pieces are). ``floats``
    says whether it may hold a float (see :func:`~checkprofile._convert.plain_floats`)."""
    # The `fast` extra (orjson) writes exactly these bytes for plain data without floats (it
    # formats them its own way, and writes NaN as null): keys sorted by code point (UTF-8 byte
    # order is code point order), the same escapes, text not ASCII-escaped. What it cannot
    # write as Python does it refuses (an integer beyond 64 bits, a lone surrogate, a value
    # nested too deeply), and the pure path below writes it.
    if not floats:
        dumps = _fast_dumps if _fast_dumps is not _UNSET else _fast()
        if dumps is not None:
            try:
                return dumps(value).decode()  # type: ignore[no-any-return]
            except TypeError:  # orjson.JSONEncodeError is a TypeError
                pass
    # The ASCII encoder is the C fast path (ensure_ascii=False costs about 1.6 times as much).
    # Its output differs from the UTF-8 form only where it wrote a \u escape, so only then is
    # the value encoded again. (A one-character search is a memchr; most text has no "\\".)
    ascii_text = _ascii_encode(value)
    if "\\" not in ascii_text or "\\u" not in ascii_text:
        return ascii_text
    text = _utf8_encode(value)
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


#: The kinds of evidence core-2 knows.
EVIDENCE_KINDS = ("file", "link")
#: The longest ``reason`` a submission may give, in characters (core-2).
MAX_REASON = 4000


def _evidence_kind(instance: Evidence, attribute: attrs.Attribute[str], value: object) -> None:
    if type(value) is not str or value not in EVIDENCE_KINDS:
        raise MaterialError(f"an evidence kind is file or link, got {show(value)}", path=("kind",))


def _evidence_ref(instance: Evidence, attribute: attrs.Attribute[str], value: object) -> None:
    if type(value) is not str or not value:
        raise MaterialError(
            f"an evidence ref is a non-empty string, got {show(value)}", path=("ref",)
        )


@attrs.frozen
class Evidence:
    """A reference to a piece of evidence: its ``kind`` (``file`` or ``link``) and ``ref`` (a
    non-empty string). Anything else raises :class:`~checkprofile.MaterialError`."""

    kind: str = attrs.field(converter=plain_text, validator=_evidence_kind)
    ref: str = attrs.field(converter=plain_text, validator=_evidence_ref)


def evidence_items(items: Iterable[Evidence | Mapping[str, Any]]) -> tuple[Evidence, ...]:
    """``items`` as :class:`Evidence`: each an ``Evidence``, or a map with ``kind`` and
    ``ref`` (any other key, such as a short-lived ``url``, is left behind: the evaluator sees
    references only). ``items`` is a list or a tuple. Raises
    :class:`~checkprofile.MaterialError` naming the item."""
    kind = type(items)
    if not issubclass(kind, (list, tuple)):
        raise MaterialError(f"evidence must be a list of items, got {show(items)}")
    result = []
    listed: Iterable[Any] = (
        list.__iter__(cast(list[Any], items))
        if issubclass(kind, list)
        else tuple.__iter__(cast(tuple[Any, ...], items))
    )
    for index, item in enumerate(listed):
        try:
            if type(item) is Evidence:
                result.append(item)
                continue
            try:
                data = plain(item)
            except NotJson as error:
                raise MaterialError(
                    f"an evidence item must be JSON data: {error}", path=error.path
                ) from None
            if type(data) is dict and "kind" in data and "ref" in data:
                result.append(Evidence(data["kind"], data["ref"]))
            else:
                raise MaterialError(
                    f"an evidence item is a map with kind and ref, got {show(item)}"
                )
        except MaterialError as error:
            raise MaterialError(str(error), path=(index, *error.path)) from None
    return tuple(result)


def _plain_output(value: object) -> object:
    # A map is made plain JSON data (a subclass's own code is never run again); anything
    # else is left for the validator to refuse with its own message.
    if not issubclass(type(value), dict):
        return value
    try:
        return plain(value)
    except NotJson as error:
        raise MaterialError(
            f"a submission's output cannot be shown as JSON: {error}",
            path=("output", *error.path),
        ) from None


def _output(instance: Submission, attribute: attrs.Attribute[Any], value: object) -> None:
    if type(value) is not dict:
        raise MaterialError(
            f"a submission's output is a map (a JSON object), got {show(value)}",
            path=("output",),
        )


def _text(
    what: str, *, non_empty: bool = False, at_most: int | None = None
) -> Callable[[Submission, attrs.Attribute[Any], object], None]:
    def check(instance: Submission, attribute: attrs.Attribute[Any], value: object) -> None:
        if value is None:
            return
        if type(value) is not str:
            raise MaterialError(
                f"a submission's {attribute.name} is {what}, got {show(value)}",
                path=(attribute.name,),
            )
        if (non_empty and not value) or (at_most is not None and len(value) > at_most):
            got = show(value) if not value else f"{len(value)} characters"
            raise MaterialError(
                f"a submission's {attribute.name} is {what}, got {got}", path=(attribute.name,)
            )

    return check


def _evidence_field(items: Iterable[Evidence | Mapping[str, Any]]) -> tuple[Evidence, ...]:
    try:
        return evidence_items(items)
    except MaterialError as error:
        raise MaterialError(str(error), path=("evidence", *error.path)) from None


# What of a step record is the submission it completed with.
_SUBMISSION_KEYS = ("output", "summary", "evidence", "next", "reason")


@attrs.frozen
class Submission:
    """What was submitted, in core-2's shape: ``output`` (a map), ``summary``, evidence
    references, and on a step whose ``next`` is a list of routes, ``next`` (the chosen step
    id) and ``reason``.

    ``Submission(output, summary=None, evidence=())``; ``next`` and ``reason`` are best given
    by keyword. A value core-2's submission cannot hold raises
    :class:`~checkprofile.MaterialError` naming the field (``path``): an output that is not a
    map, a summary that is not a string, an evidence item that is not ``file`` or ``link``
    with a non-empty ``ref``, an empty ``next``, a ``reason`` over 4000 characters.

    The route (``next``, ``reason``) is kept with the submission (the held candidate, the
    audit trail), but the evaluator is shown it only when the host asks for it:
    ``Material(..., show_route=True)``.
    """

    output: dict[str, Any] = attrs.field(converter=_plain_output, validator=_output)
    summary: str | None = attrs.field(
        default=None, converter=plain_text, validator=_text("a string")
    )
    evidence: tuple[Evidence, ...] = attrs.field(default=(), converter=_evidence_field)
    next: str | None = attrs.field(
        default=None,
        kw_only=True,
        converter=plain_text,
        validator=_text("a step id (a non-empty string)", non_empty=True),
    )
    reason: str | None = attrs.field(
        default=None,
        kw_only=True,
        converter=plain_text,
        validator=_text(f"a string of at most {MAX_REASON} characters", at_most=MAX_REASON),
    )

    @property
    def routed(self) -> bool:
        """Whether the submission carries a route (``next`` or ``reason``)."""
        return self.next is not None or self.reason is not None

    def to_json(self) -> dict[str, Any]:
        """``{"output", "summary"?, "evidence", "next"?, "reason"?}``: the whole submission,
        route included (what the evaluator sees is :attr:`Bundle.submission_json`)."""
        data: dict[str, Any] = converter.unstructure(self)
        return data

    @classmethod
    def from_json(cls, data: object, *, agent: bool = False) -> Submission:
        """Read core-2's submission: ``{"output": {...}, "summary"?, "evidence"?: [{"kind",
        "ref"}], "next"?, "reason"?}`` (an evidence item may also carry ``sha256`` and ``url``,
        which are left behind). With ``agent``, the summary of an agent's submit is also 1 to
        2000 characters.

        Raises :class:`~checkprofile.MaterialError` carrying every problem
        (:func:`~checkprofile.submission_problems`): ``problems``, and ``path`` of the first.
        """
        problems = submission_problems(data, agent=agent)
        if problems:
            raise MaterialError(
                described("the submission", problems), path=problems[0].path, problems=problems
            )
        # The members as given: what is inside the output (which the shape does not look
        # into) is made plain by the output's own check, and refused there, at its place.
        members = shallow_members(data)
        assert members is not None  # the shape says so
        return cls(
            members["output"],
            members.get("summary"),
            members.get("evidence", ()),
            next=members.get("next"),
            reason=members.get("reason"),
        )

    @classmethod
    def from_record(cls, data: object) -> Submission:
        """Read the submission a step completed with from its core-2 step record (run data's
        ``steps.<id>``): its ``output``, ``summary``, ``evidence``, ``next`` and ``reason``.
        The rest of the record (``by``, ``at``, ``check``, ``decision``, ``note``,
        ``history``) is the record's, and left behind.

        Raises :class:`~checkprofile.MaterialError` carrying every problem when ``data`` is
        not a step record, and when the record holds no ``output`` (a step that did not
        complete with a submission)."""
        problems = step_record_problems(data)
        if problems:
            raise MaterialError(
                described("the step record", problems), path=problems[0].path, problems=problems
            )
        members = shallow_members(data)
        assert members is not None  # the shape says so
        if "output" not in members:
            raise MaterialError(
                "the step record has no output: the step did not complete with a submission",
                path=("output",),
            )
        return cls.from_json({key: members[key] for key in _SUBMISSION_KEYS if key in members})


# `summary`, `next` and `reason` are left out while unset; `evidence` is always there, as a
# list of {kind, ref}.
register_renamed(Evidence)
register_renamed(
    Submission,
    omit_if_default=True,
    evidence=override(
        omit_if_default=False,
        unstruct_hook=lambda items: [converter.unstructure(item) for item in items],
    ),
)


def shown_submission(submission: Submission, *, show_route: bool) -> dict[str, Any]:
    """The submission as the evaluator is shown it: ``{"output", "summary"?, "evidence"}``,
    and ``next`` and ``reason`` only with ``show_route`` (design decision 12)."""
    data = submission.to_json()
    if not show_route:
        data.pop("next", None)
        data.pop("reason", None)
    return data


@attrs.frozen
class Material:
    """Everything the evaluator may see about one submission.

    ``run_data`` is the run's data as the host holds it (``inputs``, ``steps`` keyed by step
    id, ...); it is read when the bundle is built and never changed. ``show_route`` (default
    ``False``) shows the evaluator the submission's route, ``next`` and ``reason``: the
    profile does not list them among what it sees, so a host opts in (say, for a question
    about the route the agent chose).
    """

    instructions: str
    body: str
    run_data: Mapping[str, Any]
    submission: Submission
    show_route: bool = attrs.field(default=False, kw_only=True)


@attrs.frozen
class Bundle:
    """What one evaluator call is shown. Build it with :func:`build_bundle`.

    ``run_data_json`` is the exact run data text shown (within the budget) and ``run_data``
    the same as a fresh dict. ``dropped_steps`` are the step ids left out, oldest first;
    ``dropped_fields`` are JSON Pointers of other run data removed (input fields, then
    top-level keys), in the order removed. The evaluator is told both.
    """

    check: Check
    instructions: str
    body: str
    submission: Submission
    submission_json: str
    run_data_json: str
    truncated: bool = False
    dropped_steps: tuple[str, ...] = ()
    dropped_fields: tuple[str, ...] = ()

    @property
    def run_data(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.run_data_json)
        return data

    @property
    def run_data_bytes(self) -> int:
        return _size(self.run_data_json)

    def with_check(self, check: Check) -> Bundle:
        """The same material, asking ``check`` (used to re-ask the unanswered questions)."""
        return attrs.evolve(self, check=check)


def build_bundle(check: Check, material: Material, *, state_bytes: int) -> Bundle:
    """The evaluator's view of ``material`` for ``check``, run data cut to ``state_bytes``.

    Raises :class:`~checkprofile.errors.MaterialError` for run data or a submission that
    cannot be shown as JSON, naming where.

    It does not check that the run data has core-2's shape, on purpose: it needs a map (with
    ``inputs`` and ``steps`` maps keyed by strings when they are there) and shows anything
    else as it is, a key the profile does not name cut before any input. What the evaluator
    is shown is the host's run data, and the profile's truncation rules say what happens to
    every part of it (the conformance corpus pins them, extra top-level keys and records
    without ``history`` included). Run data read from outside is checked at the edge:
    :func:`~checkprofile.check_run_data` (the command line does so for ``--run-data``).
    """
    if type(state_bytes) is not int or state_bytes < 2:
        raise LimitsError(
            f"state_bytes must be an integer of at least 2 (bytes), got {show(state_bytes)}"
        )
    if type(check) is not Check:
        raise TypeError(f"build_bundle takes a Check (see parse_check), got {show(check)}")
    if not issubclass(type(material), Material):
        raise TypeError(f"material must be a Material, got {show(material)}")
    if type(material.submission) is not Submission:
        raise TypeError(
            f"material.submission must be a Submission, got {show(material.submission)}"
        )
    if type(material.show_route) is not bool:
        raise TypeError(
            f"material.show_route must be true or false (a bool), got {show(material.show_route)}"
        )
    texts = {}
    for name in ("instructions", "body"):
        value = getattr(material, name)
        if not issubclass(type(value), str):
            raise MaterialError(f"material.{name} must be a string, got {show(value)}")
        texts[name] = str.__str__(value)
    try:
        submission_json = canonical_json(
            shown_submission(material.submission, show_route=material.show_route)
        )
    except (TypeError, ValueError, RecursionError) as error:
        raise MaterialError(
            f"the submission cannot be shown as JSON: {json_problem(error)}"
        ) from None
    view = _cut(material.run_data, state_bytes)
    return Bundle(
        check=check,
        instructions=texts["instructions"],
        body=texts["body"],
        submission=material.submission,
        submission_json=submission_json,
        run_data_json=view.text,
        truncated=bool(view.dropped_steps or view.dropped_fields),
        dropped_steps=view.dropped_steps,
        dropped_fields=view.dropped_fields,
    )


@attrs.frozen
class _View:
    text: str
    dropped_steps: tuple[str, ...]
    dropped_fields: tuple[str, ...]


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
    text = _canonical(members, floats=floats)
    if not clean and '"url"' in text:
        if steps:
            stripped = {key: _deep_without_urls(value) for key, value in members.items()}
            text = _canonical(stripped, floats=floats)
        else:
            text = _canonical(_deep_without_urls(members), floats=floats)
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


def _cut(run_data: object, budget: int) -> _View:
    whole = _whole(run_data, budget)
    if whole is not None:
        return _View(whole, (), ())
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
    input_sizes = _Members({name: _size(piece) for name, piece in input_pieces.items()})
    top_sizes = _Members({key: _size(piece) for key, piece in other_pieces.items()})
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
            top_sizes.set("steps", top_sizes.sizes["steps"] + _size(steps_text) - 2)
    else:
        kept, dropped_steps = _newest_steps(steps, ids, room)
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
        text = _canonical(shown, floats=bool(floats))
    except (TypeError, ValueError, RecursionError):
        return None  # NaN, say: the pieces name where
    return text if _size(text) <= budget else None


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
        used += _size(text) - 2 + (1 if inners else 0)
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
    order = _order(steps, ids)  # oldest first
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
    return kept, tuple(order[: len(order) - len(kept)])


def _order(steps: Mapping[str, Any], ids: list[str]) -> list[str]:
    """The step ids (``ids``, sorted), oldest first.

    A step's age is the latest ``at`` of its record and its history (see :func:`_instant`);
    a step with none readable is the oldest. Ties go by step id, so the order never depends on
    the map's order. The records are as the host gave them (a record is made plain only if it
    is shown): they are read by dict's and list's own methods, and a record that cannot be
    read (a key of a host's own type whose ``__eq__`` raises) has no age.

    Every stamp is gathered first and judged in bulk (:func:`_stamp_keys`); the ids, already
    sorted, are then sorted by age alone, which keeps ties in id order.
    """
    ages = _zulu_ages(steps, ids)
    if ages is None:
        ages = _ages(steps, ids)
    return list(map(ids.__getitem__, sorted(range(len(ids)), key=ages.__getitem__)))


def _zulu_ages(steps: Mapping[str, Any], ids: list[str]) -> list[str] | None:
    """The ages of the steps when every record is a dict with a UTC ``at`` and either no
    ``history`` or a list of as many dicts with an ``at`` each (core-2's run data, most often
    one entry), read in bulk: C-level passes, no Python code per step but one comparison.
    Else ``None``."""
    get = dict.get
    try:
        records: list[Any] = list(map(steps.__getitem__, ids))
        stamps: list[Any] = list(map(get, records, repeat("at")))
        size = 0  # history entries per step
        if any(map(dict.__contains__, records, repeat("history"))):
            histories: list[Any] = list(map(get, records, repeat("history")))
            if all_of_type(list, histories):
                sizes = set(map(len, histories))
                if len(sizes) != 1:
                    return None
                size = sizes.pop()
                entries = list(chain.from_iterable(histories))
                if not all_of_type(dict, entries):
                    return None
                stamps += map(get, entries, repeat("at"))
            elif not all_of_type(type(None), histories):
                return None
    except Exception:  # a record that is not a dict, a key whose __eq__ raises
        return None
    keys = _zulu_keys(stamps)  # None for a missing `at` (None) too
    if keys is None:
        return None
    count = len(ids)
    if size == 0:
        return keys
    if size == 1:
        return [a if a > b else b for a, b in zip(keys[:count], keys[count:], strict=True)]
    columns = [keys[count + offset :: size] for offset in range(size)]
    return [max(group) for group in zip(keys[:count], *columns, strict=True)]


def _ages(steps: Mapping[str, Any], ids: list[str]) -> list[str]:
    """The ages of the steps, one step at a time."""
    stamps: list[object] = []
    ends: list[int] = []
    get = dict.get
    for step_id in ids:
        record = steps[step_id]
        start = len(stamps)
        kind = type(record)
        if kind is dict or issubclass(kind, dict):
            try:
                at = get(record, "at")
                if at is not None:
                    stamps.append(at)
                history = get(record, "history")
                if history is not None and issubclass(type(history), list):
                    for entry in list.__iter__(history):
                        if type(entry) is dict or issubclass(type(entry), dict):
                            at = get(entry, "at")
                            if at is not None:
                                stamps.append(at)
            except Exception:  # a key of a host's own type whose __eq__ raises: no age
                del stamps[start:]
        ends.append(len(stamps))
    keys = _stamp_keys(stamps)
    ages: list[str] = []
    start = 0
    for end in ends:
        ages.append(
            keys[start] if end - start == 1 else max(keys[start:end]) if end > start else _NO_AGE
        )
        start = end
    return ages


def _stamp_keys(stamps: list[object]) -> list[str]:
    """Each value's time key (:func:`_instant`), ``_NO_AGE`` for one that is not a timestamp.
    The keys of one call are compared with each other only."""
    keys = _zulu_keys(stamps)
    if keys is None:
        keys = [_instant(stamp) or _NO_AGE for stamp in stamps]
    return keys


# (position, character) of the fixed characters of a UTC timestamp, 2026-10-06T09:04:20Z.
_ZULU_MARKS = ((4, b"-"), (7, b"-"), (10, b"T"), (13, b":"), (16, b":"), (19, b"Z"))
_ZULU_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
# (first digit's index in _ZULU_DIGITS, lowest, highest): month, day, hour, minute, second
# (60: a leap second), as RFC 3339 allows them.
_ZULU_FIELDS = ((4, 1, 12), (6, 1, 31), (8, 0, 23), (10, 0, 59), (12, 0, 60))


def _zulu_keys(stamps: list[object]) -> list[str] | None:
    """The keys of ``stamps`` when every one is a UTC timestamp to the second
    (``2026-10-06T09:04:20Z``, as nearly all run data writes them), judged in bulk; else
    ``None`` (and :func:`_instant` judges each).

    Run data holds a stamp for every step and history entry, and a regex per stamp is most of
    the cost of cutting a long run. Here the stamps are joined into one text of fixed-width
    rows and each column is checked at once: the fixed characters by comparison, the digits by
    one deletion, and each two-digit field's range on all rows together, as the bytes of one
    big integer (each byte a field's value, no carries). Only a day 29-31 is then looked at
    alone, against its month. The key of such a stamp is the stamp itself: all end in ``Z``,
    so they sort as the :func:`_instant` keys would among themselves.
    """
    count = len(stamps)
    if not count:
        return []
    try:
        # Text only (a str subclass is read as its text, never by its own methods).
        joined = "\n".join(stamps)  # type: ignore[arg-type]
    except TypeError:
        return None
    row = 21
    if len(joined) != row * count - 1 or not joined.isascii():
        return None  # a stamp of another length (a fraction, an offset), or not one at all
    data = joined.encode("ascii")
    # With every row checked below, the separators in their column are all there are: no
    # stamp holds a line break, and each is exactly one row.
    if data[20::row] != b"\n" * (count - 1):
        return None
    for column, char in _ZULU_MARKS:
        if data[column::row] != char * count:
            return None
    digits = [data[column::row] for column in _ZULU_DIGITS]
    if b"".join(digits).translate(None, b"0123456789"):
        return None
    ones = int.from_bytes(b"\x01" * count, "big")
    high = ones << 7
    zero = ones * 0x30
    month = day = 0
    for first, lowest, highest in _ZULU_FIELDS:
        tens = int.from_bytes(digits[first], "big") - zero
        value = tens * 10 + int.from_bytes(digits[first + 1], "big") - zero
        # A byte v in 0..99 plus 128 - lowest has its high bit set when v >= lowest; plus
        # 127 - highest, when v > highest. Neither sum reaches 256: no byte carries.
        if (value + (128 - lowest) * ones) & high != high:
            return None
        if (value + (127 - highest) * ones) & high:
            return None
        if first == 4:
            month = value
        elif first == 6:
            day = value
    # The stamps themselves are the keys when they are all plain text (a str subclass would
    # be compared by its own methods); else the rows, as plain text.
    keys = stamps if all_of_type(str, stamps) else joined.split("\n")

    def equal(value: int, number: int) -> int:
        # High bit of each byte that is ``number`` (bytes 0..99: xor <= 127, no carries).
        return high ^ (((value ^ (number * ones)) + 127 * ones) & high)

    # The days that some month lacks: 29-31 February, 31 of a 30-day month. Only those are
    # looked at one by one (29 February, against its year).
    short = equal(month, 4) | equal(month, 6) | equal(month, 9) | equal(month, 11)
    february = equal(month, 2) & (day + 99 * ones)  # and day >= 29
    doubtful = (february | (short & equal(day, 31))) & high
    if not doubtful:
        return keys  # type: ignore[return-value]
    late = doubtful.to_bytes(count, "big")
    index = late.find(0x80)
    while index >= 0:
        stamp = joined[index * row : index * row + 20]
        if int(stamp[8:10]) > _days_in(int(stamp[:4]), int(stamp[5:7])):
            keys[index] = _NO_AGE  # 31 April, 29 February of a common year
        index = late.find(0x80, index + 1)
    return keys  # type: ignore[return-value]


# Sorts before every instant: a step with no readable `at` is the oldest.
_NO_AGE = ""


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
