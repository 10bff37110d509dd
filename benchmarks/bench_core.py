"""Benchmarks for the pure path, printed as ratios against baselines measured in the same run.

    python benchmarks/bench_core.py [--repeat N] [--rounds R]

Each figure is the best of ``--rounds`` x N timed runs (default 3 x 15) after one warm-up:
the machine is shared and noisy, and a ratio compares like with like only when both sides
had a quiet moment. Two baselines, both one ``json.dumps`` of
the whole run data: plain (``json.dumps(run)``) and sorted compact
(``sort_keys=True, separators=(",", ":")``), the least any implementation could spend just to
look at the data in the order it is shown.

"before" is the cut as checkprofile 0.1.0 made it, frozen in ``tests/bundle_before.py``
(the same bytes, the old way; without build_bundle's few microseconds around it); "after" is
:func:`build_bundle` now, with and without the ``fast`` extra. Goals are issue 13's:

* a 9 MB run with 2,000 steps cut to 64 KB, with and without one history entry per step:
  <= 0.03 of the sorted compact dumps, <= 0.045 of the plain one;
* run data that fits (29 KB and 63 KB): <= 1.1 of the sorted compact dumps;
* how the cut grows with run size (bigger steps), budget and step count: with the budget and
  the step count, never with the bytes cut.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import bundle_before

import checkprofile
from checkprofile import (
    Limits,
    Material,
    Submission,
    _convert,
    _json_text,
    build_bundle,
    combine,
    issue_lines,
    parse_check,
)

CHECK = parse_check(
    [
        {"ask": "The cleared verdict matches what the attached report says.", "fail": 0.5},
        {
            "ask": "What does the summary do?",
            "one_of": {"states": "States the verdict.", "hedges": "Avoids a verdict."},
            "pass": ["states"],
        },
        {
            "ask": "How complete is the screening?",
            "levels": ["Neither list.", "One list.", "Both lists, with search terms."],
            "pass": 2,
        },
    ]
)
ANSWERS: list[checkprofile.Answer] = [
    checkprofile.YesNoAnswer(0.42),
    checkprofile.ChoiceAnswer("hedges", 0.93),
    checkprofile.RubricAnswer(1, 0.88),
]
BUDGET = 65536
#: The sizes of run data that fits, in every benchmark (about 29 KB and 63 KB).
FITS = ((6, 4650), (14, 4650))


def make_run(steps: int, step_bytes: int, *, history: bool = True) -> dict[str, Any]:
    """Run data shaped like agentprocess's: inputs, and steps with output, evidence and (with
    ``history``) one history entry each. Days 1-31, so some stamps are judged against their
    month."""
    filler = "Screened against the consolidated list; no match on name, alias or address. "
    run_steps = {}
    for i in range(steps):
        text = (filler * (step_bytes // len(filler) + 1))[: max(step_bytes - 400, 10)]
        record: dict[str, Any] = {
            "output": {"cleared": i % 3 != 0, "summary": text, "n": i},
            "summary": f"step {i} done",
            "evidence": [{"kind": "file", "ref": f"r/{i}.pdf", "url": f"https://x/{i}?sig=abc"}],
            "by": "agent-7",
            "at": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z",
        }
        if history:
            day = 1 + i % 31 if i % 12 in (0, 2, 4, 6, 7, 9, 11) else 1 + i % 30
            record["history"] = [
                {"at": f"2026-{1 + i % 12:02d}-{day:02d}T08:00:00Z", "verdict": "returned"}
            ]
        run_steps[f"step_{i:05d}"] = record
    return {"inputs": {"vendor": "ACME GmbH", "country": "DE"}, "steps": run_steps}


def timed(fn: Callable[[], object], repeat: int, rounds: int = 1) -> float:
    """The best of ``rounds`` x ``repeat`` timed runs after one warm-up: on a shared machine
    the quietest run is the one that measures the code, not its neighbours."""
    fn()
    gc.collect()  # what an earlier measurement left behind is not collected during this one
    best = float("inf")
    for _ in range(rounds * repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def dumps(value: object) -> str:
    # The plain baseline: one json.dumps, the cheapest way to even look at the run data.
    return json.dumps(value)


def sorted_dumps(value: object) -> str:
    # The sorted compact baseline: the run data as one text in the order it is shown.
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


class Writer:
    """The pure path or the ``fast`` extra, for the time of a block."""

    def __init__(self, fast: bool) -> None:
        self.fast = fast

    def __enter__(self) -> None:
        self.saved = _json_text._fast_dumps
        _json_text._fast_dumps = _json_text._UNSET if self.fast else None
        if self.fast and _json_text._fast() is None:
            raise SystemExit("the fast extra is not installed: pip install -e '.[fast]'")

    def __exit__(self, *exc: object) -> None:
        _json_text._fast_dumps = self.saved


class OldPlain:
    """The old cut with the old plain(): every value walked in full (the quick look at data
    already plain came with the new cut), for the time of a block."""

    def __enter__(self) -> None:
        self.saved = vars(bundle_before)["plain"]

        def full_walk(value: object, *, finite: bool = True) -> Any:
            return _convert._Plain(finite).walk(value, 0)

        vars(bundle_before)["plain"] = full_walk

    def __exit__(self, *exc: object) -> None:
        vars(bundle_before)["plain"] = self.saved


def main() -> None:
    parser = argparse.ArgumentParser(description="checkprofile core benchmarks")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    repeat, rounds = options.repeat, options.rounds
    submission = Submission({"cleared": True}, "No match on either list.")

    def material(run: dict[str, Any]) -> Material:
        return Material("Check the vendor.", "# Vendor\n", run, submission)

    def t(fn: Callable[[], object]) -> float:
        return timed(fn, repeat, rounds)

    print(
        f"{'what (ratios to one json.dumps of the run)':62}"
        f" {'before':>8} {'after':>8} {'fast':>8} {'goal':>7}"
    )

    def row(name: str, before: float, after: float, fast: float | None, goal: str) -> None:
        fast_text = f"{fast:8.3f}" if fast is not None else f"{'':8}"
        print(f"{name:62} {before:8.3f} {after:8.3f} {fast_text} {goal:>7}")

    def measure(run: dict[str, Any]) -> tuple[float, float, float, float, float]:
        """Plain and sorted baselines, before, after (pure) and after (fast), in seconds."""
        chosen = material(run)
        base = t(lambda: dumps(run))
        base_sorted = t(lambda: sorted_dumps(run))
        with OldPlain():
            before = t(lambda: bundle_before._cut(run, BUDGET))
        with Writer(False):
            after = t(lambda: build_bundle(CHECK, chosen, state_bytes=BUDGET))
            view = build_bundle(CHECK, chosen, state_bytes=BUDGET)
        with Writer(True):
            fast = t(lambda: build_bundle(CHECK, chosen, state_bytes=BUDGET))
            assert build_bundle(CHECK, chosen, state_bytes=BUDGET) == view
        assert view.run_data_json == bundle_before._cut(run, BUDGET).text  # the same bytes
        return base, base_sorted, before, after, fast

    for history in (False, True):
        big = make_run(2000, 4600, history=history)
        base, base_sorted, before, after, fast = measure(big)
        shape = "one history entry each" if history else "no history"
        what = f"cut {len(dumps(big).encode()) / 1e6:.1f} MB / 2,000 steps ({shape})"
        row(
            f"{what}, vs sorted",
            before / base_sorted,
            after / base_sorted,
            fast / base_sorted,
            "0.03",
        )
        row(f"{what}, vs plain", before / base, after / base, fast / base, "0.045")
        del big  # a 9 MB run left alive makes every later collection slower
        print(
            f"{'':62} ms: {after * 1e3:.3f} (pure), {fast * 1e3:.3f} (fast); baselines"
            f" {base_sorted * 1e3:.1f} (sorted), {base * 1e3:.1f} (plain)"
        )

    for steps, step_bytes in FITS:
        fits = make_run(steps, step_bytes)
        assert not build_bundle(CHECK, material(fits), state_bytes=BUDGET).truncated
        base, base_sorted, before, after, fast = measure(fits)
        what = f"{len(dumps(fits).encode()) // 1000} KB that fits, vs sorted"
        row(what, before / base_sorted, after / base_sorted, fast / base_sorted, "1.1")

    fits = make_run(*FITS[1])
    chosen = material(fits)
    base_sorted = t(lambda: sorted_dumps(fits))

    def pure_path() -> tuple[str, ...]:
        shown = build_bundle(CHECK, chosen, state_bytes=Limits().check_state_bytes)
        verdict = combine(
            CHECK, ANSWERS, model="m", at="2026-10-06T09:04:20Z", truncated=shown.truncated
        )
        return issue_lines(verdict)

    with Writer(False):
        path = t(pure_path)
    with Writer(True):
        path_fast = t(pure_path)
    print(
        f"(for scale) bundle+combine+lines, 63 KB, vs sorted dumps:"
        f" {path / base_sorted:.3f} pure, {path_fast / base_sorted:.3f} fast"
    )

    # Growth of the cut: ms, pure path, history shape. Each line changes one thing.
    print("\ngrowth of the cut (ms, one history entry per step, pure path):")
    print(f"  {'run':34} {'budget':>7} {'steps cut':>9} {'ms':>8} {'ms/64KB/2k steps':>17}")
    reference = None
    cases = [
        ("2,000 steps of 2.3 KB (4.5 MB)", 2000, 2300, BUDGET),
        ("2,000 steps of 4.6 KB (9 MB)", 2000, 4600, BUDGET),
        ("2,000 steps of 18 KB (36 MB)", 2000, 18400, BUDGET),
        ("2,000 steps of 4.6 KB (9 MB)", 2000, 4600, 16384),
        ("2,000 steps of 4.6 KB (9 MB)", 2000, 4600, 262144),
        ("1,000 steps of 4.6 KB (4.5 MB)", 1000, 4600, BUDGET),
        ("4,000 steps of 4.6 KB (18 MB)", 4000, 4600, BUDGET),
        ("8,000 steps of 1.2 KB (9 MB)", 8000, 1150, BUDGET),
    ]
    with Writer(False):
        for label, steps, step_bytes, budget in cases:
            run = make_run(steps, step_bytes)
            chosen = material(run)
            spent = t(lambda: build_bundle(CHECK, chosen, state_bytes=budget))  # noqa: B023
            cut = len(build_bundle(CHECK, chosen, state_bytes=budget).dropped_steps)
            reference = reference or spent
            print(
                f"  {label:34} {budget // 1024:5} KB {cut:9} {spent * 1e3:8.3f}"
                f" {spent / reference:17.2f}"
            )


if __name__ == "__main__":
    main()
