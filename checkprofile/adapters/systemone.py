"""An evaluator on the System One API (``POST /v1/systemone``) through the official
``typesafe-sdk``: TypeSafe's Jev, or any compatible host through ``base_url``.

Install with ``pip install "checkprofile[systemone]"`` (in a clone:
``pip install -e ".[systemone]"``).
See ``docs/evaluators-systemone.md``.
"""

from __future__ import annotations

from collections.abc import Mapping

try:
    import httpx2
    import typesafe_sdk
except ImportError as error:  # the extra is not installed
    from ._spec import install_hint

    raise ImportError(
        f"checkprofile.adapters.systemone needs typesafe-sdk: {install_hint('systemone')}"
    ) from error

from .. import (
    Answer,
    Bundle,
    ChoiceQuestion,
    Failure,
    Question,
    Reply,
    RubricQuestion,
)
from .._convert import show
from ._common import (
    DEFAULT_TIMEOUT,
    LoopClients,
    checked_model,
    checked_timeout,
    material_state,
    sendable,
    shared_ssl_context,
)
from ._errors import failure_from_exception
from ._read import Malformed, read_choice, read_rubric, read_yes_no

__all__ = ["SystemOneEvaluator"]

# The SDK's retries are off: the profile's single re-ask (run_check) is the only retry, so a
# failing host sees exactly two requests per check.
_NO_RETRIES = typesafe_sdk.RetryPolicy(max_retries=0)


_KINDS = {"yes_no": "noul", "choice": "choice", "rubric": "score"}

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
    seconds per HTTP operation. SDK retries are off.

    Each answer has ``source="native"``; choice and rubric answers keep the host's
    distribution. A rubric level is the most probable level, ties going to the worse level;
    its confidence is the host's. A response that cannot be read strictly (a missing answer,
    a number out of range, a distribution not summing to 1, a choice that is not the most
    probable) is ``Failure("malformed")`` for that question; HTTP and transport errors are
    failures of every question, with their reason.

    Raises ``ValueError`` at once for a bad ``model`` or ``timeout`` or a missing API key.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self._model = checked_model(model)
        seconds = checked_timeout(timeout)

        def make() -> typesafe_sdk.AsyncTypeSafeClient:
            # The SDK's own HTTP client, but on the process's one TLS context: loading the CA
            # certificates per client was nearly all the cost of building an evaluator.
            http = httpx2.AsyncClient(timeout=seconds, limits=_LIMITS, verify=shared_ssl_context())
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
            self._clients = LoopClients(make, _close)
        except typesafe_sdk.TypeSafeError as error:
            raise ValueError(f"cannot set up System One for {self._model!r}: {error}") from None

    @property
    def model(self) -> str:
        """The configured model (it may be an alias)."""
        return self._model

    async def answer(self, bundle: Bundle) -> Reply:
        """One request for all questions of ``bundle.check``; see the class docstring."""
        questions = {_name(i): system_one_question(q) for i, q in enumerate(bundle.check)}
        try:
            response = await self._clients.get().system_one(
                state=material_state(bundle), questions=questions, model=self._model
            )
        except Exception as error:  # every SDK, HTTP and transport error is a Failure
            failure = failure_from_exception(error)
            return Reply(self._model, [failure] * len(bundle.check))
        answers = response.answers
        return Reply(
            response.model,
            [_read(question, answers.get(_name(i))) for i, question in enumerate(bundle.check)],
        )

    async def aclose(self) -> None:
        """Close the HTTP connections this evaluator opened."""
        for client in self._clients.current():
            await client.aclose()


def _read(question: Question, answer: object) -> Answer | Failure:
    expected = _KINDS[question.kind]
    try:
        if answer is None:
            raise Malformed(f"the response has no {expected} answer for {show(question.ask)}")
        if isinstance(question, ChoiceQuestion):
            if not isinstance(answer, typesafe_sdk.ChoiceAnswer):
                raise Malformed(f"a choice question got a {_type(answer)} answer")
            return read_choice(
                answer.choice,
                answer.confidence,
                answer.probabilities.items(),
                question.names,
                source="native",
            )
        if isinstance(question, RubricQuestion):
            if not isinstance(answer, typesafe_sdk.ScoreAnswer):
                raise Malformed(f"a rubric question got a {_type(answer)} answer")
            probabilities: Mapping[int, float] = answer.probabilities
            return read_rubric(
                answer.confidence,
                probabilities.items(),
                len(question.levels),
                source="native",
            )
        if not isinstance(answer, typesafe_sdk.NoulAnswer):
            raise Malformed(f"a yes/no question got a {_type(answer)} answer")
        return read_yes_no(answer.noul, source="native")
    except Malformed as error:
        return Failure("malformed", str(error))


def _type(answer: object) -> str:
    kind = getattr(answer, "type", None)
    return kind if isinstance(kind, str) else type(answer).__name__
