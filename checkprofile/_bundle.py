"""What the evaluator sees: the material of one submission, with run data cut to a budget.

The run data view is the exact JSON text the evaluator is shown -- compact, keys sorted, UTF-8
-- and the budget is measured on that text (design decision 13). To cost what it shows, the
text is assembled from separately serialized pieces (one per step, per input field, per other
top-level key): steps are serialized newest first and serialization stops at the first step
that does not fit, so a 9 MB run cut to 64 KB serializes about 64 KB. Joining the pieces in
key order gives exactly the bytes ``json.dumps(view, sort_keys=True, separators=(",", ":"),
ensure_ascii=False)`` would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

import attrs

from ._check import Check
from ._convert import converter, show
from .errors import LimitsError, MaterialError

__all__ = ["Bundle", "Evidence", "Material", "Submission", "build_bundle", "canonical_json"]


def canonical_json(value: Any) -> str:
    """The one JSON text form the evaluator is shown: compact, keys sorted, not ASCII-escaped."""
    return json.dumps(
        value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    )


def _size(text: str) -> int:
    # UTF-8 byte length; most run data is ASCII, where the length is the byte count.
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


@attrs.frozen
class Evidence:
    """A reference to a piece of evidence: its ``kind`` (e.g. ``file``) and ``ref``."""

    kind: str
    ref: str


def _to_evidence(items: Iterable[Evidence | Mapping[str, Any]]) -> tuple[Evidence, ...]:
    # The evaluator sees references only: any other key (a short-lived url) is left behind.
    result = []
    for item in items:
        if isinstance(item, Evidence):
            result.append(item)
        elif (
            isinstance(item, Mapping)
            and isinstance(item.get("kind"), str)
            and isinstance(item.get("ref"), str)
        ):
            result.append(Evidence(item["kind"], item["ref"]))
        else:
            raise MaterialError(
                f"an evidence item must have a string kind and ref, got {show(item)}"
            )
    return tuple(result)


@attrs.frozen
class Submission:
    """What was submitted: ``output`` (JSON), ``summary`` and evidence references."""

    output: Any
    summary: str | None = None
    evidence: tuple[Evidence, ...] = attrs.field(default=(), converter=_to_evidence)

    def to_json(self) -> dict[str, Any]:
        """``{"output", "summary"?, "evidence"}``: the submission as the evaluator sees it."""
        data: dict[str, Any] = converter.unstructure(self)
        return data

    @classmethod
    def from_json(cls, data: object) -> Submission:
        """Read ``{"output": ..., "summary": "...", "evidence": [{"kind", "ref"}]}``."""
        if not isinstance(data, Mapping) or "output" not in data:
            raise MaterialError(
                f'a submission must be a JSON object with "output", got {show(data)}'
            )
        unknown = sorted(set(data) - {"output", "summary", "evidence"})
        if unknown:
            raise MaterialError(
                f"a submission has output, summary and evidence; unknown key {show(unknown[0])}"
            )
        summary = data.get("summary")
        if summary is not None and not isinstance(summary, str):
            raise MaterialError(f"a submission's summary must be a string, got {show(summary)}")
        evidence = data.get("evidence", [])
        if not isinstance(evidence, list):
            raise MaterialError(f"a submission's evidence must be a list, got {show(evidence)}")
        return cls(data["output"], summary, evidence)


def _unstructure_submission(submission: Submission) -> dict[str, Any]:
    data: dict[str, Any] = {"output": submission.output}
    if submission.summary is not None:
        data["summary"] = submission.summary
    data["evidence"] = [converter.unstructure(item) for item in submission.evidence]
    return data


converter.register_unstructure_hook(Submission, _unstructure_submission)


@attrs.frozen
class Material:
    """Everything the evaluator may see about one submission.

    ``run_data`` is the run's data as the host holds it (``inputs``, ``steps`` keyed by step
    id, ...); it is read when the bundle is built and never changed.
    """

    instructions: str
    body: str
    run_data: Mapping[str, Any]
    submission: Submission


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
    """
    if isinstance(state_bytes, bool) or not isinstance(state_bytes, int) or state_bytes < 2:
        raise LimitsError(
            f"state_bytes must be an integer of at least 2 (bytes), got {show(state_bytes)}"
        )
    if not isinstance(check, Check):
        raise TypeError(f"build_bundle takes a Check (see parse_check), got {show(check)}")
    for name in ("instructions", "body"):
        if not isinstance(getattr(material, name), str):
            raise MaterialError(
                f"material.{name} must be a string, got {show(getattr(material, name))}"
            )
    try:
        submission_json = canonical_json(material.submission.to_json())
    except (TypeError, ValueError) as error:
        raise MaterialError(f"the submission cannot be shown as JSON: {error}") from None
    view = _cut(material.run_data, state_bytes)
    return Bundle(
        check=check,
        instructions=material.instructions,
        body=material.body,
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


def _piece(key: str, value: Any, where: str) -> str:
    # One `"key":value` member of a JSON object, in the canonical form.
    try:
        return canonical_json(key) + ":" + canonical_json(value)
    except (TypeError, ValueError) as error:
        raise MaterialError(f"{where} cannot be shown as JSON: {error}") from None


def _object(pieces: Mapping[str, str]) -> str:
    return "{" + ",".join(pieces[key] for key in sorted(pieces)) + "}"


def _object_size(sizes: Mapping[str, int]) -> int:
    return 2 + sum(sizes.values()) + max(len(sizes) - 1, 0)


def _cut(run_data: object, budget: int) -> _View:
    if not isinstance(run_data, Mapping):
        raise MaterialError(f"run data must be a JSON object, got {show(run_data)}")
    for key in run_data:
        if not isinstance(key, str):
            raise MaterialError(f"run data keys must be strings, got {show(key)}")
    steps = run_data.get("steps", {})
    inputs = run_data.get("inputs", {})
    for name, value in (("steps", steps), ("inputs", inputs)):
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise MaterialError(
                f"run data {name} must be a map keyed by strings, got {show(value)}"
            )

    # Pieces other than steps are serialized whole: they are what stays longest.
    input_pieces = {
        name: _piece(name, value, f"run data inputs.{name}") for name, value in inputs.items()
    }
    other_pieces = {
        key: _piece(key, value, f"run data {key}")
        for key, value in run_data.items()
        if key not in ("steps", "inputs")
    }
    input_sizes = {name: _size(piece) for name, piece in input_pieces.items()}
    top_sizes = {key: _size(piece) for key, piece in other_pieces.items()}
    if "inputs" in run_data:
        top_sizes["inputs"] = len('"inputs":') + _object_size(input_sizes)
    if "steps" in run_data:
        top_sizes["steps"] = len('"steps":{}')

    # Newest steps first, each serialized only when it is needed, until one does not fit.
    # Greedy on purpose: a newer step is never dropped while an older one is kept.
    room = budget - _object_size(top_sizes)
    order = sorted(steps, key=lambda step_id: _age_key(step_id, steps[step_id]))  # oldest first
    kept: dict[str, str] = {}
    for step_id in reversed(order):
        if room <= 0:
            break
        piece = _piece(step_id, _without_urls(steps[step_id]), f"run data steps.{step_id}")
        cost = _size(piece) + (1 if kept else 0)
        if cost > room:
            break
        kept[step_id] = piece
        room -= cost
    dropped_steps = tuple(step_id for step_id in order if step_id not in kept)
    if "steps" in top_sizes:
        top_sizes["steps"] += sum(_size(p) for p in kept.values()) + max(len(kept) - 1, 0)

    # Still over with every step gone: input fields, largest first, then top-level keys.
    dropped_fields: list[str] = []
    if _object_size(top_sizes) > budget:
        for name in sorted(input_sizes, key=lambda n: (-input_sizes[n], n)):
            if _object_size(top_sizes) <= budget:
                break
            top_sizes["inputs"] -= input_sizes[name] + (1 if len(input_pieces) > 1 else 0)
            del input_pieces[name]
            dropped_fields.append("/inputs/" + _escape(name))
        for key in sorted(top_sizes, key=lambda k: (-top_sizes[k], k)):
            if _object_size(top_sizes) <= budget:
                break
            del top_sizes[key]
            dropped_fields.append("/" + _escape(key))

    members = {key: piece for key, piece in other_pieces.items() if key in top_sizes}
    if "inputs" in top_sizes:
        members["inputs"] = '"inputs":' + _object(input_pieces)
    if "steps" in top_sizes:
        members["steps"] = '"steps":' + _object(kept)
    return _View(_object(members), dropped_steps, tuple(dropped_fields))


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


_RFC3339 = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:([Zz])|([+-])(\d\d):(\d\d))\Z"
)
_NO_AGE = datetime.min.replace(tzinfo=timezone.utc)


def _parse_at(value: object) -> datetime | None:
    """An RFC 3339 timestamp as an aware datetime; anything else is ``None`` (no age)."""
    if not isinstance(value, str):
        return None
    match = _RFC3339.match(value)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = match.groups()
    offset = timedelta(0)
    if not zulu:
        offset = timedelta(hours=int(off_h), minutes=int(off_m)) * (1 if sign == "+" else -1)
    try:
        return datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            min(int(second), 59),
            int((fraction or "0")[:6].ljust(6, "0")),
            tzinfo=timezone(offset),
        )
    except ValueError:
        return None


def _age_key(step_id: str, record: object) -> tuple[datetime, str]:
    # A step's age is the latest `at` of its record and its history; no `at` at all is oldest.
    # Ties go by step id, so the order never depends on the map's order.
    stamps: list[object] = []
    if isinstance(record, Mapping):
        stamps.append(record.get("at"))
        history = record.get("history")
        if isinstance(history, list):
            stamps.extend(entry.get("at") for entry in history if isinstance(entry, Mapping))
    parsed = [stamp for stamp in map(_parse_at, stamps) if stamp is not None]
    return (max(parsed) if parsed else _NO_AGE, step_id)


def _strip_evidence(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    evidence = entry.get("evidence")
    if not isinstance(evidence, list) or not any(
        isinstance(item, Mapping) and "url" in item for item in evidence
    ):
        return entry
    copy = dict(entry)
    copy["evidence"] = [
        {k: v for k, v in item.items() if k != "url"} if isinstance(item, Mapping) else item
        for item in evidence
    ]
    return copy


def _without_urls(record: object) -> object:
    """The step record without evidence ``url``s (short-lived links), in it and its history.

    Only the parts that change are copied; the host's run data is never modified.
    """
    if not isinstance(record, Mapping):
        return record
    result = _strip_evidence(record)
    history = record.get("history")
    if isinstance(history, list):
        stripped = [
            _strip_evidence(entry) if isinstance(entry, Mapping) else entry for entry in history
        ]
        if any(new is not old for new, old in zip(stripped, history, strict=True)):
            result = dict(result)
            result["history"] = stripped
    return result
