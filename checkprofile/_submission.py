"""A submission as core-2 shapes it, and as the evaluator is shown it.

:class:`Submission` (its ``output``, ``summary``, :class:`Evidence` references and, on a step
with routes, ``next`` and ``reason``) refuses any value core-2's submission cannot hold;
:func:`shown_submission` is the part the evaluator sees (the route only when the host asks).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

import attrs

from ._convert import NotJson, converter, override, plain, plain_text, register_renamed
from ._shapes import described, shallow_members, step_record_problems, submission_problems
from ._shown import show
from .errors import MaterialError

__all__ = [
    "EVIDENCE_KINDS",
    "MAX_REASON",
    "Evidence",
    "Submission",
    "evidence_items",
    "shown_submission",
]


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
