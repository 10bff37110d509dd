"""Recorded answers replayed: an evaluator that gives, for each question, what a model
answered before (``checkprofile run --evaluator replay:ANSWERS`` is this).

The answers are the data of a YAML or JSON file that maps each question's ``ask`` to what the
model answered, in the fields of a verdict's question (``{"answer": 0.97}``,
``{"answer": "states", "confidence": 0.9}``, ``{"answer": 2, "confidence": 0.9}``, or
``{"error": "timeout"}``); a list of these is consumed one per attempt. A recorded verdict
(``{"verdict": ..., "questions": [...]}``, as ``Verdict.to_json`` writes it) replays as it
is. Every question of the check must have an entry and every entry a question, or nothing
runs: a typo must not turn into an error verdict, nor a forgotten answer into a pass.
"""

from __future__ import annotations

from typing import Any, Final, get_args

from .._check import Check
from .._convert import NotJson, plain
from .._shown import is_blank, show
from .._types import is_mapping
from .._verdict import Answer, ChoiceAnswer, Failure, RubricAnswer, YesNoAnswer
from ..errors import CheckprofileError, FailureReason, Problem
from ._scripted import ScriptedEvaluator, Step

__all__ = ["ReplayError", "replay_evaluator"]

REASONS: Final = get_args(FailureReason)

# A verdict question's own fields may come along (a recorded verdict replays as it is); they
# are checked against the check where they say something about it.
_ENTRY_KEYS: Final = frozenset({"answer", "confidence", "error", "ask", "kind", "result"})


class ReplayError(CheckprofileError, ValueError):
    """Recorded answers that cannot be replayed for a check. ``path`` (keys and indices from
    the root of the answers) leads to the part that is wrong, ``key`` says the fault is that
    key itself rather than its value, ``message`` says what is wrong; the text is
    ``POINTER: message`` (``/questions/0: expected a verdict question with an ask, got 7``),
    or the message alone for the answers as a whole."""

    path: tuple[str | int, ...]
    key: bool
    message: str

    def __init__(self, message: str, *, path: tuple[str | int, ...] = (), key: bool = False):
        self.path, self.key, self.message = path, key, message
        super().__init__(f"{Problem(path, message).pointer}: {message}" if path else message)


def replay_evaluator(
    answers: object, *, check: Check, model: str | None = None
) -> ScriptedEvaluator:
    """An evaluator that gives the answers recorded in ``answers`` for the questions of
    ``check``, as ``checkprofile run --evaluator replay:ANSWERS`` does: ``answers`` is the data
    of an answers file (a YAML or JSON file read as it is, see the module docstring).

    Raises :class:`ReplayError` naming the part of ``answers`` that is wrong (an answer for a
    question the check does not have, a question with no answer, an unknown key or reason),
    before anything is asked; :class:`TypeError` when ``check`` is not a
    :class:`~checkprofile.Check` or ``model`` is not a string, and :class:`ValueError` for a
    blank ``model`` or one of more than 1000 characters.

    The verdicts name ``model`` as the model that answered: by default the answers file's
    own ``model`` (a recorded verdict's), else ``replay``; give the model the answers were
    recorded from when the file does not say it."""
    if type(check) is not Check:
        raise TypeError(f"check must be a Check (see parse_check), got {show(check)}")
    if model is not None and type(model) is not str:
        raise TypeError(f"model must be a string, got {show(model)}")
    if model is not None and (is_blank(model) or len(model) > 1000):
        raise ValueError(
            f"model must be a non-blank text of at most 1000 characters, got {show(model)}"
        )
    try:
        # Plain data first: nothing below runs a value's own code (a str subclass's __str__).
        data = plain(answers)
    except NotJson as error:
        raise ReplayError(
            f"the answers are not JSON data: {error.reason}", path=error.path
        ) from None
    given, model = model, "replay"
    entries: dict[str, tuple[tuple[str | int, ...], Any]] = {}
    if is_mapping(data) and isinstance(data.get("questions"), list):
        if isinstance(data.get("model"), str):
            model = data["model"]
        for index, question in enumerate(data["questions"]):
            at: tuple[str | int, ...] = ("questions", index)
            if not is_mapping(question) or not isinstance(question.get("ask"), str):
                raise _bad(at, f"expected a verdict question with an ask, got {show(question)}")
            entries[question["ask"]] = (at, question)
    elif is_mapping(data):
        entries = {ask: ((ask,), value) for ask, value in data.items()}
    else:
        raise _bad((), f"expected a map from each question's ask to its answer, got {show(data)}")
    asks = {question.ask: question for question in check}
    for ask, (at, _) in entries.items():
        if ask not in asks:
            raise _bad(at, _not_asked(ask, list(asks)), key=True)
    script: dict[str, Step | list[Step]] = {}
    for ask, question in asks.items():
        if ask not in entries:
            raise _bad((), f"no recorded answer for {show(ask)}")
        at, value = entries[ask]
        if not isinstance(value, list):
            script[ask] = _step(at, value, question.kind)  # the same every attempt
        elif not value:
            raise _bad(at, "an empty list records no attempt")
        else:
            script[ask] = [_step((*at, i), entry, question.kind) for i, entry in enumerate(value)]
    return ScriptedEvaluator(script, model=model if given is None else given)


def _not_asked(ask: str, asks: list[str]) -> str:
    """An ask the check does not have, with the one it most likely misspells."""
    import difflib

    match = difflib.get_close_matches(ask, asks, n=1, cutoff=0.6)
    hint = f"; did you mean {show(match[0], limit=200)}?" if match else ""
    return f"{show(ask)} is not a question of this check{hint}"


def _step(at: tuple[str | int, ...], entry: object, kind: str) -> Step:
    if not is_mapping(entry):
        raise _bad(at, f'expected {{"answer": ...}} or {{"error": ...}}, got {show(entry)}')
    unknown = sorted(set(entry) - _ENTRY_KEYS, key=str)
    if unknown:
        raise _bad((*at, unknown[0]), f"unknown key {show(unknown[0])}", key=True)
    if "kind" in entry and entry["kind"] != kind:
        raise _bad((*at, "kind"), f"the question is {kind}, not {show(entry['kind'])}")
    if "error" in entry:
        reason = entry["error"]
        if reason not in REASONS:
            raise _bad((*at, "error"), f"{show(reason)} is not a reason: {', '.join(REASONS)}")
        return Failure(reason, "recorded failure")
    if "answer" not in entry:
        raise _bad(at, 'expected "answer" or "error"')
    value = entry["answer"]
    if value is None:
        # A recorded error verdict's question: the model did not answer.
        return Failure("unknown", "recorded: no answer")
    answer: Answer
    if kind == "yes_no":
        if "confidence" in entry:
            raise _bad((*at, "confidence"), "a yes/no answer has no confidence", key=True)
        answer = YesNoAnswer(value, source="replayed")
    elif "confidence" not in entry:
        raise _bad(at, f'a {kind} answer needs "confidence"')
    elif kind == "choice":
        answer = ChoiceAnswer(value, entry["confidence"], source="replayed")
    else:
        answer = RubricAnswer(value, entry["confidence"], source="replayed")
    # An answer that does not fit its question is left as it is: the run then treats it as the
    # model misbehaving (re-asked, then error), which is what a replay should show.
    return answer


def _bad(at: tuple[str | int, ...], message: str, *, key: bool = False) -> ReplayError:
    return ReplayError(message, path=at, key=key)
