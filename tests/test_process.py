"""PROCESS.md files: reading, core-2's shape, the profile's publication rules, describe, and
material."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
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
    lint_process,
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
description: A vendor is screened by an agent and signed off by a person.
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

Found = list[tuple[int, int, str, str]]


def doc(*lines: str) -> str:
    """A PROCESS.md file whose frontmatter is ``lines``: the first of them is line 2."""
    return "---\n" + "".join(f"{line}\n" for line in lines) + "---\n"


def steps(*lines: str) -> str:
    """A valid head (``name`` line 2, ``description`` line 3, ``steps:`` line 4), then
    ``lines`` from line 5."""
    return doc("name: test", "description: A test.", "steps:", *lines)


def read(text: str) -> Process:
    return read_process(text, source="PROCESS.md")


def shown(problems: tuple[ProcessProblem, ...]) -> Found:
    return [(p.line, p.column, p.pointer, p.message) for p in problems]


def lint(text: str, **options: Any) -> Found:
    """The profile's problems of a file core-2 takes."""
    options.setdefault("profiles", [PROFILE])
    return shown(publication_problems(read(text), **options))


def refused(text: str) -> Found:
    """The shape problems of a file core-2 refuses: read_process raises them all, and
    lint_process (which adds the profile's) gives the same when the profile has nothing."""
    with pytest.raises(ProcessError) as caught:
        read(text)
    found = shown(caught.value.problems)
    assert found, "a shape refusal carries its problems"
    assert shown(lint_process(text, source="PROCESS.md", profiles=[PROFILE])) == found
    return found


# Reading --------------------------------------------------------------------------------------


def test_frontmatter_and_body_are_split_with_the_body_exactly_as_written() -> None:
    process = read(SHORT)
    assert process.body == "# Vendor onboarding\n\nBody text, *exactly* as written.\n"
    assert [step.id for step in process.steps] == ["check_vendor", "sign"]
    assert [step.kind for step in process.steps] == ["agent", "approve"]
    assert process.step("check_vendor").instructions == (
        "Check the vendor against the OFAC and EU lists. Attach the report."
    )
    assert process.data["name"] == "vendor-onboarding"


def test_windows_line_endings_and_a_byte_order_mark_are_read() -> None:
    text = "\ufeff" + SHORT.replace("\n", "\r\n")
    process = read(text)
    assert process.body == "# Vendor onboarding\r\n\r\nBody text, *exactly* as written.\r\n"
    assert process.step("check_vendor").has_check


def test_problems_are_placed_in_the_files_own_lines_with_crlf_and_a_bom() -> None:
    text = "\ufeff" + steps("  - id: a", "    chek: Done?").replace("\n", "\r\n")
    assert refused(text) == [(6, 5, "/steps/0/chek", 'unknown key "chek"; did you mean "check"?')]


def test_yaml_1_2_strings_stay_strings_in_a_process() -> None:
    process = read(doc("name: test", "description: no", "steps:", "  - {id: a, agent: on}"))
    assert process.data["description"] == "no"
    assert process.step("a").instructions == "on"
    # So `advisory: yes` is a string, which core-2 refuses, not a quiet true.
    text = steps("  - id: a", "    agent: Do.", "    check: Done?", "    advisory: yes")
    assert refused(text) == [(8, 15, "/steps/0/advisory", 'expected true or false, got "yes"')]


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
            "---\nname: x\nname: y\n---\n",
            "PROCESS.md:3:1",
            'invalid YAML: duplicate key "name" (first at line 2, column 1)',
            id="duplicate-top-level-key",
        ),
    ],
)
def test_what_is_not_a_readable_process_is_one_line_with_file_and_line(
    text: str, where: str, message: str
) -> None:
    for attempt in (read, lambda t: lint_process(t, source="PROCESS.md", profiles=[PROFILE])):
        with pytest.raises(ProcessError) as caught:
            attempt(text)
        line = str(caught.value)
        assert line.startswith(f"{where}: ")
        assert message in line
        assert "\n" not in line
        assert caught.value.problems == ()


def test_load_process_names_the_path_of_a_file_it_cannot_read(tmp_path: Path) -> None:
    with pytest.raises(ProcessError, match=r"missing\.md: cannot read"):
        load_process(tmp_path / "missing.md")
    binary = tmp_path / "binary.md"
    binary.write_bytes(b"---\n\xff\xfe\n---\n")
    with pytest.raises(ProcessError, match=r"binary\.md: not UTF-8 text \(byte 4\)"):
        load_process(binary)


def test_load_process_refuses_what_read_process_refuses(tmp_path: Path) -> None:
    path = tmp_path / "PROCESS.md"
    path.write_text(steps("  - id: a", "    agnet: Do."))
    with pytest.raises(ProcessError) as caught:
        load_process(path)
    assert str(caught.value) == (
        f'{path}:6:5: /steps/0/agnet: unknown key "agnet"; did you mean "agent"?'
    )


def test_a_missing_step_names_the_steps_there_are() -> None:
    with pytest.raises(
        ProcessError, match=r'PROCESS.md:4:1: no step has id "nope" \(steps: check_vendor, sign\)'
    ):
        read(SHORT).step("nope")


# core-2's shape: each kind of refusal, with its line, column and pointer ----------------------

STEP_KEYS = (
    "id, agent, task, approve, wait, wait_until, wait_for, finish, parallel, output, evidence, "
    "next, person, on_reject, due, timeout, on_timeout, check, advisory"
)
NAME = (
    'a name: lower-case words of a-z and 0-9 joined by single "-" (vendor-check), '
    "at most 64 characters"
)
TYPES = "one of string, number, boolean, date, datetime, list, object, person"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Unknown keys, at the key, with the key they misspell.
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    chek: Is the amount right?"),
            (7, 5, "/steps/0/chek", 'unknown key "chek"; did you mean "check"?'),
            id="step-chek",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    check: Done?", "    advisry: true"),
            (8, 5, "/steps/0/advisry", 'unknown key "advisry"; did you mean "advisory"?'),
            id="step-advisry",
        ),
        pytest.param(
            steps("  - id: a", "    agnet: Do."),
            (6, 5, "/steps/0/agnet", 'unknown key "agnet"; did you mean "agent"?'),
            id="step-agnet",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    Check: Done?"),
            (7, 5, "/steps/0/Check", 'unknown key "Check"; did you mean "check"?'),
            id="step-capitalised",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    on-reject: a"),
            (7, 5, "/steps/0/on-reject", 'unknown key "on-reject"; did you mean "on_reject"?'),
            id="step-dash-for-underscore",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    colour: red"),
            (7, 5, "/steps/0/colour", f'unknown key "colour"; a step takes {STEP_KEYS}'),
            id="step-unknown",
        ),
        pytest.param(
            steps(
                "  - id: a", "    agent: Do.", "    check:", "      - ask: Done?", "    pass: 0.9"
            ),
            (
                9,
                5,
                "/steps/0/pass",
                'unknown key "pass": pass is a key of a check question, not of a step '
                "(is it indented under check?)",
            ),
            id="step-question-key-indented-too-little",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "input: {amount: number}",
                "steps:",
                "  - id: a",
            ),
            (4, 1, "/input", 'unknown key "input"; did you mean "inputs"?'),
            id="top-input",
        ),
        pytest.param(
            doc("name: test", "title: A test", "description: A test.", "steps:", "  - id: a"),
            (
                3,
                1,
                "/title",
                'unknown key "title"; the frontmatter takes name, description, inputs, steps, '
                "data_sources, emails, files",
            ),
            id="top-unknown",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "inputs:",
                "  amount: {type: number, descripton: In EUR.}",
                "steps:",
                "  - id: a",
            ),
            (
                5,
                26,
                "/inputs/amount/descripton",
                'unknown key "descripton"; did you mean "description"?',
            ),
            id="field-type-descripton",
        ),
        pytest.param(
            steps(
                "  - id: a",
                "    agent: Do.",
                "    output:",
                "      rows: {type: list, items: {type: object, optinal: true}}",
            ),
            (
                8,
                48,
                "/steps/0/output/rows/items/optinal",
                'unknown key "optinal"; did you mean "optional"?',
            ),
            id="field-type-items-optinal",
        ),
        pytest.param(
            steps(
                "  - id: a",
                "    agent: Do.",
                "    next: [b, {to: b, wen: Always.}]",
                "  - id: b",
                "    agent: Do.",
            ),
            (7, 23, "/steps/0/next/1/wen", 'unknown key "wen"; did you mean "when"?'),
            id="route-wen",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "steps:",
                "  - id: a",
                "data_sources:",
                "  - {key: crm, operations: [read], resource: [accounts]}",
            ),
            (
                7,
                36,
                "/data_sources/0/resource",
                'unknown key "resource"; did you mean "resources"?',
            ),
            id="data-source-resource",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "steps:",
                "  - id: a",
                "emails: {templates: [welcome], recipient: ['@example.com']}",
            ),
            (6, 32, "/emails/recipient", 'unknown key "recipient"; did you mean "recipients"?'),
            id="emails-recipient",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "steps:",
                "  - id: a",
                "emails: {templates: [welcome], cc: [a]}",
            ),
            (6, 32, "/emails/cc", 'unknown key "cc"; emails takes templates, recipients'),
            id="emails-unknown",
        ),
        # Wrong types, at the value.
        pytest.param(
            steps("  - id: a", "    agent: [Do, it]"),
            (6, 12, "/steps/0/agent", "expected a string, got a list"),
            id="agent-a-list",
        ),
        pytest.param(
            steps("  - id: 7", "    agent: Do."),
            (5, 9, "/steps/0/id", "expected an id (a string), got 7"),
            id="id-a-number",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    check: Done?", "    advisory: 1"),
            (8, 15, "/steps/0/advisory", "expected true or false, got 1"),
            id="advisory-a-number",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    evidence: [file, url]"),
            (7, 22, "/steps/0/evidence/1", 'expected file or link, got "url"'),
            id="evidence-url",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    next: 5"),
            (
                7,
                11,
                "/steps/0/next",
                "expected a step id, or a list of routes (step ids, or maps with to and when), "
                "got 5",
            ),
            id="next-a-number",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    next: [{to: b, when: ''}]"),
            (7, 26, "/steps/0/next/0/when", 'expected a non-empty string, got ""'),
            id="route-when-empty",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    output: {total: strng}"),
            (
                7,
                21,
                "/steps/0/output/total",
                f'expected {TYPES}, got "strng"; did you mean "string"?',
            ),
            id="field-type-strng",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    output: {lines: array}"),
            (7, 21, "/steps/0/output/lines", f'expected {TYPES}, got "array"'),
            id="field-type-array",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    output: {lines: [string]}"),
            (
                7,
                21,
                "/steps/0/output/lines",
                f"expected a field type: {TYPES}, or a map with type, got a list",
            ),
            id="field-type-a-list",
        ),
        pytest.param(
            doc(
                "name: test", "description: A test.", "inputs: {'': string}", "steps:", "  - id: a"
            ),
            (4, 10, "/inputs/", 'expected a non-empty field name, got ""'),
            id="field-name-empty",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "inputs: {level: {type: number, one_of: [1, .nan]}}",
                "steps:",
                "  - id: a",
            ),
            (
                4,
                44,
                "/inputs/level/one_of/1",
                "expected a string, a number, true or false, got nan",
            ),
            id="one-of-nan",
        ),
        pytest.param(
            doc("name: test", "description: A test.", "files: 'yes'", "steps:", "  - id: a"),
            (4, 8, "/files", 'expected true or false, got "yes"'),
            id="files-a-string",
        ),
        pytest.param(
            doc("name: test", "description: A test.", "steps: three"),
            (4, 8, "/steps", 'expected a non-empty list of steps, got "three"'),
            id="steps-text",
        ),
        pytest.param(
            doc("name: test", "description: A test.", "steps:", "  a: 1"),
            (5, 3, "/steps", "expected a non-empty list of steps, got a map"),
            id="steps-a-map",
        ),
        pytest.param(
            doc("name: test", "description: A test.", "steps: []"),
            (4, 8, "/steps", "expected a non-empty list of steps, got an empty list"),
            id="steps-empty",
        ),
        pytest.param(
            steps("  - just a string"),
            (5, 5, "/steps/0", 'expected a step: a map with id, got "just a string"'),
            id="step-not-a-map",
        ),
        pytest.param(
            doc("- a", "- b"),
            (
                2,
                1,
                "",
                "expected the frontmatter to be a map with name, description and steps, got a list",
            ),
            id="frontmatter-a-list",
        ),
        pytest.param(
            doc(),
            (
                2,
                1,
                "",
                "expected the frontmatter to be a map with name, description and steps, got null",
            ),
            id="frontmatter-empty",
        ),
        # Missing keys, at the map that lacks them.
        pytest.param(
            doc("description: A test.", "steps:", "  - id: a"),
            (2, 1, "", f'missing "name": the frontmatter needs {NAME}'),
            id="missing-name",
        ),
        pytest.param(
            doc("name: test", "steps:", "  - id: a"),
            (2, 1, "", 'missing "description": the frontmatter needs a non-empty description'),
            id="missing-description",
        ),
        pytest.param(
            doc("name: test", "description: A test."),
            (2, 1, "", 'missing "steps": the frontmatter needs a non-empty list of steps'),
            id="missing-steps",
        ),
        pytest.param(
            steps("  - agent: Do."),
            (5, 5, "/steps/0", 'missing "id": a step needs an id (a string)'),
            id="missing-step-id",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    next:", "      - when: Always."),
            (
                8,
                9,
                "/steps/0/next/0",
                'missing "to": a route needs the step id to go to (a string)',
            ),
            id="missing-route-to",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "inputs: {amount: {optional: true}}",
                "steps:",
                "  - id: a",
            ),
            (4, 18, "/inputs/amount", f'missing "type": a field type needs {TYPES}'),
            id="missing-field-type",
        ),
        pytest.param(
            doc("name: test", "description: A test.", "steps:", "  - id: a", "emails: {}"),
            (
                6,
                9,
                "/emails",
                'missing "templates": emails needs a non-empty list of template names',
            ),
            id="missing-templates",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "steps:",
                "  - id: a",
                "data_sources: [{key: crm}]",
            ),
            (
                6,
                16,
                "/data_sources/0",
                'missing "operations": a data source needs a non-empty list of operations '
                "(read, write)",
            ),
            id="missing-operations",
        ),
        # The name, the description, and the other strings with a shape.
        pytest.param(
            doc("name: Vendor Check", "description: A test.", "steps:", "  - id: a"),
            (2, 7, "/name", f'expected {NAME}, got "Vendor Check"'),
            id="name-pattern",
        ),
        pytest.param(
            doc("name: vendor--check", "description: A test.", "steps:", "  - id: a"),
            (2, 7, "/name", f'expected {NAME}, got "vendor--check"'),
            id="name-double-dash",
        ),
        pytest.param(
            doc('name: "vendor-check\\n"', "description: A test.", "steps:", "  - id: a"),
            (2, 7, "/name", f'expected {NAME}, got "vendor-check\\n"'),
            id="name-final-newline",
        ),
        pytest.param(
            doc("name: " + "a" * 65, "description: A test.", "steps:", "  - id: a"),
            (2, 7, "/name", f'expected {NAME}, got "{"a" * 58}… (65 characters)'),
            id="name-too-long",
        ),
        pytest.param(
            doc("name: test", "description: ''", "steps:", "  - id: a"),
            (3, 14, "/description", 'expected a non-empty description, got ""'),
            id="description-empty",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "steps:",
                "  - id: a",
                "data_sources: [{key: Crm, operations: [read]}]",
            ),
            (
                6,
                22,
                "/data_sources/0/key",
                "expected a key: a lower-case letter, then up to 63 of a-z, 0-9, _ and -, "
                'got "Crm"',
            ),
            id="data-source-key",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "steps:",
                "  - id: a",
                'data_sources: [{key: "crm\\n", operations: [read]}]',
            ),
            (
                6,
                22,
                "/data_sources/0/key",
                "expected a key: a lower-case letter, then up to 63 of a-z, 0-9, _ and -, "
                'got "crm\\n"',
            ),
            id="data-source-key-final-newline",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "steps:",
                "  - id: a",
                "data_sources: [{key: crm, operations: [delete]}]",
            ),
            (6, 40, "/data_sources/0/operations/0", 'expected read or write, got "delete"'),
            id="data-source-operation",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "steps:",
                "  - id: a",
                "emails: {templates: [welcome], recipients: ['@localhost']}",
            ),
            (
                6,
                45,
                "/emails/recipients/0",
                'expected a recipient domain shaped @domain.tld, got "@localhost"',
            ),
            id="recipient-without-a-dot",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "steps:",
                "  - id: a",
                'emails: {templates: [welcome], recipients: ["@a.b\\u00a0"]}',
            ),
            (
                6,
                45,
                "/emails/recipients/0",
                'expected a recipient domain shaped @domain.tld, got "@a.b\\xa0"',
            ),
            id="recipient-with-a-no-break-space",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "steps:",
                "  - id: a",
                'emails: {templates: [welcome], recipients: ["@a.b\\n"]}',
            ),
            (
                6,
                45,
                "/emails/recipients/0",
                'expected a recipient domain shaped @domain.tld, got "@a.b\\n"',
            ),
            id="recipient-final-newline",
        ),
        pytest.param(
            doc(
                "name: test",
                "description: A test.",
                "steps:",
                "  - id: a",
                f"emails: {{templates: [{'t' * 101}]}}",
            ),
            (
                6,
                22,
                "/emails/templates/0",
                f'expected a template name of 1 to 100 characters, got "{"t" * 58}… '
                "(101 characters)",
            ),
            id="template-too-long",
        ),
        # Ids a schema cannot see repeat: at the later copy, naming the first.
        pytest.param(
            steps("  - id: a", "    agent: One.", "  - id: a", "    agent: Two."),
            (
                7,
                9,
                "/steps/1/id",
                'step id "a" is already the id of the step on line 5: ids are unique within a '
                "process",
            ),
            id="repeated-id",
        ),
    ],
)
def test_core_2_refuses_each_fault_with_its_place(
    text: str, expected: tuple[int, int, str, str]
) -> None:
    assert refused(text) == [expected]


@pytest.mark.parametrize("length", [1, 64])
def test_a_name_of_1_to_64_characters_is_taken(length: int) -> None:
    name = ("ab-" * 30)[: length - 1] + "z"
    assert (
        read(doc(f"name: {name}", "description: A test.", "steps:", "  - id: a")).data["name"]
        == name
    )


def test_every_core_2_shape_of_the_frontmatter_is_taken() -> None:
    text = doc(
        "name: every-key-2",
        "description: Every key core-2 has.",
        "inputs:",
        "  vendor: string",
        "  amount: {type: number, description: In EUR., optional: true, one_of: [1, 2.5, x, true]}",
        "  lines: {type: list, items: {type: object, items: person}}",
        "steps:",
        "  - id: a",
        "    agent: Do.",
        "    output: {total: number, when: datetime, day: date}",
        "    evidence: [file, link]",
        "    next: [b, {to: c}, {to: d, when: The amount is large.}]",
        "    check: Done?",
        "    advisory: false",
        "  - {id: b, task: Do., person: someone, due: 2 days, on_reject: a}",
        "  - {id: c, approve: Sign., timeout: 1 day, on_timeout: d}",
        "  - {id: d, wait: 1 hour, next: e}",
        "  - {id: e, wait_until: '2026-10-06', wait_for: an email}",
        "  - {id: f, parallel: [a, b]}",
        "  - {id: g, finish: Done.}",
        "data_sources:",
        "  - {key: crm_2-x, operations: [read, write], resources: [accounts]}",
        "emails: {templates: [welcome], recipients: ['@example.com', '@a.b.c']}",
        "files: true",
    )
    process = read(text)
    assert [step.id for step in process.steps] == list("abcdefg")
    assert publication_problems(process, profiles=[PROFILE]) == ()


def test_every_shape_problem_of_a_file_comes_at_once_in_file_order() -> None:
    text = doc(
        "name: Vendor Check",  # 2
        "description: ''",  # 3
        "steps:",  # 4
        "  - id: a",  # 5
        "    agnet: Do.",  # 6
        "    chek: Done?",  # 7
        "  - id: a",  # 8
        "    task: Do.",  # 9
        "    advisory: yes",  # 10
        "    output: {x: array}",  # 11
        "  - 7",  # 12
        "inputs: {amount: {type: number, descripton: x}}",  # 13
    )
    with pytest.raises(ProcessError) as caught:
        read(text)
    error = caught.value
    expected = [
        (2, 7, "/name", f'expected {NAME}, got "Vendor Check"'),
        (3, 14, "/description", 'expected a non-empty description, got ""'),
        (6, 5, "/steps/0/agnet", 'unknown key "agnet"; did you mean "agent"?'),
        (7, 5, "/steps/0/chek", 'unknown key "chek"; did you mean "check"?'),
        (
            8,
            9,
            "/steps/1/id",
            'step id "a" is already the id of the step on line 5: ids are unique within a process',
        ),
        (10, 15, "/steps/1/advisory", 'expected true or false, got "yes"'),
        (11, 17, "/steps/1/output/x", f'expected {TYPES}, got "array"'),
        (12, 5, "/steps/2", "expected a step: a map with id, got 7"),
        (
            13,
            33,
            "/inputs/amount/descripton",
            'unknown key "descripton"; did you mean "description"?',
        ),
    ]
    assert shown(error.problems) == expected
    # str() is the lint lines, one per problem; mark is where the first is.
    assert str(error).splitlines() == [p.format("PROCESS.md") for p in error.problems]
    assert str(error).splitlines()[0] == (
        f'PROCESS.md:2:7: /name: expected {NAME}, got "Vendor Check"'
    )
    assert (error.mark.line, error.mark.column) == (2, 7)  # type: ignore[union-attr]
    assert error.message == "core-2 refuses this frontmatter: 9 problems"
    assert error.source == "PROCESS.md"
    assert isinstance(error, ValueError)


# One fault, one problem --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            # The kind is misspelt: the step is not also "a step with no agent or task".
            steps("  - id: a", "    agnet: Do.", "    check: Done?"),
            [(6, 5, "/steps/0/agnet", 'unknown key "agnet"; did you mean "agent"?')],
            id="misspelt-kind-beside-check",
        ),
        pytest.param(
            # A string advisory without check: its type, not also its place.
            steps("  - id: a", "    agent: Do.", "    advisory: yes"),
            [(7, 15, "/steps/0/advisory", 'expected true or false, got "yes"')],
            id="advisory-yes-without-check",
        ),
        pytest.param(
            # The check's value is judged once, by validate_check, not by the schema as well.
            steps("  - id: a", "    agent: Do.", "    check: [{ask: Done?, pas: 0.9}]"),
            [
                (
                    7,
                    26,
                    "/steps/0/check/0/pas",
                    'unknown key "pas"; did you mean "pass"? a yes/no question takes ask, pass, '
                    "fail",
                )
            ],
            id="check-key-problem",
        ),
        pytest.param(
            steps("  - id: a", "    agent: Do.", "    check: 7"),
            [
                (
                    7,
                    12,
                    "/steps/0/check",
                    "expected a question (a string) or a non-empty list of questions, got 7",
                )
            ],
            id="check-a-number",
        ),
        pytest.param(
            # Too long and with a space: one problem, whose message says both.
            doc("name: " + "Vendor Check " * 6, "description: A test.", "steps:", "  - id: a"),
            [
                (
                    2,
                    7,
                    "/name",
                    f'expected {NAME}, got "{("Vendor Check " * 5)[:58]}… (77 characters)',
                )
            ],
            id="name-long-and-spaced",
        ),
        pytest.param(
            # advisory inside a question: at the key to remove, as any key a question lacks.
            steps(
                "  - id: a",
                "    agent: Do.",
                "    check:",
                "      - ask: Done?",
                "        advisory: true",
            ),
            [
                (
                    9,
                    9,
                    "/steps/0/check/0/advisory",
                    "advisory is a step key beside check, not a key of a question",
                )
            ],
            id="advisory-in-a-question",
        ),
        pytest.param(
            steps(
                "  - id: a",
                "    agent: Do.",
                "    check:",
                "      - ask: Done?",
                "        confidence: 0.8",
            ),
            [
                (
                    9,
                    9,
                    "/steps/0/check/0/confidence",
                    "confidence does not belong here: a yes/no question has no confidence "
                    "threshold (its answer is a probability: use pass, and fail for an unsure "
                    "band); confidence is for choice and rubric questions",
                )
            ],
            id="confidence-on-a-yes-no-question",
        ),
    ],
)
def test_one_fault_gives_one_problem(text: str, expected: Found) -> None:
    assert shown(lint_process(text, source="PROCESS.md", profiles=[PROFILE])) == expected


def test_an_id_used_three_times_is_refused_at_each_later_copy() -> None:
    text = steps(
        "  - {id: a, agent: One.}",
        "  - {id: b, agent: Two.}",
        "  - {id: a, agent: Three.}",
        "  - {id: a, agent: Four.}",
    )
    message = 'step id "a" is already the id of the step on line 5: ids are unique within a process'
    assert refused(text) == [(7, 10, "/steps/2/id", message), (8, 10, "/steps/3/id", message)]


def test_a_hand_built_process_with_a_shared_id_cannot_pick_it() -> None:
    # read_process refuses such a file; a Process built by hand is refused at the lookup.
    process = read(steps("  - id: a", "    agent: One.", "  - id: b", "    agent: Two."))
    first, second = process.steps
    shared = attrs.evolve(process, steps=(first, attrs.evolve(second, id="a")))
    with pytest.raises(ProcessError) as caught:
        shared.step("a")
    assert str(caught.value) == (
        'PROCESS.md:7:9: step id "a" is used by more than one step (lines 5, 7)'
    )
    assert caught.value.problems == ()


def test_a_file_with_thousands_of_faults_gets_every_problem() -> None:
    many = 3000
    text = steps(*(f"  - {{id: s{n}, agent: Do., chek: x}}" for n in range(many)))
    found = lint_process(text, source="PROCESS.md", profiles=[PROFILE])
    assert [p.pointer for p in found] == [f"/steps/{n}/chek" for n in range(many)]
    assert [p.line for p in found] == list(range(5, 5 + many))


def test_a_recipient_made_to_backtrack_is_refused_at_once() -> None:
    # "@" then 200,000 dots: a pattern like ^@[^\s@]+\.[^\s@]+$ tries every split of the dots
    # (about 10^10 steps); the shipped one reads each character once.
    recipient = "@" + "." * 200_000 + "x@"
    text = doc(
        "name: test",
        "description: A test.",
        "steps: [{id: a}]",
        f"emails: {{templates: [t], recipients: ['{recipient}']}}",
    )
    (problem,) = lint_process(text, profiles=[PROFILE])
    assert problem.pointer == "/emails/recipients/0"
    assert len(problem.message) < 200


def test_field_types_nested_deep_are_followed_to_the_fault() -> None:
    depth = 45
    nested = "{type: list, items: " * depth + "{type: lst}" + "}" * depth
    (problem,) = refused(steps("  - id: a", f"    output: {{rows: {nested}}}"))
    assert problem[2] == "/steps/0/output/rows" + "/items" * depth + "/type"
    assert problem[3] == f'expected {TYPES}, got "lst"; did you mean "list"?'


# The bundled examples, and every conformance check key, through the stricter reader -------------


@pytest.mark.parametrize(
    "path", sorted(EXAMPLES.glob("*/PROCESS.md")), ids=lambda path: path.parent.name
)
def test_every_example_reads_clean_and_publishes(path: Path) -> None:
    process = load_process(path)
    assert (
        lint_process(path.read_text(encoding="utf-8"), source=str(path), profiles=[PROFILE]) == ()
    )
    assert publication_problems(process, profiles=[PROFILE]) == ()
    for step in process.steps:
        if step.has_check:
            assert process.check_for(step.id or "").asks


def test_every_conformance_check_key_on_a_step_gives_exactly_the_cores_problems() -> None:
    import json

    from checkprofile.conformance import load_cases

    cases = [
        case
        for case in load_cases()
        if case.stage == "check_keys" and "limits_refused" not in case.data["expect"]
    ]
    assert len(cases) > 50
    for case in cases:
        raw = case.data
        limits = Limits.from_json(raw["limits"]) if "limits" in raw else Limits()
        # JSON is YAML 1.2: the check key goes into a step exactly as the case has it.
        frontmatter = {
            "name": "case",
            "description": "A conformance case.",
            "steps": [{"id": "s", "agent": "Do.", "check": raw["check"]}],
        }
        # Escaped: ruamel's scanner reads a raw U+0085 inside a quoted scalar as a line break.
        text = f"---\n{json.dumps(frontmatter)}\n---\n"
        process = read(text)  # never refused for its shape: the check is the profile's
        found = publication_problems(process, profiles=[PROFILE], limits=limits)
        core = validate_check(raw["check"], limits=limits)
        # The same problems; publication_problems gives them in file order, the core by question.
        assert sorted((p.pointer, p.message) for p in found) == sorted(
            (f"/steps/0/check{p.pointer}", p.message) for p in core
        ), case.id
        assert (not found) == raw["expect"]["valid"], case.id


# Properties -----------------------------------------------------------------------------------

# (A property test module of its own holds the generated frontmatters: test_process_schema.py.)


# Publication rules ---------------------------------------------------------------------------


def test_lint_process_gives_the_shape_and_the_profile_together_in_file_order() -> None:
    text = steps(
        "  - id: one",  # 5
        "    approve: Sign.",  # 6
        "    advisory: yes",  # 7
        "    check:",  # 8
        "      - ask: Is it done?",  # 9
        "        pas: 0.9",  # 10
        "      - ask: Tone?",  # 11
        "        one_of: {calm: Calm., angry: Angry.}",  # 12
        "        pass: [clam]",  # 13
        "  - id: two",  # 14
        "    agent: Do.",  # 15
        "    advisory: true",  # 16
        "  - just a string",  # 17
    )
    assert shown(lint_process(text, source="PROCESS.md", profiles=[PROFILE])) == [
        (7, 15, "/steps/0/advisory", 'expected true or false, got "yes"'),
        (
            8,
            5,
            "/steps/0/check",
            'check is allowed only on agent and task steps; step "one" is an approve step',
        ),
        (
            10,
            9,
            "/steps/0/check/0/pas",
            'unknown key "pas"; did you mean "pass"? a yes/no question takes ask, pass, fail',
        ),
        (
            13,
            16,
            "/steps/0/check/1/pass/0",
            '"clam" is not an answer of one_of (calm, angry); did you mean "calm"?',
        ),
        (16, 5, "/steps/1/advisory", "advisory is allowed only beside check"),
        (17, 5, "/steps/2", 'expected a step: a map with id, got "just a string"'),
    ]


def test_check_problems_are_the_cores_rerooted_at_the_step() -> None:
    raw = [{"ask": "A?", "pass": 1.5}, {"ask": "B?", "levels": ["x"], "pass": 0}]
    process = read(
        steps(
            "  - id: s",
            "    task: Do.",
            "    check:",
            "      - {ask: A?, pass: 1.5}",
            "      - {ask: B?, levels: [x], pass: 0}",
        )
    )
    found = publication_problems(process, profiles=[PROFILE])
    core = validate_check(raw)
    assert [p.path for p in found] == [("steps", 0, "check", *p.path) for p in core]
    assert [p.message for p in found] == [p.message for p in core]
    # Each at its value: a flow map member, a flow list.
    assert [(p.line, p.column) for p in found] == [(8, 25), (9, 27)]


def test_a_missing_key_is_placed_at_the_question_that_lacks_it() -> None:
    found = lint(steps("  - id: s", "    agent: Do.", "    check:", "      - pass: 0.9"))
    assert found == [
        (
            8,
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
    assert found == [(9, 5, "/steps/0/check", message)]


def test_steps_without_check_publish_anywhere() -> None:
    text = steps("  - id: a", "    agent: Do.")
    assert lint(text, profiles=[]) == []
    assert lint(text, evaluator_configured=False) == []


@pytest.mark.parametrize("kind", ["agent", "task"])
def test_check_sits_on_agent_and_task_steps(kind: str) -> None:
    assert lint(steps("  - id: a", f"    {kind}: Do.", "    check: Done?")) == []


@pytest.mark.parametrize(
    ("step", "kind"),
    [
        pytest.param("approve: Sign.", "an approve step", id="approve"),
        pytest.param("output: {}", "a step with no agent or task", id="no-kind"),
        pytest.param("wait: For it.", "a wait step", id="wait"),
        pytest.param("finish: Done.", "a finish step", id="finish"),
        pytest.param("parallel: [b]", "a step with no agent or task", id="parallel-is-no-kind"),
        pytest.param(
            "agent: Do.\n    approve: Sign.", "a step of 2 kinds (agent, approve)", id="two-kinds"
        ),
        pytest.param(
            "agent: Do.\n    task: Do.", "a step of 2 kinds (agent, task)", id="agent-and-task"
        ),
    ],
)
def test_check_on_any_other_step_is_refused(step: str, kind: str) -> None:
    found = lint(steps("  - id: a", f"    {step}", "    check: Done?"))
    assert found == [
        (
            7 + step.count("\n"),
            5,
            "/steps/0/check",
            f'check is allowed only on agent and task steps; step "a" is {kind}',
        )
    ]


def test_a_step_of_two_kinds_or_none_has_no_kind_and_is_taken_without_check() -> None:
    text = steps("  - id: a", "    agent: Do.", "    approve: Sign.", "  - id: b")
    assert lint(text) == []
    process = read_process(text)
    assert [step.kind for step in process.steps] == [None, None]


def test_only_a_misspelt_kind_hides_a_misplaced_check() -> None:
    # An unknown key that is no kind's spelling (titel) does not excuse a check on an approve
    # step, nor on a step of no kind.
    def pointers(text: str) -> list[str]:
        return [p.pointer for p in lint_process(text, profiles=[PROFILE])]

    text = steps("  - id: a", "    approve: Sign.", "    titel: x", "    check: Done?")
    assert pointers(text) == ["/steps/0/titel", "/steps/0/check"]
    text = steps("  - id: a", "    colour: red", "    check: Done?")
    assert pointers(text) == ["/steps/0/colour", "/steps/0/check"]
    text = steps("  - id: a", "    agnet: Do.", "    check: Done?")
    assert pointers(text) == ["/steps/0/agnet"]


@pytest.mark.parametrize(
    ("value", "shown_as"),
    [("yes", '"yes"'), ("'true'", '"true"'), ("1", "1"), ("null", "null"), ("[true]", "a list")],
)
def test_advisory_is_only_a_boolean(value: str, shown_as: str) -> None:
    text = steps("  - id: a", "    agent: Do.", "    check: Done?", f"    advisory: {value}")
    assert refused(text) == [
        (8, 15, "/steps/0/advisory", f"expected true or false, got {shown_as}")
    ]


@pytest.mark.parametrize("value", ["true", "false"])
def test_advisory_beside_check_publishes(value: str) -> None:
    text = steps("  - id: a", "    agent: Do.", "    check: Done?", f"    advisory: {value}")
    assert lint(text) == []


@pytest.mark.parametrize("value", ["true", "false"])
def test_advisory_without_check_is_refused_at_its_key(value: str) -> None:
    text = steps("  - id: a", "    agent: Do.", f"    advisory: {value}")
    assert lint(text) == [(7, 5, "/steps/0/advisory", "advisory is allowed only beside check")]


def test_the_limits_decide_which_thresholds_are_valid() -> None:
    text = steps("  - id: a", "    agent: Do.", "    check:", "      - {ask: Done?, pass: 0.6}")
    assert lint(text) == []
    found = lint(text, limits=Limits(check_fail=0.7))
    assert [p[2] for p in found] == ["/steps/0/check/0/pass"]


def test_a_problem_formats_as_one_lint_line() -> None:
    problem = ProcessProblem(("steps", 0, "check", "a/b"), "bad", 3, 7)
    assert problem.pointer == "/steps/0/check/a~1b"
    assert problem.format("x/PROCESS.md") == "x/PROCESS.md:3:7: /steps/0/check/a~1b: bad"
    assert ProcessProblem((), "bad", 2, 1).format("P") == "P:2:1: /: bad"


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


def test_material_for_a_step_without_instructions_is_refused() -> None:
    process = read(steps("  - id: a", "    check: Done?"))
    with pytest.raises(ProcessError, match=r'PROCESS.md:5:9: step "a" has no instructions'):
        material_for(process, "a", submission=Submission({}), run_data={})


def test_check_for_parses_the_steps_check_and_roots_its_problems() -> None:
    process = read(SHORT)
    check = process.check_for("check_vendor")
    assert check.asks == ("The cleared verdict matches what the attached report says.",)
    with pytest.raises(ProcessError, match=r'PROCESS\.md:10:5: step "sign" has no check'):
        process.check_for("sign")
    bad = read(steps("  - id: a", "    agent: Do.", "    check: [{ask: A?, pass: 2}]"))
    with pytest.raises(CheckError) as caught:
        bad.check_for("a")
    assert [p.pointer for p in caught.value.problems] == ["/steps/0/check/0/pass"]


def test_the_full_form_of_the_profile_reads_from_a_file() -> None:
    import io

    from ruamel.yaml import YAML

    out = io.StringIO()
    YAML(typ="safe", pure=True).dump(
        {
            "name": "full-form",
            "description": "The profile's full form.",
            "steps": [{"id": "s", "agent": "Do.", "check": spec_full_form()}],
        },
        out,
    )
    process = read(f"---\n{out.getvalue()}---\n")
    assert process.check_for("s").asks[0] == SPEC_ASK
    assert publication_problems(process, profiles=[PROFILE]) == ()


def test_a_steps_advisory_is_read_through_the_step() -> None:
    # "advisory: Optional, true to record verdicts without ever blocking. Allowed only when
    # check is present." Only a real true makes a step advisory.
    process = read(
        steps(
            "  - id: a",
            "    agent: Do.",
            "    check: Done?",
            "    advisory: true",
            "  - id: b",
            "    agent: Do.",
            "    check: Done?",
            "    advisory: false",
            "  - id: c",
            "    agent: Do.",
            "    check: Done?",
        )
    )
    assert [process.step(step).advisory for step in "abc"] == [True, False, False]


def test_material_for_shows_the_route_when_asked() -> None:
    # Issue 40, item 5: docs/embedding.md says so; it was a TypeError.
    process = read(SHORT)
    submission = Submission({"cleared": True}, next="pay", reason="Cleared.")
    plain = material_for(process, "check_vendor", submission=submission, run_data={"input": {}})
    routed = material_for(
        process, "check_vendor", submission=submission, run_data={"input": {}}, show_route=True
    )
    assert (plain.show_route, routed.show_route) == (False, True)
    assert routed.submission == plain.submission == submission
