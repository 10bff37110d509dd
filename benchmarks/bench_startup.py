"""Start-up cost: importing the package and running short commands, against a bare interpreter.

    python benchmarks/bench_startup.py [--repeat N]

Every figure is the best of N fresh interpreters (default 15): start-up is noisy, and the best
run is the one least disturbed by the rest of the machine. Each is printed in milliseconds of
wall time and as a ratio to ``python -c pass`` measured in the same run, so the figures compare
like with like on any machine; the CPU time the process used (user + system, best of the same
runs) is printed beside it, as it is less disturbed by a busy machine. Targets (issue 12, on
the development machine):

* ``import checkprofile``                    <= 100 ms
* ``checkprofile --help``                    <= 150 ms
* ``checkprofile lint`` of one PROCESS.md    <= 150 ms
* ``checkprofile conformance``               <= 400 ms

``checkprofile run`` of the README's main job (answers replayed) is shown too, without a target.
The commands run as ``python -m checkprofile`` (what the installed script runs), so the
figures do not depend on where the script is on PATH. The package's bytecode is compiled first,
as installing it does, so no run pays for compiling the source. ``-X importtime`` of each
command is then summed per top-level package (self time, best of 5 runs per module), to show
what each one pulls in.
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "expense-report"

CASES: dict[str, tuple[list[str], float]] = {
    "python -c pass (baseline)": (["-c", "pass"], 0.0),
    "import checkprofile": (["-c", "import checkprofile"], 100.0),
    "checkprofile --help": (["-m", "checkprofile", "--help"], 150.0),
    "checkprofile lint (one file)": (
        ["-m", "checkprofile", "lint", str(EXAMPLE / "PROCESS.md")],
        150.0,
    ),
    "checkprofile conformance": (["-m", "checkprofile", "conformance"], 400.0),
    "checkprofile run (replay)": (
        [
            "-m",
            "checkprofile",
            "run",
            str(EXAMPLE / "PROCESS.md"),
            "--step",
            "assemble",
            "--submission",
            str(EXAMPLE / "submission.json"),
            "--run-data",
            str(EXAMPLE / "run-data.json"),
            "--evaluator",
            f"replay:{EXAMPLE / 'answers' / 'pass.yaml'}",
        ],
        0.0,
    ),
}

# What -X importtime is shown for.
IMPORTS = ("import checkprofile", "checkprofile lint (one file)", "checkprofile conformance")


def best_ms(args: list[str], repeat: int) -> tuple[float, float]:
    """The best wall time and the best CPU time (user + system) of ``repeat`` runs, in ms."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, *args],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(child.pid, 0)
        wall = min(wall, time.perf_counter() - start)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 1):
            raise SystemExit(f"{args}: exit status {child.returncode}")
        cpu = min(cpu, usage.ru_utime + usage.ru_stime)
    return wall * 1000, cpu * 1000


def import_time_by_package(args: list[str], runs: int = 5) -> list[tuple[str, float]]:
    """Import time (ms) spent in each top-level package's own modules by ``args``.

    The sum of each module's *self* time (its best of ``runs``), grouped by its top-level
    package, so nothing is counted twice (``jsonschema`` is its own modules, not the
    ``referencing`` it imports).
    """
    best: dict[str, int] = {}
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        for line in done.stderr.splitlines():
            if not line.startswith("import time:") or line.count("|") != 2:
                continue
            own, _, name = line.split(":", 1)[1].split("|")
            if own.strip().isdigit():  # not the header line
                best[name.strip()] = min(best.get(name.strip(), 10**12), int(own))
    totals: dict[str, float] = defaultdict(float)
    for module, microseconds in best.items():
        totals[module.split(".")[0]] += microseconds / 1000
    return sorted(totals.items(), key=lambda item: -item[1])


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--repeat", type=int, default=15)
    repeat = options.parse_args().repeat
    # As an install does: the figures are those of a package whose bytecode is written.
    compileall.compile_dir(ROOT / "checkprofile", quiet=1)
    figures = {name: best_ms(args, repeat) for name, (args, _) in CASES.items()}
    baseline = figures["python -c pass (baseline)"][0]
    print(f"best of {repeat} runs; ratio to python -c pass ({baseline:.1f} ms)")
    print(f"{'what':32} {'ms':>8} {'ratio':>7} {'target ms':>10}  {'ok':3} {'cpu ms':>8}")
    for name, (_, target) in CASES.items():
        ms, cpu = figures[name]
        ok = "" if not target else ("yes" if ms <= target else "NO")
        shown = f"{target:.0f}" if target else ""
        print(f"{name:32} {ms:8.1f} {ms / baseline:7.2f} {shown:>10}  {ok:3} {cpu:8.1f}")
    for name in IMPORTS:
        print(f"\n-X importtime of `{name}`: ms in each top-level package's own modules")
        for package, ms in import_time_by_package(CASES[name][0])[:10]:
            print(f"  {package:28} {ms:8.1f}")


if __name__ == "__main__":
    main()
