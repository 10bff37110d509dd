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

Nothing of vLLM is kept in this repository: the wheel is read where it lies.
"""

from __future__ import annotations

import logging
import os
import sys
import types
import uuid
import zipfile
from functools import cache
from typing import Any

__all__ = ["ENV", "VERSION", "protocol"]

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
