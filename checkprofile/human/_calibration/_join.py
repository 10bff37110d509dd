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

import itertools
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final

import attrs

from ..._bundle import canonical_json
from ..._check import Check
from ..._shown import show
from ..._time import at_order
from ..._usage import ModelCall
from ..._verdict import (
    Answer,
    ChoiceAnswer,
    YesNoAnswer,
    answer_problem,
    format_at,
    recorded_answer,
)
from .._audit._fast._reader import DecisionFacts, Facts, Plain, VerdictFacts
from .._audit._kinds import AuditRecord
from .._audit._qualification import QualificationRecord, qualification_summary
from .._audit._records import DecisionRecord, VerdictRecord, check_key
from .._audit._sources import Window
from .._audit._spot import SpotCheckRecord
from .._audit._strict import TornLine
from ._columns import CheckColumns, Column, Label, Names
from ._cost import CallCost, CostTally
from ._figures import Person
from ._labels import check_labels

__all__ = ["SKIP_REASONS", "TORN_SHOWN", "Case", "CheckCases", "Join", "fitting"]


@attrs.frozen(kw_only=True)
class Case:
    """One submission: the evaluator's ``answers`` (one per question, in the check's order)
    and the ``person``'s decision on it. ``key`` joins the two in the audit trail.
    ``labels`` are the person's own answers to the questions, where a host keeps them (one per
    question, ``None`` where there is none; empty for none at all)."""

    key: str = attrs.field()
    answers: tuple[Answer, ...]
    person: Person = attrs.field()
    labels: tuple[Label | None, ...] = ()

    @key.validator
    def _key_is_text(self, _: attrs.Attribute[Any], key: object) -> None:
        if type(key) is not str:
            raise ValueError(f"a case's key is the submission key's text, got {show(key)}")

    @person.validator
    def _person_decided(self, _: attrs.Attribute[Any], person: object) -> None:
        # Anything else would be counted as accepted, so it is refused here.
        if type(person) is not str or person not in ("accepted", "refused"):
            raise ValueError(f'a case\'s person is "accepted" or "refused", got {show(person)}')


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


# What is kept of each submission (see Join), bits of its flags.
_CHECKED = 1  # a verdict was read, in the window or not
_VERDICT = 2  # a verdict in the window was read (its fingerprint is kept)
_COUNTS = 4  # an advisory verdict that answered: the latest is the one that counts
_DECIDED = 8  # a decision was read (its fingerprint is kept)
_ACCEPTED = 16  # the decision that counts accepted the submission
_IN_WINDOW = 32  # the decision that counts was made in the window


def _table(kept: Callable[[int], object]) -> bytes:
    """A table for ``bytes.translate`` of a submission's flags: 1 where ``kept``, else 0."""
    return bytes(bool(kept(flag)) for flag in range(256))


# Which flags make a case (a verdict in the window that counts, and a decision), a
# verdict that counts left without a decision, and decisions in the window on a submission
# with no verdict at all.
_IS_CASE = _table(lambda f: f & _VERDICT and f & _COUNTS and f & _DECIDED)
_NO_DECISION = _table(lambda f: f & _VERDICT and f & _COUNTS and not f & _DECIDED)
_NO_VERDICT = _table(lambda f: f & _DECIDED and not f & _CHECKED and f & _IN_WINDOW)
# Whether the decision that counts refused the submission.
_REFUSED = _table(lambda f: not f & _ACCEPTED)

# The arrays of the join grow by this many submissions at a time.
_CHUNK = 1 << 16

# A submission key as the library writes it; kept as the number its hex digits spell.
_HASH_KEY = re.compile(r"sha256:[0-9a-f]{64}")


def _compact(key: str) -> int | str:
    """``key`` in less memory: a key the library wrote, ``sha256:`` and 64 hex digits, as
    the number they spell (:func:`_key`, its inverse); any other key as it is."""
    if len(key) == 71 and _HASH_KEY.fullmatch(key):
        return int(key[7:], 16)
    return key


def _key(compact: int | str) -> str:
    return compact if isinstance(compact, str) else f"sha256:{compact:064x}"


def _stamp(order: str) -> tuple[int, str]:
    """An :func:`at_order` text as a whole number of its date and time of day, and its
    fraction's digits: compared as tuples, they sort as the texts do."""
    return int(order[:10].replace("-", "") + order[11:19].replace(":", "")), order[20:]


class _Seen:
    """The fingerprints of the distinct records of each submission, of one kind (verdicts in
    the window, or decisions): the first in an array, any more in a set."""

    __slots__ = ("first", "flag", "more")

    def __init__(self, flag: int) -> None:
        self.flag = flag
        self.first: array[int] = array("q")
        self.more: dict[int, set[int]] = {}

    def new(self, flags: bytearray, index: int, fingerprint: int) -> bool:
        """Whether ``fingerprint`` is new for submission ``index`` (then it is kept)."""
        if not flags[index] & self.flag:
            flags[index] |= self.flag
            self.first[index] = fingerprint
            return True
        more = self.more.get(index)
        if more is None:
            if self.first[index] == fingerprint:
                return False
            self.more[index] = {self.first[index], fingerprint}
            return True
        if fingerprint in more:
            return False
        more.add(fingerprint)
        return True

    def count(self, flags: bytearray, index: int) -> int:
        if not flags[index] & self.flag:
            return 0
        more = self.more.get(index)
        return 1 if more is None else len(more)


class Join:
    """Joins verdicts and decisions by submission key as they stream in, keeping of each
    submission only what the figures need, in arrays by the order submissions were first
    read: a fingerprint of each distinct record (to count a record read twice once), the
    verdict that counts (the latest advisory verdict that answered: its time, read order,
    group, check, and each answer's value and name or level) and the decision that counts
    (the latest: its time, whether it accepted, whether it was made in the window); never
    the records themselves. About 230 bytes a submission with three questions."""

    def __init__(self, window: Window) -> None:
        self.since, self.until = window.bounds
        self.position = 0
        self.skipped: Counter[str] = Counter()
        self.duplicates = 0
        self.torn: list[TornLine] = []
        self.torn_lines = 0
        self.groups: dict[tuple[str, str, str], int] = {}
        self.names = Names()
        # By submission, in the order first read: its number, by key.
        self.index: dict[int | str, int] = {}
        self.size = 0  # how many places the arrays have
        self.flags = bytearray()
        self.verdicts = _Seen(_VERDICT)
        self.decisions = _Seen(_DECIDED)
        self.verdict_at: array[int] = array("q")  # _stamp of the verdict that counts
        self.verdict_position: array[int] = array("q")
        self.decided_at: array[int] = array("q")  # _stamp of the decision that counts
        self.fractions: dict[tuple[int, int], str] = {}  # (0 verdict | 1 decision, index)
        self.group: array[int] = array("i")
        self.check: array[int] = array("i")  # the verdict's check, in self.checks
        # By check key: the check's number, the check, and what it asks (thresholds aside).
        self.checks: dict[str, tuple[int, Check, str]] = {}
        # The answers of each verdict that counted, one after another (a value and a code per
        # question), and where each submission's verdict that counts starts in them: memory
        # grows with the answers read, never with a check's number of questions times the
        # submissions (a verdict of 2,000 questions once cost 1.6 GB here).
        self.answer_start: array[int] = array("q")
        self.values: array[float] = array("d")
        self.codes: array[int] = array("i")
        self.costs: dict[int, CostTally] = {}  # of each group's verdict records in the window
        self._kinds: dict[tuple[str, str, str], tuple[int, int, CostTally]] = {}  # see _kind
        self.qualifications: list[QualificationRecord] = []  # as read, in trail order

    def add(self, item: AuditRecord | Facts | TornLine, fingerprint: int) -> None:
        self.position += 1
        if isinstance(item, VerdictFacts):
            self._verdict(
                int(item.key[7:], 16),  # the fast reader read a key the library wrote
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
            answers = (
                () if verdict.verdict == "error" else tuple(map(recorded_answer, verdict.questions))
            )
            if answers:
                fitting(item.check, answers, f"case {show(item.key)}")
            self._verdict(
                _compact(item.key),
                fingerprint,
                format_at(verdict.at),
                verdict.advisory,
                verdict.verdict,
                item.step,
                verdict.model,
                item.check,
                check_key(item.check),  # the record's own may not be its check's
                tuple(map(_plain, answers)),
                item.calls,
            )
        elif isinstance(item, DecisionFacts):
            self._decision(int(item.key[7:], 16), fingerprint, item.at, item.accepted)
        elif isinstance(item, DecisionRecord):
            at = format_at(item.decision.at)
            self._decision(_compact(item.key), fingerprint, at, item.accepted)
        elif isinstance(item, QualificationRecord):
            self.qualifications.append(item)  # what a model qualified for, not a case
        elif isinstance(item, TornLine):
            self.torn_lines += 1
            if len(self.torn) < TORN_SHOWN:
                self.torn.append(item)
        elif isinstance(item, SpotCheckRecord):
            pass  # a sampled review of an enforced verdict: the monitor's, not calibration's
        else:
            raise TypeError(f"an audit record is needed (see read_records), got {show(item)}")

    def _in_window(self, order: str) -> bool:
        return (self.since is None or order >= self.since) and (
            self.until is None or order < self.until
        )

    def _submission(self, key: int | str) -> int:
        found = self.index.get(key)
        if found is None:
            found = self.index[key] = len(self.index)
            if found == self.size:
                self._grow()
        return found

    def _grow(self) -> None:
        """Room for :data:`_CHUNK` more submissions."""
        self.size += _CHUNK
        self.flags.extend(bytes(_CHUNK))
        kept: tuple[array[Any], ...] = (
            self.verdicts.first,
            self.decisions.first,
            self.verdict_at,
            self.verdict_position,
            self.decided_at,
            self.group,
            self.check,
            self.answer_start,
        )
        for each in kept:
            each.frombytes(bytes(each.itemsize * _CHUNK))

    def _later(self, kind: int, index: int, at: tuple[int, str], stamps: array[int]) -> int:
        """How ``at`` compares with the time kept for submission ``index`` (-1, 0, 1)."""
        kept = (stamps[index], self.fractions.get((kind, index), ""))
        return (at > kept) - (at < kept)

    def _keep_at(self, kind: int, index: int, at: tuple[int, str], stamps: array[int]) -> None:
        stamps[index] = at[0]
        if at[1]:
            self.fractions[(kind, index)] = at[1]
        elif self.fractions:
            self.fractions.pop((kind, index), None)

    def _verdict(
        self,
        key: int | str,
        fingerprint: int,
        at_text: str,
        advisory: bool,
        name: str,
        step: str,
        model: str,
        check: Check,
        check_key: str,
        answers: tuple[Plain, ...],
        calls: tuple[ModelCall, ...],
    ) -> None:
        index = self._submission(key)
        flags = self.flags
        flags[index] |= _CHECKED
        order = at_order(at_text)
        if not self._in_window(order):
            return
        if not self.verdicts.new(flags, index, fingerprint):
            self.duplicates += 1  # the same record again (two replicas wrote it)
            return
        found = self._kinds.get((step, check_key, model))
        if found is None:
            found = self._kind(step, check, check_key, model)
        number, group, tally = found
        # Every verdict cost its calls, whether it counts as a case or not.
        tally.add(calls)
        if not advisory:
            self.skipped["not_advisory"] += 1
            return
        if name == "error":
            self.skipped["error"] += 1
            return
        at = _stamp(order)
        if flags[index] & _COUNTS:
            self.skipped["superseded"] += 1
            # Of two at the same time, the one read last counts.
            if self._later(0, index, at, self.verdict_at) < 0:
                return
        flags[index] |= _COUNTS
        self.group[index] = group
        self._keep_at(0, index, at, self.verdict_at)
        self.verdict_position[index] = self.position
        self.check[index] = number
        values, codes = self.values, self.codes
        self.answer_start[index] = len(values)
        for value, confidence in answers:
            if confidence is None:  # a yes/no answer
                values.append(value)  # type: ignore[arg-type]
                codes.append(0)
            else:
                values.append(confidence)
                codes.append(self.names.code(value) if type(value) is str else value)  # type: ignore[arg-type]

    def _kind(
        self, step: str, check: Check, check_key: str, model: str
    ) -> tuple[int, int, CostTally]:
        """The number of a verdict's check, its group and its group's tally, for a verdict of
        ``check`` (keyed ``check_key``) on ``step`` that ``model`` answered: kept for each
        such kind of verdict (a trail holds a few, on every line)."""
        known = self.checks.get(check_key)
        if known is None:
            known = self.checks[check_key] = (len(self.checks), check, _asked(check))
        group = self.groups.setdefault((step, known[2], model), len(self.groups))
        tally = self.costs.get(group)
        if tally is None:
            tally = self.costs[group] = CostTally()
        found = self._kinds[(step, check_key, model)] = (known[0], group, tally)
        return found

    def _decision(self, key: int | str, fingerprint: int, at_text: str, accepted: bool) -> None:
        index = self._submission(key)
        flags = self.flags
        decided = flags[index] & _DECIDED
        if not self.decisions.new(flags, index, fingerprint):
            self.duplicates += 1
            return
        order = at_order(at_text)
        at = _stamp(order)
        # Of two at the same time, the one read last counts.
        if decided and self._later(1, index, at, self.decided_at) < 0:
            return
        self._keep_at(1, index, at, self.decided_at)
        flag = flags[index] & ~(_ACCEPTED | _IN_WINDOW)
        if accepted:
            flag |= _ACCEPTED
        if self._in_window(order):
            flag |= _IN_WINDOW
        flags[index] = flag

    def cost(self) -> CallCost:
        """What the calls of every verdict record in the window cost (each is in one group)."""
        total = CostTally()
        for tally in self.costs.values():
            total.merge(tally)
        return total.cost()

    def cases(self, labels: Mapping[str, Mapping[str, Label]] | None = None) -> list[CheckColumns]:
        """The cases of each check, with the people's ``labels`` (by submission key, then by
        what the question asks) where there are any; what was kept per submission is let go
        once they are made."""
        flags, fractions = self.flags, self.fractions
        checks = [check for _, check, _ in sorted(self.checks.values(), key=lambda kept: kept[0])]
        self._count_left_out()
        # A case: a verdict in the window that counts, and a decision; in the order first read.
        counted = itertools.compress(range(len(self.index)), flags.translate(_IS_CASE))
        members: dict[int, array[int]] = {}  # each group's cases
        for index in counted:
            group = self.group[index]
            found = members.get(group)
            if found is None:
                found = members[group] = array("i")
            found.append(index)
        keys = list(self.index)  # by submission, in the order first read
        labelled: dict[int, list[tuple[Label | None, ...]]] = {}
        first: dict[int, tuple[int, str, int]] = {}  # each group's first verdict, and latest
        latest: dict[int, tuple[int, str, int, int]] = {}

        # Each verdict's time, and its place in the reading (no two share one).
        def when(index: int) -> tuple[int, str, int]:
            return (
                self.verdict_at[index],
                fractions.get((0, index), ""),
                self.verdict_position[index],
            )

        for group, indexes in members.items():
            labelled[group] = []
            if labels:
                for index in indexes:
                    text = _key(keys[index])
                    given = labels.get(text)
                    check = checks[self.check[index]]
                    labelled[group].append(_labels_of(check, text, given) if given else ())
            first[group] = min(map(when, indexes))
            last = max(indexes, key=when)
            latest[group] = (*when(last), self.check[last])
        # Checks in the order of their first verdict (its time, then the order read), so the
        # report is the same whichever replica's file comes first; cases in the order read.
        names = list(self.groups)
        order = sorted(members, key=first.__getitem__)
        shown = [names[group] for group in order]
        made = []
        for group in order:
            cases = members[group]
            check = checks[latest[group][3]]
            starts = array("q", map(self.answer_start.__getitem__, cases))
            made.append(
                CheckColumns(
                    name=_name(*names[group], shown),
                    check=check,
                    columns=tuple(
                        Column(
                            question.kind,
                            array("d", map(self.values.__getitem__, _shifted(starts, q))),
                            array("i", map(self.codes.__getitem__, _shifted(starts, q))),
                            self.names,
                        )
                        for q, question in enumerate(check)
                    ),
                    refused=bytes(map(flags.__getitem__, cases)).translate(_REFUSED),
                    labels=labelled[group] if any(labelled[group]) else (),
                    cost=self.costs[group].cost(),
                    qualification=self._qualification(names[group][2], check),
                )
            )
        self._let_go()
        return made

    def _qualification(self, model: str, check: Check) -> dict[str, Any] | None:
        """The latest qualification of ``model`` for ``check`` the trail holds, if any."""
        key = check_key(check)
        found = [q for q in self.qualifications if q.model == model and q.check_key == key]
        return qualification_summary(max(found, key=lambda q: at_order(q.at))) if found else None

    def _count_left_out(self) -> None:
        """Counts the submissions left out (``no_decision``, ``no_verdict``) and the decisions
        superseded by a later one on the same submission."""
        flags, skipped = self.flags, self.skipped
        for reason, table in (("no_decision", _NO_DECISION), ("no_verdict", _NO_VERDICT)):
            found = flags.translate(table).count(1)
            if found:
                skipped[reason] += found
        # Only a submission with more than one decision has any superseded (see _Seen).
        for index, seen in self.decisions.more.items():
            if flags[index] & _VERDICT or _NO_VERDICT[flags[index]]:
                skipped["superseded"] += len(seen) - 1

    def _let_go(self) -> None:
        """Let go of what was kept per submission (the counts stay)."""
        self.index = {}
        self.size = 0
        self.flags = bytearray()
        self.verdicts, self.decisions = _Seen(_VERDICT), _Seen(_DECIDED)
        self.verdict_at, self.verdict_position, self.decided_at = (
            array("q"), array("q"), array("q"),
        )  # fmt: skip
        self.fractions = {}
        self.group, self.check = array("i"), array("i")
        self.answer_start, self.values, self.codes = array("q"), array("d"), array("i")


def _shifted(starts: array[int], by: int) -> Iterator[int]:
    """Each of ``starts`` plus ``by``: where question ``by``'s answer of each case is."""
    return map(by.__add__, starts)


def _plain(answer: Answer) -> Plain:
    """``answer`` as the fast reader gives one: its value and confidence."""
    if isinstance(answer, YesNoAnswer):
        return answer.p, None
    if isinstance(answer, ChoiceAnswer):
        return answer.name, answer.confidence
    return answer.level, answer.confidence


def fitting(check: Check, answers: Sequence[Answer], where: str) -> None:
    """Raises :class:`ValueError` naming ``where`` and the question for an answer that does
    not fit its question, or for answers to another number of questions: no answer is
    counted that grading would refuse."""
    if len(answers) != len(check):
        raise ValueError(f"{where} has {len(answers)} answers for {len(check)} questions")
    for question, answer in zip(check, answers, strict=True):
        problem = answer_problem(question, answer)
        if problem is not None:
            raise ValueError(f"{where}, question {show(question.ask)}: {problem}")


def _labels_of(
    check: Check, key: str, labels: Mapping[str, Label] | None
) -> tuple[Label | None, ...]:
    """The labels of ``check``'s questions, in order, by what each asks."""
    if not labels:
        return ()
    check_labels(check, key, labels)
    found = tuple(labels.get(question.ask) for question in check)
    return found if any(label is not None for label in found) else ()
