"""PROCESS.md files: reading, the profile's publication rules, describe, and material."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checkprofile import (
    PROFILE,
    CheckError,
    Limits,
    Process,
    ProcessError,
    ProcessProblem,
    Submission,
    describe_fragment,
    load_process,
    material_for,
    publication_problems,
    read_process,
    validate_check,
)
from support import SPEC_ASK, spec_full_form

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# The profile's own short-form example (section 2), as a whole file.
SHORT = """\
---
name: vendor-onboarding
steps:
  - id: check_vendor
    agent: Check the vendor against the OFAC and EU lists. Attach the report.
    output: { cleared: boolean, summary: string }
    evidence: [file]
    check: The cleared verdict matches what the attached report says.
  - id: sign
    approve: A person signs the vendor off.
---
# Vendor onboarding

Body text, *exactly* as written.
"""


def read(text: str) -> Process:
    return read_process(text, source="PROCESS.md")


def lint(text: str, **options: Any) -> list[tuple[int, int, str, str]]:
    options.setdefault("profiles", [PROFILE])
    found = publication_problems(read(text), **options)
    return [(p.line, p.column, p.pointer, p.message) for p in found]


# Reading ------------------------------------------------------------------------------------


def test_frontmatter_and_body_are_split_with_the_body_exactly_as_written() -> None:
    process = read(SHORT)
    assert process.body == "# Vendor onboarding\n\nBody text, *exactly* as written.\n"
    assert [step.id for step in process.steps] == ["check_vendor", "sign"]
    assert [step.kind for step in process.steps] == ["agent", "approve"]
    assert process.step("check_vendor").instructions == (
        "Check the vendor against the OFAC and EU lists. Attach the report."
    )


def test_windows_line_endings_and_a_byte_order_mark_are_read() -> None:
    text = "\ufeff" + SHORT.replace("\n", "\r\n")
    process = read(text)
    assert process.body == "# Vendor onboarding\r\n\r\nBody text, *exactly* as written.\r\n"
    assert process.step("check_vendor").has_check


def test_yaml_1_2_strings_stay_strings_in_a_process() -> None:
    process = read(
        "---\nsteps:\n  - id: a\n    agent: Do.\n    advisory: yes\n    check: on\n---\n"
    )
    step = process.step("a")
    assert step.data["advisory"] == "yes"
    assert step.data["check"] == "on"  # a one-question check asking "on"


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        pytest.param("# just markdown\n", "PROCESS.md:1:1", "no frontmatter", id="no-frontmatter"),
        pytest.param("", "PROCESS.md:1:1", "no frontmatter", id="empty-file"),
        pytest.param("---\nsteps: []\n", "PROCESS.md:1:1", "never ends", id="unterminated"),
        pytest.param("---\nsteps: [\n---\n", "PROCESS.md:3:1", "invalid YAML", id="bad-yaml"),
        pytest.param(
            "---\nname: x\nsteps:\n  - id: a\n    id: b\n---\n",
            "PROCESS.md:5:5",
            'invalid YAML: duplicate key "id" (first at line 4, column 5)',
            id="duplicate-key-in-file-lines",
        ),
        pytest.param(
            "---\n- a\n- b\n---\n", "PROCESS.md:2:1", "must be a map", id="frontmatter-a-list"
        ),
        pytest.param("---\n---\n", "PROCESS.md:2:1", "must be a map", id="frontmatter-empty"),
        pytest.param("---\nname: x\n---\n", "PROCESS.md:2:1", 'no "steps"', id="no-steps"),
        pytest.param(
            "---\nname: x\nsteps: three\n---\n",
            "PROCESS.md:3:8",
            '"steps" must be a list',
            id="steps-text",
        ),
        pytest.param(
            "---\nsteps:\n  a: 1\n---\n",
            "PROCESS.md:3:3",
            '"steps" must be a list',
            id="steps-a-map",
        ),
    ],
)
def test_what_is_not_a_readable_process_is_one_line_with_file_and_line(
    text: str, where: str, message: str
) -> None:
    with pytest.raises(ProcessError) as caught:
        read(text)
    line = str(caught.value)
    assert line.startswith(f"{where}: ")
    assert message in line
    assert "\n" not in line


def test_load_process_names_the_path_of_a_file_it_cannot_read(tmp_path: Path) -> None:
    with pytest.raises(ProcessError, match=r"missing\.md: cannot read"):
        load_process(tmp_path / "missing.md")
    binary = tmp_path / "binary.md"
    binary.write_bytes(b"---\n\xff\xfe\n---\n")
    with pytest.raises(ProcessError, match=r"binary\.md: not UTF-8 text \(byte 4\)"):
        load_process(binary)


def test_a_step_id_used_twice_cannot_be_picked() -> None:
    text = "---\nsteps:\n  - id: a\n    agent: One.\n  - id: a\n    agent: Two.\n---\n"
    with pytest.raises(ProcessError) as caught:
        read(text).step("a")
    assert str(caught.value) == (
        'PROCESS.md:5:9: step id "a" is used by more than one step (lines 3, 5)'
    )


def test_a_missing_step_names_the_steps_there_are() -> None:
    with pytest.raises(
        ProcessError, match=r'PROCESS.md:3:1: no step has id "nope" \(steps: check_vendor, sign\)'
    ):
        read(SHORT).step("nope")


# Publication rules ---------------------------------------------------------------------------


def test_the_examples_publish_cleanly() -> None:
    for path in sorted(EXAMPLES.glob("*/PROCESS.md")):
        assert publication_problems(load_process(path), profiles=[PROFILE]) == (), path


def test_every_problem_of_a_file_comes_at_once_in_file_order() -> None:
    text = (
        "---\n"  # 1
        "steps:\n"  # 2
        "  - id: one\n"  # 3
        "    approve: Sign.\n"  # 4
        "    advisory: yes\n"  # 5
        "    check:\n"  # 6
        "      - ask: Is it done?\n"  # 7
        "        pas: 0.9\n"  # 8
        "      - ask: Tone?\n"  # 9
        "        one_of: {calm: Calm., angry: Angry.}\n"  # 10
        "        pass: [clam]\n"  # 11
        "  - id: two\n"  # 12
        "    agent: Do.\n"  # 13
        "    advisory: true\n"  # 14
        "  - just a string\n"  # 15
        "---\n"
    )
    assert lint(text) == [
        (5, 15, "/steps/0/advisory", 'advisory must be true or false, got "yes"'),
        (
            6,
            5,
            "/steps/0/check",
            'check is allowed only on agent and task steps; step "one" is an approve step',
        ),
        (
            8,
            9,
            "/steps/0/check/0/pas",
            'unknown key "pas"; did you mean "pass"? a yes/no question takes ask, pass, fail',
        ),
        (
            11,
            16,
            "/steps/0/check/1/pass/0",
            '"clam" is not an answer of one_of (calm, angry); did you mean "calm"?',
        ),
        (14, 5, "/steps/1/advisory", "advisory is allowed only beside check"),
        (15, 5, "/steps/2", 'expected a step (a map), got "just a string"'),
    ]


def test_check_problems_are_the_cores_rerooted_at_the_step() -> None:
    raw = [{"ask": "A?", "pass": 1.5}, {"ask": "B?", "levels": ["x"], "pass": 0}]
    process = read(
        "---\nsteps:\n  - id: s\n    task: Do.\n    check:\n"
        "      - {ask: A?, pass: 1.5}\n      - {ask: B?, levels: [x], pass: 0}\n---\n"
    )
    found = publication_problems(process, profiles=[PROFILE])
    core = validate_check(raw)
    assert [p.path for p in found] == [("steps", 0, "check", *p.path) for p in core]
    assert [p.message for p in found] == [p.message for p in core]
    # Each at its value: a flow map member, a flow list.
    assert [(p.line, p.column) for p in found] == [(6, 25), (7, 27)]


def test_a_missing_key_is_placed_at_the_question_that_lacks_it() -> None:
    found = lint("---\nsteps:\n  - id: s\n    agent: Do.\n    check:\n      - pass: 0.9\n---\n")
    assert found == [
        (
            6,
            9,
            "/steps/0/check/0",
            'missing "ask": every question needs ask: the question, in plain language',
        )
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            {"profiles": ["core-1"]},
            "check needs the check-1 profile, which this server does not offer (profiles: core-1)",
            id="server-without-check-1",
        ),
        pytest.param(
            {"profiles": []},
            "check needs the check-1 profile, which this server does not offer (profiles: none)",
            id="server-with-no-profiles",
        ),
        pytest.param(
            {"profiles": [PROFILE], "evaluator_configured": False},
            "check needs an evaluator, and this server has none configured",
            id="no-evaluator-configured",
        ),
    ],
)
def test_a_server_that_cannot_run_checks_refuses_every_step_with_one(
    options: dict[str, Any], message: str
) -> None:
    found = lint(SHORT, **options)
    assert found == [(8, 5, "/steps/0/check", message)]


def test_steps_without_check_publish_anywhere() -> None:
    text = "---\nsteps:\n  - id: a\n    agent: Do.\n---\n"
    assert lint(text, profiles=[]) == []
    assert lint(text, evaluator_configured=False) == []


@pytest.mark.parametrize("kind", ["agent", "task"])
def test_check_sits_on_agent_and_task_steps(kind: str) -> None:
    assert lint(f"---\nsteps:\n  - id: a\n    {kind}: Do.\n    check: Done?\n---\n") == []


@pytest.mark.parametrize(
    ("step", "kind"),
    [
        pytest.param("approve: Sign.", "an approve step", id="approve"),
        pytest.param("output: {}", "a step with no agent or task", id="no-kind"),
    ],
)
def test_check_on_any_other_step_is_refused(step: str, kind: str) -> None:
    found = lint(f"---\nsteps:\n  - id: a\n    {step}\n    check: Done?\n---\n")
    assert found == [
        (
            5,
            5,
            "/steps/0/check",
            f'check is allowed only on agent and task steps; step "a" is {kind}',
        )
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [("yes", '"yes"'), ("'true'", '"true"'), ("1", "1"), ("null", "null"), ("[true]", "a list")],
)
def test_advisory_is_only_a_boolean(value: str, shown: str) -> None:
    found = lint(
        f"---\nsteps:\n  - id: a\n    agent: Do.\n    check: Done?\n    advisory: {value}\n---\n"
    )
    assert found == [(6, 15, "/steps/0/advisory", f"advisory must be true or false, got {shown}")]


@pytest.mark.parametrize("value", ["true", "false"])
def test_advisory_beside_check_publishes(value: str) -> None:
    text = f"---\nsteps:\n  - id: a\n    agent: Do.\n    check: Done?\n    advisory: {value}\n---\n"
    assert lint(text) == []


def test_the_limits_decide_which_thresholds_are_valid() -> None:
    text = (
        "---\nsteps:\n  - id: a\n    agent: Do.\n    check:\n      - {ask: Done?, pass: 0.6}\n---\n"
    )
    assert lint(text) == []
    found = lint(text, limits=Limits(check_fail=0.7))
    assert [p[2] for p in found] == ["/steps/0/check/0/pass"]


def test_a_problem_formats_as_one_lint_line() -> None:
    problem = ProcessProblem(("steps", 0, "check", "a/b"), "bad", 3, 7)
    assert problem.pointer == "/steps/0/check/a~1b"
    assert problem.format("x/PROCESS.md") == "x/PROCESS.md:3:7: /steps/0/check/a~1b: bad"


# describe ---------------------------------------------------------------------------------------


def test_describe_lists_check_1_only_while_an_evaluator_is_configured() -> None:
    on = describe_fragment(evaluator_configured=True, run_data_bytes=1_048_576, profiles=["core-1"])
    off = describe_fragment(
        evaluator_configured=False, run_data_bytes=1_048_576, profiles=["core-1"]
    )
    assert on["profiles"] == ["core-1", PROFILE]
    assert off["profiles"] == ["core-1"]
    # A server that passes check-1 in its own list does not lose the rule.
    again = describe_fragment(evaluator_configured=False, run_data_bytes=1, profiles=[PROFILE])
    assert again["profiles"] == []


def test_describe_limits_carry_the_five_keys() -> None:
    fragment = describe_fragment(evaluator_configured=True, run_data_bytes=1_048_576)
    assert fragment["limits"] == {
        "runDataBytes": 1_048_576,
        "checkPass": 0.9,
        "checkFail": None,
        "checkConfidence": 0.8,
        "checkStateBytes": 65536,
    }
    custom = describe_fragment(
        evaluator_configured=True,
        run_data_bytes=2048,
        limits=Limits(check_pass=0.8, check_fail=0.3, check_confidence=0.7, check_state_bytes=1024),
    )
    assert custom["limits"] == {
        "runDataBytes": 2048,
        "checkPass": 0.8,
        "checkFail": 0.3,
        "checkConfidence": 0.7,
        "checkStateBytes": 1024,
    }
    # What a server publishes reads back as the same limits.
    assert Limits.from_json(custom["limits"]) == Limits(0.8, 0.3, 0.7, 1024)


@pytest.mark.parametrize("size", [0, -1, 1.5, "65536", True, None])
def test_describe_refuses_a_bad_run_data_size(size: Any) -> None:
    with pytest.raises(ValueError, match="run_data_bytes must be a positive int"):
        describe_fragment(evaluator_configured=True, run_data_bytes=size)


# Material and the step's check -------------------------------------------------------------------


def test_material_is_the_steps_instructions_and_the_body_as_written() -> None:
    process = read(SHORT)
    submission = Submission({"cleared": True, "summary": "Clear."})
    material = material_for(process, "check_vendor", submission=submission, run_data={"input": {}})
    assert material.instructions == process.step("check_vendor").instructions
    assert material.body == process.body
    assert material.submission == submission
    assert material.run_data == {"input": {}}


def test_material_for_a_step_without_text_instructions_is_refused() -> None:
    process = read("---\nsteps:\n  - id: a\n    agent: [not, text]\n    check: Done?\n---\n")
    with pytest.raises(ProcessError, match=r'PROCESS.md:4:12: step "a" has no instructions'):
        material_for(process, "a", submission=Submission({}), run_data={})


def test_check_for_parses_the_steps_check_and_roots_its_problems() -> None:
    process = read(SHORT)
    check = process.check_for("check_vendor")
    assert check.asks == ("The cleared verdict matches what the attached report says.",)
    with pytest.raises(ProcessError, match=r'PROCESS\.md:9:5: step "sign" has no check'):
        process.check_for("sign")
    bad = read("---\nsteps:\n  - id: a\n    agent: Do.\n    check: [{ask: A?, pass: 2}]\n---\n")
    with pytest.raises(CheckError) as caught:
        bad.check_for("a")
    assert [p.pointer for p in caught.value.problems] == ["/steps/0/check/0/pass"]


def test_the_full_form_of_the_profile_reads_from_a_file() -> None:
    import io

    from ruamel.yaml import YAML

    out = io.StringIO()
    YAML(typ="safe", pure=True).dump(
        {"steps": [{"id": "s", "agent": "Do.", "check": spec_full_form()}]}, out
    )
    process = read(f"---\n{out.getvalue()}---\n")
    assert process.check_for("s").asks[0] == SPEC_ASK
    assert publication_problems(process, profiles=[PROFILE]) == ()
