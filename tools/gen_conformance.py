"""Write the generated cases of the conformance corpus: the rules that have a law.

Run ``python tools/gen_conformance.py`` after changing this file or any case file:
it also writes ``corpus.json``, the JSON form of the whole corpus that the runner reads while
it is current. ``--check`` only says whether the files on disk are what it would write (the
test suite checks the same), and ``--node`` also checks the JavaScript table below against
Node.js, when it is installed.

Two laws are generated:

* threshold edges (decision 7): for seeded random thresholds, an answer exactly at ``pass``,
  the next double below it, exactly at ``fail``, the next double below and above it, and the
  same for confidence thresholds and rubric levels;
* number formatting (decision 11): JavaScript's ``String(x)`` for a table of numbers,
  recorded from Node.js v20 and checked by hand against ECMA-262 Number::toString, both as
  plain numbers and, for probabilities, inside issue lines.

A development tool of this repository, outside the runtime package (no install ships it):
the runner never needs it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import subprocess
import sys
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from checkprofile.conformance import CORPUS_JSON, Case, corpus_json, load_cases

# The checkout this runs in, and where the generated files go (inside the package, beside the
# hand-written ones).
ROOT: Final = Path(__file__).resolve().parent.parent
CASES: Final = ROOT / "checkprofile" / "conformance" / "cases"

# The fixed time and model of every generated verdict (decision 14: the host gives `at`).
AT: Final = "2026-10-06T09:04:20Z"
MODEL: Final = "example-evaluator-1"
SEED: Final = 20261006

#: JavaScript's ``String(x)`` (ECMA-262 Number::toString, radix 10), recorded from Node.js
#: v20.20.2 by :func:`check_node` (``python tools/gen_conformance.py --node``).
#: Each row was also worked by hand: let n, k, s be the decimal exponent, digit count and
#: shortest digits of x (x = s × 10^(n-k)); k <= n <= 21 prints the digits and n-k zeros;
#: 0 < n <= 21 puts the point after n digits; -6 < n <= 0 prints "0." and -n zeros first;
#: otherwise exponent form "d.ddde±(n-1)". -0 prints as "0".
JS_STRINGS: Final[tuple[tuple[float, str], ...]] = (
    (0.0, "0"),
    (-0.0, "0"),
    (1.0, "1"),
    (100.0, "100"),
    (0.1, "0.1"),
    (0.12, "0.12"),
    (0.9, "0.9"),
    (0.5, "0.5"),
    (0.30000000000000004, "0.30000000000000004"),
    (0.3333333333333333, "0.3333333333333333"),
    (0.6666666666666666, "0.6666666666666666"),
    (0.8999999999999999, "0.8999999999999999"),
    (0.9999999999999999, "0.9999999999999999"),
    (0.00005, "0.00005"),
    (0.00001, "0.00001"),
    (0.000001, "0.000001"),
    (0.000001234, "0.000001234"),
    (1e-7, "1e-7"),
    (1.5e-7, "1.5e-7"),
    (1.234e-7, "1.234e-7"),
    (9.5367431640625e-7, "9.5367431640625e-7"),
    (2.220446049250313e-16, "2.220446049250313e-16"),
    (1.23e-18, "1.23e-18"),
    (2.2250738585072014e-308, "2.2250738585072014e-308"),
    (1e-323, "1e-323"),
    (5e-324, "5e-324"),
    (-1e-7, "-1e-7"),
    (-1.5, "-1.5"),
    (12345.678, "12345.678"),
    (123456789.0, "123456789"),
    (1e15, "1000000000000000"),
    (1e16, "10000000000000000"),
    (9007199254740992.0, "9007199254740992"),
    (1e20, "100000000000000000000"),
    (1.2345678901234568e20, "123456789012345680000"),
    (9.999999999999999e20, "999999999999999900000"),
    (1e21, "1e+21"),
    (1.5e21, "1.5e+21"),
    (1e100, "1e+100"),
    (1.5e300, "1.5e+300"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
)


#: The probabilities of JS_STRINGS also shown inside an issue line: one of each way
#: Number::toString can print a number in [0, 1] (a few, since the corpus is read by a
#: pure-Python YAML parser and must stay quick to load).
IN_LINES: Final = frozenset(
    {
        0.0,
        1.0,
        0.1,
        0.30000000000000004,
        0.00005,
        0.000001,
        1e-7,
        1.234e-7,
        5e-324,
        0.9999999999999999,
    }
)


# -- a small YAML writer ------------------------------------------------------------------------
# Every file it writes reads the same under YAML 1.2 (core schema) and YAML 1.1: strings are
# double-quoted JSON strings (so "yes", "no", "on", "off" and timestamps stay strings), keys are
# plain only when they are lower-case words no YAML version reads otherwise, and floats always
# have a "." in the mantissa and a signed exponent (YAML 1.1 reads "1e-7" as a string).

_PLAIN_KEY = re.compile(r"[a-z_][a-z0-9_]*\Z")
# Plain scalars YAML 1.1 gives another type (booleans, null), which must be quoted as keys.
_YAML11_WORDS = frozenset(
    {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"}
)


def yaml_float(value: float) -> str:
    """``value`` as a YAML float both YAML 1.1 and 1.2 read as the same double."""
    if not math.isfinite(value):
        raise ValueError(f"the corpus holds JSON numbers only, got {value!r}")
    text = repr(value)  # the shortest digits that round-trip
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    if exponent:
        sign = exponent[0] if exponent[0] in "+-" else "+"
        exponent = "e" + sign + exponent.lstrip("+-")
    return mantissa + exponent


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return yaml_float(value)
    if isinstance(value, str):
        if ('"' in value or "\\" in value) and value.isprintable():
            # Single quotes keep JSON text (a run data view) readable: nothing is escaped.
            return "'" + value.replace("'", "''") + "'"
        return _quoted(value)
    raise TypeError(f"not JSON data: {value!r}")


# Characters written as \uXXXX escapes in a double-quoted scalar, beyond the C0 controls JSON
# escapes itself: DEL and the C1 controls (not printable in YAML 1.2), NEL, LS and PS (line
# breaks to a YAML 1.1 reader), the BOM, and lone surrogates. Every YAML version reads the
# escape as the same character.
_ESCAPE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")


def _quoted(text: str) -> str:
    return _ESCAPE.sub(
        lambda match: f"\\u{ord(match.group()):04x}", json.dumps(text, ensure_ascii=False)
    )


def _key(key: str) -> str:
    if _PLAIN_KEY.match(key) and key not in _YAML11_WORDS:
        return key
    return _quoted(key)


def _flow(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)}: {_flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(item) for item in value) + "]"
    return _scalar(value)


# A container whose flow form fits in this many characters is written on one line.
_FLOW_WIDTH = 72


def _block(value: object, indent: int) -> Iterator[str]:
    """Lines of ``value`` (a non-empty dict or list) in block style at ``indent`` spaces."""
    pad = " " * indent
    if isinstance(value, dict):
        for key, item in value.items():
            if _is_block(item, indent + len(_key(key)) + 2):
                yield f"{pad}{_key(key)}:"
                yield from _block(item, indent + 2)
            else:
                yield f"{pad}{_key(key)}: {_flow(item)}"
        return
    assert isinstance(value, list)
    for item in value:
        if _is_block(item, indent + 2):
            lines = list(_block(item, indent + 2))
            if isinstance(item, dict):
                yield f"{pad}- {lines[0].lstrip()}"
                yield from lines[1:]
            else:
                yield f"{pad}-"
                yield from lines
        else:
            yield f"{pad}- {_flow(item)}"


def _is_block(value: object, used: int) -> bool:
    if not isinstance(value, (dict, list)) or not value:
        return False
    return used + len(_flow(value)) > _FLOW_WIDTH + 28 or any(
        isinstance(item, (dict, list)) and item
        for item in (value.values() if isinstance(value, dict) else value)
    )


def dump_cases(header: str, cases: Sequence[Mapping[str, Any]]) -> str:
    """A case file: ``header`` as comment lines, then the cases as a YAML sequence."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for case in cases:
        lines.append("")
        lines.extend(_block([dict(case)], 0))
    return "\n".join(lines) + "\n"


# -- threshold edges ----------------------------------------------------------------------------


def _below(x: float) -> float:
    return math.nextafter(x, -math.inf)


def _above(x: float) -> float:
    return math.nextafter(x, math.inf)


def _threshold(rng: random.Random, low: float, high: float) -> float:
    # Short decimals as people write them, and arbitrary doubles as a model could emit them.
    value = rng.uniform(low, high)
    digits = rng.choice((1, 2, 3, None))
    return value if digits is None else round(value, digits)


def _js(x: float) -> str:
    """JavaScript's String(x) for the numbers this module generates (all in [0, 1]).

    An oracle written from ECMA-262 (the note on JS_STRINGS), on purpose not the library's
    ``js_number``: an expected value must not come from the code under test. The test suite
    checks it against every row of JS_STRINGS, which Node.js printed.
    """
    if x == 0:
        return "0"
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    n = len(whole) + int(exponent or 0) - (len(whole + fraction) - len(digits))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    head = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{head}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


def _verdict_case(
    case_id: str,
    rule: str,
    decisions: list[int],
    question: dict[str, Any],
    kind: str,
    answer: dict[str, Any],
    result: str,
    line: str | None,
) -> dict[str, Any]:
    ask = question["ask"]
    record: dict[str, Any] = {"ask": ask, "kind": kind}
    if kind == "yes_no":
        record["answer"] = answer["p"]
    else:
        record["answer"] = answer["name"] if kind == "choice" else answer["level"]
        record["confidence"] = answer["confidence"]
    record["result"] = result
    return {
        "id": case_id,
        "stage": "grading",
        "rule": rule,
        "decisions": decisions,
        "check": [question],
        "answers": [answer],
        "model": MODEL,
        "at": AT,
        "expect": {
            "results": [result],
            "verdict": result,
            "verdict_json": {
                "verdict": result,
                "advisory": False,
                "model": MODEL,
                "questions": [record],
                "at": AT,
            },
            "issue_lines": [] if line is None else [f"check: {ask} → {line}"],
        },
    }


def _yes_no_edges(rng: random.Random, count: int) -> Iterator[dict[str, Any]]:
    ask = "Is the report attached?"
    for number in range(1, count + 1):
        pass_at = _threshold(rng, 0.5, 0.99)
        with_fail = number % 2 == 0
        # Rounding may carry a fail past pass; fail <= pass is the check key's rule (decision 3).
        fail = min(_threshold(rng, 0.05, pass_at), pass_at) if with_fail else None
        question: dict[str, Any] = {"ask": ask, "pass": pass_at}
        if fail is not None:
            question["fail"] = fail
        below_pass = "unsure" if fail is not None and _below(pass_at) >= fail else "fail"
        edges: list[tuple[str, float, str]] = [
            ("at-pass", pass_at, "pass"),
            ("above-pass", _above(pass_at), "pass"),
            ("below-pass", _below(pass_at), below_pass),
        ]
        if fail is not None:
            edges += [
                ("at-fail", fail, "unsure" if fail < pass_at else "pass"),
                ("above-fail", _above(fail), "unsure" if _above(fail) < pass_at else "pass"),
                ("below-fail", _below(fail), "fail"),
            ]
        band = f"pass {_js(pass_at)}" + (f", fail {_js(fail)}" if fail is not None else "")
        for name, p, result in edges:
            if not 0 <= p <= 1:
                continue
            yield _verdict_case(
                f"grading/gen-yes-no-{number:02d}-{name}",
                f"yes/no ({band}): p = {_js(p)}, {name.replace('-', ' ')}, is {result}.",
                [7] if result == "pass" else [7, 11],
                question,
                "yes_no",
                {"p": p},
                result,
                None if result == "pass" else f"no ({_js(p)})",
            )


def _confidence_edges(rng: random.Random, count: int) -> Iterator[dict[str, Any]]:
    one_of = {
        "states": "States the verdict.",
        "hedges": "Avoids a verdict.",
        "unclear": "Cannot tell.",
    }
    levels = ["Neither list.", "One list.", "Both lists."]
    for number in range(1, count + 1):
        threshold = _threshold(rng, 0.05, 0.99)
        choice = number % 2 == 1
        if choice:
            question: dict[str, Any] = {
                "ask": "What does the summary do?",
                "one_of": one_of,
                "pass": ["states"],
                "unsure": ["unclear"],
                "confidence": threshold,
            }
            name = rng.choice(("states", "hedges"))
            graded = "pass" if name == "states" else "fail"
        else:
            pass_level = rng.choice((1, 2))
            question = {
                "ask": "How complete is the screening?",
                "levels": levels,
                "pass": pass_level,
                "confidence": threshold,
            }
            level = rng.choice((pass_level - 1, pass_level))
            graded = "pass" if level >= pass_level else "fail"
        kind = "choice" if choice else "rubric"
        for edge, confidence, result in (
            ("at-threshold", threshold, graded),
            ("above-threshold", _above(threshold), graded),
            ("below-threshold", _below(threshold), "unsure"),
        ):
            if not 0 <= confidence <= 1:
                continue  # past 1: not a confidence at all (the unfit cases show those)
            if choice:
                answer: dict[str, Any] = {"name": name, "confidence": confidence}
                shown = f"{name} ({_js(confidence)})"
                given = f"choice (confidence {_js(threshold)}): {name}"
            else:
                answer = {"level": level, "confidence": confidence}
                shown = f"level {level}: {levels[level]} ({_js(confidence)})"
                given = f"rubric (pass {pass_level}, confidence {_js(threshold)}): level {level}"
            yield _verdict_case(
                f"grading/gen-{kind}-{number:02d}-{edge}",
                f"{given} at confidence {_js(confidence)}, {edge.replace('-', ' ')}, is {result}.",
                [7] if result == "pass" else [7, 11],
                question,
                kind,
                answer,
                result,
                None if result == "pass" else shown,
            )


def threshold_cases() -> list[dict[str, Any]]:
    """Seeded random thresholds and the answers at and beside each edge."""
    rng = random.Random(SEED)
    return [*_yes_no_edges(rng, 8), *_confidence_edges(rng, 8)]


# -- number formatting --------------------------------------------------------------------------


def _slug(x: float) -> str:
    text = "minus-zero" if x == 0 and math.copysign(1, x) < 0 else repr(x)
    return re.sub(r"[^a-z0-9]+", "-", text.lower().replace("-", "m").replace("+", "p")).strip("-")


def number_cases() -> list[dict[str, Any]]:
    """JavaScript's String(x) for every number of the table, and in an issue line for those
    that are probabilities."""
    cases: list[dict[str, Any]] = []
    for x, text in JS_STRINGS:
        cases.append(
            {
                "id": f"grading/gen-js-number-{_slug(x)}",
                "stage": "grading",
                "rule": f"Numbers print as JavaScript's String(x): {yaml_float(x)} prints {text}.",
                "decisions": [11],
                "number": x,
                "expect": {"text": text},
            }
        )
    question = {
        "ask": "What does the summary do?",
        "one_of": {"states": "States the verdict.", "hedges": "Avoids a verdict."},
        "pass": ["states"],
        "confidence": 0,
    }
    for x, text in JS_STRINGS:
        if x not in IN_LINES or math.copysign(1, x) < 0:  # -0 is in the plain cases only
            continue
        cases.append(
            _verdict_case(
                f"grading/gen-js-line-{_slug(x)}",
                f"A confidence of {yaml_float(x)} prints as {text} in an issue line.",
                [11],
                question,
                "choice",
                {"name": "hedges", "confidence": x},
                "fail",
                f"hedges ({text})",
            )
        )
    return cases


# -- whitespace ---------------------------------------------------------------------------------
# "Whitespace" is Unicode's White_Space property (docs/conformance.md, "Text"). The generator
# derives it from the Unicode database as PropList.txt defines it, not from the library: the
# separators (Zs, Zl, Zp), U+0009-U+000D and U+0085. Beside its 25 code points, the characters
# other definitions call whitespace (Python's str.isspace: U+001C-U+001F; JavaScript's \s:
# U+FEFF) or that look like it (U+200B, U+180E, U+2060) are shown to be text.

#: Names of the control characters, which the Unicode database leaves unnamed.
_CONTROL_NAMES: Final = {
    0x09: "CHARACTER TABULATION",
    0x0A: "LINE FEED",
    0x0B: "LINE TABULATION",
    0x0C: "FORM FEED",
    0x0D: "CARRIAGE RETURN",
    0x1C: "INFORMATION SEPARATOR FOUR",
    0x1D: "INFORMATION SEPARATOR THREE",
    0x1E: "INFORMATION SEPARATOR TWO",
    0x1F: "INFORMATION SEPARATOR ONE",
    0x85: "NEXT LINE",
}
LOOK_ALIKES: Final = "\x1c\x1d\x1e\x1f\ufeff\u200b\u180e\u2060"
#: The look-alikes that are Default_Ignorable_Code_Point (DerivedCoreProperties.txt, which
#: Python's unicodedata does not carry): invisible, so texts that differ only by them read as
#: the same text (issue 21), though they are not whitespace.
INVISIBLE: Final = "\ufeff\u200b\u180e\u2060"


def white_space() -> str:
    """Unicode's White_Space property, in code point order."""
    return "".join(
        char
        for char in map(chr, range(sys.maxunicode + 1))
        if unicodedata.category(char) in ("Zs", "Zl", "Zp") or char in "\t\n\v\f\r\x85"
    )


def _collapsed(text: str, space: str) -> str:
    words, word = [], ""
    for char in text:
        if char in space:
            words.append(word)
            word = ""
        else:
            word += char
    return " ".join(w for w in [*words, word] if w)


def _whitespace_cases(char: str, space: str) -> Iterator[dict[str, Any]]:
    code = f"U+{ord(char):04X}"
    named = f"{code} {_CONTROL_NAMES.get(ord(char)) or unicodedata.name(char)}"
    slug = f"u{ord(char):04x}"
    is_space = char in space
    choice_ask, rubric_ask = "What does the summary do?", "How complete is the screening?"
    blank: list[dict[str, Any]] = [
        {"ask": char},
        {
            "ask": choice_ask,
            "one_of": {char: "Blank.", "hedges": char},
            "pass": ["hedges"],
        },
        {"ask": rubric_ask, "levels": ["Neither list.", char], "pass": 1},
    ]
    yield {
        "id": f"check_keys/gen-ws-{slug}-blank",
        "stage": "check_keys",
        "rule": f"{named} is {'whitespace' if is_space else 'not whitespace'}: an ask, an answer"
        f" name, a description or a level made of it {'is blank' if is_space else 'is text'}.",
        "decisions": [4, 5, 6],
        "check": blank,
        "expect": {
            "valid": False,
            "problems": ["/0/ask", f"/1/one_of/{char}", "/1/one_of/hedges", "/2/levels/1"],
        }
        if is_space
        else {
            "valid": True,
            "full": [
                {"ask": char, "pass": 0.9},
                {**blank[1], "unsure": [], "confidence": 0.8},
                {**blank[2], "confidence": 0.8},
            ],
        },
    }
    ask = "Is the report attached?"
    spaced = f"{char}Is the report{char} attached?{char}"
    same: list[dict[str, Any]] = [
        {"ask": ask},
        {"ask": spaced},
        {"ask": rubric_ask, "levels": ["One list.", f"One{char}list."], "pass": 1},
    ]
    if char in INVISIBLE:  # removed, not a space: "One<char>list." reads "Onelist."
        rule = (
            f"{named} is invisible, not whitespace: asks that differ only by it are the same,"
            " and a level text with it between two words reads as one word."
        )
        expected: list[str] | None = ["/1/ask"]
    else:
        rule = (
            f"{named} is {'whitespace' if is_space else 'not whitespace'}: asks and level"
            f" texts that differ only by it {'are the same' if is_space else 'differ'}."
        )
        expected = ["/1/ask", "/2/levels/1"] if is_space else None
    yield {
        "id": f"check_keys/gen-ws-{slug}-same",
        "stage": "check_keys",
        "rule": rule,
        "decisions": [5, 6],
        "check": same,
        "expect": {"valid": False, "problems": expected}
        if expected
        else {
            "valid": True,
            "full": [
                {"ask": ask, "pass": 0.9},
                {"ask": spaced, "pass": 0.9},
                {**same[2], "confidence": 0.8},
            ],
        },
    }
    # In an issue line, runs of whitespace in the ask, the answer name and the level text are
    # one space, with none at the ends; the record keeps every text as written.
    line_ask = f"{char}Is the{char}{char}report attached?{char}"
    name = f"needs{char}work"
    level = f"Neither{char}{char}list."
    check = [
        {"ask": line_ask},
        {
            "ask": choice_ask,
            "one_of": {name: "Needs work.", "fine": "Fine."},
            "pass": ["fine"],
        },
        {"ask": rubric_ask, "levels": [level, "Both lists."], "pass": 1},
    ]
    records = [
        {"ask": line_ask, "kind": "yes_no", "answer": 0.1, "result": "fail"},
        {"ask": choice_ask, "kind": "choice", "answer": name, "confidence": 0.9, "result": "fail"},
        {"ask": rubric_ask, "kind": "rubric", "answer": 0, "confidence": 0.9, "result": "fail"},
    ]
    shown = space if is_space else ""
    yield {
        "id": f"grading/gen-ws-{slug}-line",
        "stage": "grading",
        "rule": f"{named} is {'whitespace' if is_space else 'not whitespace'}: issue lines"
        f" {'collapse' if is_space else 'keep'} it in the ask, the answer name and the level"
        " text; the record keeps them as written.",
        "decisions": [11],
        "check": check,
        "answers": [
            {"p": 0.1},
            {"name": name, "confidence": 0.9},
            {"level": 0, "confidence": 0.9},
        ],
        "model": MODEL,
        "at": AT,
        "expect": {
            "results": ["fail", "fail", "fail"],
            "verdict": "fail",
            "verdict_json": {
                "verdict": "fail",
                "advisory": False,
                "model": MODEL,
                "questions": records,
                "at": AT,
            },
            "issue_lines": [
                f"check: {_collapsed(line_ask, shown)} → no (0.1)",
                f"check: {choice_ask} → {_collapsed(name, shown)} (0.9)",
                f"check: {rubric_ask} → level 0: {_collapsed(level, shown)} (0.9)",
            ],
        },
    }


def whitespace_cases(phase: str) -> list[dict[str, Any]]:
    """Every White_Space code point and every look-alike, in asks, names, levels and lines."""
    space = white_space()
    stage = f"{phase}/"
    return [
        case
        for char in sorted(space + LOOK_ALIKES)
        for case in _whitespace_cases(char, space)
        if case["id"].startswith(stage)
    ]


# -- lengths ------------------------------------------------------------------------------------
# A length in characters counts Unicode code points, not UTF-16 code units (JSON Schema's
# maxLength and minLength; docs/conformance.md, "Where core-2 meets the profile"). Each text with
# a length limit is shown at its limit in a character beyond U+FFFF (two UTF-16 units each, so a
# UTF-16 count would refuse it), and one character over.

#: A character beyond U+FFFF: MATHEMATICAL SCRIPT CAPITAL A, two UTF-16 code units.
ASTRAL: Final = "\U0001d49c"

_PROCESS: Final[Mapping[str, Any]] = {
    "name": "expense",
    "description": "An expense report.",
    "steps": [{"id": "a", "agent": "Do."}],
}


def _length_cases(
    name: str,
    what: str,
    shape: str,
    limit: int,
    value: Callable[[str], Any],
    pointer: str,
    **extra: Any,
) -> Iterator[dict[str, Any]]:
    """``what`` of ``limit`` characters beyond U+FFFF, taken, and of one more, refused at
    ``pointer``; ``value`` makes the value judged from the text."""
    for count in (limit, limit + 1):
        taken = count <= limit
        yield {
            "id": f"shapes/gen-length-{name}-{count}",
            "stage": "shapes",
            "rule": f"Lengths count code points: {what} of {count} characters beyond U+FFFF"
            f" ({2 * count} UTF-16 units) is {'taken' if taken else 'refused'}.",
            "decisions": [15] if shape == "process" else [16],
            "shape": shape,
            **extra,
            "value": value(ASTRAL * count),
            "expect": {"valid": True} if taken else {"valid": False, "problems": [pointer]},
        }


def length_cases() -> list[dict[str, Any]]:
    """Each length-limited text of a process file and a submission, at its limit and one over,
    in characters beyond U+FFFF. (A process's name is limited too, but its pattern takes only
    a-z, 0-9 and "-", whose code points and UTF-16 units are the same.)"""
    return [
        *_length_cases(
            "template",
            "an email template name",
            "process",
            100,
            lambda text: {**_PROCESS, "emails": {"templates": [text]}},
            "/emails/templates/0",
        ),
        *_length_cases(
            "resource",
            "a data source's resource",
            "process",
            200,
            lambda text: {
                **_PROCESS,
                "data_sources": [{"key": "crm", "operations": ["read"], "resources": [text]}],
            },
            "/data_sources/0/resources/0",
        ),
        *_length_cases(
            "agent-summary",
            "an agent's summary",
            "submission",
            2000,
            lambda text: {"output": {}, "summary": text},
            "/summary",
            agent=True,
        ),
        *_length_cases(
            "reason",
            "a submission's reason",
            "submission",
            4000,
            lambda text: {"output": {}, "reason": text},
            "/reason",
        ),
    ]


# -- files --------------------------------------------------------------------------------------

_HEADER = """Generated by python tools/gen_conformance.py: do not edit by hand.
{what}
YAML 1.2 core schema, written so that YAML 1.1 readers get the same data
(see docs/conformance.md)."""

FILES: Final[Mapping[str, tuple[str, Callable[[], list[dict[str, Any]]]]]] = {
    "shapes/gen_lengths.yaml": (
        "Lengths count Unicode code points, not UTF-16 units (decisions 15 and 16): each"
        " length-limited text at its limit in characters beyond U+FFFF, and one over.",
        length_cases,
    ),
    "grading/gen_thresholds.yaml": (
        f"Threshold edges (decision 7) for random thresholds, seed {SEED}: at each threshold,"
        " and the next double above and below it.",
        threshold_cases,
    ),
    "grading/gen_numbers.yaml": (
        "JavaScript's String(x) (decision 11), recorded from Node.js v20, alone and in issue"
        " lines.",
        number_cases,
    ),
    "check_keys/gen_whitespace.yaml": (
        "Whitespace is Unicode's White_Space property (decisions 4, 5, 6): each of its 25 code"
        " points, and 8 look-alikes that are not, alone and inside asks, names and levels.",
        lambda: whitespace_cases("check_keys"),
    ),
    "grading/gen_whitespace.yaml": (
        "Whitespace is Unicode's White_Space property (decision 11): each of its 25 code"
        " points, and 8 look-alikes that are not, in issue lines.",
        lambda: whitespace_cases("grading"),
    ),
}


#: The design's decisions where the spec is silent (design.md), as the docs name them.
DECISIONS: Final[Mapping[int, str]] = {
    1: "Shapes",
    2: "Defaults",
    3: "Numbers",
    4: "Choice",
    5: "Rubric",
    6: "Text",
    7: "Grading",
    8: "Bad answers fail closed",
    9: "Retry",
    10: "Outcome",
    11: "Issue lines",
    12: "What the evaluator sees",
    13: "Truncation",
    14: "Time",
    15: "Process files",
    16: "The route",
    17: "Records",
    18: "Run data at the edges",
}

# docs/conformance.md; its coverage table sits between these.
DOC: Final = ROOT / "docs" / "conformance.md"
COVERAGE_START: Final = "<!-- coverage: written by python tools/gen_conformance.py -->"
COVERAGE_END: Final = "<!-- end of coverage -->"


def coverage_markdown(cases: Sequence[Case]) -> str:
    """The docs' table of each decision and the cases that cover it (generated ones counted)."""
    rows = ["| Decision | Cases |", "|---|---|"]
    for number, title in DECISIONS.items():
        covering = [case for case in cases if number in case.decisions]
        hand = [f"`{case.id}`" for case in covering if "/gen_" not in case.source]
        generated: dict[str, int] = {}
        for case in covering:
            if "/gen_" in case.source:
                name = f"{case.stage}/{case.source.rsplit('/', 1)[-1]}"
                generated[name] = generated.get(name, 0) + 1
        cells = hand + [f"{count} generated in `{name}`" for name, count in generated.items()]
        rows.append(f"| {number}. {title} | {', '.join(cells)} |")
    return "\n".join([COVERAGE_START, "", *rows, "", COVERAGE_END]) + "\n"


def _with_coverage(doc: str, cases: Sequence[Case]) -> str:
    start, end = doc.find(COVERAGE_START), doc.find(COVERAGE_END)
    if start < 0 or end < start:
        raise SystemExit(f"{DOC}: no coverage markers ({COVERAGE_START} ... {COVERAGE_END})")
    return doc[:start] + coverage_markdown(cases) + doc[end + len(COVERAGE_END) + 1 :]


def render() -> dict[str, str]:
    """Each generated file's path (under ``cases/``) and its text."""
    return {
        path: dump_cases(_HEADER.format(what=what), make()) for path, (what, make) in FILES.items()
    }


def check_node() -> list[str]:
    """Rows of JS_STRINGS that Node.js prints differently (empty when all agree)."""
    numbers = [repr(x) for x, _ in JS_STRINGS]
    script = "for (const s of process.argv.slice(1)) console.log(String(Number(s)))"
    done = subprocess.run(
        ["node", "-e", script, "--", *numbers], capture_output=True, text=True, check=True
    )
    printed = done.stdout.splitlines()
    return [
        f"{number}: the table says {text!r}, Node.js prints {shown!r}"
        for number, (_, text), shown in zip(numbers, JS_STRINGS, printed, strict=True)
        if text != shown
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="only compare, write nothing")
    parser.add_argument("--node", action="store_true", help="check the table against Node.js")
    args = parser.parse_args(argv)
    if args.node:
        wrong = check_node()
        for line in wrong:
            print(line, file=sys.stderr)
        if wrong:
            return 1
    stale = []
    for path, text in render().items():
        target = CASES / path
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            continue
        stale.append(path)
        if not args.check:
            target.write_text(text, encoding="utf-8")
    # The JSON form follows the YAML as written just now.
    form, text = CASES.parent / CORPUS_JSON, corpus_json(CASES)
    if not form.exists() or form.read_text(encoding="utf-8") != text:
        stale.append(str(form))
        if not args.check:
            form.write_text(text, encoding="utf-8")
    if DOC.exists():
        # The docs list every case id, so they follow the corpus as written just now.
        doc = DOC.read_text(encoding="utf-8")
        updated = _with_coverage(doc, load_cases(CASES))
        if updated != doc:
            stale.append(str(DOC))
            if not args.check:
                DOC.write_text(updated, encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
