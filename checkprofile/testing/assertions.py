"""Assertions about outcomes, whose failures read like pytest's own diffs.

checkprofile's pytest plugin registers this module for pytest's assertion rewriting, so
:func:`assert_outcome` fails with pytest's comparison of what the outcome holds and what was
expected (``-v`` shows the whole of both). Where the module is not rewritten (the plugin is
off, or a vendored copy), the failure states both sides itself.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any, Final, get_args

from .._outcome import Action, Outcome
from .._shown import show
from .._types import is_mapping, is_sequence
from .._verdict import Result, VerdictName

__all__ = ["assert_outcome"]

_ACTIONS: Final = get_args(Action)
_VERDICTS: Final = get_args(VerdictName)
_RESULTS: Final = get_args(Result)

# pytest's rewriting gives a module this name; without it the comparison is explained here.
_REWRITTEN: Final = "@py_builtins" in globals()


class _Unset(enum.Enum):
    UNSET = enum.auto()


_UNSET: Final = _Unset.UNSET


def assert_outcome(
    outcome: Outcome,
    *,
    action: Action | _Unset = _UNSET,
    verdict: VerdictName | _Unset = _UNSET,
    issues: Sequence[str] | _Unset = _UNSET,
    results: Sequence[Result] | Mapping[str, Result] | _Unset = _UNSET,
    model: str | _Unset = _UNSET,
) -> None:
    """Assert what ``outcome`` holds: its ``action``, its ``verdict`` (``pass``, ``fail``,
    ``unsure``, ``error``), its ``issues`` (the issue lines, in order), the ``results`` of its
    questions (a list in question order, or a map from ``ask`` to result for some of them),
    and the ``model`` its verdict names. Only what is given is compared, all at once, so one
    failure shows every difference.

    Raises ``TypeError`` or ``ValueError`` for an expectation that could never hold (an
    unknown action, a result for a question the check does not have): a typo must not read
    as a wrong outcome.
    """
    __tracebackhide__ = True  # pytest shows the test's line, not this one
    if type(outcome) is not Outcome:
        raise TypeError(f"assert_outcome takes an Outcome, got {show(outcome)}")
    expected: dict[str, Any] = {}
    actual: dict[str, Any] = {}
    if not isinstance(action, _Unset):
        _one_of("action", action, _ACTIONS)
        expected["action"], actual["action"] = action, outcome.action
    if not isinstance(verdict, _Unset):
        _one_of("verdict", verdict, _VERDICTS)
        expected["verdict"], actual["verdict"] = verdict, outcome.verdict.verdict
    if not isinstance(issues, _Unset):
        if isinstance(issues, str) or not is_sequence(issues):
            raise TypeError(f"issues must be a list of issue lines, got {show(issues)}")
        expected["issues"], actual["issues"] = list(issues), list(outcome.issues)
    if not isinstance(results, _Unset):
        expected["results"], actual["results"] = _results(outcome, results)
    if not isinstance(model, _Unset):
        if not isinstance(model, str):
            raise TypeError(f"model must be a string, got {show(model)}")
        expected["model"], actual["model"] = model, outcome.verdict.model
    if not expected:
        raise TypeError(
            "assert_outcome needs something to compare: action=, verdict=, issues=, results="
            " or model="
        )
    if _REWRITTEN:
        assert actual == expected
    elif actual != expected:
        raise AssertionError(_explained(actual, expected))


def _one_of(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {show(value)}")


def _results(outcome: Outcome, results: Sequence[Result] | Mapping[str, Result]) -> tuple[Any, Any]:
    """What was expected and what the outcome holds, in the shape ``results`` was given."""
    recorded = {question.ask: question.result for question in outcome.verdict.questions}
    if is_mapping(results):
        for ask, result in results.items():
            if ask not in recorded:
                asks = ", ".join(show(known) for known in recorded)
                raise ValueError(f"results: no question asks {show(ask)} (the asks: {asks})")
            _one_of(f"the result for {show(ask)}", result, _RESULTS)
        return dict(results), {ask: recorded[ask] for ask in results}
    if isinstance(results, str) or not is_sequence(results):
        raise TypeError(
            f"results must be a list of results or a map from ask to result, got {show(results)}"
        )
    for result in results:
        _one_of("each result", result, _RESULTS)
    return list(results), list(recorded.values())


def _explained(actual: Mapping[str, Any], expected: Mapping[str, Any]) -> str:
    lines = ["the outcome is not what was expected:"]
    for name in expected:
        if actual[name] != expected[name]:
            lines.append(f"  {name}: {actual[name]!r} != {expected[name]!r} (expected)")
    return "\n".join(lines)
