"""The exception family and :class:`Problem`."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import checkprofile
from checkprofile import errors
from checkprofile.errors import (
    AnswerError,
    CheckError,
    CheckprofileError,
    EvaluatorError,
    LimitsError,
    MaterialError,
    Problem,
    VerdictError,
)

# --- the family -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "stdlib"),
    [
        pytest.param(CheckError, ValueError, id="CheckError"),
        pytest.param(LimitsError, ValueError, id="LimitsError"),
        pytest.param(MaterialError, ValueError, id="MaterialError"),
        pytest.param(VerdictError, ValueError, id="VerdictError"),
        pytest.param(AnswerError, ValueError, id="AnswerError"),
        pytest.param(EvaluatorError, RuntimeError, id="EvaluatorError"),
    ],
)
def test_every_error_is_a_checkprofile_error_and_its_stdlib_kin(
    error: type[Exception], stdlib: type[Exception]
) -> None:
    assert issubclass(error, CheckprofileError)
    assert issubclass(error, stdlib)
    assert issubclass(CheckprofileError, Exception)


def test_the_model_misbehaving_is_not_the_input_being_wrong() -> None:
    input_wrong = (CheckError, LimitsError, MaterialError, VerdictError)
    model_misbehaved = (AnswerError, EvaluatorError)
    for a in input_wrong:
        for b in model_misbehaved:
            assert not issubclass(a, b)
            assert not issubclass(b, a)
    assert not issubclass(EvaluatorError, ValueError)


def test_errors_are_exported_at_the_top_level_too() -> None:
    for name in errors.__all__:
        assert getattr(checkprofile, name) is getattr(errors, name)


def test_except_value_error_catches_a_bad_check() -> None:
    with pytest.raises(ValueError):
        checkprofile.parse_check([])


# --- CheckError -------------------------------------------------------------------------------


@pytest.mark.parametrize("problems", [(), []], ids=["empty-tuple", "empty-list"])
def test_check_error_requires_problems(problems: tuple[Problem, ...] | list[Problem]) -> None:
    with pytest.raises(ValueError):
        CheckError(problems)


def test_check_error_carries_and_lists_every_problem() -> None:
    problems = [
        Problem((0, "pass"), "pass must be a number in [0, 1], got 2"),
        Problem((), "the check key must not be empty"),
        Problem((1, "one_of", "a/b"), "a description must not be blank"),
    ]
    error = CheckError(problems)
    assert error.problems == tuple(problems)
    assert isinstance(error.problems, tuple)
    assert str(error) == (
        "the check key has 3 problems:\n"
        "  /0/pass: pass must be a number in [0, 1], got 2\n"
        "  (root): the check key must not be empty\n"
        "  /1/one_of/a~1b: a description must not be blank"
    )


def test_check_error_with_one_problem_says_one_problem() -> None:
    error = CheckError((Problem(("ask",), "ask must not be blank"),))
    assert str(error) == "the check key has 1 problem:\n  /ask: ask must not be blank"


def test_parse_check_raises_check_error_with_every_problem() -> None:
    raw = [{"ask": "", "pass": 2}, {"ask": "Fine?", "pass": 0.9, "colour": "red"}]
    with pytest.raises(CheckError) as caught:
        checkprofile.parse_check(raw)
    problems = caught.value.problems
    assert len(problems) >= 3
    assert {p.path[0] for p in problems} == {0, 1}
    for problem in problems:
        assert str(problem) in str(caught.value)
    assert problems == checkprofile.validate_check(raw)


# --- EvaluatorError ---------------------------------------------------------------------------


def test_evaluator_error_reason_defaults_to_unknown() -> None:
    error = EvaluatorError("the evaluator hung up")
    assert error.reason == "unknown"
    assert str(error) == "the evaluator hung up"


@pytest.mark.parametrize("reason", ["timeout", "rate_limited", "refusal", "malformed", "auth"])
def test_evaluator_error_keeps_its_reason(reason: errors.FailureReason) -> None:
    error = EvaluatorError("no answer", reason=reason)
    assert error.reason == reason
    with pytest.raises(RuntimeError):
        raise error


def test_evaluator_error_reason_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        EvaluatorError("no answer", "timeout")  # type: ignore[call-arg]


# --- Problem ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "pointer"),
    [
        pytest.param((), "", id="root"),
        pytest.param((0,), "/0", id="index"),
        pytest.param((1, "pass"), "/1/pass", id="index-then-key"),
        pytest.param((0, "one_of", "a/b"), "/0/one_of/a~1b", id="slash-escaped"),
        pytest.param((0, "one_of", "a~b"), "/0/one_of/a~0b", id="tilde-escaped"),
        pytest.param((0, "one_of", "~1"), "/0/one_of/~01", id="tilde-before-slash"),
        pytest.param(("",), "/", id="empty-key"),
        pytest.param(("a b",), "/a b", id="space-kept"),
    ],
)
def test_problem_pointer_is_rfc6901(path: tuple[str | int, ...], pointer: str) -> None:
    assert Problem(path, "m").pointer == pointer


@given(st.lists(st.text() | st.integers(min_value=0), max_size=6))
def test_problem_pointer_reads_back_as_its_path(path: list[str | int]) -> None:
    pointer = Problem(path, "m").pointer
    assert pointer.startswith("/") if path else pointer == ""
    tokens = pointer.split("/")[1:] if pointer else []
    unescaped = [token.replace("~1", "/").replace("~0", "~") for token in tokens]
    assert unescaped == [str(token) for token in path]


def test_problem_path_is_a_tuple_and_problems_compare_by_value() -> None:
    problem = Problem([0, "pass"], "too high")
    assert problem.path == (0, "pass")
    assert problem == Problem((0, "pass"), "too high")
    assert problem != Problem((0, "fail"), "too high")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        problem.message = "other"  # type: ignore[misc]


def test_problem_str_shows_where_and_what() -> None:
    assert str(Problem((0, "pass"), "too high")) == "/0/pass: too high"
    assert str(Problem((), "empty")) == "(root): empty"


def test_problem_rerooted_prefixes_the_path() -> None:
    problem = Problem((0, "pass"), "too high")
    moved = problem.rerooted("steps", 3, "check")
    assert moved.path == ("steps", 3, "check", 0, "pass")
    assert moved.pointer == "/steps/3/check/0/pass"
    assert moved.message == "too high"
    assert problem.path == (0, "pass")


def test_the_family_drawn_in_the_errors_docstring_is_every_class_of_it() -> None:
    # A maintainer reads the family in one place: every CheckprofileError the package defines,
    # wherever it lives, is drawn there with the standard exception it also is.
    import importlib
    import pkgutil

    import checkprofile as package

    for module in pkgutil.walk_packages(package.__path__, "checkprofile."):
        if ".cases" not in module.name and not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    family: set[type] = set()
    pending = [errors.CheckprofileError]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub.__module__.startswith("checkprofile."):
                family.add(sub)
                pending.append(sub)
    drawn = errors.__doc__ or ""
    for kind in family:
        if kind.__name__ == "BoundaryError":  # the transport's own, drawn in words
            assert "The adapters' transport raises an :class:`EvaluatorError`" in drawn
            continue
        assert f"+-- {kind.__name__}" in drawn, kind
        for base in kind.__bases__:
            if base.__module__ == "builtins" and base is not Exception:
                line = next(row for row in drawn.splitlines() if f"+-- {kind.__name__}" in row)
                assert base.__name__ in line, (kind, base)
