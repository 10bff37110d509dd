"""checkprofile.testing.strategies: each strategy generates what it promises, near the limits.

Valid check keys always validate, and their full form is a fixed point; answers_for always
grades; malformed answers never grade, and a check never passes or fails on them; run data and
submissions are in core-2's shapes (checked here by an oracle written from the shapes page, and
by the library's own shape check where it has one); timestamps are RFC 3339. Coverage claims
("2 and 10 levels", "the smallest double") are shown by finding an example of each.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from typing import Any, TypeVar

import attrs
import jsonschema
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import checkprofile
from checkprofile import (
    AnswerError,
    Bundle,
    Check,
    ChoiceAnswer,
    Limits,
    Material,
    Reply,
    RubricAnswer,
    Submission,
    Verdict,
    YesNoAnswer,
    YesNoQuestion,
    answer_problem,
    build_bundle,
    canonical_json,
    check_schema,
    combine,
    grade,
    issue_lines,
    parse_check,
    run_check_sync,
    validate_check,
)
from checkprofile.testing import ScriptedEvaluator
from checkprofile.testing.strategies import (
    answers_for,
    check_keys,
    checks,
    limits,
    malformed_answers_for,
    materials,
    probabilities,
    run_data,
    submissions,
    texts,
    timestamps,
)
from support import AT

T = TypeVar("T")

#: Finding one example of a kind: the strategy must reach it well within this many tries.
REACH = 3000
#: Run data and materials cost more to make than the other values.
HEAVY = settings(max_examples=60)
#: Properties that run a whole check for each example.
RUNS = settings(max_examples=100)


class Reached(Exception):
    pass


def reaches(strategy: st.SearchStrategy[T], condition: Callable[[T], bool]) -> T:
    """An example of ``strategy`` for which ``condition`` holds, found within :data:`REACH`
    tries. Not shrunk: the claim is that the strategy gets there, not what the least such
    example is (shrinking run data costs minutes)."""

    @settings(
        max_examples=REACH,
        phases=[Phase.generate],
        database=None,
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @given(strategy)
    def search(value: T) -> None:
        if condition(value):
            raise Reached(value)

    try:
        search()
    except Reached as reached:
        found: T = reached.args[0]
        return found
    pytest.fail(f"{strategy!r} did not reach the example in {REACH} tries")


def draw_once(strategy: st.SearchStrategy[Any]) -> Any:
    """Draw one value (for a strategy that is expected to raise while drawing)."""
    return reaches(strategy, lambda _: True)


keys_with_limits = limits().flatmap(
    lambda chosen: st.tuples(check_keys(limits=chosen), st.just(chosen))
)

# --- check keys ------------------------------------------------------------------------------


@given(keys_with_limits)
def test_check_keys_are_valid_and_their_full_form_is_a_fixed_point(
    case: tuple[Any, Limits],
) -> None:
    raw, chosen = case
    snapshot = json.dumps(raw)
    assert validate_check(raw, limits=chosen) == ()
    assert jsonschema.Draft202012Validator(check_schema()).is_valid(raw)
    check = parse_check(raw, limits=chosen)
    full = check.to_json()
    assert parse_check(full, limits=chosen) == check
    assert parse_check(full, limits=chosen).to_json() == full
    assert parse_check(json.loads(json.dumps(full)), limits=chosen).to_json() == full
    assert json.dumps(raw) == snapshot  # the strategy hands out values nothing else holds


def _questions(raw: Any) -> list[dict[str, Any]]:
    return [] if isinstance(raw, str) else list(raw)


def _thresholds(raw: Any) -> list[Any]:
    return [q[k] for q in _questions(raw) for k in ("pass", "fail", "confidence") if k in q]


@pytest.mark.parametrize(
    ("what", "condition"),
    [
        pytest.param("the short form", lambda raw: isinstance(raw, str), id="short"),
        pytest.param(
            "a yes/no question with pass and fail",
            lambda raw: any(
                {"pass", "fail"} <= set(q) and "one_of" not in q and "levels" not in q
                for q in _questions(raw)
            ),
            id="yes-no",
        ),
        pytest.param(
            "a choice with unsure answers",
            lambda raw: any(q.get("unsure") for q in _questions(raw)),
            id="choice-unsure",
        ),
        pytest.param(
            "a rubric of 2 levels",
            lambda raw: any(len(q.get("levels", ())) == 2 for q in _questions(raw)),
            id="2-levels",
        ),
        pytest.param(
            "a rubric of 10 levels",
            lambda raw: any(len(q.get("levels", ())) == 10 for q in _questions(raw)),
            id="10-levels",
        ),
        pytest.param(
            "a rubric pass given as a float",
            lambda raw: any(
                type(q.get("pass")) is float and "levels" in q for q in _questions(raw)
            ),
            id="float-level",
        ),
        pytest.param(
            "a threshold of the smallest double",
            lambda raw: 5e-324 in _thresholds(raw),
            id="smallest-double",
        ),
        pytest.param(
            "a threshold of the largest double below 1",
            lambda raw: math.nextafter(1.0, 0.0) in _thresholds(raw),
            id="largest-below-1",
        ),
        pytest.param(
            "thresholds 0 and 1 as integers",
            lambda raw: {0, 1} <= {t for t in _thresholds(raw) if type(t) is int},
            id="integers",
        ),
        pytest.param(
            "an ask with whitespace that collapses",
            lambda raw: any(" ".join(q["ask"].split()) != q["ask"] for q in _questions(raw)),
            id="whitespace",
        ),
        pytest.param(
            "five questions",
            lambda raw: len(_questions(raw)) == 5,
            id="five",
        ),
    ],
)
def test_check_keys_reach_the_limits(what: str, condition: Callable[[Any], bool]) -> None:
    found = reaches(check_keys(), condition)
    assert validate_check(found) == (), what


@given(check_keys(kinds=["rubric", "choice"], short=False, max_questions=2))
def test_check_keys_keep_to_the_kinds_asked_for(raw: Any) -> None:
    assert isinstance(raw, list)
    assert 1 <= len(raw) <= 2
    assert all("levels" in q or "one_of" in q for q in raw)


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"kinds": []}, id="no-kinds"),
        pytest.param({"kinds": ["yes-no"]}, id="unknown-kind"),
        pytest.param({"max_questions": 0}, id="no-questions"),
    ],
)
def test_check_keys_refuse_options_that_make_nothing(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"kinds|max_questions"):
        draw_once(check_keys(**options))


def test_probabilities_refuse_a_range_outside_0_1() -> None:
    with pytest.raises(ValueError, match=r"0 <= low <= high <= 1, got 0\.5 and 0\.2"):
        probabilities(0.5, 0.2)


@given(probabilities(0.25, 0.75))
def test_probabilities_stay_in_their_range(p: float) -> None:
    assert 0.25 <= p <= 0.75


@given(texts())
def test_texts_are_never_blank(text: str) -> None:
    assert validate_check(text) == ()


@given(checks(limits=Limits(check_pass=0.8, check_fail=0.3)))
def test_checks_are_what_their_keys_parse_to(check: Check) -> None:
    assert isinstance(check, Check)
    assert parse_check(check.to_json()) == check


# --- answers ---------------------------------------------------------------------------------


class Replying:
    """Gives the same entry for a question on every attempt, whatever the entry is."""

    model = "replying-1"

    def __init__(self, check: Check, entries: Sequence[object]) -> None:
        self.by_ask = dict(zip(check.asks, entries, strict=True))
        self.calls = 0

    async def answer(self, bundle: Bundle) -> Reply:
        self.calls += 1
        return Reply("replying-2026-10-01", [self.by_ask[ask] for ask in bundle.check.asks])  # type: ignore[misc]


@RUNS
@given(checks(), st.data())
def test_answers_for_always_grade(check: Check, data: st.DataObject) -> None:
    answers = data.draw(answers_for(check))
    assert len(answers) == len(check)
    for question, answer in zip(check, answers, strict=True):
        assert answer_problem(question, answer) is None
        assert grade(question, answer) in ("pass", "fail", "unsure")
        assert data.draw(answers_for(question)) is not None
    verdict = combine(check, answers, model="m-1", at=AT)
    assert verdict.verdict in ("pass", "fail", "unsure")
    assert len(issue_lines(verdict)) == sum(q.result != "pass" for q in verdict.questions)
    scripted = ScriptedEvaluator(dict(zip(check.asks, answers, strict=True)))
    outcome = run_check_sync(check, _material(), scripted, limits=Limits(), now=AT)
    assert outcome.verdict.questions == verdict.questions
    assert outcome.attempts == 1


YES_NO = parse_check([{"ask": "Done?", "pass": 0.9, "fail": 0.5}])
CHOICE = parse_check(
    [
        {
            "ask": "Tone?",
            "one_of": {"calm": "C.", "odd": "O.", "angry": "A."},
            "pass": ["calm"],
            "unsure": ["odd"],
        }
    ]
)
RUBRIC = parse_check([{"ask": "How good?", "levels": ["Bad.", "Fair.", "Good."], "pass": 1}])


@pytest.mark.parametrize("check", [YES_NO, CHOICE, RUBRIC], ids=["yes-no", "choice", "rubric"])
@pytest.mark.parametrize("result", ["pass", "fail", "unsure"])
def test_answers_for_reach_every_result(check: Check, result: str) -> None:
    question = check[0]
    reaches(answers_for(question), lambda answer: grade(question, answer) == result)


def test_answers_for_sit_on_the_thresholds() -> None:
    question = YES_NO[0]
    assert isinstance(question, YesNoQuestion)
    below = math.nextafter(0.9, 0.0)
    reaches(answers_for(question), lambda a: isinstance(a, YesNoAnswer) and a.p == 0.9)
    reaches(answers_for(question), lambda a: isinstance(a, YesNoAnswer) and a.p == below)
    reaches(
        answers_for(CHOICE[0]),
        lambda a: isinstance(a, ChoiceAnswer) and a.confidence == math.nextafter(0.8, 0.0),
    )
    reaches(
        answers_for(RUBRIC[0]),
        lambda a: isinstance(a, RubricAnswer) and a.distribution is not None and a.level == 0,
    )


@RUNS
@given(checks(), st.data())
def test_malformed_answers_never_grade(check: Check, data: st.DataObject) -> None:
    for question in check:
        bad = data.draw(malformed_answers_for(question))
        assert answer_problem(question, bad) is not None, bad
        with pytest.raises(AnswerError):
            grade(question, bad)  # type: ignore[arg-type]


@RUNS
@given(checks(), st.data())
def test_a_check_never_passes_or_fails_on_malformed_answers(
    check: Check, data: st.DataObject
) -> None:
    entries = data.draw(malformed_answers_for(check))
    assert len(entries) == len(check)
    fitting = [answer_problem(q, e) is None for q, e in zip(check, entries, strict=True)]
    assert not all(fitting)
    evaluator = Replying(check, entries)
    outcome = run_check_sync(
        check, _material(), evaluator, limits=Limits(), now=AT, max_retry_wait=0
    )
    assert outcome.verdict.verdict == "error"
    assert outcome.action == "retry"
    assert evaluator.calls == 2
    assert {ask for ask, _ in outcome.failures} == {
        q.ask for q, ok in zip(check, fitting, strict=True) if not ok
    }


def field(answer: object, name: str) -> object:
    """An answer's field as it is, whatever its declared type (a malformed one may be text)."""
    return getattr(answer, name)


def _nan(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


@pytest.mark.parametrize(
    ("check", "condition"),
    [
        pytest.param(YES_NO, lambda a: a is None, id="missing"),
        pytest.param(YES_NO, lambda a: isinstance(a, ChoiceAnswer), id="wrong-kind"),
        pytest.param(YES_NO, lambda a: isinstance(a, dict), id="not-an-answer"),
        pytest.param(YES_NO, lambda a: isinstance(a, YesNoAnswer) and _nan(a.p), id="nan"),
        pytest.param(YES_NO, lambda a: isinstance(a, YesNoAnswer) and a.p == math.inf, id="inf"),
        pytest.param(YES_NO, lambda a: isinstance(a, YesNoAnswer) and a.p is True, id="bool"),
        pytest.param(YES_NO, lambda a: isinstance(a, YesNoAnswer) and a.p == -5e-324, id="below-0"),
        pytest.param(
            YES_NO,
            lambda a: isinstance(a, YesNoAnswer) and a.p == math.nextafter(1.0, 2.0),
            id="above-1",
        ),
        pytest.param(
            YES_NO, lambda a: isinstance(a, YesNoAnswer) and field(a, "p") == "0.9", id="text"
        ),
        pytest.param(
            CHOICE, lambda a: isinstance(a, ChoiceAnswer) and a.name == " calm", id="near-name"
        ),
        pytest.param(
            CHOICE, lambda a: isinstance(a, ChoiceAnswer) and a.name is None, id="no-name"
        ),
        pytest.param(
            CHOICE,
            lambda a: isinstance(a, ChoiceAnswer) and _nan(a.confidence),
            id="nan-confidence",
        ),
        pytest.param(
            CHOICE,
            lambda a: (
                isinstance(a, ChoiceAnswer)
                and a.distribution is not None
                and len(a.distribution) == 4
            ),
            id="option-twice",
        ),
        pytest.param(
            RUBRIC, lambda a: isinstance(a, RubricAnswer) and a.level == 3, id="level-past-end"
        ),
        pytest.param(
            RUBRIC, lambda a: isinstance(a, RubricAnswer) and a.level == -1, id="level-below-0"
        ),
        pytest.param(
            RUBRIC, lambda a: isinstance(a, RubricAnswer) and a.level == 0.5, id="fractional"
        ),
        pytest.param(
            RUBRIC, lambda a: isinstance(a, RubricAnswer) and a.level is False, id="bool-level"
        ),
        pytest.param(
            RUBRIC,
            lambda a: isinstance(a, RubricAnswer) and field(a, "level") == "1",
            id="text-level",
        ),
        pytest.param(
            RUBRIC,
            lambda a: (
                isinstance(a, RubricAnswer)
                and isinstance(a.distribution, tuple)
                and len(a.distribution) == 3
                # A "range" fault may put text or None where a probability goes.
                and all(type(p) in (int, float) for _, p in a.distribution)
                and sum(p for _, p in a.distribution) == pytest.approx(0.5)
            ),
            id="distribution-sum",
        ),
    ],
)
def test_malformed_answers_cover_every_fault(
    check: Check, condition: Callable[[Any], bool]
) -> None:
    found = reaches(malformed_answers_for(check[0]), condition)
    assert answer_problem(check[0], found) is not None


# --- run data, timestamps, submissions ---------------------------------------------------------

# RFC 3339 section 5.6, as the shapes page requires of `at` in this library's reading.
RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})\Z", re.ASCII
)


def instant(stamp: str) -> Fraction:
    """Seconds since 1970 of an RFC 3339 timestamp, exactly (fractions of any length)."""
    match = RFC3339.match(stamp)
    assert match is not None, stamp
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    moment = datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc)
    zone = match.group(8)
    if zone != "Z":
        offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        moment -= offset if zone[0] == "+" else -offset
    digits = (match.group(7) or ".")[1:]
    fraction = Fraction(int(digits), 10 ** len(digits)) if digits else Fraction(0)
    return int(moment.timestamp()) + fraction


STEP_KEYS = {
    "output",
    "evidence",
    "summary",
    "next",
    "reason",
    "decision",
    "note",
    "check",
    "by",
    "at",
}


def core2_record_problems(record: object, where: str, *, history: bool) -> list[str]:
    """The shapes page's step record, stated independently of the library."""
    if not isinstance(record, dict):
        return [f"{where}: not a map"]
    allowed = STEP_KEYS | ({"history"} if history else set())
    problems = [f"{where}.{key}: unknown key" for key in record if key not in allowed]
    if history and not isinstance(record.get("history"), list):
        problems.append(f"{where}.history: required list")
    for key in ("summary", "next", "reason", "note", "by", "at"):
        if key in record and not isinstance(record[key], str):
            problems.append(f"{where}.{key}: not a string")
    if "output" in record and not isinstance(record["output"], dict):
        problems.append(f"{where}.output: not a map")
    if "decision" in record and record["decision"] not in ("approved", "rejected", "failed"):
        problems.append(f"{where}.decision: {record['decision']!r}")
    for item in record.get("evidence", []):
        if (
            not isinstance(item, dict)
            or item.get("kind") not in ("file", "link")
            or not isinstance(item.get("ref"), str)
            or not item["ref"]
            or not set(item) <= {"kind", "ref", "sha256", "url"}
            or not all(isinstance(item.get(k, ""), str) for k in ("sha256", "url"))
        ):
            problems.append(f"{where}.evidence: {item!r}")
    if "check" in record:
        try:
            Verdict.from_json(record["check"])
        except checkprofile.VerdictError as error:
            problems.append(f"{where}.check: {error}")
    for index, entry in enumerate(record.get("history", []) if history else []):
        problems += core2_record_problems(entry, f"{where}.history[{index}]", history=False)
    return problems


def core2_run_data_problems(data: object) -> list[str]:
    if not isinstance(data, dict) or set(data) != {"inputs", "steps"}:
        return ["run data is {inputs, steps} and nothing else"]
    if not isinstance(data["inputs"], dict) or not isinstance(data["steps"], dict):
        return ["inputs and steps are maps"]
    problems = []
    for step_id, record in data["steps"].items():
        problems += core2_record_problems(record, f"steps.{step_id}", history=True)
    return problems


#: The library's own shape check, where this version has one (core-2's run data and
#: submissions, added beside this module's issue).
LIBRARY_RUN_DATA_PROBLEMS = getattr(checkprofile, "run_data_problems", None)
LIBRARY_SUBMISSION_PROBLEMS = getattr(checkprofile, "submission_problems", None)


def _stamps(data: dict[str, Any]) -> list[str]:
    stamps = []
    for record in data["steps"].values():
        for entry in [record, *record["history"]]:
            if "at" in entry:
                stamps.append(entry["at"])
    return stamps


@HEAVY
@given(run_data())
def test_run_data_is_core_2_run_data(data: dict[str, Any]) -> None:
    assert core2_run_data_problems(data) == []
    if LIBRARY_RUN_DATA_PROBLEMS is not None:
        assert LIBRARY_RUN_DATA_PROBLEMS(data) == ()
    for stamp in _stamps(data):
        instant(stamp)
    text = canonical_json(data)
    text.encode("utf-8")  # the text an evaluator is shown is valid UTF-8
    material = Material("Check.", "# Body\n", data, Submission({"x": 1}))
    bundle = build_bundle(parse_check("Done?"), material, state_bytes=65536)
    assert bundle.run_data_bytes <= 65536


def test_run_data_reaches_histories_verdicts_and_hostile_text() -> None:
    def records(data: dict[str, Any]) -> list[dict[str, Any]]:
        return [e for r in data["steps"].values() for e in [r, *r["history"]]]

    reaches(run_data(), lambda d: any(len(r["history"]) >= 2 for r in d["steps"].values()))
    reaches(run_data(), lambda d: any("check" in e for e in records(d)))
    reaches(
        run_data(), lambda d: any("url" in i for e in records(d) for i in e.get("evidence", []))
    )
    reaches(run_data(), lambda d: "\ud800" in json.dumps(d["inputs"], ensure_ascii=False))
    found = reaches(run_data(verdicts=False, max_steps=3), lambda d: len(d["steps"]) == 3)
    assert all("check" not in e for e in records(found))


@given(timestamps())
def test_timestamps_are_rfc_3339(stamp: str) -> None:
    instant(stamp)


@given(timestamps(offsets=False, fractions=False))
def test_timestamps_without_offsets_or_fractions_are_plain_utc(stamp: str) -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp), stamp


@pytest.mark.parametrize(
    "condition",
    [
        pytest.param(lambda s: s.endswith("-00:00"), id="minus-zero"),
        pytest.param(lambda s: s.endswith(("+23:59", "-23:59")), id="far-offset"),
        pytest.param(lambda s: re.search(r"\.\d{9}", s) is not None, id="nanoseconds"),
        pytest.param(lambda s: re.search(r"\.\d[Z+-]", s) is not None, id="tenths"),
        pytest.param(lambda s: s.endswith("Z") and "." not in s, id="plain"),
    ],
)
def test_timestamps_reach_offsets_and_fractions(condition: Callable[[str], bool]) -> None:
    reaches(timestamps(), condition)


def test_timestamps_with_offsets_order_as_instants() -> None:
    # The same instant at two offsets is equal; the strategy's offsets are real offsets.
    assert instant("2026-10-06T10:04:20+01:00") == instant("2026-10-06T09:04:20Z")
    assert instant("2026-10-06T09:04:20-00:00") == instant("2026-10-06T09:04:20Z")
    assert instant("2026-10-06T09:04:20.5Z") - instant("2026-10-06T09:04:20Z") == Fraction(1, 2)


def core2_submission_problems(submission: Submission, *, agent: bool) -> list[str]:
    data = submission.to_json()
    problems = []
    if not isinstance(data["output"], dict):
        problems.append("output is not a map")
    for item in data["evidence"]:
        if item["kind"] not in ("file", "link") or not item["ref"]:
            problems.append(f"evidence {item!r}")
    summary = data.get("summary")
    if summary is not None and not isinstance(summary, str):
        problems.append("summary is not a string")
    if agent and (summary is None or not 1 <= len(summary) <= 2000):
        problems.append("an agent's summary is 1 to 2000 characters")
    return problems


@HEAVY
@given(st.booleans().flatmap(lambda agent: st.tuples(st.just(agent), submissions(agent=agent))))
def test_submissions_are_core_2_submissions(case: tuple[bool, Submission]) -> None:
    agent, submission = case
    assert core2_submission_problems(submission, agent=agent) == []
    if LIBRARY_SUBMISSION_PROBLEMS is not None:
        assert (
            LIBRARY_SUBMISSION_PROBLEMS(
                json.loads(canonical_json(submission.to_json())), agent=agent
            )
            == ()
        )
    bundle = build_bundle(
        parse_check("Done?"),
        Material("i", "b", {"inputs": {}, "steps": {}}, submission),
        state_bytes=100,
    )
    bundle.submission_json.encode("utf-8")


HAS_ROUTE = "next" in attrs.fields_dict(Submission)


def test_routed_submissions_carry_a_route_where_submission_has_one() -> None:
    if not HAS_ROUTE:
        with pytest.raises(TypeError, match="has no route"):
            draw_once(submissions(routed=True))
        return
    found = reaches(submissions(routed=True), lambda s: len(attrs.asdict(s)["reason"]) == 4000)
    assert attrs.asdict(found)["next"]


@HEAVY
@given(checks(max_questions=2), materials(), st.integers(2, 4000))
def test_materials_always_make_a_bundle_within_budget(
    check: Check, material: Material, budget: int
) -> None:
    bundle = build_bundle(check, material, state_bytes=budget)
    assert bundle.run_data_bytes <= budget


# --- the module itself ---------------------------------------------------------------------------


def test_without_hypothesis_the_strategies_say_what_to_install() -> None:
    # Everything else in checkprofile.testing works without Hypothesis.
    script = textwrap.dedent(
        """
        import importlib.abc, sys

        class NoHypothesis(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "hypothesis" or name.startswith("hypothesis."):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)

        sys.meta_path.insert(0, NoHypothesis())
        import checkprofile.testing
        import checkprofile.testing.cassette
        try:
            import checkprofile.testing.strategies
        except ImportError as error:
            print(error)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "checkprofile.testing.strategies needs Hypothesis, which is not installed:"
        " pip install hypothesis\n"
    )


def _material() -> Material:
    return Material(
        "Check the vendor.",
        "# Vendor\n",
        {"inputs": {}, "steps": {}},
        Submission({"cleared": True}),
    )
