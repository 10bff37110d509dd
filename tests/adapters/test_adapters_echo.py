"""No provider text that quotes the request reaches a record, in any adapter.

Every error body a host is known to send (OpenAI, TypeSafe and jev-compatible-server's
FastAPI details, LiteLLM's proxy, vLLM, sglang, llama.cpp, plain text and HTML pages) is served
from loopback with the submission's text put in every place such a host puts what it was
sent: quoted, after a colon, as a pydantic ``input_value``, in a structured detail's
``input``, ``loc`` and ``msg``, in the code and the type, bare at the start of the message,
cut short, in capitals, and as the whole request dumped. Whatever the status and whichever
adapter asked, no failure's detail, and no line the library logs, holds 16 characters in a
row of it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("typesafe_sdk")
pytest.importorskip("openai")

from loopback import (
    LoopbackServer,
    Recorded,
    Scripted,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    run_example_check,
)

from checkprofile import Evaluator, Outcome, parse_check
from checkprofile.adapters._errors import ECHO_CHARS, failure_from_status
from checkprofile.adapters.openai_chat import ChatEvaluator
from checkprofile.adapters.openai_decisions import DecisionsEvaluator, MaterialPart
from checkprofile.adapters.sglang_decisions import SglangDecisionsEvaluator
from checkprofile.adapters.systemone import SystemOneEvaluator
from support import spec_full_form

#: The submission's summary: what must never come back.
SECRET = "Quartzmoor Holdings settled invoice 7731 through the Lisbon branch"


def quoting(request: Recorded) -> list[tuple[str, Any]]:
    """Each error body a host sends, with the submission's text where such a host puts what
    it was sent (``request`` is the request as it arrived)."""
    s = SECRET
    dumped = json.dumps(request.json)
    shown = repr(request.json)
    pydantic = (
        f"1 validation error for OpenAIDecisionRequestBody\ninput.0.content\n  Input tag"
        f" 'input_json' found using 'type' does not match any of the expected tags"
        f" [type=union_tag_invalid, input_value={shown[:60]}...{shown[-60:]}, input_type=dict]"
    )
    return [
        ("openai-quoted", {"error": {"message": f"Invalid value '{s}'", "type": "x"}}),
        ("openai-after-colon", {"error": {"message": f"Could not parse input: {s}"}}),
        ("openai-bare", {"error": {"message": s, "type": "invalid_request_error"}}),
        ("openai-capitals", {"error": {"message": s.upper()}}),
        ("openai-cut", {"error": {"message": f"{s[:20]} is not valid"}}),
        ("code-and-type", {"error": {"message": "bad", "type": s, "code": s.replace(" ", "_")}}),
        ("error-string", {"error": f"{s} was refused"}),
        ("message", {"message": f"{s} was refused"}),
        ("detail-string", {"detail": s}),
        ("detail-after-colon", {"detail": f"state: {s}"}),
        (
            "fastapi-detail",
            {
                "detail": [
                    {
                        "type": "value_error",
                        "loc": ["body", "state", s, 0],
                        "msg": f"Value error, {s}",
                        "input": request.json,
                    },
                    {"type": "missing", "loc": ["body", s], "msg": s, "input": s},
                ]
            },
        ),
        ("fastapi-detail-dict", {"detail": {"msg": f"{s} is too long", "loc": [s]}}),
        (
            "litellm-pydantic",
            {
                "error": {
                    "message": f"litellm.BadRequestError: Invalid Decisions request: {pydantic}",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "400",
                }
            },
        ),
        (
            "litellm-provider",
            {
                "error": {
                    "message": f"litellm.InternalServerError: TypesafeException - {s}",
                    "type": "internal_server_error",
                    "code": "500",
                }
            },
        ),
        (
            "vllm-validation",
            {
                "error": {
                    "message": "1 validation error:\n  {'type': 'string_type', 'loc':"
                    f" 'body.input', 'msg': 'Input should be a valid string', 'input': '{s}'}}",
                    "type": "Bad Request",
                    "param": "body.input",
                    "code": 400,
                }
            },
        ),
        (
            "sglang-error-response",
            {
                "object": "error",
                "message": f"1 validation errors: {dumped}",
                "type": "Bad Request",
                "param": None,
                "code": 400,
            },
        ),
        (
            "llama-server",
            {"error": {"code": 400, "message": f"{s} exceeds the context", "type": "x"}},
        ),
        ("dumped-request", {"error": {"message": dumped}}),
        ("plain-text", s),
        ("plain-text-after-colon", f"Internal Server Error: {s}"),
        ("html-page", f"<html><body><h1>400</h1><p>{s}</p></body></html>"),
    ]


SHAPES = [
    name
    for name, _ in quoting(
        Recorded(method="POST", path="/", headers={}, body=b"", json=None, at=0.0)
    )
]


def host(shape: str, status: int) -> Callable[[Recorded], Scripted]:
    def respond(request: Recorded) -> Scripted:
        body = dict(quoting(request))[shape]
        if isinstance(body, str):
            return Scripted(
                status=status, body=body.encode(), headers={"Content-Type": "text/html"}
            )
        return Scripted(status=status, json=body)

    return respond


def evaluator(server: LoopbackServer, adapter: str) -> Evaluator:
    if adapter == "systemone":
        return SystemOneEvaluator("m", base_url=server.url, api_key="k", timeout=5)
    if adapter == "sglang":
        return SglangDecisionsEvaluator("m", base_url=f"{server.url}/v1", timeout=5)
    if adapter == "chat":
        return ChatEvaluator("m", base_url=f"{server.url}/v1", api_key="k", timeout=5)
    part: MaterialPart = "input_json" if adapter == "decisions-json" else "input_text"
    return DecisionsEvaluator(
        "m", base_url=f"{server.url}/v1", api_key="k", timeout=5, material_part=part
    )


def quotes_the_secret(text: str) -> bool:
    folded, secret = text.casefold(), SECRET.casefold()
    return any(secret[at : at + ECHO_CHARS] in folded for at in range(len(secret) - ECHO_CHARS + 1))


ADAPTERS = ["systemone", "decisions-json", "decisions-text", "chat", "sglang"]


@pytest.mark.parametrize("status", [400, 422, 500, 503])
@pytest.mark.parametrize("adapter", ADAPTERS)
def test_no_error_a_host_sends_brings_the_submission_into_a_record(
    loopback: LoopbackServer, adapter: str, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    check = parse_check(spec_full_form()[:2])
    for shape in SHAPES:
        loopback.default = host(shape, status)
        before = loopback.count()
        with caplog.at_level(logging.DEBUG):
            outcome: Outcome = run_example_check(
                evaluator(loopback, adapter), check, summary=SECRET
            )
        assert loopback.count() > before
        # The host was sent the submission, and sent it back.
        assert SECRET in loopback.last().body.decode("utf-8")
        assert outcome.verdict.verdict == "error", shape
        for _, failure in outcome.failures:
            assert failure.detail, shape
            assert not quotes_the_secret(failure.detail), (shape, failure.detail)
        # The library's own log lines (an SDK's debug log of bodies is the SDK's).
        for record in caplog.records:
            if record.name.startswith("checkprofile"):
                assert not quotes_the_secret(record.getMessage()), (shape, record.getMessage())
        caplog.clear()


def test_the_hosts_own_words_are_kept_up_to_the_quote() -> None:
    words = "the prompt is too long for the model"
    failure = failure_from_status(
        400, {"error": {"message": f"{words}: {SECRET}", "code": "context_length_exceeded"}}, {}
    )
    assert failure.reason == "tokens_exceeded"
    assert failure.detail == f"HTTP 400 (context_length_exceeded): {words}"


def test_words_that_quote_the_material_unmarked_are_left_out_and_said_so() -> None:
    failure = failure_from_status(
        500, {"error": {"message": f"{SECRET} could not be read"}}, {}, sent=f"x\n{SECRET}\ny"
    )
    assert failure.detail == "HTTP 500: [its message quotes the request: left out]"
    kept = failure_from_status(500, {"error": {"message": "model overloaded"}}, {}, sent=SECRET)
    assert kept.detail == "HTTP 500: model overloaded"


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        (
            "litellm.BadRequestError: Invalid Decisions request: 3 errors",
            "litellm.BadRequestError: Invalid Decisions request",
        ),
        (
            "This model's maximum context length is 8192 tokens",
            "This model's maximum context length is 8192 tokens",
        ),
        (
            "request (10049 tokens) exceeds the available context size (8192 tokens)",
            "request (10049 tokens) exceeds the available context size (8192 tokens)",
        ),
        ("question 'q0': unknown field(s) ['x']", "question"),
        ("bad input [type=string_type, input_value='x']", "bad input"),
        ("a {dict} dump", "a"),
        ("x = 'y'", "x"),
        ("line one\nline two", "line one"),
        ("a\\escaped", "a"),
        ("“curly” quotes", ""),
    ],
)
def test_a_lead_stops_where_a_host_starts_quoting(message: str, kept: str) -> None:
    from checkprofile.adapters._errors import lead

    assert lead(message) == kept
