"""The cases calibration counts: advisory verdicts joined, by submission key, with the
decisions of the people who saw the same submissions, as the records stream in (one or more
audit trails read as one), and with the people's own labels of each question where a host
keeps them.

The definitions (docs/earning-trust.md says the same for users): a **case** is one
submission with an advisory verdict that answered (not ``error``) and the decision of a
person who saw it. ``completed`` with the candidate as submitted is **accepted**;
``returned``, ``failed``, and ``completed`` with the person's own output are **refused** (the
submission itself was not good enough to keep).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from .._bundle import canonical_json
from .._check import Check
from .._convert import show
from .._usage import ModelCall
from .._verdict import Answer, recorded_answer
from ._audit_fast import DecisionFacts, Facts, VerdictFacts
from ._audit_records import AuditRecord, DecisionRecord, VerdictRecord
from ._audit_sources import Window, at_order
from ._audit_strict import TornLine
from ._calibrate_cost import CallCost, CostTally
from ._calibrate_figures import Person
from ._calibrate_labels import check_labels
from ._calibrate_search import Label

__all__ = ["SKIP_REASONS", "TORN_SHOWN", "Case", "CheckCases", "Join"]


@attrs.frozen(kw_only=True)
class Case:
    """One submission: the evaluator's ``answers`` (one per question, in the check's order)
    and the ``person``'s decision on it. ``key`` joins the two in the audit trail.
    ``labels`` are the person's own answers to the questions, where a host keeps them (one per
    question, ``None`` where there is none; empty for none at all)."""

    key: str
    answers: tuple[Answer, ...]
    person: Person
    labels: tuple[Label | None, ...] = ()


@attrs.frozen(kw_only=True)
class CheckCases:
    """The cases of one check: ``name`` says which (a process's step), ``check`` holds the
    thresholds in force now, and every case answers its questions. ``cost``: the model calls
    of the check's verdict records, when they were read from a trail (``None``: not known)."""

    name: str
    check: Check
    cases: tuple[Case, ...] = attrs.field()
    cost: CallCost | None = None

    @cases.validator
    def _answers_fit(self, _: attrs.Attribute[Any], cases: tuple[Case, ...]) -> None:
        for case in cases:
            if len(case.answers) != len(self.check):
                raise ValueError(
                    f"case {show(case.key)} has {len(case.answers)} answers for the"
                    f" {len(self.check)} questions of {show(self.name)}"
                )
            if case.labels and len(case.labels) != len(self.check):
                raise ValueError(
                    f"case {show(case.key)} has {len(case.labels)} labels for the"
                    f" {len(self.check)} questions of {show(self.name)}"
                )


#: Why a record was left out of calibration, in the order reports list them.
SKIP_REASONS: Final = ("not_advisory", "error", "no_decision", "no_verdict", "superseded")

#: At most this many torn lines are listed in a report (all are counted).
TORN_SHOWN: Final = 100

# The thresholds calibration sweeps, by kind; the rest of a question names what it asks.
_SWEPT: Final[dict[str, tuple[str, ...]]] = {
    "yes_no": ("pass", "fail"),
    "choice": ("confidence",),
    "rubric": ("confidence",),
}


def _asked(check: Check) -> str:
    """What a check asks, its swept thresholds left out: verdicts on one step whose checks
    differ only in those thresholds are calibrated together."""
    return canonical_json(
        [
            {key: value for key, value in data.items() if key not in _SWEPT[question.kind]}
            for question, data in zip(check, check.to_json(), strict=True)
        ]
    )


def _name(step: str, asked: str, model: str, groups: Sequence[tuple[str, str, str]]) -> str:
    """The step's id, and what tells its group from the step's other groups: the check's
    number (in order of appearance) when the step's checks differ, the model when it does."""
    same_step = [group for group in groups if group[0] == step]
    asks = list(dict.fromkeys(group[1] for group in same_step))
    parts = []
    if len(asks) > 1:
        parts.append(f"check {asks.index(asked) + 1}")
    if len({group[2] for group in same_step}) > 1:
        parts.append(f"model {model}")
    return f"{step} ({', '.join(parts)})" if parts else step


class _Submission:
    """What calibration keeps of one submission while it reads: a fingerprint of each distinct
    record of it (an int for one, a set for more), the verdict that counts (the latest advisory
    verdict that answered: its time, read order, group, check and answers) and the decision
    that counts (the latest), never the records themselves."""

    __slots__ = (
        "accepted",
        "answers",
        "check",
        "checked",
        "decided_at",
        "decided_in_window",
        "decided_position",
        "decisions",
        "group",
        "verdict_at",
        "verdict_position",
        "verdicts",
    )

    def __init__(self) -> None:
        self.checked = False  # a verdict was read, in the window or not
        self.verdicts: int | set[int] | None = None  # fingerprints of those in the window
        self.decisions: int | set[int] | None = None
        self.verdict_at = ""  # at_order of the verdict that counts ("": none)
        self.verdict_position = 0
        self.group = 0
        self.check: Check | None = None
        self.answers: tuple[Answer, ...] = ()
        self.decided_at = ""  # at_order of the decision that counts ("": none)
        self.decided_position = 0
        self.accepted = False
        self.decided_in_window = False


def _new(known: int | set[int] | None, fingerprint: int) -> int | set[int] | None:
    """``known`` with ``fingerprint`` added, or ``None`` when it was there already."""
    if known is None:
        return fingerprint
    if isinstance(known, int):
        return None if known == fingerprint else {known, fingerprint}
    if fingerprint in known:
        return None
    known.add(fingerprint)
    return known


def _count(known: int | set[int] | None) -> int:
    return 0 if known is None else 1 if isinstance(known, int) else len(known)


class Join:
    """Joins verdicts and decisions by submission key as they stream in (:class:`_Submission`
    holds what is kept of each)."""

    def __init__(self, window: Window) -> None:
        self.since, self.until = window.bounds
        self.position = 0
        self.skipped: Counter[str] = Counter()
        self.duplicates = 0
        self.torn: list[TornLine] = []
        self.torn_lines = 0
        self.submissions: dict[str, _Submission] = {}
        self.groups: dict[tuple[str, str, str], int] = {}
        self.asked: dict[str, str] = {}  # check key -> what it asks
        self.costs: dict[int, CostTally] = {}  # of each group's verdict records in the window

    def add(self, item: AuditRecord | Facts | TornLine, fingerprint: int) -> None:
        self.position += 1
        if isinstance(item, VerdictFacts):
            self._verdict(
                item.key,
                fingerprint,
                item.at,
                item.advisory,
                item.verdict,
                item.step,
                item.model,
                item.check,
                item.check_key,
                item.answers,
                item.calls,
            )
        elif isinstance(item, VerdictRecord):
            verdict = item.verdict
            self._verdict(
                item.key,
                fingerprint,
                verdict.at,
                verdict.advisory,
                verdict.verdict,
                item.step,
                verdict.model,
                item.check,
                item.check_key,
                ()
                if verdict.verdict == "error"
                else tuple(map(recorded_answer, verdict.questions)),
                item.calls,
            )
        elif isinstance(item, DecisionFacts):
            self._decision(item.key, fingerprint, item.at, item.accepted)
        elif isinstance(item, DecisionRecord):
            self._decision(item.key, fingerprint, item.decision.at, item.accepted)
        elif isinstance(item, TornLine):
            self.torn_lines += 1
            if len(self.torn) < TORN_SHOWN:
                self.torn.append(item)
        else:
            raise TypeError(f"an audit record is needed (see read_records), got {show(item)}")

    def _in_window(self, order: str) -> bool:
        return (self.since is None or order >= self.since) and (
            self.until is None or order < self.until
        )

    def _submission(self, key: str) -> _Submission:
        found = self.submissions.get(key)
        if found is None:
            found = self.submissions[key] = _Submission()
        return found

    def _verdict(
        self,
        key: str,
        fingerprint: int,
        at_text: str,
        advisory: bool,
        name: str,
        step: str,
        model: str,
        check: Check,
        check_key: str,
        answers: tuple[Answer, ...],
        calls: tuple[ModelCall, ...],
    ) -> None:
        submission = self._submission(key)
        submission.checked = True
        at = at_order(at_text)
        if not self._in_window(at):
            return
        known = _new(submission.verdicts, fingerprint)
        if known is None:  # the same record again (two replicas wrote it)
            self.duplicates += 1
            return
        submission.verdicts = known
        asked = self.asked.get(check_key)
        if asked is None:
            asked = self.asked[check_key] = _asked(check)
        # Every verdict cost its calls, whether it counts as a case or not.
        group = self.groups.setdefault((step, asked, model), len(self.groups))
        tally = self.costs.get(group)
        if tally is None:
            tally = self.costs[group] = CostTally()
        tally.add(calls)
        if not advisory:
            self.skipped["not_advisory"] += 1
            return
        if name == "error":
            self.skipped["error"] += 1
            return
        if submission.verdict_at:
            self.skipped["superseded"] += 1
            if (at, self.position) < (submission.verdict_at, submission.verdict_position):
                return
        submission.group = group
        submission.verdict_at, submission.verdict_position = at, self.position
        submission.check, submission.answers = check, answers

    def _decision(self, key: str, fingerprint: int, at_text: str, accepted: bool) -> None:
        submission = self._submission(key)
        known = _new(submission.decisions, fingerprint)
        if known is None:
            self.duplicates += 1
            return
        submission.decisions = known
        at = at_order(at_text)
        if (at, self.position) >= (submission.decided_at, submission.decided_position):
            submission.decided_at, submission.decided_position = at, self.position
            submission.accepted = accepted
            submission.decided_in_window = self._in_window(at)

    def cost(self) -> CallCost:
        """What the calls of every verdict record in the window cost (each is in one group)."""
        total = CostTally()
        for tally in self.costs.values():
            total.merge(tally)
        return total.cost()

    def cases(self, labels: Mapping[str, Mapping[str, Label]] | None = None) -> list[CheckCases]:
        """The cases of each check, with the people's ``labels`` (by submission key, then by
        what the question asks) where there are any; what was kept per submission is let go
        on the way."""
        by_group: dict[int, list[Case]] = {}
        first: dict[int, tuple[str, int]] = {}  # each group's first verdict, and its latest
        latest: dict[int, tuple[str, int, Check]] = {}
        while self.submissions:
            key, submission = self.submissions.popitem()
            decisions = _count(submission.decisions)
            if submission.verdicts is not None:  # a verdict in the window
                self.skipped["superseded"] += max(decisions - 1, 0)
                if not submission.verdict_at:
                    continue
                if not decisions:
                    self.skipped["no_decision"] += 1
                    continue
                group = submission.group
                when = (submission.verdict_at, submission.verdict_position)
                person: Person = "accepted" if submission.accepted else "refused"
                assert submission.check is not None
                by_group.setdefault(group, []).append(
                    Case(
                        key=key,
                        answers=submission.answers,
                        person=person,
                        labels=_labels_of(
                            submission.check, key, labels.get(key) if labels else None
                        ),
                    )
                )
                first[group] = min(first.get(group, when), when)
                if group not in latest or when > latest[group][:2]:
                    assert submission.check is not None
                    latest[group] = (*when, submission.check)
            elif decisions and not submission.checked and submission.decided_in_window:
                self.skipped["no_verdict"] += 1
                self.skipped["superseded"] += decisions - 1
        # Checks in the order of their first verdict (its time, then the order read), so the
        # report is the same whichever replica's file comes first; cases in the order read.
        names = list(self.groups)
        order = sorted(by_group, key=first.__getitem__)
        shown = [names[group] for group in order]
        return [
            CheckCases(
                name=_name(*names[group], shown),
                check=latest[group][2],
                cases=tuple(reversed(by_group[group])),
                cost=self.costs[group].cost(),
            )
            for group in order
        ]


def _labels_of(
    check: Check, key: str, labels: Mapping[str, Label] | None
) -> tuple[Label | None, ...]:
    """The labels of ``check``'s questions, in order, by what each asks."""
    if not labels:
        return ()
    check_labels(check, key, labels)
    found = tuple(labels.get(question.ask) for question in check)
    return found if any(label is not None for label in found) else ()
