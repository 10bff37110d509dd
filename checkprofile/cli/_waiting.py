"""Saying on stderr what a long command is doing, and holding ``run`` to its ``--timeout``.

A status line is for a person at a terminal: rewritten in place there, and shown elsewhere only
when asked for (``--progress``), one line per update, so a log never fills with it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .._shown import escaped_text
from ..errors import EvaluatorError

if TYPE_CHECKING:
    from .._bundle import Bundle
    from .._evaluator import Evaluator, Reply

__all__ = ["StatusLine", "Watched"]


class StatusLine:
    """One line on stderr. On a terminal it is rewritten in place and cleared when done; when
    stderr is not a terminal it is written only if ``forced`` (``--progress``), a line per
    update. ``wanted`` false turns it off whatever stderr is."""

    def __init__(self, *, forced: bool, wanted: bool = True) -> None:
        interactive = sys.stderr.isatty()
        self.enabled = wanted and (forced or interactive)
        self.rewrite = interactive
        self.width = 0

    def show(self, text: str) -> None:
        if not self.enabled:
            return
        text = escaped_text(text)  # names and asks from outside: nothing may move the cursor
        if self.rewrite:
            sys.stderr.write("\r" + text.ljust(self.width))
            self.width = len(text)
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def clear(self) -> None:
        if self.enabled and self.rewrite and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()
            self.width = 0


class Watched:
    """``evaluator`` as ``checkprofile run`` asks it: every attempt (the first ask and the one
    re-ask) within one ``timeout`` for the whole run, counted from the first ask, and a
    waiting line while the model is asked.

    An attempt still waiting when the time is up is a failure with the reason ``timeout`` (so
    the run says ``not answered: ...: timeout``, never a pass or a fail); a re-ask after the
    time is up is not sent.
    """

    def __init__(
        self, evaluator: Evaluator, *, name: str, timeout: float | None, line: StatusLine
    ) -> None:
        self._evaluator = evaluator
        self._name = name
        self._timeout = timeout
        self._line = line
        self._deadline: float | None = None
        self._attempts = 0

    @property
    def model(self) -> str:
        return self._evaluator.model

    async def answer(self, bundle: Bundle) -> Reply:
        import asyncio

        loop = asyncio.get_running_loop()
        if self._timeout is not None and self._deadline is None:
            self._deadline = loop.time() + self._timeout
        left = None if self._deadline is None else self._deadline - loop.time()
        if left is not None and left <= 0:
            raise self._too_late()  # the time is up: no re-ask is sent
        self._attempts += 1
        count = len(bundle.check)
        what = (
            f"{'re-asking' if self._attempts > 1 else 'asking'} {self._name}: "
            f"{count} question{'s' * (count != 1)}"
        )
        ticker = loop.create_task(self._tick(what)) if self._line.enabled else None
        try:
            if left is None:
                return await self._evaluator.answer(bundle)
            try:
                return await asyncio.wait_for(self._evaluator.answer(bundle), left)
            except asyncio.TimeoutError:
                raise self._too_late() from None
        finally:
            if ticker is not None:
                ticker.cancel()
                await asyncio.gather(ticker, return_exceptions=True)
            self._line.clear()

    def _too_late(self) -> EvaluatorError:
        return EvaluatorError(f"no answer within --timeout {self._timeout:g} s", reason="timeout")

    async def _tick(self, what: str) -> None:
        import asyncio

        if not self._line.rewrite:
            self._line.show(f"checkprofile: {what}")  # once: a log gets no ticking seconds
            return
        loop = asyncio.get_running_loop()
        start = loop.time()
        limit = f" (--timeout {self._timeout:g} s)" if self._timeout is not None else ""
        while True:
            self._line.show(f"{what}, waiting {int(loop.time() - start)} s{limit}")
            await asyncio.sleep(1)
