"""``--evaluator SPEC`` for ``checkprofile run``: recorded answers, or a model backend.

``replay:ANSWERS`` reads a YAML or JSON file of recorded answers
(:func:`checkprofile.testing.replay_evaluator`); any other scheme is a model backend
(:func:`checkprofile.adapters.evaluator_from_spec`).
"""

from __future__ import annotations

from pathlib import Path

from .._check import Check
from .._evaluator import Evaluator
from ..testing import ScriptedEvaluator
from ._common import UsageError, read_data

__all__ = ["evaluator_for", "replay_evaluator"]


def evaluator_for(
    spec: str, *, check: Check, cache: Path | None = None, timeout: float | None = None
) -> Evaluator:
    """The evaluator ``spec`` names, wrapped in an answer cache at ``cache`` when given. A
    model backend waits at most ``timeout`` seconds for each response (default: its own)."""
    scheme, _, rest = spec.partition(":")
    if not rest:
        raise UsageError(
            f'--evaluator "{spec}": expected SCHEME:VALUE, e.g. replay:answers.yaml or '
            "systemone:MODEL"
        )
    if scheme == "replay":
        evaluator: Evaluator = replay_evaluator(Path(rest), check)
    else:
        evaluator = _backend(spec, timeout)
    if cache is not None:
        evaluator = _cached(evaluator, cache)
    return evaluator


def _backend(spec: str, timeout: float | None) -> Evaluator:
    import os

    from ..adapters import evaluator_from_spec
    from ..adapters._spec import SCHEMES

    scheme = spec.partition(":")[0]
    if scheme not in SCHEMES:
        known = ", ".join(["replay:ANSWERS", *(f"{name}:MODEL" for name in SCHEMES)])
        raise UsageError(f'--evaluator "{spec}": unknown evaluator "{scheme}"; use {known}')
    try:
        return evaluator_from_spec(spec, environ=os.environ, timeout=timeout)
    except ValueError as error:
        raise UsageError(f"--evaluator: {error}") from None


def _cached(evaluator: Evaluator, directory: Path) -> Evaluator:
    from ..adapters.cache import CachingEvaluator

    try:
        return CachingEvaluator(evaluator, directory)
    except (OSError, ValueError) as error:
        raise UsageError(f"--cache {directory}: {error}") from None


def replay_evaluator(path: Path, check: Check) -> ScriptedEvaluator:
    """An evaluator that gives the answers recorded in ``path`` for the questions of ``check``
    (see :func:`checkprofile.testing.replay_evaluator`), its faults at ``FILE:LINE:COL``."""
    from ..testing import ReplayError
    from ..testing import replay_evaluator as replaying

    recorded = read_data(path, "answers file")
    try:
        return replaying(recorded.data, check=check)
    except ReplayError as error:
        raise UsageError(f"{recorded.where(error.path, key=error.key)}: {error.message}") from None
