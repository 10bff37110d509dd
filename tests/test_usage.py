"""Usage on every outcome: each attempt's wall time, the host's request ids and the tokens it
reported, read from real HTTP exchanges with the loopback hosts; never a guessed zero."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("typesafe_sdk")
pytest.importorskip("openai")

from loopback import (
    LoopbackServer,
    Recorded,
    Scripted,
    chat,
    decisions_answers,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    run_example_check,
    systemone_answers,
)

from checkprofile import (
    Failure,
    Limits,
    ModelCall,
    Usage,
    YesNoAnswer,
    parse_check,
    reported_usage,
    run_check_sync,
)
from checkprofile.adapters.openai_chat import ChatEvaluator
from checkprofile.adapters.openai_decisions import DecisionsEvaluator
from checkprofile.adapters.systemone import SystemOneEvaluator
from checkprofile.testing import ScriptedEvaluator
from support import spec_full_form

QUESTIONS = len(parse_check(spec_full_form()))


def systemone_host(usage: Any, request_id: str | None = "ts-req-7") -> Any:
    def respond(request: Recorded) -> Scripted:
        body = {"model": "jev-2026-09-15", "answers": systemone_answers(request), "usage": usage}
        headers = {"x-typesafe-request-id": request_id} if request_id else {}
        return Scripted(json=body, headers=headers)

    return respond


def decisions_host(usage: Any, request_id: str = "req-abc") -> Any:
    def respond(request: Recorded) -> Scripted:
        body = {"model": "gpt-6-luna-2026-10-01", "answers": decisions_answers(request)}
        if usage is not None:
            body["usage"] = usage
        return Scripted(json=body, headers={"x-request-id": request_id})

    return respond


def chat_host(headers: dict[str, str], prompt: int = 120, cached: int | None = 64) -> Any:
    """The loopback chat host (a confident label for each question), reporting ``prompt``
    tokens read (of which ``cached`` from the cache) and one written, its completion's ``id``
    naming the label it chose."""
    answer = chat()

    def respond(request: Recorded) -> Scripted:
        body = dict(answer(request).json)
        body["id"] = "chatcmpl-" + body["choices"][0]["message"]["content"]
        details = {"cached_tokens": cached} if cached is not None else {}
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": 1,
            "total_tokens": prompt + 1,
            "prompt_tokens_details": details,
        }
        return Scripted(json=body, headers=headers)

    return respond


def systemone(server: LoopbackServer) -> SystemOneEvaluator:
    return SystemOneEvaluator("jev-latest", base_url=server.url, api_key="k", timeout=5)


def decisions(server: LoopbackServer) -> DecisionsEvaluator:
    return DecisionsEvaluator("gpt-6-luna", base_url=server.url + "/v1", api_key="k", timeout=5)


def chat_evaluator(server: LoopbackServer) -> ChatEvaluator:
    return ChatEvaluator("judge", base_url=server.url + "/v1", api_key="k", timeout=5)


# --- System One --------------------------------------------------------------------------------


def test_system_one_usage_is_what_the_host_reported(loopback: LoopbackServer) -> None:
    loopback.default = systemone_host({"input_tokens": 1234, "output_tokens": 7})
    outcome = run_example_check(systemone(loopback))
    assert outcome.verdict.verdict == "pass"
    (call,) = outcome.calls
    assert call.usage == Usage(input_tokens=1234, output_tokens=7, request_ids=("ts-req-7",))
    assert call.model == "jev-2026-09-15"
    assert call.questions == QUESTIONS
    assert 0 < call.seconds < 5
    assert outcome.usage == call.usage


def test_zeros_from_a_host_read_as_not_reported(loopback: LoopbackServer) -> None:
    # jev-compatible-server writes {"input_tokens": 0, "output_tokens": 0}: nothing measured.
    loopback.default = systemone_host({"input_tokens": 0, "output_tokens": 0}, request_id=None)
    outcome = run_example_check(systemone(loopback))
    assert outcome.verdict.verdict == "pass"
    assert outcome.calls[0].usage is None
    assert outcome.usage is None


def test_usage_a_host_did_not_send_is_absent_not_zero(loopback: LoopbackServer) -> None:
    loopback.default = systemone_host(None)
    (call,) = run_example_check(systemone(loopback)).calls
    assert call.usage == Usage(request_ids=("ts-req-7",))
    assert call.usage.input_tokens is None and call.usage.output_tokens is None
    assert not call.usage.reported


def test_hostile_figures_are_not_reported_and_never_fail_the_check(
    loopback: LoopbackServer,
) -> None:
    loopback.default = systemone_host(
        {"input_tokens": -5, "output_tokens": 10**30}, request_id="x" * 10_000
    )
    outcome = run_example_check(systemone(loopback))
    assert outcome.verdict.verdict == "pass"
    assert outcome.calls[0].usage is None


def test_a_failed_attempt_keeps_its_request_id(loopback: LoopbackServer) -> None:
    loopback.script(
        Scripted(status=500, json={"detail": "boom"}, headers={"x-typesafe-request-id": "bad-1"})
    )
    loopback.default = systemone_host({"input_tokens": 900, "output_tokens": 3})
    outcome = run_example_check(systemone(loopback))
    assert outcome.attempts == 2 and outcome.verdict.verdict == "pass"
    first, second = outcome.calls
    assert first.usage == Usage(request_ids=("bad-1",))
    assert first.model == "jev-latest"  # no host answered: the reply names the configured model
    assert second.usage == Usage(input_tokens=900, output_tokens=3, request_ids=("ts-req-7",))
    # Summed over the attempts that reported: the failed one reported no tokens.
    assert outcome.usage == Usage(
        input_tokens=900, output_tokens=3, request_ids=("bad-1", "ts-req-7")
    )


# --- OpenAI Decisions --------------------------------------------------------------------------


def test_decisions_usage_with_cached_input_is_what_the_host_reported(
    loopback: LoopbackServer,
) -> None:
    loopback.default = decisions_host(
        {
            "input_tokens": 2048,
            "input_tokens_details": {"cached_tokens": 1024},
            "output_tokens": 0,
            "total_tokens": 2048,
        }
    )
    (call,) = run_example_check(decisions(loopback)).calls
    assert call.usage == Usage(
        input_tokens=2048, output_tokens=0, cached_tokens=1024, request_ids=("req-abc",)
    )
    assert call.model == "gpt-6-luna-2026-10-01"


def test_decisions_without_usage_reports_only_the_request_id(loopback: LoopbackServer) -> None:
    loopback.default = decisions_host(None)
    (call,) = run_example_check(decisions(loopback)).calls
    assert call.usage == Usage(request_ids=("req-abc",))


# --- Chat completions --------------------------------------------------------------------------


def test_chat_usage_sums_its_one_request_per_question(loopback: LoopbackServer) -> None:
    loopback.default = chat_host({"x-request-id": "chat-req"})
    outcome = run_example_check(chat_evaluator(loopback))
    assert loopback.count() == QUESTIONS
    (call,) = outcome.calls
    assert call.usage is not None
    assert call.usage.input_tokens == 120 * QUESTIONS
    assert call.usage.output_tokens == QUESTIONS
    assert call.usage.cached_tokens == 64 * QUESTIONS
    assert call.usage.request_ids == ("chat-req",) * QUESTIONS


def test_chat_without_a_request_id_header_names_the_completion(
    loopback: LoopbackServer,
) -> None:
    loopback.default = chat_host({}, cached=None)
    (call,) = run_example_check(chat_evaluator(loopback)).calls
    assert call.usage is not None
    assert call.usage.cached_tokens is None
    assert sorted(call.usage.request_ids) == sorted(
        "chatcmpl-" + label for label in ("yes", "A", "2")
    )


# --- Scripted, and the rules --------------------------------------------------------------------


def test_a_scripted_evaluator_scripts_usage_per_call() -> None:
    check = parse_check("Is the vendor cleared?")
    scripted = ScriptedEvaluator(
        {"Is the vendor cleared?": [Failure("timeout"), YesNoAnswer(0.99)]},
        usage=[Usage(request_ids=("r1",)), Usage(input_tokens=50, output_tokens=2)],
    )
    from loopback import vendor_material

    outcome = run_check_sync(check, vendor_material(), scripted, limits=Limits())
    assert [call.usage for call in outcome.calls] == [
        Usage(request_ids=("r1",)),
        Usage(input_tokens=50, output_tokens=2),
    ]
    assert outcome.usage == Usage(input_tokens=50, output_tokens=2, request_ids=("r1",))
    assert all(type(call) is ModelCall for call in outcome.calls)


def test_an_evaluator_usage_that_is_not_a_usage_is_dropped() -> None:
    from loopback import vendor_material

    from checkprofile import Reply

    class Odd:
        model = "odd"

        async def answer(self, bundle: Any) -> Reply:
            reply = Reply("odd-1", [YesNoAnswer(0.99)])
            object.__setattr__(reply, "usage", {"input_tokens": 5})
            return reply

    outcome = run_check_sync(
        parse_check("Is the vendor cleared?"), vendor_material(), Odd(), limits=Limits()
    )
    assert outcome.verdict.verdict == "pass"
    assert outcome.calls[0].usage is None


@pytest.mark.parametrize(
    ("figures", "message"),
    [
        ({"input_tokens": -1}, "input_tokens must be a whole number"),
        ({"output_tokens": 1.5}, "output_tokens must be a whole number"),
        ({"cached_tokens": True}, "cached_tokens must be a whole number"),
        ({"request_ids": [""]}, "a request id must be a non-blank text"),
    ],
)
def test_a_usage_with_a_bad_figure_is_refused_naming_it(
    figures: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Usage(**figures)


def test_reported_usage_reads_zeros_as_nothing_and_keeps_a_real_zero_output() -> None:
    assert reported_usage(input_tokens=0, output_tokens=0, cached_tokens=0) is None
    assert reported_usage(input_tokens=10, output_tokens=0) == Usage(
        input_tokens=10, output_tokens=0
    )
    assert reported_usage(input_tokens="10", request_ids=["a", 3, " "]) == Usage(request_ids=("a",))


# --- The audit trail -----------------------------------------------------------------------------


def test_the_audit_trail_keeps_each_call_and_reads_it_back(
    loopback: LoopbackServer, tmp_path: Any
) -> None:
    import json

    from checkprofile.human import JsonLinesRecorder, VerdictRecord, read_records, verdict_record

    loopback.script(
        Scripted(status=503, json={"detail": "busy"}, headers={"x-typesafe-request-id": "bad-1"})
    )
    loopback.default = systemone_host({"input_tokens": 900, "output_tokens": 3})
    outcome = run_example_check(systemone(loopback))
    path = tmp_path / "audit.jsonl"
    recorder = JsonLinesRecorder(path)
    for run in ("run-1", "run-2"):  # the second line of a check already seen: the fast path
        recorder.record(verdict_record(outcome, run_id=run, step_id="screen"))
    written = json.loads(path.read_text().splitlines()[0])["calls"]
    assert [set(call) for call in written] == [
        {"seconds", "questions", "request_ids"},
        {"seconds", "questions", "input_tokens", "output_tokens", "request_ids"},
    ]
    assert written[1]["input_tokens"] == 900 and written[1]["output_tokens"] == 3
    for record in read_records(path):
        assert isinstance(record, VerdictRecord)
        assert [call.usage for call in record.calls] == [call.usage for call in outcome.calls]
        assert [call.questions for call in record.calls] == [QUESTIONS, QUESTIONS]


def test_a_record_whose_calls_do_not_match_its_attempts_is_refused(tmp_path: Any) -> None:
    import json

    from loopback import vendor_material

    from checkprofile.human import AuditError, read_records, verdict_record

    outcome = run_check_sync(
        parse_check("Is the vendor cleared?"),
        vendor_material(),
        ScriptedEvaluator(
            {"Is the vendor cleared?": YesNoAnswer(0.99)}, usage=Usage(input_tokens=5)
        ),
        limits=Limits(),
    )
    data = verdict_record(outcome, run_id="r", step_id="s").to_json()
    data["calls"] = data["calls"] * 2
    path = tmp_path / "audit.jsonl"
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    with pytest.raises(AuditError, match="calls must list one call per attempt"):
        read_records(path)


def test_each_attempt_is_logged_at_debug_with_its_usage(
    loopback: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    loopback.script(
        Scripted(status=500, json={"detail": "boom"}, headers={"x-typesafe-request-id": "bad-1"})
    )
    loopback.default = systemone_host({"input_tokens": 1234, "output_tokens": 7})
    with caplog.at_level("DEBUG", logger="checkprofile.run"):
        run_example_check(systemone(loopback))
    attempts = [r for r in caplog.records if r.levelname == "DEBUG" and "answered" in r.message]
    assert len(attempts) == 2
    assert "input not reported" in attempts[0].message and "bad-1" in attempts[0].message
    assert "input 1234, output 7, cached not reported" in attempts[1].message
    assert "ts-req-7" in attempts[1].message
    (warning,) = [r for r in caplog.records if r.levelname == "WARNING"]
    assert "server_error" in warning.message  # the failed attempt, with its reason
