"""The reviewer's page: a receipt as one self-contained HTML page, with the decision form.

The page says what :meth:`~checkprofile.human.Receipt.render_text` says, in the same words
and with every text shown the same way (split at whitespace, every character that does not
print as itself escaped: :func:`~._receipts.shown_words`), then escaped for HTML. It holds
no script and loads nothing: its Content-Security-Policy allows only its own stylesheet (by
hash), and posts only to the host's action URL.

For a receipt that waits on a person the host may add the decision form (``action``,
``token``, ``reference``): four forms that need no script, read back by
:func:`~checkprofile.human.decision_from_form`. The page carries the checkpoint's reference
and the host's token against cross-site posts, nothing else of the host's.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from typing import Any, Final

from ..._shown import escaped_text, is_blank, prints_as_itself, show
from ._form import CHECKPOINT, DECISION, EVIDENCE, NEXT, NOTE, REASON, SUMMARY, TOKEN, output_field
from ._receipts import (
    Receipt,
    candidate_lines,
    cut_lines,
    failure_line,
    heading,
    more_lines,
    output_lines,
    piece_label,
    question_details,
    sections,
    shown_line,
    shown_words,
)
from ._sentences import question_sentences

__all__ = ["receipt_headers", "receipt_html"]

# A page shows this many lines of the candidate's output; the receipt's JSON has the rest.
_MAX_PAGE_LINES: Final = 400

_CSS: Final = """
*, *::before, *::after { box-sizing: border-box; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto;
  max-width: 62rem; padding: 1rem; color: #1d2330; background: #fff;
  overflow-wrap: anywhere; }
h1 { font-size: 1.4rem; margin: .5rem 0; } h2 { font-size: 1.15rem; margin: 2rem 0 .5rem;
  border-bottom: 1px solid #d8dce4; padding-bottom: .25rem; }
h3 { font-size: 1rem; margin: 0 0 .5rem; }
.jump a { font-weight: 700; color: #1f5fbf; }
.now { background: #fff6e0; border-left: 4px solid #c26a00; padding: .5rem .75rem; }
.meta { color: #4a5263; margin: 0; }
ol, ul { padding-left: 1.25rem; } li { margin: .5rem 0; }
.details { list-style: none; padding-left: 0; margin: .25rem 0 0; color: #394150; }
.result { display: inline-block; min-width: 4.5rem; font-weight: 700; }
.pass { color: #1c7a3a; } .fail, .error { color: #b3261e; } .unsure { color: #9a5b00; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: .2rem .75rem .2rem 0; text-align: left; border-bottom: 1px solid #e3e7ee; }
td.n { text-align: right; }
pre { background: #f6f7f9; padding: .75rem; white-space: pre-wrap; font-size: .9rem;
  overflow-wrap: anywhere; }
details { margin: .5rem 0; } summary { cursor: pointer; font-weight: 600; }
form { border: 1px solid #c4cad6; border-radius: 6px; padding: 1rem; margin: 1rem 0; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
.hint { color: #4a5263; font-size: .9rem; margin: .25rem 0; }
textarea, input[type=text] { width: 100%; font: .95rem/1.4 ui-monospace, monospace;
  padding: .4rem; border: 1px solid #8a93a6; border-radius: 4px; }
button { margin-top: .75rem; font: inherit; font-weight: 600; padding: .5rem 1rem;
  border-radius: 4px; border: 1px solid #1f5fbf; background: #1f5fbf; color: #fff; }
button:focus-visible, textarea:focus-visible, input:focus-visible {
  outline: 3px solid #f0a500; outline-offset: 2px; }
"""
_STYLE_HASH: Final = base64.b64encode(hashlib.sha256(_CSS.encode("utf-8")).digest()).decode()

# An action URL the policy can name exactly: http or https, a host, a path, no query, no
# fragment, and nothing that would end a policy's directive (``;``, ``,``, a quote, a space).
_ACTION: Final = re.compile(
    r"https?://[A-Za-z0-9.\-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~!$&*+=:@%/\-]*)?"
)


def _t(text: str) -> str:
    """A receipt's text as the page shows it: as the text shows it, then escaped for HTML."""
    return html.escape(" ".join(shown_words(text)), quote=True)


def _a(text: str) -> str:
    """A value for an attribute, as it is."""
    return html.escape(text, quote=True)


def _json_text(value: Any) -> str:
    """``value`` as indented JSON text for a person to edit: each character that does not
    print as itself (:func:`~checkprofile._shown.prints_as_itself`: a control, or one Python
    calls printable that shows as nothing, such as U+3164 or U+FE0F; only ever inside a
    string) written as a JSON escape, so nothing is hidden and the text still reads back as
    the same value."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    if prints_as_itself(text.replace("\n", "")):
        return text
    out = []
    for char in text:
        if char == "\n" or prints_as_itself(char):
            out.append(char)
        else:
            out.append(json.dumps(char, ensure_ascii=True)[1:-1])
    return "".join(out)


def _question(receipt: Receipt, index: int) -> str:
    record = receipt.verdict.questions[index]
    # In sentences a reviewer reads, and the model's spread where it gave one.
    spread = question_details(receipt, index)[1:-1]
    lines = [*question_sentences(receipt, index), *spread]
    details = "".join(f"<li>{_t(line)}</li>" for line in lines)
    return (
        f'<li><span class="result {record.result}">{record.result}</span> {_t(record.ask)}'
        f'<ul class="details">{details}</ul></li>'
    )


def _body(receipt: Receipt) -> list[str]:
    out: list[str] = []
    for number, (title, indexes, ranked) in enumerate(sections(receipt), start=1):
        tag = "ol" if ranked else "ul"
        items = "".join(_question(receipt, index) for index in indexes)
        out.append(
            f'<section aria-labelledby="q{number}"><h2 id="q{number}">{_t(title)}</h2>'
            f"<{tag}>{items}</{tag}></section>"
        )
    if receipt.failures:
        items = "".join(f"<li>{_t(failure_line(*failure))}</li>" for failure in receipt.failures)
        out.append(
            '<section aria-labelledby="unanswered"><h2 id="unanswered">Not answered by the'
            f" evaluator</h2><ul>{items}</ul></section>"
        )
    rows = "".join(
        f'<tr><th scope="row">{_t(piece_label(piece.name))}</th>'
        f'<td class="n">{piece.bytes:,}</td></tr>'
        for piece in receipt.shown
        if piece.name not in ("dropped_steps", "dropped_fields")
    )
    cut = cut_lines(receipt) or ["nothing was cut"]
    out.append(
        f'<section aria-labelledby="shown"><h2 id="shown">{_t(shown_line(receipt))}</h2>'
        '<table><thead><tr><th scope="col">piece</th><th scope="col">bytes</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        + "".join(f"<p>{_t(line)}</p>" for line in cut)
        + "</section>"
    )
    if receipt.material:
        out.append(_material(receipt))
    lines, more = output_lines(receipt.candidate.output, _MAX_PAGE_LINES)
    output = html.escape("\n".join(lines), quote=True)
    tail = f"<p>{_t(more_lines(more))}</p>" if more else ""
    items = "".join(f"<li>{_t(line)}</li>" for line in candidate_lines(receipt.candidate))
    out.append(
        '<section aria-labelledby="candidate"><h2 id="candidate">What the agent submitted</h2>'
        f'<ul>{items}</ul><h3 id="output">output</h3><pre aria-labelledby="output">{output}</pre>'
        f"{tail}</section>"
    )
    return out


def _material(receipt: Receipt) -> str:
    """What the evaluator was shown, a collapsed section per piece (no script: ``details``),
    each character that does not print as itself escaped, line breaks kept."""
    parts = []
    for piece in receipt.material:
        size = f"{piece.chars:,} characters"
        if piece.cut:
            size += f"; the first {len(piece.text):,} are here, {piece.cut:,} more were cut"
        text = "\n".join(escaped_text(line) for line in piece.text.split("\n"))
        body = f"<pre>{html.escape(text, quote=True)}</pre>" if piece.text else "<p>(empty)</p>"
        parts.append(
            f"<details><summary>{_t(piece_label(piece.name).capitalize())} ({size})</summary>"
            f"{body}</details>"
        )
    return (
        '<section aria-labelledby="material"><h2 id="material">What the evaluator read</h2>'
        '<p class="hint">The texts the model was given with the questions; open one to read'
        f" it.</p>{''.join(parts)}</section>"
    )


def _hidden(token: str, reference: str, choice: str) -> str:
    return (
        f'<input type="hidden" name="{CHECKPOINT}" value="{_a(reference)}">'
        f'<input type="hidden" name="{TOKEN}" value="{_a(token)}">'
        f'<input type="hidden" name="{DECISION}" value="{choice}">'
    )


def _note(choice: str, required: bool, label: str) -> str:
    need = " required" if required else ""
    word = "required" if required else "optional"
    return (
        f'<label for="{choice}-note">{label} ({word})</label>'
        f'<textarea id="{choice}-note" name="{NOTE}" rows="3"{need}></textarea>'
    )


def _form(choice: str, action: str, title: str, inner: str, button: str, hidden: str) -> str:
    return (
        f'<form method="post" action="{_a(action)}" accept-charset="utf-8" autocomplete="off"'
        f' aria-labelledby="{choice}-title"><h3 id="{choice}-title">{title}</h3>{hidden}{inner}'
        f'<button type="submit">{button}</button></form>'
    )


def _text_input(name: str, label: str, value: str | None) -> str:
    # A value is filled in only when it prints as itself: a hidden character in a field a
    # person submits would pass unseen, and an escape in a plain text field would read back
    # as another text (a backslash and letters). Left empty, the field says why.
    printable = value is None or prints_as_itself(value)
    hint = (
        ""
        if printable
        else f'<p class="hint" id="own-{name}-hint">The candidate\'s {label.lower()} holds'
        " characters that do not print (shown escaped above): write your own.</p>"
    )
    described = "" if printable else f' aria-describedby="own-{name}-hint"'
    shown = value if value is not None and printable else ""
    return (
        f'<label for="own-{name}">{label} (optional)</label>{hint}'
        f'<input type="text" id="own-{name}" name="{name}" value="{_a(shown)}"{described}>'
    )


def _rows(text: str) -> int:
    # A field as tall as its text, within reason: the page scrolls, not the field.
    return min(max(text.count("\n") + 1, 2), 16)


def _own(receipt: Receipt) -> str:
    candidate = receipt.candidate
    parts = [
        '<p class="hint">Each field of the output is JSON text (a string in quotes); edit what'
        " you would change. Any character that does not print is written as an escape.</p>"
    ]
    for number, (key, value) in enumerate(candidate.output.items(), start=1):
        text = _json_text(value)
        rows = _rows(text)
        parts.append(
            f'<label for="own-f{number}">output field {_t(key) or "(empty name)"}</label>'
            f'<textarea id="own-f{number}" name="{_a(output_field(key))}" rows="{rows}"'
            f' spellcheck="false">{_a(text)}</textarea>'
        )
    parts.append(_text_input(SUMMARY, "Summary", candidate.summary))
    evidence = candidate.to_json()["evidence"]
    evidence_text = _json_text(evidence) if evidence else ""
    parts.append(
        f'<label for="own-{EVIDENCE}">Evidence (optional): a JSON list of'
        ' {"kind": "file" or "link", "ref"}</label>'
        f'<textarea id="own-{EVIDENCE}" name="{EVIDENCE}" rows="{_rows(evidence_text)}"'
        f' spellcheck="false">{_a(evidence_text)}</textarea>'
    )
    if candidate.next is not None:
        parts.append(_text_input(NEXT, "Next step", candidate.next))
        parts.append(_text_input(REASON, "Reason for the route", candidate.reason))
    return "".join(parts)


def _forms(receipt: Receipt, action: str, token: str, reference: str) -> str:
    def hidden(choice: str) -> str:
        return _hidden(token, reference, choice)

    forms = [
        _form(
            "returned",
            action,
            "Return it to the agent",
            _note("returned", True, "Note for the agent"),
            "Return to the agent",
            hidden("returned"),
        ),
        _form(
            "completed",
            action,
            "Complete the step with the candidate",
            _note("completed", False, "Note"),
            "Complete with the candidate",
            hidden("completed"),
        ),
        _form(
            "own",
            action,
            "Complete the step with your own output",
            _own(receipt) + _note("own", False, "Note"),
            "Complete with this output",
            hidden("own"),
        ),
        _form(
            "failed",
            action,
            "Fail the step",
            _note("failed", True, "Why it fails"),
            "Fail the step",
            hidden("failed"),
        ),
    ]
    return (
        '<section aria-labelledby="decide"><h2 id="decide">Your decision</h2>'
        '<p class="hint">Choose one; it is recorded with your name and the time it'
        f" arrives.</p>{''.join(forms)}</section>"
    )


def _form_args(
    receipt: Receipt, action: str | None, token: str | None, reference: str | None
) -> tuple[str, str, str] | None:
    given = [value is not None for value in (action, token, reference)]
    if not any(given):
        return None
    if not all(given):
        raise ValueError("a decision form needs all of action, token and reference")
    if receipt.action != "escalate" or receipt.verdict.advisory:
        raise ValueError(
            f"a decision form is for a receipt that waits on a person; this one's action is"
            f" {show(receipt.action)}"
        )
    if type(action) is not str or _ACTION.fullmatch(action) is None:
        raise ValueError(
            "action must be an absolute http or https URL with a path and no query (the"
            f" page's policy names it exactly), got {show(action)}"
        )
    for what, value in (("token", token), ("reference", reference)):
        if type(value) is not str or is_blank(value) or len(value) > 1024:
            raise ValueError(f"{what} must be a non-blank string, got {show(value)}")
    assert token is not None and reference is not None
    return action, token, reference


def _policy(action: str | None) -> str:
    """The page's policy: nothing but its own stylesheet, and a post to the host's URL (a
    browser refuses, and reports, anything else)."""
    target = "'none'" if action is None else action
    return (
        f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; base-uri 'none';"
        f" form-action {target}"
    )


def receipt_headers(*, action: str | None = None) -> dict[str, str]:
    """The HTTP headers a host sends with a page :func:`receipt_html` made, for the same
    ``action`` (``None`` for a page without a form).

    A page that decides must never be shown inside another site's page: framed nearly
    transparent over a decoy, two clicks complete a step in the reviewer's name, no secret
    needed. Only a header can forbid that (a policy in a ``<meta>`` element cannot carry
    ``frame-ancestors``), so the page's own policy comes back here as a
    ``Content-Security-Policy`` header with ``frame-ancestors 'none'``, with
    ``X-Frame-Options: DENY`` for browsers that predate it, and the rest a decision page
    needs: its type, ``nosniff``, no caching of a page that holds a token, no referrer
    beyond the host, and a window of its own. Send every one, as given. Raises
    :class:`ValueError` for an ``action`` :func:`receipt_html` would refuse.
    """
    if action is not None and (type(action) is not str or _ACTION.fullmatch(action) is None):
        raise ValueError(
            "action must be the absolute http or https URL given to receipt_html, with a path"
            f" and no query, got {show(action)}"
        )
    return {
        "Content-Type": "text/html; charset=utf-8",
        "Content-Security-Policy": f"{_policy(action)}; frame-ancestors 'none'",
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "Cache-Control": "no-store",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Resource-Policy": "same-origin",
    }


def receipt_html(
    receipt: Receipt,
    *,
    action: str | None = None,
    token: str | None = None,
    reference: str | None = None,
) -> str:
    """``receipt`` as one self-contained HTML page: what the agent submitted, each question
    with its answer, thresholds and distance from passing, what drove the verdict, what the
    evaluator was shown and what was cut, the model that answered.

    For a receipt that waits on a person (action ``escalate``), give ``action`` (the absolute
    URL the decision is posted to), ``token`` (the host's, against cross-site posts) and
    ``reference`` (the checkpoint's, :attr:`~checkprofile.human.Checkpoint.reference`) to add
    the decision form; read the post with :func:`~checkprofile.human.decision_from_form`.
    Serve it with :func:`receipt_headers` (for the same ``action``): they forbid framing.
    Raises :class:`TypeError` for anything but a :class:`~checkprofile.human.Receipt`, and
    :class:`ValueError` for a form on a receipt that waits on nobody, or a bad argument.
    """
    if type(receipt) is not Receipt:
        raise TypeError(f"receipt_html takes a Receipt (see receipt_for), got {show(receipt)}")
    form = _form_args(receipt, action, token, reference)
    title, model, what_now = heading(receipt)
    body = _body(receipt)
    if form is not None:
        body.append(_forms(receipt, *form))
    policy = _policy(form[0] if form is not None else None)
    # On a phone the forms come after the whole output: one link at the top leads to them.
    jump = (
        '<p class="jump"><a href="#decide">Go to your decision</a> (return, complete or fail)</p>'
        if form is not None
        else ""
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_a(policy)}">'
        '<meta name="referrer" content="same-origin">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_t(title)}</title><style>{_CSS}</style></head>\n"
        f'<body><header><h1>{_t(title)}</h1><p class="meta">{_t(model)}</p>'
        f'<p class="now">{_t(what_now)}</p>{jump}</header>\n<main>\n'
        + "\n".join(body)
        + "\n</main></body></html>\n"
    )
