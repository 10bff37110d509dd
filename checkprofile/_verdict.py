"""Answers, grading, and the verdict: the pure heart of the profile (design decisions 7-9).

``grade`` decides one question, ``combine`` takes the worst of a check (unsure outranks fail,
fail outranks pass), and ``error_verdict`` records an evaluator that did not answer. An answer
that does not fit its question is never graded: it raises :class:`AnswerError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Literal, cast

import attrs

from ._check import Check, ChoiceQuestion, Kind, Question, RubricQuestion, YesNoQuestion
from ._convert import (
    NotJson,
    converter,
    is_integral,
    is_probability,
    override,
    plain,
    plain_scalar,
    plain_text,
    register_renamed,
)
from ._fastschema import Validator
from ._schemas import schema_file, schema_message
from ._shown import NON_BLANK_PATTERN, bare, is_blank, show, type_name
from ._time import instant
from ._types import of_type
from .errors import AnswerError, FailureReason, VerdictError, pointer_token

__all__ = [
    "Answer",
    "ChoiceAnswer",
    "Failure",
    "Provenance",
    "QuestionResult",
    "Result",
    "RubricAnswer",
    "Source",
    "Verdict",
    "VerdictName",
    "YesNoAnswer",
    "answer_problem",
    "combine",
    "error_verdict",
    "format_at",
    "grade",
    "provenance_json",
    "provenance_of_answer",
]

Result = Literal["pass", "fail", "unsure"]
VerdictName = Literal["pass", "fail", "unsure", "error"]

#: Where an answer's probability or confidence came from.
Source = Literal["native", "logprobs", "sampling", "self_reported", "scripted", "replayed"]

#: How far a kept distribution's probabilities may sum from 1 (rounding by the provider).
DISTRIBUTION_TOLERANCE = 0.01
# Probabilities this close count as tied (a most probable answer may tie).
_TIE = 1e-9

# Worst-of order (decision 7 and profile section 3): a larger rank wins.
_RANK: dict[Result, int] = {"pass": 0, "fail": 1, "unsure": 2}


def worst_of(results: Iterable[Result]) -> Result:
    """The verdict of a check whose questions gave ``results`` (decision 7): ``unsure``
    outranks ``fail``, ``fail`` outranks ``pass``. Raises :class:`ValueError` for no results
    and :class:`KeyError` for a text that is not a result."""
    return max(results, key=_RANK.__getitem__)


def _distribution(value: object) -> object:
    """A distribution as a tuple of ``(option, probability)`` pairs of plain values; anything
    that is not a list or tuple of pairs is left as it is, for :func:`answer_problem` to
    refuse."""
    items = _items(value)
    if items is None:
        return value
    pairs = []
    for pair in items:
        # Each pair is read by its base type too: a subclass's own len or iteration never runs.
        both = _items(pair)
        if both is None or len(both) != 2:
            return value
        option, probability = both
        pairs.append((plain_scalar(option), plain_scalar(probability)))
    return tuple(pairs)


def _items(value: object) -> tuple[Any, ...] | None:
    """The items of a list or tuple (of a subclass too, read by the base type's own
    iteration, so none of the subclass's code runs); ``None`` for anything else."""
    kind = type(value)
    if issubclass(kind, list):
        return tuple(list.__iter__(cast(list[Any], value)))
    if issubclass(kind, tuple):
        return tuple(tuple.__iter__(cast(tuple[Any, ...], value)))
    return None


# Every field of an answer is made plain as it is built (a subclass of str, int or float
# becomes its plain value, read by the base type), so grading never meets a value whose own
# comparisons could say anything; a value of another type stays, and answer_problem refuses it.


@attrs.frozen
class YesNoAnswer:
    """The yes-probability ``p`` for a yes/no question."""

    p: float = attrs.field(converter=plain_scalar)
    source: Source | None = attrs.field(default=None, kw_only=True, eq=False, converter=plain_text)
    #: The host named as the model that answered exactly the name it was sent, so which
    #: model answered cannot be told from it (some servers echo any name they are sent).
    model_echoed: bool = attrs.field(default=False, kw_only=True, eq=False, repr=False)


@attrs.frozen
class ChoiceAnswer:
    """The chosen answer ``name`` of a choice question, with the model's ``confidence``."""

    name: str = attrs.field(converter=plain_scalar)
    confidence: float = attrs.field(converter=plain_scalar)
    source: Source | None = attrs.field(default=None, kw_only=True, eq=False, converter=plain_text)
    distribution: tuple[tuple[str, float], ...] | None = attrs.field(
        default=None, kw_only=True, eq=False, converter=_distribution
    )
    #: As for :class:`YesNoAnswer`: the host echoed the model name it was sent.
    model_echoed: bool = attrs.field(default=False, kw_only=True, eq=False, repr=False)


@attrs.frozen
class RubricAnswer:
    """The chosen rubric ``level`` (0-based, worst first), with the model's ``confidence``."""

    level: int = attrs.field(converter=plain_scalar)
    confidence: float = attrs.field(converter=plain_scalar)
    source: Source | None = attrs.field(default=None, kw_only=True, eq=False, converter=plain_text)
    distribution: tuple[tuple[int, float], ...] | None = attrs.field(
        default=None, kw_only=True, eq=False, converter=_distribution
    )
    #: As for :class:`YesNoAnswer`: the host echoed the model name it was sent.
    model_echoed: bool = attrs.field(default=False, kw_only=True, eq=False, repr=False)


Answer = YesNoAnswer | ChoiceAnswer | RubricAnswer


@attrs.frozen
class Failure:
    """An evaluator did not answer a question: ``reason`` and a human ``detail``.

    ``retry_after`` (seconds) is a server's hint, when it gave one. ``exception``: what the
    evaluator raised, when it raised (its traceback on ``__traceback__``), for the host to
    inspect or re-raise; it is never written into a record, a receipt or a cassette, and two
    failures that differ only in it are equal.
    """

    reason: FailureReason
    detail: str = ""
    retry_after: float | None = attrs.field(default=None, kw_only=True)
    exception: BaseException | None = attrs.field(default=None, kw_only=True, eq=False, repr=False)


def answer_problem(question: Question, answer: object) -> str | None:
    """Why ``answer`` does not fit ``question`` (decision 8), or ``None`` when it does.
    Raises :class:`TypeError` when ``question`` is not a question of a :class:`Check`.

    An answer is one of the answer classes exactly, judged by its type, never by what it says
    of itself through ``__class__``: an object that only claims to be a ``YesNoAnswer`` is not
    an answer, whatever its ``p``."""
    if not of_type(question, YesNoQuestion, ChoiceQuestion, RubricQuestion):
        raise TypeError(f"question must be a question of a Check, got {show(question)}")
    if isinstance(question, YesNoQuestion):
        if type(answer) is not YesNoAnswer:
            return f"a yes/no question needs a YesNoAnswer, got {_type_name(answer)}"
        if not is_probability(answer.p):
            return f"a probability must be a finite number in [0, 1], got {show(answer.p)}"
        return None
    if isinstance(question, ChoiceQuestion):
        if type(answer) is not ChoiceAnswer:
            return f"a choice question needs a ChoiceAnswer, got {_type_name(answer)}"
        if type(answer.name) is not str or answer.name not in question.names:
            return f"{show(answer.name)} is not an answer of one_of ({', '.join(question.names)})"
        return _confidence_problem(answer.confidence) or _distribution_problem(
            answer.distribution, question.names, answer.name
        )
    if type(answer) is not RubricAnswer:
        return f"a rubric question needs a RubricAnswer, got {_type_name(answer)}"
    level = answer.level
    if not is_integral(level):
        return f"a level must be an integer, got {show(level)}"
    if not 0 <= level < len(question.levels):
        return f"a level must be from 0 to {len(question.levels) - 1}, got {show(level)}"
    return _confidence_problem(answer.confidence) or _distribution_problem(
        answer.distribution, tuple(range(len(question.levels))), level
    )


def _confidence_problem(confidence: object) -> str | None:
    if is_probability(confidence):
        return None
    return f"a confidence must be a finite number in [0, 1], got {show(confidence)}"


def _distribution_problem(
    distribution: object, options: Sequence[str | int], chosen: object
) -> str | None:
    """A distribution kept beside an answer must be one: each option at most once, finite
    probabilities in [0, 1] summing to 1 (within :data:`DISTRIBUTION_TOLERANCE`), and the
    chosen answer a most probable one. Calibration and receipts read it."""
    if distribution is None:
        return None
    if type(distribution) is not tuple or not all(
        type(pair) is tuple and len(pair) == 2 for pair in distribution
    ):
        return f"a distribution must be (option, probability) pairs, got {show(distribution)}"
    allowed = frozenset(options)
    seen: dict[object, float] = {}
    for option, probability in distribution:
        # Judged by its type first: an option of another type may not even be hashable.
        if not of_type(option, str, int) or option not in allowed:
            return f"the distribution names {show(option)}, not an option"
        if option in seen:
            return f"the distribution names {show(option)}, twice"
        if not is_probability(probability):
            return f"a distribution's probability must be in [0, 1], got {show(probability)}"
        seen[option] = probability
    total = math.fsum(seen.values())
    if abs(total - 1) > DISTRIBUTION_TOLERANCE:
        return f"the distribution sums to {show(total)}, not 1"
    if seen.get(chosen, 0.0) < max(seen.values()) - _TIE:
        return f"the answer {show(chosen)} is not the most probable in its distribution"
    return None


def _type_name(value: object) -> str:
    return "nothing" if value is None else bare(type_name(value), 60)


def grade(question: Question, answer: Answer) -> Result:
    """``"pass"``, ``"fail"`` or ``"unsure"`` for one answer (decision 7).

    Raises :class:`~checkprofile.errors.AnswerError` when the answer does not fit the question
    (decision 8): such an answer is never graded.
    """
    problem = answer_problem(question, answer)
    if problem is not None:
        raise AnswerError(f"question {show(question.ask)}: {problem}")
    return grade_fitting(question, answer)


def grade_fitting(question: Question, answer: Answer) -> Result:
    """:func:`grade` for an answer already known to fit ``question`` (:func:`answer_problem`
    gave ``None``, or a reader checked at least as much): the thresholds alone decide. For
    readers of many recorded answers; anything else calls :func:`grade`."""
    if isinstance(question, YesNoQuestion):
        return grade_value(question, answer.p, None)  # type: ignore[union-attr]
    if isinstance(question, ChoiceQuestion):
        return grade_value(question, answer.name, answer.confidence)  # type: ignore[union-attr]
    return grade_value(question, answer.level, answer.confidence)  # type: ignore[union-attr]


def grade_value(question: Question, value: float | str | int, confidence: float | None) -> Result:
    """:func:`grade_fitting` of an answer given as its recorded value (the probability, name
    or level) and its confidence (``None`` for a yes/no answer), for readers that build no
    answer objects."""
    # Equality is never "below": every comparison with a threshold is `>=` to pass.
    if isinstance(question, YesNoQuestion):
        if value >= question.pass_at:  # type: ignore[operator]
            return "pass"
        if question.fail_below is not None and value >= question.fail_below:  # type: ignore[operator]
            return "unsure"
        return "fail"
    if confidence < question.confidence:  # type: ignore[operator]
        return "unsure"  # the literal reading: low confidence is unsure whatever the answer
    if isinstance(question, ChoiceQuestion):
        if value in question.passing:
            return "pass"
        return "unsure" if value in question.unsure else "fail"
    return "pass" if value >= question.pass_level else "fail"  # type: ignore[operator]


@attrs.frozen(kw_only=True)
class QuestionResult:
    """One question of a verdict, as recorded: the ``ask``, its ``kind``, the ``answer``
    (probability, name, level, or ``None`` when the evaluator did not answer), the
    ``confidence`` of a choice or rubric answer, and the ``result``."""

    ask: str
    kind: Kind
    answer: float | str | int | None
    confidence: float | None = None
    result: Result


def _results(items: Iterable[QuestionResult]) -> tuple[QuestionResult, ...]:
    return tuple(items)


@attrs.frozen(kw_only=True)
class Verdict:
    """A check's verdict, exactly the record agentprocess keeps (``to_json``).

    ``check`` is the check it answers, when known: it is not part of the record, but it lets
    :func:`checkprofile.issue_lines` name rubric levels. :meth:`from_json` validates a record
    against the verdict schema and against itself.
    """

    verdict: VerdictName
    advisory: bool
    model: str
    questions: tuple[QuestionResult, ...] = attrs.field(converter=_results)
    truncated: bool = False
    at: str
    check: Check | None = attrs.field(default=None, eq=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The check-verdict record; no other keys."""
        data: dict[str, Any] = converter.unstructure(self)
        return data

    @classmethod
    def from_json(cls, data: object, *, check: Check | None = None) -> Verdict:
        """Read a verdict record. Raises :class:`~checkprofile.errors.VerdictError` when it
        does not have the check-verdict shape, when its verdict is not the worst of its
        results, or when ``check`` is given and the record is not what grading its answers
        under ``check`` gives (same questions in order, answers that fit, the same results)."""
        if check is not None and type(check) is not Check:
            raise TypeError(f"check must be a Check (see parse_check), got {show(check)}")
        try:
            data = plain(data)
        except NotJson as error:
            raise VerdictError(f"not a check verdict: {error}") from None
        # Judged and explained without jsonschema (the data is plain and finite by now), so
        # reading a bad record costs what reading a good one does.
        validator = _fast_verdict_validator()
        errors = [] if validator.is_valid(data) else list(validator.iter_errors(data))
        if errors:
            first = min(errors, key=lambda e: [str(p) for p in e.absolute_path])
            where = "".join("/" + pointer_token(p) for p in first.absolute_path)
            raise VerdictError(f"not a check verdict: at {where or '/'}: {_message(first)}")
        at = cast(dict[str, Any], data)["at"]
        if not _real_time(at):
            raise VerdictError(f"not a check verdict: at /at: {show(at)} is no real time")
        verdict: Verdict = converter.structure(data, cls)
        # A rubric level of 2.0 passes the schema (an integer in JSON); record it as 2.
        verdict = attrs.evolve(
            verdict,
            questions=[
                attrs.evolve(q, answer=int(q.answer))
                if q.kind == "rubric" and isinstance(q.answer, float)
                else q
                for q in verdict.questions
            ],
        )
        if verdict.verdict != "error":
            worst = worst_of(q.result for q in verdict.questions)
            if worst != verdict.verdict:
                raise VerdictError(
                    f"verdict {show(verdict.verdict)} is not the worst of its questions'"
                    f" results ({show(worst)})"
                )
        if check is not None:
            _must_answer(verdict, check)
            verdict = attrs.evolve(verdict, check=check)
        return verdict


def _must_answer(verdict: Verdict, check: Check) -> None:
    """The record is what :func:`combine` would have made of its answers for ``check``."""
    recorded = [(q.ask, q.kind) for q in verdict.questions]
    expected = [(q.ask, q.kind) for q in check]
    if recorded != expected:
        raise VerdictError("the verdict's questions are not the check's questions, in order")
    if verdict.verdict == "error":
        return
    for index, (question, record) in enumerate(zip(check, verdict.questions, strict=True)):
        answer = recorded_answer(record)
        problem = answer_problem(question, answer)
        if problem is not None:
            raise VerdictError(f"at /questions/{index}/answer: {problem}")
        result = grade(question, answer)
        if result != record.result:
            raise VerdictError(
                f"at /questions/{index}/result: {show(record.result)}, but under this check the"
                f" answer {show(record.answer)} grades {show(result)}"
            )


def recorded_answer(record: QuestionResult) -> Answer:
    """The answer a question of a verdict record holds, as an :class:`Answer` to grade (its
    source and distribution are not part of the record). ``record.answer`` must not be
    ``None`` (an ``error`` verdict answers nothing)."""
    if record.kind == "yes_no":
        return YesNoAnswer(record.answer)
    if record.kind == "choice":
        return ChoiceAnswer(record.answer, record.confidence)
    return RubricAnswer(record.answer, record.confidence)


def _message(error: Any) -> str:
    if error.validator == "pattern" and error.validator_value == NON_BLANK_PATTERN:
        return f"expected a non-blank string, got {show(error.instance)}"
    return schema_message(error)


@lru_cache(maxsize=1)
def _fast_verdict_validator() -> Validator:
    return Validator(schema_file("verdict"), explain=True, finite=True)


# The record's shape is the field order; omit_if_default leaves out `confidence` when None and
# `truncated` when False, exactly as the verdict schema says. `answer` has no default: always there.
register_renamed(
    QuestionResult,
    omit_if_default=True,
    answer=override(struct_hook=lambda value, _: value),  # already checked by the schema
)
register_renamed(Verdict, omit_if_default=True, check=override(omit=True))


# ASCII digits only ([0-9], not \d, which takes any script's digits), as the schema says.
_AT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z\Z")
# A time of day to the second that is always one (hours 00-23, minutes and seconds 00-59),
# in UTC: after a date, the form records hold times in. Whether such a time names a moment
# then rests on its date alone (:func:`_real_day`).
_SECOND_OF_DAY = re.compile(r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z")


def format_at(at: datetime | str) -> str:
    """``at`` as RFC 3339 in UTC with ``Z``. A string must already be in that form; a
    datetime must be timezone-aware."""
    if issubclass(type(at), str):
        text = str.__str__(at)
        if not is_at_text(text):
            raise ValueError(f"at must be RFC 3339 in UTC ending in Z, got {show(at)}")
        return text
    if not issubclass(type(at), datetime):
        raise ValueError(f"at must be a timezone-aware datetime or a string, got {show(at)}")
    try:
        aware = at.tzinfo is not None and at.utcoffset() is not None  # type: ignore[union-attr]
        utc = at.astimezone(timezone.utc) if aware else None  # type: ignore[union-attr]
    except (OverflowError, ValueError, TypeError, AttributeError):
        # A time whose UTC form is outside datetime's range (year 1 or 9999 with an offset),
        # or a tzinfo of one's own that does not work.
        raise ValueError(f"at must be a time in UTC's years 1 to 9999, got {show(at)}") from None
    if utc is None:
        raise ValueError(f"at must be a timezone-aware datetime or a string, got {show(at)}")
    spec = "seconds" if utc.microsecond == 0 else "milliseconds"
    if utc.microsecond % 1000:
        spec = "microseconds"
    return utc.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


def is_at_text(text: str) -> bool:
    """Whether the text ``text`` is a time :func:`format_at` takes (for readers of records,
    which check a time on every line: a time to the second has its date checked once)."""
    if len(text) == 20 and _SECOND_OF_DAY.fullmatch(text, 10):
        return _real_day(text[:10])
    return _AT.match(text) is not None and _real_time(text)


@lru_cache(maxsize=4096)
def _real_day(date: str) -> bool:
    """Whether ``date`` and any time of day :data:`_SECOND_OF_DAY` takes make a time as
    :func:`format_at` takes it: exactly when they do with midnight."""
    midnight = date + "T00:00:00Z"
    return _AT.match(midnight) is not None and _real_time(midnight)


def _real_time(at: str) -> bool:
    # 2026-13-45T25:61:20Z has the shape but names no moment. A leap second (:60) is allowed,
    # and so is any year 0000-9999 (RFC 3339's, on the proleptic Gregorian calendar, which
    # Python's datetime starts at year 1): the one reading of a time, a step age's.
    return instant(at) is not None


def _record(question: Question, answer: Answer) -> QuestionResult:
    result = grade(question, answer)
    if isinstance(answer, YesNoAnswer):
        return QuestionResult(ask=question.ask, kind=question.kind, answer=answer.p, result=result)
    value: str | int = answer.name if isinstance(answer, ChoiceAnswer) else int(answer.level)
    return QuestionResult(
        ask=question.ask,
        kind=question.kind,
        answer=value,
        confidence=answer.confidence,
        result=result,
    )


def combine(
    check: Check,
    answers: Sequence[Answer] | Mapping[str, Answer],
    *,
    model: str,
    at: datetime | str,
    advisory: bool = False,
    truncated: bool = False,
) -> Verdict:
    """The verdict of ``check`` given one answer per question (worst-of; decision 7).

    ``answers`` is in question order, or keyed by ``ask``. Raises
    :class:`~checkprofile.errors.AnswerError` when an answer is missing, extra, or does not fit
    its question.
    """
    ordered = _in_order(_check_arg(check), answers)
    records = tuple(
        _record(question, answer) for question, answer in zip(check, ordered, strict=True)
    )
    worst = worst_of(record.result for record in records)
    return Verdict(
        verdict=worst,
        advisory=_flag("advisory", advisory),
        model=_model(model),
        questions=records,
        truncated=_flag("truncated", truncated),
        at=format_at(at),
        check=check,
    )


def _in_order(check: Check, answers: Sequence[Answer] | Mapping[str, Answer]) -> list[Answer]:
    kind = type(answers)
    if issubclass(kind, dict):
        keyed: dict[object, Answer] = {
            plain_text(ask): answer for ask, answer in dict.items(cast(dict[Any, Answer], answers))
        }
        asks = frozenset(check.asks)
        extra = [ask for ask in keyed if type(ask) is not str or ask not in asks]
        if extra:
            raise AnswerError(f"an answer for {show(extra[0])}, which the check does not ask")
        missing = [ask for ask in check.asks if ask not in keyed]
        if missing:
            raise AnswerError(f"no answer for {show(missing[0])}")
        return [keyed[ask] for ask in check.asks]
    if not issubclass(kind, (list, tuple)):
        raise TypeError(
            f"answers must be a list in question order or a dict keyed by ask, got {show(answers)}"
        )
    items: list[Answer] = list(
        list.__iter__(cast(list[Answer], answers))
        if issubclass(kind, list)
        else tuple.__iter__(cast(tuple[Answer, ...], answers))
    )
    if len(items) != len(check):
        raise AnswerError(f"{len(items)} answers for {len(check)} questions")
    return items


def _flag(name: str, value: object) -> bool:
    # `advisory="false"` from a config file would be truthy: only a real bool is accepted.
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be true or false (a bool), got {show(value)}")
    return value


def _model(model: object) -> str:
    text = plain_text(model)
    if type(text) is not str or is_blank(text):
        raise ValueError(f"model must name what answered, got {show(model)}")
    return text


def _check_arg(check: object) -> Check:
    if type(check) is not Check:
        raise TypeError(f"check must be a Check (see parse_check), got {show(check)}")
    return check


def error_verdict(
    check: Check,
    *,
    model: str,
    at: datetime | str,
    advisory: bool = False,
    truncated: bool = False,
) -> Verdict:
    """The record of an evaluator that did not answer (decision 9): every question with
    ``answer`` null, no confidence, and ``result`` unsure."""
    _check_arg(check)
    return Verdict(
        verdict="error",
        advisory=_flag("advisory", advisory),
        model=_model(model),
        questions=tuple(
            QuestionResult(ask=q.ask, kind=q.kind, answer=None, result="unsure") for q in check
        ),
        truncated=_flag("truncated", truncated),
        at=format_at(at),
        check=check,
    )


# --- where an answer came from ----------------------------------------------------------------


@attrs.frozen
class Provenance:
    """Where one answer came from: its ``source`` (``native``, ``logprobs``, ...) and, when the
    evaluator gave one, the ``distribution`` over the question's options (choice names or
    rubric levels), most probable first. Both ``None`` for a question not answered."""

    source: str | None = None
    distribution: tuple[tuple[str | int, float], ...] | None = None


def provenance_json(origin: Provenance) -> dict[str, Any]:
    """``{"source", "distribution"?}`` (the distribution as ``[option, p]`` pairs), or ``{}``
    for a question not answered."""
    if origin.source is None:
        return {}
    shown: dict[str, Any] = {"source": origin.source}
    if origin.distribution is not None:
        shown["distribution"] = [[option, p] for option, p in origin.distribution]
    return shown


def provenance_of_answer(answer: Answer | None) -> Provenance:
    """The :class:`Provenance` of one answer (``None``: a question not answered)."""
    if answer is None:
        return Provenance()
    distribution = getattr(answer, "distribution", None)
    if distribution is not None:
        distribution = tuple(sorted(distribution, key=lambda pair: -pair[1]))
    return Provenance(answer.source, distribution)
