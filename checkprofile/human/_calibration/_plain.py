"""The plain definition of calibration's cases: the referee of the packed join.

:class:`~._join.Join` keeps a month of submissions in bit flags and byte tables so that a
million records fit in a few hundred megabytes. This module says what it must compute, in
dicts and lists, one rule a line, as slowly as that costs: :func:`plain_cases` reads the same
stream of records and gives the same cases, counts and order. The tests compare the two on
generated trails (duplicates, supersessions, windows, steps, models, checks), as the audit
trail's fast reader is compared with its strict one. Nothing but the tests calls it.

The rules, as docs/earning-trust.md states them for users:

* a record read twice (the same text, so the same fingerprint) counts once, and is counted in
  ``duplicates``; a verdict outside the window is not read at all (but its submission is known
  to have one);
* the verdict that counts for a submission is its latest advisory verdict in the window that
  answered (not ``error``); of two at the same time, the one read last; every other advisory
  answered one is ``superseded``; a blocking one is ``not_advisory``, an error one ``error``;
* the decision that counts is the submission's latest (of two at the same time, the one read
  last), in the window or not; a decision that ``completed`` with the candidate accepts;
* a **case** is a submission with a verdict that counts and a decision;
* ``no_decision``: a verdict that counts and no decision; ``no_verdict``: a decision that
  counts in the window on a submission with no verdict read at all; each decision of a case or
  of a ``no_verdict`` submission but the one that counts is ``superseded``;
* cases are grouped by step, what the check asks (its swept thresholds aside) and model; a
  group's check is the one of its latest verdict; groups are ordered by their first verdict
  (its time, then the order read), cases by the order their submission was first read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from ..._check import Check
from ..._time import at_order
from ..._verdict import format_at, recorded_answer
from .._audit._records import DecisionRecord, VerdictRecord
from .._audit._sources import Window
from .._audit._strict import TornLine
from ._columns import Label
from ._join import _asked, _labels_of, _name, _plain, fitting
from ._recommend import is_test_case

__all__ = ["PlainCase", "PlainCases", "PlainGroup", "plain_cases"]


@attrs.frozen
class PlainCase:
    """One case: its submission ``key``, each answer as ``(value, confidence)`` (``None`` for a
    yes/no answer's confidence), whether the person ``refused`` it, whether it is a ``tested``
    case of the recommendation, and its ``labels`` (``()`` for none)."""

    key: str
    answers: tuple[tuple[Any, float | None], ...]
    refused: bool
    tested: bool
    labels: tuple[Label | None, ...]


@attrs.frozen
class PlainGroup:
    """The cases of one check, as the report names it, with the check of its latest verdict."""

    name: str
    check: Check
    cases: tuple[PlainCase, ...]


@attrs.frozen
class PlainCases:
    """What the join computes: the groups in report order, the records left out by reason,
    the records read twice, and the torn lines."""

    groups: tuple[PlainGroup, ...]
    skipped: dict[str, int]
    duplicates: int
    torn_lines: int


def _when(at: str) -> tuple[str, ...]:
    # A time as it sorts: its at_order text, split where the date and time end, so that a
    # fraction's digits compare after the whole seconds (as the join's stamps do).
    order = at_order(at)
    return order[:19], order[20:]


def plain_cases(
    items: Iterable[tuple[object, int]],
    window: Window,
    labels: Mapping[str, Mapping[str, Label]] | None = None,
) -> PlainCases:
    """The cases of a stream of ``(record, fingerprint)`` pairs (as the sources give them:
    verdict and decision records, and torn lines), read in ``window``, by the rules above."""
    first_read: dict[str, int] = {}  # submission key -> the order it was first read in
    has_verdict: set[str] = set()  # any verdict read, in the window or not
    verdicts_seen: dict[str, set[int]] = {}  # fingerprints of the window's verdicts
    decisions_seen: dict[str, set[int]] = {}  # fingerprints of the decisions
    counts: dict[str, dict[str, Any]] = {}  # the verdict that counts, by key
    decided: dict[str, dict[str, Any]] = {}  # the decision that counts, by key
    skipped: Counter[str] = Counter()
    duplicates = torn = 0
    for position, (item, fingerprint) in enumerate(items, start=1):
        if isinstance(item, TornLine):
            torn += 1
            continue
        if not isinstance(item, (VerdictRecord, DecisionRecord)):
            raise TypeError(f"an audit record is needed, got {type(item).__name__}")
        key = item.key
        first_read.setdefault(key, len(first_read))
        if isinstance(item, VerdictRecord):
            verdict = item.verdict
            has_verdict.add(key)
            at = format_at(verdict.at)
            if not window.holds(at):
                continue
            if fingerprint in verdicts_seen.setdefault(key, set()):
                duplicates += 1
                continue
            verdicts_seen[key].add(fingerprint)
            if not verdict.advisory:
                skipped["not_advisory"] += 1
                continue
            if verdict.verdict == "error":
                skipped["error"] += 1
                continue
            answers = tuple(map(recorded_answer, verdict.questions))
            fitting(item.check, answers, f"case {key}")
            if key in counts:
                skipped["superseded"] += 1
                if _when(at) < counts[key]["when"]:
                    continue
            counts[key] = {
                "when": _when(at),
                "position": position,
                "group": (item.step, _asked(item.check), verdict.model),
                "check": item.check,
                "answers": tuple(map(_plain, answers)),
            }
        else:
            if fingerprint in decisions_seen.setdefault(key, set()):
                duplicates += 1
                continue
            decisions_seen[key].add(fingerprint)
            at = format_at(item.decision.at)
            if key in decided and _when(at) < decided[key]["when"]:
                continue
            decided[key] = {
                "when": _when(at),
                "accepted": item.accepted,
                "in_window": window.holds(at),
            }

    for key in first_read:
        if key in counts and key not in decided:
            skipped["no_decision"] += 1
        if key in decided and key not in has_verdict and decided[key]["in_window"]:
            skipped["no_verdict"] += 1
        seen_in_window = bool(verdicts_seen.get(key))
        no_verdict = key not in has_verdict and key in decided and decided[key]["in_window"]
        if seen_in_window or no_verdict:
            skipped["superseded"] += max(0, len(decisions_seen.get(key, ())) - 1)

    cases_of: dict[tuple[str, str, str], list[str]] = {}
    for key in sorted(first_read, key=first_read.__getitem__):
        if key in counts and key in decided:
            cases_of.setdefault(counts[key]["group"], []).append(key)

    def when(key: str) -> tuple[Any, ...]:
        return (*counts[key]["when"], counts[key]["position"])

    order = sorted(cases_of, key=lambda group: min(map(when, cases_of[group])))
    groups = []
    for group in order:
        keys = cases_of[group]
        latest = max(keys, key=when)
        made = []
        for key in keys:
            given = labels.get(key) if labels else None
            made.append(
                PlainCase(
                    key=key,
                    answers=counts[key]["answers"],
                    refused=not decided[key]["accepted"],
                    tested=is_test_case(key),
                    labels=_labels_of(counts[key]["check"], key, given) if given else (),
                )
            )
        groups.append(
            PlainGroup(
                name=_name(*group, order),
                check=counts[latest]["check"],
                cases=tuple(made),
            )
        )
    return PlainCases(
        groups=tuple(groups),
        skipped={reason: count for reason, count in skipped.items() if count},
        duplicates=duplicates,
        torn_lines=torn,
    )
