"""The monitor: certified, broken and not yet; the same answer from the trail and from the
update rule, on any replica; restarts; segments; a hostile trail never certified; the CLI."""

from __future__ import annotations

import functools
import json
import math
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest

from checkprofile import Submission, YesNoAnswer, combine, outcome_for, parse_check
from checkprofile.cli import main
from checkprofile.human import Completed, JsonLinesRecorder, Returned, VerdictRecord, verdict_record
from checkprofile.human._audit._spot import SpotCheckRecord, SpotPlan, spot_check_record
from checkprofile.human._calibration._monitor import (
    MonitorSettings,
    monitor,
    monitor_update,
)
from checkprofile.human._calibration._monitor_report import monitor_html, monitor_text
from checkprofile.human._calibration._sequence import Counts, bounds, e_down, e_up, side_of

CHECK = parse_check([{"ask": "The report matches its receipts.", "pass": 0.9, "fail": 0.5}])
REWORDED = parse_check([{"ask": "The report matches every receipt.", "pass": 0.9, "fail": 0.5}])
SECRET = b"the monitor tests' server secret"
PLAN = SpotPlan(passes=0.3, fails=0.3, secret=SECRET)
SETTINGS = MonitorSettings(plan=PLAN, max_wrong_pass=0.05, max_wrong_fail=0.10)
START = datetime(2026, 11, 2, tzinfo=timezone.utc)


def trail(count: int, wrong: float, **options: Any) -> list[Any]:
    """``count`` enforced verdicts (4 in 5 pass), each drawn one reviewed by a person who
    finds it wrong with probability ``wrong`` (made once per arguments: records are frozen)."""
    return list(_trail(count, wrong, **options))


@functools.cache
def _trail(
    count: int,
    wrong: float,
    *,
    seed: int = 0,
    first: int = 0,
    model: str = "m",
    check: Any = CHECK,
    plan: SpotPlan = PLAN,
    review: bool = True,
) -> tuple[Any, ...]:
    rng = random.Random(seed)
    records: list[Any] = []
    for n in range(first, first + count):
        at = (START + timedelta(minutes=n)).strftime("%Y-%m-%dT%H:%M:%SZ")
        p = 0.95 if rng.random() < 0.8 else 0.1
        made = combine(check, (YesNoAnswer(p),), model=model, at=at, advisory=False)
        record = verdict_record(
            outcome_for(made), run_id=f"run-{n}", step_id="review", submission=Submission({"n": n})
        )
        records.append(record)
        if review and plan.draw(record):
            bad = rng.random() < wrong
            accepted = (record.result == "pass") != bad
            decision = (
                Completed(by="pat", at=at) if accepted else Returned(note="no", by="pat", at=at)
            )
            records.append(spot_check_record(record, decision, plan=plan))
    return tuple(records)


# --- the statistics -------------------------------------------------------------------------


def test_the_evidence_moves_the_right_way_with_the_rate() -> None:
    counts = Counts(n=5000, wrong=20, pending=0, p=0.2)
    ups = [e_up(counts, m) for m in (0.005, 0.01, 0.02, 0.05)]
    downs = [e_down(counts, m) for m in (0.005, 0.01, 0.02, 0.05)]
    assert ups == sorted(ups, reverse=True) and downs == sorted(downs)
    lower, upper = bounds(counts, 0.05, 0.1)
    estimate = 20 / (0.2 * 5000)
    assert 0 < lower < estimate < upper < 0.05
    # pending reviews only ever weaken a certificate
    assert e_down(attrs.evolve(counts, pending=10), 0.05) < e_down(counts, 0.05)
    assert e_up(attrs.evolve(counts, pending=10), 0.05) == e_up(counts, 0.05)


def test_each_bet_is_a_fair_game_at_the_promise() -> None:
    # Under rate exactly m every factor has mean 1 (so the evidence is a martingale): the
    # expectation over one verdict, computed exactly, for each sampling rate.
    for p in (0.01, 0.2, 1.0):
        for m in (0.01, 0.05, 0.3):
            q = p * m
            for counts_of in (e_up, e_down):
                hit = math.exp(counts_of(Counts(1, 1, 0, p), m))
                miss = math.exp(counts_of(Counts(1, 0, 0, p), m))
                if q < 1:
                    assert math.isclose(q * hit + (1 - q) * miss, 1.0, rel_tol=1e-9)


def test_nothing_sampled_is_never_certified() -> None:
    side = side_of(Counts(100_000, 0, 0, 0.0), 0.05, 0.05, 0.1)
    assert not side.certified and not side.broken and side.estimate is None


# --- the trail ------------------------------------------------------------------------------


def test_a_check_that_keeps_its_promise_is_certified() -> None:
    report = monitor(trail(1500, 0.0), settings=SETTINGS)
    assert report.status == "certified" and not report.events
    (watch,) = report.watches
    assert watch.verdicts == 1500 and watch.spot_checks > 300 and watch.pending == 0
    assert watch.sides["wrong_pass"].upper < 0.05


def test_a_check_that_breaks_its_promise_is_caught_with_an_event() -> None:
    settings = attrs.evolve(SETTINGS, on_broken="to_person")
    report = monitor(trail(1500, 0.4), settings=settings)
    assert report.status == "broken"
    (event,) = [e for e in report.events if e["kind"] == "wrong_pass"]
    assert event["action"] == "to_person" and event["step"] == "review"
    assert event["lower"] > 0.05 and event["false_alarm"] == 0.05


def test_too_few_spot_checks_are_not_yet_certified() -> None:
    report = monitor(trail(40, 0.0), settings=SETTINGS)
    assert report.status == "not_yet"


def test_the_rule_fed_in_batches_gives_the_trails_answer() -> None:
    records = trail(1200, 0.02, seed=3)
    whole = monitor(records, settings=SETTINGS)
    state: Any = None
    for start in range(0, len(records), 97):
        before = json.dumps(state)
        state, _ = monitor_update(state, records[start : start + 97], settings=SETTINGS)
        state = json.loads(json.dumps(state))  # the host keeps it as JSON
        assert json.dumps(state) != before
    assert state == json.loads(json.dumps(whole.state))


def test_the_rule_does_not_change_the_state_it_is_given() -> None:
    state, _ = monitor_update(None, trail(50, 0.0), settings=SETTINGS)
    kept = json.dumps(state)
    monitor_update(state, trail(50, 0.0, first=50), settings=SETTINGS)
    assert json.dumps(state) == kept


def test_replicas_in_any_order_give_the_same_answer(tmp_path: Path) -> None:
    records = trail(800, 0.02, seed=5)
    rng = random.Random(1)
    files = [tmp_path / f"replica-{n}.jsonl" for n in range(3)]
    for record in records:
        JsonLinesRecorder(rng.choice(files)).record(record)
    one = monitor(records, settings=SETTINGS)
    many = monitor(*files, settings=SETTINGS)
    backwards = monitor(*reversed(files), settings=SETTINGS)
    assert one.state == many.state == backwards.state
    assert one.status == many.status


def test_a_new_model_or_a_reworded_check_restarts_it_and_says_why() -> None:
    records = trail(1500, 0.0) + trail(50, 0.0, first=1500, model="m-2")
    report = monitor(records, settings=SETTINGS)
    (watch,) = report.watches
    assert watch.epoch["reason"] == "the model changed from m to m-2"
    assert watch.verdicts == 50 and report.status == "not_yet"
    reworded = monitor(
        trail(1500, 0.0) + trail(50, 0.0, first=1500, check=REWORDED), settings=SETTINGS
    )
    assert reworded.watches[0].epoch["reason"] == "the check was reworded (another check_key)"


def test_a_segment_whose_wrong_passes_hide_in_the_average_is_caught() -> None:
    records = trail(3000, 0.0, seed=7)
    segments: dict[str, dict[str, str]] = {}
    for record in records:
        if isinstance(record, VerdictRecord):
            number = int(record.run.split("-")[1])
            segments[record.run] = {"vendor": "acme" if number % 10 == 0 else "other"}
    # A person refuses 2 in 5 of acme's passes: 32% of acme's verdicts, 3.2% of all of them.
    bad = [
        attrs.evolve(r, decision=Returned(note="no", by="pat", at=r.at))
        if isinstance(r, SpotCheckRecord)
        and r.verdict == "pass"
        and segments[r.run]["vendor"] == "acme"
        and int(r.key[-4:], 16) % 5 < 2
        else r
        for r in records
    ]
    settings = attrs.evolve(SETTINGS, by="vendor", segments=segments, max_wrong_fail=None)
    report = monitor(bad, settings=settings)
    status = {watch.segment: watch.status for watch in report.watches}
    assert status["acme"] == "broken" and status[None] != "broken"
    assert report.status == "broken"
    assert any(e["segment"] == "acme" for e in report.events)


# --- a hostile trail ------------------------------------------------------------------------


def test_forged_sampling_probabilities_count_for_nothing() -> None:
    records = trail(1500, 0.0)
    forged = [
        attrs.evolve(r, probability=0.9) if isinstance(r, SpotCheckRecord) else r for r in records
    ]
    report = monitor(forged, settings=SETTINGS)
    assert report.status != "certified"
    assert report.state["steps"]["review"]["problems"]["forged"] > 300
    assert report.watches[0].spot_checks == 0


def test_spot_checks_drawn_with_another_secret_count_for_nothing() -> None:
    other = SpotPlan(passes=0.3, fails=0.3, secret=b"a secret the monitor never had")
    report = monitor(trail(1500, 0.0, plan=other), settings=SETTINGS)
    assert report.status != "certified"


def test_a_spot_check_without_its_verdict_counts_for_nothing() -> None:
    records = trail(1500, 0.0)
    orphans = [r for r in records if isinstance(r, SpotCheckRecord)]
    report = monitor(orphans, settings=SETTINGS)
    assert report.status == "not_yet" and report.orphans == len(orphans)
    assert not report.watches


def test_reviews_left_out_keep_it_from_being_certified() -> None:
    # The reviews that found a wrong pass are dropped from the trail: the verdicts the keyed
    # hash drew are still there, pending, and count as wrong for a certificate.
    records = trail(1500, 0.5)
    dropped = [r for r in records if not (isinstance(r, SpotCheckRecord) and r.wrong)]
    report = monitor(dropped, settings=SETTINGS)
    assert report.status != "certified"
    assert report.watches[0].pending > 0
    silent = monitor(trail(1500, 0.0, review=False), settings=SETTINGS)
    assert silent.status == "not_yet"


def test_repeated_records_count_once() -> None:
    records = trail(1500, 0.03, seed=11)
    once = monitor(records, settings=SETTINGS)
    twice = monitor(records + records[::-1], settings=SETTINGS)
    assert twice.state["steps"] == once.state["steps"]
    assert twice.duplicates == len(records)


def test_two_different_reviews_of_one_verdict_count_for_neither() -> None:
    records = trail(1500, 0.0)
    spots = [r for r in records if isinstance(r, SpotCheckRecord) and r.verdict == "pass"]
    contradictions = [
        attrs.evolve(r, decision=Returned(note="no", by="sam", at=r.at)) for r in spots
    ]
    report = monitor(records + contradictions, settings=SETTINGS)
    assert report.status != "certified"
    assert report.state["steps"]["review"]["problems"]["repeated"] == len(spots)


def test_many_verdict_records_of_one_submission_count_once() -> None:
    records = trail(60, 0.0)
    verdict = next(r for r in records if isinstance(r, VerdictRecord))
    padded = records + [verdict] * 5000
    assert monitor(padded, settings=SETTINGS).watches[0].verdicts == 60


# --- settings, report, CLI ------------------------------------------------------------------


def test_settings_name_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="max_wrong_pass must be a number between 0 and 1"):
        MonitorSettings(plan=PLAN, max_wrong_pass=1.2)
    with pytest.raises(ValueError, match='on_broken must be "advisory" or "to_person"'):
        MonitorSettings(plan=PLAN, on_broken="ignore")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="plan must be a SpotPlan"):
        MonitorSettings(plan="secret")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a monitor state is the JSON value"):
        monitor_update({"steps": {}}, [], settings=SETTINGS)


def test_the_report_reads_as_text_and_as_a_page_without_script() -> None:
    report = monitor(trail(1500, 0.4), settings=SETTINGS)
    text = monitor_text(report)
    assert "BROKEN" in text and "Event: review" in text
    page = monitor_html(report)
    assert "<svg" in page and "<polyline" in page and "<script" not in page.lower()
    assert "default-src 'none'" in page
    assert json.loads(json.dumps(report.to_json()))["status"] == "broken"


def _cli(tmp_path: Path, records: list[Any], *extra: str) -> tuple[int, str]:
    path = tmp_path / "trail.jsonl"
    path.unlink(missing_ok=True)
    for record in records:
        JsonLinesRecorder(path).record(record)
    secret = tmp_path / "secret"
    secret.write_bytes(SECRET + b"\n")
    args = ["monitor", str(path), "--secret-file", str(secret), "--pass-rate", "0.3"]
    return main([*args, "--fail-rate", "0.3", *extra]), str(path)


def test_the_cli_exits_by_what_the_monitor_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli(tmp_path, trail(1500, 0.0))[0] == 0
    assert "certified" in capsys.readouterr().out
    assert _cli(tmp_path, trail(1500, 0.4))[0] == 1
    assert "BROKEN" in capsys.readouterr().out
    assert _cli(tmp_path, trail(30, 0.0), "--json")[0] == 3
    assert json.loads(capsys.readouterr().out)["status"] == "not_yet"
    html = tmp_path / "m.html"
    assert _cli(tmp_path, trail(1500, 0.0), "--html", str(html))[0] == 0
    assert "<svg" in html.read_text()
    secret = tmp_path / "secret"
    missing = tmp_path / "missing.jsonl"
    assert main(["monitor", str(missing), "--secret-file", str(secret), "--pass-rate", "0.3"]) == 2
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n{}\n")
    assert main(["monitor", str(bad), "--secret-file", str(secret), "--pass-rate", "0.3"]) == 2


# --- PostgreSQL -----------------------------------------------------------------------------

from test_human_postgres import server, table  # noqa: E402, F401 (pytest fixtures)


def test_a_store_keeps_spot_checks_and_the_monitor_reads_them(
    server: str,  # noqa: F811 (the fixture)
    table: str,  # noqa: F811 (the fixture)
) -> None:
    import psycopg

    from checkprofile.human import PostgresRecorder

    records = trail(600, 0.02, seed=13)
    with PostgresRecorder(server, table=table) as store:
        store.record(records[0])
    # A table made before spot checks: its record kinds were verdict and decision.
    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f"ALTER TABLE {table} DROP CONSTRAINT {table}_record_check")
        connection.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_record_check"
            " CHECK (record IN ('verdict', 'decision'))"
        )
    with PostgresRecorder(server, table=table) as store:
        store.record_many(records)
        assert list(store.read()) == records
        assert monitor(store, settings=SETTINGS).state == monitor(records, settings=SETTINGS).state
    with psycopg.connect(server, autocommit=True) as connection:
        names = connection.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'c'",
            [table],
        ).fetchall()
        assert names == [(f"{table}_record_check",)]
        with pytest.raises(psycopg.errors.CheckViolation):
            connection.execute(
                f"INSERT INTO {table} (sha256, record, key, run, step, at, at_order, line)"
                " VALUES ('x', 'other', 'k', 'r', 's', 'a', 'a', '{}')"
            )


def test_calibrate_by_a_field_makes_one_report_per_segment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from checkprofile.human import read_records

    example = Path(__file__).resolve().parents[3] / "examples" / "advisory_records.jsonl"
    runs = sorted({record.run for record in read_records(example)})
    fields = {run: {"region": "north" if n % 3 == 0 else "south"} for n, run in enumerate(runs)}
    segments = tmp_path / "runs.json"
    segments.write_text(json.dumps(fields))
    args = ["calibrate", str(example), "--by", "region", "--segments", str(segments)]
    assert main([*args, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["by"] == "region" and set(found["segments"]) == {"north", "south"}
    whole = main(["calibrate", str(example), "--json"])
    assert whole == 0
    total = json.loads(capsys.readouterr().out)

    def cases(report: dict[str, Any]) -> int:
        return sum(
            sum(cell.values())
            for check in report["checks"]
            for cell in check["at_current"]["confusion"].values()
        )

    assert sum(map(cases, found["segments"].values())) == cases(total) > 0
    assert main([*args[:2], "--by", "region"]) == 2


def test_the_page_opens_in_headless_chromium_without_errors(tmp_path: Path) -> None:
    import base64

    from browser import Browser, complaints, need_chromium, png_size

    chromium = need_chromium()
    page = tmp_path / "monitor.html"
    assert _cli(tmp_path, trail(1500, 0.0), "--html", str(page))[0] == 0
    browser = Browser(chromium, tmp_path / "profile")
    try:
        target = browser.send("Target.createTarget", url="about:blank")["targetId"]
        session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            browser.send(f"{domain}.enable", session)
        browser.send("Page.navigate", session, url=page.as_uri())
        browser.wait(lambda m: m.get("method") == "Page.loadEventFired")
        shown = browser.send(
            "Runtime.evaluate",
            session,
            expression="[document.title, document.querySelectorAll('svg polyline').length,"
            " document.querySelectorAll('script').length]",
            returnByValue=True,
        )["result"]["value"]
        shot = browser.send("Page.captureScreenshot", session, format="png")
    finally:
        browser.close()
    title, polylines, scripts = shown
    assert title == "Monitor: trail.jsonl" and polylines >= 6 and scripts == 0
    width, height = png_size(base64.b64decode(shot["data"]))
    assert width > 0 and height > 0
    assert complaints(browser.events) == []


def test_a_window_takes_the_verdicts_of_its_time() -> None:
    records = trail(1500, 0.0)
    until = (START + timedelta(minutes=100)).strftime("%Y-%m-%dT%H:%M:%SZ")
    report = monitor(records, settings=SETTINGS, until=until)
    assert report.watches[0].verdicts == 100
    assert report.orphans == 0  # spot checks of verdicts outside the window are not orphans


def test_the_settings_keep_watching_what_a_recommendation_promised() -> None:
    from checkprofile.human import calibrate

    example = Path(__file__).resolve().parents[3] / "examples" / "advisory_records.jsonl"
    (check,) = calibrate(example, max_wrong_pass=0.2, max_wrong_fail=0.3).checks
    recommendation = check.recommended
    assert recommendation is not None and recommendation.promised
    settings = MonitorSettings.promised_by(recommendation, plan=PLAN, false_alarm=0.01)
    assert settings.max_wrong_pass == recommendation.max_wrong_pass == 0.2
    assert settings.max_wrong_fail == 0.3
    assert settings.confidence == recommendation.confidence and settings.false_alarm == 0.01
    unpromised = attrs.evolve(recommendation, promised=False)
    with pytest.raises(ValueError, match="promised nothing"):
        MonitorSettings.promised_by(unpromised, plan=PLAN)
