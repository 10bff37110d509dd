"""The provider boundary: how every adapter talks to a host it does not control.

Every adapter sends its requests through a :class:`BoundaryClient` (an ``httpx2.AsyncClient``,
so each SDK takes it as its own ``http_client``), and reads every text the host sends that can
reach a record through :func:`provider_text`. The rules hold for any host, however it behaves:

- **No redirect is followed.** A 3xx answer is ``Failure("redirected")``, naming the status and
  the host it pointed to (never the target's path or query, which may carry a token). The
  request, with its key and the submission, never goes to a host nobody configured, and no
  answer from one can pass a check.
- **One deadline per attempt**, ``timeout`` seconds from the request's start to the last byte
  of its body: a host that drips its answer a byte at a time cannot hold a check past it. It
  ends as the SDK's own timeout error (``Failure("timeout")``).
- **The body is read under a cap on its decoded size** (``max_response_bytes``, default
  :data:`DEFAULT_MAX_RESPONSE_BYTES`), and so is every step of inflating a compressed body: an
  endless body or a decompression bomb costs at most the cap, never the process's memory. Over
  the cap is ``Failure("malformed")``. Only ``gzip`` and ``deflate`` are asked for and read.
- **A compressed body is read only whole.** At most :data:`MAX_CODINGS` codings may be listed
  (more is refused, naming the count, before anything is inflated). Each coding must end where
  its format says it ends (gzip with its CRC-32 and length trailer, zlib-wrapped deflate with
  its Adler-32, raw deflate with its final block), and nothing may follow that end (no
  trailing bytes, no second gzip member). A body cut short, with a wrong trailer, or with
  anything after its end is ``Failure("malformed")``: what an adapter reads is exactly what the
  host compressed, or nothing. (``br`` and ``zstd`` are never asked for, and refused when
  sent.)
- **Every request's id is noted**: the host's ``x-request-id`` (or ``x-typesafe-request-id``,
  ``request-id``) header of each response, in :func:`request_ids`' list where an adapter
  opened one, so the ids reach the outcome's usage, whatever the SDK keeps of them.
- **Every provider text that reaches a record is bounded** (:func:`provider_text`: the model
  name, at most :data:`MAX_PROVIDER_TEXT` characters): a host that goes over fails the answer,
  so a verdict record always fits the audit trail.

A new backend builds its HTTP client with :class:`BoundaryClient` and passes it to its SDK (or
sends through it itself); its failures come back through
:func:`~checkprofile.adapters._errors.failure_from_exception` like the SDKs' own.
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, TypeVar

import httpx2

from .._shown import is_blank, show
from ..errors import EvaluatorError
from ._common import LoopClients, shared_ssl_context

if TYPE_CHECKING:
    import openai

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "MAX_CODINGS",
    "MAX_PROVIDER_TEXT",
    "OPENAI_LIMITS",
    "BoundaryClient",
    "BoundaryError",
    "boundary_client",
    "boundary_clients",
    "checked_max_response_bytes",
    "openai_clients",
    "provider_text",
    "request_ids",
]

#: The largest response body read, decoded, in bytes (4 MiB): a real answer is a few
#: kilobytes, a thousand times less. A body that would inflate past it is not read further.
DEFAULT_MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024

#: The most content codings a response may list (``identity`` not counted). A host compresses
#: a body once; twice is legal and rare. Each listed coding costs an inflater (a window of tens
#: of kilobytes), so a header listing ``gzip`` thousands of times is refused before any is made.
MAX_CODINGS: Final = 2

#: The most characters a host's model name may have. Real names are a few dozen characters;
#: one of megabytes would make the verdict record too large for the audit trail.
MAX_PROVIDER_TEXT: Final = 256

#: The connection limits the openai SDK gives the HTTP client it makes itself, kept for the
#: boundary's client that replaces it.
OPENAI_LIMITS: Final = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)

C = TypeVar("C")

# The encodings asked for, and the only ones read (each inflated under the cap).
_ACCEPTED: Final = "gzip, deflate"
_WBITS: Final = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": 0}


# The headers a host names its request by, in the order read: OpenAI's and most compatible
# hosts', TypeSafe's, and the bare form some gateways write.
_REQUEST_ID_HEADERS: Final = (b"x-request-id", b"x-typesafe-request-id", b"request-id")

# The response headers the boundary reads: the request's id and the body's coding.
_READ_HEADERS: Final = frozenset((*_REQUEST_ID_HEADERS, b"content-encoding"))

# The list the current evaluator call notes its requests' ids in, if it opened one.
_noted: ContextVar[list[str] | None] = ContextVar("checkprofile_request_ids", default=None)


def _request_id_of(found: Mapping[bytes, bytes], encoding: str) -> str | None:
    """The host's id of the request a response answers, if it gave one: ``found`` holds the
    response's headers that name one (lower-case names, raw values in ``encoding``)."""
    for name in _REQUEST_ID_HEADERS:
        value = found.get(name)
        if value:
            return value.decode(encoding)
    return None


@contextlib.contextmanager
def request_ids() -> Iterator[list[str]]:
    """A list that gets the id of every response the boundary's clients receive inside the
    ``with`` (in this context and the tasks it starts), in order of arrival."""
    noted: list[str] = []
    token = _noted.set(noted)
    try:
        yield noted
    finally:
        _noted.reset(token)


class BoundaryError(EvaluatorError):
    """A host broke a rule of the boundary (a redirect, a body over its cap, an encoding not
    asked for, a text too long): the exchange ends, and the question fails with ``reason``."""


def checked_max_response_bytes(value: object) -> int:
    """``value`` as a body cap: an integer number of bytes of at least 1 KiB."""
    if type(value) is not int or value < 1024:
        raise ValueError(
            f"max_response_bytes must be an integer of at least 1024 bytes, got {show(value)}"
        )
    return value


def provider_text(value: object, what: str, *, limit: int = MAX_PROVIDER_TEXT) -> str:
    """``value``, a text a host sent that goes into a record, checked: a non-blank string of
    at most ``limit`` characters. Raises :class:`BoundaryError` (``malformed``) naming
    ``what`` otherwise; the message quotes only the start of the value."""
    if type(value) is not str or is_blank(value):
        raise BoundaryError(f"{what} is not a non-empty text: {show(value)}", reason="malformed")
    if len(value) > limit:
        raise BoundaryError(
            f"{what} is {len(value)} characters long, more than {limit}: {show(value)}",
            reason="malformed",
        )
    return value


class BoundaryClient(httpx2.AsyncClient):
    """An ``httpx2.AsyncClient`` that holds every exchange to the boundary's rules (see the
    module): no redirect followed, one deadline of ``timeout`` seconds per request for the
    whole exchange, the decoded body capped at ``max_response_bytes``. Every other option is
    ``httpx2.AsyncClient``'s. Each request's body is read in full before ``send`` returns,
    whether or not the caller asked for a stream."""

    def __init__(self, *, timeout: float, max_response_bytes: int, **options: Any) -> None:
        options["follow_redirects"] = False
        super().__init__(timeout=timeout, **options)
        self._deadline = timeout
        self._cap = max_response_bytes

    async def send(
        self, request: httpx2.Request, *, stream: bool = False, **options: Any
    ) -> httpx2.Response:
        """Send ``request`` under the boundary's rules; raises ``httpx2.ReadTimeout`` past the
        deadline and :class:`BoundaryError` for a redirect or a body over the cap."""
        options["follow_redirects"] = False
        request.headers["Accept-Encoding"] = _ACCEPTED
        try:
            # The exchange runs as a task of its own under wait_for. asyncio.timeout, on this
            # task, cost more: every wakeup of the read would resume the caller's whole stack
            # (run_check, the adapter, the SDK), about 0.5 ms more per check in bench_adapters.
            return await asyncio.wait_for(self._exchange(request, options), self._deadline)
        except asyncio.TimeoutError:
            raise httpx2.ReadTimeout(
                f"no complete response within {self._deadline:g} s", request=request
            ) from None

    async def _exchange(self, request: httpx2.Request, options: dict[str, Any]) -> httpx2.Response:
        response = await super().send(request, stream=True, **options)
        try:
            # The headers are read once, as bytes: the request's id and the body's coding.
            given: dict[bytes, list[bytes]] = {}
            for key, value in response.headers.raw:
                name = key.lower()
                if name in _READ_HEADERS:
                    given.setdefault(name, []).append(value)
            # A header given twice reads as one, its values joined (as httpx does), once: a
            # host sending one thousands of times costs a join, not a copy per line.
            found = {name: b", ".join(values) for name, values in given.items()}
            encoding = response.headers.encoding
            noted = _noted.get()
            if noted is not None:
                named = _request_id_of(found, encoding)
                if named is not None:
                    noted.append(named)
            if 300 <= response.status_code < 400:  # every redirect, Location or not
                raise BoundaryError(_redirect_text(response), reason="redirected")
            coding = found.get(b"content-encoding")
            raw = response.stream
            if not isinstance(raw, httpx2.AsyncByteStream):  # as httpx itself would refuse it
                raise TypeError(f"the transport gave a body that is not async: {show(raw)}")
            # The body is read here, through the cap (and inflated under it): the response
            # handed on holds it decoded, as if the host had sent it so.
            response.stream = _Capped(raw, coding.decode(encoding) if coding else "", self._cap)
            if coding is not None:
                del response.headers["Content-Encoding"]
            body = await response.aread()
            if coding is not None:
                response.headers["Content-Length"] = str(len(body))
        except BaseException:
            await response.aclose()
            raise
        return response


def boundary_client(
    *, timeout: float, max_response_bytes: int, limits: httpx2.Limits = OPENAI_LIMITS
) -> BoundaryClient:
    """The :class:`BoundaryClient` an adapter gives its SDK: on the process's one TLS context
    (:func:`~checkprofile.adapters._common.shared_ssl_context`), with ``limits``."""
    return BoundaryClient(
        timeout=timeout,
        max_response_bytes=max_response_bytes,
        limits=limits,
        verify=shared_ssl_context(),
    )


def boundary_clients(
    sdk: Callable[[BoundaryClient], C],
    close: Callable[[C], Awaitable[Any]],
    *,
    timeout: float,
    max_response_bytes: int,
    limits: httpx2.Limits = OPENAI_LIMITS,
) -> LoopClients[C]:
    """An adapter's clients, one per event loop (:class:`LoopClients`): each is ``sdk`` made on
    a :func:`boundary_client` of its own (a new loop needs new connections), and ``close``
    closes one. The first is made at once, so whatever ``sdk`` raises (a missing key) is
    raised here."""
    return LoopClients(
        lambda: sdk(
            boundary_client(timeout=timeout, max_response_bytes=max_response_bytes, limits=limits)
        ),
        close,
    )


def openai_clients(
    *,
    api_key: str | None,
    base_url: str | None,
    timeout: float,
    max_response_bytes: int,
    what: str,
) -> LoopClients[openai.AsyncOpenAI]:
    """:func:`boundary_clients` of the openai SDK (which the caller has imported): its
    retries off (the profile's single re-ask, in ``run_check``, is the only retry). Raises
    ``ValueError`` naming ``what`` when the SDK refuses to start (no key given and none in
    ``OPENAI_API_KEY``).

    The SDK's own HTTP client would follow redirects, and close itself from ``__del__`` on
    whatever loop runs then, which fails (noisily) for a client of a loop ``run_check_sync``
    has closed; the boundary's does neither."""
    import openai

    def sdk(http: BoundaryClient) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0, http_client=http
        )

    async def close(client: openai.AsyncOpenAI) -> None:
        await client.close()

    try:
        return boundary_clients(sdk, close, timeout=timeout, max_response_bytes=max_response_bytes)
    except openai.OpenAIError as error:
        raise ValueError(f"cannot set up {what}: {error}") from None


def _redirect_text(response: httpx2.Response) -> str:
    where = response.request.url.copy_with(query=None, fragment=None, userinfo=b"")
    target = response.headers.get("Location", "")
    try:
        host = response.request.url.join(target).host if target else ""
    except (httpx2.InvalidURL, ValueError, TypeError):
        host = ""
    to = f" to host {show(host)}" if host else " (no readable Location)"
    return (
        f"{response.request.method} {where}: HTTP {response.status_code} redirects{to};"
        " a redirect is never followed"
    )


class _Capped(httpx2.AsyncByteStream):
    """A response's body as read under the cap: inflated from ``coding`` (its
    Content-Encoding), never holding more than ``cap`` bytes of it (raw or inflated) at any
    step, and read only whole (each coding ended as its format ends, nothing after it). More
    than :data:`MAX_CODINGS` codings, or one not asked for, is refused before a byte is read
    or an inflater made."""

    def __init__(self, raw: httpx2.AsyncByteStream, coding: str, cap: int) -> None:
        encodings = [
            name
            for name in (part.strip().lower() for part in coding.split(","))
            if name and name != "identity"
        ]
        if len(encodings) > MAX_CODINGS:
            raise BoundaryError(
                f"the response lists {len(encodings)} content codings, more than {MAX_CODINGS}"
                " (a body is compressed once); not read",
                reason="malformed",
            )
        unknown = [name for name in encodings if name not in _WBITS]
        if unknown:
            raise BoundaryError(
                f"the response is encoded as {show(unknown[0])}, which was not asked for"
                f" (only {_ACCEPTED})",
                reason="malformed",
            )
        self._raw = raw
        self._cap = cap
        # Content-Encoding lists the codings in the order applied: undone last first.
        self._stages = [_Inflater(name, cap) for name in reversed(encodings)]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        cap, stages = self._cap, self._stages
        size = raw = 0
        async for chunk in self._raw:
            raw += len(chunk)
            if raw > cap:
                raise _over(cap)
            for stage in stages:
                chunk = stage.feed(chunk)
            size += len(chunk)
            if size > cap:
                raise _over(cap)
            yield chunk
        # An empty body (a HEAD's, a 204's) has nothing to end; any other must end whole.
        if stages and raw:
            tail = b""
            for stage in stages:
                tail = stage.feed(tail) + stage.end()
            if size + len(tail) > cap:
                raise _over(cap)
            yield tail

    async def aclose(self) -> None:
        await self._raw.aclose()


def _over(cap: int) -> BoundaryError:
    return BoundaryError(
        f"the response body is larger than max_response_bytes ({cap} bytes), decoded; not read"
        " further",
        reason="malformed",
    )


# What ends each coding, as a complaint names it when it is missing.
_ENDS: Final = {
    "gzip": "its gzip trailer (CRC-32 and length)",
    "x-gzip": "its gzip trailer (CRC-32 and length)",
    "deflate": "its deflate end (the Adler-32 of zlib, or the final block of raw deflate)",
}


class _Inflater:
    """One content coding undone, never giving more than the cap from one feed, and read
    only whole: :meth:`end` raises unless the coding ended (its trailer checked by zlib), and
    any byte after that end raises as it arrives."""

    def __init__(self, name: str, cap: int) -> None:
        self._name = name
        self._cap = cap
        # "deflate" is zlib-wrapped by the RFC, raw by some servers: its first two bytes say
        # which (a zlib header names the method and checks itself), so they are held until
        # both are here; the inflater is made then.
        self._head: bytes | None = b"" if name == "deflate" else None
        self._inflate = zlib.decompressobj(_WBITS[name]) if self._head is None else None

    def feed(self, data: bytes) -> bytes:
        if not data:
            return b""
        inflate = self._inflate
        if inflate is None:
            data = (self._head or b"") + data
            if len(data) < 2:
                self._head = data
                return b""
            self._head = None
            wrapped = data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
            inflate = self._inflate = zlib.decompressobj(
                zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS
            )
        try:
            out = inflate.decompress(data, self._cap + 1)
        except zlib.error as error:
            raise self._bad(error) from None
        if len(out) > self._cap or inflate.unconsumed_tail:
            raise _over(self._cap)
        if inflate.unused_data:
            raise self._after()
        return out

    def end(self) -> bytes:
        inflate = self._inflate
        try:
            out = inflate.flush() if inflate is not None else b""
        except zlib.error as error:
            raise self._bad(error) from None
        if inflate is None or not inflate.eof:
            raise BoundaryError(
                f"the response body ends before {_ENDS[self._name]}: it was cut short, so it"
                " is not read",
                reason="malformed",
            )
        if inflate.unused_data:
            raise self._after()
        if len(out) > self._cap:
            raise _over(self._cap)
        return out

    def _after(self) -> BoundaryError:
        return BoundaryError(
            f"the response body goes on after its {self._name} end (trailing bytes, or a"
            " second member); it is not read",
            reason="malformed",
        )

    def _bad(self, error: zlib.error) -> BoundaryError:
        return BoundaryError(
            f"the response body is not valid {self._name} ({error})", reason="malformed"
        )
