"""The conformance corpus: every case passes on this library, every file matches the case schema
and reads the same in YAML 1.1 and 1.2, every design decision is covered, the generated files
and the docs' coverage list are current, and ``checkprofile conformance`` exits as documented."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import core2
import jsonschema
import pytest
from referencing import Registry, Resource
from ruamel.yaml import YAML

import checkprofile
import gen_conformance as generate
from checkprofile import conformance
from checkprofile.conformance import (
    STAGES,
    Case,
    CorpusError,
    case_schema,
    covered_decisions,
    default_directory,
    load_cases,
    run_case,
    run_corpus,
)

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(str(default_directory()))
FILES = sorted(CORPUS.glob("*/*.yaml"))
DOC = ROOT / "docs" / "conformance.md"
CASES = load_cases()

#: The design's "Decisions where the spec is silent", by number.
DECISIONS = range(1, 15)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "checkprofile", "conformance", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(case: Case) -> None:
    result = run_case(case)
    assert result.passed, f"{case.source}: {result.diff}"


def test_the_corpus_is_large_and_covers_every_stage_and_decision() -> None:
    assert len(CASES) >= 150
    assert {case.stage for case in CASES} == set(STAGES)
    covered = covered_decisions(CASES)
    assert [d for d in DECISIONS if d not in covered] == []
    # Hand-written cases cover every decision too: a law generated from code is not enough.
    hand = [case for case in CASES if "/gen_" not in case.source]
    assert [d for d in DECISIONS if d not in covered_decisions(hand)] == []


def test_the_case_schema_is_a_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(case_schema())


def _load(path: Path, version: tuple[int, int]) -> Any:
    yaml = YAML(typ="safe", pure=True)
    yaml.version = version
    with warnings.catch_warnings():
        # ruamel reads "1e-7" as a float even in YAML 1.1 but warns; other 1.1 readers give a
        # string, so the warning is an error here.
        warnings.simplefilter("error")
        return yaml.load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_a_case_file_matches_the_schema_and_reads_the_same_in_yaml_1_1(path: Path) -> None:
    # The runner's own reading (YAML 1.2, parsed once per process), against a YAML 1.1 one.
    data = conformance._parse(path.read_text(encoding="utf-8"))
    # The schema's own #/$defs/file, as an outside validator would use it.
    schema = case_schema()
    registry: Registry[Any] = Registry().with_resource(
        schema["$id"], Resource.from_contents(schema)
    )
    whole_file = {"$ref": schema["$id"] + "#/$defs/file"}
    validator = jsonschema.Draft202012Validator(whole_file, registry=registry)
    errors = [
        f"/{'/'.join(map(str, error.absolute_path))}: {error.message}"
        for error in validator.iter_errors(data)
    ]
    assert errors == []
    old = _load(path, (1, 1))
    assert json.dumps(old, sort_keys=True) == json.dumps(data, sort_keys=True)


def _verdict_expectations() -> Iterator[tuple[str, Any]]:
    for case in CASES:
        record = case.data["expect"].get("verdict_json")
        if record is not None:
            yield case.id, record


def test_every_expected_verdict_is_a_check_verdict_record() -> None:
    validator = jsonschema.Draft202012Validator(checkprofile.verdict_schema())
    bad = [
        (case_id, error.message)
        for case_id, record in _verdict_expectations()
        for error in validator.iter_errors(record)
    ]
    assert bad == []


def test_the_generated_files_are_current() -> None:
    for path, text in generate.render().items():
        assert (CORPUS / path).read_text(encoding="utf-8") == text, (
            f"{path} is out of date: run python tools/gen_conformance.py"
        )


@pytest.mark.parametrize(("number", "text"), generate.JS_STRINGS, ids=repr)
def test_the_generators_oracle_prints_numbers_as_javascript_does(number: float, text: str) -> None:
    # The generator writes issue lines with its own oracle, not the library's js_number.
    assert generate._js(abs(number)) == text.lstrip("-")


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_the_javascript_table_is_what_node_prints() -> None:
    assert generate.check_node() == []


def test_the_docs_list_the_cases_of_every_decision() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert generate.coverage_markdown(CASES) in text, (
        "docs/conformance.md lists other cases than the corpus has: run"
        " python tools/gen_conformance.py"
    )


def test_the_rules_are_numbered_as_far_as_a_case_may_name_them() -> None:
    # A case's `decisions` names the numbered headings of "The rules", 1 to the schema's
    # maximum: the page numbers them without a gap, and states no count of them that could
    # go stale (it said "14 numbered decisions" beside 18 headings).
    text = DOC.read_text(encoding="utf-8")
    rules = text[text.index("\n## The rules\n") :]
    rules = rules[: rules.index("\n## ", 1)]
    numbers = [int(n) for n in re.findall(r"^#### (\d+)\. ", rules, flags=re.MULTILINE)]
    top = case_schema()["properties"]["decisions"]["items"]["maximum"]
    assert numbers == list(range(1, top + 1))
    assert re.search(r"\b\d+ numbered decisions", text) is None


# -- the loader refuses a corpus it cannot run, in one line naming the file and the pointer ----

GOOD_CASE = """\
- id: check_keys/short
  stage: check_keys
  rule: A short form.
  decisions: [1]
  check: Is it done?
  expect: {valid: true, full: [{ask: Is it done?, pass: 0.9}]}
"""


def _corpus(tmp_path: Path, text: str, stage: str = "check_keys") -> Path:
    (tmp_path / stage).mkdir(parents=True, exist_ok=True)
    (tmp_path / stage / "cases.yaml").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            GOOD_CASE.replace("  rule: A short form.\n", ""), '/0: missing "rule"', id="no-rule"
        ),
        pytest.param(
            GOOD_CASE.replace("[1]", "[19]"),
            "/0/decisions/0: expected a design decision (1 to 18), got 19",
            id="decision-19",
        ),
        pytest.param(GOOD_CASE.replace("valid: true, ", ""), "/0/expect", id="no-valid"),
        pytest.param(
            GOOD_CASE.replace("check: Is", "colour: red\n  check: Is"),
            '/0: unknown key "colour"',
            id="unknown-key",
        ),
        pytest.param(GOOD_CASE + GOOD_CASE.replace("- ", "- ", 1), "/1/id", id="same-id"),
        pytest.param(GOOD_CASE.replace("stage: check_keys", "stage: grading"), "/0", id="stage"),
        pytest.param(
            GOOD_CASE.replace("Is it done?", "2026-10-06T09:00:00Z", 1), "/0/check", id="timestamp"
        ),
        pytest.param("- [unclosed\n", "cases.yaml:2:1: invalid YAML", id="invalid-yaml"),
        pytest.param("id: x\n", "/: expected a sequence of cases", id="not-a-sequence"),
        pytest.param("- " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply", id="deep"),
    ],
)
def test_the_loader_refuses_a_bad_case_file(tmp_path: Path, text: str, message: str) -> None:
    corpus = _corpus(tmp_path, text)
    with pytest.raises(CorpusError) as caught:
        load_cases(corpus)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(f"{corpus}/check_keys/cases.yaml")
    assert message in str(caught.value)


def test_the_loader_refuses_an_unknown_stage_and_an_empty_corpus(tmp_path: Path) -> None:
    (tmp_path / "grades").mkdir()
    with pytest.raises(CorpusError, match='unknown stage directory "grades"'):
        load_cases(tmp_path)
    (tmp_path / "grades").rmdir()
    with pytest.raises(CorpusError, match="no cases"):
        load_cases(tmp_path)


def test_a_wrong_expectation_fails_with_a_one_line_diff(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, GOOD_CASE.replace("pass: 0.9", "pass: 0.8"))
    [result] = run_corpus(corpus)
    assert not result.passed
    assert result.diff == "/expect/full/0/pass: expected 0.8, got 0.9"


def test_booleans_are_not_numbers_when_comparing(tmp_path: Path) -> None:
    corpus = _corpus(
        tmp_path,
        GOOD_CASE.replace("pass: 0.9", "pass: 1").replace(
            "check: Is it done?", "check: [{ask: Is it done?, pass: 1}]"
        ),
    )
    assert run_corpus(corpus)[0].passed
    wrong = _corpus(
        tmp_path,
        GOOD_CASE.replace("pass: 0.9", "pass: true").replace(
            "check: Is it done?", "check: [{ask: Is it done?, pass: 1}]"
        ),
    )
    assert run_corpus(wrong)[0].diff == "/expect/full/0/pass: expected true, got 1.0"


# -- the command ----------------------------------------------------------------------------------


def test_the_command_passes_on_our_corpus() -> None:
    done = _cli()
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["stage", "cases", "passed", "failed"]
    assert lines[-1].split() == ["total", str(len(CASES)), str(len(CASES)), "0"]
    assert [line.split()[0] for line in lines[1:-1]] == list(STAGES)


def test_the_command_fails_a_wrong_corpus_with_a_readable_table(tmp_path: Path) -> None:
    wrong = GOOD_CASE.replace("pass: 0.9", "pass: 0.8")
    _corpus(tmp_path, GOOD_CASE.replace("check_keys/short", "check_keys/right") + wrong)
    done = _cli(str(tmp_path))
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "stage       cases  passed  failed",
        "check_keys      2       1       1",
        "total           2       1       1",
        "",
        f"FAIL check_keys/short ({tmp_path}/check_keys/cases.yaml)",
        "  rule: A short form.",
        "  /expect/full/0/pass: expected 0.8, got 0.9",
    ]
    report = json.loads(_cli("--json", str(tmp_path)).stdout)
    assert report["passed"] is False
    assert report["stages"] == {"check_keys": {"cases": 2, "passed": 1, "failed": 1}}
    assert [case["diff"] for case in report["cases"]] == [
        None,
        "/expect/full/0/pass: expected 0.8, got 0.9",
    ]


def test_the_command_refuses_an_invalid_case_file(tmp_path: Path) -> None:
    _corpus(tmp_path, GOOD_CASE.replace("[1]", "[]"))
    done = _cli(str(tmp_path))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"checkprofile: {tmp_path}/check_keys/cases.yaml: /0/decisions: ")


def test_the_command_refuses_a_missing_directory(tmp_path: Path) -> None:
    done = _cli(str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert done.stderr == f"checkprofile: {tmp_path / 'nowhere'}: corpus not found\n"


# -- the forms a case may take beyond the plain ones -------------------------------------------

TRUNCATION_CASE = """\
- id: truncation/shown
  stage: truncation
  rule: Run data that fits is shown.
  decisions: [13]
  run_data: {inputs: {}, steps: {}}
  budget: 100
  expect:
    view: '{"inputs":{},"steps":{}}'
    bytes: 24
    truncated: false
    dropped_steps: []
    dropped_fields: []
"""


@pytest.mark.parametrize(
    ("stage", "text", "diff"),
    [
        pytest.param(
            "check_keys",
            GOOD_CASE.replace(
                "valid: true, full: [{ask: Is it done?, pass: 0.9}]", "limits_refused: true"
            ),
            "/expect/limits_refused: expected true, got",
            id="limits-said-refused-but-valid",
        ),
        pytest.param(
            "check_keys",
            GOOD_CASE.replace("  check:", "  limits: {checkPass: 0.5, checkFail: 0.6}\n  check:"),
            '/limits: expected "limits that are valid", got "refused: checkFail 0.6 is above',
            id="limits-refused-but-said-valid",
        ),
        pytest.param(
            "truncation",
            TRUNCATION_CASE[: TRUNCATION_CASE.index("  expect:")] + "  expect: {refused: true}\n",
            "/expect/refused: expected true, got",
            id="run-data-said-refused-but-shown",
        ),
        pytest.param(
            "truncation",
            TRUNCATION_CASE.replace("steps: {}}", "steps: []}"),
            '/expect/refused: expected false, got "refused: run data steps must be a map',
            id="run-data-refused-but-said-shown",
        ),
    ],
)
def test_a_refusal_that_differs_fails_with_a_one_line_diff(
    tmp_path: Path, stage: str, text: str, diff: str
) -> None:
    [result] = run_corpus(_corpus(tmp_path, text, stage))
    assert not result.passed
    assert result.diff.startswith(diff), result.diff
    assert "\n" not in result.diff


def test_refusals_pass_when_expected(tmp_path: Path) -> None:
    refused = GOOD_CASE.replace(
        "  check:", "  limits: {checkPass: 0.5, checkFail: 0.6}\n  check:"
    ).replace("valid: true, full: [{ask: Is it done?, pass: 0.9}]", "limits_refused: true")
    assert run_corpus(_corpus(tmp_path / "a", refused))[0].passed
    shown = TRUNCATION_CASE.replace("steps: {}}", "steps: []}")
    shown = shown[: shown.index("  expect:")] + "  expect: {refused: true}\n"
    assert run_corpus(_corpus(tmp_path / "b", shown, "truncation"))[0].passed


@pytest.mark.parametrize(
    ("answer", "unfit"),
    [
        pytest.param("{p: 0.9}", [], id="fits"),
        pytest.param("{p: 0.9, confidence: 0.9}", [0], id="key-of-another-kind"),
        pytest.param("{p: 0.9, why: because}", [0], id="other-key"),
        pytest.param("{p: 0.9, name: a}", [0], id="two-kinds"),
        pytest.param("{}", [0], id="empty"),
        pytest.param("null", [0], id="null"),
    ],
)
def test_an_answer_fits_only_with_its_kinds_keys(
    tmp_path: Path, answer: str, unfit: list[int]
) -> None:
    text = f"""\
- id: grading/answer
  stage: grading
  rule: An answer fits only with its kind's keys.
  decisions: [8]
  check: Is it done?
  answers: [{answer}]
  expect: {{unfit: [0]}}
"""
    [result] = run_corpus(_corpus(tmp_path, text, "grading"))
    assert result.passed == (unfit == [0]), result.diff


def test_every_stage_has_a_runner_a_schema_and_a_section_on_the_page() -> None:
    # The stage table is the one list: a stage added there must be described everywhere else.
    schema = case_schema()
    assert get_args(conformance.Stage) == STAGES
    assert schema["properties"]["stage"]["enum"] == list(STAGES)
    assert all(stage in schema["$defs"] for stage in STAGES)
    page = DOC.read_text(encoding="utf-8")
    assert all(f"## Stage `{stage}`" in page for stage in STAGES)


# -- the records stage --------------------------------------------------------------------------


def _records_states() -> Iterator[tuple[str, str, Any]]:
    """Each state a records case names that must be one: every ``after``, and every ``before``
    of a case that is not refused."""
    for case in CASES:
        if case.stage != "records":
            continue
        expect = case.data["expect"]
        if "after" in expect:
            yield case.id, "after", expect["after"]
            yield case.id, "before", case.data["before"]


def test_every_records_state_is_in_core_2s_shapes() -> None:
    # The corpus's own check: another implementation is handed core-2's records, never ours.
    states = list(_records_states())
    assert len(states) >= 30
    bad = []
    for case_id, which, state in states:
        if state["record"] is not None:
            problems = core2.errors("run-data", {"inputs": {}, "steps": {"s": state["record"]}})
            bad += [(case_id, which, "record", problem) for problem in problems]
        for shape in ("handoff", "escalation"):
            if state[shape] is not None:
                bad += [(case_id, which, shape, p) for p in core2.errors(shape, state[shape])]
        assert ("previous" in state) == (state["escalation"] is not None), (case_id, which)
    assert bad == []


RECORDS_CASE = """\
- id: records/fail
  stage: records
  rule: A blocking fail goes to the handoff.
  decisions: [17]
  check: &check Is the report attached?
  run: run-1
  step: screen
  before: {record: null, handoff: null, escalation: null}
  event:
    check:
      submission: {output: {}}
      verdict:
        verdict: fail
        advisory: false
        model: m-1
        questions: [{ask: Is the report attached?, kind: yes_no, answer: 0.1, result: fail}]
        at: "2026-10-06T09:04:20Z"
  expect:
    after:
      record: null
      handoff:
        issues: ["check: Is the report attached? → no (0.1)"]
        check:
          verdict: fail
          advisory: false
          model: m-1
          questions: [{ask: Is the report attached?, kind: yes_no, answer: 0.1, result: fail}]
          at: "2026-10-06T09:04:20Z"
      escalation: null
"""


def test_a_records_case_passes_and_fails_where_the_state_differs(tmp_path: Path) -> None:
    assert run_corpus(_corpus(tmp_path / "a", RECORDS_CASE, "records"))[0].passed
    wrong = RECORDS_CASE.replace("→ no (0.1)", "→ no (0.2)")
    [result] = run_corpus(_corpus(tmp_path / "b", wrong, "records"))
    assert not result.passed
    assert result.diff.startswith('/expect/after/handoff/issues/0: expected "check:'), result.diff
    said_refused = RECORDS_CASE[: RECORDS_CASE.index("  expect:")] + "  expect: {refused: true}\n"
    [result] = run_corpus(_corpus(tmp_path / "c", said_refused, "records"))
    assert result.diff.startswith("/expect/refused: expected true, got"), result.diff
    decided = RECORDS_CASE[: RECORDS_CASE.index("  event:")] + (
        '  event:\n    decision: {kind: failed, note: No., by: ana, at: "2026-10-06T10:00:00Z"}\n'
        + RECORDS_CASE[RECORDS_CASE.index("  expect:") :]
    )
    [result] = run_corpus(_corpus(tmp_path / "d", decided, "records"))
    assert result.diff.startswith('/expect/refused: expected false, got "refused: no decision')


# -- a process case judges its check keys under the limits it gives -----------------------------

PROCESS_CASE = """\
- id: shapes/limits
  stage: shapes
  rule: A check is judged under the server's limits.
  decisions: [15]
  shape: process
  limits: {checkPass: 0.97}
  value:
    name: expense
    description: An expense report.
    steps: [{id: a, agent: Do., check: [{ask: Is it right?, fail: 0.95}]}]
  expect: {valid: true}
"""


def test_a_process_case_is_judged_under_its_limits(tmp_path: Path) -> None:
    assert run_corpus(_corpus(tmp_path, PROCESS_CASE, "shapes"))[0].passed
    # Under the default checkPass (0.9) the same check is refused: the limits were used.
    [result] = run_corpus(_corpus(tmp_path, PROCESS_CASE.replace("0.97", "0.9"), "shapes"))
    assert result.diff == '/expect/valid: expected true, got ["/steps/0/check/0/fail"]'


def test_only_a_process_case_may_give_limits(tmp_path: Path) -> None:
    # Limits judge a process file's check keys; on run data or a submission they would be
    # ignored silently, so the schema refuses them there.
    text = PROCESS_CASE.replace("shape: process", "shape: run_data").replace(
        "  value:\n    name: expense\n    description: An expense report.\n"
        "    steps: [{id: a, agent: Do., check: [{ask: Is it right?, fail: 0.95}]}]\n",
        "  value: {inputs: {}, steps: {}}\n",
    )
    with pytest.raises(CorpusError, match="/0: expected no limits"):
        load_cases(_corpus(tmp_path, text, "shapes"))
    assert load_cases(
        _corpus(tmp_path, text.replace("  limits: {checkPass: 0.97}\n", ""), "shapes")
    )
