"""A reviewer's queue: the escalations waiting in a folder of checkpoints, decided in a browser.

Standard library only, on 127.0.0.1 only::

    python examples/review-queue/serve.py examples/review-queue/checkpoints --reviewer alice@ops

then open the address it prints. ``/`` lists the checkpoints no one has decided;
``/checkpoints/<reference>`` is the receipt's page with the decision form
(:func:`~checkprofile.human.receipt_html`); the form posts to
``/checkpoints/<reference>/decision``, read with :func:`~checkprofile.human.decision_from_form`
and applied with :meth:`~checkprofile.human.Checkpoint.decide` and
:meth:`~checkprofile.human.Checkpoint.resolve`. A decision is applied once: the step's next
state is written to ``decided/<reference>.json`` beside the checkpoints, created only if it
is not there, and its record appended to ``audit.jsonl``; a second post for the same
checkpoint is refused (409).

Not a production server: it has no login (every decision is ``--reviewer``'s) and keeps its
token secret in memory (a restart invalidates open pages). A real host takes ``by`` from its
session, and keeps the state where its run data lives.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import html
import json
import secrets
import socket
import sys
import threading
import urllib.parse
from collections.abc import Callable
from datetime import datetime, timezone
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from checkprofile.human import (
    Checkpoint,
    CheckpointError,
    DecisionRequiredError,
    FormRefusedError,
    JsonLinesRecorder,
    StateError,
    decision_from_form,
    receipt_html,
    resolution_record,
)

#: A post longer than this is refused before it is read (a decision is a few fields).
MAX_POST_BYTES = 1 << 20
# Pages the server writes itself allow nothing at all; the receipt's page brings its own policy.
_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'"


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class ReviewQueue(ThreadingHTTPServer):
    """The queue over ``folder``: every ``*.json`` in it is a checkpoint."""

    def __init__(
        self,
        folder: Path,
        *,
        reviewer: str,
        port: int = 0,
        clock: Callable[[], str] = utc_now,
        idle: float = 10.0,
        lifetime: float = 60.0,
    ) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        # A client that stalls is dropped, so it never holds a thread: no read waits more than
        # ``idle`` seconds, and no connection lives past ``lifetime`` (one that drips a byte
        # at a time, each within ``idle``, included).
        self.idle = idle
        self.lifetime = lifetime
        self.folder = folder
        self.decided = folder / "decided"
        self.decided.mkdir(exist_ok=True)
        self.audit = JsonLinesRecorder(folder / "audit.jsonl")
        self.reviewer = reviewer
        self.clock = clock
        self.lock = threading.Lock()
        self._secret = secrets.token_bytes(32)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def token(self, reference: str) -> str:
        """The anti-forgery token of one checkpoint's page: only this server can make it."""
        return hmac.new(self._secret, reference.encode(), hashlib.sha256).hexdigest()

    def checkpoints(self) -> tuple[dict[str, Checkpoint], list[str]]:
        """The checkpoints in the folder by reference, and a line for each file that is not
        one (named, never served)."""
        found: dict[str, Checkpoint] = {}
        unreadable = []
        for path in sorted(self.folder.glob("*.json")):
            try:
                checkpoint = Checkpoint.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, CheckpointError) as error:
                unreadable.append(f"{path.name}: {error}")
                continue
            found[checkpoint.reference] = checkpoint
        return found, unreadable

    def decision_path(self, reference: str) -> Path:
        return self.decided / f"{reference}.json"

    def apply(self, checkpoint: Checkpoint, fields: list[tuple[str, str]]) -> str:
        """Read the post and apply its decision once; the decision's kind. Raises what
        decision_from_form raises, and FileExistsError when the checkpoint is decided."""
        reference = checkpoint.reference
        if self.decision_path(reference).exists():
            raise FileExistsError(reference)
        decision = decision_from_form(
            fields,
            by=self.reviewer,
            at=self.clock(),
            reference=reference,
            token=self.token(reference),
        )
        state = checkpoint.decide(decision)
        resolution = checkpoint.resolve(decision)
        record = {"checkpoint": reference, "decision": decision.to_json(), "state": state.to_json()}
        with self.lock:
            # "x": created only if absent, so a decision is applied once, also across servers
            # sharing the folder.
            with open(self.decision_path(reference), "x", encoding="utf-8") as out:
                json.dump(record, out, ensure_ascii=False, indent=1)
            self.audit.record(resolution_record(resolution))
        return decision.kind


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title></head><body><main><h1>{html.escape(title)}</h1>"
        f"{body}</main></body></html>\n"
    )


class _Handler(BaseHTTPRequestHandler):
    server: ReviewQueue

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: the example prints its address and nothing else

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.idle)  # each read: a stalled one is dropped
        self._cut = threading.Timer(self.server.lifetime, self._drop)
        self._cut.daemon = True
        self._cut.start()

    def finish(self) -> None:
        self._cut.cancel()
        super().finish()

    def _drop(self) -> None:
        # The connection's life is over: whatever reads it (a header line, a post's body)
        # gets the end of the stream, and the thread goes.
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _send(self, status: HTTPStatus, text: str, policy: str | None = _POLICY) -> None:
        data = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        if policy is not None:
            self.send_header("Content-Security-Policy", policy)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "same-origin")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def _refuse(self, status: HTTPStatus, why: str) -> None:
        self._send(status, _page(status.phrase, f"<p>{html.escape(why)}</p>"))

    def _own_host(self) -> bool:
        # A page of another site that names 127.0.0.1 by another name (DNS rebinding) is
        # refused: this server answers to its own address only.
        return self.headers.get("Host") == self.server.origin.removeprefix("http://")

    def do_GET(self) -> None:
        if not self._own_host():
            return self._refuse(HTTPStatus.MISDIRECTED_REQUEST, "Not this server's address.")
        checkpoints, unreadable = self.server.checkpoints()
        path = urllib.parse.urlsplit(self.path).path
        if path == "/":
            return self._send(HTTPStatus.OK, self._queue(checkpoints, unreadable))
        parts = path.split("/")
        if len(parts) == 3 and parts[1] == "checkpoints" and parts[2] in checkpoints:
            reference = parts[2]
            checkpoint = checkpoints[reference]
            if self.server.decision_path(reference).exists():
                return self._refuse(HTTPStatus.GONE, "This escalation has been decided.")
            page = receipt_html(
                checkpoint.receipt,
                action=f"{self.server.origin}/checkpoints/{reference}/decision",
                token=self.server.token(reference),
                reference=reference,
            )
            # The page's own policy (a meta element, first in the page) is the one that applies:
            # a header of another would narrow it.
            return self._send(HTTPStatus.OK, page, policy=None)
        return self._refuse(HTTPStatus.NOT_FOUND, "No such page.")

    def do_POST(self) -> None:
        if not self._own_host():
            return self._refuse(HTTPStatus.MISDIRECTED_REQUEST, "Not this server's address.")
        origin = self.headers.get("Origin")
        if origin is not None and origin != self.server.origin:
            return self._refuse(HTTPStatus.FORBIDDEN, "A post from another site.")
        parts = urllib.parse.urlsplit(self.path).path.split("/")
        if len(parts) != 4 or parts[1] != "checkpoints" or parts[3] != "decision":
            return self._refuse(HTTPStatus.NOT_FOUND, "No such form.")
        if self.headers.get_content_type() != "application/x-www-form-urlencoded":
            return self._refuse(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "Post the page's form.")
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            return self._refuse(HTTPStatus.LENGTH_REQUIRED, "A post needs its length.")
        if not 0 <= length <= MAX_POST_BYTES:
            return self._refuse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "A decision is smaller.")
        body = self.rfile.read(length)
        if len(body) != length:  # the client went, or was dropped, before its whole post
            self.close_connection = True
            return None
        try:
            fields = urllib.parse.parse_qsl(
                body.decode("utf-8"), keep_blank_values=True, strict_parsing=True,
                max_num_fields=10_000,
            )  # fmt: skip
        except ValueError:  # not UTF-8, not a form body, or too many fields
            return self._refuse(HTTPStatus.BAD_REQUEST, "Not a form post.")
        checkpoints, _ = self.server.checkpoints()
        checkpoint = checkpoints.get(parts[2])
        if checkpoint is None:
            return self._refuse(HTTPStatus.NOT_FOUND, "No such checkpoint.")
        try:
            kind = self.server.apply(checkpoint, fields)
        except FormRefusedError as error:
            return self._refuse(HTTPStatus.FORBIDDEN, str(error))
        except (DecisionRequiredError, StateError) as error:
            return self._refuse(HTTPStatus.BAD_REQUEST, str(error))
        except FileExistsError:
            return self._refuse(HTTPStatus.CONFLICT, "This escalation was already decided.")
        body_html = (
            f"<p>Recorded: {html.escape(kind)} by {html.escape(self.server.reviewer)}, step"
            f" {html.escape(checkpoint.step_id)} of run {html.escape(checkpoint.run_id)}.</p>"
            '<p><a href="/">Back to the queue</a></p>'
        )
        self._send(HTTPStatus.OK, _page("Decision recorded", body_html))

    def _queue(self, checkpoints: dict[str, Checkpoint], unreadable: list[str]) -> str:
        rows = []
        for reference, checkpoint in checkpoints.items():
            if self.server.decision_path(reference).exists():
                continue
            verdict = checkpoint.verdict
            rows.append(
                f'<li><a href="/checkpoints/{reference}">step'
                f" {html.escape(checkpoint.step_id)} of run {html.escape(checkpoint.run_id)}</a>:"
                f" {verdict.verdict} by {html.escape(verdict.model)} at {verdict.at}</li>"
            )
        body = f"<ul>{''.join(rows)}</ul>" if rows else "<p>Nothing waits on you.</p>"
        if unreadable:
            lines = "".join(f"<li>{html.escape(line)}</li>" for line in unreadable)
            body += f"<h2>Files that are not checkpoints</h2><ul>{lines}</ul>"
        return _page(f"Waiting on you ({len(rows)})", body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("folder", type=Path, help="a folder of checkpoint JSON files")
    parser.add_argument("--reviewer", required=True, help="who decides (the example has no login)")
    parser.add_argument("--port", type=int, default=8025)
    args = parser.parse_args(argv)
    if not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder")
    server = ReviewQueue(args.folder, reviewer=args.reviewer, port=args.port)
    print(f"review queue on {server.origin}/ (Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
