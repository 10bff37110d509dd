"""build_bundle: what the evaluator sees, and truncation to the budget (decisions 12 and 13)."""

from __future__ import annotations

import copy
import json
import math
import re
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkprofile import (
    Bundle,
    Evidence,
    LimitsError,
    Material,
    MaterialError,
    Submission,
    build_bundle,
    canonical_json,
    core_schema,
    parse_check,
    schema_registry,
    submission_problems,
)
from checkprofile.testing.strategies import run_data as core2_run_data
from support import material

CHECK = parse_check("The cleared verdict matches what the attached report says.")


def reference_json(value: Any) -> str:
    """The oracle: the text decision 13 says the evaluator is shown (a lone surrogate stays
    escaped, as JavaScript writes it, so the text is UTF-8)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def step(at: str | None, size: int = 10, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"output": {"text": "x" * size}, **extra}
    if at is not None:
        record["at"] = at
    return record


def bundle_of(run_data: dict[str, Any], budget: int = 65536) -> Bundle:
    return build_bundle(CHECK, material(run_data), state_bytes=budget)


# What the evaluator sees ------------------------------------------------------------------


def test_run_data_that_fits_is_shown_whole_as_canonical_json() -> None:
    run = {
        "inputs": {"vendor": "ACME GmbH", "country": "DE"},
        "steps": {"screen": step("2026-10-06T09:00:00Z"), "draft": step("2026-10-06T08:00:00Z")},
        "run": "r-1",
    }
    bundle = bundle_of(run)
    assert bundle.run_data_json == reference_json(run)
    assert bundle.run_data == run
    assert not bundle.truncated
    assert bundle.dropped_steps == ()
    assert bundle.dropped_fields == ()
    assert bundle.run_data_bytes == nbytes(reference_json(run))


def test_bundle_carries_instructions_body_and_submission_as_given() -> None:
    mat = Material(
        instructions="Check the vendor.",
        body="# Vendor\n\nBody  with   spaces\n",
        run_data={"steps": {}},
        submission=Submission({"cleared": True}, "No match.", [{"kind": "file", "ref": "a.pdf"}]),
    )
    bundle = build_bundle(CHECK, mat, state_bytes=1000)
    assert bundle.check is CHECK
    assert bundle.instructions == "Check the vendor."
    assert bundle.body == "# Vendor\n\nBody  with   spaces\n"
    assert bundle.submission_json == reference_json(
        {
            "output": {"cleared": True},
            "summary": "No match.",
            "evidence": [{"kind": "file", "ref": "a.pdf"}],
        }
    )


def test_non_ascii_is_shown_as_text_and_counted_in_utf8_bytes() -> None:
    run = {"inputs": {"name": "Müller 株式会社"}, "steps": {}}
    bundle = bundle_of(run)
    assert "Müller 株式会社" in bundle.run_data_json
    assert bundle.run_data_bytes == nbytes(bundle.run_data_json) > len(bundle.run_data_json)


def test_evidence_urls_are_removed_from_steps_and_their_history() -> None:
    evidence = [{"kind": "file", "ref": "r.pdf", "url": "https://x/r.pdf?sig=1"}, "odd"]
    record = step(
        "2026-10-06T09:00:00Z",
        evidence=evidence,
        history=[
            {"at": "2026-10-05T09:00:00Z", "evidence": [{"kind": "file", "ref": "o", "url": "u"}]},
            "not a map",
        ],
    )
    run = {"steps": {"screen": record}}
    before = copy.deepcopy(run)
    shown = bundle_of(run).run_data["steps"]["screen"]
    assert shown["evidence"] == [{"kind": "file", "ref": "r.pdf"}, "odd"]
    assert shown["history"][0]["evidence"] == [{"kind": "file", "ref": "o"}]
    assert shown["history"][1] == "not a map"
    assert run == before  # the host's run data is never modified


def test_submission_evidence_keeps_references_only() -> None:
    submission = Submission(
        {"cleared": True}, evidence=[{"kind": "file", "ref": "a.pdf", "url": "https://short-lived"}]
    )
    assert submission.evidence == (Evidence("file", "a.pdf"),)
    assert (
        "short-lived"
        not in build_bundle(
            CHECK, material().__class__("i", "b", {}, submission), state_bytes=100
        ).submission_json
    )


def test_run_data_property_is_a_fresh_copy() -> None:
    bundle = bundle_of({"inputs": {"a": [1, 2]}, "steps": {}})
    bundle.run_data["inputs"]["a"].append(3)
    assert bundle.run_data == {"inputs": {"a": [1, 2]}, "steps": {}}


def test_with_check_keeps_the_material_and_changes_only_the_check() -> None:
    bundle = bundle_of({"steps": {"a": step("2026-10-06T09:00:00Z")}})
    other = parse_check([{"ask": "Another question?"}])
    again = bundle.with_check(other)
    assert again.check == other
    assert again.run_data_json == bundle.run_data_json
    assert again.submission_json == bundle.submission_json


# Truncation ---------------------------------------------------------------------------------


def test_oldest_steps_are_dropped_first_and_reported_oldest_first() -> None:
    steps = {
        "c": step("2026-10-03T00:00:00Z", 200),
        "a": step("2026-10-01T00:00:00Z", 200),
        "d": step("2026-10-04T00:00:00Z", 200),
        "b": step("2026-10-02T00:00:00Z", 200),
    }
    run = {"steps": steps}
    two = nbytes(reference_json({"steps": {"c": steps["c"], "d": steps["d"]}}))
    bundle = bundle_of(run, budget=two)
    assert set(bundle.run_data["steps"]) == {"c", "d"}
    assert bundle.dropped_steps == ("a", "b")
    assert bundle.truncated
    assert bundle.run_data_bytes == two


def test_a_steps_age_is_its_latest_at_including_history() -> None:
    steps = {
        # Last touched long ago in its own record, but reworked recently: the newest.
        "reworked": step("2026-01-01T00:00:00Z", 200, history=[{"at": "2026-12-01T00:00:00Z"}]),
        "plain": step("2026-06-01T00:00:00Z", 200),
    }
    one = nbytes(reference_json({"steps": {"reworked": steps["reworked"]}}))
    bundle = bundle_of({"steps": steps}, budget=one)
    assert list(bundle.run_data["steps"]) == ["reworked"]
    assert bundle.dropped_steps == ("plain",)


def test_steps_without_any_at_are_the_oldest_and_ties_go_by_id() -> None:
    steps = {
        "z_no_at": step(None, 100),
        "b_tie": step("2026-10-01T00:00:00Z", 100),
        "a_tie": step("2026-10-01T00:00:00Z", 100),
        "bad_at": step("yesterday", 100),
    }
    budget = nbytes(reference_json({"steps": {"b_tie": steps["b_tie"]}}))
    bundle = bundle_of({"steps": steps}, budget=budget)
    assert bundle.run_data["steps"].keys() == {"b_tie"}
    # No readable `at` first (by id), then the tie by id: a_tie is "older" than b_tie.
    assert bundle.dropped_steps == ("bad_at", "z_no_at", "a_tie")


def test_timestamps_with_offsets_are_compared_as_instants() -> None:
    steps = {
        "looks_later": step("2026-10-06T10:30:00+02:00", 100),  # 08:30Z: the older one
        "is_later": step("2026-10-06T09:00:00Z", 100),
    }
    budget = nbytes(reference_json({"steps": {"is_later": steps["is_later"]}}))
    bundle = bundle_of({"steps": steps}, budget=budget)
    assert bundle.run_data["steps"].keys() == {"is_later"}
    assert bundle.dropped_steps == ("looks_later",)


def test_inputs_are_cut_largest_first_once_every_step_is_gone() -> None:
    run = {
        "inputs": {"small": "s", "large": "l" * 300, "medium": "m" * 100},
        "steps": {"a": step("2026-10-01T00:00:00Z", 50)},
    }
    budget = nbytes(reference_json({"inputs": {"small": "s", "medium": "m" * 100}, "steps": {}}))
    bundle = bundle_of(run, budget=budget)
    assert bundle.run_data == {"inputs": {"small": "s", "medium": "m" * 100}, "steps": {}}
    assert bundle.dropped_steps == ("a",)
    assert bundle.dropped_fields == ("/inputs/large",)


def test_even_a_tiny_budget_is_met_by_dropping_top_level_keys() -> None:
    run = {"inputs": {"a": "x" * 50}, "steps": {"s": step(None, 10)}, "notes": "n" * 20}
    bundle = bundle_of(run, budget=2)
    assert bundle.run_data_json == "{}"
    assert bundle.dropped_steps == ("s",)
    assert bundle.dropped_fields == ("/notes", "/inputs/a", "/inputs", "/steps")


def test_keys_the_profile_does_not_name_go_before_any_input() -> None:
    run = {"inputs": {"vendor": "ACME"}, "steps": {}, "scratch": "s" * 500}
    bundle = bundle_of(
        run, budget=nbytes(reference_json({"inputs": {"vendor": "ACME"}, "steps": {}}))
    )
    assert bundle.run_data == {"inputs": {"vendor": "ACME"}, "steps": {}}
    assert bundle.dropped_fields == ("/scratch",)


def test_evidence_urls_are_removed_wherever_they_are_and_other_urls_stay() -> None:
    secret = "https://files.invalid/r.pdf?sig=short-lived"
    run = {
        "inputs": {
            "contract": {"evidence": [{"kind": "file", "ref": "c.pdf", "url": secret}]},
            "website": {"url": "https://vendor.example"},
        },
        "steps": {
            "s": {
                "output": {"evidence": {"kind": "file", "ref": "o.pdf", "url": secret}},
                "handoff": {"evidence": [{"kind": "file", "ref": "h.pdf", "url": secret}]},
            }
        },
        "notes": [{"evidence": [{"ref": "n", "url": secret}]}],
    }
    before = copy.deepcopy(run)
    shown = bundle_of(run)
    assert secret not in shown.run_data_json
    assert shown.run_data["inputs"]["website"] == {"url": "https://vendor.example"}
    assert shown.run_data["steps"]["s"]["output"]["evidence"] == {"kind": "file", "ref": "o.pdf"}
    assert shown.run_data["notes"] == [{"evidence": [{"ref": "n"}]}]
    assert run == before


def test_dropped_fields_are_json_pointers() -> None:
    run = {"inputs": {"a/b~c": "x" * 100}, "steps": {}}
    bundle = bundle_of(run, budget=30)
    assert bundle.dropped_fields == ("/inputs/a~1b~0c",)


# Bad material -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("run_data", "where"),
    [
        pytest.param([1, 2], "run data must be a JSON object", id="run-data-list"),
        pytest.param({"steps": [1]}, "run data steps must be a map", id="steps-list"),
        pytest.param({"inputs": "x"}, "run data inputs must be a map", id="inputs-string"),
        pytest.param({1: "x"}, "run data keys must be strings", id="int-key"),
        pytest.param({"steps": {"s": {"v": math.nan}}}, "steps.s", id="nan-in-step"),
        pytest.param({"steps": {"s": {"v": object()}}}, "steps.s", id="object-in-step"),
        pytest.param(
            {"inputs": {"when": datetime(2026, 1, 1)}}, "inputs.when", id="datetime-input"
        ),
        pytest.param({"extra": {1j}}, "run data extra", id="set-top-level"),
    ],
)
def test_run_data_that_cannot_be_shown_is_refused_naming_where(run_data: Any, where: str) -> None:
    with pytest.raises(MaterialError, match=where.replace(".", r"\.")):
        bundle_of(run_data)


def test_a_step_that_cannot_be_shown_is_named_even_when_steps_overflow() -> None:
    steps = {f"s{i}": step(f"2026-10-{i + 1:02d}T00:00:00Z", 100) for i in range(5)}
    steps["s4"]["bad"] = math.inf
    with pytest.raises(MaterialError, match=r"steps\.s4"):
        bundle_of({"steps": steps}, budget=300)


@pytest.mark.parametrize("budget", [0, 1, -5, 2.5, True, "64k"])
def test_a_budget_below_two_bytes_or_not_an_integer_is_refused(budget: Any) -> None:
    with pytest.raises(LimitsError, match="state_bytes"):
        build_bundle(CHECK, material(), state_bytes=budget)


def test_only_a_parsed_check_reaches_build_bundle() -> None:
    with pytest.raises(TypeError, match="parse_check"):
        build_bundle("Is it done?", material(), state_bytes=100)  # type: ignore[arg-type]


# The submission: core-2's shape, its route, and what the evaluator is shown of it -------------

ROUTED = {
    "output": {"cleared": True},
    "summary": "Cleared on both lists.",
    "evidence": [{"kind": "file", "ref": "screening.pdf"}],
    "next": "sign_off",
    "reason": "Both lists are clear, so no second review is needed.",
}


@pytest.mark.parametrize(
    ("data", "problems"),
    [
        pytest.param(
            [],
            [
                "(root): expected a submission (a map of output, and optionally summary,"
                " evidence, next and reason), got an empty list"
            ],
            id="not-a-map",
        ),
        pytest.param(
            {"summary": "x"},
            ['(root): missing "output": expected a map (the step\'s output fields)'],
            id="no-output",
        ),
        pytest.param(
            {"output": "Done."},
            ['/output: expected a map (the step\'s output fields), got "Done."'],
            id="output-not-a-map",
        ),
        pytest.param(
            {"output": {}, "extra": 2},
            [
                '/extra: unknown key "extra"; a submission has output, evidence, summary, next'
                " and reason"
            ],
            id="unknown-key",
        ),
        pytest.param(
            {"output": {}, "sumary": "x"},
            [
                '/sumary: unknown key "sumary"; did you mean "summary"? a submission has output,'
                " evidence, summary, next and reason"
            ],
            id="misspelt-key",
        ),
        pytest.param(
            {"output": {}, "summary": 5},
            ["/summary: expected a string, got 5"],
            id="summary-number",
        ),
        pytest.param(
            {"output": {}, "evidence": {}},
            ["/evidence: expected a list of evidence items, got an empty map"],
            id="evidence-map",
        ),
        pytest.param(
            {"output": {}, "evidence": [{"kind": "file"}]},
            ['/evidence/0: missing "ref": expected a non-empty string'],
            id="no-ref",
        ),
        pytest.param(
            {"output": {}, "evidence": [{"kind": "pdf", "ref": ""}]},
            [
                '/evidence/0/kind: expected file or link, got "pdf"',
                '/evidence/0/ref: expected a non-empty string, got ""',
            ],
            id="evidence-kind-and-ref",
        ),
        pytest.param(
            {"output": {}, "evidence": [{"kind": "file", "ref": "a", "size": 3}]},
            [
                '/evidence/0/size: unknown key "size"; an evidence item has kind, ref, sha256'
                " and url"
            ],
            id="evidence-unknown-key",
        ),
        pytest.param(
            {"output": {}, "next": ""},
            ['/next: expected a step id (a non-empty string), got ""'],
            id="next-empty",
        ),
        pytest.param(
            {"output": {}, "next": ["sign_off"]},
            ["/next: expected a step id (a non-empty string), got a list"],
            id="next-a-list",
        ),
        pytest.param(
            {"output": {}, "reason": "x" * 4001},
            ["/reason: expected a string of at most 4000 characters, got 4001 characters"],
            id="reason-too-long",
        ),
        pytest.param(
            {"output": {}, "reason": 7},
            ["/reason: expected a string of at most 4000 characters, got 7"],
            id="reason-a-number",
        ),
        pytest.param(
            {"output": 1, "summary": 5, "next": "", "bogus": True},
            [
                '/bogus: unknown key "bogus"; a submission has output, evidence, summary, next'
                " and reason",
                '/next: expected a step id (a non-empty string), got ""',
                "/output: expected a map (the step's output fields), got 1",
                "/summary: expected a string, got 5",
            ],
            id="every-problem-at-once",
        ),
    ],
)
def test_submission_from_json_refuses_what_core_2_refuses_with_every_problem(
    data: Any, problems: list[str]
) -> None:
    assert [str(problem) for problem in submission_problems(data)] == problems
    with pytest.raises(MaterialError) as caught:
        Submission.from_json(data)
    assert [str(problem) for problem in caught.value.problems] == problems
    assert caught.value.path == caught.value.problems[0].path
    for line in problems:
        assert line in str(caught.value)


def test_an_agents_summary_is_one_to_two_thousand_characters() -> None:
    for summary, ok in (("", False), ("x", True), ("x" * 2000, True), ("x" * 2001, False)):
        data = {"output": {}, "summary": summary}
        found = submission_problems(data, agent=True)
        assert (found == ()) is ok, summary
        assert submission_problems(data) == ()  # a person's task has no such bound
        if not ok:
            assert str(found[0]) == (
                f"/summary: an agent's summary is 1 to 2000 characters, got {len(summary)}"
            )
            with pytest.raises(MaterialError, match="an agent's summary"):
                Submission.from_json(data, agent=True)


def test_submission_from_json_round_trips_with_its_route() -> None:
    plain = {
        "output": {"cleared": True},
        "summary": "ok",
        "evidence": [{"kind": "file", "ref": "a"}],
    }
    assert Submission.from_json(plain).to_json() == plain
    assert Submission.from_json({"output": {}}).to_json() == {"output": {}, "evidence": []}
    routed = Submission.from_json(ROUTED)
    assert (routed.next, routed.reason) == (ROUTED["next"], ROUTED["reason"])
    assert routed.to_json() == ROUTED
    assert list(routed.to_json()) == ["output", "summary", "evidence", "next", "reason"]
    assert routed.routed and not Submission.from_json(plain).routed


def test_evidence_urls_and_hashes_are_read_and_left_behind() -> None:
    data = {
        "output": {},
        "evidence": [{"kind": "link", "ref": "r", "url": "https://short-lived", "sha256": "ab"}],
    }
    assert Submission.from_json(data).evidence == (Evidence("link", "r"),)


@pytest.mark.parametrize(
    ("make", "message", "path"),
    [
        pytest.param(
            lambda: Submission(None),
            "a submission's output is a map (a JSON object), got null",
            ("output",),
            id="output-null",
        ),
        pytest.param(
            lambda: Submission(["a"]),
            "a submission's output is a map (a JSON object), got a list",
            ("output",),
            id="output-list",
        ),
        pytest.param(
            lambda: Submission({}, 5),
            "a submission's summary is a string, got 5",
            ("summary",),
            id="summary",
        ),
        pytest.param(
            lambda: Submission({}, evidence=[{"kind": "doc", "ref": "a"}]),
            'an evidence kind is file or link, got "doc"',
            ("evidence", 0, "kind"),
            id="evidence-kind",
        ),
        pytest.param(
            lambda: Submission({}, evidence=[{"kind": "file", "ref": "a"}, {"kind": "file"}]),
            "an evidence item is a map with kind and ref, got a map",
            ("evidence", 1),
            id="evidence-no-ref",
        ),
        pytest.param(
            lambda: Submission({}, evidence="a.pdf"),  # type: ignore[arg-type]
            'evidence must be a list of items, got "a.pdf"',
            ("evidence",),
            id="evidence-a-string",
        ),
        pytest.param(
            lambda: Submission({}, next=""),
            'a submission\'s next is a step id (a non-empty string), got ""',
            ("next",),
            id="next-empty",
        ),
        pytest.param(
            lambda: Submission({}, reason="x" * 4001),
            "a submission's reason is a string of at most 4000 characters, got 4001 characters",
            ("reason",),
            id="reason-long",
        ),
    ],
)
def test_a_submission_holds_only_what_core_2_s_submission_can(
    make: Any, message: str, path: tuple[str | int, ...]
) -> None:
    with pytest.raises(MaterialError) as caught:
        make()
    assert str(caught.value) == message
    assert caught.value.path == path


def test_evidence_holds_only_a_file_or_link_and_a_reference() -> None:
    assert Evidence("link", "https://example.org/report") == Evidence(
        "link", "https://example.org/report"
    )
    with pytest.raises(MaterialError, match='file or link, got "File"'):
        Evidence("File", "a")
    with pytest.raises(MaterialError, match='non-empty string, got ""'):
        Evidence("file", "")


def test_the_constructor_and_the_schema_agree_on_the_submission_s_shape() -> None:
    # Submission(...) checks in code what submission.schema.json says; every value below is
    # accepted by both or refused by both.
    values: list[dict[str, Any]] = [
        {"output": {}},
        {"output": None},
        {"output": [1]},
        {"output": {}, "summary": None},
        {"output": {}, "summary": ""},
        {"output": {}, "summary": 3},
        {"output": {}, "next": "a"},
        {"output": {}, "next": ""},
        {"output": {}, "next": 3},
        {"output": {}, "reason": ""},
        {"output": {}, "reason": "x" * 4000},
        {"output": {}, "reason": "x" * 4001},
        {"output": {}, "evidence": [{"kind": "file", "ref": "a"}]},
        {"output": {}, "evidence": [{"kind": "link", "ref": ""}]},
        {"output": {}, "evidence": [{"kind": "pdf", "ref": "a"}]},
        {"output": {}, "evidence": [{"kind": "file", "ref": 1}]},
    ]
    for data in values:
        schema_ok = not list(
            jsonschema.Draft202012Validator(
                core_schema("submission"), registry=schema_registry()
            ).iter_errors({k: v for k, v in data.items() if v is not None or k == "output"})
        )
        try:
            Submission(
                data["output"],
                data.get("summary"),
                data.get("evidence", ()),
                next=data.get("next"),
                reason=data.get("reason"),
            )
        except MaterialError:
            made = False
        else:
            made = True
        assert made is schema_ok, data


def test_the_route_is_not_shown_to_the_evaluator_unless_the_host_asks() -> None:
    submission = Submission.from_json(ROUTED)
    hidden = build_bundle(CHECK, material().__class__("i", "b", {}, submission), state_bytes=100)
    shown = build_bundle(
        CHECK, Material("i", "b", {}, submission, show_route=True), state_bytes=100
    )
    assert json.loads(hidden.submission_json) == {
        key: ROUTED[key] for key in ("output", "summary", "evidence")
    }
    assert json.loads(shown.submission_json) == ROUTED
    assert shown.submission_json == reference_json(ROUTED)
    # Either way the bundle holds the whole submission: the candidate keeps its route.
    assert hidden.submission == shown.submission == submission
    assert Material("i", "b", {}, submission).show_route is False
    # Without a route there is nothing to show: the text is the same either way.
    plain = Submission({"cleared": True})
    assert (
        build_bundle(CHECK, Material("i", "b", {}, plain), state_bytes=100).submission_json
        == build_bundle(
            CHECK, Material("i", "b", {}, plain, show_route=True), state_bytes=100
        ).submission_json
    )


def test_show_route_must_be_a_bool() -> None:
    material_ = Material("i", "b", {}, Submission({}), show_route="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r'show_route must be true or false .*, got "yes"'):
        build_bundle(CHECK, material_, state_bytes=100)


# Laws, against an independent reference -----------------------------------------------------


def run_data() -> st.SearchStrategy[dict[str, Any]]:
    """core-2 run data of up to 12 steps: histories, verdict records, evidence with urls,
    timestamps at any offset with fractions of any length (see checkprofile.testing)."""
    return core2_run_data(max_steps=12)


# RFC 3339 date-times (section 5.6), read independently of the library.
RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})\Z"
)


def reference_instant(stamp: object) -> Fraction | None:
    """Seconds since 1970, exactly, or None for what is not an RFC 3339 date-time."""
    match = RFC3339.match(stamp) if isinstance(stamp, str) else None
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    moment = datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc)
    zone = match.group(8)
    if zone not in ("Z", "z"):
        offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        moment -= offset if zone[0] == "+" else -offset
    digits = match.group(7) or ""
    fraction = Fraction(int(digits), 10 ** len(digits)) if digits else Fraction(0)
    return int(moment.timestamp()) + fraction


def reference_age(record: dict[str, Any]) -> tuple[int, Fraction]:
    """The latest `at` of a record and its history; a step with none is the oldest."""
    found = [reference_instant(e.get("at")) for e in [record, *record.get("history", [])]]
    known = [instant for instant in found if instant is not None]
    return (1, max(known)) if known else (0, Fraction(0))


def stripped(record: dict[str, Any]) -> dict[str, Any]:
    """The record as shown (decision 12): every ``evidence`` entry, at any depth, a map or a
    list of maps, without its ``url``. Other ``url`` keys are the host's data and stay."""

    def strip(value: Any, evidence: bool = False) -> Any:
        if isinstance(value, dict):
            return {
                key: strip(item, evidence=key == "evidence")
                for key, item in value.items()
                if not (evidence and key == "url")
            }
        if isinstance(value, list):
            # In an evidence list only the maps are evidence items; anything else stays as it is.
            return [
                item if evidence and not isinstance(item, dict) else strip(item, evidence)
                for item in value
            ]
        return value

    result: dict[str, Any] = strip(json.loads(json.dumps(record)))
    return result


def reference_kept(run: dict[str, Any], budget: int) -> list[str] | None:
    """The newest steps that fit, found the slow way: add one step at a time and re-measure
    the whole view. None when even the view without steps is over the budget."""
    order = sorted(run["steps"], key=lambda i: (reference_age(run["steps"][i]), i), reverse=True)
    kept: dict[str, Any] = {}
    if nbytes(reference_json({**run, "steps": {}})) > budget:
        return None
    for step_id in order:
        trial = {**kept, step_id: stripped(run["steps"][step_id])}
        if nbytes(reference_json({**run, "steps": trial})) > budget:
            break
        kept = trial
    return list(kept)


@settings(max_examples=100)  # each run data is rich: histories, verdicts, hostile text
@given(run=run_data(), budget=st.integers(2, 3000))
def test_the_view_fits_and_keeps_exactly_the_newest_steps_that_fit(
    run: dict[str, Any], budget: int
) -> None:
    before = copy.deepcopy(run)
    bundle = bundle_of(run, budget=budget)
    text = bundle.run_data_json
    # Never over budget, always the canonical text of what it holds.
    assert nbytes(text) <= budget
    assert text == reference_json(json.loads(text))
    assert run == before
    shown = bundle.run_data
    kept = set(shown.get("steps", {}))
    # Everything shown is what the host had, without evidence urls.
    for step_id in kept:
        assert shown["steps"][step_id] == stripped(run["steps"][step_id])
    assert kept.isdisjoint(bundle.dropped_steps)
    assert kept | set(bundle.dropped_steps) == set(run["steps"])

    # Never drops a newer step while keeping an older one; dropped are listed oldest first.
    def age(i: str) -> tuple[tuple[int, Fraction], str]:
        return (reference_age(run["steps"][i]), i)

    if kept and bundle.dropped_steps:
        assert max(age(i) for i in bundle.dropped_steps) < min(age(i) for i in kept)
    assert list(bundle.dropped_steps) == sorted(bundle.dropped_steps, key=age)
    # And it keeps as many as the slow reference does.
    expected = reference_kept(run, budget)
    if expected is not None:
        assert kept == set(expected)
        assert bundle.dropped_fields == ()
    assert bundle.truncated == bool(bundle.dropped_steps or bundle.dropped_fields)


@given(
    value=st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_canonical_json_is_the_sorted_compact_utf8_dump(value: Any) -> None:
    assert canonical_json(value) == reference_json(value)


def test_a_lone_surrogate_stays_escaped_so_the_text_is_utf_8() -> None:
    # json.loads lets a lone half of a UTF-16 pair through; UTF-8 has no way to write it.
    value = json.loads('{"a": "x\\ud800y", "b": "\\udc00", "c": "\\ud83d\\ude00 Müller"}')
    text = canonical_json(value)
    assert text == '{"a":"x\\ud800y","b":"\\udc00","c":"😀 Müller"}'
    text.encode("utf-8")  # no UnicodeEncodeError
    assert json.loads(text) == value  # the same data, read back
    bundle = build_bundle(
        parse_check("Done?"),
        Material(
            instructions="x", body="b", run_data={"inputs": value}, submission=Submission(value)
        ),
        state_bytes=65536,
    )
    assert bundle.run_data_bytes == len(bundle.run_data_json.encode("utf-8"))
    bundle.submission_json.encode("utf-8")


@pytest.mark.parametrize(
    ("run_data", "output", "message"),
    [
        pytest.param(
            {"steps": {"a": {"score": math.nan}}},
            {},
            "run data steps.a cannot be shown as JSON: it holds NaN or an infinity",
            id="nan-in-run-data",
        ),
        pytest.param(
            {"inputs": {"when": datetime(2026, 1, 1)}},
            {},
            r"run data inputs\.when cannot be shown as JSON: a datetime is not JSON data",
            id="datetime-in-run-data",
        ),
        pytest.param(
            {"inputs": {"when": [1, {"at": datetime(2026, 1, 1)}]}},
            {},
            r"run data inputs\.when cannot be shown as JSON: at /1/at: a datetime is not JSON",
            id="datetime-deep-in-run-data",
        ),
    ],
)
def test_material_that_is_not_json_is_named_in_the_same_words_on_every_python(
    run_data: dict[str, Any], output: Any, message: str
) -> None:
    material = Material(
        instructions="x", body="b", run_data=run_data, submission=Submission(output)
    )
    with pytest.raises(MaterialError, match=message):
        build_bundle(parse_check("Done?"), material, state_bytes=65536)


def test_a_submission_that_is_not_json_is_refused_where_it_is_made() -> None:
    # NaN and the infinities have no JSON form: the submission is refused as it is built, and
    # the error says where (the host tells the agent), never later in a stage after it.
    message = "output cannot be shown as JSON: at /score: inf is not a JSON number"
    with pytest.raises(MaterialError, match=message) as caught:
        Submission({"score": math.inf})
    assert caught.value.path == ("output", "score")
