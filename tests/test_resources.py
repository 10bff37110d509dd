"""Resource tests: hostile inputs of every size, run in a subprocess whose memory and CPU are
bounded by ``resource.setrlimit`` (RLIMIT_AS, RLIMIT_CPU). Each must finish inside its limits
(never killed by them) with the right outcome. No timing is asserted: a runaway shows as a
process the kernel stopped, not as a slow test.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXPENSE = ROOT / "examples" / "expense-report"
MB = 2**20

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="resource limits are POSIX")


def _limits(memory_mb: int, cpu_seconds: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb * MB, memory_mb * MB))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))

    return apply


def limited(
    args: list[str | Path], *, memory_mb: int, cpu_seconds: int
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` with at most ``memory_mb`` of address space and ``cpu_seconds`` of CPU.
    The wall-clock timeout only guards the suite (the machine may be busy): the CPU limit is
    what the test is about."""
    result = subprocess.run(
        [sys.executable, *map(str, args)],
        capture_output=True,
        text=True,
        errors="backslashreplace",
        cwd=ROOT,
        preexec_fn=_limits(memory_mb, cpu_seconds),
        timeout=cpu_seconds * 20 + 60,
    )
    killed = -result.returncode if result.returncode < 0 else None
    assert killed is None, f"killed by {signal.Signals(killed).name}: {result.stderr[-500:]}"
    assert "MemoryError" not in result.stderr, result.stderr[-500:]
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return result


def checkprofile(
    *args: str | Path, memory_mb: int = 400, cpu_seconds: int = 30
) -> subprocess.CompletedProcess[str]:
    return limited(["-m", "checkprofile", *args], memory_mb=memory_mb, cpu_seconds=cpu_seconds)


def python(code: str, *, memory_mb: int = 400, cpu_seconds: int = 30) -> str:
    """Run ``code`` (which prints its verdict) and return what it printed."""
    result = limited(["-c", textwrap.dedent(code)], memory_mb=memory_mb, cpu_seconds=cpu_seconds)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout.strip()


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("checkprofile: ")
    assert len(lines[0]) < 1000
    return lines[0]


def run_args(**files: Path) -> list[str | Path]:
    return [
        "run",
        EXPENSE / "PROCESS.md",
        "--step",
        "assemble",
        "--submission",
        files.get("submission", EXPENSE / "submission.json"),
        "--run-data",
        files.get("run_data", EXPENSE / "run-data.json"),
        "--evaluator",
        f"replay:{files.get('answers', EXPENSE / 'answers' / 'pass.yaml')}",
        "--now",
        "2026-11-30T10:00:00Z",
    ]


def yaml_bomb(levels: int = 9, width: int = 10, indent: str = "") -> str:
    """The billion laughs in YAML: about 0.5 KB standing for width ** levels values."""
    lines = [f"{indent}a0: &a0 [{', '.join(['lol'] * width)}]"]
    for level in range(1, levels):
        refs = ", ".join([f"*a{level - 1}"] * width)
        lines.append(f"{indent}a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n"


# --- alias bombs --------------------------------------------------------------------------------


def test_a_half_kilobyte_alias_bomb_given_to_conformance_is_refused_in_its_limits(
    tmp_path: Path,
) -> None:
    # The issue's report: 0.4 KB grew to 7 GB and never finished.
    case = (
        "- id: check_keys/bomb\n  stage: check_keys\n  rule: A bomb.\n  decisions: [1]\n"
        + yaml_bomb(indent="  ")
        + "  check: *a8\n  expect: {valid: true, full: []}\n"
    )
    assert len(case.encode()) < 1024
    (tmp_path / "check_keys").mkdir()
    (tmp_path / "check_keys" / "cases.yaml").write_text(case)
    result = checkprofile("conformance", tmp_path, memory_mb=400, cpu_seconds=30)
    assert result.returncode == 2
    assert "repeat it to more than 10,000,000" in one_line(result)


@pytest.mark.parametrize("role", ["submission", "run_data", "answers"])
def test_an_alias_bomb_in_any_yaml_input_is_refused_in_its_limits(
    tmp_path: Path, role: str
) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(yaml_bomb())
    result = checkprofile(*run_args(**{role: path}))
    assert result.returncode == 2
    assert "more than 1,000,000 values once aliases are expanded" in one_line(result)


def test_an_alias_of_a_long_text_repeated_is_refused_in_its_limits(tmp_path: Path) -> None:
    # One node each, but every copy is text written out where the data is shown: 20 GB.
    path = tmp_path / "run.yaml"
    path.write_text("a: &a " + "x" * 200_000 + "\nb: [" + ", ".join(["*a"] * 100_000) + "]\n")
    result = checkprofile(*run_args(run_data=path))
    assert result.returncode == 2
    assert "aliases repeat more than 10,000,000 characters" in one_line(result)


def test_an_alias_bomb_in_a_process_file_is_refused_by_lint_in_its_limits(tmp_path: Path) -> None:
    text = (EXPENSE / "PROCESS.md").read_text()
    path = tmp_path / "PROCESS.md"
    path.write_text(
        text.replace("---\nname:", "---\nx-bomb:\n" + yaml_bomb(indent="  ") + "name:", 1)
    )
    result = checkprofile("lint", path)
    assert result.returncode == 2
    assert "values once aliases are expanded" in result.stdout


@pytest.mark.parametrize(
    "call",
    [
        "cp.validate_check([{'ask': 'x', 'one_of': {'a': bomb, 'b': 'B'}, 'pass': ['a']}])",
        "cp.run_data_problems({'inputs': {}, 'steps': {'a': {'history': bomb}}})",
        "cp.Verdict.from_json({'verdict': 'pass', 'questions': bomb})",
        "cp.Submission({'lol': bomb})",
        "cp.build_bundle(CHECK, MATERIAL({'inputs': {'lol': bomb}}), state_bytes=65536)",
        "cp.build_bundle(CHECK, MATERIAL({'steps': {'a': {'lol': bomb}}}), state_bytes=65536)",
        "cp.canonical_json(bomb)",
        "human.decision_from_json({'kind': 'completed', 'by': 'a', 'at': 'x', 'output': bomb})",
        "cp.Limits.from_json({'x': bomb})",
    ],
    ids=[
        "validate_check",
        "run_data_problems",
        "Verdict.from_json",
        "Submission",
        "build_bundle(inputs)",
        "build_bundle(steps)",
        "canonical_json",
        "decision_from_json",
        "Limits.from_json",
    ],
)
def test_a_python_value_that_shares_its_parts_is_refused_in_its_limits(call: str) -> None:
    # What PyYAML or ruamel.yaml's safe loader builds from an alias bomb: ten objects in memory
    # standing for 10 ** 30 values. Nothing walks it to the end.
    code = f"""
        import checkprofile as cp, checkprofile.human as human
        node = ['lol'] * 10
        for _ in range(30):
            node = [node] * 10
        bomb = node
        CHECK = cp.parse_check('Done?')
        def MATERIAL(run_data):
            return cp.Material('i', 'b', run_data, cp.Submission({{}}))
        try:
            result = {call}
        except cp.CheckprofileError as error:
            print('refused:', type(error).__name__, str(error)[:300])
        except ValueError as error:
            print('refused:', type(error).__name__, str(error)[:300])
        else:
            print('returned:', str(result)[:300])
    """
    out = python(code)
    assert "repeat it to more than 10,000,000" in out, out


# --- files of 100 MB --------------------------------------------------------------------------


def big_run_data(path: Path, *, extra_key: bool) -> None:
    """About 100 MB of core-2 run data: a thousand steps of 100 KB each (the size that
    matters is the text's; the shape is checked per step)."""
    body = "Screened against the consolidated list; no match on name, alias or address. " * 1300
    steps = {
        f"step_{i:04d}": {
            "output": {"notes": body, "n": i},
            "at": "2026-10-06T09:00:00Z",
            "history": [],
        }
        for i in range(1000)
    }
    data: dict[str, object] = {"inputs": {"vendor": "ACME"}, "steps": steps}
    text = json.dumps(data, indent=1)
    if extra_key:  # one bad key, at the very end of the file
        text = text[: text.rindex("}")] + ',\n "extra": 1\n}'
    path.write_text(text)
    assert path.stat().st_size > 95 * 10**6


@pytest.fixture(scope="module")
def big_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("big")
    good, bad = folder / "run.json", folder / "run-bad.json"
    big_run_data(good, extra_key=False)
    big_run_data(bad, extra_key=True)
    return good, bad


def _cpu_of(result: subprocess.CompletedProcess[str]) -> float:
    return float(result.stdout.strip().splitlines()[-1])


def _bundle_cpu(path: Path) -> subprocess.CompletedProcess[str]:
    # The command's own CPU time, printed by a wrapper: the limits bound it, the ratio compares.
    code = f"""
        import contextlib, io, resource, sys
        from checkprofile.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(['bundle', {str(EXPENSE / "PROCESS.md")!r}, '--step', 'assemble',
                         '--submission', {str(EXPENSE / "submission.json")!r},
                         '--run-data', {str(path)!r}])
        print(code)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(usage.ru_utime + usage.ru_stime)
    """
    return limited(["-c", textwrap.dedent(code)], memory_mb=1500, cpu_seconds=120)


def test_a_100_mb_run_data_file_is_bundled_in_its_limits(big_files: tuple[Path, Path]) -> None:
    good, _ = big_files
    result = _bundle_cpu(good)
    assert result.stdout.splitlines()[0] == "0", result.stderr[-2000:]


def test_a_100_mb_file_with_one_bad_key_is_refused_at_its_line_as_fast_as_read(
    big_files: tuple[Path, Path],
) -> None:
    # Finding where the bad key is used to read the whole file again as YAML: 40 times as
    # long as reading it. Now it is one pass over the text: the refusal costs about what the
    # reading does (a factor of 3 leaves room for a busy machine; 40 does not fit).
    good, bad = big_files
    refused = _bundle_cpu(bad)
    assert refused.stdout.splitlines()[0] == "2"
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"checkprofile: {bad}:")
    assert ': /extra: unknown key "extra"' in line
    line_number = int(line.split(":")[2])
    assert line_number == bad.read_text().count("\n")  # the last line but one, where it is
    valid = _bundle_cpu(good)
    assert _cpu_of(refused) < 3 * _cpu_of(valid) + 1


# --- many keys, deep nesting, long numbers ------------------------------------------------------


def test_200k_top_level_run_data_keys_are_cut_in_their_limits() -> None:
    # Each key dropped used to re-add every size: 200k keys took 220 s.
    code = """
        import checkprofile as cp
        run = {f"k{i:06d}": "x" * 20 for i in range(200_000)}
        run.update({"inputs": {}, "steps": {}})
        material = cp.Material("i", "b", run, cp.Submission({}))
        bundle = cp.build_bundle(cp.parse_check("Done?"), material, state_bytes=1000)
        print(len(bundle.dropped_fields), bundle.run_data_bytes <= 1000)
    """
    out = python(code, memory_mb=800, cpu_seconds=30)
    first, fits = out.split()
    assert int(first) > 199_000 and fits == "True"


def test_a_json_file_nested_100k_deep_is_one_line_in_its_limits(tmp_path: Path) -> None:
    path = tmp_path / "sub.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    result = checkprofile(*run_args(submission=path))
    assert result.returncode == 2
    assert "nested too deeply" in one_line(result)


def test_a_million_digit_integer_is_one_line_in_its_limits(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text('{"inputs": {"n": ' + "7" * 1_000_000 + '}, "steps": {}}')
    result = checkprofile(*run_args(run_data=path))
    assert result.returncode == 2
    assert "an integer of 1000000 digits is too long to read" in one_line(result)


def test_a_megabyte_key_in_a_check_is_one_short_problem_in_its_limits() -> None:
    code = """
        import checkprofile
        key = "x" * 1_000_000 + "\\n"
        problems = checkprofile.validate_check([{"ask": "Done?", key: 1, "pass": ["a"] * 100_000}])
        print(len(problems), max(len(str(p)) for p in problems))
    """
    count, longest = python(code).split()
    assert int(count) >= 1 and int(longest) < 1000


def test_a_choice_of_30k_names_against_30k_unknown_ones_is_checked_in_its_limits() -> None:
    # One problem per unknown name; difflib's hints and the listing of one_of are bounded.
    code = """
        import checkprofile
        one_of = {f"n{i}": "A name." for i in range(30_000)}
        wrong = [f"m{i}" for i in range(30_000)]
        problems = checkprofile.validate_check([{"ask": "Which?", "one_of": one_of, "pass": wrong}])
        print(len(problems), max(len(p.message) for p in problems))
    """
    count, longest = python(code, memory_mb=800).split()
    assert int(count) == 30_000 and int(longest) < 400


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads /proc")
def test_the_limits_are_real() -> None:
    # The harness itself: a process over its address space is stopped, so a pass above means
    # the input was handled inside the limits, not that the limits did nothing.
    result = subprocess.run(
        [sys.executable, "-c", "x = bytearray(600 * 2**20)"],
        capture_output=True,
        text=True,
        preexec_fn=_limits(400, 10),
        timeout=60,
    )
    assert result.returncode != 0 and "MemoryError" in result.stderr
