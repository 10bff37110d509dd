"""An evaluator on the OpenAI Decisions API (``POST /v1/decisions``) through the official
``openai`` SDK, or any host that speaks it through ``base_url``.

Install with ``pip install "checkprofile[openai]"`` (in a clone: ``pip install -e ".[openai]"``).
See ``docs/evaluators-openai-decisions.md``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Literal, get_args

try:
    from openai.types import decision_create_params
except ImportError as error:  # the extra is not installed
    from ._spec import install_hint

    raise ImportError(
        f"checkprofile.adapters.openai_decisions needs openai: {install_hint('openai')}"
    ) from error

from .._bundle import Bundle
from .._check import ChoiceQuestion, Question, RubricQuestion
from .._evaluator import Reply
from .._shown import is_blank, show
from .._types import is_mapping
from .._verdict import Answer, Failure
from ._common import (
    DEFAULT_TIMEOUT,
    checked_model,
    checked_timeout,
    marked_echoed,
    material_state,
    material_text,
    material_words,
    sendable,
    usage_of,
)
from ._errors import failure_from_exception
from ._read import Malformed, read_choice, read_rubric, read_yes_no
from ._transport import (
    DEFAULT_MAX_RESPONSE_BYTES,
    BoundaryError,
    checked_max_response_bytes,
    openai_clients,
    provider_text,
    request_ids,
)

__all__ = ["DecisionsEvaluator", "MaterialPart"]

#: How the material goes into the request's user message: ``"input_json"``, one JSON part
#: holding the material as a value (OpenAI's own API), or ``"input_text"``, one text part
#: holding the same object as canonical JSON text (for hosts whose request model takes text
#: parts only: LiteLLM's proxy, vLLM).
MaterialPart = Literal["input_json", "input_text"]
_PARTS: tuple[str, ...] = get_args(MaterialPart)

_KINDS = {"yes_no": "predicate", "choice": "choice", "rubric": "score"}
_WORDS = {"yes_no": "yes/no", "choice": "choice", "rubric": "rubric"}


def decisions_question(question: Question, name: str) -> decision_create_params.Question:
    """The Decisions question for one check question: yes/no -> ``predicate``; choice ->
    ``choice`` with each ``one_of`` name as a value and its description; rubric -> ``score``
    with the levels, worst first (a level's position is its value). Every text is
    :func:`~checkprofile.adapters._common.sendable`."""
    return sendable(_question(question, name))  # type: ignore[no-any-return]


def _question(question: Question, name: str) -> decision_create_params.Question:
    if isinstance(question, ChoiceQuestion):
        return {
            "type": "choice",
            "name": name,
            "instructions": question.ask,
            "choices": [{"value": value, "description": text} for value, text in question.one_of],
        }
    if isinstance(question, RubricQuestion):
        return {
            "type": "score",
            "name": name,
            "instructions": question.ask,
            "levels": [
                {"label": f"level {index}", "description": text}
                for index, text in enumerate(question.levels)
            ],
        }
    return {"type": "predicate", "name": name, "instructions": question.ask}


def _name(index: int) -> str:
    # Questions are named by position: an ask is prose, and the name is only a key.
    return f"q{index}"


class DecisionsEvaluator:
    """Answers a check with one Decisions request: the material as one part of a user
    message, one question per check question.

    ``model`` is the model to ask; the reply names the version the response reports.
    ``base_url`` is the API root with ``/v1`` (default: the SDK's, or ``OPENAI_BASE_URL``);
    ``api_key`` defaults to ``OPENAI_API_KEY``; ``timeout`` is in seconds for the whole
    exchange, connect to last byte; ``max_response_bytes`` caps the response body, decoded (see
    :mod:`checkprofile.adapters._transport`). SDK retries are off; a redirect is never
    followed. ``material_part`` is how the material is sent (:data:`MaterialPart`):
    ``"input_json"`` (the default, OpenAI's API) or ``"input_text"``, the same canonical JSON
    as a text part, for hosts that take no JSON part (LiteLLM's proxy, vLLM). It is chosen
    here, never guessed from a host's error.

    Each answer has ``source="native"``; choice and rubric answers keep the response's
    distribution. A rubric level is the most probable level, ties going to the worse level;
    its confidence is the response's. A refused question is ``Failure("refusal")`` and the
    other answers are kept. A response that cannot be read strictly is
    ``Failure("malformed")`` for the questions it fails; HTTP and transport errors are
    failures of every question, with their reason, and so is a model name that is not a short
    text.

    Raises ``ValueError`` at once for a bad ``model``, ``timeout``, ``max_response_bytes`` or
    ``material_part``, or a missing API key.
    """

    #: The ``gen_ai.operation.name`` of its calls in telemetry (docs/operations.md).
    operation_name = "decisions"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        material_part: MaterialPart = "input_json",
    ) -> None:
        self._model = checked_model(model)
        seconds = checked_timeout(timeout)
        cap = checked_max_response_bytes(max_response_bytes)
        self._part = _checked_part(material_part)

        self._clients = openai_clients(
            api_key=api_key,
            base_url=base_url,
            timeout=seconds,
            max_response_bytes=cap,
            what=f"OpenAI Decisions for {self._model!r}",
        )

    @property
    def model(self) -> str:
        """The configured model (it may be an alias)."""
        return self._model

    @property
    def material_part(self) -> MaterialPart:
        """How the material is sent: ``"input_json"`` or ``"input_text"``."""
        return self._part

    async def answer(self, bundle: Bundle) -> Reply:
        """One request for all questions of ``bundle.check``; see the class docstring."""
        questions = [decisions_question(q, _name(i)) for i, q in enumerate(bundle.check)]
        message: decision_create_params.InputUnionMember1DecisionInputUserMessage = {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": material_text(bundle)}
                if self._part == "input_text"
                else {"type": "input_json", "data": material_state(bundle)}
            ],
        }
        count = len(bundle.check)
        with request_ids() as ids:
            try:
                raw = await self._clients.get().decisions.with_raw_response.create(
                    model=self._model, input=[message], questions=questions
                )
                # Read the body ourselves: the SDK builds its models without validating them,
                # and the profile needs every field checked.
                data: object = json.loads(raw.http_response.content)
            except Exception as error:  # every SDK, HTTP, transport and JSON error is a Failure
                failures = [failure_from_exception(error, sent=material_words(bundle))] * count
                return Reply(self._model, failures, usage=usage_of(None, ids))
        usage = usage_of(data.get("usage") if is_mapping(data) else None, ids)
        try:
            model, answers = _decision(data)
        except (Malformed, BoundaryError) as error:
            return Reply(self._model, [Failure("malformed", str(error))] * count, usage=usage)
        found = _by_question(answers, count)
        read = [_read(q, found[i]) for i, q in enumerate(bundle.check)]
        entries = [marked_echoed(entry, model, self._model) for entry in read]
        return Reply(model, entries, usage=usage)

    async def aclose(self) -> None:
        """Close the HTTP connections this evaluator opened."""
        for client in self._clients.current():
            await client.close()


def _checked_part(part: object) -> MaterialPart:
    if type(part) is str and part in _PARTS:
        return part  # type: ignore[return-value]
    raise ValueError(f"material_part must be one of {', '.join(_PARTS)}, got {show(part)}")


def _decision(data: object) -> tuple[str, list[object]]:
    if not is_mapping(data):
        raise Malformed(f"the response is not a JSON object: {show(data)}")
    model = data.get("model")
    if not isinstance(model, str) or is_blank(model):
        raise Malformed(f"the response names no model: {show(model)}")
    provider_text(model, "the response's model name")
    answers = data.get("answers")
    if not isinstance(answers, list):
        raise Malformed(f"the response's answers are not a list: {show(answers)}")
    return model, answers


def _by_question(answers: Sequence[object], count: int) -> list[object]:
    """Each question's answer: by name (every question is named), else by position for an
    answer whose name is null, as the API documents answers "in question order"."""
    named: dict[str, list[object]] = {}
    for item in answers:
        name = item.get("name") if is_mapping(item) else None
        if isinstance(name, str):
            named.setdefault(name, []).append(item)
    found: list[object] = []
    for index in range(count):
        matches = named.get(_name(index), [])
        if len(matches) > 1:
            found.append(Malformed(f"{len(matches)} answers for question {_name(index)}"))
        elif matches:
            found.append(matches[0])
        elif index < len(answers) and _unnamed(answers[index]):
            found.append(answers[index])
        else:
            found.append(None)
    return found


def _unnamed(item: object) -> bool:
    return is_mapping(item) and item.get("name") is None


def _read(question: Question, item: object) -> Answer | Failure:
    expected = _KINDS[question.kind]
    try:
        if isinstance(item, Malformed):
            raise item
        if item is None:
            raise Malformed(f"the response has no {expected} answer for {show(question.ask)}")
        if not is_mapping(item):
            raise Malformed(f"an answer is not a JSON object: {show(item)}")
        kind = item.get("type")
        if kind == "refusal":
            return Failure("refusal", f"the model declined to answer {show(question.ask)}")
        if kind != expected:
            raise Malformed(f"a {_WORDS[question.kind]} question got a {show(kind)} answer")
        if isinstance(question, ChoiceQuestion):
            return read_choice(
                item.get("choice"),
                item.get("confidence"),
                _pairs(item.get("probabilities"), "value", str),
                question.names,
                source="native",
            )
        if isinstance(question, RubricQuestion):
            return read_rubric(
                item.get("confidence"),
                _pairs(item.get("probabilities"), "value", int),
                len(question.levels),
                source="native",
            )
        return read_yes_no(item.get("probability"), source="native")
    except Malformed as error:
        return Failure("malformed", str(error))


def _pairs(entries: object, key: str, kind: type[Any]) -> Iterable[tuple[Any, object]]:
    """``[{key: k, "probability": p}, ...]`` as ``(k, p)`` pairs; ``k`` must be a ``kind``
    (never a bool: choice values are typed, and ``true`` is not the string ``"true"``)."""
    if not isinstance(entries, list):
        raise Malformed(f"the probabilities are not a list: {show(entries)}")
    pairs = []
    for entry in entries:
        if not is_mapping(entry) or "probability" not in entry:
            raise Malformed(f"a probability entry is not {{{key}, probability}}: {show(entry)}")
        value = entry.get(key)
        if isinstance(value, bool) or not isinstance(value, kind):
            raise Malformed(f"a probability entry's {key} is not a {kind.__name__}: {show(value)}")
        pairs.append((value, entry["probability"]))
    return pairs
