"""Running cases: each stage's runner, and what a run of a case says.

Each stage has its runner in a module of its own (``_<stage>.py``, a ``run(case)`` that raises
:class:`~._shared.Mismatch` where the library's answer differs from the case).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import attrs

from .._shown import error_text
from ._check_keys import run as _check_keys
from ._corpus import STAGES, Case, Stage, Traversable, load_cases
from ._grading import run as _grading
from ._outcomes import run as _outcomes
from ._records import run as _records
from ._shapes import run as _shapes
from ._shared import Mismatch, shown_json
from ._truncation import run as _truncation

__all__ = ["CaseResult", "covered_decisions", "run_case", "run_cases", "run_corpus"]


@attrs.frozen
class CaseResult:
    """The outcome of running one case: ``passed``, and when it did not, ``diff`` says in one
    line where the library's answer first differs from the expectation."""

    id: str
    stage: Stage
    rule: str
    decisions: tuple[int, ...]
    passed: bool
    diff: str
    source: str


# The stage table: each stage's runner, in pipeline order (STAGES). To add a stage: name it in
# Stage, write its runner module and add its row here, then give it a $defs entry (and its name
# in the id pattern and the stage enum) in case.schema.json and a section in
# docs/conformance.md.
_RUNNERS: Final[Mapping[Stage, Callable[[Mapping[str, Any]], None]]] = {
    "check_keys": _check_keys,
    "grading": _grading,
    "truncation": _truncation,
    "outcomes": _outcomes,
    "shapes": _shapes,
    "records": _records,
}
assert tuple(_RUNNERS) == STAGES, "a stage without its runner, or out of pipeline order"


def run_case(case: Case) -> CaseResult:
    """Run one case against this library. Never raises for what the library does: an
    exception is a failed case whose ``diff`` names it."""
    try:
        _RUNNERS[case.stage](case.data)
    except Mismatch as mismatch:
        expected, got = shown_json(mismatch.expected), shown_json(mismatch.got)
        diff = f"{mismatch.where}: expected {expected}, got {got}"
    except Exception as error:  # the library refused what the case expects it to take
        diff = f"raised {error_text(error, 153)}"
    else:
        diff = ""
    return CaseResult(
        id=case.id,
        stage=case.stage,
        rule=case.rule,
        decisions=case.decisions,
        passed=not diff,
        diff=diff,
        source=case.source,
    )


def run_cases(cases: Sequence[Case]) -> tuple[CaseResult, ...]:
    """Run ``cases`` in order."""
    return tuple(run_case(case) for case in cases)


def run_corpus(directory: Traversable | None = None) -> tuple[CaseResult, ...]:
    """Load the corpus in ``directory`` (default: ours) and run every case.

    Raises :class:`CorpusError` when the corpus cannot be loaded (see :func:`load_cases`).
    """
    return run_cases(load_cases(directory))


def covered_decisions(results: Sequence[Case] | Sequence[CaseResult]) -> dict[int, list[str]]:
    """For each design decision, the ids of the cases that cover it (in corpus order)."""
    covered: dict[int, list[str]] = {}
    for item in results:
        for decision in item.decisions:
            covered.setdefault(decision, []).append(item.id)
    return dict(sorted(covered.items()))
