"""What the evaluator was shown, as texts a person reads on the receipt: the step's
instructions, the process body, the run data view and the submission, each within a size the
host sets, with what was cut said plainly.

A receipt always gives each piece's size (:class:`~._receipts.ShownPiece`); these are the
texts themselves, so the person who decides has the material the model had (the per-diem
limit a rubric question asks about is in the instructions, not in a byte count). The run data
and the submission are the exact JSON the evaluator was shown, indented for reading.
"""

from __future__ import annotations

import json
from typing import Any, Final

import attrs

from ..._bundle import Bundle
from ..._lines import js_number
from ..._shown import one_line, show
from ..._types import is_mapping
from ..._verdict import ChoiceAnswer, Failure, RubricAnswer, YesNoAnswer

__all__ = [
    "DEFAULT_SHOWN_CHARS",
    "MATERIAL_PIECES",
    "ShownText",
    "attempt_text",
    "shown_texts",
    "tried_from_json",
]

#: The pieces of the material a receipt carries as text, in the order the page shows them.
MATERIAL_PIECES: Final = ("instructions", "body", "run_data", "submission")

#: How many characters of each piece a receipt keeps by default (``receipt_for(...,
#: shown_chars=)``): a few pages of text; the piece's whole size is always given.
DEFAULT_SHOWN_CHARS: Final = 20_000


@attrs.frozen
class ShownText:
    """One piece of what the evaluator was shown, as text: its ``name`` (one of
    :data:`MATERIAL_PIECES`), its first characters (``text``), and ``chars``, how many it has
    in all (more than ``len(text)`` when it was cut)."""

    name: str
    text: str
    chars: int

    @property
    def cut(self) -> int:
        """How many characters were left out."""
        return self.chars - len(self.text)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "text": self.text, "chars": self.chars}


def _readable(json_text: str) -> str:
    """Canonical JSON as the evaluator was shown it, indented for a person."""
    return json.dumps(json.loads(json_text), indent=2, ensure_ascii=False)


def shown_texts(bundle: Bundle, limit: int) -> tuple[ShownText, ...]:
    """The texts of ``bundle``'s material, each cut to ``limit`` characters."""
    whole = {
        "instructions": bundle.instructions,
        "body": bundle.body,
        "run_data": _readable(bundle.run_data_json),
        "submission": _readable(bundle.submission_json),
    }
    return tuple(ShownText(name, whole[name][:limit], len(whole[name])) for name in MATERIAL_PIECES)


def shown_chars_arg(value: object) -> int:
    """``shown_chars`` as given to ``receipt_for``: a count of characters, 0 for none."""
    if type(value) is not int or value < 0:
        raise ValueError(
            f"shown_chars must be a count of characters (0 or more), got {show(value)}"
        )
    return value


def shown_texts_from_json(data: object) -> tuple[ShownText, ...]:
    """A receipt's ``material``, read back; :class:`ValueError` naming what is wrong."""
    if not isinstance(data, list):
        raise ValueError(f"material must be a list, got {show(data)}")
    texts = []
    for item in data:
        if (
            not is_mapping(item)
            or set(item) != {"name", "text", "chars"}
            or item["name"] not in MATERIAL_PIECES
            or type(item["text"]) is not str
            or type(item["chars"]) is not int
            or item["chars"] < len(item["text"])
        ):
            raise ValueError(f"material items are {{name, text, chars}}, got {show(item)}")
        texts.append(ShownText(item["name"], item["text"], item["chars"]))
    if [text.name for text in texts] != [
        n for n in MATERIAL_PIECES if n in {t.name for t in texts}
    ]:
        raise ValueError("material names each piece once, in order")
    return tuple(texts)


def _number(value: object) -> str:
    if (type(value) is int or type(value) is float) and value == value and abs(value) < 1e300:
        return js_number(round(value, 2))
    return show(value)  # an answer that did not fit: shown as it came


def attempt_text(entry: object) -> str:
    """What one attempt gave one question, for a person: an answer in words, or why there
    was none (the failure's reason and detail)."""
    if type(entry) is YesNoAnswer:
        return f"yes with probability {_number(entry.p)}"
    if type(entry) is ChoiceAnswer:
        return f"{show(entry.name)} with confidence {_number(entry.confidence)}"
    if type(entry) is RubricAnswer:
        return f"level {_number(entry.level)} with confidence {_number(entry.confidence)}"
    if type(entry) is Failure:
        detail = f": {one_line(entry.detail)[:300]}" if entry.detail else ""
        return f"no answer ({entry.reason}{detail})"
    return f"no answer ({show(entry)})"


def tried_from_json(data: object, questions: int) -> tuple[tuple[str, ...], ...]:
    """A receipt's ``tried``: for each question, a list of what each attempt gave."""
    if (
        not isinstance(data, list)
        or len(data) != questions
        or not all(isinstance(item, list) and all(type(t) is str for t in item) for item in data)
    ):
        raise ValueError("tried must be a list, per question, of a text per attempt")
    return tuple(tuple(item) for item in data)
