"""Benchmark: what OpenTelemetry costs, without the extra and with the API but no SDK.

    python benchmarks/bench_telemetry.py [--repeat 7] [--checks 2000] [--adapters]

Each figure is measured in fresh processes in three modes, taking turns:

* ``absent``: the OpenTelemetry API cannot be imported (an import hook refuses it), as
  without the ``otel`` extra;
* ``api``: the API is importable, no SDK is configured (its no-op tracer, meter and logger);
* ``sdk``: the SDK is configured with an in-memory exporter for spans, events and metrics
  (for scale only: what a host that turns telemetry on pays).

Rows: ``import checkprofile`` with the System One adapter (best of ``--repeat`` processes);
the first check of a process (which looks for the API); and ``run_check_sync`` per check
with a scripted evaluator (the library's own cost, where telemetry is the largest share),
the best of ``--repeat`` rounds of ``--checks`` checks. ``--adapters`` also runs
bench_adapters.py (short: 20 checks, 2 rounds) in the ``absent`` and ``api`` modes and prints
both outputs, row for row.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Run first in every child: refuses the API in the "absent" mode; configures the SDK in "sdk".
PRELUDE = """
import os, sys
mode = os.environ["BENCH_OTEL_MODE"]
if mode == "absent":
    class _Refuse:
        def find_spec(self, name, path=None, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                raise ImportError("refused: " + name)
    sys.meta_path.insert(0, _Refuse())
elif mode == "sdk":
    from opentelemetry import _logs, metrics, trace
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    tracing = TracerProvider()
    tracing.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    trace.set_tracer_provider(tracing)
    logs = LoggerProvider()
    logs.add_log_record_processor(SimpleLogRecordProcessor(InMemoryLogRecordExporter()))
    _logs.set_logger_provider(logs)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
"""

IMPORT = """
import time
start = time.perf_counter()
import checkprofile
import checkprofile.adapters.systemone
print(time.perf_counter() - start)
"""

CHECKS = """
import json, sys, time
sys.path.insert(0, "tests")
from loopback import vendor_material
from checkprofile import Limits, YesNoAnswer, parse_check, run_check_sync
from checkprofile.testing import ScriptedEvaluator
check = parse_check("Is the vendor cleared?")
material = vendor_material()
evaluator = ScriptedEvaluator({"Is the vendor cleared?": YesNoAnswer(0.99)})
limits = Limits()
start = time.perf_counter()
run_check_sync(check, material, evaluator, limits=limits)
first = time.perf_counter() - start
count = int(sys.argv[1])
start = time.perf_counter()
for _ in range(count):
    run_check_sync(check, material, evaluator, limits=limits)
print(json.dumps([first, (time.perf_counter() - start) / count]))
"""

MODES = ("absent", "api", "sdk")


def child(mode: str, code: str, *args: str) -> str:
    env = {**os.environ, "BENCH_OTEL_MODE": mode, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + code, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def main() -> None:
    options = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    options.add_argument("--repeat", type=int, default=7)
    options.add_argument("--checks", type=int, default=2000)
    options.add_argument("--adapters", action="store_true")
    args = options.parse_args()

    imports: dict[str, list[float]] = {mode: [] for mode in MODES}
    firsts: dict[str, list[float]] = {mode: [] for mode in MODES}
    per_check: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(args.repeat):
        for mode in MODES:  # taking turns, so a busy moment of the machine hits all alike
            imports[mode].append(float(child(mode, IMPORT)))
            first, each = json.loads(child(mode, CHECKS, str(args.checks)))
            firsts[mode].append(first)
            per_check[mode].append(each)

    def row(name: str, figures: dict[str, list[float]], unit: float, label: str) -> None:
        best = {mode: min(values) for mode, values in figures.items()}
        ratio = best["api"] / best["absent"]
        shown = "  ".join(f"{mode} {best[mode] * unit:8.1f} {label}" for mode in MODES)
        print(f"{name:<34} {shown}  api/absent {ratio:5.3f}")

    row("import checkprofile + systemone", imports, 1e3, "ms")
    row("first run_check_sync", firsts, 1e3, "ms")
    row("run_check_sync per check", per_check, 1e6, "us")

    if args.adapters:
        script = str(ROOT / "benchmarks" / "bench_adapters.py")
        for mode in ("absent", "api"):
            print(f"\n--- bench_adapters.py, {mode} ---")
            code = (
                "import runpy\n"
                f"sys.argv = [{script!r}, '--checks', '20', '--repeat', '2']\n"
                "sys.path.insert(0, 'benchmarks')\n"
                f"runpy.run_path({script!r}, run_name='__main__')\n"
            )
            print(child(mode, code), end="")


if __name__ == "__main__":
    main()
