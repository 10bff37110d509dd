"""An evaluator on the System One API (``POST /v1/systemone``) through the official
``typesafe-sdk``: TypeSafe's Jev, or any compatible host through ``base_url``.

Install with ``pip install "checkprofile[systemone]"`` (in a clone:
``pip install -e ".[systemone]"``).
See ``docs/evaluators-systemone.md``.
"""

from __future__ import annotations

from typing import Any

try:
    import httpx2
    import pydantic
    import typesafe_sdk
except ImportError as error:  # the extra is not installed
    from ._spec import install_hint

    raise ImportError(
        f"checkprofile.adapters.systemone needs typesafe-sdk: {install_hint('systemone')}"
    ) from error

from .._bundle import Bundle
from .._check import ChoiceQuestion, Question, RubricQuestion
from .._evaluator import Reply
from .._shown import bare, names_text, show
from .._types import is_mapping
from .._verdict import Answer, Failure
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
from ._errors import failure_from_exception
from ._read import Malformed, read_choice, read_rubric, read_yes_no
from ._transport import (
    DEFAULT_MAX_RESPONSE_BYTES,
    BoundaryClient,
    BoundaryError,
    boundary_clients,
    checked_max_response_bytes,
    provider_text,
    request_ids,
)

__all__ = ["SystemOneEvaluator"]

# The SDK's retries are off: the profile's single re-ask (run_check) is the only retry, so a
# failing host sees exactly two requests per check.
_NO_RETRIES = typesafe_sdk.RetryPolicy(max_retries=0)


_KINDS = {"yes_no": "noul", "choice": "choice", "rubric": "score"}
_WORDS = {"yes_no": "yes/no", "choice": "choice", "rubric": "rubric"}


class _Body(pydantic.BaseModel):
    """The response as the SDK reads it (its errors, its status handling), but with each
    answer left as JSON: the SDK would refuse the whole response for one answer it cannot
    read (a ``legend`` given as a list), and drop an ``unsupported`` answer. Each answer is
    read here, one question at a time."""

    model_config = pydantic.ConfigDict(extra="ignore", frozen=True)

    model: Any = None
    answers: Any = None
    usage: Any = None


# The connection limits typesafe-sdk gives the HTTP client it makes itself.
_LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=100, keepalive_expiry=30.0)


async def _close(client: typesafe_sdk.AsyncTypeSafeClient) -> None:
    await client.aclose()


def system_one_question(question: Question) -> typesafe_sdk.Question:
    """The System One question for one check question: yes/no -> ``noul``; choice ->
    ``choice`` with the ``one_of`` descriptions as criteria; rubric -> ``score`` with the
    levels, worst first, as criteria (a level's position is its score)."""
    ask = sendable(question.ask)
    if isinstance(question, ChoiceQuestion):
        return typesafe_sdk.Choice(instructions=ask, criteria=sendable(dict(question.one_of)))
    if isinstance(question, RubricQuestion):
        return typesafe_sdk.Score(instructions=ask, criteria=sendable(list(question.levels)))
    return typesafe_sdk.Noul(instructions=ask)


def _name(index: int) -> str:
    # Questions are named by position: an ask is prose, and the name is only a key.
    return f"q{index}"


class SystemOneEvaluator:
    """Answers a check with one System One request: the material as the state (one JSON
    object), one question per check question.

    ``model`` is the model or alias to ask (``jev-latest``); the reply names the version the
    host reports having used. ``base_url`` is the API root without ``/v1`` (default: the SDK's,
    or ``TYPESAFE_BASE_URL``); ``api_key`` defaults to ``TYPESAFE_API_KEY``; ``timeout`` is in
    seconds for the whole exchange, connect to last byte; ``max_response_bytes`` caps the
    response body, decoded (see :mod:`checkprofile.adapters._transport`). SDK retries are off;
    a redirect is never followed.

    Each answer is read on its own. It has ``source="native"``; choice and rubric answers keep
    the host's distribution. A rubric level is the most probable level, ties going to the worse
    level; its confidence is the host's; its ``legend`` may be the map of levels or the list of
    the level texts in order. An answer that cannot be read strictly (missing, a number out of
    range, a distribution not summing to 1, a choice that is not the most probable, any other
    ``legend``) is ``Failure("malformed")`` for its question only; an ``unsupported`` answer
    is ``Failure("unsupported")`` naming what the host does answer. HTTP and transport errors,
    and a model name that is not a short text, are failures of every question.

    Raises ``ValueError`` at once for a bad ``model``, ``timeout`` or ``max_response_bytes``
    or a missing API key.
    """

    #: The ``gen_ai.operation.name`` of its calls in telemetry (docs/operations.md).
    operation_name = "system_one"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self._model = checked_model(model)
        seconds = checked_timeout(timeout)
        cap = checked_max_response_bytes(max_response_bytes)

        def make(http: BoundaryClient) -> typesafe_sdk.AsyncTypeSafeClient:
            return typesafe_sdk.AsyncTypeSafeClient(
                api_key=api_key,
                model=self._model,
                base_url=base_url,
                timeout=seconds,
                retry=_NO_RETRIES,
                # Bodies go uncompressed: the SDK would zstd-encode them whenever the codec is
                # there (always on Python 3.14), and not every compatible host accepts that.
                compression=False,
                http_client=http,
            )

        try:
            self._clients = boundary_clients(
                make, _close, timeout=seconds, max_response_bytes=cap, limits=_LIMITS
            )
        except typesafe_sdk.TypeSafeError as error:
            raise ValueError(f"cannot set up System One for {self._model!r}: {error}") from None

    @property
    def model(self) -> str:
        """The configured model (it may be an alias)."""
        return self._model

    async def answer(self, bundle: Bundle) -> Reply:
        """One request for all questions of ``bundle.check``; see the class docstring."""
        questions = {_name(i): system_one_question(q) for i, q in enumerate(bundle.check)}
        count = len(bundle.check)
        with request_ids() as ids:
            try:
                response = await self._clients.get().system_one(
                    state=material_state(bundle),
                    questions=questions,
                    model=self._model,
                    response_model=_Body,
                )
                model = provider_text(response.model, "the response's model name")
                if not is_mapping(response.answers):
                    raise BoundaryError(
                        f"the response's answers are not a map: {show(response.answers)}",
                        reason="malformed",
                    )
            except Exception as error:  # every SDK, HTTP and transport error is a Failure
                failures = [failure_from_exception(error, sent=material_words(bundle))] * count
                return Reply(self._model, failures, usage=usage_of(None, ids))
        answers = response.answers
        read = [_read(question, answers.get(_name(i))) for i, question in enumerate(bundle.check)]
        entries = [marked_echoed(entry, model, self._model) for entry in read]
        return Reply(model, entries, usage=usage_of(response.usage, ids))

    async def aclose(self) -> None:
        """Close the HTTP connections this evaluator opened."""
        for client in self._clients.current():
            await client.aclose()


def _read(question: Question, answer: object) -> Answer | Failure:
    """One question's answer, read strictly, or why it cannot be."""
    expected = _KINDS[question.kind]
    try:
        if answer is None:
            raise Malformed(f"the response has no {expected} answer for {show(question.ask)}")
        if not is_mapping(answer):
            raise Malformed(f"an answer is not a JSON object: {show(answer)}")
        kind = answer.get("type")
        if kind == "unsupported":
            return _unsupported(question, answer)
        if kind != expected:
            shown = bare(kind) if isinstance(kind, str) else show(kind)
            raise Malformed(f"a {_WORDS[question.kind]} question got a {shown} answer")
        if isinstance(question, ChoiceQuestion):
            return read_choice(
                answer.get("choice"),
                answer.get("confidence"),
                _entries(answer.get("probabilities"), "the choice probabilities").items(),
                question.names,
                source="native",
            )
        if isinstance(question, RubricQuestion):
            _check_legend(answer.get("legend"), question)
            return read_rubric(
                answer.get("confidence"),
                _levels(answer.get("probabilities")),
                len(question.levels),
                source="native",
            )
        return read_yes_no(answer.get("noul"), source="native")
    except Malformed as error:
        return Failure("malformed", str(error))


def _unsupported(question: Question, answer: Any) -> Failure:
    # What the host says it answers, bounded: a hostile list is shown as a few names.
    supported = answer.get("supported_types")
    listed = supported if isinstance(supported, list) else []
    kinds = [kind for kind in listed if isinstance(kind, str)]
    said = names_text(kinds) if kinds else "none named"
    return Failure(
        "unsupported",
        f"the host does not answer {_KINDS[question.kind]} ({_WORDS[question.kind]}) questions;"
        f" it answers: {said}",
    )


def _entries(value: object, what: str) -> dict[str, object]:
    if not is_mapping(value):
        raise Malformed(f"{what} are not a map: {show(value)}")
    return dict(value)


def _levels(value: object) -> list[tuple[int, object]]:
    """The level probabilities, keyed by level as JSON keys write it (``"0"``, ``"1"``)."""
    pairs: list[tuple[int, object]] = []
    for key, probability in _entries(value, "the level probabilities").items():
        if not (isinstance(key, str) and key.isascii() and key.isdigit() and len(key) <= 3):
            raise Malformed(f"the level probabilities name {show(key)}, which is not a level")
        pairs.append((int(key), probability))
    return pairs


def _check_legend(legend: object, question: RubricQuestion) -> None:
    """A ``legend`` is the map of levels to texts (as the API documents it) or the list of the
    question's level texts, worst first (as jev-compatible-server writes it); anything else
    is not a System One score answer."""
    if is_mapping(legend):
        return
    if isinstance(legend, list):
        sent = [sendable(text) for text in question.levels]
        if legend == sent:
            return
        raise Malformed(
            f"the legend lists {len(legend)} texts that are not the question's {len(sent)}"
            f" levels in order: {show(legend)}"
        )
    raise Malformed(f"the legend is neither a map nor a list of the levels: {show(legend)}")
