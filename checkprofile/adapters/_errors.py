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

__all__ = [
    "ECHO_CHARS",
    "failure_from_exception",
    "failure_from_status",
    "lead",
    "retry_after_seconds",
]

# How much of an exception's text goes into a failure's detail (twice this).
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
    status: int, body: object, headers: Mapping[str, str], *, where: str = "", sent: str = ""
) -> Failure:
    """The failure an unsuccessful HTTP response stands for.

    401 and 403 are ``auth``, and so is a refusal a key-checking proxy names as its key
    check's (LiteLLM's ``auth_error``, ``no_db_connection``, ``*_access_denied`` types); 429
    ``rate_limited``; 408 ``timeout``; 413, or a 400/422 whose body speaks of the context
    length, ``tokens_exceeded``; a 400 naming a content filter ``refusal``; 502, 503, 504 and
    529 ``unavailable``, and so is a 5xx whose own words say the host behind a proxy could not
    be reached (LiteLLM's ``APIConnectionError``); any other 5xx ``server_error``; the rest
    ``unknown``. ``retry_after`` is set from the headers when the server gave one. ``where``
    (e.g. ``"POST /v1/systemone"``) starts the detail.

    The detail holds only what the server says about the failure, never what it may quote of
    the request (which holds the submission): the error's code (when it is a plain
    identifier) and the message's lead, up to where hosts start quoting (see :func:`lead`).
    ``sent`` is the material's texts (:func:`~checkprofile.adapters._common.material_words`):
    a lead that holds :data:`ECHO_CHARS` characters in a row of them, case set aside (a host
    that quotes the request without marking it), is left out, and the detail says so.
    """
    code = _code(body)
    said = _said(body)
    # The reason is recognised in the message's head, quotes and all (never recorded), or in
    # what is said of a structured one (its values are the request's, not the host's words).
    message = _message(body)
    words = message[: _LEAD_CHARS * 4] if isinstance(message, str) else said
    reason: FailureReason
    if status in (401, 403) or (400 <= status < 500 and _PROXY_AUTH.match(code)):
        reason = "auth"
    elif status == 429:
        reason = "rate_limited"
    elif status == 408:
        reason = "timeout"
    elif status == 413 or (
        status in (400, 422) and _TOO_LONG.search(f"{code} {words}") is not None
    ):
        reason = "tokens_exceeded"
    elif status in (400, 422) and _REFUSED.search(f"{code} {words}") is not None:
        reason = "refusal"
    elif status in (502, 503, 504, 529) or (status >= 500 and _UNREACHED.search(said) is not None):
        reason = "unavailable"
    elif status >= 500:
        reason = "server_error"
    else:
        reason = "unknown"
    if said and sent and _echoes(said, sent):
        said = "[its message quotes the request: left out]"
    detail = f"HTTP {status}" + (f" ({code})" if code else "") + (f": {said}" if said else "")
    if where:
        detail = f"{where}: {detail}"
    return Failure(reason, detail, retry_after=retry_after_seconds(headers))


#: How many characters in a row of the material make a host's words a quote of it.
ECHO_CHARS = 16


def _echoes(said: str, sent: str) -> bool:
    """Whether ``said`` holds :data:`ECHO_CHARS` characters in a row of ``sent``, case set
    aside (a host may write what it quotes in capitals)."""
    said, sent = said.casefold(), sent.casefold()
    last = len(said) - ECHO_CHARS
    return any(said[at : at + ECHO_CHARS] in sent for at in range(0, last + 1))


def _message(body: object) -> object:
    """The server's message about the error as it sent it (a text, or a structured detail):
    read to recognise the reason, never recorded as it is."""
    if is_mapping(body):
        error = body.get("error")
        if is_mapping(error):
            return error.get("message")
        if isinstance(error, str):
            return error
        return body.get("message", body.get("detail"))
    return body


def _said(body: object) -> str:
    """What the server says about the failure, for the detail: the lead of its message
    (:func:`lead`), or of each problem of a structured one; ``""`` when it said nothing."""
    text = _message(body)
    if text is None:
        return ""
    if not isinstance(text, str):
        return _problems(text)
    return lead(text)


# Where a host's message starts quoting what it was sent: a quote (but an apostrophe inside a
# word), a square or curly or angle bracket (a value's dump), an equals sign, a backslash, a line
# break or any other control character. (A colon too, but for the one after an exception's
# name: see _NAMED.) Parentheses are prose: "request (10049 tokens) exceeds ...".
_QUOTING = re.compile(
    r"""["'`\u2018-\u201f\u00ab\u00bb\u2039\u203a\[\]{}<>=\\\x00-\x1f\x7f-\x9f]"""
)
# "SomeError: ..." or "litellm.BadRequestError: ..." at a colon: an exception's name written
# before its message, as hosts and proxies render them; the colon after it is not a quote.
_NAMED = re.compile(r"(?:\A|[ -])[A-Za-z_][\w.]{0,80}(?:Error|Exception|Warning)\Z", re.ASCII)
# The most characters of a message's lead a detail keeps.
_LEAD_CHARS = 200


def lead(message: str) -> str:
    """``message``, a host's words about an error, cut where hosts start quoting what they
    were sent: at the first quote, square, curly or angle bracket, equals sign, backslash or
    control character, and
    at the first colon that does not follow an exception's name (``"litellm.BadRequestError:
    Invalid Decisions request: 3 validation errors ..."`` keeps ``litellm.BadRequestError:
    Invalid Decisions request``). Whitespace is made single spaces, and the lead is cut to
    :data:`_LEAD_CHARS` characters (at a word, where one ends near there). What a host
    quotes of the request (the submission among it) is never in it, wherever the host puts
    it after its own words."""
    head = message[: _LEAD_CHARS * 4]  # a message may be megabytes: only its head is read
    end = _quote_at(head)
    start = 0
    while True:
        colon = head.find(":", start, end)
        if colon < 0:
            break
        if _NAMED.search(head, 0, colon) is None:
            end = colon
            break
        start = colon + 1
    text = one_line(head[:end]).rstrip(" -,;.")
    if len(text) > _LEAD_CHARS:
        cut = text.rfind(" ", _LEAD_CHARS - 40, _LEAD_CHARS)
        text = text[: cut if cut > 0 else _LEAD_CHARS - 1].rstrip(" -,;.") + "…"
    return escaped_text(text)


def _quote_at(head: str) -> int:
    """Where ``head`` starts quoting (its length when it does not): an apostrophe between
    two letters (``model's``) is a word's, not a quote."""
    for found in _QUOTING.finditer(head):
        at = found.start()
        if (
            head[at] in "'\u2019"
            and 0 < at < len(head) - 1
            and head[at - 1].isalpha()
            and head[at + 1].isalpha()
        ):
            continue
        return at
    return len(head)


# A part of a problem's location that is the request's structure (a field name or an index),
# not a value of it.
_FIELD = re.compile(r"[A-Za-z_][\w.-]{0,39}\Z", re.ASCII)


def _problems(detail: object) -> str:
    """A structured error (FastAPI's ``detail``: ``[{"loc", "msg", "input"}, ...]``) as the
    lead of its messages and where they point, never the values: a host's validation error
    echoes the request (``input``), and the request holds the submission. A location part
    that is not a field name or an index is written ``*``."""
    items = detail if isinstance(detail, list) else [detail]
    said = []
    for item in items[:3]:
        if not is_mapping(item):
            continue
        message = item.get("msg", item.get("message"))
        if not isinstance(message, str):
            continue
        loc = item.get("loc")
        where = ".".join(_place(part) for part in loc[:8]) if isinstance(loc, list) else ""
        text = lead(message)
        said.append(f"{where}: {text}" if where else text)
    more = len(items) - len(said)
    if more > 0 and said:
        said.append(f"and {more} more")
    return "; ".join(said)


def _place(part: object) -> str:
    if type(part) is int:
        return str(part)
    return part if isinstance(part, str) and _FIELD.match(part) else "*"


# A code or type that is a plain identifier (``context_length_exceeded``,
# ``invalid_request_error``), not a number and not a text that may quote anything.
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.:-]{0,79}\Z", re.ASCII)
# The error types by which a key-checking proxy says it refused the key: LiteLLM's
# ProxyErrorTypes for its key check (``no_db_connection``: a key other than its master key,
# which it has no database to look up; ``*_access_denied``: a key not allowed the model).
_PROXY_AUTH = re.compile(
    r"(?:auth_error|no_db_connection|token_not_found_in_db|expired_key|\w+_access_denied)\Z",
    re.ASCII,
)
# A proxy's own words for a host behind it that could not be reached: LiteLLM's
# "litellm.APIConnectionError: ... Cannot connect to host ...".
_UNREACHED = re.compile(
    r"\bAPIConnectionError\b|\b(?:cannot|could not|failed to) connect\b|\bconnection refused\b",
    re.IGNORECASE | re.ASCII,
)


def _code(body: object) -> str:
    """The error's code, else its type, when one is a plain identifier; ``""`` otherwise (a
    code that is only a number says no more than the status)."""
    if not is_mapping(body):
        return ""
    error = body.get("error")
    source = error if is_mapping(error) else body
    for key in ("code", "type"):
        value = source.get(key)
        if isinstance(value, str) and _IDENTIFIER.match(value):
            return value
    return ""


def failure_from_exception(error: BaseException, *, sent: str = "") -> Failure:
    """The failure an exception raised while asking a model stands for.

    Understands the ``typesafe-sdk`` and ``openai`` exception families, ``httpx2``/``httpx``
    transport errors, :class:`~checkprofile.errors.EvaluatorError` (its own reason), timeouts
    (``timeout``), undecodable JSON (``malformed``), a response body cut off before its end
    (``malformed``) and connection failures (``unavailable``). An :class:`EvaluatorError` an
    SDK error was raised from (the transport's refusal of a redirect or of a body over its cap)
    gives its own reason. Anything else is ``unknown``, never a pass or a fail. The detail
    names the exception type and its message; an HTTP error's is :func:`failure_from_status`'s,
    with ``sent`` (the material's texts) as there.
    """
    ours = _evaluator_error(error)
    if ours is not None:
        return Failure(ours.reason, error_text(ours, _DETAIL_CHARS * 2))
    for check in (_typesafe_failure, _openai_failure, _transport_failure):
        failure = check(error, sent)
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


def _typesafe_failure(error: BaseException, sent: str) -> Failure | None:
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
            error.status, error.body, error.headers, where=error.endpoint or "", sent=sent
        )
    if isinstance(error, sdk.TypeSafeAPIConnectionError):
        return _connection_failure(error)
    return Failure("unknown", _describe(error))


def _openai_failure(error: BaseException, sent: str) -> Failure | None:
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
            error.status_code, error.body, error.response.headers, where=where, sent=sent
        )
    if isinstance(error, sdk.APIConnectionError):
        return _connection_failure(error)
    return Failure("unknown", _describe(error))


def _transport_failure(error: BaseException, sent: str) -> Failure | None:
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
            return failure_from_status(response.status_code, body, response.headers, sent=sent)
        return _connection_failure(error)
    return None
