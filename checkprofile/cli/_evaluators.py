"""``--evaluator SPEC`` for ``checkprofile run``: recorded answers, or a model backend.

``replay:ANSWERS`` reads a YAML or JSON file that maps each question's ``ask`` to what the
model answered, in the fields of a verdict's question (``{"answer": 0.97}``,
``{"answer": "states", "confidence": 0.9}``, ``{"answer": 2, "confidence": 0.9}``, or
``{"error": "timeout"}``); a list of these is consumed one per attempt. A recorded verdict
(``{"verdict": ..., "questions": [...]}``) replays as it is. Every question of the check must
have an entry and every entry a question, or nothing runs: a typo must not turn into an error
verdict, nor a forgotten answer into a pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final, get_args

from .._check import Check
from .._convert import show
from .._run import Evaluator
from .._types import is_mapping
from .._verdict import Answer, ChoiceAnswer, Failure, RubricAnswer, YesNoAnswer
from ..errors import FailureReason
from ..testing import ScriptedEvaluator, Step
from ._common import DataFile, UsageError, read_data

__all__ = ["evaluator_for", "replay_evaluator"]

REASONS: Final = get_args(FailureReason)

# A verdict question's own fields may come along (a recorded verdict replays as it is); they
# are checked against the check where they say something about it.
_ENTRY_KEYS: Final = frozenset({"answer", "confidence", "error", "ask", "kind", "result"})


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

    from ..adapters._spec import SCHEMES, evaluator_from_spec

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
    """An evaluator that gives the answers recorded in ``path`` for the questions of ``check``."""
    recorded = read_data(path, "answers file")
    data = recorded.data
    model = "replay"
    entries: dict[str, tuple[tuple[str | int, ...], Any]] = {}
    if is_mapping(data) and isinstance(data.get("questions"), list):
        if isinstance(data.get("model"), str):
            model = data["model"]
        for index, question in enumerate(data["questions"]):
            at: tuple[str | int, ...] = ("questions", index)
            if not is_mapping(question) or not isinstance(question.get("ask"), str):
                raise _bad(
                    recorded, at, f"expected a verdict question with an ask, got {show(question)}"
                )
            entries[question["ask"]] = (at, question)
    elif is_mapping(data):
        entries = {str(ask): ((str(ask),), value) for ask, value in data.items()}
    else:
        raise _bad(
            recorded, (), f"expected a map from each question's ask to its answer, got {show(data)}"
        )
    asks = {question.ask: question for question in check}
    for ask, (at, _) in entries.items():
        if ask not in asks:
            raise _bad(recorded, at, _not_asked(ask, list(asks)), key=True)
    script: dict[str, Step | list[Step]] = {}
    for ask, question in asks.items():
        if ask not in entries:
            raise _bad(recorded, (), f"no recorded answer for {show(ask)}")
        at, value = entries[ask]
        if not isinstance(value, list):
            script[ask] = _step(recorded, at, value, question.kind)  # the same every attempt
        elif not value:
            raise _bad(recorded, at, "an empty list records no attempt")
        else:
            script[ask] = [
                _step(recorded, (*at, i), entry, question.kind) for i, entry in enumerate(value)
            ]
    return ScriptedEvaluator(script, model=model)


def _not_asked(ask: str, asks: list[str]) -> str:
    """An ask the check does not have, with the one it most likely misspells."""
    import difflib

    match = difflib.get_close_matches(ask, asks, n=1, cutoff=0.6)
    hint = f"; did you mean {show(match[0], limit=200)}?" if match else ""
    return f"{show(ask)} is not a question of this check{hint}"


def _step(recorded: DataFile, at: tuple[str | int, ...], entry: object, kind: str) -> Step:
    if not is_mapping(entry):
        raise _bad(
            recorded, at, f'expected {{"answer": ...}} or {{"error": ...}}, got {show(entry)}'
        )
    unknown = sorted(set(entry) - _ENTRY_KEYS, key=str)
    if unknown:
        raise _bad(recorded, (*at, unknown[0]), f"unknown key {show(unknown[0])}", key=True)
    if "kind" in entry and entry["kind"] != kind:
        raise _bad(recorded, (*at, "kind"), f"the question is {kind}, not {show(entry['kind'])}")
    if "error" in entry:
        reason = entry["error"]
        if reason not in REASONS:
            raise _bad(
                recorded, (*at, "error"), f"{show(reason)} is not a reason: {', '.join(REASONS)}"
            )
        return Failure(reason, "recorded failure")
    if "answer" not in entry:
        raise _bad(recorded, at, 'expected "answer" or "error"')
    value = entry["answer"]
    if value is None:
        # A recorded error verdict's question: the model did not answer.
        return Failure("unknown", "recorded: no answer")
    answer: Answer
    if kind == "yes_no":
        if "confidence" in entry:
            raise _bad(recorded, (*at, "confidence"), "a yes/no answer has no confidence", key=True)
        answer = YesNoAnswer(value, source="replayed")
    elif "confidence" not in entry:
        raise _bad(recorded, at, f'a {kind} answer needs "confidence"')
    elif kind == "choice":
        answer = ChoiceAnswer(value, entry["confidence"], source="replayed")
    else:
        answer = RubricAnswer(value, entry["confidence"], source="replayed")
    # An answer that does not fit its question is left as it is: the run then treats it as the
    # model misbehaving (re-asked, then error), which is what a replay should show.
    return answer


def _bad(
    recorded: DataFile, at: tuple[str | int, ...], message: str, *, key: bool = False
) -> UsageError:
    return UsageError(f"{recorded.where(at, key=key)}: {message}")
