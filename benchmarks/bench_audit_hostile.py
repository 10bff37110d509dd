"""The audit trail's fast reading against the strict one on hostile trails, in the same run:
the fast way may never cost more (issue 34, findings 7 and 8).

    python benchmarks/bench_audit_hostile.py [--repeat 3] [--no-memory]

Each shape is a file of verdict lines the library itself writes, read line by line by the
reader calibration uses (``fast``) and by the same reader reading every line the strict way
(``strict``, the reference), in the same process, the least of ``--repeat`` CPU times each:

* **writer's trail**: 2,000 verdicts of one three-question check (the common case: the fast
  way's reason to be);
* **choice of 450 / 600 names**: 200 verdicts of a check whose choice has that many names,
  each with a distribution over all of them (a 20-40 KB line; before, 450 names cost seconds
  a line, 500 and more could not be recorded);
* **2,000 distinct checks**: each line a check of its own (before: a reader made for each);
* **64 checks, 32 lines each**: as many checks as a reader learns, each on as many lines as
  it takes to make the check's own tail reader;
* **distinct 1 MB checks**: 20 lines, each a check of its own of about 1 MB.

Printed: each time, the ratio fast / strict (the target: at most 1 on every hostile shape,
within noise), and with memory (a process per reading, tracemalloc's peak) the two peaks.
"""

from __future__ import annotations

import argparse
import functools
import gc
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench_core import CHECK

from checkprofile import (
    Answer,
    Check,
    ChoiceAnswer,
    ChoiceQuestion,
    RubricAnswer,
    Submission,
    YesNoAnswer,
    combine,
    outcome_for,
    parse_check,
)
from checkprofile.human import VerdictRecord, verdict_record
from checkprofile.human._audit._fast._reader import _Reader
from checkprofile.human._audit._recorders import record_line

AT = "2026-11-01T00:00:00Z"


def choice_check(names: int, *, ask: str = "Which of the names fits?", width: int = 0) -> Check:
    """A check of one choice of ``names`` names (each ``width`` characters more)."""
    one_of = {f"name-{n}{'x' * width}": f"The {n}th." for n in range(names)}
    return parse_check([{"ask": ask, "one_of": one_of, "pass": [next(iter(one_of))]}])


def one_answer(check: Check, rng: random.Random) -> Answer:
    """A native answer to ``check``'s one question: a choice's with a distribution over every
    name, a yes/no's probability."""
    question = check[0]
    if not isinstance(question, ChoiceQuestion):
        return YesNoAnswer(round(rng.uniform(0, 1), 6), source="native")
    names = list(question.names)
    chosen = rng.choice(names)
    rest = round(0.5 / (len(names) - 1), 9)
    top = 1 - rest * (len(names) - 1)
    pairs = tuple((name, top if name == chosen else rest) for name in names)
    confidence = round(rng.uniform(0.5, 1), 6)
    return ChoiceAnswer(chosen, confidence, source="native", distribution=pairs)


def plain_line(check: Check, rng: random.Random) -> bytes:
    """A verdict line of the benchmarks' three-question check."""
    answers: tuple[Answer, ...] = (
        YesNoAnswer(round(rng.uniform(0, 1), 6), source="native"),
        ChoiceAnswer(rng.choice(("states", "hedges")), round(rng.uniform(0.5, 1), 6)),
        RubricAnswer(rng.choice((0, 1, 2)), round(rng.uniform(0.5, 1), 6)),
    )
    return record_line(verdict_of(check, answers))


def line_of(check: Check, rng: random.Random) -> bytes:
    """A verdict line of ``check`` (one question), answered by :func:`one_answer`."""
    return record_line(verdict_of(check, (one_answer(check, rng),)))


def distinct_lines(rng: random.Random, checks: int, each: int) -> list[bytes]:
    """``each`` lines of each of ``checks`` small checks of their own, one check after another."""
    lines = []
    for n in range(checks):
        check = parse_check([{"ask": f"Check {n}: is it so?", "fail": 0.5}])
        lines += [line_of(check, rng) for _ in range(each)]
    return lines


def verdict_of(check: Check, answers: tuple[Answer, ...]) -> VerdictRecord:
    """The verdict record the library makes of ``answers`` to ``check``."""
    verdict = combine(check, answers, model="example-evaluator-1", at=AT, advisory=True)
    return verdict_record(
        outcome_for(verdict, answers=answers),
        run_id="any",
        step_id="screen",
        submission=Submission({"vendor": "any"}),
    )


def shapes(rng: random.Random) -> dict[str, list[bytes]]:
    made: dict[str, list[bytes]] = {}
    made["writer's trail"] = [plain_line(CHECK, rng) for _ in range(2000)]
    for names in (450, 600):
        check = choice_check(names)
        made[f"choice of {names} names"] = [line_of(check, rng) for _ in range(200)]
    made["2,000 distinct checks"] = distinct_lines(rng, 2000, 1)
    made["64 checks, 32 lines each"] = distinct_lines(rng, 64, 32)
    made["distinct 1 MB checks"] = [
        line_of(choice_check(40, ask=f"Check {n}?", width=25_000), rng) for n in range(20)
    ]
    return made


def read(lines: Sequence[bytes], *, fast: bool) -> int:
    reader = _Reader(fast=fast)
    for number, line in enumerate(lines, 1):
        reader.read("hostile.jsonl", number, line[:-1])
    return len(lines)


def least(work: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


_PEAK = (
    "import sys, tracemalloc\n"
    "from checkprofile.human._audit._fast._reader import _Reader\n"
    "lines = open(sys.argv[1], 'rb').read().split(b'\\n')[:-1]\n"
    "tracemalloc.start()\n"
    "reader = _Reader(fast=sys.argv[2] == 'fast')\n"
    "for number, line in enumerate(lines, 1):\n"
    "    reader.read('hostile.jsonl', number, line)\n"
    "print(tracemalloc.get_traced_memory()[1] / 2**20)\n"
)


def peak(path: Path, way: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(path), way], check=True, capture_output=True, text=True
    )
    return float(done.stdout)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/checkprofile-bench-hostile"))
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    header = f"{'shape':<24} {'lines':>6} {'KB/line':>8} {'strict s':>9} {'fast s':>8} {'ratio':>6}"
    print(header + ("" if args.no_memory else f" {'strict MB':>10} {'fast MB':>8}"))
    for name, lines in shapes(random.Random(34)).items():
        strict = least(functools.partial(read, lines, fast=False), args.repeat)
        fast = least(functools.partial(read, lines, fast=True), args.repeat)
        size = sum(map(len, lines)) / len(lines) / 1024
        row = f"{name:<24} {len(lines):>6} {size:>8.1f} {strict:>9.3f} {fast:>8.3f}"
        row += f" {fast / strict:>6.2f}"
        if not args.no_memory:
            path = args.dir / "lines.jsonl"
            path.write_bytes(b"".join(lines))
            row += f" {peak(path, 'strict'):>10.1f} {peak(path, 'fast'):>8.1f}"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
