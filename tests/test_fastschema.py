"""The fast schema interpreter answers as jsonschema does, for every schema the package ships.

``checkprofile._fastschema`` lets a valid value skip jsonschema (its import alone costs more
than a whole ``lint``), and gives the check key's structural pass jsonschema's own errors. It
is only worth having if it never disagrees, so every claim is held against jsonschema itself,
over values generated from real ones: the conformance corpus, the examples' process files, run
data and submissions, and the records the human side writes, each mutated (keys removed, added
and misspelt, values swapped for values of other kinds and for other parts of real data).

* On plain JSON data, ``is_valid`` is jsonschema's answer (the stock validator, and for a
  process file one whose numbers are finite, as the process check's are).
* On anything else (NaN, subclasses of str and int, tuples, values the check key's bounding
  stands in for), ``is_valid`` never says valid where any of them says invalid.
* ``iter_errors`` gives exactly jsonschema's errors (with ``anyOf``'s and ``oneOf``'s context):
  for the check key's structural pass, a process file's frontmatter, and each of core-2's
  shapes, so explaining a bad value needs no jsonschema either.
* Every real value is valid by the fast path (so the fast path is taken, not just safe).
"""

from __future__ import annotations

import copy
import enum
import json
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkprofile import _validate, load_process, schema_registry
from checkprofile._convert import bounded, is_finite
from checkprofile._fastschema import Validator
from checkprofile._schemas import schema_file
from checkprofile._shown import Opaque
from checkprofile.conformance import case_schema, load_cases

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
AT = "2026-10-06T09:04:20Z"

SHAPES = ("run-data", "step-record", "submission", "candidate", "handoff", "escalation")
SCHEMAS = ("check", "verdict", "process", *SHAPES, "case")


class Text(str):
    """A str subclass: jsonschema takes it as a string, the run data check does not."""


class Number(enum.IntEnum):
    ONE = 1


# What a mutation puts in place of a value: plain JSON of every kind, and odd values.
PLAIN = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    10,
    0.5,
    1.5,
    2.0,
    -0.0,
    10**30,
    "",
    " ",
    "x",
    "\u3000",
    "Check",
    "check",
    "pass",
    "file",
    "link",
    "approved",
    "yes_no",
    "check_keys",
    "grading",
    AT,
    "2026-10-06",
    "@example.com",
    [],
    {},
    ["x"],
    ["x", "x"],
    [1, True],
    {"x": 1},
    {"ask": "x"},
]
ODD = [
    float("nan"),
    float("inf"),
    Text("x"),
    Text(""),
    Number.ONE,
    ("x",),
    Opaque("a map"),
    {1: "x"},
]


@cache
def seeds() -> dict[str, list[Any]]:
    """Real values of each shape, all valid."""
    cases = load_cases()
    verdicts = [
        c.data["expect"]["verdict_json"] for c in cases if "verdict_json" in c.data["expect"]
    ]
    run_data = [json.loads(p.read_text("utf-8")) for p in sorted(EXAMPLES.glob("*/run-data.json"))]
    records = [record for data in run_data for record in data["steps"].values()]
    submissions = [
        json.loads(p.read_text("utf-8")) for p in sorted(EXAMPLES.glob("*/submission*.json"))
    ]
    candidates = [
        {**submission, "check": verdict, "by": "agent", "at": AT}
        for submission, verdict in zip(submissions, verdicts, strict=False)
    ]
    returned = {"note": "Add the receipts.", "by": "ana@example.com", "at": AT}
    return {
        "check": [
            c.data["check"]
            for c in cases
            if "check" in c.data and c.data["expect"].get("valid", c.stage != "check_keys")
        ],
        "verdict": verdicts,
        "process": [
            copy.deepcopy(dict(load_process(p).data)) for p in sorted(EXAMPLES.glob("*/PROCESS.md"))
        ],
        "run-data": run_data,
        "step-record": records,
        "submission": submissions,
        "candidate": candidates,
        "handoff": [
            {"progress": "half done", "returned": returned, "issues": ["x"], "check": verdicts[0]},
            {"returned": returned},
            {},
        ],
        "escalation": [
            {**returned, "check": verdicts[1], "candidate": candidate} for candidate in candidates
        ],
        "case": [c.data for c in cases],
    }


def schema_of(name: str) -> dict[str, Any]:
    return case_schema() if name == "case" else schema_file(name)


@cache
def fast(name: str) -> Validator:
    every = ("check", "verdict", "process", *SHAPES)
    return Validator(schema_of(name), resources=[schema_file(n) for n in every])


@cache
def dialects(name: str) -> tuple[Callable[[Any], bool], ...]:
    """Every jsonschema validator the package uses for ``name``, as ``is_valid``."""
    return (stock(name).is_valid,)


@cache
def stock(name: str) -> jsonschema.Draft202012Validator:
    """jsonschema's own validator for ``name``, with finite numbers for a process file."""
    kind: Any = jsonschema.Draft202012Validator
    if name == "process":
        checker = kind.TYPE_CHECKER.redefine("number", lambda _, value: is_finite(value))
        kind = jsonschema.validators.extend(kind, type_checker=checker)  # type: ignore[no-untyped-call]
    return kind(schema_of(name), registry=schema_registry())  # type: ignore[no-any-return]


@cache
def fragments(name: str) -> list[Any]:
    """Every part of the real values of ``name``: real data to put where it does not belong."""
    found: list[Any] = []

    def walk(value: Any) -> None:
        found.append(value)
        children = value.values() if isinstance(value, dict) else value
        if isinstance(value, (dict, list)):
            for child in children:
                walk(child)

    for value in seeds()[name]:
        walk(value)
    return found


def containers(value: Any) -> Iterator[Any]:
    if isinstance(value, (dict, list)):
        yield value
        for child in value.values() if isinstance(value, dict) else value:
            yield from containers(child)


@cache
def keys() -> list[str]:
    """Every property name of the shipped schemas, and some near misses."""
    names: set[str] = {"zz", "Check", "chek", "input", "questionz"}
    for name in SCHEMAS:
        text = json.dumps(schema_of(name))
        for schema in containers(json.loads(text)):
            if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
                names.update(schema["properties"])
    return sorted(names)


@st.composite
def mutated(draw: st.DrawFn, name: str, odd: bool = False) -> Any:
    """A real value of ``name``'s shape, changed in up to four places."""
    real = seeds()[name]
    values = st.sampled_from(PLAIN) | st.sampled_from(fragments(name))
    if odd:
        values = values | st.sampled_from(ODD)
    value = copy.deepcopy(draw(st.sampled_from(real)))
    for _ in range(draw(st.integers(0, 4))):
        nodes = list(containers(value))
        if not nodes:
            break
        node = nodes[draw(st.integers(0, len(nodes) - 1))]
        action = draw(st.sampled_from(["set", "remove", "add"]))
        new = copy.deepcopy(draw(values))
        if isinstance(node, dict):
            names = list(node)
            if action == "set" and names:
                node[draw(st.sampled_from(names))] = new
            elif action == "remove" and names:
                del node[draw(st.sampled_from(names))]
            else:
                node[draw(st.sampled_from(keys()))] = new
        elif action == "set" and node:
            node[draw(st.integers(0, len(node) - 1))] = new
        elif action == "remove" and node:
            del node[draw(st.integers(0, len(node) - 1))]
        else:
            node.append(new)
    if draw(st.integers(0, 20)) == 0:
        return copy.deepcopy(draw(values))  # the whole value of another kind
    return value


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_real_value_is_valid_by_the_fast_path(name: str) -> None:
    for value in seeds()[name]:
        assert fast(name).is_valid(value), value


def is_plain(value: Any) -> bool:
    """Plain JSON data: exact types, finite numbers, text keys, all the way down."""
    if type(value) is dict:
        return all(type(k) is str and is_plain(v) for k, v in value.items())
    if type(value) is list:
        return all(is_plain(item) for item in value)
    if type(value) is float:
        return value == value and value not in (float("inf"), float("-inf"))
    return type(value) in (str, int, bool, type(None))


@pytest.mark.parametrize("name", SCHEMAS)
def test_the_answer_is_jsonschemas_and_never_valid_where_it_is_not(name: str) -> None:
    # On plain JSON: the same answer as every validator the package uses for the shape. On
    # anything else: never "valid" where any of them says invalid.
    @given(mutated(name, odd=True))
    def check(value: Any) -> None:
        answer = fast(name).is_valid(value)
        for is_valid in dialects(name):
            if is_plain(value):
                assert answer == is_valid(value), value
            elif answer:
                assert is_valid(value), value

    check()


# The check key's structural pass: jsonschema's errors, one for one ---------------------------


def error_rows(errors: Any) -> tuple[list[Any], list[Any]]:
    """Each error as (keyword, value, instance, schema, path, schema path, its context's rows);
    those under an additionalProperties schema apart (jsonschema visits unknown keys in a set's
    order)."""
    ordered: list[Any] = []
    unordered: list[Any] = []
    for error in errors:
        schema_path = list(getattr(error, "relative_schema_path", error.schema_path))
        row = (
            error.validator,
            repr(error.validator_value),
            id(error.instance),
            repr(error.schema),
            list(error.absolute_path),
            schema_path,
            error_rows(error.context),
        )
        (unordered if "additionalProperties" in schema_path else ordered).append(row)
    return ordered, sorted(unordered, key=repr)


@st.composite
def questions(draw: st.DrawFn) -> Any:
    check = draw(mutated("check", odd=True))
    if isinstance(check, list) and check:
        question = check[draw(st.integers(0, len(check) - 1))]
    else:
        question = check
    # What validate_check hands the structural pass.
    return bounded(question, max_depth=3)


@pytest.mark.parametrize("kind", ["yes_no", "choice", "rubric"])
def test_the_check_keys_errors_are_jsonschemas(kind: Any) -> None:
    ours = _validate._kind_validator(kind)
    stock = jsonschema.Draft202012Validator(ours.schema)

    @given(questions())
    def check(question: Any) -> None:
        assert error_rows(ours.iter_errors(question)) == error_rows(stock.iter_errors(question))
        assert ours.is_valid(question) <= stock.is_valid(question)

    check()


@pytest.mark.parametrize("name", ["process", *SHAPES])
def test_the_errors_of_a_process_file_and_of_cores_shapes_are_jsonschemas(name: str) -> None:
    ours = Validator(
        schema_of(name),
        resources=[schema_file(n) for n in ("check", "verdict", "process", *SHAPES)],
        explain=True,
        finite=True,
    )

    @given(mutated(name))
    def check(value: Any) -> None:
        assert error_rows(ours.iter_errors(value)) == error_rows(stock(name).iter_errors(value))

    check()


def test_a_process_file_and_cores_shapes_are_explained_without_jsonschema() -> None:
    # What lint, run data and submission checks cost a host: no jsonschema import, even for a
    # value with many faults.
    code = (
        "import sys; from checkprofile import process_problems, run_data_problems,"
        " submission_problems;"
        "p = process_problems({'name': 'a b', 'steps': [{'id': 'x', 'agnet': 1, 'next': 5}]},"
        " profiles=['check-1']);"
        "r = run_data_problems({'input': {}, 'steps': {'a': {'decision': 'maybe'}}});"
        "s = submission_problems({'output': [], 'nxt': 1});"
        "print(len(p) > 2, len(r) > 2, len(s) > 1, 'jsonschema' in sys.modules)"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "True", "False"]


def test_unknown_keys_are_explained_in_the_maps_order() -> None:
    # jsonschema takes a set's order, which changes between runs; ours is the file's.
    ours = _validate._kind_validator("choice")
    one_of = {"b": "", "a": 1, "c": " "}
    errors = list(ours.iter_errors({"ask": "x", "one_of": one_of, "pass": ["b"]}))
    assert [error.absolute_path for error in errors] == [("one_of", k) for k in one_of]


# What it does not interpret, it refuses ------------------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "format": "date"},
        {"patternProperties": {"^x": {}}, "additionalProperties": False},
        {"properties": {"x": {"$id": "https://elsewhere.invalid/x.json"}}},
        {"$ref": "https://elsewhere.invalid/x.json"},
    ],
    ids=["format", "patternProperties", "nested-id", "unknown-document"],
)
def test_a_keyword_it_does_not_interpret_is_refused_when_it_is_made(schema: Any) -> None:
    with pytest.raises(ValueError, match=r"not interpreted here|cannot resolve"):
        Validator(schema)


def test_explaining_needs_a_validator_made_to_explain() -> None:
    with pytest.raises(ValueError, match="explain=True"):
        list(Validator({"type": "string"}).iter_errors(1))
    with pytest.raises(ValueError, match="'unevaluatedProperties' is not interpreted here"):
        Validator({"unevaluatedProperties": False}, explain=True)
