"""What an evaluator was shown, as bytes: a bundle's pieces, their canonical bytes and hash.

A receipt shows these pieces with their sizes, and an audit record keeps the hash, so two
records name the same view exactly when the evaluator was shown the same thing.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ._bundle import Bundle
from ._check import ChoiceQuestion, Question, RubricQuestion
from ._json_text import canonical_json
from ._shown import show

__all__ = ["SHOWN_PIECES", "bundle_bytes", "bundle_sha256", "shown_pieces"]

#: The pieces of a bundle, in the order a receipt lists them; the canonical object's keys.
SHOWN_PIECES = (
    "instructions",
    "body",
    "questions",
    "run_data",
    "dropped_steps",
    "dropped_fields",
    "submission",
)


def _question_shown(question: Question) -> dict[str, Any]:
    # The evaluator is shown each question with its choices' descriptions or its level texts
    # (design decision 12), not the thresholds that grade its answer.
    shown: dict[str, Any] = {"ask": question.ask, "kind": question.kind}
    if isinstance(question, ChoiceQuestion):
        shown["one_of"] = dict(question.one_of)
    elif isinstance(question, RubricQuestion):
        shown["levels"] = list(question.levels)
    return shown


def _bundle_arg(bundle: object) -> Bundle:
    if type(bundle) is not Bundle:
        raise TypeError(f"a Bundle is needed (see build_bundle), got {show(bundle)}")
    return bundle


def shown_pieces(bundle: Bundle) -> dict[str, str]:
    """Each piece of ``bundle`` as canonical JSON text (see :func:`bundle_bytes`), keyed by
    the names of :data:`SHOWN_PIECES`. Raises :class:`TypeError` for anything but a
    :class:`~checkprofile.Bundle` (so do :func:`bundle_bytes` and :func:`bundle_sha256`)."""
    _bundle_arg(bundle)
    return {
        "instructions": canonical_json(bundle.instructions),
        "body": canonical_json(bundle.body),
        "questions": canonical_json([_question_shown(q) for q in bundle.check]),
        # Already canonical: the exact texts the evaluator was shown.
        "run_data": bundle.run_data_json,
        "dropped_steps": canonical_json(list(bundle.dropped_steps)),
        "dropped_fields": canonical_json(list(bundle.dropped_fields)),
        "submission": bundle.submission_json,
    }


def bundle_bytes(bundle: Bundle) -> bytes:
    """The canonical bytes of what the evaluator was shown.

    The UTF-8 encoding of the canonical JSON text (:func:`checkprofile.canonical_json`:
    compact, keys sorted, not ASCII-escaped) of the object::

        {"body": str, "dropped_fields": [pointer...], "dropped_steps": [step id...],
         "instructions": str, "questions": [{"ask", "kind", "one_of"? | "levels"?}...],
         "run_data": {...the run data view...}, "submission": {"output", "summary"?,
         "evidence", "next"?, "reason"?}}

    ``questions`` are the questions as shown (choice descriptions, level texts), without the
    thresholds, which the evaluator never sees; the submission's route (``next``,
    ``reason``) is there only when the host showed it (``Material(show_route=True)``). Two
    bundles have the same bytes exactly when an evaluator was shown the same thing.
    """
    pieces = shown_pieces(bundle)
    members = ",".join(f"{json.dumps(name)}:{pieces[name]}" for name in sorted(pieces))
    return ("{" + members + "}").encode("utf-8", "surrogatepass")


def bundle_sha256(bundle: Bundle) -> str:
    """``"sha256:"`` and the hex SHA-256 of :func:`bundle_bytes`."""
    return "sha256:" + hashlib.sha256(bundle_bytes(bundle)).hexdigest()
