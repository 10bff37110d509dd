"""The age order of a run's steps, oldest first: which steps the run data cut drops first.

A step's age is the latest ``at`` of its record and its history (:func:`~._time.instant`); a
step with none readable is the oldest, and ties go by step id. Core-2's run data writes UTC
stamps to the second, and those are judged in bulk (:func:`_zulu_keys`); anything else one
stamp at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain, repeat
from typing import Any

from ._time import days_in as _days_in
from ._time import instant as _instant
from ._types import all_of_type

__all__ = ["oldest_first"]


def oldest_first(steps: Mapping[str, Any], ids: list[str]) -> list[str]:
    """The step ids (``ids``, sorted), oldest first.

    A step's age is the latest ``at`` of its record and its history (see :func:`_instant`);
    a step with none readable is the oldest. Ties go by step id, so the order never depends on
    the map's order. The records are as the host gave them (a record is made plain only if it
    is shown): they are read by dict's and list's own methods, and a record that cannot be
    read (a key of a host's own type whose ``__eq__`` raises) has no age.

    Every stamp is gathered first and judged in bulk (:func:`_stamp_keys`); the ids, already
    sorted, are then sorted by age alone, which keeps ties in id order.
    """
    ages = _zulu_ages(steps, ids)
    if ages is None:
        ages = _ages(steps, ids)
    return list(map(ids.__getitem__, sorted(range(len(ids)), key=ages.__getitem__)))


def _zulu_ages(steps: Mapping[str, Any], ids: list[str]) -> list[str] | None:
    """The ages of the steps when every record is a dict with a UTC ``at`` and either no
    ``history`` or a list of as many dicts with an ``at`` each (core-2's run data, most often
    one entry), read in bulk: C-level passes, no Python code per step but one comparison.
    Else ``None``."""
    get = dict.get
    try:
        records: list[Any] = list(map(steps.__getitem__, ids))
        stamps: list[Any] = list(map(get, records, repeat("at")))
        size = 0  # history entries per step
        if any(map(dict.__contains__, records, repeat("history"))):
            histories: list[Any] = list(map(get, records, repeat("history")))
            if all_of_type(list, histories):
                sizes = set(map(len, histories))
                if len(sizes) != 1:
                    return None
                size = sizes.pop()
                entries = list(chain.from_iterable(histories))
                if not all_of_type(dict, entries):
                    return None
                stamps += map(get, entries, repeat("at"))
            elif not all_of_type(type(None), histories):
                return None
    except Exception:  # a record that is not a dict, a key whose __eq__ raises
        return None
    keys = _zulu_keys(stamps)  # None for a missing `at` (None) too
    if keys is None:
        return None
    count = len(ids)
    if size == 0:
        return keys
    if size == 1:
        return [a if a > b else b for a, b in zip(keys[:count], keys[count:], strict=True)]
    columns = [keys[count + offset :: size] for offset in range(size)]
    return [max(group) for group in zip(keys[:count], *columns, strict=True)]


def _ages(steps: Mapping[str, Any], ids: list[str]) -> list[str]:
    """The ages of the steps, one step at a time."""
    stamps: list[object] = []
    ends: list[int] = []
    get = dict.get
    for step_id in ids:
        record = steps[step_id]
        start = len(stamps)
        kind = type(record)
        if kind is dict or issubclass(kind, dict):
            try:
                at = get(record, "at")
                if at is not None:
                    stamps.append(at)
                history = get(record, "history")
                if history is not None and issubclass(type(history), list):
                    for entry in list.__iter__(history):
                        if type(entry) is dict or issubclass(type(entry), dict):
                            at = get(entry, "at")
                            if at is not None:
                                stamps.append(at)
            except Exception:  # a key of a host's own type whose __eq__ raises: no age
                del stamps[start:]
        ends.append(len(stamps))
    keys = _stamp_keys(stamps)
    ages: list[str] = []
    start = 0
    for end in ends:
        ages.append(
            keys[start] if end - start == 1 else max(keys[start:end]) if end > start else _NO_AGE
        )
        start = end
    return ages


def _stamp_keys(stamps: list[object]) -> list[str]:
    """Each value's time key (:func:`_instant`), ``_NO_AGE`` for one that is not a timestamp.
    The keys of one call are compared with each other only."""
    keys = _zulu_keys(stamps)
    if keys is None:
        keys = [_instant(stamp) or _NO_AGE for stamp in stamps]
    return keys


# (position, character) of the fixed characters of a UTC timestamp, 2026-10-06T09:04:20Z.
_ZULU_MARKS = ((4, b"-"), (7, b"-"), (10, b"T"), (13, b":"), (16, b":"), (19, b"Z"))
_ZULU_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
# (first digit's index in _ZULU_DIGITS, lowest, highest): month, day, hour, minute, second
# (60: a leap second), as RFC 3339 allows them.
_ZULU_FIELDS = ((4, 1, 12), (6, 1, 31), (8, 0, 23), (10, 0, 59), (12, 0, 60))


def _zulu_keys(stamps: list[object]) -> list[str] | None:
    """The keys of ``stamps`` when every one is a UTC timestamp to the second
    (``2026-10-06T09:04:20Z``, as nearly all run data writes them), judged in bulk; else
    ``None`` (and :func:`_instant` judges each).

    Run data holds a stamp for every step and history entry, and a regex per stamp is most of
    the cost of cutting a long run. Here the stamps are joined into one text of fixed-width
    rows and each column is checked at once: the fixed characters by comparison, the digits by
    one deletion, and each two-digit field's range on all rows together, as the bytes of one
    big integer (each byte a field's value, no carries). Only a day 29-31 is then looked at
    alone, against its month. The key of such a stamp is the stamp itself: all end in ``Z``,
    so they sort as the :func:`_instant` keys would among themselves.
    """
    count = len(stamps)
    if not count:
        return []
    try:
        # Text only (a str subclass is read as its text, never by its own methods).
        joined = "\n".join(stamps)  # type: ignore[arg-type]
    except TypeError:
        return None
    row = 21
    if len(joined) != row * count - 1 or not joined.isascii():
        return None  # a stamp of another length (a fraction, an offset), or not one at all
    data = joined.encode("ascii")
    # With every row checked below, the separators in their column are all there are: no
    # stamp holds a line break, and each is exactly one row.
    if data[20::row] != b"\n" * (count - 1):
        return None
    for column, char in _ZULU_MARKS:
        if data[column::row] != char * count:
            return None
    digits = [data[column::row] for column in _ZULU_DIGITS]
    if b"".join(digits).translate(None, b"0123456789"):
        return None
    ones = int.from_bytes(b"\x01" * count, "big")
    high = ones << 7
    zero = ones * 0x30
    month = day = 0
    for first, lowest, highest in _ZULU_FIELDS:
        tens = int.from_bytes(digits[first], "big") - zero
        value = tens * 10 + int.from_bytes(digits[first + 1], "big") - zero
        # A byte v in 0..99 plus 128 - lowest has its high bit set when v >= lowest; plus
        # 127 - highest, when v > highest. Neither sum reaches 256: no byte carries.
        if (value + (128 - lowest) * ones) & high != high:
            return None
        if (value + (127 - highest) * ones) & high:
            return None
        if first == 4:
            month = value
        elif first == 6:
            day = value
    # The stamps themselves are the keys when they are all plain text (a str subclass would
    # be compared by its own methods); else the rows, as plain text.
    keys = stamps if all_of_type(str, stamps) else joined.split("\n")

    def equal(value: int, number: int) -> int:
        # High bit of each byte that is ``number`` (bytes 0..99: xor <= 127, no carries).
        return high ^ (((value ^ (number * ones)) + 127 * ones) & high)

    # The days that some month lacks: 29-31 February, 31 of a 30-day month. Only those are
    # looked at one by one (29 February, against its year).
    short = equal(month, 4) | equal(month, 6) | equal(month, 9) | equal(month, 11)
    february = equal(month, 2) & (day + 99 * ones)  # and day >= 29
    doubtful = (february | (short & equal(day, 31))) & high
    if not doubtful:
        return keys  # type: ignore[return-value]
    late = doubtful.to_bytes(count, "big")
    index = late.find(0x80)
    while index >= 0:
        stamp = joined[index * row : index * row + 20]
        if int(stamp[8:10]) > _days_in(int(stamp[:4]), int(stamp[5:7])):
            keys[index] = _NO_AGE  # 31 April, 29 February of a common year
        index = late.find(0x80, index + 1)
    return keys  # type: ignore[return-value]


# Sorts before every instant: a step with no readable `at` is the oldest.
_NO_AGE = ""
