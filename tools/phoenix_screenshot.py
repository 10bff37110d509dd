"""Regenerate docs/images/phoenix-check-trace.png, a check's trace in Arize Phoenix's UI
(development only).

Starts Phoenix on 127.0.0.1 (tests/phoenixhost.py), runs the Phoenix test's host process,
which sends the checks' traces to it over OTLP/HTTP, opens the chat adapter's check in
headless Chromium at 1280 by 900 CSS pixels, shows the check span's evaluation events and
opens each, and saves the window as a PNG::

    python tools/phoenix_screenshot.py [--phoenix-python /work/venvs/phoenix/bin/python]

Needs Chromium (``apt-get install chromium``), driven with the tests' DevTools driver, and
Phoenix's virtual environment (``CHECKPROFILE_TEST_PHOENIX_PYTHON``, or the option).
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import phoenixhost  # noqa: E402  # the tests' Phoenix host, found above
from browser import CHROMIUM, Browser  # noqa: E402  # the tests' driver, found above

OUT = ROOT / "docs" / "images" / "phoenix-check-trace.png"
MODEL = "judge"  # the chat adapter's check (tests/phoenixhost.py's RUNS)
WIDTH, HEIGHT = 1280, 900

# Clicks the span-detail tab whose label starts "Events"; true once it has.
CLICK_EVENTS = """(() => {
  const tab = [...document.querySelectorAll('[role=tab]')]
    .find(t => t.textContent.trim().startsWith('Events'));
  if (!tab) return false;
  tab.click();
  return true;
})()"""
SHOWS_EVENTS = "document.body.innerText.includes('gen_ai.evaluation.result')"
# Opens the evaluation events' rows one at a time (the UI keeps only the last of several
# clicks in one go), to show their attributes; true once all three are open.
OPEN_EVENTS = """(() => {
  const rows = [...document.querySelectorAll('button[aria-expanded]')]
    .filter(r => r.textContent.includes('gen_ai.evaluation.result'));
  const closed = rows.filter(r => r.getAttribute('aria-expanded') === 'false');
  if (closed.length) closed[0].click();
  return rows.length === 3 && closed.length === 0;
})()"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--phoenix-python",
        default=os.environ.get(phoenixhost.ENV, "/work/venvs/phoenix/bin/python"),
        help="the Python of Phoenix's virtual environment",
    )
    args = parser.parse_args(argv)
    if CHROMIUM is None:
        print("Chromium is not installed", file=sys.stderr)
        return 1
    with phoenixhost.PhoenixHost(args.phoenix_python) as phoenix:
        _, spans = phoenix.export()
        (check,) = [
            span
            for span in spans
            if span["name"] == "check" and span["attributes"]["gen_ai.request.model"] == MODEL
        ]
        url = f"{phoenix.url}/redirects/traces/{check['context']['trace_id']}"
        with tempfile.TemporaryDirectory() as scratch:
            OUT.write_bytes(_screenshot(url, Path(scratch) / "profile"))
    print(OUT.relative_to(ROOT))
    return 0


def _screenshot(url: str, profile: Path) -> bytes:
    assert CHROMIUM is not None
    browser = Browser(CHROMIUM, profile)
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        browser.send("Page.enable", session)
        browser.send(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=WIDTH,
            height=HEIGHT,
            deviceScaleFactor=1,
            mobile=False,
        )
        browser.send("Page.navigate", session, url=url)
        _until(browser, session, CLICK_EVENTS)  # the app has drawn the trace
        _until(browser, session, SHOWS_EVENTS)  # and the events tab
        _until(browser, session, OPEN_EVENTS)  # and each event's attributes
        time.sleep(1)  # the tab's last layout
        shot = browser.send("Page.captureScreenshot", session, format="png")
        return base64.b64decode(shot["data"])
    finally:
        browser.close()


def _until(browser: Browser, session: str, expression: str, timeout: float = 60) -> None:
    """Wait until ``expression`` is true in the page (the UI is a JavaScript app that draws
    after its load event, from its GraphQL API)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reply = browser.send("Runtime.evaluate", session, expression=expression, returnByValue=True)
        if reply["result"].get("value") is True:
            return
        time.sleep(0.25)
    raise TimeoutError(f"the page never made true: {expression}")


if __name__ == "__main__":
    raise SystemExit(main())
