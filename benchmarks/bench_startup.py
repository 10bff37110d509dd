"""Start-up cost: importing the package and running short commands, against a bare interpreter.

    python benchmarks/bench_startup.py [--repeat N]

Every figure is the best of N fresh interpreters (default 15): start-up is noisy, and the best
run is the one least disturbed by the rest of the machine. Each is printed in milliseconds and
as a ratio to ``python -c pass`` measured in the same run, so the figures compare like with
like on any machine. Targets (issue 12, on the development machine):

* ``import checkprofile``                    <= 100 ms
* ``checkprofile --help``                    <= 150 ms
* ``checkprofile lint`` of one PROCESS.md    <= 150 ms
* ``checkprofile conformance``               <= 400 ms

The commands run as ``python -m checkprofile`` (what the installed script runs), so the
figures do not depend on where the script is on PATH. ``-X importtime`` of ``import
checkprofile`` is summed per top-level package (self time), to show what the import pulls in.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "expense-report" / "PROCESS.md"

CASES: dict[str, tuple[list[str], float]] = {
    "python -c pass (baseline)": (["-c", "pass"], 0.0),
    "import checkprofile": (["-c", "import checkprofile"], 100.0),
    "checkprofile --help": (["-m", "checkprofile", "--help"], 150.0),
    "checkprofile lint (one file)": (["-m", "checkprofile", "lint", str(EXAMPLE)], 150.0),
    "checkprofile conformance": (["-m", "checkprofile", "conformance"], 400.0),
}


def best_ms(args: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, check=True)
        best = min(best, time.perf_counter() - start)
    return best * 1000


def import_time_by_package() -> list[tuple[str, float]]:
    """Import time (ms) spent in each top-level package's own modules by ``import checkprofile``.

    The sum of each module's *self* time, grouped by its top-level package, so nothing is
    counted twice (``jsonschema`` is its own modules, not the ``referencing`` it imports).
    """
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import checkprofile"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    totals: dict[str, float] = defaultdict(float)
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or line.count("|") != 2:
            continue
        own, _, name = line.split(":", 1)[1].split("|")
        if own.strip().isdigit():  # not the header line
            totals[name.strip().split(".")[0]] += int(own) / 1000
    return sorted(totals.items(), key=lambda item: -item[1])


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--repeat", type=int, default=15)
    repeat = options.parse_args().repeat
    figures = {name: best_ms(args, repeat) for name, (args, _) in CASES.items()}
    baseline = figures["python -c pass (baseline)"]
    print(f"best of {repeat} runs; ratio to python -c pass ({baseline:.1f} ms)")
    print(f"{'what':32} {'ms':>8} {'ratio':>7} {'target ms':>10}  ok")
    for name, (_, target) in CASES.items():
        ms = figures[name]
        ok = "" if not target else ("yes" if ms <= target else "NO")
        shown = f"{target:.0f}" if target else ""
        print(f"{name:32} {ms:8.1f} {ms / baseline:7.2f} {shown:>10}  {ok}")
    print("\n-X importtime of `import checkprofile`: ms in each top-level package's own modules")
    for package, ms in import_time_by_package()[:12]:
        print(f"  {package:28} {ms:8.1f}")


if __name__ == "__main__":
    main()
