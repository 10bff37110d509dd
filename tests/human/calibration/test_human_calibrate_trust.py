"""Calibration that can be trusted: the intervals, the calibration figures (ECE, Brier, the
reliability table) against hand-computed sets, the check row's "met", the whole check's
recommendation and its promise held out of sample, people's labels, and drift between two
windows on the command line."""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import random
import re
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from checkprofile import (
    ChoiceAnswer,
    ChoiceQuestion,
    RubricAnswer,
    YesNoAnswer,
    YesNoQuestion,
    grade,
    parse_check,
)
from checkprofile._verdict import Result, worst_of
from checkprofile.cli import main
from checkprofile.human import AuditError, Completed, Figure, Returned
from checkprofile.human._calibration import _grid, _recommend
from checkprofile.human._calibration._calibrate import (
    Case,
    CheckCases,
    Person,
    calibrate,
    calibrate_cases,
)
from checkprofile.human._calibration._columns import Names, column_of
from checkprofile.human._calibration._figures import wilson
from checkprofile.human._calibration._labels import read_labels
from checkprofile.human._calibration._recommend import binomial_cdf, upper_bound
from checkprofile.human._calibration._report import (
    calibration_html,
    calibration_text,
    recommendation_text,
)

ROOT = Path(__file__).resolve().parents[3]
Z2 = 1.959963984540054**2


def one_check(check_text: Any, rows: list[tuple[Any, ...]], **options: Any) -> Any:
    check = parse_check(check_text)
    cases = tuple(
        Case(key=f"k{i}", answers=answers, person=person)
        for i, (answers, person) in enumerate(rows)
    )
    report = calibrate_cases([CheckCases(name="s", check=check, cases=cases)], **options)
    return report.checks[0]


# --- intervals --------------------------------------------------------------------------------


def test_wilson_intervals_are_the_textbook_ones() -> None:
    # statsmodels.stats.proportion.proportion_confint(6, 7, method="wilson").
    bounds: Any = wilson(6, 7)
    assert bounds == (pytest.approx(0.486872, abs=1e-6), pytest.approx(0.974320, abs=1e-6))
    # At n of n the interval starts at n / (n + z**2) and ends at 1; at none, mirrored.
    bounds = wilson(5, 5)
    assert bounds == (pytest.approx(5 / (5 + Z2)), 1.0)
    bounds = wilson(0, 5)
    assert bounds == (0.0, pytest.approx(Z2 / (5 + Z2)))
    assert wilson(0, 0) is None


@pytest.mark.parametrize("n", [10, 13, 7, 9, 1000])
def test_an_interval_of_all_or_none_ends_exactly_at_1_or_starts_exactly_at_0(n: int) -> None:
    # The textbook formula rounds to 0.9999999999999999 at 10 of 10, 13 of 13, ..., and to
    # a hair above 0 at 0 of 7, 0 of 9: a share of 100% must be shown as reaching 1.
    all_of, none_of = wilson(n, n), wilson(0, n)
    assert all_of is not None and none_of is not None
    assert (all_of[1], none_of[0]) == (1.0, 0.0)
    # One short of all (or one above none) is not held at the edge.
    one_short, one_above = wilson(n - 1, n), wilson(1, n)
    assert one_short is not None and one_above is not None
    assert one_short[1] < 1.0 and one_above[0] > 0.0


@pytest.mark.parametrize(
    ("low", "high", "too_few", "least", "most"),
    [
        (0.96, 0.99, False, True, False),  # reaches 0.95, not within 0.05
        (0.90, 0.99, False, False, False),
        (0.01, 0.04, False, False, True),  # within 0.05, not reaching 0.95
        (0.01, 0.06, False, False, False),
        (0.95, 0.05, False, True, True),  # at the bounds themselves: both hold
        (0.96, 0.04, True, False, False),  # too few cases: neither, whatever the bounds
        (None, None, False, False, False),  # a figure with no interval
    ],
)
def test_a_share_is_at_least_or_at_most_a_rate_only_by_its_interval_on_enough_cases(
    low: float | None, high: float | None, too_few: bool, least: bool, most: bool
) -> None:
    figure = Figure(value=0.5, cases=40, too_few=too_few, low=low, high=high)
    assert (figure.at_least(0.95), figure.at_most(0.05)) == (least, most)


def test_binomial_tails_and_clopper_pearson_bounds() -> None:
    for n, k, rate in ((20, 3, 0.1), (200, 9, 0.05), (1000, 480, 0.5)):
        direct = math.fsum(math.comb(n, i) * rate**i * (1 - rate) ** (n - i) for i in range(k + 1))
        assert binomial_cdf(k, n, rate) == pytest.approx(direct, rel=1e-9)
    # None seen in n: the one-sided bound at 90% solves (1 - u)**n = 0.1.
    assert upper_bound(0, 50, 0.9) == pytest.approx(1 - 0.1 ** (1 / 50), rel=1e-9)
    assert upper_bound(5, 5, 0.9) == 1.0
    # The exact bound is wider than the Wilson one at the same one-sided level.
    assert upper_bound(3, 100, 0.975) > wilson(3, 100)[1]  # type: ignore[index]


def test_every_share_has_its_interval_in_text_json_and_html(tmp_path: Path) -> None:
    rows: list[tuple[Any, Person]] = [((YesNoAnswer(0.95),), "accepted")] * 40
    rows += [((YesNoAnswer(0.95),), "refused")] * 2
    rows += [((YesNoAnswer(0.5),), "refused")] * 8
    check = one_check("Fine?", rows, min_cases=30)
    figures = check.at_current
    for figure in (figures.agreement, figures.to_person_share, figures.wrong_pass):
        assert figure.low is not None and figure.high is not None
        assert figure.value is not None and figure.low <= figure.value <= figure.high
    assert (figures.wrong_pass.value, figures.wrong_pass.cases) == (2 / 50, 50)
    data = check.to_json()["at_current"]
    assert data["wrong_pass"]["low"] == pytest.approx(wilson(2, 50)[0])  # type: ignore[index]
    report = calibrate_cases(
        [CheckCases(name="s", check=parse_check("Fine?"), cases=tuple(
            Case(key=f"k{i}", answers=a, person=p) for i, (a, p) in enumerate(rows)))]
    )  # fmt: skip
    text = calibration_text(report)
    assert "0.960 (0.865-0.989) n=50" in text  # 48 of 50 agree (0.5 fails)
    assert "2/50 4.0% (1.1-13.5%)" in text  # the wrong passes
    page = calibration_html(report)
    assert "(0.865-0.989) n=50" in page and "(1.1-13.5%)" in page


# --- "met" needs the interval, and enough cases, the check row too ---------------------------


def test_the_check_row_is_not_met_below_the_minimum_of_cases() -> None:
    # Ten cases, every one agreed: 1.0 agreement, but on 10 < 30 decided cases.
    rows: list[tuple[Any, Person]] = [((YesNoAnswer(0.99),), "accepted")] * 5
    rows += [((YesNoAnswer(0.01),), "refused")] * 5
    check = one_check("Fine?", rows, target=0.9)
    assert check.at_suggested.agreement.value == 1.0 and check.at_suggested.agreement.too_few
    assert not check.met and not check.questions[0].meets_target
    report_text = calibration_text(
        calibrate_cases(
            [CheckCases(name="s", check=parse_check("Fine?"), cases=tuple(
                Case(key=f"k{i}", answers=a, person=p) for i, (a, p) in enumerate(rows)))],
            target=0.9,
        )
    )  # fmt: skip
    check_row = next(line for line in report_text.splitlines() if "each question's" in line)
    assert check_row.rstrip().endswith("not met")
    assert check.to_json()["met"] is False


def test_met_needs_the_interval_to_reach_the_target() -> None:
    # 95 of 100 agree: 0.95 reaches a 0.9 target, and its interval (0.888-0.978) does not.
    rows: list[tuple[Any, Person]] = [((YesNoAnswer(0.99),), "accepted")] * 95
    rows += [((YesNoAnswer(0.99),), "refused")] * 5
    check = one_check("Fine?", rows, target=0.9)
    assert check.at_current.agreement.value == 0.95
    assert not check.met and not check.questions[0].meets_target
    # 200 of 200: the Wilson interval starts at 200 / (200 + z**2) = 0.981, above 0.95; but
    # the suggestion is the best of the 5,151 thresholds searched, so met needs the chance
    # of 200 of 200 at an agreement of 0.95, 0.95**200 = 3.5e-5, to be at most 0.05 / 5151
    # = 9.7e-6 (Bonferroni over the search): not met. 300 of 300: 0.95**300 = 2.1e-7, met.
    rows = [((YesNoAnswer(0.99),), "accepted")] * 200
    check = one_check("Fine?", rows, target=0.95)
    assert check.at_suggested.agreement.low is not None
    assert check.at_suggested.agreement.low > 0.95
    assert not check.met and not check.questions[0].meets_target
    rows = [((YesNoAnswer(0.99),), "accepted")] * 300
    check = one_check("Fine?", rows, target=0.95)
    assert check.met and check.questions[0].meets_target and check.to_json()["met"] is True
    # The bound so corrected: 0.05 / 5151 = b**300, b the low end of the agreement.
    assert check.questions[0].agreement_bound == pytest.approx((0.05 / 5151) ** (1 / 300))


def test_a_suggested_row_shows_the_bound_met_is_judged_by_not_a_blind_interval() -> None:
    # 200 of 200 agree: the Wilson interval would start at 0.981, above a 0.95 target, though
    # the suggestion was the best of 5,151 thresholds and is not met. The suggested rows show
    # the corrected low end, 0.05 / 5151 = b**200, and no interval of the same data.
    rows: list[tuple[Any, Person]] = [((YesNoAnswer(0.99),), "accepted")] * 200
    check = parse_check("Fine?")
    cases = tuple(Case(key=f"k{i}", answers=a, person=p) for i, (a, p) in enumerate(rows))
    report = calibrate_cases([CheckCases(name="s", check=check, cases=cases)], target=0.95)
    bound = (0.05 / 5151) ** (1 / 200)
    assert report.checks[0].questions[0].agreement_bound == pytest.approx(bound)
    shown = f"(>={bound:.3f}) n=200"
    text = calibration_text(report)
    suggested = [line for line in text.splitlines() if "suggested" in line and "n=" in line]
    assert len(suggested) == 2  # the check's row and the question's
    for line in suggested:
        assert shown in line and "(0.981-" not in line
        assert not re.search(r"\(\d+\.\d-\d+\.\d%\)", line)  # no share's interval either
        assert line.rstrip().endswith("not met")
    current = next(line for line in text.splitlines() if "as now" in line)
    assert "(0.981-1.000) n=200" in current  # no search chose the thresholds in force
    page = calibration_html(report)
    rows_shown = [row for row in re.findall("<tr>.*?</tr>", page) if ">suggested<" in row]
    assert len(rows_shown) == 2
    for row in rows_shown:
        assert shown.replace(">", "&gt;") in row and "(0.981-" not in row
        assert not re.search(r"\(\d+\.\d-\d+\.\d%\)", row)  # no share's interval either
    assert "corrected for the search" in text


# --- calibration figures against hand-computed sets --------------------------------------------


def test_ece_brier_and_the_reliability_table_of_a_yes_no_question() -> None:
    # p and the person: bins (0.9, 1]: 0.95 x3, 2 accepted (gap |2/3 - 0.95|); (0.8, 0.9]:
    # 0.85 accepted (0.15); (0.2, 0.3]: 0.3 at the edge, refused (0.3); (0.1, 0.2]: 0.15 x2,
    # one accepted (0.35); (0, 0.1]: 0.05 refused (0.05). ECE = (3 * 0.28333 + 0.15 + 0.3
    # + 2 * 0.35 + 0.05) / 8 = 2.05 / 8. Brier = (2 * 0.0025 + 0.9025 + 0.0225 + 0.09
    # + 0.0225 + 0.7225 + 0.0025) / 8 = 1.7675 / 8.
    cases: list[tuple[float, Person]] = [
        (0.95, "accepted"), (0.95, "accepted"), (0.95, "refused"), (0.85, "accepted"),
        (0.3, "refused"), (0.15, "refused"), (0.15, "accepted"), (0.05, "refused"),
    ]  # fmt: skip
    check = one_check("Fine?", [((YesNoAnswer(p),), who) for p, who in cases], min_cases=1)
    (table,) = check.questions[0].reliability
    assert (table.against, table.stated, table.cases) == ("decision", "p", 8)
    assert table.ece == pytest.approx(2.05 / 8)
    assert table.brier == pytest.approx(1.7675 / 8)
    # The table as scikit-learn's calibration_curve(strategy="uniform", n_bins=10) gives it.
    filled = [(b.low, b.cases, b.mean_stated, b.observed.value) for b in table.bins if b.cases]
    assert filled == [
        (0.0, 1, pytest.approx(0.05), 0.0),
        (0.1, 2, pytest.approx(0.15), 0.5),
        (0.2, 1, pytest.approx(0.3), 0.0),
        (0.8, 1, pytest.approx(0.85), 1.0),
        (0.9, 3, pytest.approx(0.95), pytest.approx(2 / 3)),
    ]


def test_values_on_bin_edges_fall_in_the_bin_they_open_as_netcal_bins_them() -> None:
    # Bins closed on the left, [a, b), the last [0.9, 1]: netcal's ECE(bins=10) (numpy's
    # histogram over linspace(0, 1, 11)). A value is compared with the edge exactly: 0.1,
    # 0.2, 0.5 and 0.9 are stored at or above their tenth and open their bin; 0.3 and 0.7 are
    # stored just below theirs (0.2999..., 0.6999...) and stay in the bin below, as in netcal,
    # whose edges there are 0.30000000000000004 and 0.7000000000000001. By hand: [0, 0.1):
    # 0.0 no (gap 0); [0.1, 0.2): 0.1 yes (0.9); [0.2, 0.3): 0.2 no, 0.3 yes (2 * |0.5 -
    # 0.25|); [0.5, 0.6): 0.5 yes (0.5); [0.6, 0.7): 0.7 no (0.7); [0.9, 1]: 0.9, 1.0 yes
    # (2 * 0.05). ECE = 2.7 / 8. (netcal 1.4.0 gives 0.3375 on these eight values; closed on
    # the right, as before, it was 3.1 / 8.)
    cases: list[tuple[float, Person]] = [
        (0.0, "refused"), (0.1, "accepted"), (0.2, "refused"), (0.3, "accepted"),
        (0.5, "accepted"), (0.7, "refused"), (0.9, "accepted"), (1.0, "accepted"),
    ]  # fmt: skip
    check = one_check("Fine?", [((YesNoAnswer(p),), who) for p, who in cases], min_cases=1)
    (table,) = check.questions[0].reliability
    assert table.ece == pytest.approx(2.7 / 8, abs=1e-12)
    filled = [(b.span, b.cases) for b in table.bins if b.cases]
    assert filled == [
        ("[0, 0.1)", 1), ("[0.1, 0.2)", 1), ("[0.2, 0.3)", 2), ("[0.5, 0.6)", 1),
        ("[0.6, 0.7)", 1), ("[0.9, 1]", 2),
    ]  # fmt: skip


@pytest.mark.parametrize(("min_cases", "too_few"), [(7, False), (8, False), (9, True)])
def test_a_reliability_table_is_too_few_only_below_min_cases(min_cases: int, too_few: bool) -> None:
    # Eight cases: trusted at a minimum of 7 or 8, too few at 9; each bin on its own count.
    ps = [0.95, 0.95, 0.95, 0.85, 0.3, 0.15, 0.15, 0.05]
    cases = [((YesNoAnswer(p),), "accepted" if i % 2 else "refused") for i, p in enumerate(ps)]
    check = one_check("Fine?", cases, min_cases=min_cases)
    (table,) = check.questions[0].reliability
    assert (table.cases, table.too_few) == (8, too_few)
    assert [b.observed.too_few for b in table.bins if b.cases] == [True] * 5


def test_a_choice_question_is_calibrated_on_being_right() -> None:
    # "states" passes. Right: states/accepted, hedges/refused. Bins (0.8, 0.9]: 0.9 right and
    # 0.9 wrong (gap 0.4); (0.5, 0.6]: 0.6 right, 0.6 wrong (0.1); (0.6, 0.7]: 0.65 right
    # (0.35). ECE = (2 * 0.4 + 2 * 0.1 + 0.35) / 5 = 0.27. Brier = (0.01 + 0.81 + 0.16 + 0.36
    # + 0.1225) / 5 = 0.2925.
    check = one_check(
        [
            {
                "ask": "Does it state?",
                "one_of": {"states": "It states.", "hedges": "It hedges."},
                "pass": ["states"],
            }
        ],
        [
            ((ChoiceAnswer("states", 0.9),), "accepted"),
            ((ChoiceAnswer("states", 0.9),), "refused"),
            ((ChoiceAnswer("hedges", 0.6),), "refused"),
            ((ChoiceAnswer("hedges", 0.6),), "accepted"),
            ((ChoiceAnswer("hedges", 0.65),), "refused"),
        ],
        min_cases=1,
    )
    (table,) = check.questions[0].reliability
    assert (table.stated, table.cases) == ("confidence", 5)
    assert table.ece == pytest.approx(0.27)
    assert table.brier == pytest.approx(0.2925)


# --- the whole check's recommendation -----------------------------------------------------------


def bench_recommend() -> Any:
    spec = importlib.util.spec_from_file_location(
        "bench_recommend", ROOT / "benchmarks" / "bench_recommend.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_recommend"] = module
    spec.loader.exec_module(module)
    return module


def test_the_recommendation_keeps_its_promise_out_of_sample_and_costs_less_than_gates() -> None:
    # Done-when of the issue: a month of 5,000 submissions of a check of three kinds (an
    # overconfident yes/no, a choice, an underconfident rubric), noisy people; fit on one half,
    # score on the other, in repeated trials.
    bench = bench_recommend()
    trials, within, ours, theirs = 6, 0, 0.0, 0.0
    for trial in range(trials):
        rows = bench.data_set(trial, 5000)
        fit, held = rows[:2500], rows[2500:]
        cases = tuple(
            Case(key=key, answers=answers, person="accepted" if ok else "refused")
            for key, answers, ok, _ in fit
        )
        report = calibrate_cases(
            [CheckCases(name="e", check=bench.CHECK, cases=cases)],
            max_wrong_pass=0.05,
            max_wrong_fail=0.10,
            confidence=0.9,
        )
        recommended = report.checks[0].recommended
        assert recommended.promised
        assert recommended.wrong_pass_bound <= 0.05 and recommended.wrong_fail_bound <= 0.10
        mine = bench.score(bench.apply(bench.CHECK, recommended.thresholds), held)
        gated = bench.score(bench.apply(bench.CHECK, bench.gates(fit, 0.9)), held)
        within += mine["wrong_pass"] <= 0.05
        ours += mine["to_person"] / trials
        theirs += gated["to_person"] / trials
    assert within / trials >= 0.9
    assert ours <= theirs


TWO = parse_check(
    [
        {"ask": "Is every amount right?", "pass": 0.9},
        {
            "ask": "Does it state the purpose?",
            "one_of": {"states": "It states it.", "hedges": "It hedges."},
            "pass": ["states"],
            "confidence": 0.8,
        },
    ]
)


def two_question_month(seed: int, n: int) -> list[Case]:
    """A month of a check of a yes/no question and a choice: the person accepts when both
    aspects are fine, each with the chance the model states (the choice's when it says
    ``states``, one less it otherwise)."""
    rng = random.Random(seed)
    found = []
    for i in range(n):
        p = round(rng.betavariate(4, 1.5), 3)
        states = rng.random() < 0.7
        confidence = round(rng.uniform(0.5, 1.0), 3)
        fine = confidence if states else 1 - confidence
        ok = rng.random() < p * fine
        answers = (YesNoAnswer(p), ChoiceAnswer("states" if states else "hedges", confidence))
        found.append(
            Case(key=f"m{seed}-{i}", answers=answers, person="accepted" if ok else "refused")
        )
    return found


def holm_over_the_grid(cases: list[Case], level: float) -> tuple[int, float] | None:
    """Learn-then-Test with Holm over the product grid of 0.05 of ``TWO``, written plainly
    (every case graded by the core for every combination): the fewest cases sent to a person
    by a rejected combination, and the smallest p-value; None when nothing is rejected."""
    yes_no, choice = TWO
    assert isinstance(yes_no, YesNoQuestion) and isinstance(choice, ChoiceQuestion)
    settings_one = [(p, f) for p in range(100, -1, -5) for f in range(0, p + 1, 5)]
    results_one = []
    for p, f in settings_one:
        question = attrs.evolve(yes_no, pass_at=p / 100, fail_below=None if f == p else f / 100)
        results_one.append([grade(question, case.answers[0]) for case in cases])
    results_two = []
    for c in range(100, -1, -5):
        asked = attrs.evolve(choice, confidence=c / 100)
        results_two.append([grade(asked, case.answers[1]) for case in cases])
    tested = combinations_judged([results_one, results_two], cases)
    rejected = holm_rejected(tested, level)
    return (min(rejected), min(tested)[0]) if rejected else None


def combinations_judged(
    graded: list[list[list[Result]]], cases: list[Case]
) -> list[tuple[float, int]]:
    """Every combination of one setting per question (``graded``: each question's results
    under each setting, one per case), each case's verdict the core's worst of them: the
    larger of the two p-values, and how many cases go to a person."""
    n = len(cases)
    refused = [case.person == "refused" for case in cases]
    tested = []
    for combination in itertools.product(*graded):
        wrong_pass = wrong_fail = unsure = 0
        for results, no in zip(zip(*combination, strict=True), refused, strict=True):
            verdict = worst_of(results)
            wrong_pass += verdict == "pass" and no
            wrong_fail += verdict == "fail" and not no
            unsure += verdict == "unsure"
        value = max(binomial_cdf(wrong_pass, n, 0.05), binomial_cdf(wrong_fail, n, 0.10))
        tested.append((value, unsure))
    return tested


def holm_rejected(tested: list[tuple[float, int]], level: float) -> list[int]:
    """Holm's step-down over ``tested``: how many cases each rejected combination sends to a
    person."""
    rejected = []
    for rank, (value, unsure) in enumerate(sorted(tested)):
        if value > level / (len(tested) - rank):
            break
        rejected.append(unsure)
    return rejected


# Two months of 400 cases: on the first the path sends fewer to a person, on the second the grid.
@pytest.mark.parametrize(("seed", "method"), [(400, "path"), (1400, "grid")])
def test_a_check_of_two_questions_takes_the_better_of_its_path_and_holm_over_the_grid(
    seed: int, method: str
) -> None:
    # The grid at four fifths of the level (8% of the 10%), the path at the rest: the grid's
    # choice is LTT-Holm's, computed here plainly; the path's is the recommendation a check
    # of two questions had before.
    n = 400
    cases = two_question_month(seed, n)
    report = calibrate_cases([CheckCases(name="s", check=TWO, cases=tuple(cases))])
    chosen = report.checks[0].recommended
    grid = holm_over_the_grid(cases, 0.10 * _recommend.GRID_SHARE)
    assert grid is not None
    columns = [column_of(q, [c.answers[i] for c in cases], Names()) for i, q in enumerate(TWO)]
    refused = bytes(case.person == "refused" for case in cases)
    path = _recommend._split(
        TWO, columns, refused, (), _recommend.test_cases(columns, refused), 0.05, 0.10, 0.98, 30
    )
    sent = chosen.at_recommended.to_person
    assert chosen.promised and chosen.confidence == 0.9 and chosen.method == method
    assert sent == min(grid[0], path.at_recommended.to_person if path.promised else n)
    if chosen.method == "grid":
        assert sent == grid[0] and chosen.fit_cases == 0 and chosen.test_cases == n
        assert chosen.path == 231 * 21 and chosen.other_splits == ()
        assert all(
            value is None or round(value * 20) == value * 20
            for t in chosen.thresholds
            for value in (t.pass_at, t.fail_below, t.confidence)
        )
        text = " ".join(recommendation_text(report.checks[0]))
        assert "on all 400 cases with all 4,851 combinations of thresholds on a grid" in text
    else:
        assert chosen.method == "path" and len(chosen.other_splits) == 4
    # Both are functions of the content: the same month under other ids, in another order.
    renamed = [attrs.evolve(case, key=f"other-{i}") for i, case in enumerate(reversed(cases))]
    again = calibrate_cases([CheckCases(name="s", check=TWO, cases=tuple(renamed))])
    assert again.checks[0].recommended == chosen


def test_from_1000_cases_two_questions_are_learn_then_test_with_holm_and_keep_the_promise() -> None:
    # From 1,000 cases the grid alone, at the whole level: what LTT-Holm gives, computed
    # plainly; its thresholds, graded by the core on a fresh month of 20,000, keep both rates.
    cases = two_question_month(1000, 1000)
    report = calibrate_cases([CheckCases(name="s", check=TWO, cases=tuple(cases))])
    recommended = report.checks[0].recommended
    reference = holm_over_the_grid(cases, 0.10)
    assert reference is not None
    assert recommended.method == "grid" and recommended.promised
    assert recommended.at_recommended.to_person == reference[0]
    assert recommended.confidence == 0.9 and recommended.other_splits == ()
    applied = [t.apply(q) for t, q in zip(recommended.thresholds, TWO, strict=True)]
    fresh = two_question_month(99, 20_000)
    verdicts = [
        worst_of(tuple(grade(q, a) for q, a in zip(applied, c.answers, strict=True))) for c in fresh
    ]
    pairs = list(zip(verdicts, fresh, strict=True))
    wrong_pass = sum(v == "pass" and c.person == "refused" for v, c in pairs)
    wrong_fail = sum(v == "fail" and c.person == "accepted" for v, c in pairs)
    assert wrong_pass / len(fresh) <= 0.05 and wrong_fail / len(fresh) <= 0.10


THREE = parse_check(
    [
        {
            "ask": f"How does it state {what}?",
            "one_of": {"states": "It states it.", "hedges": "It hedges."},
            "pass": ["states"],
        }
        for what in ("the purpose", "the total", "the vendor")
    ]
)


def three_choice_month(seed: int, n: int) -> list[Case]:
    """A month of three choices: the person accepts when every aspect is fine, each with the
    chance its answer's confidence gives (less when the model says ``hedges``)."""
    rng = random.Random(seed)
    found = []
    for i in range(n):
        answers, fine = [], 1.0
        for _ in range(3):
            states = rng.random() < 0.8
            confidence = round(rng.uniform(0.5, 1.0), 2)
            fine *= confidence if states else 1 - confidence
            answers.append(ChoiceAnswer("states" if states else "hedges", confidence))
        found.append(
            Case(
                key=f"t{seed}-{i}",
                answers=tuple(answers),
                person="accepted" if rng.random() < fine else "refused",
            )
        )
    return found


def test_holm_over_the_grid_of_three_questions_is_learn_then_test_written_plainly() -> None:
    # Every combination of three choices' confidences on the grid of 0.05 (9,261), every
    # case graded by the core: the fewest sent to a person by a rejected combination, and
    # how many are rejected, as the packed count gives them.
    cases = three_choice_month(3, 300)
    n, level = len(cases), 0.10
    choices = [question for question in THREE if isinstance(question, ChoiceQuestion)]
    graded = [
        [
            [grade(attrs.evolve(question, confidence=c / 100), case.answers[i]) for case in cases]
            for c in range(100, -1, -5)
        ]
        for i, question in enumerate(choices)
    ]
    assert len(graded) == 3
    refused = [case.person == "refused" for case in cases]
    rejected = holm_rejected(combinations_judged(graded, cases), level)
    assert rejected  # the month is one a grid can promise on
    columns = [column_of(q, [c.answers[i] for c in cases], Names()) for i, q in enumerate(THREE)]
    assert _grid.grid_step(THREE, n) == 5
    choice = _grid.grid_choice(
        THREE,
        columns,
        bytes(refused),
        step=5,
        max_wrong_pass=0.05,
        max_wrong_fail=0.10,
        level=level,
    )
    assert (choice.tested, choice.rejected) == (21**3, len(rejected))
    assert choice.counts[("unsure", "accepted")] + choice.counts[("unsure", "refused")] == min(
        rejected
    )


def test_a_grid_is_as_fine_as_its_combinations_allow_and_none_past_them() -> None:
    yes_no = [{"ask": f"Is part {i} right?"} for i in range(5)]
    assert _grid.grid_step(parse_check(yes_no[:1]), 1000) is None  # one question: sequences
    assert _grid.grid_step(parse_check(yes_no[:2]), 20_000) == 5  # 53,361 combinations
    assert _grid.grid_step(parse_check(yes_no[:2]), 20_001) is None  # past the work allowed
    assert _grid.grid_step(parse_check(yes_no[:3]), 3_000) == 10  # 287,496 at 0.10
    assert _grid.grid_step(parse_check(yes_no[:3]), 4_000) is None
    assert _grid.grid_step(parse_check(yes_no[:4]), 300) is None  # 19 million at 0.10
    assert _grid.grid_step(THREE, 10_000) == 5  # 9,261


def test_from_1000_cases_three_questions_are_tested_on_their_grid_and_say_so() -> None:
    cases = three_choice_month(1000, 1000)
    report = calibrate_cases([CheckCases(name="t", check=THREE, cases=tuple(cases))])
    recommended = report.checks[0].recommended
    assert recommended.method == "grid" and recommended.grid_step == 5
    assert recommended.promised and recommended.path == 21**3
    assert recommended.fit_cases == 0 and recommended.test_cases == 1000
    text = " ".join(recommendation_text(report.checks[0]))
    assert "on all 1000 cases with all 9,261 combinations of thresholds on a grid of 0.05" in text


def test_a_grid_that_rejects_nothing_promises_nothing_and_shows_the_closest() -> None:
    # 1,000 cases and a wrong-pass rate no thresholds can be shown to keep: nothing is
    # promised, and the combination closest to a promise (the smallest p-value) is shown.
    cases = two_question_month(7, 1000)
    group = CheckCases(name="s", check=TWO, cases=tuple(cases))
    report = calibrate_cases([group], max_wrong_pass=0.0005, max_wrong_fail=0.0005)
    recommended = report.checks[0].recommended
    assert recommended.method == "grid" and not recommended.promised
    assert recommended.wrong_pass_bound > 0.0005 or recommended.wrong_fail_bound > 0.0005
    text = " ".join(recommendation_text(report.checks[0]))
    assert "No thresholds can promise" in text and "The closest" in text


def test_no_promise_on_too_few_cases_and_the_closest_is_shown() -> None:
    rows: list[tuple[Any, Person]] = [((YesNoAnswer(0.99),), "accepted")] * 12
    rows += [((YesNoAnswer(0.2),), "refused")] * 4
    check = one_check("Fine?", rows)
    recommended = check.recommended
    assert not recommended.promised
    assert recommended.wrong_pass_bound > 0.05  # too few cases to bound it below 5%
    report = calibrate_cases(
        [CheckCases(name="s", check=parse_check("Fine?"), cases=tuple(
            Case(key=f"k{i}", answers=a, person=p) for i, (a, p) in enumerate(rows)))]
    )  # fmt: skip
    text = calibration_text(report)
    assert "No thresholds can promise that at most 5% of submissions pass" in text
    assert "The closest, Q1 pass 1 fail 0, promise at most" in text


def test_a_promise_is_one_sentence_with_its_cost_in_people() -> None:
    bench = bench_recommend()
    rows = bench.data_set(99, 3000)
    cases = tuple(
        Case(key=key, answers=answers, person="accepted" if ok else "refused")
        for key, answers, ok, _ in rows
    )
    report = calibrate_cases([CheckCases(name="e", check=bench.CHECK, cases=cases)])
    chosen = report.checks[0].recommended
    assert chosen.promised and chosen.fit_cases + chosen.test_cases == 3000
    text = " ".join(calibration_text(report).split())
    assert "Recommended for the whole check: Q1 pass" in text
    assert (
        "With 90% confidence, at most 5% of submissions pass that a person would have"
        " refused, and at most 10% fail that a person would have accepted" in text
    )
    figures = chosen.at_recommended
    assert f"A person would still see {figures.to_person} of 3000 submissions" in text
    assert figures.to_person < report.checks[0].at_current.to_person


def test_every_figure_is_what_grading_each_case_gives_for_a_check_of_many_questions() -> None:
    # Seven questions of every kind (a yes/no without fail, thresholds off the 0.01 grid),
    # answers often exactly on a threshold: the check's figures at its current, suggested and
    # recommended thresholds, and each question's at its current ones, are those of grading
    # every case with the core's grade and taking the worst of its results.
    check = parse_check(
        [
            {"ask": "A?", "pass": 0.9, "fail": 0.4},
            {"ask": "B?", "pass": 0.905},
            {"ask": "C?", "one_of": {"y": "Yes.", "n": "No.", "m": "Maybe."}, "pass": ["y"],
             "unsure": ["m"], "confidence": 0.8},
            {"ask": "D?", "levels": ["0", "1", "2", "3"], "pass": 2, "confidence": 0.755},
            {"ask": "E?", "pass": 0.5, "fail": 0.5},
            {"ask": "F?", "one_of": {"y": "Yes.", "n": "No."}, "pass": ["y"], "confidence": 0.6},
            {"ask": "G?", "levels": ["0", "1"], "pass": 1, "confidence": 0.9},
        ]
    )  # fmt: skip
    rng = random.Random(24)

    def value() -> float:
        return rng.choice([0.4, 0.5, 0.6, 0.755, 0.8, 0.9, 0.905, 1.0, rng.random()])

    def answer(question: Any) -> Any:
        if question.kind == "yes_no":
            return YesNoAnswer(value())
        if question.kind == "choice":
            return ChoiceAnswer(rng.choice([name for name, _ in question.one_of]), value())
        return RubricAnswer(rng.randrange(len(question.levels)), value())

    cases = tuple(
        Case(
            key=f"k{i}",
            answers=tuple(answer(question) for question in check),
            person="accepted" if rng.random() < 0.8 else "refused",
        )
        for i in range(3000)
    )
    report = calibrate_cases([CheckCases(name="s", check=check, cases=cases)])
    found = report.checks[0]

    def confusion(questions: Any, cases: Any = cases) -> dict[str, dict[str, int]]:
        counts = {r: {"accepted": 0, "refused": 0} for r in ("pass", "fail", "unsure")}
        for case in cases:
            results = [grade(q, a) for q, a in zip(questions, case.answers, strict=True)]
            counts[worst_of(results)][case.person] += 1
        return counts

    def under(thresholds: Any) -> list[Any]:
        return [t.apply(q) for q, t in zip(check, thresholds, strict=True)]

    assert found.at_current.confusion.to_json() == confusion(check)
    suggested = [c.suggested for c in found.questions]
    assert found.at_suggested.confusion.to_json() == confusion(under(suggested))
    assert found.recommended.at_recommended.confusion.to_json() == confusion(
        under(found.recommended.thresholds)
    )
    for i, (question, calibration) in enumerate(zip(check, found.questions, strict=True)):
        alone = [Case(key=c.key, answers=(c.answers[i],), person=c.person) for c in cases]
        assert calibration.at_current.confusion.to_json() == confusion([question], alone)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("max_wrong_pass", 0),
        ("max_wrong_pass", -0.05),
        ("max_wrong_fail", 1.0),
        ("max_wrong_fail", -1),
        ("confidence", 1),
        ("confidence", 1.5),
        ("confidence", -0.9),
        ("confidence", True),
        ("confidence", "0.9"),
    ],
)
def test_bad_rates_are_refused_naming_them(option: str, value: object) -> None:
    options: Any = {option: value}
    with pytest.raises(ValueError, match=f"{option} must be a number above 0 and below 1"):
        calibrate_cases([], **options)


@pytest.mark.parametrize("option", ["max_wrong_pass", "max_wrong_fail", "confidence"])
@pytest.mark.parametrize("value", [1e-9, 0.5, 0.999999])
def test_a_rate_just_inside_0_and_1_is_taken(option: str, value: float) -> None:
    options: Any = {option: value}
    assert getattr(calibrate_cases([], **options), option) == value


# --- people's labels ----------------------------------------------------------------------------


def labelled_trail(tmp_path: Path) -> tuple[Path, list[str]]:
    sys.path.insert(0, str(ROOT / "tests"))
    import test_human_calibrate as hand

    path = tmp_path / "records.jsonl"
    for number, (p, name, confidence, decision) in enumerate(hand.HAND, 1):
        hand.record(
            path, hand.HAND_CHECK, hand.hand_answers(p, name, confidence), decision,
            run=f"run-{number}",
        )  # fmt: skip
    keys = [json.loads(line)["key"] for line in path.read_text().splitlines()[::2]]
    return path, keys


def test_labels_join_by_submission_key_and_add_a_reliability(tmp_path: Path) -> None:
    path, keys = labelled_trail(tmp_path)
    labels = tmp_path / "labels.jsonl"
    ask1, ask2 = "The report matches its receipts.", "What does the summary do?"
    # Three labelled submissions: the first two yes/states, the third no/hedges.
    lines: list[dict[str, Any]] = [
        {"key": keys[0], "labels": {ask1: True, ask2: "states"}},
        {"key": keys[1], "labels": {ask1: True, ask2: None}},
        {"key": keys[2], "labels": {ask1: False, ask2: "hedges"}},
        {"key": "sha256:not-in-the-trail", "labels": {ask1: True}},
    ]
    labels.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = calibrate(path, labels=labels, min_cases=1)
    assert report.labels == str(labels)
    q1, q2 = report.checks[0].questions
    against = {table.against: table for table in q1.reliability}
    # Q1's p of 0.95, 0.92, 0.91 against yes, yes, no.
    assert against["label"].cases == 3
    assert against["label"].brier == pytest.approx((0.05**2 + 0.08**2 + 0.91**2) / 3)
    assert against["decision"].cases == 10
    # Q2: states 0.90 (right), hedges? no: case 3 said states 0.70 against hedges (wrong).
    label_table = next(table for table in q2.reliability if table.against == "label")
    assert label_table.cases == 2
    assert label_table.brier == pytest.approx((0.1**2 + 0.7**2) / 2)
    # The same labels in hand, as a map of submission key to labels: the same report, with
    # no file named.
    in_hand: dict[str, Any] = {line["key"]: line["labels"] for line in lines}
    from_map = calibrate(path, labels=in_hand, min_cases=1)
    assert from_map.labels is None
    assert from_map.to_json() == {**report.to_json(), "labels": None}


@pytest.mark.parametrize(
    "labels",
    [{1: {"Q": True}}, {"sha256:a": [True]}, {"sha256:a": "yes"}],
    ids=["key-no-text", "labels-no-map", "labels-a-text"],
)
def test_labels_in_hand_that_are_no_map_of_keys_to_labels_are_refused(
    tmp_path: Path, labels: dict[Any, Any]
) -> None:
    path, _ = labelled_trail(tmp_path)
    with pytest.raises(TypeError, match="labels map a submission key to what each question"):
        calibrate(path, labels=labels, min_cases=1)


def test_a_bad_labels_line_is_refused_naming_it(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"key": "a", "labels": {"Q": true}}\n{"key": "b", "labels": [1]}\n')
    with pytest.raises(AuditError, match=r"labels\.jsonl:2: a labels line is"):
        read_labels(labels)
    labels.write_text('{"key": "a", "labels": {"Q": 1.5}}\n')
    with pytest.raises(AuditError, match=r'labels\.jsonl:1: the label of "Q" is 1\.5'):
        read_labels(labels)
    labels.write_text('{"key": "a", "key": "b", "labels": {}}\n')
    with pytest.raises(AuditError, match=r"labels\.jsonl:1: not JSON: a key appears twice"):
        read_labels(labels)
    # Hostile: not UTF-8, or nested past what the parser can follow: one line naming it.
    labels.write_bytes(b'{"key": "a", "labels": {}}\n\xff\n')
    with pytest.raises(AuditError, match=r"labels\.jsonl:2: not JSON"):
        read_labels(labels)
    labels.write_text("[" * 100_000 + "\n")
    with pytest.raises(AuditError, match=r"labels\.jsonl:1: not JSON"):
        read_labels(labels)


def test_a_label_that_does_not_fit_its_question_is_refused(tmp_path: Path) -> None:
    path, keys = labelled_trail(tmp_path)
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps({"key": keys[0], "labels": {"What does the summary do?": "shouts"}}) + "\n"
    )
    with pytest.raises(
        ValueError,
        match=r'the label of "What does the summary do[?]" is "shouts", but it must be one of',
    ):
        calibrate(path, labels=labels)


# --- drift on the command line ------------------------------------------------------------------


def drifting_trail(path: Path, *, worse: bool) -> None:
    from checkprofile import Submission, combine, outcome_for
    from checkprofile.human import JsonLinesRecorder, decision_record, verdict_record

    check = parse_check("Fine?")
    recorder = JsonLinesRecorder(path)
    for week, day in ((1, "02"), (2, "16")):
        for n in range(80):
            run, submission = f"r{week}-{n}", Submission({"n": n, "week": week})
            at = f"2026-11-{day}T09:00:00Z"
            verdict = combine(check, [YesNoAnswer(0.97)], model="m", at=at, advisory=True)
            recorder.record(
                verdict_record(outcome_for(verdict), run_id=run, step_id="s", submission=submission)
            )
            # The first week people accept 78 of 80; the second, if worse, 40 of 80.
            refused = n < (40 if worse and week == 2 else 2)
            decision = Returned(note="No.", by="p", at=at) if refused else Completed(by="p", at=at)
            recorder.record(
                decision_record(decision, run_id=run, step_id="s", submission=submission)
            )


@pytest.mark.parametrize(("worse", "code"), [(False, 0), (True, 1)])
def test_drift_exits_1_when_agreement_moved_beyond_its_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], worse: bool, code: int
) -> None:
    path = tmp_path / "records.jsonl"
    drifting_trail(path, worse=worse)
    args = [
        "calibrate", str(path), "--baseline-until", "2026-11-10", "--since", "2026-11-10",
    ]  # fmt: skip
    assert main(args) == code
    out = capsys.readouterr().out
    assert ("  MOVED " in out) == worse
    assert main([*args, "--json"]) == code
    data = json.loads(capsys.readouterr().out)
    assert data["moved"] is worse
    moved = [c for c in data["comparisons"] if c["moved"]]
    if worse:
        assert {(c["question"], c["figure"]) for c in moved} >= {(None, "agreement")}


def test_cli_bad_rates_and_labels_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "records.jsonl"
    drifting_trail(path, worse=False)
    with pytest.raises(SystemExit) as refused:
        main(["calibrate", str(path), "--max-wrong-pass", "1.5"])
    assert refused.value.code == 2
    assert "--max-wrong-pass: must be above 0 and below 1, got '1.5'" in capsys.readouterr().err
    assert main(["calibrate", str(path), "--labels", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err


def _window(accepted: int) -> Any:
    rows: list[tuple[tuple[YesNoAnswer], Person]] = [
        ((YesNoAnswer(0.97),), "accepted" if i < accepted else "refused") for i in range(200)
    ]
    return calibrate_cases(
        [CheckCases(name="s", check=parse_check("Fine?"), cases=tuple(
            Case(key=f"k{i}", answers=a, person=p) for i, (a, p) in enumerate(rows)))],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("recent", "p_value", "moved"),
    [(178, 0.04118337049200177, False), (172, 0.0032771869637435607, True)],
)
def test_drift_judges_every_figure_at_once_with_holm(
    recent: int, p_value: float, moved: bool
) -> None:
    from checkprofile.human._calibration._drift import drift

    # Three figures judged (the check's agreement, Q1's, the bin [0.9, 1]), each 190 of 200
    # before and ``recent`` of 200 after. Fisher's exact test (the p-values are scipy's
    # fisher_exact([[190, 10], [recent, 200 - recent]])): 178 gives 0.041, below 5% alone but
    # above 0.05 / 3, as Holm asks of the smallest of three: not moved. 172 gives 0.0033.
    result = drift(_window(190), _window(recent))
    judged = [c for c in result.comparisons if c.judged]
    assert len(judged) == 3
    for comparison in judged:
        assert comparison.p_value == pytest.approx(p_value, rel=1e-9)
        assert comparison.moved is moved
    assert result.moved is moved


def test_the_same_month_under_other_ids_and_order_gives_the_same_report() -> None:
    # The recommendation is a function of the records' content: the same submissions (the
    # same answers, decisions and labels) under other run ids, read in another order, give
    # the same split, the same recommendation and the same report, word for word.
    bench = bench_recommend()
    rows = bench.data_set(7, 1500)
    # Each distinct content appears once here; a few repeated rows test the count of alike
    # cases (cases of one content must not all fall on one side).
    rows += rows[:40] * 3

    def report(keyed: list[Any]) -> Any:
        cases = tuple(
            Case(key=key, answers=answers, person="accepted" if ok else "refused", labels=labels)
            for key, answers, ok, labels in keyed
        )
        return calibrate_cases([CheckCases(name="expense", check=bench.CHECK, cases=cases)])

    first = report(rows)
    shuffled = [(f"other-run-{random.Random(i).random()}", *row[1:]) for i, row in enumerate(rows)]
    random.Random(3).shuffle(shuffled)
    second = report(shuffled)
    assert first.checks[0].recommended == second.checks[0].recommended
    assert first.to_json() == second.to_json()
    assert calibration_text(first) == calibration_text(second)
    assert first.checks[0].recommended.promised
    # On 1,620 cases the three questions are tested on their grid, on every case; the split a
    # path takes (below 1,000 cases) is not one-sided for repeated contents either: about two
    # thirds tested, whatever the ids.
    assert first.checks[0].recommended.method == "grid"
    columns = [
        column_of(question, [row[1][i] for row in rows], Names())
        for i, question in enumerate(bench.CHECK)
    ]
    tested = _recommend.test_cases(columns, bytes(not row[2] for row in rows))
    assert 0.6 < sum(tested) / len(rows) < 0.73


def test_thresholds_that_send_everything_to_a_person_are_not_recommended() -> None:
    # Every answer says 0.5 and people refuse half: any thresholds that decide a case decide
    # them all, half wrongly. Only the strictest keep the promise (no case decided), and
    # they send all 150 to a person: the report says there is nothing to recommend.
    rows = [((YesNoAnswer(0.5),), "refused" if i % 2 else "accepted") for i in range(150)]
    check = one_check("Fine?", rows)
    assert check.recommended.promised
    assert check.recommended.at_recommended.to_person == 150
    lines = " ".join(recommendation_text(check))
    assert "Recommended" not in lines
    assert "Nothing to recommend" in lines and "send every submission to a person" in lines


def _benchmark(name: str) -> Any:
    """A module of benchmarks/ (which import each other by name), loaded for its functions."""
    folder = str(ROOT / "benchmarks")
    if folder not in sys.path:
        sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("regime", ["calibrated", "over", "under", "useless"])
def test_one_question_never_sends_more_to_a_person_than_ltt_holm(regime: str) -> None:
    # Learn-then-Test with Holm over the same grid (bench_ltt.ltt_holm, written as MAPIE's
    # ltt_procedure does it) on the same cases: every pair it rejects, the recommendation's
    # own sequences reject too, so it never sends more of the cases to a person, and it
    # promises whenever that procedure does.
    ltt = _benchmark("bench_ltt")
    world = ltt.World(regime)
    rng = random.Random(f"ltt-{regime}")
    compared = 0
    for n in (120, 400, 1500):
        rows = world.month(rng, n)
        report = calibrate_cases([ltt.cases(rows)])
        chosen = report.checks[0].recommended
        theirs = ltt.ltt_holm(
            rows, max_wrong_pass=0.05, max_wrong_fail=0.10, confidence=0.9, step=1
        )
        assert (chosen.fit_cases, chosen.test_cases) == (0, n)
        if theirs is None:
            continue
        assert chosen.promised
        passing, failing = theirs.pass_at, theirs.fail_below or theirs.pass_at
        sent = sum(failing <= p < passing for p, _ in rows)
        assert chosen.at_recommended.to_person <= sent
        compared += 1
    assert compared >= 2


def test_no_thresholds_are_suggested_from_fewer_than_min_cases_decided_cases() -> None:
    # 29 cases: no thresholds can leave 30 decided, so none is suggested (at 29, some are).
    rows = [((YesNoAnswer(0.9 if i % 3 else 0.2),), "accepted" if i % 3 else "refused")
            for i in range(29)]  # fmt: skip
    question = one_check("Fine?", rows).questions[0]
    assert (question.suggested, question.at_suggested, question.meets_target) == (None, None, False)
    assert question.agreement_bound is None
    question = one_check("Fine?", rows, min_cases=29).questions[0]
    assert question.suggested is not None and question.at_suggested is not None
    assert question.at_suggested.decided >= 29


def test_a_search_too_large_for_a_float_meets_nothing_and_bounds_at_zero() -> None:
    from checkprofile.human._calibration._search import agreement_bound, meets

    # A check of 90 questions searches 5152**90 combinations, more than a float holds: no
    # overflow, nothing meets, and the bound says nothing (0). At 5,151, 300 of 300 meet.
    figures = one_check("Fine?", [((YesNoAnswer(0.99),), "accepted")] * 300).at_current
    bound = agreement_bound(figures, 5151)
    assert meets(figures, 0.95, 5151) and bound is not None and bound > 0.95
    assert not meets(figures, 0.95, 5152**90)
    assert agreement_bound(figures, 5152**90) == 0.0
