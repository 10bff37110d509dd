"""run_check_sync in forked workers (Celery's prefork pool): nothing shared across a fork.

A child forked while the parent's loop runs, and even while another thread of the parent holds
the loops' lock, runs its own checks on a loop of its own; the parent's loop goes on serving
the parent.
"""

from __future__ import annotations

import os
import threading

import pytest

from checkprofile import Limits, Material, Submission, YesNoAnswer, parse_check, run_check_sync
from checkprofile._sync_loop import SYNC_LOOP
from checkprofile.testing import ScriptedEvaluator

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")

CHECK = parse_check([{"ask": "The report is attached.", "pass": 0.8, "fail": 0.3}])
MATERIAL = Material(
    instructions="Attach the report.",
    body="# Step\n",
    run_data={"inputs": {}, "steps": {}},
    submission=Submission({"done": True}, "Done.", [{"kind": "file", "ref": "r.pdf"}]),
)


def verdict(score: float) -> str:
    model = ScriptedEvaluator({"The report is attached.": YesNoAnswer(score)}, model="m")
    outcome = run_check_sync(CHECK, MATERIAL, model, limits=Limits(), now="2026-10-06T09:00:00Z")
    return outcome.verdict.verdict


def in_child(work: str, *, hold_lock: bool) -> tuple[int, str]:
    """Fork; the child runs ``verdict`` (0.9 or 0.1 by ``work``) and writes it back. With
    ``hold_lock``, another thread of the parent holds the loops' lock across the fork."""
    read, write = os.pipe()
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with SYNC_LOOP._lock:
            held.set()
            release.wait(30)

    thread = threading.Thread(target=holder)
    if hold_lock:
        thread.start()
        held.wait(10)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read)
            text = verdict(0.9 if work == "pass" else 0.1)
            os.write(write, text.encode())
        finally:
            os._exit(0)
    os.close(write)
    release.set()
    if hold_lock:
        thread.join()
    chunks = []
    # The child reports within seconds; a child stuck on a lock inherited held would not.
    import select

    ready, _, _ = select.select([read], [], [], 30)
    if ready:
        chunks.append(os.read(read, 100))
    os.close(read)
    if not ready:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    return status, b"".join(chunks).decode()


@pytest.mark.parametrize("hold_lock", [False, True])
def test_a_forked_child_runs_checks_on_a_loop_of_its_own(hold_lock: bool) -> None:
    assert verdict(0.9) == "pass"  # the parent's loop is running
    parent_loop = SYNC_LOOP.loop()
    status, text = in_child("fail", hold_lock=hold_lock)
    assert (status, text) == (0, "fail")
    status, text = in_child("pass", hold_lock=hold_lock)
    assert (status, text) == (0, "pass")
    # The parent's loop is the one it had, still serving it.
    assert SYNC_LOOP.loop() is parent_loop
    assert verdict(0.1) == "fail"
