"""The packed join against its referee: the plain definition of a case gives the same cases.

The join (``_calibration/_join.py``) keeps a month in bit flags and byte tables; the plain
definition (``_calibration/_plain.py``) says the same rules in dicts. On generated trails --
several files as replicas write them, records read twice, verdicts superseded, blocking and
error verdicts, decisions before and after, windows, several steps, models and checks, torn
lines -- both must give the same groups in the same order, the same cases, the same counts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings

from checkprofile import (
    ChoiceAnswer,
    Submission,
    YesNoAnswer,
    combine,
    error_verdict,
    outcome_for,
    parse_check,
)
from checkprofile.human import (
    Completed,
    Decision,
    Failed,
    Returned,
    decision_record,
    verdict_record,
)
from checkprofile.human._audit._fast._reader import _Reader
from checkprofile.human._audit._recorders import record_line
from checkprofile.human._audit._sources import Window, _lines, open_sources
from checkprofile.human._calibration._join import Join
from checkprofile.human._calibration._plain import PlainCases, plain_cases

CHECKS = [
    parse_check(
        [
            {"ask": "The report matches its receipts.", "pass": 0.9, "fail": 0.5},
            {"ask": "What does it do?", "one_of": {"a": "A.", "b": "B."}, "pass": ["a"]},
        ]
    ),
    # The same asks at other thresholds: one group with the first.
    parse_check(
        [
            {"ask": "The report matches its receipts.", "pass": 0.8, "fail": 0.4},
            {
                "ask": "What does it do?",
                "one_of": {"a": "A.", "b": "B."},
                "pass": ["a"],
                "confidence": 0.6,
            },
        ]
    ),
    # Another ask on the same step: another group.
    parse_check([{"ask": "Is the total right?", "pass": 0.7}]),
]
TIMES = [
    "2026-11-01T08:00:00Z",
    "2026-11-02T09:00:00Z",
    "2026-11-02T09:00:00.5Z",
    "2026-11-02T09:00:00.25Z",
    "2026-11-03T10:30:00Z",
    "2026-11-04T12:00:00Z",
]
DECISIONS: list[Decision] = [
    Completed(by="pat", at=TIMES[0]),
    Returned(note="Missing receipts.", by="pat", at=TIMES[0]),
    Failed(note="Not a report.", by="sam", at=TIMES[0]),
    Completed(by="sam", at=TIMES[0], output={"fixed": True}),
]


def _answers(check_index: int, draw: st.DrawFn) -> list[Any]:
    p = draw(st.sampled_from([0.05, 0.45, 0.6, 0.85, 0.95, 1.0]))
    if check_index == 2:
        return [YesNoAnswer(p)]
    confidence = draw(st.sampled_from([0.3, 0.7, 0.9]))
    return [YesNoAnswer(p), ChoiceAnswer(draw(st.sampled_from(["a", "b"])), confidence)]


@st.composite
def trails(draw: st.DrawFn) -> tuple[list[list[bytes]], Window]:
    """Lines of one to three replicas' files, and a window."""
    submissions = [Submission({"report": n}) for n in range(draw(st.integers(1, 6)))]
    lines: list[bytes] = []
    for _ in range(draw(st.integers(0, 18))):
        submission = draw(st.sampled_from(submissions))
        step = draw(st.sampled_from(["review", "approve"]))
        at = draw(st.sampled_from(TIMES))
        if draw(st.booleans()):
            index = draw(st.sampled_from([0, 0, 1, 2]))
            check = CHECKS[index]
            model = draw(st.sampled_from(["m-1", "m-1", "m-2"]))
            advisory = draw(st.sampled_from([True, True, True, False]))
            if draw(st.integers(0, 6)) == 0:
                verdict = error_verdict(check, model=model, at=at, advisory=advisory)
            else:
                answers = _answers(index, draw)
                verdict = combine(check, answers, model=model, at=at, advisory=advisory)
            record: Any = verdict_record(
                outcome_for(verdict), run_id="run", step_id=step, submission=submission
            )
        else:
            decision = draw(st.sampled_from(DECISIONS))
            decision = attrs.evolve(decision, at=at)
            record = decision_record(decision, run_id="run", step_id=step, submission=submission)
        line = record_line(record)[:-1]
        lines.append(line)
        if draw(st.integers(0, 4)) == 0:
            lines.append(line)  # written twice, by one replica or two
    replicas = draw(st.integers(1, 3))
    files: list[list[bytes]] = [[] for _ in range(replicas)]
    for line in lines:
        files[draw(st.integers(0, replicas - 1))].append(line)
    if draw(st.booleans()) and files[0]:
        files[0].append(files[0][-1][: len(files[0][-1]) // 2])  # a torn last line
    since = draw(st.sampled_from([None, None, TIMES[1], TIMES[2]]))
    until = draw(st.sampled_from([None, None, TIMES[4], TIMES[5]]))
    return files, Window.of(since, until)


def _write(tmp: Path, files: list[list[bytes]]) -> list[Path]:
    paths = []
    for number, lines in enumerate(files):
        path = tmp / f"replica-{number}.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in lines))
        paths.append(path)
    return paths


def _joined(paths: list[Path], window: Window) -> PlainCases:
    """What the packed join gives, in the plain definition's terms."""
    join = Join(window)
    _, stream = open_sources([str(path) for path in paths], window)
    for item, fingerprint in stream:
        join.add(item, fingerprint)
    groups = []
    from checkprofile.human._calibration._plain import PlainCase, PlainGroup

    for made in join.cases():
        cases = []
        for index in range(len(made)):
            answers: list[tuple[Any, float | None]] = []
            for column in made.columns:
                value, code = column.values[index], column.codes[index]
                if column.kind == "yes_no":
                    answers.append((value, None))
                elif column.kind == "choice":
                    answers.append((column.names.names[code], value))
                else:
                    answers.append((code, value))
            cases.append(
                PlainCase(
                    key="",
                    answers=tuple(answers),
                    refused=bool(made.refused[index]),
                    tested=bool(made.tested[index]),
                    labels=tuple(made.labels[index]) if made.labels else (),
                )
            )
        groups.append(PlainGroup(name=made.name, check=made.check, cases=tuple(cases)))
    return PlainCases(
        groups=tuple(groups),
        skipped={reason: count for reason, count in join.skipped.items() if count},
        duplicates=join.duplicates,
        torn_lines=join.torn_lines,
    )


def _plain(paths: list[Path], window: Window) -> PlainCases:
    """What the plain definition gives, on the same lines read the strict way."""
    reader = _Reader(fast=False)
    stream = (
        (reader.line(name, number, line), hash(line))
        for path in paths
        for name, number, line in _lines(path)
    )
    found = plain_cases(stream, window)
    # The join keeps no keys: compare everything else.
    from attrs import evolve

    return evolve(
        found,
        groups=tuple(
            evolve(group, cases=tuple(evolve(case, key="") for case in group.cases))
            for group in found.groups
        ),
    )


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trails())
def test_the_packed_join_gives_the_cases_the_plain_definition_gives(
    tmp_path: Path, trail: tuple[list[list[bytes]], Window]
) -> None:
    files, window = trail
    paths = _write(tmp_path, files)
    assert _joined(paths, window) == _plain(paths, window)


def test_the_referee_sees_what_the_join_gets_wrong(tmp_path: Path) -> None:
    # The comparison can fail: a join that counted a record read twice as two cases would be
    # told apart from the plain definition on this trail.
    check = CHECKS[0]
    submission = Submission({"report": 1})
    verdict = combine(
        check, [YesNoAnswer(0.95), ChoiceAnswer("a", 0.9)], model="m", at=TIMES[1], advisory=True
    )
    line = record_line(
        verdict_record(outcome_for(verdict), run_id="r", step_id="review", submission=submission)
    )[:-1]
    decision = record_line(
        decision_record(
            Completed(by="pat", at=TIMES[2]), run_id="r", step_id="review", submission=submission
        )
    )[:-1]
    paths = _write(tmp_path, [[line, decision, line]])
    window = Window.of(None, None)
    plain = _plain(paths, window)
    assert plain.duplicates == 1 and len(plain.groups) == 1 and len(plain.groups[0].cases) == 1
    assert _joined(paths, window) == plain
