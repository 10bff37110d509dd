"""A check's traces reach Arize Phoenix, a real OTLP receiver, over OTLP/HTTP, and read back
through Phoenix's own REST API with the names and values docs/operations.md promises.

Phoenix runs in a virtual environment of its own (tests/phoenixhost.py says how to make it;
``.ci/run`` makes one), named by ``CHECKPROFILE_TEST_PHOENIX_PYTHON``. A child process plays
the host: it configures the OpenTelemetry SDK with the OTLP/HTTP span exporter pointed at
Phoenix and runs checks against each adapter's loopback host. Without Phoenix the tests skip,
saying why; with ``CI`` set they fail instead, so a missing receiver cannot pass for a green
run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
pytest.importorskip("typesafe_sdk")
pytest.importorskip("openai")

import phoenixhost

from support import unavailable

NO_PHOENIX = (
    f"no Arize Phoenix: set {phoenixhost.ENV} to the Python of a virtual environment that has"
    " it (tests/phoenixhost.py says how; .ci/run makes one)"
)


class Exported:
    """What the host process said of its checks, and the spans Phoenix holds of them."""

    def __init__(self, said: list[dict[str, Any]], spans: list[dict[str, Any]]) -> None:
        self.said = said
        self.spans = spans

    def check(self, model: str) -> dict[str, Any]:
        """The one ``check`` span of the check run with the evaluator's model ``model``."""
        (found,) = [
            span
            for span in self.spans
            if span["name"] == "check" and span["attributes"]["gen_ai.request.model"] == model
        ]
        return found

    def children(self, span: dict[str, Any]) -> list[dict[str, Any]]:
        return [s for s in self.spans if s["parent_id"] == span["context"]["span_id"]]

    def outcome(self, model: str) -> dict[str, Any]:
        (found,) = [run for run in self.said if run["model"] == model]
        return found


@pytest.fixture(scope="module")
def exported() -> Iterator[Exported]:
    python = os.environ.get(phoenixhost.ENV)
    if not python:
        unavailable(NO_PHOENIX, "run the Phoenix test")
    with phoenixhost.PhoenixHost(python) as phoenix:
        yield Exported(*phoenix.export())


@pytest.mark.parametrize(
    ("model", "operation"),
    [("jev-latest", "system_one"), ("gpt-6-luna", "decisions"), ("judge", "chat")],
)
def test_a_checks_span_and_its_model_call_arrive_with_their_gen_ai_attributes(
    exported: Exported, model: str, operation: str
) -> None:
    outcome = exported.outcome(model)
    assert outcome["verdict"] == "pass"
    check = exported.check(model)
    assert check["parent_id"] is None
    assert check["status_code"] != "ERROR"
    attributes = check["attributes"]
    assert attributes["checkprofile.verdict"] == "pass"
    assert attributes["checkprofile.action"] == outcome["action"] == "complete"
    assert attributes["checkprofile.advisory"] is False
    assert attributes["checkprofile.questions"] == 3
    assert attributes["checkprofile.attempts"] == 1
    assert attributes["gen_ai.response.model"] == outcome["response_model"]

    (call,) = exported.children(check)
    (said,) = outcome["calls"]
    assert call["context"]["trace_id"] == check["context"]["trace_id"]
    assert call["name"] == f"{operation} {model}"
    assert call["attributes"]["gen_ai.operation.name"] == operation
    assert call["attributes"]["gen_ai.request.model"] == model
    assert call["attributes"]["gen_ai.response.model"] == said["model"]
    # The usage the loopback host reported, as the outcome holds it, and as Phoenix reads it.
    assert said["input_tokens"] is not None and said["input_tokens"] > 0
    assert call["attributes"]["gen_ai.usage.input_tokens"] == said["input_tokens"]
    assert call["attributes"]["gen_ai.usage.output_tokens"] == said["output_tokens"]
    assert call["attributes"]["llm.token_count.prompt"] == said["input_tokens"]
    assert call["attributes"]["llm.model_name"] == model
    assert call["attributes"]["checkprofile.request_ids"] == said["request_ids"]
    requests = exported.children(call)
    if len(said["request_ids"]) == 1:  # one request: the call's span is the response's
        assert call["attributes"]["gen_ai.response.id"] == said["request_ids"][0]
        assert requests == []
    else:  # the chat fallback: one request a question, each a child span with its own id
        assert "gen_ai.response.id" not in call["attributes"]
        ids = [span["attributes"]["gen_ai.response.id"] for span in requests]
        assert sorted(ids) == sorted(said["request_ids"])
    assert call["start_time"] >= check["start_time"] and call["end_time"] <= check["end_time"]


@pytest.mark.parametrize("model", ["jev-latest", "gpt-6-luna", "judge"])
def test_each_question_is_an_evaluation_event_on_the_checks_span(
    exported: Exported, model: str
) -> None:
    outcome = exported.outcome(model)
    events = exported.check(model)["events"]
    assert [event["name"] for event in events] == ["gen_ai.evaluation.result"] * 3
    attributes = [event["attributes"] for event in events]
    assert [a["gen_ai.evaluation.name"] for a in attributes] == [
        "checkprofile.yes_no.0",
        "checkprofile.choice.1",
        "checkprofile.rubric.2",
    ]
    assert [a["gen_ai.evaluation.score.label"] for a in attributes] == outcome["results"]
    field = {"YesNoAnswer": "p", "ChoiceAnswer": "confidence", "RubricAnswer": "level"}
    scores = [answer[field[answer["kind"]]] for answer in outcome["answers"]]
    assert [a["gen_ai.evaluation.score.value"] for a in attributes] == pytest.approx(scores)
    assert {a["gen_ai.response.id"] for a in attributes} == {outcome["calls"][-1]["request_ids"][0]}
    assert all("error.type" not in a for a in attributes)
    # No content capture: neither the ask nor the submission went to Phoenix.
    dumped = json.dumps(exported.spans)
    assert "Is the vendor" not in dumped
    assert "Acme GmbH" not in dumped


def test_an_error_verdict_arrives_as_an_error_span_with_its_reason(exported: Exported) -> None:
    outcome = exported.outcome("jev-down")
    assert outcome["verdict"] == "error" and outcome["failures"] == ["server_error"]
    check = exported.check("jev-down")
    assert check["status_code"] == "ERROR"
    assert check["attributes"]["error.type"] == "server_error"
    assert check["attributes"]["checkprofile.verdict"] == "error"
    calls = exported.children(check)
    assert len(calls) == len(outcome["calls"]) >= 1
    assert {call["status_code"] for call in calls} == {"ERROR"}
    assert {call["attributes"]["error.type"] for call in calls} == {"server_error"}
    events = check["events"]
    assert len(events) == 3
    for event in events:
        assert event["attributes"]["error.type"] == "server_error"
        assert "gen_ai.evaluation.score.label" not in event["attributes"]
        assert "gen_ai.evaluation.score.value" not in event["attributes"]
