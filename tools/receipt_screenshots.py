"""Regenerate the reviewer's page screenshots in docs/images (development only).

Serves ``examples/review-queue/checkpoints`` (a copy) with the example server, opens the vendor
screening escalation in headless Chromium at 390 and 1280 CSS pixels wide, and saves each whole
page as a PNG::

    python tools/receipt_screenshots.py

Needs Chromium (``apt-get install chromium``); drives it with the tests' DevTools driver.
"""

from __future__ import annotations

import base64
import importlib.util
import shutil
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from browser import CHROMIUM, Browser  # noqa: E402  # the tests' driver, found above

WIDTHS = (390, 1280)


def main() -> int:
    if CHROMIUM is None:
        print("Chromium is not installed", file=sys.stderr)
        return 1
    spec = importlib.util.spec_from_file_location("serve", ROOT / "examples/review-queue/serve.py")
    assert spec is not None and spec.loader is not None
    serve = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(serve)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "checkpoints"
        shutil.copytree(ROOT / "examples/review-queue/checkpoints", folder)
        queue = serve.ReviewQueue(folder, reviewer="ana@example.com")
        threading.Thread(target=queue.serve_forever, daemon=True).start()
        checkpoints, _ = queue.checkpoints()
        reference = next(r for r, cp in checkpoints.items() if cp.step_id == "check_vendor")
        browser = Browser(CHROMIUM, Path(scratch) / "profile")
        try:
            for width in WIDTHS:
                target = browser.send("Target.createTarget", url="about:blank")["targetId"]
                session = browser.send("Target.attachToTarget", targetId=target, flatten=True)[
                    "sessionId"
                ]
                browser.send("Page.enable", session)
                browser.send(
                    "Emulation.setDeviceMetricsOverride",
                    session,
                    width=width,
                    height=900,
                    deviceScaleFactor=1,
                    mobile=width < 600,
                )
                browser.send(
                    "Page.navigate", session, url=f"{queue.origin}/checkpoints/{reference}"
                )
                browser.wait(
                    lambda m, s=session: (
                        m.get("method") == "Page.loadEventFired" and m.get("sessionId") == s
                    )
                )
                shot = browser.send(
                    "Page.captureScreenshot", session, format="png", captureBeyondViewport=True
                )
                out = ROOT / "docs" / "images" / f"review-page-{width}.png"
                out.write_bytes(base64.b64decode(shot["data"]))
                print(out.relative_to(ROOT))
        finally:
            browser.close()
            queue.shutdown()
            queue.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
