"""An evaluator on sglang's Decisions dialect (``POST /v1/decisions`` of an sglang server).

sglang's server answers typed questions by scoring each answer label's token, without
generating. Its ``/v1/decisions`` shares OpenAI's path, not its schema: questions are tagged
``yes_no``, ``choice`` or ``score`` with an ``id`` and a ``question``, a choice lists its
``options``, and the ``answers`` are a map keyed by id. This adapter speaks that schema over
the boundary's own HTTP client (:mod:`checkprofile.adapters._transport`); it needs no SDK.

Install with ``pip install "checkprofile[sglang]"`` (in a clone: ``pip install -e ".[sglang]"``).
See ``docs/evaluators-sglang-decisions.md``.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

try:
    import httpx2
except ImportError as error:  # the extra is not installed
    from ._spec import install_hint

    raise ImportError(
        f"checkprofile.adapters.sglang_decisions needs httpx2: {install_hint('sglang')}"
    ) from error

from .._bundle import Bundle
from .._check import ChoiceQuestion, Question, RubricQuestion
from .._evaluator import Reply
from .._shown import show
from .._types import is_mapping
from .._usage import Usage
from .._verdict import Answer, Failure, RubricAnswer
from ._common import (
    DEFAULT_TIMEOUT,
    checked_model,
    checked_timeout,
    marked_echoed,
    material_state,
    material_words,
    sendable,
    usage_of,
)
from ._errors import failure_from_exception, failure_from_status
from ._read import Malformed, distribution, read_choice, read_rubric, read_yes_no
from ._transport import (
    DEFAULT_MAX_RESPONSE_BYTES,
    BoundaryClient,
    boundary_clients,
    checked_max_response_bytes,
    provider_text,
    request_ids,
)

__all__ = ["MAX_OPTIONS", "SglangDecisionsEvaluator", "sglang_question", "unsendable"]

_KINDS = {"yes_no": "yes_no", "choice": "choice", "rubric": "score"}
_WORDS = {"yes_no": "yes/no", "choice": "choice", "rubric": "rubric"}

#: sglang labels a choice's options A to Z: it takes no more. (It labels a score's levels 0
#: to 9, and takes at most 10, as many as a check's rubric may have.)
MAX_OPTIONS = 26

_PATH = "/decisions"
_WHERE = "POST /v1/decisions"


def sglang_question(question: Question, name: str) -> dict[str, Any]:
    """The sglang question for one check question: yes/no -> ``yes_no``; choice -> ``choice``
    with each ``one_of`` name as an option ``name`` and its text as the ``description``;
    rubric -> ``score`` with the levels, worst first (a level's index is its label). Every
    text is :func:`~checkprofile.adapters._common.sendable`."""
    if isinstance(question, ChoiceQuestion):
        asked: dict[str, Any] = {
            "id": name,
            "type": "choice",
            "question": question.ask,
            "options": [{"name": value, "description": text} for value, text in question.one_of],
        }
    elif isinstance(question, RubricQuestion):
        asked = {
            "id": name,
            "type": "score",
            "question": question.ask,
            "levels": list(question.levels),
        }
    else:
        asked = {"id": name, "type": "yes_no", "question": question.ask}
    return sendable(asked)  # type: ignore[no-any-return]


def unsendable(question: Question) -> str | None:
    """Why sglang would refuse ``question`` (its request model's rules), or ``None``: a
    choice of more than 26 options, an option name with a control or line-break character,
    or two names that are the same once case and surrounding spaces are set aside."""
    if not isinstance(question, ChoiceQuestion):
        return None
    if len(question.names) > MAX_OPTIONS:
        return (
            f"sglang's /v1/decisions takes at most {MAX_OPTIONS} options (labelled A to Z);"
            f" this choice has {len(question.names)}"
        )
    seen: set[str] = set()
    for name in question.names:
        if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in name):
            return f"sglang refuses the option name {show(name)}: it holds a control character"
        key = name.strip().casefold()
        if not key or key in seen:
            return f"sglang refuses the option name {show(name)}: it is blank or repeats another"
        seen.add(key)
    return None


async def _close(client: BoundaryClient) -> None:
    await client.aclose()


def _name(index: int) -> str:
    # Questions are named by position: an ask is prose, and the id is only a key.
    return f"q{index}"


class SglangDecisionsEvaluator:
    """Answers a check with one request to an sglang server's ``/v1/decisions``: the
    material as the ``input`` (one JSON object, which the server writes into the prompt as
    compact JSON), one question per check question.

    ``model`` is sent as the request's ``model``. sglang answers with the name it was sent,
    not one of its own: the reply names it, and each answer is marked ``model_echoed``.
    ``base_url`` is the API root **with** ``/v1`` (``http://127.0.0.1:30000/v1``), required:
    there is no default host. ``api_key`` is sent as ``Authorization: Bearer ...`` when given
    (a server started with ``--api-key``). ``timeout`` is in seconds for the whole exchange;
    ``max_response_bytes`` caps the response body, decoded. A redirect is never followed.

    Each answer is read on its own and has ``source="native"``, with the server's
    distribution: a yes/no answer's ``p`` is the probability of ``yes``; a choice's name is
    the server's ``choice`` and its confidence that name's probability; a rubric level is the
    most probable level, ties going to the worse one, and its confidence that level's
    probability. An answer that cannot be read strictly is ``Failure("malformed")`` for its
    question only. A question sglang's request model would refuse (see :func:`unsendable`) is
    ``Failure("unsupported")`` and is not sent; the others are. HTTP and transport errors are
    failures of every question sent, with their reason.

    Raises ``ValueError`` at once for a bad ``model``, ``base_url``, ``timeout`` or
    ``max_response_bytes``.
    """

    #: The ``gen_ai.operation.name`` of its calls in telemetry (docs/operations.md).
    operation_name = "decisions"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self._model = checked_model(model)
        seconds = checked_timeout(timeout)
        cap = checked_max_response_bytes(max_response_bytes)
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(
                f"base_url must be an sglang server's API root such as"
                f" http://127.0.0.1:30000/v1, got {show(base_url)}"
            )
        self._url = base_url.rstrip("/") + _PATH
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

        # sglang's API is sent as it is, through the boundary's client itself.
        self._clients = boundary_clients(
            lambda http: http, _close, timeout=seconds, max_response_bytes=cap
        )

    @property
    def model(self) -> str:
        """The configured model name, which is also the name sglang answers with."""
        return self._model

    async def answer(self, bundle: Bundle) -> Reply:
        """One request for the questions of ``bundle.check`` sglang takes; see the class
        docstring."""
        answers: list[Answer | Failure | None] = [None] * len(bundle.check)
        model = self._model
        usage: Usage | None = None
        sent: list[int] = []
        for index, question in enumerate(bundle.check):
            why = unsendable(question)
            if why is None:
                sent.append(index)
            else:
                answers[index] = Failure("unsupported", why)
        if sent:
            named, read, usage = await self._ask(bundle, sent)
            model = named or model
            for index, answer in zip(sent, read, strict=True):
                answers[index] = marked_echoed(answer, model, self._model)
        return Reply(model, [answer for answer in answers if answer is not None], usage=usage)

    async def _ask(
        self, bundle: Bundle, sent: Sequence[int]
    ) -> tuple[str | None, list[Answer | Failure], Usage | None]:
        """The model the host named (``None`` when it named none readable), the answer or
        failure of each question of ``sent``, and the usage the host reported."""
        with request_ids() as ids:
            model, entries, data = await self._exchange(bundle, sent)
        figures = data.get("usage") if is_mapping(data) else None
        return (
            model,
            entries,
            usage_of(
                figures,
                ids,
                input_key="prompt_tokens",
                output_key="completion_tokens",
                details_key="prompt_tokens_details",
            ),
        )

    async def _exchange(
        self, bundle: Bundle, sent: Sequence[int]
    ) -> tuple[str | None, list[Answer | Failure], object]:
        body = {
            "model": sendable(self._model),
            "input": material_state(bundle),
            "questions": [sglang_question(bundle.check[i], _name(i)) for i in sent],
        }
        try:
            client = self._clients.get()
            response = await client.post(self._url, json=body, headers=self._headers)
            if not 200 <= response.status_code < 300:
                return None, [_refused(response, material_words(bundle))] * len(sent), None
            data: object = json.loads(response.content)
            model, found = _answers(data)
        except Malformed as error:
            return None, [Failure("malformed", str(error))] * len(sent), data
        except Exception as error:  # every HTTP, transport and JSON error is a Failure
            failure = failure_from_exception(error, sent=material_words(bundle))
            return None, [failure] * len(sent), None
        return model, [_read(bundle.check[i], found.get(_name(i))) for i in sent], data

    async def aclose(self) -> None:
        """Close the HTTP connections this evaluator opened."""
        for client in self._clients.current():
            await client.aclose()


def _refused(response: httpx2.Response, words: str) -> Failure:
    try:
        body: object = json.loads(response.content)
    except ValueError:
        body = response.text
    return failure_from_status(
        response.status_code, body, response.headers, where=_WHERE, sent=words
    )


def _answers(data: object) -> tuple[str, Mapping[str, object]]:
    if not is_mapping(data):
        raise Malformed(f"the response is not a JSON object: {show(data)}")
    # A model name that is not a short text fails every question (BoundaryError).
    model = provider_text(data.get("model"), "the response's model name")
    answers = data.get("answers")
    if not is_mapping(answers):
        raise Malformed(f"the response's answers are not a map by question id: {show(answers)}")
    return model, answers


def _read(question: Question, item: object) -> Answer | Failure:
    expected = _KINDS[question.kind]
    try:
        if item is None:
            raise Malformed(f"the response has no {expected} answer for {show(question.ask)}")
        if not is_mapping(item):
            raise Malformed(f"an answer is not a JSON object: {show(item)}")
        kind = item.get("type")
        if kind != expected:
            raise Malformed(f"a {_WORDS[question.kind]} question got a {show(kind)} answer")
        probabilities = item.get("probabilities")
        if not is_mapping(probabilities):
            raise Malformed(f"the probabilities are not a map: {show(probabilities)}")
        if isinstance(question, ChoiceQuestion):
            choice = item.get("choice")
            return read_choice(
                choice,
                probabilities.get(choice) if isinstance(choice, str) else None,
                probabilities.items(),
                question.names,
                source="native",
            )
        if isinstance(question, RubricQuestion):
            levels = [(_level(key), value) for key, value in probabilities.items()]
            read = read_rubric(1.0, levels, len(question.levels), source="native")
            assert read.distribution is not None  # read_rubric keeps the distribution
            return RubricAnswer(
                read.level,
                dict(read.distribution)[read.level],
                source="native",
                distribution=read.distribution,
            )
        pairs = distribution(probabilities.items(), ("yes", "no"), "the yes/no probabilities")
        return read_yes_no(pairs[0][1], source="native")
    except Malformed as error:
        return Failure("malformed", str(error))


def _level(key: object) -> Any:
    """A level's label, ``"0"`` to ``"9"``, as its index; any other key as it is (so the
    distribution names it as not asked)."""
    if isinstance(key, str) and len(key) == 1 and "0" <= key <= "9":
        return int(key)
    return key
