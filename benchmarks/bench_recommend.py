"""Does the whole check's recommendation keep its promise out of sample, and what does it cost
in people's time against a per-question gate search like jev-eval's?

    python benchmarks/bench_recommend.py [--trials 20] [--submissions 5000]
                                         [--max-wrong-pass 0.05] [--max-wrong-fail 0.10]
                                         [--confidence 0.9]

Each trial generates a month of a check of the three kinds (a yes/no question that is
overconfident, a choice, a rubric that is underconfident) whose person accepts a submission
when all three aspects are right, with noise in the people's decisions and labels; fits on
one half and scores on the other:

* **recommended**: ``calibrate_cases`` on the fit half, its check's ``recommended``
  thresholds applied to the held-out half;
* **gates**: per question, the lowest confidence gate whose answers above it agree with the
  person's per-question labels at ``--gate-target`` on at least 50 rows (jev-eval's rule),
  then the check under the worst-of rule on the held-out half.

Printed: the share of trials in which the held-out wrong passes stayed within their rate (the
promise: at least ``--confidence``; the wrong fails too, reported beside), and the share sent
to a person by each. ``--match-gates`` sets the wrong-pass rate to the one the gates take on
the fit half (rounded up to half a point), for a comparison at the same risk. Exit 1 when the
promise or the comparison fails.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Sequence

from checkprofile import (
    Answer,
    Check,
    ChoiceAnswer,
    RubricAnswer,
    YesNoAnswer,
    grade,
    parse_check,
)
from checkprofile.human import calibrate_cases
from checkprofile.human._calibration._calibrate import Case, CheckCases, Thresholds
from checkprofile.human._calibration._search import Label

CHECK = parse_check(
    [
        {"ask": "Every line has a receipt, and the amounts match.", "pass": 0.9, "fail": 0.4},
        {
            "ask": "How does the report state its purpose?",
            "one_of": {"specific": "Names it.", "vague": "Hints.", "missing": "Says nothing."},
            "pass": ["specific"],
            "unsure": ["vague"],
            "confidence": 0.8,
        },
        {
            "ask": "How well are lines above the per-diem handled?",
            "levels": ["Not at all.", "Some.", "Most.", "All, explained."],
            "pass": 2,
            "confidence": 0.75,
        },
    ]
)


#: One submission: its key, the model's answers, whether the person accepted it, and the
#: person's labels of the three questions.
Row = tuple[str, tuple[Answer, ...], bool, tuple[Label, ...]]


def _logistic(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def submission(rng: random.Random) -> tuple[tuple[Answer, ...], bool, tuple[Label, ...]]:
    """One submission: the model's answers, whether the person accepted it, and the person's
    labels of the three questions."""
    good = (rng.random() < 0.9, rng.random() < 0.8, rng.random() < 0.85)
    # Yes/no: a calibrated belief, reported overconfidently (its logit doubled).
    belief = _logistic(rng.gauss(1.8 if good[0] else -1.6, 1.2))
    p = round(_logistic(2 * math.log(belief / (1 - belief))), 4)
    # Choice: the right name most of the time; confidence a little higher when right.
    names = ("specific", "vague", "missing")
    weights = (85, 10, 5) if good[1] else (15, 25, 60)
    name = rng.choices(names, weights)[0]
    right = (name == "specific") == good[1]
    name_conf = round(min(1.0, rng.uniform(0.65, 1.0) if right else rng.uniform(0.45, 0.95)), 4)
    # Rubric: underconfident (its confidence squeezed towards the middle).
    if good[2]:
        level = rng.choices((3, 2, 1, 0), (50, 40, 8, 2))[0]
    else:
        level = rng.choices((3, 2, 1, 0), (5, 10, 45, 40))[0]
    right = (level >= 2) == good[2]
    level_conf = round(0.35 + 0.5 * (rng.uniform(0.7, 1.0) if right else rng.uniform(0.3, 0.9)), 4)
    accepted = all(good) != (rng.random() < 0.04)  # people decide with some noise
    noisy = [aspect != (rng.random() < 0.03) for aspect in good]
    truth = (
        noisy[0],
        "specific" if noisy[1] else ("missing" if name == "specific" else name),
        max(level, 2) if noisy[2] else min(level, 1),
    )
    answers = (YesNoAnswer(p), ChoiceAnswer(name, name_conf), RubricAnswer(level, level_conf))
    return answers, accepted, truth


def data_set(seed: int, n: int) -> list[Row]:
    rng = random.Random(seed)
    return [(f"s{seed}-{i}", *submission(rng)) for i in range(n)]


def apply(check: Check, thresholds: Sequence[Thresholds]) -> Check:
    return Check(tuple(t.apply(q) for q, t in zip(check, thresholds, strict=True)))


def score(
    check: Check, rows: Sequence[tuple[str, tuple[Answer, ...], bool, object]]
) -> dict[str, float]:
    """Held-out rates of a check: wrong passes, wrong fails, sent to a person (of all)."""
    wrong_pass = wrong_fail = unsure = 0
    for _, answers, accepted, _ in rows:
        results = [grade(q, a) for q, a in zip(check, answers, strict=True)]
        verdict = "unsure" if "unsure" in results else "fail" if "fail" in results else "pass"
        wrong_pass += verdict == "pass" and not accepted
        wrong_fail += verdict == "fail" and accepted
        unsure += verdict == "unsure"
    n = len(rows)
    decided = n - unsure
    agreement = (decided - wrong_pass - wrong_fail) / decided if decided else math.nan
    return {
        "wrong_pass": wrong_pass / n,
        "wrong_fail": wrong_fail / n,
        "to_person": unsure / n,
        "agreement": agreement,
    }


def _sure(answer: Answer) -> float:
    if isinstance(answer, YesNoAnswer):
        return max(answer.p, 1 - answer.p)
    return answer.confidence


def _right(answer: Answer, label: Label) -> bool:
    if isinstance(answer, YesNoAnswer):
        return (answer.p >= 0.5) == label
    if isinstance(answer, ChoiceAnswer):
        return answer.name == label
    assert isinstance(answer, RubricAnswer)
    return answer.level == label


def gates(rows: Sequence[Row], target: float) -> list[Thresholds]:
    """jev-eval's rule, per question against its labels: the lowest gate (0.01 steps) whose
    answers at or above it are right at ``target`` on at least 50 rows."""
    found = []
    for q in range(len(CHECK)):
        pairs = [
            (_sure(answers[q]), _right(answers[q], labels[q])) for _, answers, _, labels in rows
        ]
        gate = 1.0
        for k in range(50, 101):
            g = k / 100
            above = [right for sure, right in pairs if sure >= g]
            if len(above) >= 50 and sum(above) / len(above) >= target:
                gate = g
                break
        if q == 0:
            found.append(Thresholds(pass_at=gate, fail_below=round(1 - gate, 2)))
        else:
            found.append(Thresholds(confidence=gate))
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--submissions", type=int, default=5000)
    parser.add_argument("--max-wrong-pass", type=float, default=0.05)
    parser.add_argument("--max-wrong-fail", type=float, default=0.10)
    parser.add_argument("--confidence", type=float, default=0.9)
    parser.add_argument("--gate-target", type=float, default=0.90)
    parser.add_argument(
        "--labels",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="give the recommendation the per-question labels the gates use (default)",
    )
    parser.add_argument(
        "--match-gates",
        action="store_true",
        help="set the wrong-pass rate to the one the gates take on the fit half",
    )
    args = parser.parse_args(argv)
    kept = both = 0
    ours: list[float] = []
    theirs: list[float] = []
    promised = 0
    for trial in range(args.trials):
        rows = data_set(trial, args.submissions)
        fit, held = rows[: len(rows) // 2], rows[len(rows) // 2 :]
        cases = tuple(
            Case(
                key=key,
                answers=answers,
                person="accepted" if ok else "refused",
                labels=labels if args.labels else (),
            )
            for key, answers, ok, labels in fit
        )
        gated = apply(CHECK, gates(fit, args.gate_target))
        rates = (args.max_wrong_pass, args.max_wrong_fail)
        if args.match_gates:
            # The same risks as the gates take on the fit half (known before scoring),
            # rounded up to half a point.
            seen = score(gated, fit)
            rates = (max(math.ceil(seen["wrong_pass"] * 200) / 200, 0.005), args.max_wrong_fail)
        report = calibrate_cases(
            [CheckCases(name="expense", check=CHECK, cases=cases)],
            max_wrong_pass=rates[0],
            max_wrong_fail=rates[1],
            confidence=args.confidence,
        )
        recommended = report.checks[0].recommended
        promised += recommended.promised
        mine = score(apply(CHECK, recommended.thresholds), held)
        other = score(gated, held)
        kept += mine["wrong_pass"] <= rates[0]
        both += mine["wrong_pass"] <= rates[0] and mine["wrong_fail"] <= rates[1]
        ours.append(mine["to_person"])
        theirs.append(other["to_person"])
        print(
            f"trial {trial:2d}: rates {rates[0]:.3f}/{rates[1]:.3f}: recommended"
            f" {'promised' if recommended.promised else 'closest '}"
            f" wrong pass {mine['wrong_pass']:.3f} wrong fail {mine['wrong_fail']:.3f}"
            f" to a person {mine['to_person']:.3f} agreement {mine['agreement']:.3f}"
            f" | gates wrong pass {other['wrong_pass']:.3f} wrong fail {other['wrong_fail']:.3f}"
            f" to a person {other['to_person']:.3f} agreement {other['agreement']:.3f}"
        )
    share = kept / args.trials
    print(
        f"held-out wrong passes within their rate in {kept} of {args.trials} trials"
        f" ({share:.0%}; promised: at least {args.confidence:.0%}); wrong fails within theirs"
        f" too in {both}; promised in {promised}."
    )
    print(
        f"sent to a person, mean: recommended {statistics.mean(ours):.3f},"
        f" per-question gates {statistics.mean(theirs):.3f}"
    )
    ok = share >= args.confidence and statistics.mean(ours) <= statistics.mean(theirs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
