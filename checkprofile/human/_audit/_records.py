"""The audit trail's records: every verdict and every human decision, one JSON object per line.

The format (``"format": 1``) is stable; calibration and other tools read it. Each line is one
record, written with ``json.dumps(record.to_json(), ensure_ascii=True, separators=(",", ":"))``
-- ASCII only, so a line never holds a raw newline or an unencodable character -- followed by
``"\\n"``. Keys appear in the order below.

A **verdict record**, made by :func:`verdict_record` from an :class:`~checkprofile.Outcome`::

    {"record": "verdict", "format": 1,
     "key": "sha256:…",                the submission key (below): joins verdicts and decisions
     "run": "…", "step": "…",          the run and step ids, as the host gave them
     "submission_sha256": "sha256:…",  hash of the submission's canonical JSON
     "bundle_sha256": "sha256:…"|null, hash of exactly what the evaluator was shown on the
                                        first attempt (checkprofile.human.bundle_bytes; a re-ask
                                        shows the same material with only the unanswered
                                        questions); null when unknown
     "check_key": "sha256:…",          hash of the check's normalized full form
     "action": "complete"|"not_accepted"|"escalate"|"retry",
     "attempts": 1|2,
     "check": [...],                   the check's full form (Check.to_json): every threshold
     "verdict": {...},                 the verdict record itself (Verdict.to_json): verdict,
                                        advisory, model, questions (answer, confidence, result),
                                        truncated, at
     "provenance": [...]}              optional, one entry per question: where its answer came
                                        from, {"source", "distribution"?: [[option, p], ...]}
                                        ({} for a question not answered); absent when unknown
                                        (an error verdict, an outcome without answers)
     "calls": [...]}                   optional, one entry per attempt (ModelCall.to_json):
                                        {"seconds", "questions", "input_tokens"?,
                                        "output_tokens"?, "cached_tokens"?, "request_ids"?},
                                        a figure only where the host reported it; absent
                                        when unknown (an outcome not made by run_check)

The verdict's ``questions[i]`` answers ``check[i]``: the thresholds of question ``i`` are
``check[i]`` (yes/no ``pass``, ``fail``; choice ``pass``, ``unsure``, ``confidence``; rubric
``pass``, ``confidence``).

A **decision record**, made by :func:`resolution_record` from what
:func:`~checkprofile.human.apply_decision` gave, or by :func:`decision_record` for a person who
decided on the same submission elsewhere (an approver after an advisory check)::

    {"record": "decision", "format": 1,
     "key": "sha256:…", "run": "…", "step": "…", "submission_sha256": "sha256:…",
     "escalated_at": "…"|null,         the escalation's at; null when not from an escalation
     "accepted": true|false,           the person let the candidate stand: completed with it
     "decision": {"kind": "returned"|"completed"|"failed", "by", "at", "note"?,
                  "output"?, "summary"?, "evidence"?, "next"?, "reason"?}}

The **submission key** is ``"sha256:"`` and the hex SHA-256 of the UTF-8 canonical JSON
(compact, keys sorted) of ``[run_id, step_id, submission_sha256]``, where
``submission_sha256`` is ``"sha256:"`` and the hex SHA-256 of the submission's canonical JSON
(``{"output", "summary"?, "evidence": [{"kind", "ref"}], "next"?, "reason"?}``, evidence urls
left out): the same submission on the same step of the same run has the same key, and a
verdict and a later decision join on it. The **check key** is ``"sha256:"`` and the hex
SHA-256 of the canonical JSON of the check's full form: two checks grade alike exactly when
their keys are equal.

The records are read by ``_audit_strict`` (the reference) and ``_audit_fast`` (the same records,
faster), found in files, stores and time windows by ``_audit_sources``, and written by
``_recorders``.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal

import attrs

from ..._bundle import Submission, canonical_json
from ..._bundle_bytes import bundle_sha256
from ..._check import Check, Question
from ..._outcome import Action, Outcome, held_check, provenance_of
from ..._shown import show
from ..._usage import ModelCall
from ..._verdict import Provenance, QuestionResult, Verdict, VerdictName, format_at, provenance_json
from .._decide._decisions import Completed, Decision, Resolution, decision_from_json

__all__ = [
    "AUDIT_FORMAT",
    "DecisionRecord",
    "VerdictRecord",
    "check_key",
    "decision_record",
    "resolution_record",
    "submission_key",
    "submission_sha256",
    "verdict_record",
]

#: The version of the record format; a reader refuses any other.
AUDIT_FORMAT = 1

_ACTIONS = ("complete", "not_accepted", "escalate", "retry")


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def submission_sha256(submission: Submission) -> str:
    """``"sha256:"`` and the hex SHA-256 of the submission's canonical JSON (the text the
    evaluator was shown as the submission)."""
    if not isinstance(submission, Submission):
        raise TypeError(f"a Submission is needed, got {show(submission)}")
    return _sha256(canonical_json(submission.to_json()))


# Printable ASCII but `"` and `\`: JSON writes such text as it is, between quotes.
_PLAIN = re.compile(r"[ !#-\[\]-~]*")


def _key_from(run_id: str, step_id: str, submission_hash: str) -> str:
    # (The class of _PLAIN is per character: the parts are plain when they are, joined.)
    if _PLAIN.fullmatch(run_id + step_id + submission_hash):
        # canonical_json of the list, written out (a reader computes this for every record)
        return _sha256(f'["{run_id}","{step_id}","{submission_hash}"]')
    return _sha256(canonical_json([run_id, step_id, submission_hash]))


def submission_key(run_id: str, step_id: str, submission: Submission) -> str:
    """The key that joins a verdict and a person's decision on the same submission: the same
    submission on the same step of the same run always has the same key."""
    return _key_from(_id("run_id", run_id), _id("step_id", step_id), submission_sha256(submission))


def check_key(check: Check) -> str:
    """``"sha256:"`` and the hex SHA-256 of the canonical JSON of ``check.to_json()``."""
    if not isinstance(check, Check):
        raise TypeError(f"a Check is needed (see parse_check), got {show(check)}")
    return _sha256(canonical_json(check.to_json()))


def _id(what: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-blank string, got {show(value)}")
    return value


def _known_provenance(value: tuple[Provenance, ...]) -> tuple[Provenance, ...]:
    entries = tuple(value)
    return entries if any(entry.source is not None for entry in entries) else ()


@attrs.frozen(kw_only=True)
class VerdictRecord:
    """One verdict in the audit trail (the module docstring has the JSON)."""

    key: str
    run: str
    step: str
    submission_sha256: str
    bundle_sha256: str | None
    check_key: str
    action: Action
    attempts: int
    check: Check
    verdict: Verdict
    # No answer's source known is no provenance at all, as the trail writes and reads it (an
    # evaluator of the host's own gives answers with none).
    provenance: tuple[Provenance, ...] = attrs.field(default=(), converter=_known_provenance)
    calls: tuple[ModelCall, ...] = ()
    record: Literal["verdict"] = attrs.field(default="verdict", init=False)

    @property
    def advisory(self) -> bool:
        return self.verdict.advisory

    @property
    def model(self) -> str:
        return self.verdict.model

    @property
    def at(self) -> str:
        return self.verdict.at

    @property
    def result(self) -> VerdictName:
        """The verdict: ``pass``, ``fail``, ``unsure`` or ``error``."""
        return self.verdict.verdict

    @property
    def questions(self) -> tuple[tuple[Question, QuestionResult], ...]:
        """Each question (with its thresholds) and its recorded answer and result."""
        return tuple(zip(self.check, self.verdict.questions, strict=True))

    def to_json(self) -> dict[str, Any]:
        return {
            "record": self.record,
            "format": AUDIT_FORMAT,
            "key": self.key,
            "run": self.run,
            "step": self.step,
            "submission_sha256": self.submission_sha256,
            "bundle_sha256": self.bundle_sha256,
            "check_key": self.check_key,
            "action": self.action,
            "attempts": self.attempts,
            "check": self.check.to_json(),
            "verdict": self.verdict.to_json(),
            **(
                {"provenance": [provenance_json(origin) for origin in self.provenance]}
                if self.provenance
                else {}
            ),
            **({"calls": [call.to_json() for call in self.calls]} if self.calls else {}),
        }


@attrs.frozen(kw_only=True)
class DecisionRecord:
    """One person's decision in the audit trail (the module docstring has the JSON)."""

    key: str
    run: str
    step: str
    submission_sha256: str
    escalated_at: str | None
    decision: Decision
    record: Literal["decision"] = attrs.field(default="decision", init=False)

    @property
    def accepted(self) -> bool:
        """Whether the person let the candidate stand: ``completed`` with the candidate."""
        return isinstance(self.decision, Completed) and self.decision.with_candidate

    @property
    def at(self) -> str:
        return self.decision.at

    def to_json(self) -> dict[str, Any]:
        return {
            "record": self.record,
            "format": AUDIT_FORMAT,
            "key": self.key,
            "run": self.run,
            "step": self.step,
            "submission_sha256": self.submission_sha256,
            "escalated_at": self.escalated_at,
            "accepted": self.accepted,
            "decision": self.decision.to_json(),
        }


# Any record of the trail, every kind: checkprofile.human._audit._kinds.AuditRecord.


def verdict_record(
    outcome: Outcome,
    *,
    run_id: str,
    step_id: str,
    submission: Submission | None = None,
) -> VerdictRecord:
    """The audit record of ``outcome`` on step ``step_id`` of run ``run_id``.

    The submission and the hash of what the evaluator was shown come from the outcome's
    bundle. For an outcome without one (not made by ``run_check``), give ``submission``;
    ``bundle_sha256`` is then ``null``.
    """
    if type(outcome) is not Outcome:
        raise TypeError(f"an Outcome is needed (see run_check), got {show(outcome)}")
    check = held_check(outcome)
    bundle = outcome.bundle
    if submission is None:
        if bundle is None:
            raise ValueError(
                "the outcome has no bundle, so its submission is unknown: give submission="
            )
        submission = bundle.submission
    digest = submission_sha256(submission)
    origins = provenance_of(outcome)
    return VerdictRecord(
        key=_key_from(_id("run_id", run_id), _id("step_id", step_id), digest),
        run=run_id,
        step=step_id,
        submission_sha256=digest,
        bundle_sha256=bundle_sha256(bundle) if bundle is not None else None,
        check_key=check_key(check),
        action=outcome.action,
        attempts=outcome.attempts,
        check=check,
        verdict=outcome.verdict,
        # Left out when no answer's source is known (a host's own evaluator that names none),
        # as the reader requires: a list of empty entries says nothing.
        provenance=tuple(origins) if any(o.source is not None for o in origins) else (),
        calls=tuple(call.recorded() for call in outcome.calls),
    )


def decision_record(
    decision: Decision,
    *,
    run_id: str,
    step_id: str,
    submission: Submission,
    escalated_at: str | None = None,
) -> DecisionRecord:
    """The audit record of a person's ``decision`` on ``submission`` (step ``step_id`` of run
    ``run_id``), e.g. an approver's, after an advisory check on that step. An approval that
    lets the submission stand is ``Completed`` with no output; a rejection ``Returned`` or
    ``Failed``. Raises :class:`~checkprofile.human.DecisionRequiredError` for anything that is
    not a decision."""
    decision = decision_from_json(decision)  # a typed decision passes; anything else raises
    if escalated_at is not None:
        escalated_at = format_at(escalated_at)
    digest = submission_sha256(submission)
    return DecisionRecord(
        key=_key_from(_id("run_id", run_id), _id("step_id", step_id), digest),
        run=run_id,
        step=step_id,
        submission_sha256=digest,
        escalated_at=escalated_at,
        decision=decision,
    )


def resolution_record(resolution: Resolution) -> DecisionRecord:
    """The audit record of a decision on an escalation, from :func:`apply_decision`'s result.
    Its key is the key of the verdict that escalated (the candidate is that submission)."""
    if not isinstance(resolution, Resolution):
        raise TypeError(f"a Resolution is needed (see apply_decision), got {show(resolution)}")
    escalation = resolution.escalation
    return decision_record(
        resolution.decision,
        run_id=escalation.run_id,
        step_id=escalation.step_id,
        submission=escalation.candidate,
        escalated_at=escalation.at,
    )
