"""checkprofile: the agentprocess ``check-1`` profile as an embeddable, pure-Python library.

A model answers fixed questions about each submission; a person sees only what it is unsure
of. The pipeline, each stage a pure function over frozen values::

    validate_check / parse_check -> build_bundle -> Evaluator.answer -> grade / combine
        -> issue_lines, all orchestrated by run_check -> Outcome

Only evaluators do I/O. See ``docs/`` for the check key reference and the evaluator guide.
"""

from __future__ import annotations

from ._bundle import Bundle, Evidence, Material, Submission, build_bundle, canonical_json
from ._check import Check, ChoiceQuestion, Kind, Question, RubricQuestion, YesNoQuestion
from ._limits import Limits
from ._lines import answer_text, issue_lines, js_number
from ._process import (
    PROFILE,
    Process,
    ProcessError,
    ProcessProblem,
    ProcessStep,
    describe_fragment,
    lint_process,
    load_process,
    material_for,
    publication_problems,
    read_process,
)
from ._run import (
    Action,
    Evaluator,
    Outcome,
    Reply,
    ask_evaluator,
    outcome_for,
    run_check,
    run_check_sync,
)
from ._schemas import check_schema, core_schema, process_schema, schema_registry, verdict_schema
from ._shapes import check_run_data, run_data_problems, submission_problems
from ._validate import parse_check, validate_check
from ._verdict import (
    Answer,
    ChoiceAnswer,
    Failure,
    QuestionResult,
    Result,
    RubricAnswer,
    Source,
    Verdict,
    VerdictName,
    YesNoAnswer,
    answer_problem,
    combine,
    error_verdict,
    format_at,
    grade,
)
from .errors import (
    AnswerError,
    CheckError,
    CheckprofileError,
    EvaluatorError,
    FailureReason,
    LimitsError,
    MaterialError,
    Problem,
    VerdictError,
    pointer_token,
)

__version__ = "0.1.0"

# Plain sorted() order, the house rule (ruff would put the constant first).
__all__ = [  # noqa: RUF022
    "Action",
    "Answer",
    "AnswerError",
    "Bundle",
    "Check",
    "CheckError",
    "CheckprofileError",
    "ChoiceAnswer",
    "ChoiceQuestion",
    "Evaluator",
    "EvaluatorError",
    "Evidence",
    "Failure",
    "FailureReason",
    "Kind",
    "Limits",
    "LimitsError",
    "Material",
    "MaterialError",
    "Outcome",
    "PROFILE",
    "Problem",
    "Process",
    "ProcessError",
    "ProcessProblem",
    "ProcessStep",
    "Question",
    "QuestionResult",
    "Reply",
    "Result",
    "RubricAnswer",
    "RubricQuestion",
    "Source",
    "Submission",
    "Verdict",
    "VerdictError",
    "VerdictName",
    "YesNoAnswer",
    "YesNoQuestion",
    "__version__",
    "answer_problem",
    "answer_text",
    "ask_evaluator",
    "build_bundle",
    "canonical_json",
    "check_run_data",
    "check_schema",
    "combine",
    "core_schema",
    "describe_fragment",
    "error_verdict",
    "format_at",
    "grade",
    "issue_lines",
    "js_number",
    "lint_process",
    "load_process",
    "material_for",
    "outcome_for",
    "parse_check",
    "pointer_token",
    "process_schema",
    "publication_problems",
    "read_process",
    "run_check",
    "run_check_sync",
    "run_data_problems",
    "schema_registry",
    "submission_problems",
    "validate_check",
    "verdict_schema",
]
