"""People's own answers to a check's questions, where a host keeps them: a JSON Lines file,
one submission a line, joined with the audit trail by submission key.

    {"key": "sha256:…", "labels": {"Every line has a receipt.": true, "How …?": "specific"}}

``key`` is the submission key of the audit trail's records; ``labels`` maps what a question
asks to the person's answer: ``true`` or ``false`` for a yes/no question, the name of an
option for a choice, the level (0 for the worst) for a rubric; ``null`` for no label. A key
given on two lines takes the later line's labels over the earlier's, question by question.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..._check import Check, ChoiceQuestion, RubricQuestion, YesNoQuestion
from ..._json_read import JsonFaultError, load_json
from ..._shown import show
from ..._types import of_type
from .._audit._strict import AuditError
from ._columns import Label

__all__ = ["check_labels", "read_labels"]


def read_labels(path: str | os.PathLike[str]) -> dict[str, dict[str, Label]]:
    """The labels of a labels file, by submission key, then by what the question asks.
    Raises :class:`~checkprofile.human.AuditError` naming ``FILE:LINE`` for a line that is
    not a labels line, and :class:`OSError` for a file that cannot be read."""
    name = os.fspath(path)
    found: dict[str, dict[str, Label]] = {}
    with open(name, "rb") as lines:
        for number, raw in enumerate(lines, 1):
            try:
                line = raw.decode("utf-8")
                if not line.strip():
                    continue
                data = load_json(line)
            except JsonFaultError as error:
                refused = error.fault.worded(
                    key="a key appears twice in one object ({})",
                    constant="{} is not a JSON number",
                    integer="an integer of {} digits is too long to read",
                )
                # (A line's text ends at its line break: its column is one past the offset.)
                where = f"column {error.fault.index + 1}"
                raise AuditError(name, number, f"not JSON: {refused} ({where})") from None
            except (ValueError, RecursionError) as error:  # not UTF-8, not JSON, too deep
                raise AuditError(name, number, f"not JSON: {error}") from None
            key, labels = _line(data)
            if type(key) is not str or labels is None:
                raise AuditError(
                    name,
                    number,
                    'a labels line is {"key": "<submission key>", "labels": {"<ask>": <label>}},'
                    f" got {show(data)}",
                )
            assert isinstance(key, str)
            mine = found.setdefault(key, {})
            for ask, label in labels.items():
                if label is None:
                    mine.pop(ask, None)
                elif of_type(label, bool, str) or (
                    of_type(label, int) and label >= 0  # type: ignore[operator]  # an int
                ):
                    mine[ask] = label  # type: ignore[assignment]  # bool, str or int
                else:
                    raise AuditError(
                        name,
                        number,
                        f"the label of {show(ask)} is {show(label)}: a label is true or false,"
                        " the name of an option, a level (0, 1, …), or null",
                    )
    return found


def _line(data: object) -> tuple[object, dict[str, object] | None]:
    if type(data) is not dict or set(data) != {"key", "labels"}:
        return None, None
    labels = data["labels"]
    return data["key"], labels if type(labels) is dict else None


def check_labels(check: Check, key: str, labels: Mapping[str, Label]) -> None:
    """Refuse, naming the submission and the question, a label that ``check``'s question of
    the same ask cannot have."""
    for question in check:
        label = labels.get(question.ask)
        if label is None:
            continue
        if isinstance(question, YesNoQuestion):
            fits = type(label) is bool
            wanted = "true or false"
        elif isinstance(question, ChoiceQuestion):
            names = [name for name, _ in question.one_of]
            fits = type(label) is str and label in names
            wanted = f"one of {', '.join(map(show, names))}"
        else:
            assert isinstance(question, RubricQuestion)
            fits = type(label) is int and label < len(question.levels)
            wanted = f"a level from 0 to {len(question.levels) - 1}"
        if not fits:
            raise ValueError(
                f"labels of submission {show(key)}: the label of {show(question.ask)} is"
                f" {show(label)}, but it must be {wanted}"
            )
