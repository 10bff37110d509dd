"""Times as RFC 3339 writes them: which strings are one, and the instant each names.

One reading for every ``at`` checkprofile judges: a step's age when run data is cut (the
latest ``at`` of its record and history) and a verdict record's ``at``. RFC 3339's grammar
exactly, on the proleptic Gregorian calendar, for any year 0000-9999 (Python's ``datetime``
starts at year 1, so it is not the judge).
"""

from __future__ import annotations

import re

__all__ = ["at_order", "days_in", "instant"]

# RFC 3339 `date-time` (section 5.6), exactly its grammar: ASCII digits only ([0-9] and
# re.ASCII, never \d, which takes any script's digits), "T" or "t" (ABNF literals are
# case-insensitive; a space is not in the grammar), a leap second :60, a fraction of any
# length, and "Z", "z" or a numeric offset (-00:00 included: the same instant as Z). The field
# ranges are in the pattern (month 13 or hour 24 do not match), so the usual "...Z" timestamp
# needs no parsing at all.
_RFC3339 = re.compile(
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])[Tt]"
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)"
    r"(\.[0-9]+)?([Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])\Z",
    re.ASCII,
)
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_DAY_MINUTES = 24 * 60


def instant(value: object) -> str | None:
    """An RFC 3339 timestamp as a UTC key that sorts in time order, or ``None``.

    The key is ``YYYY-MM-DDTHH:MM:SS`` in UTC, followed by ``.`` and the fraction of a second
    without trailing zeros when it has one: a shorter key sorts first, and ``20`` < ``20.5`` <
    ``21``, so plain string order is time order and equal instants have equal keys. A leap
    second ``:60`` sorts after ``:59`` and before the next minute. Run data is full of
    timestamps (every step and history entry has one), so the usual ``...Z`` form is keyed by
    one slice; only a timestamp with an offset is shifted to UTC, by plain arithmetic on the
    proleptic Gregorian calendar (any year 0000-9999, as RFC 3339 allows). A value that is not
    RFC 3339, or names no real day (month 13, 31 February), counts as no ``at``.
    """
    if type(value) is not str:
        if not issubclass(type(value), str):
            return None
        value = str.__str__(value)
    match = _RFC3339.match(value)
    if match is None:
        return None
    if value[8:10] > "28" and int(value[8:10]) > days_in(int(value[:4]), int(value[5:7])):
        return None  # 31 April, 29 February of a common year
    fraction, zone = match.groups()
    if zone in ("Z", "z"):
        key = value[:19] if value[10] == "T" else value[:10] + "T" + value[11:19]
    else:
        year, month, day = int(value[:4]), int(value[5:7]), int(value[8:10])
        offset = int(zone[1:3]) * 60 + int(zone[4:6])
        minutes = (
            int(value[11:13]) * 60 + int(value[14:16]) + (-offset if zone[0] == "+" else offset)
        )
        if minutes < 0:
            minutes += _DAY_MINUTES
            year, month, day = _day_before(year, month, day)
        elif minutes >= _DAY_MINUTES:
            minutes -= _DAY_MINUTES
            year, month, day = _day_after(year, month, day)
        key = f"{_year_key(year)}-{month:02d}-{day:02d}T{minutes // 60:02d}:{minutes % 60:02d}"
        key += value[16:19]
    if fraction:
        digits = fraction[1:].rstrip("0")
        if digits:
            key += "." + digits
    return key


def days_in(year: int, month: int) -> int:
    # The Gregorian rule, proleptic: 0000 is a leap year, 1900 is not, 2000 is.
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return 29 if month == 2 and leap else _MONTH_DAYS[month - 1]


def _day_before(year: int, month: int, day: int) -> tuple[int, int, int]:
    if day > 1:
        return year, month, day - 1
    if month > 1:
        return year, month - 1, days_in(year, month - 1)
    return year - 1, 12, 31


def _day_after(year: int, month: int, day: int) -> tuple[int, int, int]:
    if day < days_in(year, month):
        return year, month, day + 1
    if month < 12:
        return year, month + 1, 1
    return year + 1, 1, 1


def _year_key(year: int) -> str:
    # An offset can carry 0000-01-01 into year -1 and 9999-12-31 into 10000 (UTC). Keys keep
    # four characters and still sort in time order: "-001" before "0000", ":000" after "9999".
    if year < 0:
        return "-001"
    return ":000" if year > 9999 else f"{year:04d}"


def at_order(at: str) -> str:
    """A text that sorts as the times do: ``at`` (RFC 3339, UTC, ``Z``) without the ``Z`` and
    without trailing zeros in its fraction (``…:00.5Z`` is after ``…:00Z``, though ``.`` sorts
    before ``Z``). Compare these bytewise (in PostgreSQL, ``COLLATE "C"``)."""
    if len(at) == 20:
        return at[:19]
    fraction = at[20:-1].rstrip("0")
    return at[:19] + "." + fraction if fraction else at[:19]
