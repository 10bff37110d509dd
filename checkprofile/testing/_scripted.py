"""Scripted and recording evaluators: assert verdict logic without a model.

:class:`ScriptedEvaluator` is to checkprofile what ``httpx.MockTransport`` is to httpx: the
transport replaced by a script. :class:`RecordingEvaluator` wraps any evaluator and keeps what
it was shown, so a test can assert on exactly what the model would have seen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from .._bundle import Bundle
from .._evaluator import Evaluator, Reply
from .._shown import show
from .._types import is_mapping, is_sequence
from .._usage import Usage
from .._verdict import Answer, ChoiceAnswer, Failure, RubricAnswer, YesNoAnswer
from ..errors import EvaluatorError

__all__ = ["RecordingEvaluator", "ScriptedEvaluator", "Step"]

#: One scripted step: an answer, a Failure, or an exception (that question errors).
Step = Answer | Failure | BaseException

_ANSWER_TYPES = (YesNoAnswer, ChoiceAnswer, RubricAnswer, Failure, BaseException)


class ScriptedEvaluator:
    """An evaluator that answers from a script keyed by each question's ``ask``.

    A value is an answer (given every time the question is asked; its ``source`` is
    ``"scripted"`` unless the script set one), a :class:`Failure` or an
    exception (that question is not answered: an :class:`~checkprofile.errors.EvaluatorError`
    keeps its ``reason``, any other exception counts as ``unknown``), or a list of these,
    consumed one per time the question is asked. A question with no script entry, or whose
    list is used up, is not answered (reason ``unknown``, the detail says which): a forgotten
    entry can never pass.

    ``usage`` is what each reply says the call cost (tokens, request ids): one
    :class:`~checkprofile.Usage` for every call, or a list consumed one per call (``None``
    there, and after its end: nothing reported).

    ``calls`` keeps every bundle asked about, in order. One instance may serve many
    concurrent checks; list entries are then consumed in the order the questions are asked.
    """

    def __init__(
        self,
        answers: Mapping[str, Step | Sequence[Step]],
        *,
        model: str = "scripted",
        usage: Usage | Sequence[Usage | None] | None = None,
    ) -> None:
        if not is_mapping(answers):
            raise TypeError(f"answers must be a map from ask to answer, got {show(answers)}")
        self._script: dict[str, list[Step] | Step] = {}
        for ask, value in answers.items():
            if isinstance(value, _ANSWER_TYPES):
                self._script[ask] = value
            elif is_sequence(value) and not isinstance(value, str):
                steps = list(value)
                for step in steps:
                    if not isinstance(step, _ANSWER_TYPES):
                        raise TypeError(f"script for {show(ask)}: not an answer: {show(step)}")
                self._script[ask] = steps
            else:
                raise TypeError(f"script for {show(ask)}: not an answer: {show(value)}")
        if usage is None or type(usage) is Usage:
            self._usage: Usage | list[Usage | None] | None = usage
        elif is_sequence(usage) and all(u is None or type(u) is Usage for u in usage):
            self._usage = list(usage)
        else:
            raise TypeError(f"usage must be a Usage or a list of them, got {show(usage)}")
        self._used: dict[str, int] = {}
        self._model = model
        self.calls: list[Bundle] = []

    @property
    def model(self) -> str:
        return self._model

    def asked(self, ask: str) -> int:
        """How many times the question ``ask`` has been asked."""
        return self._used.get(ask, 0)

    async def answer(self, bundle: Bundle) -> Reply:
        self.calls.append(bundle)
        usage = self._usage
        if isinstance(usage, list):
            usage = usage[len(self.calls) - 1] if len(self.calls) <= len(usage) else None
        answers = tuple(self._next(question.ask) for question in bundle.check)
        return Reply(self._model, answers, usage=usage)

    def _next(self, ask: str) -> Answer | Failure:
        count = self._used.get(ask, 0)
        self._used[ask] = count + 1
        if ask not in self._script:
            known = ", ".join(show(k) for k in self._script) or "none"
            return Failure("unknown", f"no scripted answer for {show(ask)} (scripted: {known})")
        entry = self._script[ask]
        if isinstance(entry, list):
            if count >= len(entry):
                return Failure(
                    "unknown", f"the script for {show(ask)} has only {len(entry)} answers"
                )
            entry = entry[count]
        if isinstance(entry, EvaluatorError):
            return Failure(entry.reason, str(entry), retry_after=entry.retry_after)
        if isinstance(entry, BaseException):
            return Failure("unknown", f"{type(entry).__name__}: {entry}")
        if isinstance(entry, Failure) or entry.source is not None:
            return entry
        return attrs.evolve(entry, source="scripted")  # provenance, where the script gave none


@attrs.define
class RecordingEvaluator:
    """Wraps ``inner`` and keeps every bundle it was asked about (``bundles``) and every reply
    (``replies``; ``None`` where ``inner`` raised, and the exception is re-raised)."""

    inner: Evaluator
    bundles: list[Bundle] = attrs.field(factory=list)
    replies: list[Reply | None] = attrs.field(factory=list)

    @property
    def model(self) -> str:
        return self.inner.model

    async def answer(self, bundle: Bundle) -> Reply:
        self.bundles.append(bundle)
        try:
            reply = await self.inner.answer(bundle)
        except BaseException:
            self.replies.append(None)
            raise
        self.replies.append(reply)
        return reply
