"""Spot checks: the keyed draw of enforced verdicts, the record kind, written and read back by
every recorder and reader (the PostgreSQL store in test_human_monitor's store test)."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

from checkprofile import Submission, YesNoAnswer, combine, outcome_for, parse_check
from checkprofile.human import (
    AuditError,
    Completed,
    JsonLinesRecorder,
    Returned,
    VerdictRecord,
    read_records,
    record_from_json,
    verdict_record,
)
from checkprofile.human._audit._spot import (
    SpotCheckRecord,
    SpotPlan,
    sample_fraction,
    sample_tag,
    spot_check_record,
)

CHECK = parse_check([{"ask": "The report matches its receipts.", "pass": 0.9, "fail": 0.5}])
AT = "2026-11-02T09:00:00Z"
SECRET = b"a server secret, kept off the trail"
PLAN = SpotPlan(passes=0.3, fails=0.3, secret=SECRET)


def verdict(n: int, p: float = 0.95, *, advisory: bool = False, model: str = "m") -> VerdictRecord:
    made = combine(CHECK, (YesNoAnswer(p),), model=model, at=AT, advisory=advisory)
    return verdict_record(
        outcome_for(made), run_id=f"run-{n}", step_id="review", submission=Submission({"n": n})
    )


def drawn(plan: SpotPlan = PLAN, p: float = 0.95, start: int = 0) -> VerdictRecord:
    return next(v for n in range(start, start + 1000) if plan.draw(v := verdict(n, p)))


def test_the_draw_is_the_keyed_hash_an_auditor_recomputes() -> None:
    record = verdict(1)
    tag = sample_tag(SECRET, record.key)
    expected = hmac.new(SECRET, record.key.encode(), hashlib.sha256).hexdigest()
    assert tag == "hmac-sha256:" + expected
    assert sample_fraction(tag) == int(expected[:13], 16) / 16**13
    assert (PLAN.draw(record) is not None) is (sample_fraction(tag) < 0.3)


def test_the_draw_takes_the_rate_and_depends_on_the_secret() -> None:
    records = [verdict(n) for n in range(2000)]
    chosen = {r.key for r in records if PLAN.draw(r)}
    assert 480 < len(chosen) < 720  # 30% of 2000, well inside its spread
    other = SpotPlan(passes=0.3, fails=0.3, secret=b"another secret of enough bytes")
    assert chosen != {r.key for r in records if other.draw(r)}  # unknown secret, unknown draw


def test_advisory_escalated_and_unsampled_verdicts_are_never_drawn() -> None:
    always = SpotPlan(passes=1, fails=1, secret=SECRET)
    assert always.draw(verdict(1, advisory=True)) is None
    assert always.draw(verdict(1, 0.7)) is None  # unsure: a person sees it anyway
    assert always.draw(verdict(1)) is not None
    none_of_fails = SpotPlan(passes=1, fails=0, secret=SECRET)
    assert none_of_fails.draw(verdict(1, 0.1)) is None


def test_a_short_secret_or_a_bad_rate_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 16"):
        SpotPlan(passes=0.1, fails=0.1, secret=b"short")
    with pytest.raises(ValueError, match="passes must be from 0 to 1"):
        SpotPlan(passes=1.5, fails=0.1, secret=SECRET)
    with pytest.raises(ValueError, match="fails must be a number"):
        SpotPlan(passes=0.1, fails=float("nan"), secret=SECRET)


def test_a_spot_check_the_plan_did_not_draw_is_not_recorded() -> None:
    undrawn = next(v for n in range(1000) if not PLAN.draw(v := verdict(n)))
    with pytest.raises(ValueError, match="did not draw"):
        spot_check_record(undrawn, Completed(by="pat", at=AT), plan=PLAN)


def test_a_spot_check_is_written_and_read_back(tmp_path: Path) -> None:
    record = drawn()
    spot = spot_check_record(record, Returned(note="receipts missing", by="pat", at=AT), plan=PLAN)
    assert spot.verdict == "pass" and not spot.accepted and spot.wrong
    assert spot.probability == 0.3 and spot.sample == PLAN.draw(record)
    path = tmp_path / "trail.jsonl"
    recorder = JsonLinesRecorder(path)
    recorder.record(record)
    recorder.record(spot)
    assert read_records(path) == (record, spot)
    line = json.loads(path.read_text().splitlines()[1])
    assert line["record"] == "spot_check" and line["probability"] == 0.3
    assert record_from_json(line) == spot


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"probability": 0}, "probability must be a number above 0"),
        ({"probability": 1.5}, "probability must be a number above 0"),
        ({"probability": True}, "probability must be a number above 0"),
        ({"sample": "hmac-sha256:" + "f" * 64}, "not below the probability"),
        ({"sample": "sha256:" + "0" * 64}, "sample must be hmac-sha256"),
        ({"accepted": True}, "accepted is true, but the decision says false"),
        ({"verdict": "unsure"}, 'verdict must be "pass" or "fail"'),
        ({"run": "run-other"}, "key is not the submission key"),
        ({"extra": 1}, 'has no key "extra"'),
        ({"format": 2}, "format 2 is not 1"),
    ],
)
def test_a_spot_check_that_does_not_hold_together_is_refused(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    spot = spot_check_record(drawn(), Returned(note="no", by="pat", at=AT), plan=PLAN)
    data = {**spot.to_json(), **change}
    with pytest.raises(ValueError, match=message):
        record_from_json(data)
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(AuditError, match=r"bad\.jsonl:1: "):
        read_records(path)


def test_a_spot_check_missing_a_key_is_named() -> None:
    data = spot_check_record(drawn(), Completed(by="pat", at=AT), plan=PLAN).to_json()
    del data["sample"]
    with pytest.raises(ValueError, match='a spot_check record needs "sample"'):
        record_from_json(data)


def test_the_record_is_a_spot_check_record_type() -> None:
    spot = spot_check_record(drawn(p=0.1), Completed(by="pat", at=AT), plan=PLAN)
    assert isinstance(spot, SpotCheckRecord) and spot.verdict == "fail" and spot.wrong


def test_a_spot_check_receipt_and_page_say_it_changes_nothing() -> None:
    from test_human_records import RUN, STEP, outcome_of

    from checkprofile.human import Receipt, ReceiptError, receipt_for, receipt_html

    receipt = receipt_for(outcome_of("pass"), run_id=RUN, step_id=STEP, spot_check=0.05)
    text = receipt.render_text()
    assert "(spot check)" in text.splitlines()[0]
    assert "about 1 in 20" in text and "nothing you decide here changes this run" in text
    assert Receipt.from_json(json.loads(json.dumps(receipt.to_json()))) == receipt
    page = receipt_html(receipt)
    assert "spot check" in page and "changes this run" in page
    plain = receipt_for(outcome_of("pass"), run_id=RUN, step_id=STEP)
    assert "spot_check" not in plain.to_json()  # a receipt as before when not a spot check
    with pytest.raises(ReceiptError, match="spot_check must be a sampling rate"):
        Receipt.from_json({**receipt.to_json(), "spot_check": 0})
