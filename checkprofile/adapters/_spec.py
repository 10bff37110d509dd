"""Build an evaluator from a command-line spec such as ``systemone:jev-latest``.

The SDK behind each scheme is imported only when that scheme is asked for, so a missing
extra is a one-line error naming what to install, and an unused one costs nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from typing import Any

import attrs

from .._convert import plain_text
from .._evaluator import Evaluator
from .._shown import WHITESPACE, show

__all__ = ["SCHEMES", "evaluator_from_spec", "install_hint"]


@attrs.frozen
class _Scheme:
    module: str  # the adapter module
    name: str  # the evaluator class in it
    extra: str  # the checkprofile extra that installs its SDK
    sdk: str  # the SDK's import name
    key: str  # the SDK's usual environment variables
    base_url: str
    # Without a key, a base URL is needed: a scheme whose hosts may take no key (a local
    # runtime) still needs one of the two, or it would ask the SDK's default host, keyless.
    key_required: bool = True
    # A scheme with no default host (a server you run): its base URL is always needed.
    host_required: bool = False
    # The adapter's other options read from the environment: variable -> keyword.
    options: Mapping[str, str] = attrs.field(factory=dict)


SCHEMES: Mapping[str, _Scheme] = {
    "systemone": _Scheme(
        ".systemone",
        "SystemOneEvaluator",
        "systemone",
        "typesafe_sdk",
        "TYPESAFE_API_KEY",
        "TYPESAFE_BASE_URL",
    ),
    "openai-decisions": _Scheme(
        ".openai_decisions",
        "DecisionsEvaluator",
        "openai",
        "openai",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        # How the material is sent: input_text for hosts that take no JSON part (LiteLLM).
        options={"CHECKPROFILE_DECISIONS_MATERIAL_PART": "material_part"},
    ),
    # Local OpenAI-compatible runtimes (vLLM, llama.cpp, Ollama) usually take no key.
    "openai-chat": _Scheme(
        ".openai_chat",
        "ChatEvaluator",
        "openai",
        "openai",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        key_required=False,
    ),
    # sglang's own /v1/decisions dialect: a local server, which takes a key only when started
    # with --api-key. No SDK: the boundary's HTTP client (httpx2) speaks it.
    "sglang-decisions": _Scheme(
        ".sglang_decisions",
        "SglangDecisionsEvaluator",
        "sglang",
        "httpx2",
        "SGLANG_API_KEY",
        "SGLANG_BASE_URL",
        key_required=False,
        host_required=True,
    ),
}

# Sent as the key to a host that needs none: the openai SDK refuses to start without one.
_NO_KEY = "no-key"


def install_hint(extra: str) -> str:
    """How to install ``extra``, from an index and from a clone of the repository (where
    ``checkprofile[extra]`` names no package an index has yet)."""
    clone = f'pip install -e ".[{extra}]"'
    return f'pip install "checkprofile[{extra}]" (in a clone of checkprofile: {clone})'


def evaluator_from_spec(
    spec: str, *, environ: Mapping[str, str], timeout: float | None = None
) -> Evaluator:
    """The evaluator ``spec`` names: ``SCHEME:MODEL``, where the scheme is ``systemone``,
    ``openai-decisions``, ``openai-chat`` or ``sglang-decisions`` and the model is everything
    after the first colon (``openai-chat:llama3:8b`` asks for ``llama3:8b``).

    The API key and base URL come from ``environ`` under each SDK's usual names:
    ``TYPESAFE_API_KEY`` and ``TYPESAFE_BASE_URL`` for ``systemone``, ``OPENAI_API_KEY`` and
    ``OPENAI_BASE_URL`` for the two OpenAI schemes, ``SGLANG_API_KEY`` and ``SGLANG_BASE_URL``
    for ``sglang-decisions``. Without a base URL there, the SDK's default host is used (an
    sglang server has none: its base URL is required, its key optional). ``openai-chat``
    takes either: a key for the default host (or any), or a base URL alone for a local
    runtime that takes no key. ``CHECKPROFILE_DECISIONS_MATERIAL_PART`` sets
    ``openai-decisions``' ``material_part`` (``input_json`` or ``input_text``). ``timeout``
    (seconds) overrides the adapter's default.

    Raises ``ValueError`` with a one-line message naming the spec for an unknown scheme, an
    empty model, a missing key (for ``openai-chat``, neither a key nor a base URL), a bad
    option (naming the variable it came from), or an SDK that is not installed (with the
    ``pip install`` to run, see :func:`install_hint`).
    """
    spec = plain_text(spec)  # type: ignore[assignment]
    if type(spec) is not str:
        raise ValueError(f"an evaluator spec is a string SCHEME:MODEL, got {show(spec)}")
    scheme_name, colon, model = spec.partition(":")
    model = model.strip(WHITESPACE)
    scheme = SCHEMES.get(scheme_name.strip(WHITESPACE))
    known = ", ".join(f"{name}:MODEL" for name in SCHEMES)
    if scheme is None or not colon:
        raise ValueError(f"unknown evaluator {show(spec)}: use one of {known}")
    if not model:
        raise ValueError(f"evaluator {show(spec)} names no model: use {scheme_name}:MODEL")
    install = install_hint(scheme.extra)
    if importlib.util.find_spec(scheme.sdk) is None:
        raise ValueError(f"evaluator {show(spec)} needs the {scheme.extra} extra: {install}")
    key = (environ.get(scheme.key) or "").strip(WHITESPACE) or None
    base_url = (environ.get(scheme.base_url) or "").strip(WHITESPACE) or None
    if base_url is None and scheme.host_required:
        raise ValueError(
            f"evaluator {show(spec)} needs a host: set {scheme.base_url} to the server's API"
            " root (http://HOST:PORT/v1)"
        )
    if key is None:
        if scheme.key_required:
            raise ValueError(f"evaluator {show(spec)} needs an API key: set {scheme.key}")
        if base_url is None:
            raise ValueError(
                f"evaluator {show(spec)} needs a host: set {scheme.base_url} (a local "
                f"OpenAI-compatible server, which may take no key) or {scheme.key}"
            )
        # Only the openai SDK needs a key to start; any other scheme sends none.
        key = _NO_KEY if scheme.sdk == "openai" else None
    try:
        module = importlib.import_module(scheme.module, __package__)
    except ImportError as error:
        raise ValueError(f"evaluator {show(spec)} cannot be loaded ({error}): {install}") from None
    options: dict[str, Any] = {"base_url": base_url, "api_key": key}
    read: dict[str, str] = {}  # keyword -> the variable it came from
    for variable, keyword in scheme.options.items():
        value = (environ.get(variable) or "").strip(WHITESPACE)
        if value:
            options[keyword] = value
            read[keyword] = variable
    if timeout is not None:
        options["timeout"] = timeout
    try:
        evaluator: Evaluator = getattr(module, scheme.name)(model, **options)
    except ValueError as error:
        said = str(error)
        source = next((f" (from {read[k]})" for k in read if said.startswith(k)), "")
        raise ValueError(f"evaluator {show(spec)}: {said}{source}") from None
    return evaluator
