"""What the many-machines recipes share: a slow model on loopback, its evaluator, the check,
and the one checked step every worker runs.

``SlowModel`` is a real HTTP server on 127.0.0.1 that answers a check's one question after a
delay, with the score the submission's output names (``{"score": 0.5}`` makes the check unsure),
and counts the requests it got for each submission (``GET /count?key=...``). It stands in for a
model provider: a worker waits on it as it would on a real one, and the tests can count how
often the model was asked.

``checked(request)`` is the unit of work both recipes run, as a host would: run the check
(``run_check_sync``), record its verdict in the audit trail, and, when it escalates, put its
checkpoint in the escalation store. Every write is idempotent (the audit trail keeps a record
once; the store keeps a checkpoint once), so running it again after a crash adds nothing.

    python examples/many-machines/common.py --delay 2   # serve the slow model; prints its URL
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import sys
import threading
import time
import urllib.parse
import urllib.request
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from checkprofile import (
    Bundle,
    Limits,
    Material,
    Outcome,
    Reply,
    Submission,
    YesNoAnswer,
    parse_check,
    run_check_sync,
)
from checkprofile.human import (
    EscalationStore,
    PostgresEscalationStore,
    PostgresRecorder,
    StepState,
    after_check,
    checkpoint_for,
    verdict_record,
)

#: The check every worker runs: one yes/no question.
ASK = "The report is attached and matches the claim."
CHECK = parse_check([{"ask": ASK, "pass": 0.8, "fail": 0.3}])
MODEL = "slow-loopback-1"
STEP = "review"
AT = "2026-10-06T09:00:00Z"


def submission_key(output: dict[str, Any]) -> str:
    """How the slow model names a submission (the SHA-256 of its output's JSON)."""
    text = json.dumps(output, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class SlowModel(ThreadingHTTPServer):
    """The slow model on 127.0.0.1 (``port`` 0: any free one)."""

    daemon_threads = True

    def __init__(self, *, delay: float, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _ModelHandler)
        self.delay = delay
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _ModelHandler(BaseHTTPRequestHandler):
    server: SlowModel

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _json(self, data: object) -> None:
        body = json.dumps(data).encode()
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        with self.server.lock:
            if "key" in query:
                return self._json({"count": self.server.counts.get(query["key"][0], 0)})
            return self._json({"counts": dict(self.server.counts)})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length))
        output = request["output"]
        with self.server.lock:
            key = submission_key(output)
            self.server.counts[key] = self.server.counts.get(key, 0) + 1
        time.sleep(self.server.delay)
        # The worker that asked may have been killed while the model thought.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._json({"model": MODEL, "score": float(output["score"])})


class LoopbackEvaluator:
    """An evaluator asking the slow model over HTTP (in a thread: ``answer`` never blocks the
    loop it runs on)."""

    def __init__(self, url: str, *, timeout: float = 60) -> None:
        self.url = url
        self.timeout = timeout

    @property
    def model(self) -> str:
        return MODEL

    async def answer(self, bundle: Bundle) -> Reply:
        body = json.dumps({"output": bundle.submission.output}).encode()

        def ask() -> dict[str, Any]:
            request = urllib.request.Request(
                self.url, data=body, headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                answer: dict[str, Any] = json.loads(response.read())
                return answer

        answer = await asyncio.to_thread(ask)
        return Reply(answer["model"], (YesNoAnswer(answer["score"]),))


def asked(url: str, output: dict[str, Any]) -> int:
    """How many times the slow model at ``url`` was asked about ``output``."""
    query = urllib.parse.urlencode({"key": submission_key(output)})
    with urllib.request.urlopen(f"{url}/count?{query}", timeout=10) as response:
        return int(json.loads(response.read())["count"])


def material(output: dict[str, Any]) -> Material:
    return Material(
        instructions="Attach the report and make it match the claim.",
        body="# Review\n",
        run_data={"inputs": {}, "steps": {}},
        submission=Submission(output, "Done.", [{"kind": "file", "ref": "report.pdf"}]),
    )


def check_once(evaluator: LoopbackEvaluator, output: dict[str, Any]) -> Outcome:
    """The check of ``output`` (the time pinned, so a rerun makes the same verdict)."""
    return run_check_sync(
        CHECK, material(output), evaluator, limits=Limits(), now=AT, max_retry_wait=0
    )


def checked(
    run_id: str,
    output: dict[str, Any],
    *,
    evaluator: LoopbackEvaluator,
    audit: PostgresRecorder,
    store: EscalationStore,
    submitted_by: str = "agent:clerk",
) -> dict[str, Any]:
    """Check ``output`` for step ``review`` of ``run_id``; record the verdict; put the
    checkpoint when it escalates. Returns JSON: ``{"action", "state", "reference"?}``."""
    outcome = check_once(evaluator, output)
    audit.record(verdict_record(outcome, run_id=run_id, step_id=STEP))
    state = StepState(run_id=run_id, step_id=STEP)
    result: dict[str, Any] = {"action": outcome.action}
    if outcome.action == "escalate":
        checkpoint = checkpoint_for(outcome, state=state, submitted_by=submitted_by)
        result["reference"] = store.put(checkpoint, process="many-machines")
        result["state"] = checkpoint.state.to_json()
    else:
        result["state"] = after_check(state, outcome, submitted_by=submitted_by).to_json()
    return result


def stores(conninfo: str, *, audit_table: str, store_table: str) -> tuple[Any, Any]:
    """The audit trail and the escalation store every worker shares (PostgreSQL)."""
    return (
        PostgresRecorder(conninfo, table=audit_table),
        PostgresEscalationStore(conninfo, table=store_table),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="serve the slow model on 127.0.0.1")
    parser.add_argument("--delay", type=float, default=1.0)
    args = parser.parse_args(argv)
    server = SlowModel(delay=args.delay)
    print(server.url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
