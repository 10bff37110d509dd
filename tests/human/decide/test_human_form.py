"""checkprofile.human.decision_from_form: a post from the reviewer's page, read strictly.

"The posted fields, the deciding person and a time from the host → exactly one typed
decision, or DecisionRequiredError naming the shape received, never its contents, as
decision_from_json does; a post for another escalation, or one whose token does not match, is
refused" (issue 25).
"""

from __future__ import annotations

import urllib.parse
from datetime import datetime, timezone
from typing import Any

import pytest

from checkprofile import Evidence
from checkprofile.human import (
    Completed,
    DecisionRequiredError,
    Failed,
    FormRefusedError,
    Returned,
    decision_from_form,
)
from checkprofile.human._decide._form import output_field

AT = "2026-10-06T10:15:00Z"
REF = "9f86d081884c7d659a2feaa0c55ad015"
TOKEN = "host-token-ab12"
SECRET_NOTE = "the password is hunter2"


def post(**fields: str) -> dict[str, str]:
    return {"checkpoint": REF, "token": TOKEN, **fields}


def read(fields: Any) -> Any:
    return decision_from_form(fields, by="ana@example.com", at=AT, reference=REF, token=TOKEN)


def test_each_choice_gives_its_typed_decision() -> None:
    assert read(post(decision="returned", note="Name both lists.")) == Returned(
        note="Name both lists.", by="ana@example.com", at=AT
    )
    assert read(post(decision="failed", note="Wrong vendor.")) == Failed(
        note="Wrong vendor.", by="ana@example.com", at=AT
    )
    assert read(post(decision="completed", note="")) == Completed(by="ana@example.com", at=AT)
    assert read(post(decision="completed", note="Checked by phone.")) == Completed(
        by="ana@example.com", at=AT, note="Checked by phone."
    )


def test_own_output_is_read_field_by_field_as_json() -> None:
    fields = post(
        decision="own",
        note="",
        summary="Not cleared: an EU match.",
        evidence='[{"kind": "file", "ref": "eu.pdf"}]',
        next="",
        reason="",
        **{output_field("cleared"): "false", output_field('odd "key"\n'): '{"a": [1, 2.5]}'},
    )
    decision = read(fields)
    assert decision == Completed(
        by="ana@example.com",
        at=AT,
        output={"cleared": False, 'odd "key"\n': {"a": [1, 2.5]}},
        summary="Not cleared: an EU match.",
        evidence=(Evidence("file", "eu.pdf"),),
    )
    assert decision.own_output() is not None


def test_a_post_as_urllib_parses_it_and_as_a_browser_sends_lines() -> None:
    body = urllib.parse.urlencode(post(decision="returned", note="Line one.\r\nLine two."))
    for fields in (urllib.parse.parse_qsl(body), urllib.parse.parse_qs(body)):
        assert read(fields) == Returned(note="Line one.\nLine two.", by="ana@example.com", at=AT)


def test_the_time_and_the_person_are_the_hosts() -> None:
    when = datetime(2026, 10, 6, 10, 15, tzinfo=timezone.utc)
    decision = decision_from_form(
        post(decision="completed"), by="bo@example.com", at=when, reference=REF, token=TOKEN
    )
    assert (decision.by, decision.at) == ("bo@example.com", AT)
    # A post cannot set them.
    for extra in ({"by": "mallory"}, {"at": "2020-01-01T00:00:00Z"}, {"kind": "failed"}):
        with pytest.raises(DecisionRequiredError, match="has no field"):
            read(post(decision="completed", **extra))


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"checkpoint": REF, "decision": "completed"}, "token"),
        ({"checkpoint": REF, "token": "host-token-ab13", "decision": "completed"}, "token"),
        ({"checkpoint": REF, "token": TOKEN + "x", "decision": "completed"}, "token"),
        ({"checkpoint": REF, "token": "ünïcode", "decision": "completed"}, "token"),
        ({"token": TOKEN, "decision": "completed"}, "checkpoint"),
        ({"checkpoint": "0" * 32, "token": TOKEN, "decision": "completed"}, "checkpoint"),
    ],
    ids=["no-token", "other-token", "longer-token", "unicode-token", "no-ref", "other-ref"],
)
def test_a_forged_post_or_one_for_another_checkpoint_is_refused(
    fields: dict[str, str], why: str
) -> None:
    with pytest.raises(FormRefusedError) as refused:
        read(fields)
    assert refused.value.why == why
    assert isinstance(refused.value, PermissionError)


def test_the_token_is_checked_before_anything_else_is_read() -> None:
    # A forged post learns nothing of how its decision would have been read.
    with pytest.raises(FormRefusedError):
        read({"token": "guess", "decision": "nonsense", "checkpoint": "other"})


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        (post(decision="approve"), "decision is one of returned, completed, own, failed"),
        (post(note=SECRET_NOTE), "decision is one of"),
        (post(decision="returned", note="  \r\n "), "note must not be blank"),
        (post(decision="returned"), "note must not be blank"),
        (post(decision="failed", note=""), "note must not be blank"),
        (post(decision="completed", summary="x"), 'no field "summary"'),
        (post(decision="returned", note="n", **{output_field("a"): "1"}), "has no field"),
        (post(decision="own", **{output_field("a"): "NaN"}), "not JSON"),
        (post(decision="own", **{output_field("a"): '{"k": 1, "k": 2}'}), "a key twice"),
        (post(decision="own", **{output_field("a"): "1" * 5000}), "too long an integer"),
        (post(decision="own", **{output_field("a"): SECRET_NOTE}), "not JSON"),
        (post(decision="own", **{output_field("a"): "[" * 100_000}), "not JSON"),
        (post(decision="own", **{"output.a": "1"}), "not JSON"),
        (post(decision="own", **{"output.1": "1"}), "a JSON string"),
        (post(decision="own", evidence='[{"kind": "disk"}]'), "evidence items"),
        (post(decision="own", evidence="{}"), "evidence must be a list"),
        (post(decision="own", reason="r" * 5000, **{output_field("a"): "1"}), "at most 4000"),
    ],
    ids=[
        "unknown-choice", "no-choice", "blank-note", "no-note", "failed-empty-note",
        "summary-without-own", "output-on-returned", "nan", "duplicate-key", "long-int",
        "not-json", "deep", "key-not-json", "key-not-string", "bad-evidence", "evidence-map",
        "long-reason",
    ],
)  # fmt: skip
def test_a_post_that_is_not_one_decision_is_refused_by_shape(
    fields: dict[str, str], problem: str
) -> None:
    with pytest.raises(DecisionRequiredError) as refused:
        read(fields)
    message = str(refused.value)
    assert problem in message
    # The message names field names and types, never a value: not the note, not the token.
    assert SECRET_NOTE not in message and TOKEN not in message and REF not in message
    assert "a map with keys" in refused.value.received


def test_a_post_the_host_could_not_read_is_refused_by_shape() -> None:
    for fields in (
        "decision=completed",
        [("checkpoint", REF, "extra")],
        [("checkpoint", REF), ("checkpoint", REF)],
        {"checkpoint": [REF, REF], "token": TOKEN},
        {"checkpoint": REF, "token": TOKEN, "note": 7},
        [("decision", "completed")] * 20_000,
    ):
        with pytest.raises(DecisionRequiredError):
            read(fields)


def test_the_host_must_give_its_token_and_reference() -> None:
    for reference, token in ((REF, ""), ("", TOKEN), (REF, None)):
        with pytest.raises(ValueError, match="needs the host's"):
            decision_from_form(
                post(decision="completed"),
                by="ana",
                at=AT,
                reference=reference,
                token=token,  # type: ignore[arg-type]
            )


def test_two_fields_naming_one_output_key_are_one_field_posted_twice() -> None:
    # output."a" and output."\u0061" are the same key, spelled twice: not the last one winning.
    spellings = ['output."a"', 'output."\\u0061"', 'output."\\u0061"  ']
    for first, second in [(spellings[0], spellings[1]), (spellings[1], spellings[2])]:
        fields = [*post(decision="own").items(), (first, "1"), (second, SECRET_NOTE.join('""'))]
        with pytest.raises(DecisionRequiredError, match=r"names the output field .* twice") as err:
            read(fields)
        assert SECRET_NOTE not in str(err.value)
    # Two keys that only look alike are two keys.
    fields = [*post(decision="own").items(), ('output."a"', "1"), ('output."\\u0041"', "2")]
    assert read(fields).output == {"a": 1, "A": 2}


def test_form_post_builds_what_the_page_posts_and_reads_back() -> None:
    from checkprofile.human import form_post

    for choice, expected in (
        ("returned", Returned(note="Name both lists.", by="ana@example.com", at=AT)),
        ("failed", Failed(note="Name both lists.", by="ana@example.com", at=AT)),
        ("completed", Completed(note="Name both lists.", by="ana@example.com", at=AT)),
    ):
        fields = form_post(choice, reference=REF, token=TOKEN, note="Name both lists.")
        assert read(fields) == expected
        assert read(urllib.parse.parse_qsl(urllib.parse.urlencode(fields))) == expected
    own = form_post(
        "own",
        reference=REF,
        token=TOKEN,
        output={"total_eur": 120, 'odd "key"\n': [1.5, None]},
        summary="Three days.",
        evidence=[{"kind": "file", "ref": "r.pdf"}],
    )
    assert ('output."total_eur"', "120") in own
    assert read(own) == Completed(
        by="ana@example.com",
        at=AT,
        output={"total_eur": 120, 'odd "key"\n': [1.5, None]},
        summary="Three days.",
        evidence=(Evidence("file", "r.pdf"),),
    )
    with pytest.raises(ValueError, match="choice must be one of"):
        form_post("approved", reference=REF, token=TOKEN)
    with pytest.raises(ValueError, match="posted by own"):
        form_post("completed", reference=REF, token=TOKEN, output={"a": 1})
