"""A case's answers as the library's: what a scripted evaluator replies, and which fit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from .._check import Question
from .._types import is_mapping
from .._verdict import Answer, ChoiceAnswer, Failure, RubricAnswer, YesNoAnswer, answer_problem
from ..testing import Step
from ._shared import shown_json

__all__ = ["fitting_answer", "read_answer", "scripted_step"]


# The keys an answer of each kind may have, by the key that names the kind: the profile's
# answers are "the probability, the chosen name, or the level, with a confidence where the kind
# has one", and nothing else (docs/conformance.md, "Answers").
_ANSWER_KEYS: Final[Mapping[str, frozenset[str]]] = {
    "p": frozenset({"p"}),
    "name": frozenset({"name", "confidence"}),
    "level": frozenset({"level", "confidence"}),
}


def read_answer(raw: object) -> Answer | None:
    """The library's answer for a case's answer, or ``None`` when its shape alone does not fit
    any question: ``null``, no kind key or two, or a key its kind does not have.

    Values are passed on as given, so a case can hold an answer whose values do not fit (a
    probability of 1.5, a name not in one_of); :func:`answer_problem` judges those.
    """
    if not is_mapping(raw):
        return None
    kinds = [key for key in _ANSWER_KEYS if key in raw]
    if len(kinds) != 1 or not _ANSWER_KEYS[kinds[0]].issuperset(raw):
        return None
    if kinds == ["p"]:
        return YesNoAnswer(raw["p"])
    if kinds == ["name"]:
        return ChoiceAnswer(raw["name"], raw.get("confidence"))
    return RubricAnswer(raw["level"], raw.get("confidence"))


def fitting_answer(question: Question, raw: object) -> Answer | None:
    """The answer when ``raw`` fits ``question``, else ``None`` (decision 8: not answered)."""
    answer = read_answer(raw)
    if answer is None or answer_problem(question, answer) is not None:
        return None
    return answer


def scripted_step(raw: Mapping[str, Any]) -> Step:
    if "failure" in raw:
        return Failure(raw["failure"], "scripted failure")
    answer = read_answer(raw)
    if answer is None:
        # What an adapter does with a reply it cannot read as an answer of any kind.
        return Failure("malformed", f"not an answer: {shown_json(raw)}")
    return answer
