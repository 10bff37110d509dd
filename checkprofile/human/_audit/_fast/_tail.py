"""Reading the end of a writer's verdict line, from where its check ends: one pattern and one
reader made for each distinct check of a trail (:func:`tail_reader`).

A month of one step's verdicts carries the same check on every line, laid out as the writer
lays it out. So for each check a pattern is made that pins every key, once, in the writer's
order, and every value as the writer writes it: each question's ask and kind, its answer as
one of the question's own names or levels, each probability and confidence as the writer
writes a float in [0, 1], each result, source and distribution pair. What it matches is the
JSON text of exactly the values it captures. With the pattern comes a reader written for the
check (its source is made from the check, as attrs and cattrs make theirs): straight-line code,
one block per question, that judges what the pattern cannot (each recorded result against the
question's thresholds, the verdict against the worst of them, the time, each distribution),
so a line costs little more than its match. Anything the pattern does not match, right or
wrong, is left to the other readings.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any, get_args

from ...._check import Check, ChoiceQuestion, Question, RubricQuestion, YesNoQuestion
from ...._usage import ModelCall, recorded_call
from ...._verdict import Source, grade_value, is_at_text
from ._plain import Body, _distribution, _worst

__all__ = ["Tail", "tail_reader", "written_calls"]

#: Reads the end of a verdict line from where its check ends: the verdict's name, advisory,
#: model, at, truncated, its body (answers, results, distributions, sources; see
#: ``_audit_fast_verdicts``) and the text of the record's calls (``None``: it has none); or
#: ``None`` when the line is not plainly right.
Tail = Callable[[str, int], "tuple[str, bool, str, str, bool, Body, str | None] | None"]

#: A text as the writer writes it in a line that holds no backslash (so it holds no escape).
_PLAIN_TEXT = r'[^"\\\x00-\x1f]*'
_RESULT = "pass|fail|unsure"
# A float in [0, 1] as the writer (Python's repr) writes it: 0.0 to 0.999..., 1.0, or below
# 1e-4 with an exponent (the mantissa is below 10, the exponent at least 1). Anything else,
# an integer or a float written otherwise, is left to the other readings.
_UNIT = r"0\.[0-9]+|1\.0+|[1-9](?:\.[0-9]+)?e-(?:0[1-9]|[1-9][0-9]{1,2})"
_SOURCES = "|".join(sorted(get_args(Source)))
_NULL_DISTRIBUTION = ',"distribution":null'


def _call(group: Callable[[str], str]) -> str:
    """The pattern of one call as ModelCall.to_json writes it: seconds and questions, then
    each figure reported and the request ids, each key once and in that order (a figure: an
    integer of up to 18 digits; an id: plain text); each value in ``group`` (capturing it, or
    not)."""
    seconds = group(r"-?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]+)?(?:[eE][+-]?[0-9]{1,3})?")
    figure = group("0|[1-9][0-9]{0,17}")
    ids = group(r'"[^"\x00-\x1f]*"(?:,"[^"\x00-\x1f]*")*')
    figures = "".join(
        f'(?:,"{name}":{figure})?' for name in ("input_tokens", "output_tokens", "cached_tokens")
    )
    return (
        rf'\{{"seconds":{seconds},"questions":{figure}{figures}'
        rf'(?:,"request_ids":\[{ids}\])?\}}'
    )


#: One call of a record's calls, its values captured: seconds, questions, the figures, the
#: ids' text.
CALL = re.compile(_call(lambda value: f"({value})"))
_CALL_TEXT = _call(lambda value: f"(?:{value})")


class _Pattern:
    """A pattern made piece by piece, each capturing group named as it is added (no piece
    captures otherwise), so the reader's code names each group by its place."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.places: dict[str, int] = {}

    def text(self, pattern: str) -> None:
        self.pieces.append(pattern)

    def literal(self, text: str) -> None:
        self.pieces.append(re.escape(text))

    def group(self, name: str, pattern: str, *, optional: bool = False) -> str:
        """Adds a group of ``pattern`` and gives the reader's expression for what it caught."""
        self.places[name] = len(self.places)
        self.pieces.append(f"({pattern})" + ("?" if optional else ""))
        return f"found[{self.places[name]}]"

    def compiled(self) -> re.Pattern[str]:
        pattern = re.compile("".join(self.pieces))
        assert pattern.groups == len(self.places)
        return pattern


def _options(question: Question) -> list[str]:
    """The texts a choice's names or a rubric's levels are written as."""
    if isinstance(question, ChoiceQuestion):
        return list(question.names)
    assert isinstance(question, RubricQuestion)
    return [str(level) for level in range(len(question.levels))]


def _alternatives(texts: list[str]) -> str:
    return "|".join(map(re.escape, texts))


def tail_reader(check: Check) -> Tail | None:
    """The reader of what follows ``check`` in a verdict line the writer wrote, ``None``
    when an ask or an option's name is not plain text (then the line holds escapes, and is
    read the other way)."""
    texts = [q.ask for q in check] + [n for q in check if q.kind == "choice" for n in _options(q)]
    if not all(re.fullmatch(_PLAIN_TEXT, text) for text in texts):
        return None
    pattern = _Pattern()
    scope: dict[str, Any] = {
        "_grade": grade_value,
        "_worst": _worst,
        "is_at_text": is_at_text,
        "_distribution": _distribution,
        "_NONES": (None,) * len(check),
    }
    pattern.literal(',"verdict":{"verdict":"')
    name = pattern.group("name", _RESULT)
    pattern.literal('","advisory":')
    advisory = pattern.group("advisory", "true|false")
    pattern.literal(',"model":"')
    model = pattern.group("model", _PLAIN_TEXT)
    pattern.literal('","questions":[')
    # Each answer: its value and confidence read, its recorded result judged.
    code, answers, results = [], [], []
    for index, question in enumerate(check):
        scope[f"_q{index}"] = question
        pattern.literal("," if index else "")
        pattern.literal(f'{{"ask":"{question.ask}","kind":"{question.kind}","answer":')
        confidence = "None"
        if isinstance(question, YesNoQuestion):
            code.append(f"v{index} = float({pattern.group(f'answer{index}', _UNIT)})")
        else:
            options = _options(question)
            if isinstance(question, ChoiceQuestion):
                # One text per answer name, not one per line (calibration keeps answers).
                scope[f"_names{index}"] = {option: sys.intern(option) for option in options}
                pattern.literal('"')
                answer = pattern.group(f"answer{index}", _alternatives(options))
                pattern.literal('"')
                code.append(f"v{index} = _names{index}[{answer}]")
            else:
                answer = pattern.group(f"answer{index}", _alternatives(options))
                code.append(f"v{index} = int({answer})")
            pattern.literal(',"confidence":')
            confidence = f"c{index}"
            code.append(f"c{index} = float({pattern.group(f'confidence{index}', _UNIT)})")
        answers.append(f"(v{index}, {confidence})")
        pattern.literal(',"result":"')
        result = pattern.group(f"result{index}", _RESULT)
        pattern.literal('"}')
        code.append(f"if _grade(_q{index}, v{index}, {confidence}) != {result}:")
        code.append("    return None")
        results.append(result)
    pattern.literal("]")
    truncated = pattern.group("truncated", re.escape(',"truncated":true'), optional=True)
    pattern.literal(',"at":"')
    at = pattern.group("at", _PLAIN_TEXT)
    pattern.literal('"}')
    code += [
        f"results = ({', '.join(results)},)",
        f"if _worst(results) != {name} or not {model}.strip() or not is_at_text({at}):",
        "    return None",
        f"answers = ({', '.join(answers)},)",
    ]
    # The provenance, when there is one: per question null, {}, or its source and perhaps
    # its distribution.
    pattern.text("(?:")
    provenance = pattern.group("provenance", re.escape(',"provenance":['))
    origins = []
    for index, question in enumerate(check):
        pattern.literal("," if index else "")
        pattern.text("(?:")
        none = pattern.group(f"none{index}", r"null|\{\}")
        pattern.text("|")
        pattern.literal('{"source":"')
        source = pattern.group(f"source{index}", _SOURCES)
        pattern.literal('"')
        origins.append(f"s{index} = None if {none} is not None else {source}")
        origins.append(f"d{index} = None")
        if isinstance(question, YesNoQuestion):
            # (The full reading keeps a yes/no distribution unchecked: it is left to it.)
            pattern.text(f"(?:{re.escape(_NULL_DISTRIBUTION)})?")
        else:
            origins += _pairs(pattern, question, index, scope)
        pattern.text(r"\})")
    pattern.literal("]")
    pattern.text(")?")
    pattern.text('(?:,"calls":')
    calls = pattern.group("calls", rf"\[{_CALL_TEXT}(?:,{_CALL_TEXT})?\]")
    pattern.text(r")?\}")
    head = f"{name}, {advisory} == 'true', {model}, {at}, {truncated} is not None"
    code += [
        f"if {provenance} is None:",
        f"    return {head}, (answers, results, _NONES, None), {calls}",
        *origins,
        f"sources = ({', '.join(f's{index}' for index in range(len(check)))},)",
        "if sources == _NONES:",
        "    return None  # provenance that knows no source is left out, not written",
        f"distributions = ({', '.join(f'd{index}' for index in range(len(check)))},)",
        f"return {head}, (answers, results, distributions, sources), {calls}",
    ]
    scope["_fullmatch"] = pattern.compiled().fullmatch
    source = "def tail(text, start):\n    " + "\n    ".join(
        ["found = _fullmatch(text, start)", "if found is None:", "    return None",
         "found = found.groups()", *code]
    )  # fmt: skip
    exec(compile(source, f"<verdict tail of check {id(check):x}>", "exec"), scope)
    return scope["tail"]  # type: ignore[no-any-return]


def _pairs(pattern: _Pattern, question: Question, index: int, scope: dict[str, Any]) -> list[str]:
    """Adds to ``pattern`` the distribution of choice or rubric ``question`` (the ``index``th)
    in its provenance entry, and gives the code that reads it as ``d{index}``: up to one pair
    per option, each an option and a probability, the later ones optional (so the pairs present
    are the first ones); :func:`_distribution` checks that no option is listed twice, and the
    rest."""
    options = _options(question)
    choice = isinstance(question, ChoiceQuestion)
    scope[f"_options{index}"] = frozenset(options) if choice else range(len(options))
    pattern.text(r'(?:,"distribution":(?:null|\[')
    code = []
    for place in range(len(options)):
        pattern.text("(?:," if place else "")
        pattern.literal('["' if choice else "[")
        option = pattern.group(f"option{index}_{place}", _alternatives(options))
        pattern.literal('",' if choice else ",")
        probability = pattern.group(f"probability{index}_{place}", _UNIT)
        pattern.literal("]")
        pair = f"({option if choice else f'int({option})'}, float({probability}))"
        code.append(f"p{index} = [{pair}]" if not place else f"if {option} is not None:")
        if place:
            code.append(f"    p{index}.append({pair})")
    pattern.text(")?" * (len(options) - 1))
    pattern.text(r"\]))?")
    return [
        f"if found[{pattern.places[f'option{index}_0']}] is not None:",
        *("    " + line for line in code),
        f"    d{index} = _distribution(tuple(p{index}), _options{index}, v{index})",
        f"    if d{index} is None:",
        "        return None",
    ]


def _number(text: str) -> int | float:
    """A JSON number's text as the json module reads it."""
    return float(text) if "." in text or "e" in text or "E" in text else int(text)


def written_calls(text: str, attempts: int) -> tuple[ModelCall, ...] | None:
    """The calls whose list, as a tail's pattern matched it in a line, is ``text``: the values
    the pattern captured, read as the json module reads them and judged as
    :func:`call_from_json` judges them; ``None`` when they are not right."""
    calls = []
    for call in CALL.finditer(text):
        seconds, questions, input_tokens, output_tokens, cached_tokens, ids = call.groups()
        first, second, third = (
            None if figure is None else int(figure)
            for figure in (input_tokens, output_tokens, cached_tokens)
        )
        try:
            calls.append(
                recorded_call(
                    _number(seconds),
                    int(questions),
                    first,
                    second,
                    third,
                    [] if ids is None else ids[1:-1].split('","'),  # no id holds a quote
                    usage=ids is not None or (first, second, third) != (None, None, None),
                )
            )
        except ValueError:
            return None
    return tuple(calls) if len(calls) == attempts else None
