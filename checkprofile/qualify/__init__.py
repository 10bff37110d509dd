"""Qualify a model before it may block: a probe battery, its report, and a gate.

:func:`qualify` asks a check's cases again in other forms (the options of a choice in another
order, a yes/no question as a two-way choice, an unverified claim of quality added to the
submission, the run data cut, the same request twice) and judges what changed against the
evaluator's own repeat noise, with its reliability and its knowledge (do its answers tell the
cases people accepted from those they refused?). What it found is a
:class:`~checkprofile.human.QualificationRecord` to keep in the audit trail, bound to the model
that answered, the check and :data:`BATTERY`; :func:`gate` makes a blocking verdict advisory
while its model has no passing qualification for its check.

This room may import the core, the adapters (to ask past an answer cache) and the audit trail;
nothing below it imports it, nor the faces or the CLI.
"""

from ._battery import (
    BATTERY,
    MAX_REQUESTS,
    BudgetError,
    EvaluatorUnreachableError,
    Qualification,
    plan_requests,
    qualify,
    qualify_sync,
)
from ._cases import CasesError, QualifyCase, read_cases
from ._gate import Qualifications, gate
from ._judge import Thresholds
from ._report import qualification_html, qualification_json, qualification_text
from ._variants import INJECTIONS, PLACES

__all__ = [
    "BATTERY",
    "INJECTIONS",
    "MAX_REQUESTS",
    "PLACES",
    "BudgetError",
    "CasesError",
    "EvaluatorUnreachableError",
    "Qualification",
    "Qualifications",
    "QualifyCase",
    "Thresholds",
    "gate",
    "plan_requests",
    "qualification_html",
    "qualification_json",
    "qualification_text",
    "qualify",
    "qualify_sync",
    "read_cases",
]
