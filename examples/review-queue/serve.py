"""A reviewer's queue: the escalations waiting in a folder of checkpoints, decided in a browser.

Standard library only, on 127.0.0.1 only::

    python examples/review-queue/serve.py examples/review-queue/checkpoints --reviewer alice@ops

then open the address it prints. ``/`` lists the checkpoints no one has decided;
``/checkpoints/<reference>`` is the receipt's page with the decision form
(:func:`~checkprofile.human.receipt_html`); the form posts to
``/checkpoints/<reference>/decision``, read with :func:`~checkprofile.human.decision_from_form`
and applied by an escalation store (:class:`~checkprofile.human.SqliteEscalationStore`,
``escalations.sqlite`` beside the checkpoints; give ``ReviewQueue`` a
:class:`~checkprofile.human.PostgresEscalationStore` to run several servers on one queue). A
decision is applied once, by the store: the reviewer first claims the escalation (an exclusive
lease no one else, nor the same reviewer on another server, may decide under), then the
decision's record is appended to ``audit.jsonl``, and only then the store keeps the first
decision and the step's next state (a record that cannot be written leaves the escalation
waiting); a second post for the same checkpoint, from this server or another sharing the store,
is refused (409).

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
    AlreadyDecidedError,
    Checkpoint,
    CheckpointError,
    ClaimedError,
    DecisionRequiredError,
    EscalationStore,
    FormRefusedError,
    JsonLinesRecorder,
    SqliteEscalationStore,
    StateError,
    decision_from_form,
    receipt_headers,
    receipt_html,
    resolution_record,
)

#: A post longer than this is refused before it is read (a decision is a few fields).
MAX_POST_BYTES = 1 << 20
# Pages the server writes itself allow nothing at all, and no site may frame them (framed under a
# decoy, the queue's link is the first of two clicks that decide in the reviewer's name).
_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": (
        "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


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
        store: EscalationStore | None = None,
    ) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        # A client that stalls is dropped, so it never holds a thread: no read waits more than
        # ``idle`` seconds, and no connection lives past ``lifetime`` (one that drips a byte
        # at a time, each within ``idle``, included).
        self.idle = idle
        self.lifetime = lifetime
        self.folder = folder
        # What is decided lives in the store, not in this server's memory: every server
        # sharing the store applies a checkpoint's first decision and refuses the rest.
        self.store = (
            store if store is not None else SqliteEscalationStore(folder / "escalations.sqlite")
        )
        self.audit = JsonLinesRecorder(folder / "audit.jsonl")
        self.lock = threading.Lock()  # one decision at a time in this server
        self.reviewer = reviewer
        self.clock = clock
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
        self.store.put_many(found.values())  # kept once, however often the folder is read
        return found, unreadable

    def server_close(self) -> None:
        super().server_close()
        self.store.close()

    def is_decided(self, reference: str) -> bool:
        return self.store.decided(reference) is not None

    def apply(self, checkpoint: Checkpoint, fields: list[tuple[str, str]]) -> str:
        """Read the post and have the store apply its decision once; the decision's kind.
        Raises what decision_from_form raises, AlreadyDecidedError or ClaimedError when the
        checkpoint is decided or being decided, and OSError when its record cannot be written
        (then nothing is decided: it still waits)."""
        reference = checkpoint.reference
        # The library refuses, before anything changes, a decision the trail could not keep.
        decision = decision_from_form(
            fields,
            by=self.reviewer,
            at=self.clock(),
            reference=reference,
            token=self.token(reference),
        )
        record = resolution_record(checkpoint.resolve(decision))  # it applies, or this raises
        # Claimed first (a lease no one else may decide under), then recorded, then decided:
        # a record that cannot be written leaves the escalation waiting, and no other server
        # can decide it between its record and its decision. The claim is exclusive: the same
        # reviewer deciding on another replica at once is refused too, before any record.
        with self.lock:
            self.store.claim(reference, by=self.reviewer, seconds=CLAIM_SECONDS, exclusive=True)
            try:
                self.audit.record(record)
            except BaseException:
                self.store.release(reference, by=self.reviewer)
                raise
            self.store.decide(reference, decision)  # the first wins; the rest raise
        return decision.kind


#: How long a reviewer holds an escalation between its record and its decision.
CLAIM_SECONDS = 60.0


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

    def _send(self, status: HTTPStatus, text: str, headers: dict[str, str] = _HEADERS) -> None:
        data = text.encode("utf-8")
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def receipt_headers(self, action: str) -> dict[str, str]:
        """The headers a receipt's page is served with: the library's, which forbid framing."""
        return receipt_headers(action=action)

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
            if self.server.is_decided(reference):
                return self._refuse(HTTPStatus.GONE, "This escalation has been decided.")
            action = f"{self.server.origin}/checkpoints/{reference}/decision"
            page = receipt_html(
                checkpoint.receipt,
                action=action,
                token=self.server.token(reference),
                reference=reference,
            )
            # The page's own policy again, as a header that also forbids framing.
            return self._send(HTTPStatus.OK, page, self.receipt_headers(action))
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
        except AlreadyDecidedError:
            return self._refuse(HTTPStatus.CONFLICT, "This escalation was already decided.")
        except ClaimedError:
            return self._refuse(HTTPStatus.CONFLICT, "This escalation is being decided elsewhere.")
        except OSError:
            return self._refuse(
                HTTPStatus.SERVICE_UNAVAILABLE,
                "The decision could not be recorded; nothing was decided, it still waits.",
            )
        body_html = (
            f"<p>Recorded: {html.escape(kind)} by {html.escape(self.server.reviewer)}, step"
            f" {html.escape(checkpoint.step_id)} of run {html.escape(checkpoint.run_id)}.</p>"
            '<p><a href="/">Back to the queue</a></p>'
        )
        self._send(HTTPStatus.OK, _page("Decision recorded", body_html))

    def _queue(self, checkpoints: dict[str, Checkpoint], unreadable: list[str]) -> str:
        rows = []
        for reference, checkpoint in checkpoints.items():
            if self.server.is_decided(reference):
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
