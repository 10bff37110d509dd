"""Each question of a receipt as sentences a reviewer reads: what the model answered, what
passes, and how far the answer was from passing, in words (the reviewer's page).

``render_text`` keeps its compact lines (``answer 0.62, 0.28 from passing``); a person who
decides reads "The model gave yes a probability of 0.62. It passes at 0.9 or more ... It was
0.28 short of passing." The numbers are the receipt's (:func:`~._receipts.threshold_text`,
:func:`~._receipts.distance_from_passing`), only said in full.
"""

from __future__ import annotations

from ..._check import ChoiceQuestion, RubricQuestion, YesNoQuestion
from ..._lines import js_number
from ..._shown import one_line
from ._receipts import Receipt, distance_from_passing

__all__ = ["question_sentences"]


def _n(value: float) -> str:
    return js_number(round(value, 2))


def _thresholds(question: YesNoQuestion | ChoiceQuestion | RubricQuestion) -> str:
    if isinstance(question, YesNoQuestion):
        passes = f"It passes when the probability of yes is {_n(question.pass_at)} or more"
        if question.fail_below is None or question.fail_below == question.pass_at:
            return f"{passes}, and fails below that."
        return (
            f"{passes}, fails below {_n(question.fail_below)}, and in between it is unsure"
            " (a person decides)."
        )
    sure = f"the model's confidence must be {_n(question.confidence)} or more, else it is unsure"
    if isinstance(question, ChoiceQuestion):
        text = f"It passes when the answer is {_names(question.passing)}"
        if question.unsure:
            text += f"; {_names(question.unsure)} is unsure"
        return f"{text}; any other answer fails; and {sure}."
    level = question.pass_level
    return f"It passes at level {level} ({one_line(question.levels[level])}) or above, and {sure}."


def _names(names: tuple[str, ...]) -> str:
    quoted = [f"“{one_line(name)}”" for name in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def question_sentences(receipt: Receipt, index: int) -> list[str]:
    """Question ``index`` of ``receipt`` in sentences: the answer (or why there was none), the
    thresholds, and how far from passing."""
    question, record = receipt.check[index], receipt.verdict.questions[index]
    tried = receipt.tried[index] if receipt.tried else ()
    answered = [text for text in tried if not text.startswith("no answer")]
    if record.answer is None and answered:
        said = (
            "The model answered this question, but the check ended in an error (another"
            " question had no answer), so no answer was used; what it gave is below."
        )
    elif record.answer is None:
        reasons = [
            f"{reason}{': ' + detail if detail else ''}"
            for ask, reason, detail in receipt.failures
            if ask == record.ask
        ]
        why = f" ({one_line(reasons[0])})" if reasons else ""
        said = f"The evaluator gave no answer to this question{why}."
    elif isinstance(question, YesNoQuestion):
        said = f"The model gave yes a probability of {_n(float(record.answer))}."
    elif isinstance(question, ChoiceQuestion):
        said = (
            f"The model answered “{one_line(str(record.answer))}” with confidence"
            f" {_n(record.confidence or 0.0)}."
        )
    else:
        assert isinstance(question, RubricQuestion)
        level = int(record.answer)
        said = (
            f"The model chose level {level} ({one_line(question.levels[level])}) with"
            f" confidence {_n(record.confidence or 0.0)}."
        )
    lines = [said]
    if len(tried) > 1 or (tried and record.answer is None):
        # What each attempt gave, so an error's other answers are not hidden from the person.
        lines.append(
            "On each attempt the model gave: "
            + "; ".join(f"attempt {n}: {text}" for n, text in enumerate(tried, start=1))
            + "."
        )
    lines.append(_thresholds(question))
    if record.result == "pass":
        lines.append("So it passed.")
    elif record.answer is None:
        lines.append(f"So it counts as {record.result}: a person decides it.")
    else:
        distance = distance_from_passing(question, record)
        lines.append(
            f"So it was {record.result}, {_n(distance)} short of passing (0 passes, 1 is as far"
            " as an answer can be)."
        )
    return lines
