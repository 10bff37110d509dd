"""checkprofile.human.receipt_html: the reviewer's page, in a parser and in a real browser.

"A person can open the page for an unsure verdict, see why it was unsure, and return,
complete or fail it from the form; the decision that arrives is the typed decision they chose,
applied once; hostile texts in every field of the receipt are shown, not run" (issue 25).
The browser tests drive headless Chromium over the DevTools protocol (tests/browser.py)
against the example server, examples/review-queue/serve.py, and a spy server that records any
request a page makes.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html.parser
import http.client
import importlib.util
import json
import shutil
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from browser import Browser, complaints, need_chromium, png_size
from test_human_records import SCRIPTS, make_outcome

from checkprofile import (
    ChoiceAnswer,
    Failure,
    Limits,
    Material,
    RubricAnswer,
    Submission,
    YesNoAnswer,
    parse_check,
    run_check_sync,
)
from checkprofile.human import (
    Checkpoint,
    Completed,
    Receipt,
    Returned,
    StepState,
    checkpoint_for,
    decision_from_form,
    receipt_for,
    receipt_html,
)
from checkprofile.human._decide._receipts import shown_words
from checkprofile.testing import ScriptedEvaluator

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "review-queue"
ACTION = "http://127.0.0.1:8025/checkpoints/abc/decision"
DECIDED_AT = "2026-10-06T10:15:00Z"


def hostile(spy: str) -> str:
    """A text that, were it not escaped, would run a script, fetch from ``spy`` in four ways,
    close the elements it sits in, and hide characters."""
    return (
        f'<script>fetch("{spy}/script")</script><img src="{spy}/img"'
        f' onerror="fetch(\'{spy}/onerror\')"><link rel="stylesheet" href="{spy}/css">'
        f'<iframe src="{spy}/frame"></iframe></textarea></form></pre><!-- & "quoted"'
        " 'single' \u202egnp.exe\u200b\x85\u2028end"
    )


def hostile_checkpoint(spy: str) -> Checkpoint:
    """An unsure escalation with ``hostile(spy)`` in every text a receipt shows: asks, level
    texts, choice descriptions, model, run and step ids, a step cut from the run data, the
    summary, evidence, route, and the output's keys and values."""
    text = hostile(spy)
    check = parse_check(
        [
            {"ask": "Yes/no " + text, "fail": 0.5},
            {
                "ask": "Choice " + text,
                "one_of": {"states": "S " + text, "hedges": "H " + text},
                "pass": ["states"],
            },
            {
                "ask": "Rubric " + text,
                "levels": ["L0 " + text, "L1 " + text, "L2 " + text],
                "pass": 2,
            },
        ]
    )
    material = Material(
        instructions="I " + text,
        body="B " + text,
        run_data={
            "inputs": {"k " + text: text},
            "steps": {
                "old " + text: {"at": "2026-10-06T08:00:00Z", "output": {"n": "n" * 2000}},
                "recent": {"at": "2026-10-06T09:00:00Z", "output": {"v " + text: 1}},
            },
        },
        submission=Submission(
            {"out " + text: text, "count": 1},
            "summary " + text,
            [{"kind": "file", "ref": "ref " + text}],
            next="next " + text,
            reason="reason " + text,
        ),
        show_route=True,
    )
    evaluator = ScriptedEvaluator(
        {
            "Yes/no " + text: YesNoAnswer(0.62),
            "Choice " + text: ChoiceAnswer("states", 0.95),
            "Rubric " + text: RubricAnswer(1, 0.9),
        },
        model="model " + text,
    )
    outcome = run_check_sync(
        check, material, evaluator, limits=Limits(check_state_bytes=1000), now=DECIDED_AT
    )
    assert outcome.action == "escalate" and outcome.bundle is not None
    assert outcome.bundle.dropped_steps[0].startswith("old ")
    return checkpoint_for(outcome, state=StepState(run_id="run " + text, step_id="step " + text))


def hostile_error_receipt(spy: str) -> Receipt:
    """An error receipt whose evaluator failed with ``hostile(spy)`` as its detail."""
    script = {**SCRIPTS["pass"]}
    ask = next(iter(script))
    script[ask] = Failure("timeout", "detail " + hostile(spy))
    return receipt_for(make_outcome(script), run_id="run-1", step_id="screen")


def receipts() -> dict[str, Receipt]:
    """A receipt of each kind: the verdicts, and an advisory one."""
    kinds = {
        name: receipt_for(make_outcome(script), run_id="run-7", step_id="check_vendor")
        for name, script in SCRIPTS.items()
    }
    kinds["advisory"] = receipt_for(
        make_outcome(SCRIPTS["fail"], advisory=True), run_id="run-7", step_id="check_vendor"
    )
    return kinds


# --- the page as HTML -------------------------------------------------------------------------


class Page(html.parser.HTMLParser):
    """Every start tag with its attributes, the text of the document, and the stylesheet."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.style = ""
        self._in_style = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data
        else:
            self.text.append(data)

    def all_text(self) -> str:
        return "".join(self.text)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


ALLOWED_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "main", "section", "h1", "h2",
    "h3", "p", "span", "ol", "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "pre",
    "form", "input", "label", "textarea", "button", "a", "details", "summary",
}  # fmt: skip


def policy(page: Page) -> str:
    (meta,) = [a for a in page.named("meta") if a.get("http-equiv") == "Content-Security-Policy"]
    content = meta["content"]
    assert content is not None
    return content


def test_hostile_texts_in_every_field_are_text_and_hidden_characters_show() -> None:
    spy = "http://127.0.0.1:9"
    checkpoint = hostile_checkpoint(spy)
    text = receipt_html(
        checkpoint.receipt, action=ACTION, token="t0ken", reference=checkpoint.reference
    )
    page = Page(text)
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS
    for tag, attrs in page.tags:
        # Nothing in the page names an address but the form's action (and a link within the
        # page, to the decision); no handler attribute.
        if tag == "a":
            assert attrs == {"href": "#decide"}
            continue
        assert not {"src", "href", "srcset", "onerror", "style"} & set(attrs), tag
        if "action" in attrs:
            assert attrs["action"] == ACTION
    assert "url(" not in page.style and "@import" not in page.style
    shown = page.all_text()
    # Each field's hostile text is there as text, hidden characters written as render_text
    # writes them; the line separators are whitespace, shown as a space.
    as_shown = " ".join(shown_words(hostile(spy)))
    assert "\\u202egnp.exe\\u200b end" in as_shown
    for label in (
        "Yes/no", "Choice", "Rubric", "L1", "L2", "model", "run", "step", "old", "summary",
        "ref", "next", "reason",
    ):  # fmt: skip
        assert f"{label} {as_shown}" in shown, label
    # The output in its block: JSON text with the escapes, keys and values.
    assert '"out <script>fetch(\\"http://127.0.0.1:9/script\\")' in shown
    assert "\u202e" not in shown and "\u200b" not in text and "\u202e" not in text


def test_a_hostile_error_detail_is_text() -> None:
    receipt = hostile_error_receipt("http://127.0.0.1:9")
    page = Page(receipt_html(receipt))
    assert f"detail {' '.join(shown_words(hostile('http://127.0.0.1:9')))}" in page.all_text()
    assert {tag for tag, _ in page.tags} <= ALLOWED_TAGS - {"form", "input", "textarea"}


def test_the_policy_forbids_script_and_fetching_and_posts_only_to_the_action() -> None:
    receipt = receipts()["unsure"]
    page = Page(receipt_html(receipt, action=ACTION, token="t", reference="r"))
    directives = dict(part.strip().split(" ", 1) for part in policy(page).split(";"))
    assert directives["default-src"] == "'none'"  # no script, image, font, frame, connection
    assert directives["base-uri"] == "'none'"
    assert directives["form-action"] == ACTION
    # The one stylesheet is allowed by its hash, so no other style runs (nor an attribute).
    digest = directives["style-src"].strip("'").removeprefix("sha256-")
    assert base64.b64decode(digest) == hashlib.sha256(page.style.encode()).digest()
    without = Page(receipt_html(receipt))
    assert "form-action 'none'" in policy(without) and not without.named("form")


def test_the_form_has_the_four_decisions_with_labels_and_carries_no_secret() -> None:
    checkpoint = hostile_checkpoint("http://127.0.0.1:9")
    page = Page(receipt_html(checkpoint.receipt, action=ACTION, token="t0ken", reference="ref-1"))
    forms = page.named("form")
    assert [f["method"] for f in forms] == ["post"] * 4
    hidden = [a for a in page.named("input") if a.get("type") == "hidden"]
    choices = [a["value"] for a in hidden if a["name"] == "decision"]
    assert choices == ["returned", "completed", "own", "failed"]
    assert {a["name"] for a in hidden} == {"checkpoint", "token", "decision"}
    assert {a["value"] for a in hidden if a["name"] == "checkpoint"} == {"ref-1"}
    # Every control has a label; notes are required where a decision needs one.
    ids = {a["for"] for a in page.named("label")}
    controls = [
        a for a in page.named("textarea") + page.named("input") if a.get("type") != "hidden"
    ]
    assert all(a["id"] in ids for a in controls)
    required = [a["id"] for a in page.named("textarea") if "required" in a]
    assert required == ["returned-note", "failed-note"]
    # Landmarks and headings.
    assert page.named("main") and page.named("header") and len(page.named("h1")) == 1
    assert len(page.named("h2")) >= 4


def test_each_kind_of_receipt_is_a_page_and_a_form_only_where_someone_decides() -> None:
    for name, receipt in receipts().items():
        page = Page(receipt_html(receipt))
        assert page.named("h1"), name
        title = page.all_text()
        assert f"Check {receipt.verdict.verdict.upper()}" in title
        if name != "unsure":
            with pytest.raises(ValueError, match="waits on a person"):
                receipt_html(receipt, action=ACTION, token="t", reference="r")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"action": ACTION}, "all of action, token and reference"),
        ({"action": "/relative", "token": "t", "reference": "r"}, "absolute http or https URL"),
        ({"action": ACTION + "?x=1", "token": "t", "reference": "r"}, "no query"),
        ({"action": "http://a/'; script-src *", "token": "t", "reference": "r"}, "http or https"),
        ({"action": "javascript:alert(1)", "token": "t", "reference": "r"}, "http or https"),
        ({"action": ACTION, "token": " ", "reference": "r"}, "token must be a non-blank"),
        ({"action": ACTION, "token": "t", "reference": 7}, "reference must be a non-blank"),
    ],
    ids=["partial", "relative", "query", "policy-break", "javascript", "blank-token", "int-ref"],
)
def test_a_bad_form_argument_is_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        receipt_html(receipts()["unsure"], **options)


def test_receipt_html_takes_a_receipt() -> None:
    with pytest.raises(TypeError, match="takes a Receipt"):
        receipt_html(receipts()["unsure"].to_json())  # type: ignore[arg-type]


def test_the_own_output_fields_read_back_as_the_candidate() -> None:
    # Posting the own-output form as the page fills it completes with the candidate's output,
    # hidden characters and all: the escapes in the text are JSON's.
    checkpoint = hostile_checkpoint("http://127.0.0.1:9")
    page = Page(receipt_html(checkpoint.receipt, action=ACTION, token="t", reference="r"))
    fields: list[tuple[str, str]] = [("checkpoint", "r"), ("token", "t"), ("decision", "own")]
    own = [a for a in page.named("textarea") if str(a["id"]).startswith("own-f")]
    values = _textareas(receipt_html(checkpoint.receipt, action=ACTION, token="t", reference="r"))
    fields += [(str(a["name"]), values[str(a["id"])]) for a in own]
    decision = decision_from_form(fields, by="ana", at=DECIDED_AT, reference="r", token="t")
    assert type(decision) is Completed
    assert decision.output == checkpoint.candidate.output


class _Areas(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.values: dict[str, str] = {}
        self._at: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "textarea":
            self._at = str(dict(attrs)["id"])
            self.values[self._at] = ""

    def handle_endtag(self, tag: str) -> None:
        self._at = None

    def handle_data(self, data: str) -> None:
        if self._at is not None:
            self.values[self._at] += data


def _textareas(text: str) -> dict[str, str]:
    parsed = _Areas()
    parsed.feed(text)
    return parsed.values


# --- in a real browser ------------------------------------------------------------------------


class Spy(ThreadingHTTPServer):
    """A server on loopback that records every request it gets."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        spy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                spy.seen.append(self.path)
                self.send_response(204)
                self.end_headers()

            do_POST = do_GET

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@contextlib.contextmanager
def served(server: ThreadingHTTPServer) -> Iterator[Any]:
    """``server`` answering on a thread of its own until the block ends."""
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def spy() -> Iterator[Spy]:
    with served(Spy()) as server:
        yield server


def example_server() -> ModuleType:
    spec = importlib.util.spec_from_file_location("review_queue_serve", EXAMPLE / "serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def queue(tmp_path: Path) -> Iterator[Any]:
    folder = tmp_path / "checkpoints"
    shutil.copytree(EXAMPLE / "checkpoints", folder)
    queue = example_server().ReviewQueue(
        folder, reviewer="ana@example.com", clock=lambda: DECIDED_AT
    )
    with served(queue) as server:
        yield server


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    chromium = need_chromium()
    driver = Browser(chromium, tmp_path / "profile")
    try:
        yield driver
    finally:
        driver.close()


class Tab:
    """One page in the browser, watched: every request it makes, every script parsed."""

    def __init__(self, browser: Browser, width: int, height: int = 900) -> None:
        self.browser = browser
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        self.session: str = browser.send("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network", "Debugger", "DOM"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=width < 600,
        )

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.send(method, self.session, **params)

    def loaded(self) -> None:
        self.browser.wait(
            lambda m: (
                m.get("method") == "Page.loadEventFired" and m.get("sessionId") == self.session
            )
        )

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self.loaded()

    def events(self, method: str) -> list[dict[str, Any]]:
        return [
            e["params"]
            for e in self.browser.events
            if e.get("method") == method and e.get("sessionId") == self.session
        ]

    def requested(self) -> list[str]:
        return [e["request"]["url"] for e in self.events("Network.requestWillBeSent")]

    def scripts(self) -> list[str]:
        return [e.get("url", "") for e in self.events("Debugger.scriptParsed")]

    def node(self, selector: str) -> int:
        root = self.send("DOM.getDocument")["root"]["nodeId"]
        found: int = self.send("DOM.querySelector", nodeId=root, selector=selector)["nodeId"]
        assert found, selector
        return found

    def html(self) -> str:
        root = self.send("DOM.getDocument")["root"]["nodeId"]
        text: str = self.send("DOM.getOuterHTML", nodeId=root)["outerHTML"]
        return text

    def type_into(self, selector: str, text: str) -> None:
        self.send("DOM.focus", nodeId=self.node(selector))
        self.send("Input.insertText", text=text)

    def press_enter_on(self, selector: str) -> None:
        # The keyboard, as a person without a mouse submits: no script of the page's or ours.
        self.send("DOM.focus", nodeId=self.node(selector))
        for kind in ("keyDown", "keyUp"):
            self.send(
                "Input.dispatchKeyEvent",
                type=kind,
                key="Enter",
                code="Enter",
                windowsVirtualKeyCode=13,
                nativeVirtualKeyCode=13,
                **({"text": "\r"} if kind == "keyDown" else {}),
            )

    def width(self) -> tuple[int, int]:
        """The page's content width and the viewport's, in CSS pixels."""
        metrics = self.send("Page.getLayoutMetrics")
        return (
            int(metrics["cssContentSize"]["width"]),
            int(metrics["cssLayoutViewport"]["clientWidth"]),
        )

    def screenshot(self) -> bytes:
        shot = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        return base64.b64decode(shot["data"])


def test_each_kind_of_receipt_opens_in_chromium_at_both_widths(
    browser: Browser, tmp_path: Path
) -> None:
    for name, receipt in receipts().items():
        path = tmp_path / f"{name}.html"
        path.write_text(receipt_html(receipt), encoding="utf-8")
        for width in (390, 1280):
            tab = Tab(browser, width)
            tab.open(path.as_uri())
            content, viewport = tab.width()
            assert content <= viewport, (name, width, content)  # nothing wider than the screen
            assert width - 20 <= png_size(tab.screenshot())[0] <= width  # less a scroll bar
            assert f"Check {receipt.verdict.verdict.upper()}" in tab.html()
            assert tab.scripts() == [], name
            assert tab.requested() == [path.as_uri()], name
    assert complaints(browser.events) == []


def test_a_hostile_page_runs_nothing_and_fetches_nothing(
    browser: Browser, spy: Spy, tmp_path: Path
) -> None:
    checkpoint = hostile_checkpoint(spy.url)
    pages = {
        "unsure": receipt_html(
            checkpoint.receipt, action=ACTION, token="t", reference=checkpoint.reference
        ),
        "error": receipt_html(hostile_error_receipt(spy.url)),
    }
    for name, text in pages.items():
        path = tmp_path / f"{name}.html"
        path.write_text(text, encoding="utf-8")
        for width in (390, 1280):
            tab = Tab(browser, width)
            tab.open(path.as_uri())
            shown = tab.html()
            assert "&lt;script&gt;fetch(" in shown and "<script" not in shown.lower()
            assert tab.scripts() == []
            assert tab.requested() == [path.as_uri()]
            content, viewport = tab.width()
            assert content <= viewport, (name, width)
    assert spy.seen == []
    assert complaints(browser.events) == []


def test_the_watch_sees_a_page_that_fetches_or_runs_a_script(
    browser: Browser, spy: Spy, tmp_path: Path
) -> None:
    # The silence above means something only if the spy hears a page that fetches, and the
    # tab sees a script that runs.
    path = tmp_path / "fetches.html"
    path.write_text(
        f'<!DOCTYPE html><img src="{spy.url}/img"><script>document.title = "ran"</script>',
        encoding="utf-8",
    )
    tab = Tab(browser, 390)
    tab.open(path.as_uri())
    assert spy.seen == ["/img"]
    assert len(tab.scripts()) == 1 and f"{spy.url}/img" in tab.requested()


def vendor(queue: Any) -> tuple[str, Checkpoint]:
    """The example queue's vendor screening escalation, and its reference."""
    checkpoints, _ = queue.checkpoints()
    return next((ref, cp) for ref, cp in checkpoints.items() if cp.step_id == "check_vendor")


def test_a_person_returns_it_from_the_form_and_the_decision_is_applied_once(
    browser: Browser, queue: Any
) -> None:
    reference, checkpoint = vendor(queue)
    tab = Tab(browser, 390)
    tab.open(queue.origin + "/")
    assert f"/checkpoints/{reference}" in tab.html()
    tab.open(f"{queue.origin}/checkpoints/{reference}")
    assert tab.scripts() == []
    tab.type_into("#returned-note", "Attach the EU list report too.\nThe OFAC one is there.")
    tab.press_enter_on("#returned-title ~ button")
    tab.loaded()
    assert "Recorded: returned by ana@example.com" in tab.html()
    # What arrived is the decision typed, applied to the checkpoint with the library's calls.
    written = queue.store.decided(reference)
    expected = Returned(
        note="Attach the EU list report too.\nThe OFAC one is there.",
        by="ana@example.com",
        at=DECIDED_AT,
    )
    assert written.decision == expected
    assert written.state == checkpoint.decide(expected)
    audit = (queue.folder / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(audit) == 1 and json.loads(audit[0])["decision"] == expected.to_json()
    # A second post for the same checkpoint (a double click, a second reviewer's open page)
    # is refused, nothing changes, and the queue no longer lists it.
    fields = {
        "checkpoint": reference,
        "token": queue.token(reference),
        "decision": "failed",
        "note": "Too late.",
    }
    again = urllib.request.Request(
        f"{queue.origin}/checkpoints/{reference}/decision",
        data=urllib.parse.urlencode(fields).encode(),
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(again, timeout=10)
    assert refused.value.code == 409
    assert queue.store.decided(reference) == written
    assert len((queue.folder / "audit.jsonl").read_text(encoding="utf-8").splitlines()) == 1
    tab.open(queue.origin + "/")
    assert f"/checkpoints/{reference}" not in tab.html()
    assert complaints(browser.events) == []


def test_a_person_completes_with_their_own_output_from_the_form(
    browser: Browser, queue: Any
) -> None:
    reference, checkpoint = vendor(queue)
    tab = Tab(browser, 1280)
    tab.open(f"{queue.origin}/checkpoints/{reference}")
    # Edit the "cleared" field: select its text and type a new value.
    field = tab.node('textarea[name="output.\\"cleared\\""]')
    tab.send("DOM.focus", nodeId=field)
    tab.send(
        "Input.dispatchKeyEvent",
        type="keyDown",
        key="a",
        code="KeyA",
        modifiers=2,
        commands=["selectAll"],
    )
    tab.send("Input.dispatchKeyEvent", type="keyUp", key="a", code="KeyA", modifiers=2)
    tab.send("Input.insertText", text="false")
    tab.type_into("#own-note", "The report shows an EU match.")
    tab.press_enter_on("#own-title ~ button")
    tab.loaded()
    assert "Recorded: completed" in tab.html(), tab.html()
    decision = queue.store.decided(reference).decision.to_json()
    assert decision["kind"] == "completed" and decision["note"] == "The report shows an EU match."
    assert decision["output"] == {**checkpoint.candidate.output, "cleared": False}
    assert decision["summary"] == checkpoint.candidate.summary
    assert decision["evidence"] == checkpoint.candidate.to_json()["evidence"]


def test_a_note_left_empty_is_refused_by_the_browser_and_nothing_is_posted(
    browser: Browser, queue: Any
) -> None:
    checkpoints, _ = queue.checkpoints()
    reference = next(iter(checkpoints))
    tab = Tab(browser, 390)
    tab.open(f"{queue.origin}/checkpoints/{reference}")
    tab.press_enter_on("#failed-title ~ button")
    tab.open(queue.origin + "/")  # the next load is this one: the form did not post
    assert not queue.is_decided(reference)
    assert [r for r in tab.requested() if r.endswith("/decision")] == []


def test_a_cross_site_post_is_refused(browser: Browser, queue: Any, tmp_path: Path) -> None:
    # Another site's page posting to the queue: it cannot know the token, and its origin
    # is not the queue's.
    checkpoints, _ = queue.checkpoints()
    reference = next(iter(checkpoints))
    evil = tmp_path / "evil.html"
    evil.write_text(
        f'<!DOCTYPE html><form method="post" action="{queue.origin}/checkpoints/{reference}'
        f'/decision"><input type="hidden" name="checkpoint" value="{reference}">'
        '<input type="hidden" name="token" value="guess"><input type="hidden" name="decision"'
        ' value="completed"><button id="go">go</button></form>',
        encoding="utf-8",
    )
    tab = Tab(browser, 390)
    tab.open(evil.as_uri())
    tab.press_enter_on("#go")
    tab.loaded()
    assert "Forbidden" in tab.html()
    assert not queue.is_decided(reference)


# --- the example queue, by HTTP ---------------------------------------------------------------


def request(
    queue: Any,
    path: str,
    *,
    data: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, str]:
    request = urllib.request.Request(queue.origin + path, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def form_body(queue: Any, reference: str, **fields: str) -> bytes:
    return urllib.parse.urlencode(
        {"checkpoint": reference, "token": queue.token(reference), **fields}
    ).encode()


def test_the_queue_refuses_what_is_not_its_own_form(queue: Any) -> None:
    reference, _ = vendor(queue)
    path = f"/checkpoints/{reference}/decision"
    good = form_body(queue, reference, decision="completed")
    cases = [
        ({"Origin": "http://evil.example"}, good, 403),
        ({"Host": "evil.example"}, good, 421),
        ({"Content-Type": "text/plain"}, good, 415),
        ({}, form_body(queue, reference, decision="returned", note=" "), 400),
        ({}, form_body(queue, reference, decision="completed", token="x"), 403),
        ({}, b"\xff\xfe=1", 400),
    ]
    for headers, body, status in cases:
        got = request(queue, path, data=body, headers=headers)
        assert got[0] == status, (headers, status, got)
    # A post too long is refused before a byte of it is read.
    connection = http.client.HTTPConnection("127.0.0.1", queue.server_address[1], timeout=10)
    connection.putrequest("POST", path)
    connection.putheader("Content-Type", "application/x-www-form-urlencoded")
    connection.putheader("Content-Length", str(2 << 20))
    connection.endheaders()
    assert connection.getresponse().status == 413
    connection.close()
    other = next(ref for ref in queue.checkpoints()[0] if ref != reference)
    assert request(queue, path, data=form_body(queue, other, decision="completed"))[0] == 403
    assert not queue.is_decided(reference)
    assert not (queue.folder / "audit.jsonl").exists()
    assert request(queue, "/checkpoints/" + "0" * 32)[0] == 404


def test_two_posts_at_once_apply_one_decision(queue: Any) -> None:
    reference, checkpoint = vendor(queue)
    path = f"/checkpoints/{reference}/decision"
    statuses: list[int] = []
    posts = [
        threading.Thread(
            target=lambda note=note: statuses.append(
                request(
                    queue, path, data=form_body(queue, reference, decision="failed", note=note)
                )[0]
            )
        )
        for note in ("one", "two", "three", "four")
    ]
    for thread in posts:
        thread.start()
    for thread in posts:
        thread.join()
    assert sorted(statuses) == [200, 409, 409, 409]
    written = queue.store.decided(reference)
    assert written.state == checkpoint.decide(written.decision)
    assert len((queue.folder / "audit.jsonl").read_text(encoding="utf-8").splitlines()) == 1
    assert request(queue, f"/checkpoints/{reference}")[0] == 410


class SlowRecorder:
    """A recorder that takes its time, so that two servers' posts overlap between a record
    and its decision."""

    def __init__(self, inner: Any, seconds: float) -> None:
        self.inner, self.seconds = inner, seconds

    def record(self, record: Any) -> None:
        time.sleep(self.seconds)
        self.inner.record(record)


def test_one_reviewer_on_two_servers_at_once_leaves_one_decision_and_one_record(
    tmp_path: Path,
) -> None:
    # Two replicas of the queue share the store and the trail; one person has the escalation
    # open on both and completes it on each at once. A claim renewed by the same name would
    # let both write a record before one decision won: the queue's claim is exclusive.
    folder = tmp_path / "checkpoints"
    shutil.copytree(EXAMPLE / "checkpoints", folder)
    module = example_server()
    replicas = [
        module.ReviewQueue(folder, reviewer="ana@example.com", clock=lambda: DECIDED_AT)
        for _ in range(2)
    ]
    for replica in replicas:
        replica.audit = SlowRecorder(replica.audit, 0.5)
    with served(replicas[0]) as one, served(replicas[1]) as two:
        reference, checkpoint = vendor(one)
        statuses: list[int] = []
        start = threading.Barrier(2)

        def post(server: Any, note: str) -> None:
            body = form_body(server, reference, decision="failed", note=note)
            start.wait()
            statuses.append(request(server, f"/checkpoints/{reference}/decision", data=body)[0])

        posts = [
            threading.Thread(target=post, args=(server, note))
            for server, note in ((one, "from one"), (two, "from two"))
        ]
        for thread in posts:
            thread.start()
        for thread in posts:
            thread.join()
        assert sorted(statuses) == [200, 409]
        written = one.store.decided(reference)
        assert written.state == checkpoint.decide(written.decision)
        lines = (folder / "audit.jsonl").read_text(encoding="utf-8").splitlines()
        assert [json.loads(line)["decision"]["note"] for line in lines] == [written.decision.note]


def test_the_queue_names_a_file_that_is_not_a_checkpoint_and_serves_the_rest(queue: Any) -> None:
    (queue.folder / "broken.json").write_text('{"checkpoint": 2}', encoding="utf-8")
    status, page = request(queue, "/")
    assert status == 200 and "Waiting on you (2)" in page
    assert "broken.json: a checkpoint" in page


def test_a_hostile_candidate_completed_as_it_stands_arrives_as_it_was(
    browser: Browser, queue: Any, spy: Spy
) -> None:
    # Posted through the browser unchanged, the own-output form gives back the candidate's
    # output exactly: hidden characters, quotes, markup and line breaks in keys and values.
    checkpoint = hostile_checkpoint(spy.url)
    (queue.folder / "hostile.json").write_text(
        json.dumps(checkpoint.to_json(), ensure_ascii=False), encoding="utf-8"
    )
    reference = checkpoint.reference
    tab = Tab(browser, 390)
    tab.open(queue.origin + "/")
    assert tab.scripts() == []
    tab.open(f"{queue.origin}/checkpoints/{reference}")
    assert tab.scripts() == [] and tab.requested()[-1].endswith(reference)
    tab.press_enter_on("#own-title ~ button")
    tab.loaded()
    assert "Recorded: completed" in tab.html(), tab.html()
    written = {"decision": queue.store.decided(reference).decision.to_json()}
    assert written["decision"]["output"] == checkpoint.candidate.output
    assert written["decision"]["evidence"] == checkpoint.candidate.to_json()["evidence"]
    # The summary does not print as itself: it is not filled in, and the page says so.
    assert "summary" not in written["decision"]
    assert "summary holds characters that do not print" in tab_text(queue, reference)
    assert spy.seen == []
    assert complaints(browser.events) == []


def tab_text(queue: Any, reference: str) -> str:
    """The receipt's page as the example queue serves it, its checkpoint decided or not."""
    checkpoint = queue.checkpoints()[0][reference]
    return receipt_html(
        checkpoint.receipt,
        action=f"{queue.origin}/checkpoints/{reference}/decision",
        token="t",
        reference=reference,
    )


# --- a page that decides cannot be framed (issue 34, finding 1) -------------------------------


def test_receipt_headers_forbid_framing_and_carry_the_page_s_own_policy() -> None:
    from checkprofile.human import receipt_headers

    checkpoint = hostile_checkpoint("http://127.0.0.1:9")
    page = Page(
        receipt_html(checkpoint.receipt, action=ACTION, token="t", reference=checkpoint.reference)
    )
    headers = receipt_headers(action=ACTION)
    assert headers["Content-Security-Policy"] == policy(page) + "; frame-ancestors 'none'"
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Cache-Control"] == "no-store"
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    without = receipt_headers()
    assert "form-action 'none'" in without["Content-Security-Policy"]
    assert without["Content-Security-Policy"].endswith("frame-ancestors 'none'")
    for bad in ("http://x/a?q=1", "javascript:x", "http://x/a; script-src *", 7):
        with pytest.raises(ValueError, match="action must be"):
            receipt_headers(action=bad)  # type: ignore[arg-type]


def test_the_queue_serves_every_page_with_headers_that_forbid_framing(queue: Any) -> None:
    reference, _ = vendor(queue)
    for path in ("/", f"/checkpoints/{reference}", "/nothing-here"):
        try:
            reply = urllib.request.urlopen(queue.origin + path, timeout=10)
        except urllib.error.HTTPError as error:
            reply = error
        with reply:
            assert reply.headers["X-Frame-Options"] == "DENY", path
            assert "frame-ancestors 'none'" in reply.headers["Content-Security-Policy"], path


def _click_through_a_frame(browser: Browser, queue: Any, tmp_path: Path, name: str) -> str:
    """Another site's page framing the vendor escalation's page nearly transparent over a
    decoy, and a person clicking the decoy exactly where "Complete with the candidate" lies
    under it. The escalation's reference."""
    reference, _ = vendor(queue)
    url = f"{queue.origin}/checkpoints/{reference}"
    width, height = 1280, 8000  # the whole page in the viewport: no scrolling to aim
    alone = Tab(browser, width, height)
    alone.open(url)
    quad = alone.send("DOM.getBoxModel", nodeId=alone.node("#completed-title ~ button"))["model"][
        "content"
    ]
    x, y = (quad[0] + quad[2]) / 2, (quad[1] + quad[5]) / 2
    evil = tmp_path / f"{name}.html"
    evil.write_text(
        '<!DOCTYPE html><html><body style="margin:0"><button style="position:absolute;'
        f'left:{x - 40}px;top:{y - 10}px">Win a prize</button><iframe src="{url}"'
        ' style="position:absolute;left:0;top:0;border:0;opacity:0.01;'
        f'width:{width}px;height:{height}px"></iframe></body></html>',
        encoding="utf-8",
    )
    tab = Tab(browser, width, height)
    tab.open(evil.as_uri())
    # A frame of another origin runs in its own process: where a click lands in it reaches the
    # browser a moment after the load. A person clicks later than that too.
    time.sleep(1)
    for kind in ("mousePressed", "mouseReleased"):
        tab.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
    return reference


def _decided_within(queue: Any, reference: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if queue.is_decided(reference):
            return True
        time.sleep(0.1)
    return bool(queue.is_decided(reference))


def test_a_page_framed_by_another_site_is_not_shown_and_cannot_be_clicked_through(
    browser: Browser, queue: Any, tmp_path: Path
) -> None:
    reference = _click_through_a_frame(browser, queue, tmp_path, "evil")
    assert not _decided_within(queue, reference, 3)
    assert not (queue.folder / "audit.jsonl").exists()
    refused = [
        event
        for event in browser.events
        if "frame-ancestors" in json.dumps(event) or "X-Frame-Options" in json.dumps(event)
    ]
    assert refused, "Chromium did not report the refused frame"


def test_without_the_headers_the_same_clicks_decide_so_the_test_above_can_fail(
    browser: Browser, tmp_path: Path
) -> None:
    # The control: the same queue serving the page without the library's headers (as it did
    # before issue 34) is clicked through, and the step completed in the reviewer's name.
    folder = tmp_path / "checkpoints"
    shutil.copytree(EXAMPLE / "checkpoints", folder)
    module = example_server()
    queue = module.ReviewQueue(folder, reviewer="ana@example.com", clock=lambda: DECIDED_AT)

    class Unprotected(queue.RequestHandlerClass):  # type: ignore[misc,name-defined]
        def receipt_headers(self, action: str) -> dict[str, str]:
            return {"Content-Type": "text/html; charset=utf-8"}

    queue.RequestHandlerClass = Unprotected
    with served(queue):
        reference = _click_through_a_frame(browser, queue, tmp_path, "evil-control")
        assert _decided_within(queue, reference, 10)
    decided = queue.store.decided(reference)
    assert decided is not None and decided.decision.kind == "completed"


# --- what a person sees is what they send back (issue 34, finding 2) --------------------------

# Every character Python calls printable that renders as nothing (Default_Ignorable_Code_Point).
INVISIBLE_PRINTABLE = "".join(
    chr(code)
    for code in range(0x110000)
    if not 0xD800 <= code <= 0xDFFF
    and chr(code).isprintable()
    and __import__("checkprofile._shown", fromlist=["IGNORABLE"]).IGNORABLE.match(chr(code))
)


def checkpoint_of(submission: Submission, *, route: bool = False) -> Checkpoint:
    """An unsure escalation of ``submission`` on a one-question check."""
    check = parse_check([{"ask": "Is it right?", "fail": 0.5}])
    material = Material(
        instructions="Do it.", body="", run_data={}, submission=submission, show_route=route
    )
    evaluator = ScriptedEvaluator({"Is it right?": YesNoAnswer(0.62)}, model="m")
    outcome = run_check_sync(check, material, evaluator, now=DECIDED_AT)
    assert outcome.action == "escalate"
    return checkpoint_for(outcome, state=StepState(run_id="run-1", step_id="step-1"))


def form_values(page: Page, form_id: str) -> dict[str, str]:
    """The values a browser posts from the form titled ``form_id`` unchanged: each field's
    prefilled value or text."""
    values: dict[str, str] = {}
    inside = False
    for tag, attrs in page.tags:
        if tag == "h3":
            inside = attrs.get("id") == form_id
        elif inside and tag in ("input", "textarea") and attrs.get("name"):
            values[str(attrs["name"])] = str(attrs.get("value") or "")
    return values


def test_no_prefilled_value_holds_a_character_a_person_cannot_see() -> None:
    assert {"\u3164", "\ufe0f", "\u034f", "\U000e0100"} <= set(INVISIBLE_PRINTABLE)
    hidden = "a" + INVISIBLE_PRINTABLE + "b"
    submission = Submission(
        {"total" + "\u3164": hidden, "nested": {"k\ufe0f": [hidden]}, "plain": "ok"},
        "summary \u034f",
        [{"kind": "file", "ref": "report\U000e0100.pdf"}],
        next="next\u3164",
        reason="reason\ufe0f",
    )
    checkpoint = checkpoint_of(submission, route=True)
    text = receipt_html(
        checkpoint.receipt, action=ACTION, token="t", reference=checkpoint.reference
    )
    page = Page(text)
    # Nowhere on the page, text or field, is one of them raw.
    assert not set(INVISIBLE_PRINTABLE) & set(text)
    # Each output field and the evidence are JSON text that reads back as the candidate's
    # value: what the person sees (escapes) is what arrives.
    textareas = _textarea_texts(text)
    output = {
        json.loads(name.removeprefix("output.")): json.loads(value)
        for name, value in textareas.items()
        if name.startswith("output.")
    }
    assert output == submission.output
    assert json.loads(textareas["evidence"]) == checkpoint.candidate.to_json()["evidence"]
    assert "\\u3164" in textareas['output."total\\u3164"']
    # A plain text field cannot hold an escape that reads back as the same text: it is left
    # empty, and says why.
    fields = form_values(page, "own-title")
    for name in ("summary", "next", "reason"):
        assert fields[name] == "", name
    assert text.count("holds characters that do not print") == 3


def _textarea_texts(text: str) -> dict[str, str]:
    class Areas(html.parser.HTMLParser):
        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.found: dict[str, str] = {}
            self.name: str | None = None

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.name = dict(attrs).get("name") if tag == "textarea" else None
            if self.name is not None:
                self.found[self.name] = ""

        def handle_endtag(self, tag: str) -> None:
            self.name = None

        def handle_data(self, data: str) -> None:
            if self.name is not None:
                self.found[self.name] += data

    areas = Areas()
    areas.feed(text)
    # HTML drops one line break right after <textarea>; the page writes none there.
    return areas.found


def test_a_candidate_with_invisible_characters_posted_unchanged_arrives_as_shown() -> None:
    hidden = "x\u3164\ufe0f\u034f\U000e0100y"
    submission = Submission({"v": hidden}, "fine", [], next="a", reason="r")
    checkpoint = checkpoint_of(submission, route=True)
    text = receipt_html(
        checkpoint.receipt, action=ACTION, token="t", reference=checkpoint.reference
    )
    posted = {**form_values(Page(text), "own-title"), **_textarea_texts(text)}
    posted = {name: value for name, value in posted.items() if name not in ("note",)}
    decision = decision_from_form(
        list(posted.items()), by="ana", at=DECIDED_AT, reference=checkpoint.reference, token="t"
    )
    assert isinstance(decision, Completed)
    assert decision.output == {"v": hidden}  # the escapes the person saw, read back
    assert (decision.summary, decision.next, decision.reason) == ("fine", "a", "r")


# --- the example queue records before it decides (issue 34, findings 3 and 4) -----------------


def _still_waiting(queue: Any, reference: str) -> None:
    assert not queue.is_decided(reference)
    assert request(queue, f"/checkpoints/{reference}")[0] == 200
    assert f"/checkpoints/{reference}" in request(queue, "/")[1]


def test_a_decision_the_trail_would_refuse_leaves_the_escalation_waiting(queue: Any) -> None:
    reference, _ = vendor(queue)
    path = f"/checkpoints/{reference}/decision"
    for fields in (
        {"decision": "failed", "note": "bad\x00"},
        {"decision": "own", 'output."cleared"': '"\\ud800"'},
    ):
        status, page = request(queue, path, data=form_body(queue, reference, **fields))
        assert status == 400 and "recordable before it is applied" in page, page
        _still_waiting(queue, reference)
        assert not (queue.folder / "audit.jsonl").exists()
    assert request(queue, path, data=form_body(queue, reference, decision="completed"))[0] == 200


def test_a_record_that_cannot_be_written_leaves_the_escalation_waiting(queue: Any) -> None:
    reference, _ = vendor(queue)
    path = f"/checkpoints/{reference}/decision"
    trail = queue.audit

    class Broken:
        def record(self, record: Any) -> None:
            raise OSError(28, "No space left on device")

    queue.audit = Broken()
    status, page = request(queue, path, data=form_body(queue, reference, decision="completed"))
    assert status == 503 and "nothing was decided" in page
    _still_waiting(queue, reference)
    queue.audit = trail
    assert request(queue, path, data=form_body(queue, reference, decision="completed"))[0] == 200
    audit = (queue.folder / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(audit) == 1 and queue.is_decided(reference)


# --- the page a reviewer reads (issue 40) -----------------------------------------------------


def test_distances_and_thresholds_read_as_sentences_in_the_page_s_text(
    browser: Browser, queue: Any
) -> None:
    reference, checkpoint = vendor(queue)
    tab = Tab(browser, 390)
    tab.open(f"{queue.origin}/checkpoints/{reference}")
    text = tab.send("Runtime.evaluate", expression="document.body.innerText")["result"]["value"]
    # What a person reads, not only the markup: each question said in full.
    assert "from passing" not in text.replace("furthest from passing", "")
    assert "short of passing (0 passes, 1 is as far as an answer can be)" in text
    for record in checkpoint.verdict.questions:
        if record.kind == "yes_no" and record.answer is not None:
            assert f"The model gave yes a probability of {record.answer}" in text
    assert "It passes when the probability of yes is" in text


def test_the_decision_is_one_link_away_at_the_top_on_a_phone(browser: Browser, queue: Any) -> None:
    reference, _ = vendor(queue)
    tab = Tab(browser, 390, 844)
    tab.open(f"{queue.origin}/checkpoints/{reference}")
    link = tab.send("DOM.getBoxModel", nodeId=tab.node('a[href="#decide"]'))["model"]["content"]
    assert link[5] < 844  # on the first screen, without scrolling
    forms = tab.send("DOM.getBoxModel", nodeId=tab.node("#decide"))["model"]["content"]
    assert forms[1] > 844  # the forms themselves are further down
    tab.press_enter_on('a[href="#decide"]')
    time.sleep(0.5)
    top = tab.send("Page.getLayoutMetrics")["cssVisualViewport"]["pageY"]
    assert abs(top - forms[1]) < 60, (top, forms[1])  # the link leads to the decision
    assert tab.scripts() == []


def test_the_page_shows_what_the_evaluator_read_collapsed_within_the_host_s_size() -> None:
    instructions = "Check the per-diem limit: 45 EUR a day.\n" + "More. " * 2000
    submission = Submission({"total_eur": 120}, "Three days.", [])
    check = parse_check([{"ask": "Is the per-diem within the limit?", "fail": 0.5}])
    material = Material(
        instructions=instructions,
        body="The process body.",
        run_data={"inputs": {"trip": "Lyon\u200b"}},
        submission=submission,
    )
    evaluator = ScriptedEvaluator(
        {"Is the per-diem within the limit?": YesNoAnswer(0.6)}, model="m"
    )
    outcome = run_check_sync(check, material, evaluator, now=DECIDED_AT)
    state = StepState(run_id="run-1", step_id="step-1")
    for chars, cut in ((100_000, False), (500, True)):
        checkpoint = checkpoint_for(outcome, state=state, shown_chars=chars)
        assert Checkpoint.from_json(json.loads(json.dumps(checkpoint.to_json()))) == checkpoint
        page = Page(
            receipt_html(
                checkpoint.receipt, action=ACTION, token="t", reference=checkpoint.reference
            )
        )
        text = page.all_text()
        assert "What the evaluator read" in text
        assert "Check the per-diem limit: 45 EUR a day." in text
        assert len(page.named("details")) == 4  # instructions, body, run data, submission
        assert all("open" not in attrs for attrs in page.named("details"))  # collapsed
        assert "Lyon\\u200b" in text  # the run data view, hidden characters escaped
        assert ('"total_eur": 120' in text) is True
        said = f"the first 500 are here, {len(instructions) - 500:,} more were cut"
        assert (said in text) is cut
    none = checkpoint_for(outcome, state=state, shown_chars=0)
    assert none.receipt.material == ()
    assert "What the evaluator read" not in receipt_html(none.receipt)
    for bad in (-1, 1.5, "10", True):
        with pytest.raises(ValueError, match="shown_chars must be a count"):
            receipt_for(outcome, run_id="r", step_id="s", shown_chars=bad)  # type: ignore[arg-type]


def test_form_post_names_the_fields_the_page_has() -> None:
    from checkprofile.human import form_post

    submission = Submission({"total_eur": 120, "lyon\n": [1]}, "s", [], next="a", reason="r")
    checkpoint = checkpoint_of(submission, route=True)
    page = Page(
        receipt_html(checkpoint.receipt, action=ACTION, token="t", reference=checkpoint.reference)
    )
    for choice in ("returned", "completed", "own", "failed"):
        built = form_post(
            choice,
            reference=checkpoint.reference,
            token="t",
            output=submission.output if choice == "own" else None,
        )
        assert {name for name, _ in built} == set(form_values(page, f"{choice}-title"))


def test_an_error_s_page_shows_what_each_attempt_answered() -> None:
    # Issue 40, item 1: "answer no answer, 1 from passing" for every question, though only
    # the first timed out.
    script: dict[str, Any] = {**SCRIPTS["pass"]}
    first = next(iter(script))
    script[first] = Failure("timeout", "no reply in 60 s")
    receipt = receipt_for(make_outcome(script), run_id="run-1", step_id="screen")
    assert receipt.verdict.verdict == "error"
    assert Receipt.from_json(json.loads(json.dumps(receipt.to_json()))) == receipt
    text = Page(receipt_html(receipt)).all_text()
    assert "attempt 1: no answer (timeout: no reply in 60 s); attempt 2: no answer" in text
    others = [q for q in receipt.check if q.ask != first]
    assert text.count("The model answered this question, but the check ended in an error") == len(
        others
    )
    assert "attempt 1: level 2 with confidence" in text or "attempt 1: yes with" in text
