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

As attrs does, making the code is two steps: :func:`tail_source` gives its source text (print
it to see what a check's lines are read by), and :func:`tail_reader` compiles it under a name
made of the check's key, registered with :mod:`linecache` so a traceback shows its lines. The
source is made from the check's shape alone; its texts stand in it only as string literals
inside the pattern, whose depth is the same for every check (a choice of thousands of names
adds no nesting: its answer and distribution are matched as plain texts and looked up).
"""

from __future__ import annotations

import linecache
import re
import sys
import threading
from collections.abc import Callable
from typing import Any, Final, get_args

from ...._check import Check, ChoiceQuestion, Question, RubricQuestion, YesNoQuestion
from ...._usage import ModelCall, recorded_call
from ...._verdict import Source, grade_value, is_at_text
from ._plain import Body, Distribution, _distribution, _worst

__all__ = ["Tail", "tail_reader", "tail_source", "written_calls"]

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


# A distribution's pairs as the writer writes them: a choice's names are plain texts, a rubric's
# levels integers of a few digits (which of them are the question's own, and the rest,
# :func:`~._plain._distribution` judges).
_CHOICE_NAME = _PLAIN_TEXT
_LEVEL = "0|[1-9][0-9]{0,5}"
_CHOICE_PAIR = rf'\["({_CHOICE_NAME})",({_UNIT})\]'
_LEVEL_PAIR = rf"\[({_LEVEL}),({_UNIT})\]"
_CHOICE_PAIRS = re.compile(_CHOICE_PAIR)
_LEVEL_PAIRS = re.compile(_LEVEL_PAIR)


def _written_pairs(text: str, choice: bool) -> Distribution:
    """The (option, probability) pairs of a distribution's list as a tail's pattern matched
    it (its text between the brackets), read as the json module reads them."""
    if choice:
        return tuple((name, float(p)) for name, p in _CHOICE_PAIRS.findall(text))
    return tuple((int(level), float(p)) for level, p in _LEVEL_PAIRS.findall(text))


class _Pattern:
    """A pattern made piece by piece, each capturing group named as it is added (no piece
    captures otherwise), so the reader's code names each group by its place. Its depth is the
    same for every check: a check adds pieces side by side, never one inside another."""

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


def _options(question: Question) -> dict[str, str | int]:
    """Each answer a choice or a rubric may have, by the text the writer writes it as (a
    choice's names interned: one text per answer name, not one per line)."""
    if isinstance(question, ChoiceQuestion):
        return {name: sys.intern(name) for name in question.names}
    assert isinstance(question, RubricQuestion)
    return {str(level): level for level in range(len(question.levels))}


#: What a tail reader's code finds by name, besides each question and its answers.
_SCOPE: dict[str, Any] = {
    "_compile": re.compile,
    "_grade": grade_value,
    "_worst": _worst,
    "is_at_text": is_at_text,
    "_distribution": _distribution,
    "_written_pairs": _written_pairs,
}


def tail_source(check: Check) -> tuple[str, dict[str, Any]] | None:
    """The source of the reader of what follows ``check`` in a verdict line the writer wrote
    (a module that defines ``tail(text, start)``), and the names it uses; ``None`` when an
    ask or an option's name is not plain text (then the line holds escapes, and is read the
    other way).

    The source is made from the check's shape alone: the number of questions, their kinds,
    and for each an index. Every text of the check (an ask, a name) stands in it only inside
    the pattern, which is written as a Python string literal (``repr``), or in the names it
    uses (``_q0``, ``_options0``: values, not source). So no text of an audit record can change
    what the code does, only what the pattern matches."""
    texts = [q.ask for q in check] + [n for q in check if q.kind == "choice" for n in q.names]
    if not all(re.fullmatch(_PLAIN_TEXT, text) for text in texts):
        return None
    pattern = _Pattern()
    scope: dict[str, Any] = {"_NONES": (None,) * len(check)}
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
            scope[f"_answers{index}"] = _options(question)
            if isinstance(question, ChoiceQuestion):
                pattern.literal('"')
                answer = pattern.group(f"answer{index}", _PLAIN_TEXT)
                pattern.literal('"')
            else:
                answer = pattern.group(f"answer{index}", _LEVEL)
            code.append(f"v{index} = _answers{index}.get({answer})")
            code.append(f"if v{index} is None:")
            code.append("    return None")
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
    lines = [
        "_fullmatch = _compile(",
        *(f"    {piece!r}" for piece in pattern.pieces if piece),
        ").fullmatch",
        "",
        "",
        "def tail(text, start):",
        *(
            "    " + line
            for line in [
                "found = _fullmatch(text, start)",
                "if found is None:",
                "    return None",
                "found = found.groups()",
                *code,
            ]
        ),
    ]
    return "\n".join(lines) + "\n", {**_SCOPE, **scope}


def tail_reader(check: Check, key: str) -> Tail | None:
    """The reader of what follows ``check`` (whose check key is ``key``) in a verdict line
    the writer wrote, compiled from :func:`tail_source` under a name that shows its source in
    a traceback; ``None`` when there is none (see :func:`tail_source`)."""
    made = tail_source(check)
    if made is None:
        return None
    source, scope = made
    reader: Tail = _compiled(source, scope, f"<checkprofile tail reader for check {key}>", "tail")
    return reader


# The names of the sources registered with linecache, oldest first: at most _REGISTERED, so
# a process that reads many trails of many checks holds a bounded number of sources.
_registered: dict[str, None] = {}
_REGISTERED: Final = 256
_registering = threading.Lock()


def _compiled(source: str, scope: dict[str, Any], filename: str, name: str) -> Any:
    """The function ``name`` that ``source`` defines, run in ``scope``, with the source kept
    by :mod:`linecache` under ``filename`` (as attrs does), so that a traceback through the
    generated code shows its lines. ``filename`` names the source: the same name, the same
    source."""
    exec(compile(source, filename, "exec"), scope)
    with _registering:
        _registered.pop(filename, None)
        _registered[filename] = None
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        while len(_registered) > _REGISTERED:
            oldest = next(iter(_registered))
            del _registered[oldest]
            linecache.cache.pop(oldest, None)
    return scope[name]


#: Up to this many options, a distribution's pairs are each caught by the pattern (the pairs
#: present the first ones: each later pair optional inside the one before, so nested as deep
#: as this at most); a question of more has its list caught as one text and read after.
_PAIRS_CAUGHT: Final = 8


def _pairs(pattern: _Pattern, question: Question, index: int, scope: dict[str, Any]) -> list[str]:
    """Adds to ``pattern`` the distribution of choice or rubric ``question`` (the ``index``th)
    in its provenance entry, and gives the code that reads it as ``d{index}``: a list of pairs,
    each an option and a probability. Up to :data:`_PAIRS_CAUGHT` options, each pair is caught
    by its own groups; past that, the list is caught as one text (a pattern of one size
    whatever the number of options) and read by :func:`_written_pairs`.
    :func:`_distribution` checks that each is one of the question's options, listed once, and
    the rest."""
    choice = isinstance(question, ChoiceQuestion)
    options = _options(question)
    scope[f"_options{index}"] = frozenset(options.values())
    pair = _CHOICE_PAIR if choice else _LEVEL_PAIR
    pattern.text(r'(?:,"distribution":(?:null|\[')
    if len(options) > _PAIRS_CAUGHT:
        unnamed = re.sub(r"\((?!\?)", "(?:", pair)  # the pair's groups, not capturing
        listed = pattern.group(f"pairs{index}", f"{unnamed}(?:,{unnamed})*")
        pattern.text(r"\]))?")
        made = [f"    p{index} = _written_pairs({listed}, {choice})"]
    else:
        option, first = pair.split("(", 1)[0], ""
        made = []
        for place in range(len(options)):
            pattern.text("(?:," if place else "")
            pattern.text(option)  # the pair's opening: \[" or \[
            name = pattern.group(f"option{index}_{place}", _CHOICE_NAME if choice else _LEVEL)
            pattern.text('",' if choice else ",")
            probability = pattern.group(f"probability{index}_{place}", _UNIT)
            pattern.text(r"\]")
            caught = f"({name if choice else f'int({name})'}, float({probability}))"
            if not place:
                first = name
                made.append(f"    p{index} = [{caught}]")
            else:
                made += [f"    if {name} is not None:", f"        p{index}.append({caught})"]
        pattern.text(")?" * (len(options) - 1))
        pattern.text(r"\]))?")
        listed = first
        made.append(f"    p{index} = tuple(p{index})")
    return [
        f"if {listed} is not None:",
        *made,
        f"    d{index} = _distribution(p{index}, _options{index}, v{index})",
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
