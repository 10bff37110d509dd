"""Receipts: what a person reads to decide an unsure (or failed) check in a minute.

A receipt holds each question with its answer, its thresholds and its result; the questions
that drove the verdict, ranked by how far each was from passing; what the evaluator was shown,
piece by piece with sizes in bytes, and what was cut; and the candidate submission. It is JSON
(:meth:`Receipt.to_json`; it survives a JSON round trip exactly, so it can wait in a queue)
and plain text for a terminal (:meth:`Receipt.render_text`).

**How far from passing** (:func:`distance_from_passing`) is a number from 0 (passes) to 1:

* yes/no: ``pass - p``;
* choice: 1 when the name is not in ``pass``, else how far the confidence is below its
  threshold;
* rubric: the larger of the levels missing as a share of the scale,
  ``(pass - level) / (levels - 1)``, and how far the confidence is below its threshold;
* a question the evaluator did not answer: 1.

The questions that **drove** the verdict are those whose result is the verdict (every question
of an ``error`` verdict), furthest from passing first, ties by ``ask``: so the ranking does not
depend on the order of the questions in the check.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any, get_args

import attrs

from ..._bundle import Submission
from ..._bundle_bytes import SHOWN_PIECES, bundle_bytes, shown_pieces
from ..._check import Check, ChoiceQuestion, Question, RubricQuestion, YesNoQuestion
from ..._convert import NotJson, converter, plain, plain_text, register_renamed
from ..._json_text import same_json
from ..._lines import answer_text, issue_lines, js_number
from ..._outcome import Action, Outcome, held_check, provenance_of
from ..._shown import WHITESPACE_CLASS, error_text, escaped_text, is_blank, one_line, show
from ..._types import is_mapping, of_type
from ..._validate import parse_check
from ..._verdict import (
    ChoiceAnswer,
    Provenance,
    QuestionResult,
    RubricAnswer,
    Source,
    Verdict,
    YesNoAnswer,
    answer_problem,
    provenance_json,
)
from ...errors import CheckError, CheckprofileError, MaterialError, VerdictError
from ._shown_texts import (
    DEFAULT_SHOWN_CHARS,
    ShownText,
    attempt_text,
    shown_chars_arg,
    shown_texts,
    shown_texts_from_json,
    tried_from_json,
)

__all__ = [
    "RECEIPT_FORMAT",
    "Receipt",
    "ReceiptError",
    "ShownPiece",
    "distance_from_passing",
    "drivers",
    "receipt_for",
    "threshold_text",
]

#: The version of the receipt JSON; :meth:`Receipt.from_json` refuses any other.
RECEIPT_FORMAT = 1


class ReceiptError(CheckprofileError, ValueError):
    """A receipt JSON that is not one, or whose parts do not agree (named with the bad value)."""


# --- how far from passing, and what drove the verdict -----------------------------------------


def _confidence_gap(threshold: float, confidence: float | None) -> float:
    return max(0.0, threshold - confidence) if confidence is not None else 1.0


def distance_from_passing(question: Question, record: QuestionResult) -> float:
    """How far ``record``'s answer was from passing ``question``: 0 when it passes, at most 1
    (see the module docstring for each kind). Raises :class:`TypeError` for a ``question``
    that is not a question of a check, or a ``record`` that is not a ``QuestionResult``."""
    if not of_type(question, YesNoQuestion, ChoiceQuestion, RubricQuestion):
        raise TypeError(f"question must be a question of a Check, got {show(question)}")
    if type(record) is not QuestionResult:
        raise TypeError(f"record must be a QuestionResult, got {show(record)}")
    if record.result == "pass":
        return 0.0
    if record.answer is None:
        return 1.0
    if isinstance(question, YesNoQuestion):
        return min(1.0, max(0.0, question.pass_at - float(record.answer)))
    if isinstance(question, ChoiceQuestion):
        name_gap = 0.0 if record.answer in question.passing else 1.0
        return max(name_gap, _confidence_gap(question.confidence, record.confidence))
    level = int(record.answer)
    span = max(len(question.levels) - 1, 1)
    level_gap = max(0, question.pass_level - level) / span
    return max(level_gap, _confidence_gap(question.confidence, record.confidence))


def drivers(check: Check, verdict: Verdict) -> tuple[int, ...]:
    """The indexes of the questions that drove ``verdict``: those whose result is the
    verdict (all of them for ``error``), furthest from passing first, ties by ``ask``.
    Raises :class:`TypeError` for anything but a :class:`~checkprofile.Check` and its
    :class:`~checkprofile.Verdict`."""
    if type(check) is not Check or type(verdict) is not Verdict:
        raise TypeError(
            f"drivers takes a Check and a Verdict, got {show(check)} and {show(verdict)}"
        )
    if len(check) != len(verdict.questions):
        raise TypeError("the verdict is not a verdict of this check (not as many questions)")
    pairs = list(zip(check, verdict.questions, strict=True))
    chosen = [
        index
        for index, (_, record) in enumerate(pairs)
        if verdict.verdict == "error" or record.result == verdict.verdict
    ]
    return tuple(
        sorted(
            chosen,
            key=lambda i: (-distance_from_passing(*pairs[i]), one_line(pairs[i][0].ask)),
        )
    )


def threshold_text(question: Question) -> str:
    """The thresholds of ``question`` in words, as a receipt shows them. Raises
    :class:`TypeError` for anything but a question of a check."""
    if not of_type(question, YesNoQuestion, ChoiceQuestion, RubricQuestion):
        raise TypeError(f"question must be a question of a Check, got {show(question)}")
    if isinstance(question, YesNoQuestion):
        passes = f"passes at {js_number(question.pass_at)} or more"
        if question.fail_below is None or question.fail_below == question.pass_at:
            return f"{passes}, else fails"
        return f"{passes}; fails below {js_number(question.fail_below)}, else unsure"
    low = f"unsure below confidence {js_number(question.confidence)}"
    if isinstance(question, ChoiceQuestion):
        text = f"passes: {', '.join(question.passing)}"
        if question.unsure:
            text += f"; unsure: {', '.join(question.unsure)}"
        return f"{text}; any other fails; {low}"
    level = question.pass_level
    return f"passes at level {level} ({one_line(question.levels[level])}) or above; {low}"


# --- the receipt ------------------------------------------------------------------------------


@attrs.frozen
class ShownPiece:
    """One piece of what the evaluator was shown: its ``name`` (one of :data:`SHOWN_PIECES`)
    and its size in ``bytes``: the UTF-8 length of its canonical JSON text."""

    name: str
    bytes: int


register_renamed(ShownPiece)


def _pieces(items: Any) -> tuple[ShownPiece, ...]:
    return tuple(items)


def _strings(items: Any) -> tuple[str, ...]:
    return tuple(items)


def _failures(items: Any) -> tuple[tuple[str, str, str], ...]:
    return tuple((str(a), str(b), str(c)) for a, b, c in items)


def _spot_rate(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ReceiptError(
            f"spot_check must be a sampling rate above 0, at most 1, got {show(value)}"
        )
    return float(value)


def _provenance(items: Any) -> tuple[Provenance, ...]:
    return tuple(items)


def _texts(value: Iterable[ShownText]) -> tuple[ShownText, ...]:
    return tuple(value)


def _tried(value: Iterable[Iterable[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(item) for item in value)


@attrs.frozen(kw_only=True)
class Receipt:
    """What a person reads to decide a check on step ``step_id`` of run ``run_id``.

    Build it with :func:`receipt_for`. ``check`` and ``verdict`` are the check and its verdict;
    ``shown`` the pieces the evaluator was shown with their sizes (``shown_bytes`` in all, the
    length of :func:`bundle_bytes`; ``bundle_sha256`` its hash); ``dropped_steps`` and
    ``dropped_fields`` what was cut from the run data; ``candidate`` the submission;
    ``failures`` (ask, reason, detail) for each question the evaluator did not answer;
    ``provenance`` for each question, where its answer came from and the distribution the
    evaluator gave (empty when not known); ``material`` the texts the evaluator was shown
    (instructions, process body, run data view, submission), each cut to the host's size
    (:class:`~._shown_texts.ShownText`; empty for a receipt made without them); ``tried``
    for each question, what each attempt gave it, in words (empty when not known).
    """

    run_id: str
    step_id: str
    action: Action
    check: Check
    verdict: Verdict
    shown: tuple[ShownPiece, ...] = attrs.field(converter=_pieces)
    shown_bytes: int
    bundle_sha256: str
    dropped_steps: tuple[str, ...] = attrs.field(converter=_strings)
    dropped_fields: tuple[str, ...] = attrs.field(converter=_strings)
    candidate: Submission
    failures: tuple[tuple[str, str, str], ...] = attrs.field(default=(), converter=_failures)
    provenance: tuple[Provenance, ...] = attrs.field(default=(), converter=_provenance)
    material: tuple[ShownText, ...] = attrs.field(default=(), converter=_texts)
    tried: tuple[tuple[str, ...], ...] = attrs.field(default=(), converter=_tried)
    spot_check: float | None = attrs.field(default=None, converter=_spot_rate)

    @property
    def drivers(self) -> tuple[int, ...]:
        """Indexes of the questions that drove the verdict, furthest from passing first."""
        return drivers(self.check, self.verdict)

    @property
    def issues(self) -> tuple[str, ...]:
        """The issue lines of the verdict (every question that did not pass)."""
        return issue_lines(self.verdict)

    def _question_json(self, index: int) -> dict[str, Any]:
        question, record = self.check[index], self.verdict.questions[index]
        shown: dict[str, Any] = {
            "ask": record.ask,
            "result": record.result,
            "answer": answer_text(record, question),
            "threshold": threshold_text(question),
            "distance": distance_from_passing(question, record),
        }
        if self.provenance:
            shown.update(provenance_json(self.provenance[index]))
        return shown

    def to_json(self) -> dict[str, Any]:
        """The receipt as plain JSON. ``questions`` (each with its answer and thresholds in
        words and its distance from passing), ``drivers`` (indexes) and ``issues`` are
        derived from ``check`` and ``verdict``; :meth:`from_json` checks that they agree."""
        return {
            "receipt": RECEIPT_FORMAT,
            "run": self.run_id,
            "step": self.step_id,
            "action": self.action,
            "verdict": self.verdict.to_json(),
            "check": self.check.to_json(),
            "questions": [self._question_json(i) for i in range(len(self.check))],
            "drivers": list(self.drivers),
            "issues": list(self.issues),
            "shown": converter.unstructure(self.shown, list[ShownPiece]),
            "shown_bytes": self.shown_bytes,
            "bundle_sha256": self.bundle_sha256,
            "dropped_steps": list(self.dropped_steps),
            "dropped_fields": list(self.dropped_fields),
            "candidate": self.candidate.to_json(),
            "failures": [
                {"ask": ask, "reason": reason, "detail": detail}
                for ask, reason, detail in self.failures
            ],
            **({"material": [text.to_json() for text in self.material]} if self.material else {}),
            **({"tried": [list(item) for item in self.tried]} if self.tried else {}),
            **({"spot_check": self.spot_check} if self.spot_check is not None else {}),
        }

    @classmethod
    def from_json(cls, data: object) -> Receipt:
        """Read a receipt back; equal to the receipt that wrote it. Raises
        :class:`ReceiptError` when it is not a receipt, or its parts disagree."""
        try:
            data = plain(data)
        except NotJson as error:
            raise ReceiptError(f"not a receipt: {error}") from None
        try:
            receipt = _receipt_from_json(data)
        except ReceiptError:
            raise
        except (CheckError, VerdictError, MaterialError) as error:
            raise ReceiptError(f"not a receipt: {one_line(str(error))[:500]}") from None
        except KeyError as error:
            raise ReceiptError(f"not a receipt: missing {show(error.args[0])}") from None
        except (TypeError, ValueError) as error:
            raise ReceiptError(f"not a receipt: {error_text(error)}") from None
        if not same_json(receipt.to_json(), data):
            raise ReceiptError(
                "not a receipt: its derived parts (questions, drivers, issues) do not agree"
                " with its check and verdict"
            )
        return receipt

    def render_text(self, *, width: int = 100) -> str:
        """The receipt as plain text for a terminal, lines at most about ``width`` wide."""
        return _render(self, width)


_FAILURE_KEYS = ("ask", "reason", "detail")


def _receipt_from_json(data: object) -> Receipt:
    if not is_mapping(data):
        raise ReceiptError(f"a receipt must be a JSON object, got {show(data)}")
    if data.get("receipt") != RECEIPT_FORMAT or isinstance(data.get("receipt"), bool):
        raise ReceiptError(f'"receipt" must be {RECEIPT_FORMAT}, got {show(data.get("receipt"))}')
    check = parse_check(data["check"])
    verdict = Verdict.from_json(data["verdict"], check=check)
    shown = data["shown"]
    if not isinstance(shown, list):
        raise ReceiptError(f"shown must be a list, got {show(shown)}")
    pieces = []
    for item in shown:
        if (
            not is_mapping(item)
            or set(item) != {"name", "bytes"}
            or item["name"] not in SHOWN_PIECES
            or isinstance(item["bytes"], bool)
            or not isinstance(item["bytes"], int)
        ):
            raise ReceiptError(f"shown items are {{name, bytes}}, got {show(item)}")
        pieces.append(ShownPiece(item["name"], item["bytes"]))
    failures = data["failures"]
    if not isinstance(failures, list) or not all(
        is_mapping(f) and all(isinstance(f.get(k), str) for k in ("ask", "reason", "detail"))
        for f in failures
    ):
        raise ReceiptError("failures are {ask, reason, detail} with string values")
    for key in ("run", "step", "bundle_sha256"):
        if not isinstance(data[key], str):
            raise ReceiptError(f"{key} must be a string, got {show(data[key])}")
    if data["action"] not in _WHAT_NOW:
        raise ReceiptError(
            f"action must be one of {', '.join(_WHAT_NOW)}, got {show(data['action'])}"
        )
    size = data["shown_bytes"]
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ReceiptError(f"shown_bytes must be a count of bytes, got {show(size)}")
    for key in ("dropped_steps", "dropped_fields"):
        if not isinstance(data[key], list) or not all(isinstance(v, str) for v in data[key]):
            raise ReceiptError(f"{key} must be a list of strings, got {show(data[key])}")
    return Receipt(
        provenance=provenance_from_json(data["questions"], check, verdict),
        run_id=data["run"],
        step_id=data["step"],
        action=data["action"],
        check=check,
        verdict=verdict,
        shown=pieces,
        shown_bytes=data["shown_bytes"],
        bundle_sha256=data["bundle_sha256"],
        dropped_steps=data["dropped_steps"],
        dropped_fields=data["dropped_fields"],
        candidate=Submission.from_json(data["candidate"]),
        failures=[(f["ask"], f["reason"], f["detail"]) for f in failures],
        material=shown_texts_from_json(data["material"]) if "material" in data else (),
        tried=tried_from_json(data["tried"], len(check)) if "tried" in data else (),
        spot_check=data.get("spot_check"),
    )


def provenance_from_json(
    questions: object, check: Check, verdict: Verdict
) -> tuple[Provenance, ...]:
    """Read back what :func:`provenance_json` wrote, one entry per question of ``check``,
    checking each distribution against its recorded answer. Raises :class:`ReceiptError`."""
    if not isinstance(questions, list) or len(questions) != len(check):
        raise ReceiptError(f"questions must be a list of {len(check)}, got {show(questions)}")
    found = []
    for question, record, shown in zip(check, verdict.questions, questions, strict=True):
        if not is_mapping(shown) or "source" not in shown:
            found.append(Provenance())
            continue
        if shown["source"] not in get_args(Source):
            raise ReceiptError(f"an answer's source must be a Source, got {show(shown['source'])}")
        pairs = shown.get("distribution")
        distribution = None
        if pairs is not None:
            if not isinstance(pairs, list) or not all(
                isinstance(pair, list) and len(pair) == 2 for pair in pairs
            ):
                raise ReceiptError(f"a distribution is [option, p] pairs, got {show(pairs)}")
            distribution = tuple((option, p) for option, p in pairs)
            answer = _answer(question, record, distribution)
            problem = answer_problem(question, answer)
            if problem is not None:
                raise ReceiptError(f"not a receipt: {show(record.ask)}: {problem}")
        found.append(Provenance(shown["source"], distribution))
    return tuple(found) if any(p.source is not None for p in found) else ()


def _answer(
    question: Question, record: QuestionResult, distribution: tuple[tuple[Any, Any], ...]
) -> object:
    # The recorded answer with the distribution beside it, for the core to check they agree.
    if isinstance(question, ChoiceQuestion):
        return ChoiceAnswer(record.answer, record.confidence, distribution=distribution)
    if isinstance(question, RubricQuestion):
        return RubricAnswer(record.answer, record.confidence, distribution=distribution)
    return YesNoAnswer(record.answer)  # a yes/no p is its own distribution


def receipt_for(
    outcome: Outcome,
    *,
    run_id: str,
    step_id: str,
    shown_chars: int = DEFAULT_SHOWN_CHARS,
    spot_check: float | None = None,
) -> Receipt:
    """The receipt of ``outcome`` for step ``step_id`` of run ``run_id``.

    ``spot_check`` (the sampling rate that drew it, see :class:`~checkprofile.human.SpotPlan`)
    marks an enforced verdict sent to a person for a spot check: the receipt and its page say
    that the step has already gone as the verdict said and that the decision changes nothing.

    Made for every unsure verdict; a host may make one for any other (a fail, for a person
    reviewing refusals). The outcome must carry its bundle (every outcome
    :func:`~checkprofile.run_check` makes does): a receipt shows what the evaluator was shown,
    each piece's size, and its text (instructions, process body, run data view, submission)
    to its first ``shown_chars`` characters (0 for none; what is cut is said).
    """
    shown_chars = shown_chars_arg(shown_chars)
    check = held_check(outcome)
    bundle = outcome.bundle
    if bundle is None:
        raise ValueError(
            "the outcome has no bundle, so what the evaluator was shown is unknown: make it with"
            " run_check, or give outcome_for(..., bundle=)"
        )
    names = {}
    for what, value in (("run_id", run_id), ("step_id", step_id)):
        text = plain_text(value)
        if type(text) is not str or is_blank(text):
            raise ValueError(f"{what} must be a non-blank string, got {show(value)}")
        names[what] = text
    run_id, step_id = names["run_id"], names["step_id"]
    pieces = shown_pieces(bundle)
    whole = bundle_bytes(bundle)
    return Receipt(
        run_id=run_id,
        step_id=step_id,
        action=outcome.action,
        check=check,
        verdict=attrs.evolve(outcome.verdict, check=check),
        shown=[ShownPiece(name, _utf8_size(pieces[name])) for name in SHOWN_PIECES],
        shown_bytes=len(whole),
        bundle_sha256="sha256:" + hashlib.sha256(whole).hexdigest(),
        dropped_steps=bundle.dropped_steps,
        dropped_fields=bundle.dropped_fields,
        candidate=bundle.submission,
        failures=[(ask, f.reason, f.detail) for ask, f in outcome.failures],
        provenance=provenance_of(outcome),
        material=shown_texts(bundle, shown_chars) if shown_chars else (),
        tried=[[attempt_text(entry) for entry in entries] for entries in outcome.tried]
        if len(outcome.tried) == len(check)
        else (),
        spot_check=spot_check,
    )


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


# --- plain text -------------------------------------------------------------------------------

_WHAT_NOW: dict[str, str] = {
    "escalate": (
        "Held for you. Decide: returned (with a note for the agent), completed (with this"
        " candidate or your own output), or failed (with a note)."
    ),
    "not_accepted": "Refused (not_accepted): the agent's next attempt is handed these issues.",
    "complete": "The step completed.",
    "retry": "The evaluator did not answer: the agent gets retry and resubmits.",
}

_LABELS = {
    "instructions": "instructions",
    "body": "process body",
    "questions": "questions",
    "run_data": "run data",
    "dropped_steps": "list of steps left out",
    "dropped_fields": "list of fields left out",
    "submission": "submission",
}

_MAX_OUTPUT_LINES = 40
_RUNS = re.compile(f"[{WHITESPACE_CLASS}]+")


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def shown_words(text: str) -> list[str]:
    """``text`` as a receipt shows it, word by word: split at whitespace (the package's one
    definition), every character that does not print as itself escaped (a receipt's text is
    the agent's and the model's). The text and the HTML page both show text this way."""
    return [escaped_text(word) for word in _RUNS.split(text) if word]


def _wrap(text: str, indent: str, width: int, rest: str | None = None) -> list[str]:
    """``text`` in lines of at most ``width`` (a longer word gets a line of its own): the
    first line starts with ``indent``, the others with ``rest`` (default: ``indent``)."""
    rest = indent if rest is None else rest
    lines: list[str] = []
    line, prefix = "", indent
    for word in shown_words(text):
        if line and len(prefix) + len(line) + 1 + len(word) > width:
            lines.append(prefix + line)
            line, prefix = word, rest
        else:
            line = f"{line} {word}" if line else word
    lines.append(prefix + line)
    return lines


# --- what a receipt says, for the text and the page -------------------------------------------


def heading(receipt: Receipt) -> tuple[str, str, str]:
    """The receipt's title, its model line and what the person is asked to do."""
    verdict = receipt.verdict
    mode = "advisory" if verdict.advisory else "blocking"
    title = f"Check {verdict.verdict.upper()} on step {receipt.step_id} of run {receipt.run_id}"
    what_now = _WHAT_NOW[receipt.action]
    if verdict.advisory:
        what_now = "Advisory: the verdict is recorded and the step completed; nothing waits on you."
    if receipt.spot_check is not None:
        mode = "spot check"
        gone = "completed" if verdict.verdict == "pass" else "was refused"
        what_now = (
            f"Spot check (about 1 in {round(1 / receipt.spot_check)} such verdicts): the step"
            f" already {gone} as the verdict said, and nothing you decide here changes this run."
            " Would you have accepted this submission? Complete it if so; return or fail it"
            " if not. Your answer measures the check."
        )
    return f"{title} ({mode})", f"model {verdict.model}, at {verdict.at}", what_now


def sections(receipt: Receipt) -> list[tuple[str, tuple[int, ...], bool]]:
    """The question sections, each ``(title, indexes, ranked)``, the empty ones left out: what
    drove the verdict (ranked, furthest from passing first), the others not passing, those
    that passed."""
    verdict = receipt.verdict
    ranked = receipt.drivers
    driving = set(ranked)
    rest = [i for i in range(len(receipt.check)) if i not in driving]
    not_passing = tuple(i for i in rest if verdict.questions[i].result != "pass")
    passing = tuple(i for i in rest if verdict.questions[i].result == "pass")
    found = [
        ("What drove the verdict, furthest from passing first", ranked, True),
        ("Also not passing", not_passing, False),
        ("Passed", passing, False),
    ]
    return [section for section in found if section[1]]


def question_details(receipt: Receipt, index: int) -> list[str]:
    """The lines under question ``index``: its answer (and how far from passing), the model's
    spread when known, its thresholds in words."""
    question, record = receipt.check[index], receipt.verdict.questions[index]
    detail = f"answer {answer_text(record, question)}"
    if record.result != "pass":
        distance = distance_from_passing(question, record)
        detail += f", {js_number(round(distance, 2))} from passing"
    lines = [detail]
    if receipt.provenance:
        origin = receipt.provenance[index]
        if origin.distribution is not None:
            spread = ", ".join(
                f"{_option_text(option)} {js_number(round(p, 2))}"
                for option, p in origin.distribution
            )
            lines.append(f"the model's spread ({origin.source}): {spread}")
    lines.append(threshold_text(question))
    return lines


def failure_line(ask: str, reason: str, detail: str) -> str:
    """One question the evaluator did not answer, on one line."""
    return f"{one_line(ask)}: {reason}{': ' if detail else ''}{detail}"


def shown_line(receipt: Receipt) -> str:
    """What the evaluator was shown, in all."""
    return (
        f"What the evaluator was shown: {_count(receipt.shown_bytes, 'byte')}"
        f" ({receipt.bundle_sha256[:19]}…)"
    )


def piece_label(name: str) -> str:
    """A piece of what was shown, named for a person."""
    return _LABELS[name]


def cut_lines(receipt: Receipt) -> list[str]:
    """What was cut from the run data, a line for the steps and one for the fields."""
    lines = []
    if receipt.dropped_steps:
        lines.append(
            f"cut: {_count(len(receipt.dropped_steps), 'step')} left out, oldest first:"
            f" {', '.join(receipt.dropped_steps)}"
        )
    if receipt.dropped_fields:
        lines.append(
            f"cut: {_count(len(receipt.dropped_fields), 'field')} left out:"
            f" {', '.join(receipt.dropped_fields)}"
        )
    return lines


def candidate_lines(candidate: Submission) -> list[str]:
    """The candidate's summary, evidence and route, a line each (its output aside)."""
    lines = []
    if candidate.summary is not None:
        lines.append(f"summary: {one_line(candidate.summary)}")
    evidence = ", ".join(f"{e.kind} {e.ref}" for e in candidate.evidence) or "none"
    lines.append(f"evidence: {evidence}")
    if candidate.next is not None:
        lines.append(f"next: {one_line(candidate.next)}")
    if candidate.reason is not None:
        lines.append(f"reason: {one_line(candidate.reason)}")
    return lines


def output_lines(value: Any, count: int) -> tuple[list[str], int]:
    """The first ``count`` lines of an output as indented JSON, each character that does not
    print as itself escaped, and how many lines more there are."""
    lines, more = _head_lines(value, count)
    return [escaped_text(line) for line in lines], more


def more_lines(more: int) -> str:
    return f"… {_count(more, 'more line')}: see the receipt's JSON"


def _render(receipt: Receipt, width: int) -> str:
    out: list[str] = []
    title, model, what_now = heading(receipt)
    out.extend(_wrap(title, "", width, "  "))
    out.extend(_wrap(model, "  ", width))
    out.extend(_wrap(what_now, "  ", width))

    for title, indexes, ranked in sections(receipt):
        out.append("")
        out.extend(_wrap(title, "", width))
        for number, index in enumerate(indexes, start=1):
            label = f"{number}." if ranked else "-"
            out.extend(_question_lines(receipt, index, label, width))

    if receipt.failures:
        out.append("")
        out.append("Not answered by the evaluator")
        for ask, reason, detail in receipt.failures:
            out.extend(_wrap(failure_line(ask, reason, detail), "  ", width))

    out.append("")
    out.extend(_wrap(shown_line(receipt), "", width, "  "))
    for piece in receipt.shown:
        if piece.name in ("dropped_steps", "dropped_fields"):
            continue
        out.append(f"  {piece_label(piece.name):<14}{piece.bytes:>12,} bytes")
    cut = cut_lines(receipt)
    for line in cut:
        out.extend(_wrap(line, "  ", width))
    if not cut:
        out.append("  nothing was cut")

    out.append("")
    out.append("The candidate submission")
    for line in candidate_lines(receipt.candidate):
        out.extend(_wrap(line, "  ", width))
    out.append("  output:")
    lines, more = output_lines(receipt.candidate.output, _MAX_OUTPUT_LINES)
    out.extend("    " + line for line in lines)
    if more:
        out.append(f"    {more_lines(more)}")
    return "\n".join(out) + "\n"


def _head_lines(value: Any, count: int) -> tuple[list[str], int]:
    """The first ``count`` lines of ``value`` as indented JSON, and how many more there are:
    only those lines are kept, the rest is counted as it is written."""
    encoder = json.JSONEncoder(indent=2, ensure_ascii=False, sort_keys=True)
    chunks: list[str] = []
    breaks = 0
    chunks_iter = encoder.iterencode(value)
    for chunk in chunks_iter:
        chunks.append(chunk)
        breaks += chunk.count("\n")
        if breaks >= count:
            break
    lines = "".join(chunks).split("\n")
    more = len(lines) - count + sum(chunk.count("\n") for chunk in chunks_iter)
    return lines[:count], max(more, 0)


def _question_lines(receipt: Receipt, index: int, label: str, width: int) -> list[str]:
    record = receipt.verdict.questions[index]
    indent = " " * 14
    lead = f"  {label:<3} {record.result:<8}"
    lines = _wrap(one_line(record.ask), lead, width, indent)
    for detail in question_details(receipt, index):
        lines.extend(_wrap(detail, indent, width))
    return lines


def _option_text(option: str | int) -> str:
    return f"level {option}" if isinstance(option, int) else option
