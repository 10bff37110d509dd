"""The public API: the names other people's code imports (the design's contract table)."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import checkprofile

# The design's "Public API contract": these names are stable and must not change meaning.
CONTRACT = [
    "Limits",
    "validate_check",
    "parse_check",
    "Problem",
    "CheckError",
    "Check",
    "Submission",
    "Material",
    "build_bundle",
    "Bundle",
    "YesNoAnswer",
    "ChoiceAnswer",
    "RubricAnswer",
    "grade",
    "combine",
    "error_verdict",
    "Verdict",
    "issue_lines",
    "Evaluator",
    "run_check",
    "run_check_sync",
    "Outcome",
]


def test_every_contract_name_is_exported() -> None:
    for name in CONTRACT:
        assert name in checkprofile.__all__, name
        assert getattr(checkprofile, name) is not None


def test_all_is_sorted_and_complete() -> None:
    assert checkprofile.__all__ == sorted(checkprofile.__all__)
    for name in checkprofile.__all__:
        assert hasattr(checkprofile, name), name


def test_public_modules_import_by_name() -> None:
    testing = importlib.import_module("checkprofile.testing")
    errors = importlib.import_module("checkprofile.errors")
    assert {"ScriptedEvaluator", "RecordingEvaluator"} <= set(testing.__all__)
    assert checkprofile.CheckError is errors.CheckError
    human = importlib.import_module("checkprofile.human")
    assert {"records_for", "receipt_for", "apply_decision", "calibrate"} <= set(human.__all__)
    for name in ("systemone", "openai_decisions", "openai_chat", "cache"):
        importlib.import_module(f"checkprofile.adapters.{name}")  # no SDK call at import


def test_the_package_imports_no_sdk() -> None:
    # A host without the extras imports checkprofile and its human side at no cost.
    code = (
        "import sys, checkprofile, checkprofile.human, checkprofile.cli;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('openai', 'typesafe_sdk')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_contract_signatures() -> None:
    # Keyword-only options where the design puts them behind `*`.
    def kwonly(function: object) -> set[str]:
        parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
        return {p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}

    assert kwonly(checkprofile.validate_check) == {"limits"}
    assert kwonly(checkprofile.parse_check) == {"limits"}
    assert kwonly(checkprofile.build_bundle) == {"state_bytes"}
    assert kwonly(checkprofile.combine) == {"model", "at", "advisory", "truncated"}
    assert kwonly(checkprofile.error_verdict) == {"model", "at", "advisory", "truncated"}
    # max_retry_wait came later, with a default: callers of the contract are unaffected.
    assert kwonly(checkprofile.run_check) == {"limits", "advisory", "now", "max_retry_wait"}
    assert kwonly(checkprofile.run_check_sync) == kwonly(checkprofile.run_check)
    assert inspect.iscoroutinefunction(checkprofile.run_check)
    limits = checkprofile.Limits()
    assert (limits.check_pass, limits.check_fail, limits.check_confidence) == (0.9, None, 0.8)
    assert limits.check_state_bytes == 65536


def test_the_package_is_typed() -> None:
    from importlib import resources

    assert (resources.files("checkprofile") / "py.typed").is_file()
    assert (resources.files("checkprofile") / "schemas" / "check.schema.json").is_file()
    assert (resources.files("checkprofile") / "schemas" / "verdict.schema.json").is_file()
