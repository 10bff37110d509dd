"""core-2's shapes at the edges: run data and the submission (``run_data_problems``,
``check_run_data``, ``submission_problems``) and the JSON Schemas shipped for them and for the
records a check writes.

core-2 (``../shared/core-2-shapes.md``): run data is "`{inputs, steps}`, both required, nothing
else. `inputs` is any map. `steps` maps a step id to a step record, a closed map of: `output`
(map), `evidence` (list of `{kind: file|link, ref: non-empty string, sha256?: string, url?:
string}`), `summary`, `next`, `reason` (strings), `decision` (`approved` | `rejected` |
`failed`), `note` (string), `check` (a verdict record), `by`, `at` (strings), and **required**
`history`: a list of entries with the same keys except `history`, all optional."
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import jsonschema
import pytest
from core2 import errors
from hypothesis import given
from hypothesis import strategies as st
from test_human_records import outcome_of

from checkprofile import (
    MaterialError,
    Problem,
    Submission,
    build_bundle,
    check_run_data,
    core_schema,
    parse_check,
    run_data_problems,
    schema_registry,
    submission_problems,
)
from checkprofile._schemas import CoreShape
from checkprofile.conformance import load_cases
from checkprofile.human import read_records
from support import json_like, material

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SHAPES: tuple[CoreShape, ...] = get_args(CoreShape)

VERDICT = outcome_of("pass").verdict.to_json()
GOOD: dict[str, Any] = {
    "inputs": {"vendor": "ACME GmbH"},
    "steps": {
        "intake": {
            "output": {"registry": "HRB 1"},
            "evidence": [
                {"kind": "file", "ref": "intake.pdf", "sha256": "ab12", "url": "https://x/1"},
                {"kind": "link", "ref": "https://registry.example/HRB-1"},
            ],
            "summary": "Registered.",
            "by": "agent:intake",
            "at": "2026-10-06T08:02:11Z",
            "history": [],
        },
        "screen": {
            "output": {"cleared": True},
            "summary": "Cleared.",
            "next": "sign_off",
            "reason": "Both lists are clear.",
            "check": VERDICT,
            "by": "agent:screener",
            "at": "2026-10-06T09:04:20Z",
            "history": [
                {"output": {"cleared": False}, "check": VERDICT, "at": "2026-10-06T08:40:00Z"},
                {"decision": "rejected", "note": "Attach the EU list.", "by": "alice"},
            ],
        },
        "sign_off": {
            "decision": "approved",
            "by": "bo",
            "at": "2026-10-06T10:00:00Z",
            "history": [],
        },
    },
}


def changed(path: list[Any], value: Any, *, drop: bool = False) -> dict[str, Any]:
    """A deep copy of GOOD with the value at ``path`` set to ``value`` (or removed)."""
    data: dict[str, Any] = json.loads(json.dumps(GOOD))
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    if drop:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


def test_core_2_run_data_has_no_problems() -> None:
    assert run_data_problems(GOOD) == ()
    check_run_data(GOOD)  # no error
    assert errors("run-data", GOOD) == []
    assert run_data_problems({"inputs": {}, "steps": {}}) == ()


RECORD_KEYS = "output, evidence, summary, next, reason, decision, note, check, by, at and history"
RECORD = f"a step record has {RECORD_KEYS}"
ENTRY_KEYS = "output, evidence, summary, next, reason, decision, note, check, by and at"

# (id, run data, every problem as "/pointer: message"): each kind of refusal, the key named.
REFUSED: list[tuple[str, object, list[str]]] = [
    (
        "not-a-map",
        [GOOD],
        ["(root): expected run data (a map of inputs and steps), got a list"],
    ),
    (
        "input-for-inputs",
        {"input": {}, "steps": {}},
        ['/input: unknown key "input"; did you mean "inputs"? run data has inputs and steps'],
    ),
    (
        "no-steps",
        {"inputs": {}},
        ['(root): missing "steps": expected a map from step id to its step record'],
    ),
    (
        "unknown-top-level-key",
        {"inputs": {}, "steps": {}, "ticket": "T-1"},
        ['/ticket: unknown key "ticket"; run data has inputs and steps'],
    ),
    (
        "inputs-a-list",
        changed(["inputs"], []),
        ["/inputs: expected a map of the run's inputs, got an empty list"],
    ),
    (
        "steps-a-list",
        changed(["steps"], [1]),
        ["/steps: expected a map from step id to its step record, got a list"],
    ),
    (
        "record-not-a-map",
        changed(["steps", "intake"], "done"),
        ['/steps/intake: expected a step record (a map), got "done"'],
    ),
    (
        "no-history",
        changed(["steps", "intake", "history"], None, drop=True),
        [
            '/steps/intake: missing "history": expected a list of the step\'s earlier records,'
            " each without history ([] when there are none)"
        ],
    ),
    (
        "misspelt-record-key",
        changed(["steps", "screen", "chek"], VERDICT),
        [f'/steps/screen/chek: unknown key "chek"; did you mean "check"? {RECORD}'],
    ),
    (
        "output-not-a-map",
        changed(["steps", "intake", "output"], "HRB 1"),
        ['/steps/intake/output: expected a map (the step\'s output fields), got "HRB 1"'],
    ),
    (
        "summary-not-text",
        changed(["steps", "intake", "summary"], 3),
        ["/steps/intake/summary: expected a string, got 3"],
    ),
    (
        "at-not-text",
        changed(["steps", "intake", "at"], 1791000000),
        ["/steps/intake/at: expected a string, got 1791000000"],
    ),
    (
        "decision-unknown",
        changed(["steps", "sign_off", "decision"], "ok"),
        ['/steps/sign_off/decision: expected approved, rejected or failed, got "ok"'],
    ),
    (
        "evidence-a-map",
        changed(["steps", "intake", "evidence"], {"kind": "file"}),
        ["/steps/intake/evidence: expected a list of evidence items, got a map"],
    ),
    (
        "evidence-kind",
        changed(["steps", "intake", "evidence", 0, "kind"], "pdf"),
        ['/steps/intake/evidence/0/kind: expected file or link, got "pdf"'],
    ),
    (
        "evidence-empty-ref",
        changed(["steps", "intake", "evidence", 1, "ref"], ""),
        ['/steps/intake/evidence/1/ref: expected a non-empty string, got ""'],
    ),
    (
        "evidence-no-ref",
        changed(["steps", "intake", "evidence", 1, "ref"], None, drop=True),
        ['/steps/intake/evidence/1: missing "ref": expected a non-empty string'],
    ),
    (
        "evidence-unknown-key",
        changed(["steps", "intake", "evidence", 1, "title"], "Registry"),
        [
            '/steps/intake/evidence/1/title: unknown key "title"; an evidence item has kind, ref,'
            " sha256 and url"
        ],
    ),
    (
        "check-not-a-verdict",
        changed(["steps", "screen", "check"], {"verdict": "pass"}),
        [
            "/steps/screen/check: expected a check verdict record: not a check verdict: at /:"
            ' missing "advisory"'
        ],
    ),
    (
        "check-contradicts-itself",
        changed(["steps", "screen", "check", "verdict"], "fail"),
        [
            '/steps/screen/check: expected a check verdict record: verdict "fail" is not the'
            ' worst of its questions\' results ("pass")'
        ],
    ),
    (
        "history-a-map",
        changed(["steps", "screen", "history"], {}),
        [
            "/steps/screen/history: expected a list of the step's earlier records, each without"
            " history ([] when there are none), got an empty map"
        ],
    ),
    (
        "history-entry-with-history",
        changed(["steps", "screen", "history", 0, "history"], []),
        [
            f'/steps/screen/history/0/history: unknown key "history"; a step record without'
            f" history has {ENTRY_KEYS}"
        ],
    ),
    (
        "history-entry-bad-decision",
        changed(["steps", "screen", "history", 1, "decision"], "returned"),
        ['/steps/screen/history/1/decision: expected approved, rejected or failed, got "returned"'],
    ),
    (
        "history-entry-bad-check",
        changed(["steps", "screen", "history", 0, "check"], "pass"),
        [
            "/steps/screen/history/0/check: expected a check verdict record: not a check"
            ' verdict: at /: expected a map, got "pass"'
        ],
    ),
    (
        "every-problem-at-once",
        {"input": {}, "steps": {"a": {"chek": "Is it done?"}, "b": {"history": [], "at": 5}}},
        [
            '/input: unknown key "input"; did you mean "inputs"? run data has inputs and steps',
            '/steps/a: missing "history": expected a list of the step\'s earlier records, each'
            " without history ([] when there are none)",
            f'/steps/a/chek: unknown key "chek"; did you mean "check"? {RECORD}',
            "/steps/b/at: expected a string, got 5",
        ],
    ),
]


@pytest.mark.parametrize(
    ("data", "expected"), [pytest.param(data, lines, id=name) for name, data, lines in REFUSED]
)
def test_run_data_not_in_core_2_s_shape_is_refused_naming_the_key(
    data: object, expected: list[str]
) -> None:
    found = run_data_problems(data)
    assert [str(problem) for problem in found] == expected
    assert all(isinstance(problem, Problem) for problem in found)
    with pytest.raises(MaterialError) as caught:
        check_run_data(data)
    assert caught.value.problems == found
    assert caught.value.path == found[0].path
    assert str(caught.value).startswith(f"run data has {len(found)} problem")
    # core-2's own schema, read by jsonschema's stock validator, refuses each one too, but a
    # verdict that contradicts itself: the verdict reader knows the profile's worst-of rule.
    assert errors("run-data", data) or "not the worst" in expected[0]


def test_a_misspelt_key_is_one_problem_not_two() -> None:
    # "input" is both an unknown key and a missing "inputs": one fault, reported once, as the
    # misspelling it is.
    assert [problem.path for problem in run_data_problems({"input": {}, "steps": {}})] == [
        ("input",)
    ]
    # A missing key with no misspelling in sight is reported as missing.
    assert [str(p) for p in run_data_problems({"steps": {}, "extra": 1})] == [
        '(root): missing "inputs": expected a map of the run\'s inputs',
        '/extra: unknown key "extra"; run data has inputs and steps',
    ]


# --- never raises, never renders a whole value -------------------------------------------------


class Hostile:
    """A value of the host's own making whose repr raises."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


deep: list[Any] = []
for _ in range(5000):
    deep = [deep]

ODD: list[object] = [
    None,
    "run data",
    10**5000,
    Hostile(),
    {1: "one", None: 2, ("a",): 3},
    {"inputs": {}, "steps": {1: {"history": []}, "a": {"history": [], "summary": 10**5000}}},
    {"inputs": {}, "steps": {"a": {"history": [], "summary": deep, "check": deep}}},
    {"inputs": {}, "steps": {"a": {"history": [Hostile()], "output": Hostile()}}},
    {"inputs": {}, "steps": {"a": {"history": [], "at": ["x" * 5_000_000], "next": 10**5000}}},
    {"inputs": {}, "steps": {"a": {"history": [], "x" * 5_000_000: 1}}},
]


@pytest.mark.parametrize("data", ODD, ids=range(len(ODD)))
def test_odd_values_are_problems_never_exceptions_and_messages_stay_short(data: object) -> None:
    found = run_data_problems(data)
    assert found
    for problem in found:
        assert len(problem.message) < 400, problem.message
    assert submission_problems(data)


def test_the_contents_of_inputs_and_outputs_are_never_looked_into() -> None:
    # They are the host's: any map. A value that would break a renderer inside them is fine.
    data = {
        "inputs": {"n": 10**5000, "deep": deep},
        "steps": {"a": {"output": {"n": 10**5000, "odd": Hostile(), "deep": deep}, "history": []}},
    }
    assert run_data_problems(data) == ()
    assert submission_problems({"output": {"odd": Hostile(), "deep": deep}}) == ()


@given(json_like)
def test_run_data_problems_never_raises(data: object) -> None:
    found = run_data_problems(data)
    assert isinstance(found, tuple)
    submission_problems(data)
    submission_problems(data, agent=True)


# Run data near core-2's shape, each part sometimes wrong: the problems and core-2's schema (read
# by jsonschema's stock validator, an independent oracle) agree on what is valid.
texts = st.text(max_size=5)
anything: st.SearchStrategy[Any] = (
    st.none() | st.booleans() | st.integers(-3, 3) | texts | st.just([]) | st.just({})
)
evidence_items = st.fixed_dictionaries(
    {"kind": st.sampled_from(["file", "link", "pdf"]), "ref": st.sampled_from(["a", ""])},
    optional={"sha256": texts | anything, "url": texts, "size": st.just(1)},
)
entry_values = {
    "output": st.dictionaries(texts, anything, max_size=2) | anything,
    "evidence": st.lists(evidence_items, max_size=2) | anything,
    "summary": texts | anything,
    "next": texts,
    "reason": texts,
    "decision": st.sampled_from(["approved", "rejected", "failed", "returned"]),
    "note": texts,
    "check": st.just(VERDICT) | anything,
    "by": texts | anything,
    "at": texts,
    "chek": texts,
}
entries = st.fixed_dictionaries({}, optional=entry_values)
records = st.fixed_dictionaries(
    {}, optional={**entry_values, "history": st.lists(entries, max_size=2) | anything}
)
run_datas = st.fixed_dictionaries(
    {},
    optional={
        "inputs": st.dictionaries(texts, anything, max_size=2) | anything,
        "steps": st.dictionaries(texts, records, max_size=3) | anything,
        "input": st.just({}),
    },
)


@given(run_datas)
def test_the_problems_agree_with_core_2_s_schema(data: dict[str, Any]) -> None:
    assert (run_data_problems(data) == ()) is (errors("run-data", data) == [])


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "output": st.dictionaries(texts, anything, max_size=2) | anything,
            "evidence": st.lists(evidence_items, max_size=2) | anything,
            "summary": texts | anything,
            "next": texts | anything,
            "reason": texts | anything | st.just("r" * 4001),
            "sumary": texts,
        },
    )
)
def test_the_submission_problems_agree_with_core_2_s_schema(data: dict[str, Any]) -> None:
    ok = submission_problems(data) == ()
    assert ok is (errors("submission", data) == [])
    if ok:
        assert Submission.from_json(data).to_json()["output"] == data["output"]


# --- the examples, and the corpus -------------------------------------------------------------


def test_every_bundled_examples_run_data_and_submission_is_core_2_shaped() -> None:
    run_data = sorted(EXAMPLES.glob("*/run-data.json"))
    submissions = sorted(EXAMPLES.glob("*/submission*.json"))
    assert len(run_data) == 3 and len(submissions) == 5
    for path in run_data:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert run_data_problems(data) == (), path
        assert errors("run-data", data) == [], path
    for path in submissions:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert submission_problems(data) == (), path
        assert errors("submission", data) == [], path


def test_every_recorded_example_reads_back_with_core_2_verdicts() -> None:
    records = read_records(EXAMPLES / "advisory_records.jsonl")
    assert records
    for record in records:
        data = record.to_json()
        if data["record"] == "verdict":
            # A verdict record embeds the record a host keeps as steps.<id>.check.
            assert errors("step-record", {"check": data["verdict"], "history": []}) == []
        else:
            decision = data["decision"]
            if "output" in decision:
                own = {k: decision[k] for k in ("output", "summary", "evidence") if k in decision}
                assert errors("submission", own) == []


def test_build_bundle_stays_lenient_where_the_corpus_says_what_the_evaluator_sees() -> None:
    # The corpus pins what is shown of run data with keys core-2 has no place for (a `ticket`
    # beside inputs, records without history): build_bundle shows them, by the profile's
    # truncation rules; the edge check (check_run_data) is the host's to run.
    cases = [
        case
        for case in load_cases()
        if case.stage == "truncation" and not case.data["expect"].get("refused")
    ]
    odd = [case for case in cases if run_data_problems(case.data["run_data"])]
    assert len(odd) >= 10
    check = parse_check("Done?")
    for case in odd:
        bundle = build_bundle(
            check, material(dict(case.data["run_data"])), state_bytes=case.data["budget"]
        )
        assert bundle.run_data_json == case.data["expect"]["view"], case.id


# --- the schemas ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SHAPES)
def test_each_core_2_schema_is_a_draft_2020_12_schema_and_a_fresh_copy(name: Any) -> None:
    schema = core_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    schema["type"] = "null"
    assert core_schema(name) != schema
    assert core_schema(name) is not core_schema(name)


def test_an_unknown_shape_is_refused() -> None:
    with pytest.raises(ValueError, match='no such shape: "run_data"'):
        core_schema("run_data")  # type: ignore[arg-type]


def test_a_history_entry_and_a_candidate_have_a_step_records_keys_but_history() -> None:
    record = core_schema("step-record")
    entry = record["$defs"]["entry"]
    assert list(entry["properties"]) == [key for key in record["properties"] if key != "history"]
    assert entry["properties"] == {
        key: value for key, value in record["properties"].items() if key != "history"
    }
    candidate = {"output": {}, "next": "a", "reason": "r", "by": "agent", "at": "t"}
    assert errors("candidate", candidate) == []
    assert errors("candidate", {**candidate, "history": []})


def test_the_record_schemas_refuse_what_core_2_refuses() -> None:
    returned = {"note": "n", "by": "alice", "at": "2026-10-06T10:15:00Z"}
    assert errors("handoff", None) == []  # null: no handoff
    assert errors("handoff", {"returned": returned, "issues": ["x"], "check": VERDICT}) == []
    assert errors("handoff", {"note": "n"})  # the shape before core-2
    assert errors("handoff", {"returned": {"note": "n"}})
    escalation = {"note": "n", "by": "check", "at": "t", "check": VERDICT, "candidate": {}}
    assert errors("escalation", escalation) == []
    assert errors("escalation", {key: escalation[key] for key in ("note", "by", "at")}) == []
    assert errors("escalation", {"by": "check", "at": "t"})  # note is required
    assert errors("escalation", {**escalation, "candidate": {"history": []}})
    assert errors("escalation", {**escalation, "check": {"verdict": "pass"}})


def test_the_registry_resolves_every_reference_offline() -> None:
    registry = schema_registry()
    for name in SHAPES:
        validator = jsonschema.Draft202012Validator(core_schema(name), registry=registry)
        validator.is_valid({})  # resolving a missing $ref would raise here
    assert errors("step-record", {"history": [], "check": {"verdict": "pass"}})


# --- the submission a step record holds -------------------------------------------------------


def test_the_submission_is_read_back_from_the_step_record_it_is_stored_in() -> None:
    # Joining an approver's decision to the checked submission needs the submission from the
    # step record it completed with: by, at, check and history are the record's.
    submitted = {
        "output": {"cleared": True},
        "summary": "Cleared.",
        "evidence": [{"kind": "file", "ref": "r.pdf", "sha256": "ab"}],
        "next": "sign",
        "reason": "Clear.",
    }
    record = {
        **submitted,
        "note": "Fine.",
        "check": outcome_of("pass").verdict.to_json(),
        "by": "agent:a",
        "at": "2026-10-06T09:04:12Z",
        "history": [{"output": {"cleared": False}}],
    }
    assert Submission.from_record(record) == Submission.from_json(submitted)
    with pytest.raises(MaterialError, match="has no output") as caught:
        Submission.from_record({"decision": "failed", "note": "No.", "history": []})
    assert caught.value.path == ("output",)
    with pytest.raises(MaterialError, match="history") as caught:
        Submission.from_record(submitted)
    with pytest.raises(MaterialError, match="summary") as caught:
        Submission.from_record({**record, "summary": 5})
    assert caught.value.path == ("summary",)
    with pytest.raises(MaterialError):
        Submission.from_record("a record")
