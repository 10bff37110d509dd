"""A cassette checks itself on load: what it replays is what a reviewer of the file reads.

Every entry's key must be the key of what the entry holds (its questions and the material it
shows), and every recorded answer and failure must be one the core could have given. Anything
else is a :class:`CassetteError` naming the entry, and nothing is replayed from it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from checkprofile import (
    ChoiceAnswer,
    Failure,
    Limits,
    Material,
    Submission,
    YesNoAnswer,
    parse_check,
    run_check_sync,
)
from checkprofile.errors import FailureReason
from checkprofile.testing import ScriptedEvaluator
from checkprofile.testing.cassette import Cassette, CassetteError
from support import AT

CHECK = parse_check(
    [
        {"ask": "Is the report attached?"},
        {"ask": "Tone?", "one_of": {"calm": "Calm.", "angry": "Angry."}, "pass": ["calm"]},
    ]
)
LIVE: dict[str, Any] = {
    "Is the report attached?": YesNoAnswer(0.2),
    "Tone?": ChoiceAnswer("calm", 0.9),
}


def material(*, cut: bool = False) -> Material:
    steps: dict[str, Any] = {
        "intake": {"status": "completed", "output": {"note": "x" * 400}, "history": []}
    }
    return Material(
        instructions="Check the report.\nBoth lists.",
        body="# Expenses\n",
        run_data={"inputs": {"vendor": "ACME"}, "steps": steps if cut else {}},
        submission=Submission({"total": 12.5}, summary="Filed."),
    )


def recorded(path: Path, script: dict[str, Any] | None = None, *, cut: bool = False) -> None:
    cassette = Cassette(path, record=True)
    live = ScriptedEvaluator(script or LIVE, model="judge-2026-09-30")
    limits = Limits(check_state_bytes=200) if cut else Limits()
    run_check_sync(CHECK, material(cut=cut), cassette.evaluator(live), limits=limits, now=AT)
    assert cassette.save()


def edited(path: Path, change: Any) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    entry: dict[str, Any] = data["entries"][0]
    change(entry)
    path.write_text(json.dumps(data), encoding="utf-8")
    return entry


def refused(path: Path) -> str:
    before = path.read_bytes()
    with pytest.raises(CassetteError) as error:
        Cassette(path)
    assert path.read_bytes() == before
    return str(error.value)


def test_an_untouched_cassette_loads_and_replays(tmp_path: Path) -> None:
    # The checks below refuse only what was changed: the file as recorded reads back.
    path = tmp_path / "c.json"
    recorded(path)
    cassette = Cassette(path)
    outcome = run_check_sync(CHECK, material(), cassette.evaluator(), limits=Limits(), now=AT)
    assert outcome.verdict.verdict == "fail"


def test_a_cassette_with_run_data_left_out_keys_what_was_left_out(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    recorded(path, cut=True)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["entries"][0]["shown"]["left_out"]["steps"] == ["intake"]
    assert len(Cassette(path)) == 1
    edited(path, lambda entry: entry["shown"]["left_out"].update(steps=[]))
    assert "entries[0].key: the key" in refused(path)


def _up(entry: dict[str, Any]) -> None:
    entry["questions"][0]["answer"]["p"] = 0.99


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda e: e["shown"].update(body=["# Something else"]), id="body"),
        pytest.param(lambda e: e["shown"]["instructions"].append("More."), id="instructions"),
        pytest.param(lambda e: e["shown"]["submission"]["output"].update(total=99), id="output"),
        pytest.param(lambda e: e["shown"]["submission"].update(summary="Other."), id="summary"),
        pytest.param(lambda e: e["shown"]["run_data"]["inputs"].update(vendor="X"), id="run-data"),
        pytest.param(
            lambda e: e["shown"].update(left_out={"steps": ["a"], "fields": []}), id="left-out"
        ),
        pytest.param(lambda e: e["questions"][0].update(ask="Is it fine?"), id="ask"),
        pytest.param(lambda e: e["questions"][0].update({"pass": 0.5}), id="threshold"),
    ],
)
def test_an_entry_edited_under_its_old_key_is_refused_never_replayed(
    tmp_path: Path, change: Any
) -> None:
    # Issue 21, finding 7: what the entry shows was edited, the key left as it was and the
    # answer raised to a pass. Loading refuses it, naming the entry; nothing replays.
    path = tmp_path / "c.json"
    recorded(path)

    def tamper(entry: dict[str, Any]) -> None:
        change(entry)
        _up(entry)

    entry = edited(path, tamper)
    message = refused(path)
    assert message.startswith(f"{path}: entries[0].key: the key {entry['key'][:12]}")
    assert "is not the key of the questions and the material the entry holds" in message


def test_an_answer_changed_alone_still_loads_and_is_what_the_file_says(tmp_path: Path) -> None:
    # The answers are not part of the key (they are what a reviewer checks by reading): a
    # changed answer is replayed as the file now says, never as something else.
    path = tmp_path / "c.json"
    recorded(path)
    edited(path, _up)
    outcome = run_check_sync(CHECK, material(), Cassette(path).evaluator(), limits=Limits(), now=AT)
    assert outcome.verdict.verdict == "pass"


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("guessed", '"guessed"'),
        ("Replayed", '"Replayed"'),
        ([], "an empty list"),
        ({"a": 1}, "a map"),
        (None, "null"),
        (3, "3"),
    ],
)
def test_an_answer_of_an_unknown_source_is_refused(
    tmp_path: Path, source: object, shown: str
) -> None:
    # A list or an object is JSON too: refused with the rest, never a crash on hashing it.
    path = tmp_path / "c.json"
    recorded(path)
    edited(path, lambda e: e["questions"][1]["answer"].update(source=source))
    message = refused(path)
    assert f"entries[0].questions[1].answer.source: not a source of answers: {shown}" in message


@pytest.mark.parametrize("source", ["scripted", "replayed", "logprobs", "native"])
def test_an_answer_of_a_known_source_loads(tmp_path: Path, source: str) -> None:
    path = tmp_path / "c.json"
    recorded(path)
    edited(path, lambda e: e["questions"][1]["answer"].update(source=source))
    assert len(Cassette(path)) == 1


def failed(tmp_path: Path, **failure: Any) -> Path:
    """A cassette whose first question was not answered, its failure then set to ``failure``."""
    path = tmp_path / "c.json"
    script = dict(LIVE)
    script["Is the report attached?"] = [Failure("timeout", "slow")] * 2
    recorded(path, script)
    edited(path, lambda e: e["questions"][0].update(failure=failure))
    return path


@pytest.mark.parametrize("reason", ["tired", "", "Timeout", ["timeout"], {"a": 1}, None, 7])
def test_a_failure_of_an_unknown_reason_is_refused(tmp_path: Path, reason: object) -> None:
    message = refused(failed(tmp_path, reason=reason, detail="x"))
    assert "entries[0].questions[0].failure.reason: not a failure reason" in message


@pytest.mark.parametrize("reason", sorted(get_args(FailureReason)))
def test_a_failure_of_every_known_reason_loads_and_replays_as_that_failure(
    tmp_path: Path, reason: str
) -> None:
    # Whatever FailureReason holds is a reason a cassette keeps.
    path = failed(tmp_path, reason=reason, detail="as recorded")
    entry = Cassette(path).entry(Cassette(path).keys[0])
    assert entry is not None
    assert entry.results[0] == Failure(reason, "as recorded")  # type: ignore[arg-type]


@pytest.mark.parametrize("wait", [-1, -0.001, "2", True, float("inf")])
def test_a_failure_with_a_retry_after_that_is_not_seconds_is_refused(
    tmp_path: Path, wait: object
) -> None:
    path = failed(tmp_path, reason="rate_limited", detail="429", retry_after=wait)
    data = path.read_text(encoding="utf-8")
    if wait == float("inf"):
        # json.dumps writes Infinity, which is not JSON: refused on that ground.
        assert "Infinity" in data
        assert "is not a JSON number" in refused(path)
        return
    assert "entries[0].questions[0].failure.retry_after: expected seconds" in refused(path)


@pytest.mark.parametrize("wait", [0, 0.0, 2.5])
def test_a_failure_with_a_retry_after_of_zero_or_more_seconds_loads(
    tmp_path: Path, wait: float
) -> None:
    path = failed(tmp_path, reason="rate_limited", detail="429", retry_after=wait)
    cassette = Cassette(path)
    entry = cassette.entry(cassette.keys[0])
    assert entry is not None
    assert entry.results[0] == Failure("rate_limited", "429", retry_after=wait)


@pytest.mark.parametrize(
    ("question", "change"),
    [
        pytest.param(0, lambda q: q.pop("pass"), id="a-threshold-left-to-its-default"),
        pytest.param(1, lambda q: q.pop("unsure"), id="an-empty-list-left-out"),
        pytest.param(1, lambda q: q.pop("confidence"), id="a-confidence-left-to-its-default"),
    ],
)
def test_questions_not_in_the_checks_full_form_are_refused(
    tmp_path: Path, question: int, change: Any
) -> None:
    # A question a reviewer reads in short form could be read with other defaults than the
    # ones it was asked with: the file holds every question in full, as the check writes it.
    path = tmp_path / "c.json"
    recorded(path)
    edited(path, lambda e: change(e["questions"][question]))
    assert "entries[0].questions: the questions are not a check's full form" in refused(path)


# Found by tools/mutation.py --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["key", "model", "configured", "questions", "shown"])
def test_an_entry_missing_a_key_is_refused_naming_it(tmp_path: Path, name: str) -> None:
    path = tmp_path / "c.json"
    recorded(path)
    edited(path, lambda e: e.pop(name))
    assert f'entries[0]: the entry has no "{name}"' in refused(path)


def test_a_cassette_keeps_text_readable_as_written(tmp_path: Path) -> None:
    # A reviewer reads the file: text outside ASCII is written as itself, not as \\u escapes.
    path = tmp_path / "c.json"
    cassette = Cassette(path, record=True)
    shown = Material(
        instructions="Prüfe die Abrechnung.",
        body="# Café\n",
        run_data={"inputs": {}, "steps": {}},
        submission=Submission({"note": "naïve"}),
    )
    live = ScriptedEvaluator(LIVE, model="judge-2026-09-30")
    run_check_sync(CHECK, shown, cassette.evaluator(live), limits=Limits(), now=AT)
    cassette.save()
    text = path.read_text(encoding="utf-8")
    assert "Prüfe die Abrechnung." in text and "# Café" in text and "naïve" in text
    assert "\\u00" not in text
    assert len(Cassette(path)) == 1


def test_a_miss_shows_at_most_forty_lines_of_diff_for_a_piece(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    recorded(path)
    longer = Material(
        instructions="Check the report.\nBoth lists.",
        body="\n".join(f"line {n}" for n in range(100)),
        run_data={"inputs": {"vendor": "ACME"}, "steps": {}},
        submission=Submission({"total": 12.5}, summary="Filed."),
    )
    evaluator = Cassette(path).evaluator()
    with pytest.raises(pytest.fail.Exception):
        run_check_sync(CHECK, longer, evaluator, limits=Limits(), now=AT)
    (message,) = set(evaluator.misses)
    diff = message.split("differs in: body\n", 1)[1].split("\nNothing was asked")[0]
    assert len(diff.split("\n")) == 41
    assert diff.endswith("more lines of diff)")


@pytest.mark.parametrize("wait", [None, 0.0, 2.5])
def test_a_recorded_failure_replays_with_the_retry_after_it_had(
    tmp_path: Path, wait: float | None
) -> None:
    # `retry_after is not None` -> `is None` survived: the recording dropped the hint.
    path = tmp_path / "c.json"
    script = dict(LIVE)
    script["Is the report attached?"] = [Failure("rate_limited", "429", retry_after=wait)] * 2
    recorded(path, script)
    cassette = Cassette(path)
    entry = cassette.entry(cassette.keys[0])
    assert entry is not None
    assert entry.results[0] == Failure("rate_limited", "429", retry_after=wait)
    assert ("retry_after" in path.read_text(encoding="utf-8")) is (wait is not None)


def test_a_cassette_that_cannot_be_read_says_why_in_plain_words(tmp_path: Path) -> None:
    # The reason is the system's own words, not the name of Python's exception.
    path = tmp_path / "c.json"
    path.mkdir()
    message = refused_to_open(path)
    assert message.startswith(f"{path}: cannot read the cassette: ")
    assert "IsADirectoryError" not in message and "Is a directory" in message


def test_a_cassette_that_cannot_be_written_is_a_cassette_error(tmp_path: Path) -> None:
    # `except OSError` never reached survived: the system's error came out as it was.
    cassette = Cassette(tmp_path / "cassettes" / "c.json", record=True)
    live = ScriptedEvaluator(LIVE, model="judge-2026-09-30")
    run_check_sync(CHECK, material(), cassette.evaluator(live), limits=Limits(), now=AT)
    (tmp_path / "cassettes").write_text("a file where the folder goes", encoding="utf-8")
    with pytest.raises(CassetteError, match=r"c\.json: cannot write the cassette: "):
        cassette.save()


@pytest.mark.parametrize("key", ["p"])
def test_a_recorded_answer_missing_its_value_is_refused_naming_it(tmp_path: Path, key: str) -> None:
    path = tmp_path / "c.json"
    recorded(path)
    edited(path, lambda e: e["questions"][0]["answer"].pop(key))
    assert f'entries[0].questions[0].answer: the answer has no "{key}"' in refused(path)


def refused_to_open(path: Path) -> str:
    with pytest.raises(CassetteError) as error:
        Cassette(path)
    return str(error.value)


def with_body(body: str) -> Material:
    return Material(
        instructions="Check the report.\nBoth lists.",
        body=body,
        run_data={"inputs": {"vendor": "ACME"}, "steps": {}},
        submission=Submission({"total": 12.5}, summary="Filed."),
    )


def test_a_miss_names_the_recording_most_like_what_is_shown(tmp_path: Path) -> None:
    # The ranking by likeness (`-likeness` -> `likeness`, `not likeness`; `<` -> `==`)
    # survived: the miss named some other recording than the nearest.
    path = tmp_path / "c.json"
    cassette = Cassette(path, record=True)
    live = ScriptedEvaluator(LIVE, model="judge-2026-09-30")
    bodies = ["# Expenses\nHotel 120\nTrain 45\n", "Zebra quilt yak vortex.\n" * 3]
    for body in bodies:
        run_check_sync(CHECK, with_body(body), cassette.evaluator(live), limits=Limits(), now=AT)
    assert cassette.save()
    entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
    keys = {
        body: e["key"] for body in bodies for e in entries if e["shown"]["body"] == body.split("\n")
    }
    assert len(keys) == 2
    for body in bodies:
        evaluator = Cassette(path).evaluator()
        with pytest.raises(pytest.fail.Exception):
            run_check_sync(
                CHECK, with_body(body + "One line more.\n"), evaluator, limits=Limits(), now=AT
            )
        (message,) = set(evaluator.misses)
        assert f"the nearest recording (key {keys[body][:12]}) differs in: body" in message


def test_a_miss_shows_what_differs_as_a_reviewer_reads_it(tmp_path: Path) -> None:
    # Survived: the diff's JSON written with \\u escapes, and the questions indented by one.
    path = tmp_path / "c.json"
    recorded(path)
    asked = parse_check(
        [
            {"ask": "Is the report attached now?"},
            {"ask": "Tone?", "one_of": {"calm": "Calm.", "angry": "Angry."}, "pass": ["calm"]},
        ]
    )
    shown = Material(
        instructions="Check the report.\nBoth lists.",
        body="# Expenses\n",
        run_data={"inputs": {"vendor": "ACME"}, "steps": {}},
        submission=Submission({"total": 12.5, "note": "naïve"}, summary="Filed."),
    )
    evaluator = Cassette(path).evaluator()
    with pytest.raises(pytest.fail.Exception):
        run_check_sync(asked, shown, evaluator, limits=Limits(), now=AT)
    (message,) = set(evaluator.misses)
    assert "differs in: questions, submission" in message
    lines = message.split("\n")
    assert '+    "ask": "Is the report attached now?",' in lines
    assert any(line.startswith("+") and '"note": "naïve"' in line for line in lines)


@pytest.mark.parametrize(
    "kept", [{"steps": ["intake"]}, {"fields": []}, {}], ids=["no-fields", "no-steps", "empty"]
)
def test_what_was_left_out_needs_both_its_steps_and_its_fields(
    tmp_path: Path, kept: dict[str, Any]
) -> None:
    # A hand edit that drops one of left_out's two lists is refused, naming left_out: replayed,
    # it would say less was cut than was (found by a fresh-seed mutation run).
    path = tmp_path / "c.json"
    recorded(path, cut=True)
    edited(path, lambda entry: entry["shown"].update(left_out=kept))
    assert "left_out: expected steps and fields" in refused(path)


def test_a_miss_shows_the_submission_and_run_data_indented_by_two(tmp_path: Path) -> None:
    # Found by a fifth mutation draw (seed 2029): `indent=2` -> `3` for the submission, the
    # run data and what was left out survived; only the questions' indent was pinned.
    path = tmp_path / "c.json"
    recorded(path)
    shown = Material(
        instructions="Check the report.\nBoth lists.",
        body="# Expenses\n",
        run_data={"inputs": {"vendor": "ACME Ltd"}, "steps": {}},
        submission=Submission({"total": 13.5}, summary="Filed."),
    )
    evaluator = Cassette(path).evaluator()
    with pytest.raises(pytest.fail.Exception):
        run_check_sync(CHECK, shown, evaluator, limits=Limits(), now=AT)
    (message,) = set(evaluator.misses)
    lines = message.split("\n")
    for line in ['-    "total": 12.5', '+    "total": 13.5', '   "summary": "Filed."']:
        assert line in lines
    for line in ['-    "vendor": "ACME"', '+    "vendor": "ACME Ltd"', '   "steps": {}']:
        assert line in lines


def test_a_cassette_is_named_by_its_label_or_else_its_file(tmp_path: Path) -> None:
    # Found by an eighth mutation draw (seed 2032): the label's test negated survived, so a
    # label given was dropped and one not given was None.
    path = tmp_path / "expenses.json"
    recorded(path)
    assert Cassette(path).label == "expenses"
    assert Cassette(path, label="the expense report").label == "the expense report"
    assert Cassette(path).evaluator().model == "cassette:expenses"
