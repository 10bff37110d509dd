"""What the library does with what real hosts sent: each fixture of tests/hosts, replayed from
loopback through the adapter the host speaks to.

The fixtures are the hosts' own bodies (tests/hosts/record.py records them again from a live
host; the ones it cannot run are built from the bodies quoted in issue 20 and say so). Where a
fixture holds the request too, the library must still send that request, so a recording that
no longer matches what is sent is noticed, not replayed as if it did.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from loopback import (
    LoopbackServer,
    Scripted,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    run_example_check,
)

from checkprofile import ChoiceAnswer, Evaluator, Outcome, RubricAnswer, YesNoAnswer, parse_check
from support import spec_full_form

pytest.importorskip("typesafe_sdk")
pytest.importorskip("openai")

HOSTS = Path(__file__).resolve().parent / "hosts"
FIXTURES = sorted(HOSTS.glob("*/*.json"))
SOURCES = ("recorded live by ", "built from the ", "from the issue report")


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HOSTS / name).read_text())
    return data


def replay(
    server: LoopbackServer, recorded: dict[str, Any], evaluator: Evaluator, check: Any = None
) -> Outcome:
    """Serve the recorded response to every request, and run the recorded check (or
    ``check``) through ``evaluator``."""
    response = recorded["response"]
    server.default = Scripted(
        status=response["status"],
        body=json.dumps(response["body"]).encode(),
        headers={"Content-Type": response["content_type"]},
    )
    spec = check if check is not None else recorded.get("check") or [spec_full_form()[0]]
    return run_example_check(evaluator, parse_check(spec))


def assert_sent_as_recorded(server: LoopbackServer, recorded: dict[str, Any]) -> None:
    request = recorded["request"]
    sent = server.requests[0]
    assert (sent.method, sent.path) == (request["method"], request["path"])
    assert sent.json == request["body"], "re-record: python tests/hosts/record.py"


def test_the_fixtures_are_there() -> None:
    hosts = {path.parent.name for path in FIXTURES}
    assert {
        "jev-compatible-server-0.1.1",
        "sglang-0.5.23",
        "llama-server",
        "llama-cpp-python-0.3.36",
        "transformers-serve-5.24.0",
        "litellm-1.104.3",
        "vllm-0.33.0",
    } <= hosts


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_every_fixture_names_its_host_version_model_and_source(path: Path) -> None:
    data = json.loads(path.read_text())
    for key in ("host", "version", "model", "source", "about"):
        assert isinstance(data.get(key), str) and data[key].strip(), key
    assert data["source"].startswith(SOURCES)
    assert data["source"].startswith("from the issue report") or data["request"] is not None
    response = data["response"]
    assert isinstance(response["status"], int) and "body" in response


# --- jev-compatible-server 0.1.1, recorded live ------------------------------------------------


def systemone(server: LoopbackServer, model: str) -> Evaluator:
    from checkprofile.adapters.systemone import SystemOneEvaluator

    return SystemOneEvaluator(model, base_url=server.url, api_key="unused", timeout=5)


def test_jev_a_check_of_every_kind_with_a_legend_list_gets_the_hosts_numbers(
    loopback: LoopbackServer,
) -> None:
    recorded = fixture("jev-compatible-server-0.1.1/every-kind.json")
    outcome = replay(loopback, recorded, systemone(loopback, recorded["registry_model"]))
    assert_sent_as_recorded(loopback, recorded)
    assert outcome.verdict.verdict != "error", outcome.failures
    assert outcome.verdict.model == recorded["response"]["body"]["model"]
    answers = recorded["response"]["body"]["answers"]
    assert isinstance(answers["q2"]["legend"], list)  # what the SDK refused the response for
    yes_no, choice, rubric = outcome.answers
    assert type(yes_no) is YesNoAnswer and yes_no.p == answers["q0"]["noul"]
    assert type(choice) is ChoiceAnswer and choice.name == answers["q1"]["choice"]
    assert dict(choice.distribution or ()) == answers["q1"]["probabilities"]
    assert type(rubric) is RubricAnswer and rubric.confidence == answers["q2"]["confidence"]
    levels = {str(level): p for level, p in rubric.distribution or ()}
    assert levels == answers["q2"]["probabilities"]


def test_jev_an_unsupported_answer_fails_its_question_once(loopback: LoopbackServer) -> None:
    recorded = fixture("jev-compatible-server-0.1.1/unsupported-choice.json")
    outcome = replay(loopback, recorded, systemone(loopback, recorded["registry_model"]))
    assert_sent_as_recorded(loopback, recorded)
    assert outcome.verdict.verdict == "error"
    assert loopback.count() == 1  # asking again is certain to get the same answer
    ((ask, failure),) = outcome.failures
    assert ask == recorded["check"][1]["ask"]
    assert failure.reason == "unsupported"
    assert "choice" in failure.detail and "noul" in failure.detail


def test_jev_a_refusal_that_echoes_the_request_is_not_copied(loopback: LoopbackServer) -> None:
    recorded = fixture("jev-compatible-server-0.1.1/too-many-names.json")
    echoed = json.dumps(recorded["response"]["body"])
    assert "description 7" in echoed  # the host did echo the request
    outcome = replay(loopback, recorded, systemone(loopback, recorded["registry_model"]))
    assert_sent_as_recorded(loopback, recorded)
    assert outcome.verdict.verdict == "error"
    ((_, failure),) = outcome.failures
    assert "422" in failure.detail
    assert "description" not in failure.detail and "Acme GmbH" not in failure.detail


# --- sglang 0.5.23, built from its wheel -------------------------------------------------------


def test_sglang_refuses_the_openai_decisions_request(loopback: LoopbackServer) -> None:
    from checkprofile.adapters.openai_decisions import DecisionsEvaluator

    recorded = fixture("sglang-0.5.23/openai-decisions-request-refused.json")
    evaluator = DecisionsEvaluator("default", base_url=f"{loopback.url}/v1", api_key="unused")
    outcome = replay(loopback, recorded, evaluator)
    assert_sent_as_recorded(loopback, recorded)
    assert recorded["response"]["body"]["message"].startswith("11 validation errors")
    assert outcome.verdict.verdict == "error"
    assert {failure.reason for _, failure in outcome.failures} == {"unknown"}
    assert all("HTTP 400" in failure.detail for _, failure in outcome.failures)


# --- LiteLLM's proxy 1.104.3 in front of jev-compatible-server 0.1.1, recorded live -------------


def through_litellm(server: LoopbackServer, recorded: dict[str, Any]) -> Evaluator:
    """The adapter of the fixture's route, as the recorder built it."""
    from checkprofile.adapters.openai_decisions import DecisionsEvaluator

    model = recorded["proxy_model"]
    if recorded["route"] == "systemone":
        return systemone(server, model)
    options = recorded["options"]
    return DecisionsEvaluator(
        model, base_url=f"{server.url}/v1", api_key="unused", timeout=5, **options
    )


def litellm(name: str) -> dict[str, Any]:
    return fixture(f"litellm-1.104.3/{name}.json")


@pytest.mark.parametrize("name", ["systemone-answered", "decisions-input-text-answered"])
def test_litellm_answers_are_the_hosts_own_numbers(loopback: LoopbackServer, name: str) -> None:
    recorded = litellm(name)
    outcome = replay(loopback, recorded, through_litellm(loopback, recorded))
    assert_sent_as_recorded(loopback, recorded)
    assert outcome.failures == ()
    (upstream,) = recorded["upstream"]
    answered = upstream["response"]["answers"]
    assert outcome.verdict.model == upstream["response"]["model"]
    yes_no, choice = outcome.answers
    assert type(yes_no) is YesNoAnswer and yes_no.p == answered["q0"]["noul"]
    assert type(choice) is ChoiceAnswer and choice.name == answered["q1"]["choice"]
    assert choice.confidence == answered["q1"]["confidence"]
    assert dict(choice.distribution or ()) == answered["q1"]["probabilities"]


def test_litellm_hands_the_input_text_on_as_the_state(loopback: LoopbackServer) -> None:
    recorded = litellm("decisions-input-text-answered")
    ((part,),) = [m["content"] for m in recorded["request"]["body"]["input"]]
    assert part["type"] == "input_text"
    (upstream,) = recorded["upstream"]
    assert upstream["request"]["state"] == part["text"]


@pytest.mark.parametrize(
    ("name", "reason", "said"),
    [
        ("decisions-input-json-refused", "unknown", "Invalid Decisions request"),
        ("score-legend-list", "server_error", "litellm.InternalServerError"),
        ("unsupported-answer", "server_error", "litellm.InternalServerError"),
        ("upstream-down", "unavailable", "litellm.APIConnectionError"),
        ("unknown-key", "auth", "No connected db"),
    ],
)
def test_litellms_errors_are_read_by_their_own_words(
    loopback: LoopbackServer, name: str, reason: str, said: str
) -> None:
    recorded = litellm(name)
    outcome = replay(loopback, recorded, through_litellm(loopback, recorded))
    assert_sent_as_recorded(loopback, recorded)
    assert outcome.verdict.verdict == "error"
    assert {failure.reason for _, failure in outcome.failures} == {reason}
    for _, failure in outcome.failures:
        assert said in failure.detail
        # What the proxy quotes of the request, or of the host's answer, is not kept.
        assert "Acme" not in failure.detail and "input_value" not in failure.detail
        assert "Neither list" not in failure.detail


def test_litellm_refuses_the_hosts_list_legend_and_unsupported_answers(
    loopback: LoopbackServer,
) -> None:
    # What the recorded 500s stand for: the host's own 200 answers, which the proxy cannot
    # translate into its response model.
    (legend,) = litellm("score-legend-list")["upstream"]
    assert legend["status"] == 200 and isinstance(
        legend["response"]["answers"]["q2"]["legend"], list
    )
    (unsupported,) = litellm("unsupported-answer")["upstream"]
    assert unsupported["response"]["answers"]["q1"]["type"] == "unsupported"


# --- vLLM 0.33.0, built from its wheel --------------------------------------------------------


def vllm(server: LoopbackServer, recorded: dict[str, Any]) -> Evaluator:
    from checkprofile.adapters.openai_decisions import DecisionsEvaluator

    if recorded["route"] == "systemone":
        return systemone(server, "qwen3")
    return DecisionsEvaluator(
        "qwen3", base_url=f"{server.url}/v1", api_key="unused", timeout=5, **recorded["options"]
    )


@pytest.mark.parametrize("name", ["systemone-every-kind", "decisions-input-text-every-kind"])
def test_vllm_answers_every_kind_and_its_numbers_are_read(
    loopback: LoopbackServer, name: str
) -> None:
    recorded = fixture(f"vllm-0.33.0/{name}.json")
    outcome = replay(loopback, recorded, vllm(loopback, recorded))
    assert_sent_as_recorded(loopback, recorded)
    assert outcome.failures == ()
    body = recorded["response"]["body"]
    assert outcome.verdict.model == body["model"]
    yes_no, choice, rubric = outcome.answers
    answers = body["answers"]
    if isinstance(answers, dict):  # System One: by name, a noul and a legend map
        assert type(yes_no) is YesNoAnswer and yes_no.p == answers["q0"]["noul"]
        assert isinstance(answers["q2"]["legend"], dict)
        choice_answer, score_answer = answers["q1"], answers["q2"]
        probabilities = choice_answer["probabilities"]
    else:  # Decisions: in question order
        assert type(yes_no) is YesNoAnswer and yes_no.p == answers[0]["probability"]
        choice_answer, score_answer = answers[1], answers[2]
        probabilities = {e["value"]: e["probability"] for e in choice_answer["probabilities"]}
    assert type(choice) is ChoiceAnswer and choice.name == choice_answer["choice"]
    assert choice.confidence == choice_answer["confidence"]
    assert dict(choice.distribution or ()) == probabilities
    assert type(rubric) is RubricAnswer and rubric.confidence == score_answer["confidence"]


def test_vllm_refuses_the_input_json_part(loopback: LoopbackServer) -> None:
    recorded = fixture("vllm-0.33.0/decisions-input-json-refused.json")
    outcome = replay(loopback, recorded, vllm(loopback, recorded))
    assert_sent_as_recorded(loopback, recorded)
    assert outcome.verdict.verdict == "error"
    assert {failure.reason for _, failure in outcome.failures} == {"unknown"}
    assert all(
        failure.detail.endswith("HTTP 400: 5 validation errors") for _, failure in outcome.failures
    )


# --- The chat fallback: llama.cpp, llama-cpp-python, transformers serve ------------------------


def chat(server: LoopbackServer, model: str = "tiny.gguf") -> Evaluator:
    from checkprofile.adapters.openai_chat import ChatEvaluator

    return ChatEvaluator(model, base_url=f"{server.url}/v1", api_key="unused", timeout=5)


@pytest.mark.parametrize(
    "name", ["llama-server/context-overflow.json", "llama-cpp-python-0.3.36/context-overflow.json"]
)
def test_a_request_over_the_context_is_tokens_exceeded(loopback: LoopbackServer, name: str) -> None:
    outcome = replay(loopback, fixture(name), chat(loopback))
    assert outcome.verdict.verdict == "error"
    assert {failure.reason for _, failure in outcome.failures} == {"tokens_exceeded"}


def test_transformers_serve_answers_without_logprobs_and_that_is_an_error(
    loopback: LoopbackServer,
) -> None:
    recorded = fixture("transformers-serve-5.24.0/no-logprobs.json")
    outcome = replay(loopback, recorded, chat(loopback, recorded["request"]["body"]["model"]))
    assert_sent_as_recorded(loopback, recorded)
    assert recorded["request"]["body"]["logprobs"] is True
    assert "logprobs" not in recorded["response"]["body"]["choices"][0]
    assert outcome.verdict.verdict == "error"
    ((_, failure),) = outcome.failures
    assert failure.reason == "malformed" and "logprobs" in failure.detail


def test_llama_server_repeated_token_texts_each_count_once(loopback: LoopbackServer) -> None:
    recorded = fixture("llama-server/top-logprobs-repeated.json")
    outcome = replay(loopback, recorded, chat(loopback))
    assert outcome.failures == ()
    (choice,) = outcome.answers
    assert type(choice) is ChoiceAnswer and choice.name == "states"
    # A 0.74, B 0.20 and C unlisted: the shares of the three labels.
    assert dict(choice.distribution or ())["states"] == pytest.approx(0.74 / 0.94, abs=1e-9)


def test_llama_cpp_python_names_the_model_it_was_sent(loopback: LoopbackServer) -> None:
    recorded = fixture("llama-cpp-python-0.3.36/model-echo.json")
    outcome = replay(loopback, recorded, chat(loopback, recorded["configured_model"]))
    assert outcome.verdict.verdict == "pass"
    # The name the host echoed is all there is to record: the verdict keeps it as given, and
    # the answer says it is only an echo.
    assert outcome.verdict.model == "gpt-4o"
    assert all(answer.model_echoed for answer in outcome.answers)
