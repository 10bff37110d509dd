"""What went wrong, in the profile's terms: SDK and HTTP errors mapped to a :class:`Failure`.

Every adapter sends its request through an official SDK (``typesafe-sdk``, ``openai``) or a
plain HTTP client, and each of those raises its own exception family. This module turns any of
them into one :class:`~checkprofile.Failure` with a :data:`~checkprofile.errors.FailureReason`,
so the core's re-ask and the verdict never depend on which SDK was used.

The SDKs are optional extras, so nothing here imports them: an exception of an SDK can only
exist once that SDK has been imported, so its classes are looked up in ``sys.modules``.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from types import ModuleType

from .._shown import error_text, escaped_text, one_line
from .._types import is_mapping
from .._verdict import Failure
from ..errors import EvaluatorError, FailureReason

__all__ = ["failure_from_exception", "failure_from_status", "retry_after_seconds"]

# How much of a server's error message goes into a failure's detail: enough to recognise it,
# never a whole body (a body may echo the submission back).
_DETAIL_CHARS = 200

# Words by which providers say the input was too long. OpenAI: code "context_length_exceeded";
# others say it in the message ("maximum context length", "too many tokens", ...).
_TOO_LONG = re.compile(
    r"context[_ ]length|context[_ ]window|maximum context|too many (input )?tokens|"
    r"tokens?[_ ]exceeded|token limit|input is too long|prompt is too long|too long for|"
    # llama.cpp's llama-server: type "exceed_context_size_error", "exceeds the available
    # context size".
    r"exceeds? (the )?(available )?context|exceed_context_size",
    re.IGNORECASE | re.ASCII,
)
# Words by which providers say the model declined on policy grounds (a 400 for the request).
# re.ASCII: case-insensitive matching is ASCII's (Unicode's would take the Kelvin sign for k).
_REFUSED = re.compile(
    r"content[_ ]filter|content[_ ]policy|refus|safety system", re.IGNORECASE | re.ASCII
)
# A number of seconds (or milliseconds) as RFC 9110 writes delay-seconds, a fraction allowed:
# ASCII digits only (float() takes any script's digits, underscores, "nan" and "1e3").
_SECONDS = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,9})?\Z")

# h11's words for a response whose body stopped before its declared end: the server answered,
# but what arrived is not the whole answer (a cut-off body is malformed, not unavailable).
_CUT_OFF = re.compile(r"without sending complete message body|incomplete chunked read")


def retry_after_seconds(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """The wait a server asked for, in seconds, from ``retry-after-ms`` (milliseconds, as
    OpenAI and TypeSafe send it) or ``Retry-After`` (seconds or an HTTP-date, RFC 9110 section
    10.2.3). ``None`` when neither is there or readable; a date in the past gives ``0.0``.
    Header names are matched without regard to case."""
    lowered = {str(name).lower(): str(value) for name, value in headers.items()}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    try:
        moment = parsedate_to_datetime(raw.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment.tzinfo is None:  # RFC 9110 dates are GMT; a naive one is read as such
        return None
    clock = time.time() if now is None else now
    return max(0.0, moment.timestamp() - clock)


def _number(raw: str | None) -> float | None:
    if raw is None:
        return None
    text = raw.strip(" \t")  # HTTP's optional whitespace around a field value
    return float(text) if _SECONDS.match(text) else None


def failure_from_status(
    status: int, body: object, headers: Mapping[str, str], *, where: str = ""
) -> Failure:
    """The failure an unsuccessful HTTP response stands for.

    401 and 403 are ``auth``; 429 ``rate_limited``; 408 ``timeout``; 413, or a 400/422 whose
    body speaks of the context length, ``tokens_exceeded``; a 400 naming a content filter
    ``refusal``; 502, 503, 504 and 529 ``unavailable``; any other 5xx ``server_error``; the
    rest ``unknown``. ``retry_after`` is set from the headers when the server gave one.
    ``where`` (e.g. ``"POST /v1/systemone"``) starts the detail.
    """
    message = _message(body)
    code = _code(body)
    reason: FailureReason
    if status in (401, 403):
        reason = "auth"
    elif status == 429:
        reason = "rate_limited"
    elif status == 408:
        reason = "timeout"
    elif status == 413 or (
        status in (400, 422) and _TOO_LONG.search(f"{code} {message}") is not None
    ):
        reason = "tokens_exceeded"
    elif status in (400, 422) and _REFUSED.search(f"{code} {message}") is not None:
        reason = "refusal"
    elif status in (502, 503, 504, 529):
        reason = "unavailable"
    elif status >= 500:
        reason = "server_error"
    else:
        reason = "unknown"
    detail = f"HTTP {status}" + (f" ({code})" if code else "") + (f": {message}" if message else "")
    if where:
        detail = f"{where}: {detail}"
    return Failure(reason, detail, retry_after=retry_after_seconds(headers))


def _message(body: object) -> str:
    """The server's own words about the error, shortened; ``""`` when it gave none."""
    text: object = body
    if is_mapping(body):
        error = body.get("error")
        if is_mapping(error):
            text = error.get("message")
        elif isinstance(error, str):
            text = error
        else:
            text = body.get("message", body.get("detail"))
    if text is None:
        return ""
    if not isinstance(text, str):
        text = _problems(text)
    text = escaped_text(one_line(text[: _DETAIL_CHARS * 4]))
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 1] + "…"


def _problems(detail: object) -> str:
    """A structured error (FastAPI's ``detail``: ``[{"loc", "msg", "input"}, ...]``) as its
    messages and where they point, never the values: a host's validation error echoes the
    request (``input``), and the request holds the submission."""
    items = detail if isinstance(detail, list) else [detail]
    said = []
    for item in items[:3]:
        if not is_mapping(item):
            continue
        message = item.get("msg", item.get("message"))
        if not isinstance(message, str):
            continue
        loc = item.get("loc")
        where = (
            ".".join(str(part)[:40] for part in loc[:8] if isinstance(part, (str, int)))
            if isinstance(loc, list)
            else ""
        )
        said.append(f"{where}: {message[:_DETAIL_CHARS]}" if where else message[:_DETAIL_CHARS])
    more = len(items) - len(said)
    if more > 0 and said:
        said.append(f"and {more} more")
    return "; ".join(said)


def _code(body: object) -> str:
    if not is_mapping(body):
        return ""
    error = body.get("error")
    source = error if is_mapping(error) else body
    code = source.get("code") or source.get("type")
    return str(code)[:80] if isinstance(code, (str, int)) else ""


def failure_from_exception(error: BaseException) -> Failure:
    """The failure an exception raised while asking a model stands for.

    Understands the ``typesafe-sdk`` and ``openai`` exception families, ``httpx2``/``httpx``
    transport errors, :class:`~checkprofile.errors.EvaluatorError` (its own reason), timeouts
    (``timeout``), undecodable JSON (``malformed``), a response body cut off before its end
    (``malformed``) and connection failures (``unavailable``). An :class:`EvaluatorError` an
    SDK error was raised from (the transport's refusal of a redirect or of a body over its cap)
    gives its own reason. Anything else is ``unknown``, never a pass or a fail. The detail
    names the exception type and its message.
    """
    ours = _evaluator_error(error)
    if ours is not None:
        return Failure(ours.reason, error_text(ours, _DETAIL_CHARS * 2))
    for check in (_typesafe_failure, _openai_failure, _transport_failure):
        failure = check(error)
        if failure is not None:
            return failure
    if isinstance(error, json.JSONDecodeError):
        return Failure("malformed", f"the response is not JSON: {error}")
    if isinstance(error, TimeoutError):
        return Failure("timeout", _describe(error))
    if isinstance(error, ConnectionError):
        return Failure("unavailable", _describe(error))
    return Failure("unknown", _describe(error))


def _evaluator_error(error: BaseException) -> EvaluatorError | None:
    """The :class:`EvaluatorError` that ``error`` is or was raised from: the transport's
    :class:`~checkprofile.adapters._transport.BoundaryError` arrives wrapped in an SDK's
    connection error, and its reason is the one that counts."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, EvaluatorError):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _describe(error: BaseException) -> str:
    return error_text(error, _DETAIL_CHARS * 2)


def _loaded(name: str) -> ModuleType | None:
    return sys.modules.get(name)


def _connection_failure(error: BaseException) -> Failure:
    """A request that got no usable response: a cut-off body if the cause chain says so."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if _CUT_OFF.search(str(cause)):
            return Failure("malformed", f"the response body was cut off: {_describe(cause)}")
        cause = cause.__cause__ or cause.__context__
    return Failure("unavailable", _describe(error))


def _typesafe_failure(error: BaseException) -> Failure | None:
    sdk = _loaded("typesafe_sdk")
    if sdk is None or not isinstance(error, sdk.TypeSafeError):
        return None
    if isinstance(error, sdk.TypeSafeAPITimeoutError):
        return Failure("timeout", _describe(error))
    if isinstance(error, sdk.TypeSafeAPIResponseValidationError):
        # The SDK names the first field it could not read; the body itself is left out.
        field = getattr(error, "field_path", "")
        where = f" at {field!r}" if field else ""
        return Failure("malformed", f"the response is not a System One response{where}")
    if isinstance(error, sdk.TypeSafeAPIError):
        return failure_from_status(
            error.status, error.body, error.headers, where=error.endpoint or ""
        )
    if isinstance(error, sdk.TypeSafeAPIConnectionError):
        return _connection_failure(error)
    return Failure("unknown", _describe(error))


def _openai_failure(error: BaseException) -> Failure | None:
    sdk = _loaded("openai")
    if sdk is None or not isinstance(error, sdk.OpenAIError):
        return None
    if isinstance(error, sdk.APITimeoutError):
        return Failure("timeout", _describe(error))
    if isinstance(error, sdk.APIResponseValidationError):
        return Failure("malformed", f"the response does not have the expected shape: {error}")
    if isinstance(error, sdk.APIStatusError):
        try:
            request = error.response.request
            where = f"{request.method} {request.url.copy_with(query=None)}"
        except RuntimeError:  # a response built without its request
            where = ""
        return failure_from_status(
            error.status_code, error.body, error.response.headers, where=where
        )
    if isinstance(error, sdk.APIConnectionError):
        return _connection_failure(error)
    return Failure("unknown", _describe(error))


def _transport_failure(error: BaseException) -> Failure | None:
    for name in ("httpx2", "httpx"):
        http = _loaded(name)
        if http is None or not isinstance(error, http.HTTPError):
            continue
        if isinstance(error, http.TimeoutException):
            return Failure("timeout", _describe(error))
        if isinstance(error, http.HTTPStatusError):
            response = error.response
            try:
                body: object = response.json()
            except ValueError:
                body = response.text
            return failure_from_status(response.status_code, body, response.headers)
        return _connection_failure(error)
    return None
