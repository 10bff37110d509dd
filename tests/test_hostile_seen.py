"""What a person sees is what was there (issue 21): one rule for text shown to a person, and one
rule for when two texts are the same.

Every text from outside (the process file, run data, the submission, the provider, the audit
records, a corpus) that a command prints or a text report renders has every character that does
not print as itself (ESC, CR, bidi controls, zero-width and other default-ignorable characters)
escaped: such a character could erase the verdict line and write another in its place. The walk
below puts such a text in every field of every input and runs every command on it.
"""

from __future__ import annotations

import contextlib
import io
import json
import unicodedata
from pathlib import Path

import pytest

from checkprofile import (
    ChoiceAnswer,
    Material,
    RubricAnswer,
    Submission,
    YesNoAnswer,
    build_bundle,
    combine,
    outcome_for,
    parse_check,
    validate_check,
)
from checkprofile._shown import IGNORABLE
from checkprofile.cli import COMMANDS, main
from checkprofile.human import (
    AuditRecord,
    Completed,
    JsonLinesRecorder,
    calibrate,
    calibration_text,
    decision_record,
    receipt_for,
    verdict_record,
)

#: A text that rewrites a terminal line: clear the screen, return to the line's start, write
#: right to left, hide characters, ring the bell.
EVIL = "A\x1b[2J\rB\u202eC\u200bD\u3164E\x07F\u2066"
#: What each of these shows as once escaped: the proof the text was shown, not dropped. (A CR
#: is whitespace: a one-line text shows it as a space, a multi-line one as ``\r``.)
SHOWN = ("\\u202e", "\\u200b", "\\u3164", "\\u2066")


def shows_every(output: str) -> bool:
    """Whether each hidden character of :data:`EVIL` is in ``output`` as its escape (YAML
    writes ESC as ``\\e`` and BEL as ``\\a``, and its hex in capitals)."""
    lowered = output.lower()
    return (
        all(escape in lowered for escape in SHOWN)
        and ("\\x1b" in lowered or "\\e" in lowered)
        and ("\\x07" in lowered or "\\a" in lowered)
    )


def hidden(output: str) -> list[str]:
    """The characters of ``output`` that do not show as themselves (a line break and a tab
    aside)."""
    return sorted(
        {
            char
            for char in output
            if char not in "\n\t" and (not char.isprintable() or IGNORABLE.match(char))
        }
    )


def run_main(args: list[str | Path]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(arg) for arg in args])
        except SystemExit as exit:  # argparse
            code = int(exit.code or 0)
    return code, out.getvalue() + err.getvalue()


def q(text: str) -> str:
    """A YAML 1.2 double-quoted scalar (JSON's escapes are YAML's)."""
    return json.dumps(text)


STEP = EVIL + "step"
ASKS = [EVIL + "1", EVIL + "2", EVIL + "3"]
NAME = EVIL + "name"
LEVELS = [EVIL + "level0", EVIL + "level1"]


def process_text(*, extra_step: str = "") -> str:
    return f"""---
name: hostile
description: {q(EVIL)}
steps:
  - id: {q(STEP)}
    agent: {q(EVIL)}
    check:
      - ask: {q(ASKS[0])}
      - ask: {q(ASKS[1])}
        one_of: {{{q(NAME)}: {q(EVIL)}, ok: Fine.}}
        pass: [ok]
      - ask: {q(ASKS[2])}
        levels: [{q(LEVELS[0])}, {q(LEVELS[1])}]
        pass: 1
{extra_step}---
# {EVIL}
{EVIL} in the body.
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    process = tmp_path / f"{EVIL}.process.md"
    process.write_text(process_text(), encoding="utf-8")
    # The same, with a second step whose id reads as the first's, and a bad key: problems.
    twin = f"  - id: {q(STEP + chr(0x200B))}\n    agent: {q(EVIL)}\n    {q(EVIL)}: 1\n"
    linted = tmp_path / f"{EVIL}twin.process.md"
    linted.write_text(process_text(extra_step=twin), encoding="utf-8")
    submission = tmp_path / "submission.json"
    submission.write_text(
        json.dumps(
            {
                "output": {EVIL: EVIL},
                "summary": EVIL,
                "evidence": [{"kind": "file", "ref": EVIL}],
            }
        ),
        encoding="utf-8",
    )
    old = {"at": "2026-01-01T00:00:00Z", "output": {EVIL: "x" * 3000}, "history": []}
    run_data = tmp_path / "run-data.json"
    run_data.write_text(
        json.dumps(
            {
                "inputs": {EVIL: EVIL},
                "steps": {EVIL + "old": old, EVIL + "older": {**old, "at": "2025-01-01T00:00Z"}},
            }
        ),
        encoding="utf-8",
    )
    limits = tmp_path / "limits.json"
    limits.write_text(json.dumps({"checkStateBytes": 1000}), encoding="utf-8")
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps(
            {
                "verdict": "fail",
                "model": EVIL,
                "questions": [
                    {"ask": ASKS[0], "answer": 0.2},
                    {"ask": ASKS[1], "answer": NAME, "confidence": 0.9},
                    {"ask": ASKS[2], "answer": 0, "confidence": 0.9},
                ],
            }
        ),
        encoding="utf-8",
    )
    audit = tmp_path / f"{EVIL}.jsonl"
    write_audit(audit)
    corpus = tmp_path / "corpus" / "check_keys"
    corpus.mkdir(parents=True)
    (corpus / "cases.yaml").write_text(
        f"- id: {q('check_keys/' + EVIL)}\n  stage: check_keys\n  rule: {q(EVIL)}\n"
        f"  decisions: [6]\n  check: [{{ask: {q(EVIL)}}}]\n  expect: {{valid: false,"
        " problems: [/0/ask]}\n",
        encoding="utf-8",
    )
    return {
        "process": process,
        "linted": linted,
        "submission": submission,
        "run_data": run_data,
        "limits": limits,
        "answers": answers,
        "audit": audit,
        "corpus": corpus.parent,
    }


CHECK = parse_check(
    [
        {"ask": ASKS[0]},
        {"ask": ASKS[1], "one_of": {NAME: EVIL, "ok": "Fine."}, "pass": ["ok"]},
        {"ask": ASKS[2], "levels": LEVELS, "pass": 1},
    ]
)
ANSWERS = (YesNoAnswer(0.2), ChoiceAnswer(NAME, 0.9), RubricAnswer(0, 0.9))
SUBMISSION = Submission({EVIL: EVIL}, summary=EVIL, evidence=[{"kind": "link", "ref": EVIL}])


def write_audit(path: Path) -> None:
    recorder = JsonLinesRecorder(path)
    for number in range(3):
        verdict = combine(CHECK, ANSWERS, model=EVIL, at="2026-11-02T08:00:00Z", advisory=True)
        run_id = f"{EVIL}{number}"
        recorder.record(
            verdict_record(outcome_for(verdict), run_id=run_id, step_id=STEP, submission=SUBMISSION)
        )
        decision = Completed(by=EVIL, at="2026-11-02T09:00:00Z")
        recorder.record(
            decision_record(decision, run_id=run_id, step_id=STEP, submission=SUBMISSION)
        )


def commands(files: dict[str, Path]) -> dict[str, list[list[str | Path]]]:
    """Each command, with the hostile files in every role (and with a hostile value where a
    command refuses one: the error that names it is shown too)."""
    material: list[str | Path] = [
        "--submission",
        files["submission"],
        "--run-data",
        files["run_data"],
        "--limits",
        files["limits"],
    ]
    step: list[str | Path] = ["--step", STEP]
    return {
        "lint": [[files["linted"]], [files["linted"], "--json"]],
        "normalize": [[files["process"], *step], [files["process"], "--step", EVIL]],
        "bundle": [[files["process"], *step, *material]],
        "run": [[files["process"], *step, *material, "--evaluator", f"replay:{files['answers']}"]],
        "calibrate": [[files["audit"]], [files["audit"], "--since", EVIL]],
        "monitor": [[files["audit"], "--since", EVIL]],
        "qualify": [
            [
                files["process"],
                "--step",
                EVIL,
                "--evaluator",
                f"replay:{files['answers']}",
                "--cases",
                files["audit"],
            ]
        ],
        "conformance": [[files["corpus"]]],
    }


def test_every_command_shows_every_hidden_character_of_every_text_escaped(
    files: dict[str, Path],
) -> None:
    walked = commands(files)
    assert set(walked) == set(COMMANDS)  # a new command is walked too
    for command, runs in walked.items():
        for args in runs:
            code, output = run_main([command, *args])
            assert code != 70, output
            assert hidden(output) == [], (command, args, output)
            assert shows_every(output), (command, args, output)
    # The runs reached what they render (not only an error naming a file).
    code, output = run_main(["run", *walked["run"][0]])
    assert code == 1, output
    assert "model: A\\x1b[2J\\rB\\u202eC" in output
    code, output = run_main(["bundle", *walked["bundle"][0]])
    assert code == 0 and "steps (oldest first): A\\x1b[2J\\rB" in output, output
    code, output = run_main(["calibrate", *walked["calibrate"][0]])
    assert code == 0 and "Q1: A\\x1b[2J B\\u202eC" in output, output


def test_normalize_writes_hidden_characters_as_yaml_escapes_that_read_back(
    files: dict[str, Path],
) -> None:
    from checkprofile._yaml import load_yaml

    code, output = run_main(["normalize", files["process"], "--step", STEP])
    assert code == 0, output
    assert hidden(output) == []
    # Still YAML to paste into the file: it reads back as the very texts.
    assert load_yaml(output).data == {"check": CHECK.to_json()}
    assert "Café" in run_normalized_plain(files["process"].parent)


def run_normalized_plain(folder: Path) -> str:
    """A text with nothing hidden stays as written (no escape for a letter like é)."""
    path = folder / "plain.process.md"
    path.write_text(
        "---\nname: plain\ndescription: d\nsteps:\n  - id: s\n    agent: a\n"
        "    check: [{ask: Is the Café open?}]\n---\n",
        encoding="utf-8",
    )
    code, output = run_main(["normalize", path, "--step", "s"])
    assert code == 0, output
    return output


def test_text_reports_show_every_hidden_character_escaped() -> None:
    verdict = combine(CHECK, ANSWERS, model=EVIL, at="2026-11-02T08:00:00Z", advisory=True)
    old = {"at": "2026-01-01T00:00:00Z", "output": {EVIL: "x" * 3000}, "history": []}
    material = Material(EVIL, EVIL, {"inputs": {EVIL: EVIL}, "steps": {EVIL: old}}, SUBMISSION)
    bundle = build_bundle(CHECK, material, state_bytes=1000)
    receipt = receipt_for(outcome_for(verdict, bundle=bundle), run_id=EVIL, step_id=STEP)
    records: list[AuditRecord] = []
    for number in range(3):
        run_id = f"{EVIL}{number}"
        records.append(
            verdict_record(outcome_for(verdict), run_id=run_id, step_id=STEP, submission=SUBMISSION)
        )
        records.append(
            decision_record(
                Completed(by=EVIL, at="2026-11-02T09:00:00Z"),
                run_id=run_id,
                step_id=STEP,
                submission=SUBMISSION,
            )
        )
    for text in (receipt.render_text(), calibration_text(calibrate(records))):
        assert hidden(text) == [], text
        assert shows_every(text), text


# --- one rule for sameness ---------------------------------------------------------------------

NFC = "Café"
NFD = unicodedata.normalize("NFD", NFC)


@pytest.mark.parametrize(
    "variant",
    [NFD, "Caf\u200bé", "Ca\u2060fé", "Caf\u00adé", "\u202eCafé"],
    ids=["nfd", "zero-width-space", "word-joiner", "soft-hyphen", "bidi-override"],
)
def test_asks_a_person_reads_alike_are_the_same_ask_named_both_visibly(variant: str) -> None:
    problems = validate_check([{"ask": f"Is the {NFC} open?"}, {"ask": f"Is the {variant} open?"}])
    assert [p.pointer for p in problems] == ["/1/ask"]
    message = problems[0].message
    assert message.startswith("the same ask as question 0 (")
    assert hidden(message) == []
    # Both texts are named, and told apart where they would show alike.
    assert "reads as" in message and ("Caf\\xe9" in message or "Café open" in message)


def test_answer_names_in_nfc_and_nfd_are_refused_in_one_one_of() -> None:
    problems = validate_check(
        [{"ask": "Which?", "one_of": {NFC: "passes", NFD: "fails"}, "pass": [NFC]}]
    )
    assert [p.pointer for p in problems] == [f"/0/one_of/{NFD}"]
    assert '"Cafe\\u0301", which reads as "Caf\\xe9"' in problems[0].message


def test_level_texts_a_person_reads_alike_are_refused() -> None:
    problems = validate_check([{"ask": "How?", "levels": [f"No {NFC}", f"No {NFD}"], "pass": 1}])
    assert [p.pointer for p in problems] == ["/0/levels/1"]
    assert "repeats level 0" in problems[0].message


def test_two_step_ids_a_person_reads_alike_are_one_id_at_lint(tmp_path: Path) -> None:
    path = tmp_path / "PROCESS.md"
    path.write_text(
        f"---\nname: p\ndescription: d\nsteps:\n  - id: {q(NFC.lower())}\n    agent: a\n"
        f"  - id: {q(NFD.lower())}\n    agent: b\n---\n",
        encoding="utf-8",
    )
    code, output = run_main(["lint", path])
    assert code == 1, output
    assert 'step id "cafe\\u0301", which reads as "caf\\xe9" is already the id' in output


def test_texts_that_differ_as_a_person_reads_them_stay_two_texts() -> None:
    # Whitespace inside a word is not nothing, and a different letter is a different text.
    check = parse_check([{"ask": "Is it on?"}, {"ask": "Is it o n?"}, {"ask": "Is it ön?"}])
    assert len(check) == 3
    # A text is kept as written: only the comparison reads it so.
    assert parse_check([{"ask": f"Is the {NFD} open?"}])[0].ask == f"Is the {NFD} open?"
