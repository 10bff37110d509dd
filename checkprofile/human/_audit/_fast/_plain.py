"""What the two fast readings of audit lines share (``_audit_fast_verdicts`` and
``_audit_fast_decisions``): the json module's plain decoder, the writer's texts in a line, and
the plain checks of a record's subject, its times and its keys."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Container
from typing import Any

from ...._verdict import DISTRIBUTION_TOLERANCE, worst_of
from .._records import AUDIT_FORMAT, _key_from
from .._strict import _is_hash

__all__: list[str] = []

#: The json module's decoder without hooks: a third cheaper than the strict one's.
_PLAIN_DECODER = json.JSONDecoder()
# A hash and a text as the writer writes them in a line that holds no backslash (so no text
# holds an escape).
_HASH_TEXT = r'"(sha256:[0-9a-f]{64})"'
_TEXT = r'"([^"\x00-\x1f]*)"'


def _subject(data: dict[str, Any], run: object, step: object, digest: object, key: object) -> bool:
    """Whether a record's format, run, step, submission hash and key are plainly right (the
    key is the submission key of the others, so it is a hash too)."""
    return (
        type(data["format"]) is int
        and data["format"] == AUDIT_FORMAT
        and type(run) is str
        and type(step) is str
        and type(key) is str
        and bool(run.strip())
        and bool(step.strip())
        and _is_hash(digest)
        and key == _key_from(run, step, digest)  # type: ignore[arg-type]
    )


def _keys_add_up(text: str, keys: int) -> bool:
    """Whether the line ``text`` (no backslash in it), parsed without the check for repeated
    keys into objects with ``keys`` keys in all, holds no key twice.

    Each key in the text is a string followed by ``:``. When no ``"`` is followed by
    whitespace, every key shows as ``":``, and so does every other string that starts with
    ``:`` (a string holds no ``"``); nothing else does. So the text counts at least as many as
    the keys read, and exactly as many only when no key was written twice."""
    return '" ' not in text and '"\t' not in text and '"\r' not in text and text.count('":') == keys


#: One distribution: (option, probability) pairs.
Distribution = tuple[tuple[Any, Any], ...]
#: An answer as the fast path reads it: its recorded value (the probability, name or level)
#: and its confidence (``None`` for a yes/no answer); cheaper than an answer object.
Plain = tuple[float | str | int, float | None]
#: What a verdict's questions read as: answers, results, distributions, sources (``None``:
#: the record has no provenance).
Body = tuple[
    tuple[Plain, ...],
    tuple[str, ...],
    tuple[Distribution | None, ...],
    tuple[str | None, ...] | None,
]


# The core's worst-of rule (decision 7), once for each combination of results.
_worst = functools.cache(worst_of)


def _distribution(
    pairs: Distribution, options: Container[object], chosen: object
) -> Distribution | None:
    """The distribution ``pairs`` (typed: :func:`_pairs`, or a line's pattern) as kept beside
    the answer ``chosen``, when it is plainly one the core takes (each of the question's
    ``options`` at most once; probabilities in [0, 1] summing to 1 within the core's
    tolerance; ``chosen`` the most probable); ``None`` otherwise. Stricter than the core where
    that is simpler (the core also takes a level written ``2.0``, and a chosen answer a hair
    below the top): what this refuses, the full reading decides."""
    names: set[object] = set()
    top = mine = -1.0
    for name, probability in pairs:
        if name not in options or name in names or not 0 <= probability <= 1:
            return None
        names.add(name)
        if probability > top:
            top = probability
        if name == chosen:
            mine = probability
    if mine < top or abs(math.fsum([p for _, p in pairs]) - 1) > DISTRIBUTION_TOLERANCE:
        return None
    return pairs
