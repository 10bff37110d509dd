"""vLLM's own request and response models for ``/v1/decisions`` and ``/v1/systemone``, and the
code that builds its answers, imported from its wheel.

vLLM 0.33 serves both routes (``/v1/systemone`` since 0.32) from a running engine, which
needs a GPU here. Its decision protocol is plain Python and pydantic, in five modules of the
wheel: ``serve/engine/protocol.py`` (``OpenAIBaseModel``, ``ErrorResponse``),
``openai/decisions/protocol.py`` (``DecisionRequest``, ``DecisionResponse``),
``openai/decisions/question_types.py`` (how a System One question's criteria become options,
and each answer is built from the label probabilities), ``openai/decisions/adapters.py`` (the
same for a Decisions question) and ``generate/structured_decisions/protocol.py``
(``StructuredDecisionRequest``, ``StructuredDecisionResponse``). They are imported here from
the wheel as they are (``pip download --no-deps vllm==0.33.0``; ``ENV`` names the wheel
file), without running the package's ``__init__`` (which loads torch): the packages above
them are made empty namespaces, and three helpers they import are stand-ins:
``vllm.logger.init_logger`` (a standard logger), ``vllm.utils.random_uuid`` (a uuid's hex)
and ``validate_cache_salt`` (which the library never sends: the stand-in refuses any salt).

:func:`vllm_decisions` and :func:`vllm_systemone` are loopback hosts built from them: each
request is validated by vLLM's request model (a refusal is the 400 its handlers write), each
question becomes options through vLLM's own question types, and each answer is built by
vLLM's own answer code from label probabilities chosen here (:func:`label_probabilities`),
then dumped by its response model. Only the engine's read of those probabilities from a model
is not vLLM's.

Nothing of vLLM is kept in this repository: the wheel is read where it lies.
"""

from __future__ import annotations

import logging
import os
import sys
import types
import uuid
import zipfile
from collections.abc import Callable
from functools import cache
from typing import Any

import pydantic
from loopback import Recorded, Scripted

__all__ = [
    "ENV",
    "LABEL_MASS",
    "SERVED",
    "VERSION",
    "label_probabilities",
    "protocol",
    "vllm_decisions",
    "vllm_systemone",
]

#: The environment variable naming vLLM's wheel (a ``.whl`` file).
ENV = "CHECKPROFILE_TEST_VLLM_WHEEL"

#: The vLLM release whose protocol the adapters are checked against.
VERSION = "0.33.0"

_ROOT = "vllm.entrypoints"
# The modules read from the wheel, in the order they import one another, by the name each has
# in the namespace :func:`protocol` returns.
_SHORT = {
    f"{_ROOT}.serve.engine.protocol": "engine",
    f"{_ROOT}.openai.decisions.protocol": "decisions",
    f"{_ROOT}.openai.decisions.question_types": "question_types",
    f"{_ROOT}.openai.decisions.adapters": "adapters",
    f"{_ROOT}.generate.structured_decisions.protocol": "systemone",
}
_MODULES = {
    f"{_ROOT}.serve.engine.protocol": "vllm/entrypoints/serve/engine/protocol.py",
    f"{_ROOT}.openai.decisions.protocol": "vllm/entrypoints/openai/decisions/protocol.py",
    f"{_ROOT}.openai.decisions.question_types": (
        "vllm/entrypoints/openai/decisions/question_types.py"
    ),
    f"{_ROOT}.openai.decisions.adapters": "vllm/entrypoints/openai/decisions/adapters.py",
    f"{_ROOT}.generate.structured_decisions.protocol": (
        "vllm/entrypoints/generate/structured_decisions/protocol.py"
    ),
}
_STAND_INS = ("vllm.logger", "vllm.utils", f"{_ROOT}.generate.base.protocol")


class _Logger(logging.LoggerAdapter):  # type: ignore[type-arg]
    def warning_once(self, message: str, *args: Any) -> None:
        self.warning(message, *args)


def _validate_cache_salt(cache_salt: object) -> None:
    if cache_salt is not None:
        raise ValueError("the stand-in takes no cache_salt (the library never sends one)")


@cache
def protocol(wheel: str | None = None) -> types.SimpleNamespace:
    """vLLM's decision protocol from ``wheel`` (default: ``$ENV``): its modules as
    ``engine`` (``ErrorResponse``), ``decisions`` (``DecisionRequest``, ``DecisionResponse``),
    ``question_types`` (``build_question``, ``QUESTION_TYPES``), ``adapters``
    (``make_read_question``, ``make_answer``) and ``systemone``
    (``StructuredDecisionRequest``, ``StructuredDecisionResponse``). Raises ``LookupError``
    when no wheel is named, and ``ImportError`` when a module cannot be imported."""
    path = wheel or os.environ.get(ENV)
    if not path:
        raise LookupError(f"set {ENV} to vLLM's wheel (pip download --no-deps vllm=={VERSION})")
    with zipfile.ZipFile(path) as archive:
        sources = {name: archive.read(file).decode("utf-8") for name, file in _MODULES.items()}
    names = sorted({*_packages(), *_STAND_INS, *_MODULES})
    saved = {name: sys.modules.get(name) for name in names}
    found: dict[str, Any] = {}
    try:
        for name in _packages():
            package = types.ModuleType(name)
            package.__path__ = []
            sys.modules[name] = package
        logger = types.ModuleType("vllm.logger")
        logger.init_logger = lambda name: _Logger(logging.getLogger(name), {})  # type: ignore[attr-defined]
        sys.modules["vllm.logger"] = logger
        utils = types.ModuleType("vllm.utils")
        utils.random_uuid = lambda: uuid.uuid4().hex[:16]  # type: ignore[attr-defined]
        sys.modules["vllm.utils"] = utils
        base = types.ModuleType(f"{_ROOT}.generate.base.protocol")
        base.validate_cache_salt = _validate_cache_salt  # type: ignore[attr-defined]
        sys.modules[base.__name__] = base
        for name, source in sources.items():
            module = types.ModuleType(name)
            module.__file__ = f"{path}/{_MODULES[name]}"
            module.__package__ = name.rpartition(".")[0]
            sys.modules[name] = module  # pydantic resolves the module's annotations through it
            exec(compile(source, module.__file__, "exec"), module.__dict__)
            found[_SHORT[name]] = module
        return types.SimpleNamespace(**found)
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous


def _packages() -> list[str]:
    packages = {"vllm"}
    for name in [*_MODULES, *_STAND_INS]:
        parts = name.split(".")[:-1]
        packages.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return sorted(packages, key=lambda name: name.count("."))


# --- A host that answers as vLLM's route handlers do, with vLLM's own code ---------------------


#: The name vLLM answers with: its served model's (``--served-model-name``), not the request's.
SERVED = "Qwen/Qwen3-0.6B"
#: The labels' share of the whole vocabulary's probability, as vLLM reports it.
LABEL_MASS = 0.875


def label_probabilities(count: int) -> list[float]:
    """The probabilities the engine would read for ``count`` labels: rising, so the last
    option is the most probable, and summing to 1."""
    total = count * (count + 1) / 2
    return [(index + 1) / total for index in range(count)]


def refusal(error: Exception) -> Scripted:
    """The 400 vLLM's handlers write: ``create_error_response`` for its own errors, and its
    RequestValidationError handler (``handlers/validation.py``, read, not run: it needs
    FastAPI) for pydantic's: each error as a dict, its ``loc`` joined with its internal
    markers left out, its ``input`` a string cut at 200 characters or a container described
    by its size."""
    if isinstance(error, pydantic.ValidationError):
        errors = error.errors(include_url=False)
        listed = "".join(f"  {_formatted(dict(e))}\n" for e in errors[:10])
        label = "error" if len(errors) == 1 else "errors"
        message = f"{len(errors)} validation {label}:\n{listed}".rstrip()
        body = {"message": message, "type": "Bad Request", "param": "body", "code": 400}
    else:
        body = {"message": str(error), "type": "BadRequestError", "param": None, "code": 400}
    return Scripted(status=400, json={"error": body})


# The parts of a pydantic loc that vLLM's handler leaves out (a few of its list).
_INTERNAL = frozenset({"function-wrap", "function-after", "json-or-python", "tagged-union", "str"})


def _formatted(error: dict[str, Any]) -> str:
    value = error.get("input")
    if isinstance(value, str):
        error["input"] = value if len(value) <= 200 else value[:200] + "...[truncated]"
    elif isinstance(value, (list, tuple, set, frozenset, dict)):
        error["input"] = f"<{type(value).__name__} of {len(value)} items>"
    parts = [str(p) for p in ("body", *error["loc"])]
    kept = [p for p in parts if p.lower() not in _INTERNAL and not any(c in p for c in "[]{}()")]
    error["loc"] = ".".join(kept or parts)
    text = str(error)
    return text if len(text) <= 1000 else text[:1000] + "...[truncated]"


def vllm_decisions(protocol: Any) -> Callable[[Recorded], Scripted]:
    """A host answering ``POST /v1/decisions`` as vLLM 0.33's route does."""
    decisions, adapters = protocol.decisions, protocol.adapters

    def respond(request: Recorded) -> Scripted:
        try:
            asked = decisions.DecisionRequest.model_validate(request.json)
            read = [adapters.make_read_question(i, q) for i, q in enumerate(asked.questions)]
        except (pydantic.ValidationError, ValueError) as error:
            return refusal(error)
        answers = [
            adapters.make_answer(question, label_probabilities(len(q.options)), LABEL_MASS)
            for question, q in zip(asked.questions, read, strict=True)
        ]
        response = decisions.DecisionResponse(
            model=SERVED,
            answers=answers,
            usage=decisions.OpenAIDecisionUsage(
                input_tokens=321,
                output_tokens=len(answers),
                total_tokens=321 + len(answers),
                input_tokens_details=decisions.InputTokensDetails(cached_tokens=300),
                output_tokens_details=decisions.OutputTokensDetails(),
            ),
        )
        return Scripted(json=response.model_dump())

    return respond


def vllm_systemone(protocol: Any) -> Callable[[Recorded], Scripted]:
    """A host answering ``POST /v1/systemone`` as vLLM 0.33's route does."""
    systemone, types_ = protocol.systemone, protocol.question_types

    def respond(request: Recorded) -> Scripted:
        try:
            asked = systemone.StructuredDecisionRequest.model_validate(request.json)
            questions = []
            for qid, spec in asked.questions.items():
                if spec.model_extra:  # as its parse_questions refuses them
                    raise types_.StructuredDecisionError(
                        f"question {qid!r}: unknown field(s) {sorted(spec.model_extra)}"
                    )
                questions.append(
                    types_.build_question(qid, spec.type, spec.instructions, spec.criteria, 26)
                )
        except (pydantic.ValidationError, ValueError) as error:
            return refusal(error)
        answers = {
            q.id: q.type.answer(q, label_probabilities(len(q.options)), LABEL_MASS)
            for q in questions
        }
        response = systemone.StructuredDecisionResponse(
            id=f"decision-{asked.request_id}",
            model=SERVED,
            answers=answers,
            usage=systemone.DecisionUsage(input_tokens=321, output_tokens=len(answers)),
            diagnostics={
                q.id: systemone.QuestionDiagnostics(label_mass=LABEL_MASS, argmax_is_label=True)
                for q in questions
            },
        )
        return Scripted(json=response.model_dump())

    return respond
