"""Issue lines: what an agent is told about the questions that did not pass (decision 11).

``check: <ask> → <answer>``, with numbers printed as JavaScript prints them, because the
lines travel through JSON to hosts in any language and must read the same everywhere.
"""

from __future__ import annotations

import math

from ._check import RubricQuestion
from ._convert import is_number, plain_scalar
from ._shown import one_line, show
from ._verdict import QuestionResult, Verdict

__all__ = ["answer_text", "issue_lines", "js_number"]

ARROW = "\u2192"


def js_number(value: float) -> str:
    """``value`` as JavaScript's ``String(value)`` prints it (ECMA-262 Number::toString).

    Shortest round-trip digits, no rounding: ``0.12``, ``1``, ``0``, ``0.00005``, ``1e-7``,
    ``1e+21``. An integer beyond a double's range is ``Infinity`` (or ``-Infinity``), as in
    JavaScript. Raises :class:`TypeError` for anything but an int or a float (a bool is not a
    number); a subclass is printed as its plain value.
    """
    value = plain_scalar(value)  # type: ignore[assignment]
    if not is_number(value):
        raise TypeError(f"js_number takes a number, got {show(value)}")
    if type(value) is int:
        try:
            value = float(value)
        except OverflowError:
            return "Infinity" if value > 0 else "-Infinity"
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"  # -0 prints as 0 too
    if value < 0:
        return "-" + js_number(-value)
    # repr() gives the shortest digits that round-trip, as ECMA-262 asks: "0.12", "1e-07",
    # "1.5e+21", "123.0". Split them into the significant digits and the point's position.
    mantissa, _, exponent = repr(float(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    everything = whole + fraction
    digits = everything.lstrip("0")
    n = len(whole) + int(exponent or 0) - (len(everything) - len(digits))
    digits = digits.rstrip("0")
    k = len(digits)  # value = 0.digits × 10^n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def answer_text(record: QuestionResult, question: object = None) -> str:
    """How one recorded answer reads in an issue line: ``no (0.12)``, ``hedges (0.9)``,
    ``level 1: One list is covered. (0.85)``, or ``no answer``. Raises :class:`TypeError`
    when ``record`` is not a :class:`QuestionResult`."""
    if type(record) is not QuestionResult:
        raise TypeError(f"answer_text takes a QuestionResult, got {show(record)}")
    if record.answer is None:
        return "no answer"
    if record.kind == "yes_no":
        p = float(record.answer)
        # Not passing means p < pass (grading is `>=`), so the result alone says yes or no.
        return f"{'yes' if record.result == 'pass' else 'no'} ({js_number(p)})"
    confidence = js_number(record.confidence) if record.confidence is not None else "?"
    if record.kind == "choice":
        return f"{one_line(str(record.answer))} ({confidence})"
    level = int(record.answer)
    if isinstance(question, RubricQuestion) and 0 <= level < len(question.levels):
        return f"level {level}: {one_line(question.levels[level])} ({confidence})"
    return f"level {level} ({confidence})"


def issue_lines(verdict: Verdict) -> tuple[str, ...]:
    """One line per question whose result is not ``pass``, in question order.

    A rubric line names its level text when the verdict knows its check (every verdict
    :func:`~checkprofile.combine` makes does; give ``check=`` to ``Verdict.from_json``).
    Raises :class:`TypeError` when ``verdict`` is not a :class:`Verdict`.
    """
    if type(verdict) is not Verdict:
        raise TypeError(f"issue_lines takes a Verdict, got {show(verdict)}")
    questions = verdict.check.questions if verdict.check is not None else ()
    lines = []
    for index, record in enumerate(verdict.questions):
        if record.result == "pass":
            continue
        question = questions[index] if index < len(questions) else None
        lines.append(f"check: {one_line(record.ask)} {ARROW} {answer_text(record, question)}")
    return tuple(lines)
