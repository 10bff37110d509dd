"""What a model call cost: the token usage and request ids a provider reported, and each call.

An evaluator's :class:`~checkprofile.Reply` may carry a :class:`Usage`: the tokens the host
reported for the requests of that one call (input, output, cached) and the host's ids of those
requests. ``run_check`` adds the wall time of the call and keeps one :class:`ModelCall` per
attempt on the :class:`~checkprofile.Outcome`.

A figure the host did not report is ``None``, never a guessed ``0``. A host that writes zeros
for everything (jev-compatible-server does) has not reported anything: a model that answered
read its input, so usage whose input count is ``0`` is read as not reported
(:func:`reported_usage`). One rule, applied wherever an adapter reads usage.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import attrs

from ._convert import is_finite
from ._shown import is_blank, show

__all__ = [
    "MAX_TOKENS",
    "ModelCall",
    "Usage",
    "call_from_json",
    "recorded_call",
    "reported_usage",
    "total_usage",
]

#: The largest token count kept (10**12): beyond it a figure is a host's mistake, not usage.
MAX_TOKENS = 10**12

# The most request ids one call keeps, and the longest id: a call makes one request per
# question at most, and a real id is a few dozen characters.
_MAX_IDS = 64
_MAX_ID = 256


def _count(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (type(value) is not int or not 0 <= value <= MAX_TOKENS):
        raise ValueError(
            f"{attribute.name} must be a whole number of tokens from 0 to {MAX_TOKENS}, or"
            f" None (not reported), got {show(value)}"
        )


def _ids(value: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(value)


def _check_ids(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    ids = value if isinstance(value, tuple) else ()
    if len(ids) > _MAX_IDS:
        raise ValueError(f"request_ids holds {len(ids)} ids, more than {_MAX_IDS}")
    for item in ids:
        if type(item) is not str or is_blank(item) or len(item) > _MAX_ID:
            raise ValueError(
                f"a request id must be a non-blank text of at most {_MAX_ID} characters,"
                f" got {show(item)}"
            )


@attrs.frozen(kw_only=True)
class Usage:
    """The tokens a host reported for the requests of one evaluator call, and its request ids.

    ``input_tokens``, ``output_tokens`` and ``cached_tokens`` (the part of the input read from
    the host's prompt cache): whole numbers, or ``None`` where the host did not report the
    figure. ``request_ids``: the host's id of each request, in order (the ``x-request-id`` or
    ``x-typesafe-request-id`` header, or the response's own ``id``), for a support ticket or
    the provider's bill; empty when the host gave none. Raises :class:`ValueError` for a
    count that is not a whole number from 0 to :data:`MAX_TOKENS` or an id that is not short
    non-blank text.
    """

    input_tokens: int | None = attrs.field(default=None, validator=_count)
    output_tokens: int | None = attrs.field(default=None, validator=_count)
    cached_tokens: int | None = attrs.field(default=None, validator=_count)
    request_ids: tuple[str, ...] = attrs.field(default=(), converter=_ids, validator=_check_ids)

    @property
    def reported(self) -> bool:
        """Whether the host reported any token figure."""
        return (self.input_tokens, self.output_tokens, self.cached_tokens) != (None, None, None)

    def to_json(self) -> dict[str, object]:
        """The figures reported, as the audit trail keeps them: only those known."""
        data: dict[str, object] = {
            name: value
            for name, value in (
                ("input_tokens", self.input_tokens),
                ("output_tokens", self.output_tokens),
                ("cached_tokens", self.cached_tokens),
            )
            if value is not None
        }
        if self.request_ids:
            data["request_ids"] = list(self.request_ids)
        return data


def _plus(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a + b, MAX_TOKENS)


def total_usage(usages: Iterable[Usage | None]) -> Usage | None:
    """The usage of several calls together: each figure summed over the calls that reported
    it (``None`` when none did), the request ids in order. ``None`` for no usage at all."""
    total: Usage | None = None
    for usage in usages:
        if usage is None:
            continue
        if total is None:
            total = usage
            continue
        total = Usage(
            input_tokens=_plus(total.input_tokens, usage.input_tokens),
            output_tokens=_plus(total.output_tokens, usage.output_tokens),
            cached_tokens=_plus(total.cached_tokens, usage.cached_tokens),
            request_ids=(total.request_ids + usage.request_ids)[:_MAX_IDS],
        )
    return total


def _token_figure(value: object) -> int | None:
    # A count as a host wrote it: a whole number in range, or not reported.
    if type(value) is int and 0 <= value <= MAX_TOKENS:
        return value
    return None


def reported_usage(
    *,
    input_tokens: object = None,
    output_tokens: object = None,
    cached_tokens: object = None,
    request_ids: Iterable[object] = (),
) -> Usage | None:
    """The :class:`Usage` a host's figures say, read leniently: a figure that is not a whole
    number from 0 to :data:`MAX_TOKENS` is not reported, an id that is not short non-blank
    text is left out, and figures whose input count is ``0`` are not reported at all (a host
    that writes zeros, as jev-compatible-server does, has measured nothing). ``None`` when
    nothing is left."""
    counts = [_token_figure(value) for value in (input_tokens, output_tokens, cached_tokens)]
    if counts[0] == 0:
        counts = [None, None, None]
    ids = tuple(
        item
        for item in request_ids
        if type(item) is str and not is_blank(item) and len(item) <= _MAX_ID
    )[:_MAX_IDS]
    if counts == [None, None, None] and not ids:
        return None
    return Usage(
        input_tokens=counts[0], output_tokens=counts[1], cached_tokens=counts[2], request_ids=ids
    )


@attrs.frozen(kw_only=True)
class ModelCall:
    """One attempt of a check: one call of the evaluator.

    ``seconds``: its wall time, from the call to the reply (or the exception).
    ``questions``: how many questions it was asked. ``model``: the model the reply named
    (``None`` when the evaluator raised or its reply was not read). ``usage``: what the
    evaluator reported the call cost (``None`` when it reported nothing).
    """

    seconds: float
    questions: int
    model: str | None = None
    usage: Usage | None = None

    def recorded(self) -> ModelCall:
        """The call as the audit trail keeps it and reads it back: its seconds to the
        microsecond, without the model (the verdict names it)."""
        return ModelCall(seconds=round(self.seconds, 6), questions=self.questions, usage=self.usage)

    def to_json(self) -> dict[str, object]:
        """The call as the audit trail keeps it: ``seconds``, ``questions`` and the usage
        figures reported (:meth:`Usage.to_json`); the model is the verdict's."""
        data: dict[str, object] = {"seconds": round(self.seconds, 6), "questions": self.questions}
        if self.usage is not None:
            data.update(self.usage.to_json())
        return data


_CALL_KEYS = frozenset(
    ("seconds", "questions", "input_tokens", "output_tokens", "cached_tokens", "request_ids")
)


def call_from_json(data: object) -> ModelCall:
    """A :class:`ModelCall` from :meth:`ModelCall.to_json`'s object. Raises
    :class:`ValueError` naming what is wrong."""
    if type(data) is not dict:
        raise ValueError(f"a call must be a JSON object, got {show(data)}")
    unknown = sorted(str(key) for key in data if key not in _CALL_KEYS)
    if unknown:
        raise ValueError(f"a call has no key {show(unknown[0])}")
    return recorded_call(
        data.get("seconds"),
        data.get("questions"),
        data.get("input_tokens"),
        data.get("output_tokens"),
        data.get("cached_tokens"),
        data.get("request_ids", []),
        usage=len(data) > 2,
    )


def recorded_call(
    seconds: object,
    questions: object,
    input_tokens: object,
    output_tokens: object,
    cached_tokens: object,
    request_ids: object,
    *,
    usage: bool,
) -> ModelCall:
    """The :class:`ModelCall` a record's call holds (``usage``: it holds any usage figure or
    request id). Raises :class:`ValueError` naming the value that is wrong. What both readings
    of the audit trail make of a call (:func:`call_from_json` and the fast one)."""
    if not (is_finite(seconds) and 0 <= seconds < 10**9):
        raise ValueError(f"a call's seconds must be a number >= 0, got {show(seconds)}")
    if type(questions) is not int or not 0 < questions <= 10**6:
        raise ValueError(f"a call's questions must be a whole number > 0, got {show(questions)}")
    if type(request_ids) is not list:
        raise ValueError(f"a call's request_ids must be a list, got {show(request_ids)}")
    reported = None
    if usage:
        reported = Usage(
            input_tokens=cast("int | None", input_tokens),
            output_tokens=cast("int | None", output_tokens),
            cached_tokens=cast("int | None", cached_tokens),
            request_ids=request_ids,
        )
    return ModelCall(seconds=float(seconds), questions=questions, usage=reported)
