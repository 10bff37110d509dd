"""A mutation run anyone can repeat: cosmic-ray over the modules of tools/mutation.toml.

Each module is mutated on a scratch copy of the working tree (never the tree itself), and each
mutant is judged by the module's own test files only (the map in tools/mutation.toml), so one
mutant costs seconds. The run prints, per module, how many mutants the tests killed and every
survivor as a diff: a survivor is a test to add, or a change no test can see (an equivalent
mutant), which the person running it judges and says so.

    pip install -e ".[mutation]"
    nice -n 19 python tools/mutation.py --sample 40                  # every module, 40 each
    python tools/mutation.py checkprofile/_run.py                    # one module, every mutant
    python tools/mutation.py --sample 40 --seed 7 --json out.json    # the same 40 again, saved
    python tools/mutation.py --count                                 # mutants per module, none run

Not part of CI: a full run takes hours. CONTRIBUTING.md says when to run it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import import_module
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "tools" / "mutation.toml"

# Marks every work item but a seeded sample of them as skipped, with cosmic-ray's own API
# (run in cosmic-ray's interpreter, so this script imports nothing of it).
_SAMPLE = """
import random, sys
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import WorkResult, WorkerOutcome
path, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with use_db(path, WorkDB.Mode.open) as db:
    items = sorted(db.pending_work_items, key=lambda item: (
        str(item.mutations[0].module_path), item.mutations[0].start_pos,
        item.mutations[0].operator_name, item.mutations[0].occurrence))
    kept = set(id(item) for item in random.Random(seed).sample(items, min(size, len(items))))
    skipped = [item.job_id for item in items if id(item) not in kept]
    if skipped:
        db.set_multiple_results(skipped, WorkResult(
            worker_outcome=WorkerOutcome.SKIPPED, output="not in the sample"))
    print(len(items))
"""

# Marks as skipped every work item the map's [equivalent] rules name: a mutant of `operator`
# whose source text just before the mutated token ends with one of the rule's texts. The
# count of items so marked is printed.
_EQUIVALENT = """
import json, sys
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import WorkResult, WorkerOutcome
path, rules = sys.argv[1], json.loads(sys.argv[2])
lines = {}
with use_db(path, WorkDB.Mode.open) as db:
    marked = []
    for item in db.pending_work_items:
        for mutation in item.mutations:
            befores = rules.get(mutation.operator_name, ())
            if not befores:
                continue
            source = mutation.module_path
            if source not in lines:
                lines[source] = source.read_text(encoding="utf-8").splitlines()
            row, column = mutation.start_pos
            if lines[source][row - 1][:column].endswith(tuple(befores)):
                marked.append(item.job_id)
    if marked:
        db.set_multiple_results(marked, WorkResult(
            worker_outcome=WorkerOutcome.SKIPPED, output="equivalent by a rule of the map"))
    print(len(marked))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules of the map (default: all of them)")
    parser.add_argument("--sample", type=int, help="mutants per module, drawn with --seed")
    parser.add_argument("--seed", type=int, default=27, help="the sample's seed (default 27)")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument("--keep", type=Path, help="keep the scratch copy and sessions here")
    parser.add_argument(
        "--count", action="store_true", help="print each module's mutants and run none of them"
    )
    args = parser.parse_args(argv)

    # tomllib from Python 3.11; before it, the toml package cosmic-ray itself depends on.
    toml = import_module("tomllib" if sys.version_info >= (3, 11) else "toml")
    config: dict[str, Any] = toml.loads(CONFIG.read_text(encoding="utf-8"))
    tests_of: dict[str, list[str]] = config["modules"]
    modules = args.modules or list(tests_of)
    unknown = [module for module in modules if module not in tests_of]
    if unknown:
        parser.error(f"not in {CONFIG.relative_to(ROOT)}: {', '.join(unknown)}")
    cosmic_ray = shutil.which("cosmic-ray")
    if cosmic_ray is None:
        parser.error('cosmic-ray is not installed: pip install -e ".[mutation]"')

    scratch = Path(args.keep or tempfile.mkdtemp(prefix="checkprofile-mutation-"))
    tree = scratch / "tree"
    _copy_tree(tree)
    results: dict[str, Any] = {}
    try:
        for module in modules:
            try:
                results[module] = _run_module(
                    module,
                    tests_of[module],
                    config["run"],
                    config.get("equivalent", {}),
                    tree,
                    scratch,
                    args.sample,
                    args.seed,
                    count_only=args.count,
                )
            except _Failed as failed:  # say so, and go on to the next module
                print(f"{module}: not judged: {failed}", flush=True)
                continue
            if args.count:
                print(f"{module}: {results[module]['mutants']} mutants", flush=True)
            else:
                _print_module(module, results[module])
    finally:
        if args.keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.count:
        print(f"total: {sum(found['mutants'] for found in results.values())} mutants")
    else:
        _print_total(results)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


class _Failed(Exception):
    """A step of one module's run failed (its baseline timed out, say)."""


def _copy_tree(tree: Path) -> None:
    """The working tree as it is (tracked and new files, ignored ones left out)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = tree / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _run_module(
    module: str,
    tests: list[str],
    run: dict[str, Any],
    equivalent: dict[str, list[str]],
    tree: Path,
    scratch: Path,
    sample: int | None,
    seed: int,
    *,
    count_only: bool = False,
) -> dict[str, Any]:
    name = module.replace("/", "_").removesuffix(".py")
    session = scratch / f"{name}.sqlite"
    session.unlink(missing_ok=True)
    # -x: the first failing test kills the mutant; the plugin cache off: the scratch copy is
    # read-only in spirit. The scratch tree comes first on the path, so it is what is tested.
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    settings = scratch / f"{name}.toml"
    settings.write_text(
        "[cosmic-ray]\n"
        f"module-path = {json.dumps(module)}\n"
        f"timeout = {float(run['timeout'])}\n"
        "excluded-modules = []\n"
        f"test-command = {json.dumps(shlex.join(command))}\n"
        '[cosmic-ray.distributor]\nname = "local"\n'
        "[cosmic-ray.filters.operators-filter]\n"
        f"exclude-operators = {json.dumps(run['exclude-operators'])}\n",
        encoding="utf-8",
    )
    # The `mutation` hypothesis profile (tests/conftest.py): few examples, the same ones for
    # every mutant, so each is judged in seconds and alike from run to run.
    env = {**os.environ, "PYTHONPATH": str(tree), "HYPOTHESIS_PROFILE": "mutation"}

    def cosmic(*arguments: str) -> str:
        done = subprocess.run(
            arguments, cwd=tree, env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise _Failed(f"{' '.join(arguments[:2])} failed:\n{done.stdout}{done.stderr}")
        return done.stdout

    cosmic("cosmic-ray", "init", str(settings), str(session))
    cosmic("cr-filter-operators", str(session), str(settings))
    cosmic("cr-filter-pragma", str(session))
    rules = json.dumps(equivalent)
    cosmic(sys.executable, "-c", _EQUIVALENT, str(session), rules)
    total = None
    if sample is not None or count_only:
        # A sample of 0 skips every mutant: the count, with nothing run.
        size = 0 if count_only else sample
        total = int(cosmic(sys.executable, "-c", _SAMPLE, str(session), str(size), str(seed)))
    if count_only:
        return {"mutants": total}
    started = time.monotonic()
    cosmic("cosmic-ray", "baseline", str(settings))
    cosmic("cosmic-ray", "exec", str(settings), str(session))
    dumped = cosmic("cosmic-ray", "dump", str(session))
    return _tally(dumped, total, time.monotonic() - started)


def _tally(dumped: str, total: int | None, seconds: float) -> dict[str, Any]:
    counts = {"killed": 0, "survived": 0, "incompetent": 0, "timeout": 0}
    survivors = []
    for line in dumped.splitlines():
        item, result = json.loads(line)
        if result is None or result["worker_outcome"] == "skipped":
            continue
        outcome = result["test_outcome"]
        if result["worker_outcome"] == "abnormal" or (outcome is None and "timeout" in str(result)):
            counts["timeout"] += 1
        elif outcome in counts:
            counts[outcome] += 1
        if outcome == "survived":
            mutation = item["mutations"][0]
            survivors.append(
                {
                    "line": mutation["start_pos"][0],
                    "operator": mutation["operator_name"],
                    "diff": result["diff"],
                }
            )
    run = sum(counts.values())
    return {
        **counts,
        "run": run,
        "mutants": total if total is not None else run,
        "seconds": round(seconds),
        "survivors": sorted(survivors, key=lambda s: (s["line"], s["operator"])),
    }


def _rate(found: dict[str, Any]) -> str:
    judged = found["run"] - found["incompetent"]
    if not judged:
        return "no mutant"
    return f"{100 * (judged - found['survived']) / judged:.0f}%"


def _print_module(module: str, found: dict[str, Any]) -> None:
    print(
        f"{module}: {_rate(found)} killed ({found['run']} run of {found['mutants']}:"
        f" {found['killed']} killed, {found['timeout']} timed out, {found['survived']}"
        f" survived, {found['incompetent']} incompetent; {found['seconds']} s)"
    )
    for survivor in found["survivors"]:
        print(f"  survived: line {survivor['line']}, {survivor['operator']}")
        for line in (survivor["diff"] or "").splitlines()[2:]:
            if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
                print(f"    {line}")
    sys.stdout.flush()


def _print_total(results: dict[str, Any]) -> None:
    run = sum(found["run"] - found["incompetent"] for found in results.values())
    survived = sum(found["survived"] for found in results.values())
    if run:
        print(f"total: {100 * (run - survived) / run:.1f}% of {run} mutants killed")


if __name__ == "__main__":
    sys.exit(main())
