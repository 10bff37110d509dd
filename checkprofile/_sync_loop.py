"""The event loop ``run_check_sync`` runs its checks on, and how one slow check cannot hold the
others.

Every synchronous check runs on one long-lived loop on a daemon thread, so the adapters' HTTP
clients and their open connections are reused from call to call. An evaluator that blocks
inside its async ``answer`` (a synchronous client in async code) holds that loop, and with it
every check waiting to start. So the caller waits at most :data:`STALL` seconds for its check
to start; a loop that has not started it by then is held, and is **retired**: the check, and
every check after it, goes to a fresh loop (with fresh clients), while the held loop finishes
the checks already running on it and is then closed with its clients. A slow evaluator stalls
only its own check and the checks that were already running beside it on the loop it holds.

The current loop is made by the first call (and again in a forked child, which has none of
the threads), and closed at interpreter exit: the registered closers (the adapters' clients),
then the tasks still running, then the loop itself.

Forked workers (Celery's prefork pool, gunicorn, multiprocessing's ``fork``): nothing is shared
across a fork. A child forgets its parent's loops (their threads did not follow it) and their
clients, and takes a fresh lock, even when another thread of the parent held it at the fork
(``os.register_at_fork``); its first check makes a loop of its own. Where it cannot work: inside
a running event loop (it says so; ``await run_check`` there), and under pools that replace
threads with green ones (gevent, eventlet), whose monkey-patched threads do not run a loop of
their own; use ``run_check`` from their async side, or a prefork or thread pool.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final, TypeVar

__all__ = ["STALL", "SYNC_LOOP", "on_sync_loop_close"]

T = TypeVar("T")

#: The longest a check waits to start on the shared loop before the loop is taken to be held
#: and the check goes to a fresh one, in seconds. A loop that is merely busy starts a check
#: within microseconds.
STALL: Final = 0.25

#: The longest the closing of a loop waits, in seconds (at exit; once a retired loop is done).
CLOSE_WAIT: Final = 5.0

# What closes with a loop: the adapters register the closing of their clients.
_LOOP_CLOSERS: list[Callable[[asyncio.AbstractEventLoop], Awaitable[None]]] = []


def on_sync_loop_close(closer: Callable[[asyncio.AbstractEventLoop], Awaitable[None]]) -> None:
    """Have ``closer(loop)`` awaited on each of ``run_check_sync``'s loops before it closes."""
    _LOOP_CLOSERS.append(closer)


class _Loop:
    """One event loop on a daemon thread, and how many checks are on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.checks = 0  # started and not finished (guarded by the SyncLoop's lock)
        self.retired = False
        self.thread = threading.Thread(
            target=self._serve, name="checkprofile-run-check-sync", daemon=True
        )
        self.thread.start()

    def _serve(self) -> None:
        self.loop.run_forever()
        if self.retired:  # stopped once its last check finished: nothing else will close it
            self.loop.close()


class _Start:
    """A check handed to a loop: started there, or withdrawn by its caller, never both."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started = threading.Event()
        self.withdrawn = False


class SyncLoop:
    """The loops of ``run_check_sync``: the current one, and those retired and still
    finishing their checks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: _Loop | None = None
        self._retired: set[_Loop] = set()
        self._pid = 0
        self._registered = False
        # The parent's loops, as a forked child inherited them: kept unclosed (their threads
        # are the parent's) so that collecting them never touches what the parent still uses.
        self._forsaken: list[_Loop] = []
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forked)

    def _forked(self) -> None:
        """In a forked child: a fresh lock, no loop (the next check makes one)."""
        self._lock = threading.Lock()
        if self._current is not None:
            self._forsaken.append(self._current)
        self._forsaken.extend(self._retired)
        self._current, self._retired, self._pid = None, set(), os.getpid()

    def current(self) -> _Loop:
        """The loop new checks start on (made on first use, and in a forked child)."""
        with self._lock:
            if self._pid != os.getpid():
                self._current, self._retired, self._pid = None, set(), os.getpid()
            if self._current is None:
                self._current = _Loop()
                if not self._registered:
                    import atexit

                    atexit.register(self.close)
                    self._registered = True
            return self._current

    def loop(self) -> asyncio.AbstractEventLoop:
        """The current loop itself."""
        return self.current().loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the current loop in the caller's context and wait for its result;
        on a fresh loop if the current one does not start it within :data:`STALL`."""
        context = contextvars.copy_context()
        done: concurrent.futures.Future[T] = concurrent.futures.Future()
        task: list[asyncio.Task[T]] = []
        where = self.current()
        try:
            while not self._started(where, coro, done, task, context):
                self._retire(where)
                where = self.current()
            return done.result()
        except BaseException:  # KeyboardInterrupt while waiting: the check stops too
            if not done.done():
                with contextlib.suppress(RuntimeError):  # its loop closed meanwhile
                    where.loop.call_soon_threadsafe(lambda: [t.cancel() for t in task])
            raise

    def _started(
        self,
        where: _Loop,
        coro: Coroutine[Any, Any, T],
        done: concurrent.futures.Future[T],
        task: list[asyncio.Task[T]],
        context: contextvars.Context,
    ) -> bool:
        """Hand ``coro`` to ``where``: whether it started there within :data:`STALL` (if
        not, it is withdrawn, and never starts there)."""
        start = _Start()
        try:
            where.loop.call_soon_threadsafe(
                self._start, where, start, coro, done, task, context=context
            )
            if start.started.wait(STALL):
                return True
        finally:
            with start.lock:
                if not start.started.is_set():
                    start.withdrawn = True
        return start.started.is_set()  # it may have started as the wait ended

    def _start(
        self,
        where: _Loop,
        start: _Start,
        coro: Coroutine[Any, Any, T],
        done: concurrent.futures.Future[T],
        task: list[asyncio.Task[T]],
    ) -> None:
        # On the loop's thread, in the caller's context (a task copies the context it is
        # made in).
        with start.lock:
            if start.withdrawn:
                return  # its caller gave up on this loop and handed it to another
            with self._lock:
                if where.retired:
                    return  # a held loop starts nothing new: its caller will move on
                where.checks += 1
            start.started.set()
        made = where.loop.create_task(coro)
        made.add_done_callback(lambda made: self._settle(where, made, done))
        task.append(made)

    def _settle(
        self, where: _Loop, made: asyncio.Task[T], done: concurrent.futures.Future[T]
    ) -> None:
        # The outcome, or what the check raised (a cancellation as asyncio's, as asyncio.run
        # raises it).
        try:
            outcome = made.result()
        except BaseException as error:
            done.set_exception(error)
        else:
            done.set_result(outcome)
        with self._lock:
            where.checks -= 1
            finished = where.retired and where.checks == 0
        if finished:
            where.loop.create_task(self._finish(where))

    def _retire(self, where: _Loop) -> None:
        """``where`` is held: no new check starts on it; closed once its checks are done."""
        with self._lock:
            if self._current is where:
                self._current = None
            if where.retired:
                return
            where.retired = True
            self._retired.add(where)
            finished = where.checks == 0
        if finished:  # held by no check of ours: closed as soon as it is free
            asyncio.run_coroutine_threadsafe(self._finish(where), where.loop)

    async def _finish(self, where: _Loop) -> None:
        # A retired loop starts no check, so once it has none it has none for good.
        with contextlib.suppress(Exception):
            await _closing(where.loop)
        with self._lock:
            self._retired.discard(where)
        where.loop.stop()

    def close(self) -> None:
        """Close every loop and what is open on it (at interpreter exit)."""
        with self._lock:
            loops = [self._current, *self._retired] if self._pid == os.getpid() else []
            self._current, self._retired = None, set()
        for where in loops:
            if where is not None:
                _close(where)


def _close(where: _Loop) -> None:
    loop, thread = where.loop, where.thread
    if loop.is_closed():
        return
    try:
        closing = asyncio.run_coroutine_threadsafe(_closing(loop), loop)
        closing.result(timeout=CLOSE_WAIT)
    except Exception:  # an evaluator's client that would not close in time
        pass
    with contextlib.suppress(RuntimeError):  # closed meanwhile
        loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=CLOSE_WAIT)
    if not thread.is_alive() and not loop.is_closed():
        loop.close()


async def _closing(loop: asyncio.AbstractEventLoop) -> None:
    for closer in list(_LOOP_CLOSERS):
        # Closing is best effort: one that fails does not keep the others open.
        with contextlib.suppress(Exception):
            await closer(loop)
    current = asyncio.current_task()
    tasks = [task for task in asyncio.all_tasks(loop) if task is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await loop.shutdown_asyncgens()


#: The loops every ``run_check_sync`` of the process shares.
SYNC_LOOP: Final = SyncLoop()
