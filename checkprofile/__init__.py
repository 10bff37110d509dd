"""checkprofile: the agentprocess ``check-1`` profile as an embeddable, pure-Python library.

A model answers fixed questions about each submission; a person sees only what it is unsure
of. The pipeline, each stage a pure function over frozen values::

    validate_check / parse_check -> build_bundle -> Evaluator.answer -> grade / combine
        -> issue_lines, all orchestrated by run_check -> Outcome

Only evaluators do I/O. See ``docs/`` for the check key reference and the evaluator guide.

``import checkprofile`` loads nothing but this file: each name below is imported from its
module the first time it is used, so a host (or the command line) pays only for what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what type checkers and editors see; at run time, _MODULES below
    from ._bundle import Bundle, Evidence, Material, Submission, build_bundle, canonical_json
    from ._check import Check, ChoiceQuestion, Kind, Question, RubricQuestion, YesNoQuestion
    from ._evaluator import Evaluator, Reply, ask_evaluator
    from ._limits import Limits
    from ._lines import answer_text, issue_lines, js_number
    from ._objective import objective_problems
    from ._outcome import Action, Outcome, outcome_for
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
        process_problems,
        publication_problems,
        read_process,
    )
    from ._run import run_check, run_check_sync
    from ._schemas import check_schema, core_schema, process_schema, schema_registry, verdict_schema
    from ._shapes import check_run_data, run_data_problems, submission_problems
    from ._usage import ModelCall, Usage, reported_usage
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
    from ._version import __version__
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

# Where each public name lives (the imports above, as data). tests/test_startup.py checks that
# the two agree and that every name resolves.
_MODULES: dict[str, str] = {
    "Bundle": "._bundle",
    "Evidence": "._bundle",
    "Material": "._bundle",
    "Submission": "._bundle",
    "build_bundle": "._bundle",
    "canonical_json": "._bundle",
    "Check": "._check",
    "ChoiceQuestion": "._check",
    "Kind": "._check",
    "Question": "._check",
    "RubricQuestion": "._check",
    "YesNoQuestion": "._check",
    "Limits": "._limits",
    "answer_text": "._lines",
    "issue_lines": "._lines",
    "js_number": "._lines",
    "PROFILE": "._process",
    "Process": "._process",
    "ProcessError": "._process",
    "ProcessProblem": "._process",
    "ProcessStep": "._process",
    "describe_fragment": "._process",
    "lint_process": "._process",
    "load_process": "._process",
    "material_for": "._process",
    "objective_problems": "._objective",
    "process_problems": "._process",
    "publication_problems": "._process",
    "read_process": "._process",
    "Action": "._outcome",
    "Evaluator": "._evaluator",
    "Outcome": "._outcome",
    "Reply": "._evaluator",
    "ask_evaluator": "._evaluator",
    "outcome_for": "._outcome",
    "run_check": "._run",
    "run_check_sync": "._run",
    "check_schema": "._schemas",
    "core_schema": "._schemas",
    "process_schema": "._schemas",
    "schema_registry": "._schemas",
    "verdict_schema": "._schemas",
    "check_run_data": "._shapes",
    "run_data_problems": "._shapes",
    "submission_problems": "._shapes",
    "ModelCall": "._usage",
    "Usage": "._usage",
    "reported_usage": "._usage",
    "parse_check": "._validate",
    "validate_check": "._validate",
    "Answer": "._verdict",
    "ChoiceAnswer": "._verdict",
    "Failure": "._verdict",
    "QuestionResult": "._verdict",
    "Result": "._verdict",
    "RubricAnswer": "._verdict",
    "Source": "._verdict",
    "Verdict": "._verdict",
    "VerdictName": "._verdict",
    "YesNoAnswer": "._verdict",
    "answer_problem": "._verdict",
    "combine": "._verdict",
    "error_verdict": "._verdict",
    "format_at": "._verdict",
    "grade": "._verdict",
    "AnswerError": ".errors",
    "CheckError": ".errors",
    "CheckprofileError": ".errors",
    "EvaluatorError": ".errors",
    "FailureReason": ".errors",
    "LimitsError": ".errors",
    "MaterialError": ".errors",
    "Problem": ".errors",
    "VerdictError": ".errors",
    "pointer_token": ".errors",
    "__version__": "._version",
}

# The public submodules, for ``checkprofile.errors`` after a bare ``import checkprofile``.
_SUBMODULES = frozenset({"adapters", "conformance", "errors", "human", "testing"})

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
    "ModelCall",
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
    "Usage",
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
    "objective_problems",
    "outcome_for",
    "parse_check",
    "pointer_token",
    "process_problems",
    "process_schema",
    "publication_problems",
    "read_process",
    "reported_usage",
    "run_check",
    "run_check_sync",
    "run_data_problems",
    "schema_registry",
    "submission_problems",
    "validate_check",
    "verdict_schema",
]


if not TYPE_CHECKING:  # hidden from type checkers, which would then take any name as valid

    def __getattr__(name: str) -> object:
        if name in _SUBMODULES:
            from importlib import import_module

            return import_module(f".{name}", __name__)
        # `from .module import name`, spelt out: the import statement's own machinery, so that
        # `python -X importtime` shows each module a name loads.
        module = _MODULES.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(__import__(module[1:], globals(), None, [name], 1), name)
        globals()[name] = value  # found once, then an ordinary attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
