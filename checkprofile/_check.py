"""The normalized check: the full form with every threshold explicit.

Only :func:`checkprofile.parse_check` builds a :class:`Check` from user input; the classes
here hold values that are already known to be valid (the "strict tier" of the two-tier design).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal, overload

import attrs

from ._convert import converter, one_line, override, register_renamed
from ._limits import Limits

__all__ = [
    "Check",
    "ChoiceQuestion",
    "Kind",
    "Question",
    "RubricQuestion",
    "YesNoQuestion",
]

Kind = Literal["yes_no", "choice", "rubric"]


def _strings(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(items)


def _pairs(pairs: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple((str(name), str(text)) for name, text in pairs)


@attrs.frozen
class YesNoQuestion:
    """A yes/no question: passes when the yes-probability is at or above ``pass_at``.

    Below ``pass_at`` it fails when ``fail_below`` is ``None``; otherwise it fails below
    ``fail_below`` and is unsure from ``fail_below`` up to (not including) ``pass_at``.
    """

    ask: str
    pass_at: float
    fail_below: float | None = None

    kind: Literal["yes_no"] = attrs.field(default="yes_no", init=False)


@attrs.frozen
class ChoiceQuestion:
    """A choice among the names of ``one_of`` (``(name, description)`` pairs, in order).

    A name in ``passing`` passes, one in ``unsure`` is unsure, any other fails; below
    ``confidence`` every answer is unsure.
    """

    ask: str
    one_of: tuple[tuple[str, str], ...] = attrs.field(converter=_pairs)
    passing: tuple[str, ...] = attrs.field(converter=_strings)
    unsure: tuple[str, ...] = attrs.field(converter=_strings, default=())
    confidence: float = 0.8

    kind: Literal["choice"] = attrs.field(default="choice", init=False)

    @property
    def names(self) -> tuple[str, ...]:
        """The answer names, in the order the check gives them."""
        return tuple(name for name, _ in self.one_of)


@attrs.frozen
class RubricQuestion:
    """A rubric: ``levels`` worst first; a level at or above ``pass_level`` (0-based) passes.
    Below ``confidence`` every answer is unsure."""

    ask: str
    levels: tuple[str, ...] = attrs.field(converter=_strings)
    pass_level: int
    confidence: float = 0.8

    kind: Literal["rubric"] = attrs.field(default="rubric", init=False)


Question = YesNoQuestion | ChoiceQuestion | RubricQuestion


def _questions(items: Iterable[Question]) -> tuple[Question, ...]:
    return tuple(items)


@attrs.frozen
class Check(Sequence[Question]):
    """A valid check key in its full form: a non-empty sequence of questions.

    Build one with :func:`checkprofile.parse_check`. ``to_json()`` gives the full form back as
    plain JSON with every threshold explicit; parsing that again gives an equal ``Check``.

    ``limits``: the limits it was read with (``parse_check(..., limits=)``), whose defaults
    fill what the key left out; ``None`` for a check built by hand. :func:`checkprofile.run_check`
    runs it under these, and refuses other thresholds. Two checks with the same questions are
    equal whatever limits they were read with.
    """

    questions: tuple[Question, ...] = attrs.field(converter=_questions)
    limits: Limits | None = attrs.field(default=None, kw_only=True, eq=False, repr=False)

    @questions.validator
    def _check_questions(self, _: attrs.Attribute[Any], questions: tuple[Question, ...]) -> None:
        # Invariants parse_check guarantees; select() and direct construction must keep them.
        if not questions:
            raise ValueError("a Check has at least one question")
        asks = [one_line(question.ask) for question in questions]
        if len(set(asks)) != len(asks):
            raise ValueError("the asks of a Check must differ")

    @overload
    def __getitem__(self, index: int) -> Question: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Question]: ...
    def __getitem__(self, index: int | slice) -> Question | Sequence[Question]:
        return self.questions[index]

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions)

    @property
    def asks(self) -> tuple[str, ...]:
        return tuple(question.ask for question in self.questions)

    def select(self, indexes: Sequence[int]) -> Check:
        """The check made of the questions at ``indexes`` (in that order), e.g. for a re-ask."""
        return Check(tuple(self.questions[i] for i in indexes), limits=self.limits)

    def to_json(self) -> list[dict[str, Any]]:
        """The full form: yes/no ``ask``, ``pass`` (and ``fail`` when set); choice ``ask``,
        ``one_of``, ``pass``, ``unsure``, ``confidence``; rubric ``ask``, ``levels``, ``pass``,
        ``confidence``."""
        return [converter.unstructure(question, Question) for question in self.questions]


# The JSON names are the profile's; `pass` is a Python keyword, hence the attribute names.
# `kind` (init=False) is left out of the JSON by cattrs itself: the keys present say the kind.
register_renamed(
    YesNoQuestion,
    pass_at=override(rename="pass"),
    fail_below=override(rename="fail", omit_if_default=True),
)
register_renamed(
    ChoiceQuestion,
    one_of=override(unstruct_hook=dict, struct_hook=lambda value, _: tuple(value.items())),
    passing=override(rename="pass", unstruct_hook=list),
    unsure=override(unstruct_hook=list),
)
register_renamed(
    RubricQuestion,
    levels=override(unstruct_hook=list),
    pass_level=override(rename="pass"),
)


def _structure_question(data: dict[str, Any], _: object) -> Question:
    # The kind is decided by the keys present, exactly as the profile says.
    cls: type[Question] = (
        ChoiceQuestion
        if "one_of" in data
        else RubricQuestion
        if "levels" in data
        else YesNoQuestion
    )
    question: Question = converter.structure(data, cls)
    return question


converter.register_structure_hook(Question, _structure_question)
