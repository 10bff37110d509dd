"""The escalation store: put, list the waiting oldest first, claim for a while, decide once.

"Two replicas and two reviewers never produce two decisions for one escalation" (issue 38).
Every test runs against both stores: SQLite (one file, the embedded default) and PostgreSQL (the
server ``.ci/run`` starts; without one the PostgreSQL cases skip, and fail under ``CI``). The
races are real: processes with stores of their own, released at once.
"""

from __future__ import annotations

import json
import multiprocessing
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_human_checkpoint import RETURNED
from test_human_postgres import server  # noqa: F401 - the session's PostgreSQL fixture
from test_human_records import SCRIPTS, STEP, make_outcome

from checkprofile._pg_copy import COPY_FROM
from checkprofile.human import (
    AlreadyDecidedError,
    Checkpoint,
    ClaimedError,
    Completed,
    DecisionRequiredError,
    EscalationStore,
    EscalationStoreError,
    NoSuchEscalationError,
    PostgresEscalationStore,
    Returned,
    SameDeciderError,
    SqliteEscalationStore,
    StepState,
    checkpoint_for,
    resolution_record,
)

AT = "2026-10-06T10:15:00Z"
SUBMITTER = "agent:screener"


def checkpoint(run: str, step: str = STEP, *, submitted_by: str | None = SUBMITTER) -> Checkpoint:
    return checkpoint_for(
        make_outcome(SCRIPTS["unsure"]),
        state=StepState(run_id=run, step_id=step),
        submitted_by=submitted_by,
        submitted_at="2026-10-06T09:04:12Z",
    )


class Clock:
    """A clock the test moves (seconds since the epoch)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The store every test of this module runs against: ("sqlite", path) or ("postgres",
    "conninfo|table")."""
    if request.param == "sqlite":
        yield "sqlite", str(tmp_path / "escalations.sqlite")
        return
    conninfo = request.getfixturevalue("server")
    table = f"escalations_{uuid.uuid4().hex[:12]}"
    yield "postgres", f"{conninfo}|{table}"
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f"DROP TABLE IF EXISTS {table}")


def open_store(where: tuple[str, str], **options: Any) -> EscalationStore:
    kind, address = where
    if kind == "sqlite":
        return SqliteEscalationStore(address, **options)
    conninfo, table = address.split("|")
    return PostgresEscalationStore(conninfo, table=table, **options)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(where: tuple[str, str], clock: Clock) -> Iterator[EscalationStore]:
    with open_store(where, clock=clock) as opened:
        yield opened


# --- putting and listing ----------------------------------------------------------------------


def test_a_checkpoint_put_reads_back_equal(store: EscalationStore) -> None:
    made = checkpoint("run-1")
    reference = store.put(made, process="vendor-onboarding")
    assert reference == made.reference
    assert store.get(reference) == made
    assert store.decided(reference) is None


def test_putting_again_keeps_one_and_changes_nothing(store: EscalationStore) -> None:
    made = checkpoint("run-1")
    store.put(made)
    store.claim(made.reference, by="ana", seconds=60)
    assert store.put(made) == made.reference
    (only,) = store.waiting()
    assert only.claimed_by == "ana"


def test_waiting_lists_oldest_first_by_process_and_step(
    store: EscalationStore, clock: Clock
) -> None:
    made = {}
    for run, step, process in [
        ("run-3", "a", "p1"),
        ("run-1", "b", "p1"),
        ("run-2", "a", "p2"),
        ("run-0", "a", "p1"),
    ]:
        made[run] = checkpoint(run, step)
        store.put(made[run], process=process)
        clock.now += 1
    assert [w.run_id for w in store.waiting()] == ["run-3", "run-1", "run-2", "run-0"]
    assert [w.run_id for w in store.waiting(process="p1")] == ["run-3", "run-1", "run-0"]
    assert [w.run_id for w in store.waiting(process="p1", step="a")] == ["run-3", "run-0"]
    assert [w.run_id for w in store.waiting(step="b")] == ["run-1"]
    assert [w.run_id for w in store.waiting(limit=2)] == ["run-3", "run-1"]
    first = store.waiting()[0]
    assert (first.reference, first.process, first.step_id) == (made["run-3"].reference, "p1", "a")
    assert first.submitted_by == SUBMITTER
    assert first.put_at == "2027-01-15T08:00:00.000000Z"
    store.decide(made["run-1"].reference, {**RETURNED, "at": AT})
    assert [w.run_id for w in store.waiting()] == ["run-3", "run-2", "run-0"]


def test_a_batch_is_put_whole_or_not_at_all(store: EscalationStore) -> None:
    good = [checkpoint(f"run-{i}") for i in range(3)]
    with pytest.raises(TypeError, match="keeps Checkpoints, got"):
        store.put_many([*good, good[0].to_json()])  # type: ignore[list-item]
    assert store.waiting() == []
    assert store.put_many(good) == [c.reference for c in good]
    assert len(store.waiting()) == 3


@pytest.mark.parametrize("size", [COPY_FROM - 1, 2 * COPY_FROM])
def test_a_batch_keeps_its_order_and_each_checkpoint_once(
    store: EscalationStore, size: int
) -> None:
    # PostgreSQL sends a batch from COPY_FROM by COPY; every store keeps the order of arrival
    # and a checkpoint put already, or twice in the batch, once and unchanged.
    made = [checkpoint(f"run-{i}") for i in range(size)]
    store.put(made[1])
    assert store.put_many([*made, made[0]]) == [c.reference for c in [*made, made[0]]]
    assert [w.run_id for w in store.waiting(limit=1000)] == [
        "run-1",
        *(f"run-{i}" for i in range(size) if i != 1),
    ]
    store.put_many(made[::-1])
    assert len(store.waiting(limit=1000)) == size


def test_an_unknown_or_malformed_reference_is_refused_by_name(store: EscalationStore) -> None:
    with pytest.raises(NoSuchEscalationError, match=r"no checkpoint 0{32} in"):
        store.get("0" * 32)
    with pytest.raises(NoSuchEscalationError):
        store.decide("0" * 32, {**RETURNED, "at": AT})
    for bad in ("../x", "A" * 32, 7, None):
        with pytest.raises(ValueError, match="32 lowercase hex digits"):
            store.get(bad)  # type: ignore[arg-type]


# --- deciding once ----------------------------------------------------------------------------


def test_the_first_decision_wins_and_a_later_one_is_refused_naming_it(
    store: EscalationStore,
) -> None:
    made = checkpoint("run-1")
    store.put(made)
    decided = store.decide(made.reference, {**RETURNED, "at": AT})
    assert decided.state == made.decide({**RETURNED, "at": AT})
    assert decided.decision == Returned(note=RETURNED["note"], by=RETURNED["by"], at=AT)
    assert resolution_record(decided.resolution) == resolution_record(
        made.resolve({**RETURNED, "at": AT})
    )
    later = Completed(by="bo@example.com", at="2026-10-06T10:16:00Z")
    with pytest.raises(AlreadyDecidedError) as refused:
        store.decide(made.reference, later)
    message = str(refused.value)
    assert 'decided already: returned by "ana@example.com" at 2026-10-06T10:15:00Z' in message
    assert refused.value.decided == decided
    # The same decision again (a retried task) is refused too, and tells it was its own.
    with pytest.raises(AlreadyDecidedError) as again:
        store.decide(made.reference, {**RETURNED, "at": AT})
    assert again.value.decided.decision == decided.decision
    assert store.decided(made.reference) == decided


def test_a_decision_the_checkpoint_refuses_changes_nothing(store: EscalationStore) -> None:
    made = checkpoint("run-1")
    store.put(made)
    with pytest.raises(DecisionRequiredError):
        store.decide(made.reference, {"kind": "returned", "by": "ana", "at": AT})  # no note
    assert store.decided(made.reference) is None
    assert [w.reference for w in store.waiting()] == [made.reference]


def test_a_lease_keeps_others_out_until_it_runs_out(store: EscalationStore, clock: Clock) -> None:
    made = checkpoint("run-1")
    store.put(made)
    claim = store.claim(made.reference, by="ana", seconds=300)
    assert (claim.by, claim.until) == ("ana", clock.now + 300)
    (listed,) = store.waiting()
    assert listed.claimed_by == "ana"
    with pytest.raises(ClaimedError, match='claimed by "ana" until 2027-01-15T08:05:00') as held:
        store.claim(made.reference, by="bo", seconds=60)
    assert held.value.by == "ana"
    with pytest.raises(ClaimedError):
        store.decide(made.reference, {**RETURNED, "by": "bo", "at": AT})
    assert store.decided(made.reference) is None
    store.claim(made.reference, by="ana", seconds=600)  # renewed by its holder
    clock.now += 601
    (listed,) = store.waiting()
    assert listed.claimed_by is None  # ran out: shown free
    store.claim(made.reference, by="bo", seconds=60)
    store.release(made.reference, by="bo")
    decided = store.decide(made.reference, {**RETURNED, "by": "cy", "at": AT})
    assert decided.decision.by == "cy"
    with pytest.raises(AlreadyDecidedError):
        store.claim(made.reference, by="ana", seconds=60)


def test_an_exclusive_claim_refuses_its_own_holder_until_it_runs_out(
    store: EscalationStore, clock: Clock
) -> None:
    # A server that claims, records, then decides: the same reviewer on another replica must
    # not slip in between (a renewal would let both write a record).
    made = checkpoint("run-1")
    store.put(made)
    store.claim(made.reference, by="ana", seconds=60, exclusive=True)
    with pytest.raises(ClaimedError, match='claimed by "ana" until') as held:
        store.claim(made.reference, by="ana", seconds=60, exclusive=True)
    assert held.value.by == "ana"
    with pytest.raises(ClaimedError):
        store.claim(made.reference, by="bo", seconds=60, exclusive=True)
    store.claim(made.reference, by="ana", seconds=60)  # not exclusive: renewed by its holder
    clock.now += 61
    claim = store.claim(made.reference, by="bo", seconds=60, exclusive=True)  # ran out
    assert claim.by == "bo"
    with pytest.raises(TypeError, match="exclusive must be a bool, got 1"):
        store.claim(made.reference, by="bo", seconds=60, exclusive=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("seconds", [0, -1, float("nan"), float("inf"), 10**9, True, "60"])
def test_a_lease_of_no_length_is_refused(store: EscalationStore, seconds: Any) -> None:
    made = checkpoint("run-1")
    store.put(made)
    with pytest.raises((TypeError, ValueError), match="seconds must be"):
        store.claim(made.reference, by="ana", seconds=seconds)


def test_separated_duties_refuse_the_submitter(where: tuple[str, str]) -> None:
    with open_store(where, separate_duties=True) as store:
        made = checkpoint("run-1")
        store.put(made)
        for submitter in (SUBMITTER, " Agent:Screener "):
            with pytest.raises(SameDeciderError, match="submitted the candidate"):
                store.decide(made.reference, {**RETURNED, "by": submitter, "at": AT})
            with pytest.raises(SameDeciderError):
                store.claim(made.reference, by=submitter, seconds=60)
        assert store.decided(made.reference) is None
        assert store.decide(made.reference, {**RETURNED, "at": AT}).decision.by == RETURNED["by"]
        with pytest.raises(SameDeciderError, match="does not say who submitted"):
            store.put(checkpoint("run-2", submitted_by=None))
        assert len(store.waiting(limit=10)) == 0


def test_a_store_it_cannot_reach_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(EscalationStoreError, match="cannot open the store"):
        SqliteEscalationStore(tmp_path).waiting()  # a folder, not a file
    unreachable = PostgresEscalationStore(
        f"host={tmp_path} port=1 dbname=x user=x password=hunter2", connect_timeout=1
    )
    with pytest.raises(EscalationStoreError, match="cannot connect") as error:
        unreachable.waiting()
    assert "hunter2" not in str(error.value) and "hunter2" not in repr(unreachable)


# --- by value or by reference -----------------------------------------------------------------


def test_a_large_checkpoint_travels_by_reference(store: EscalationStore) -> None:
    made = checkpoint("run-1")
    size = len(json.dumps(made.to_json(), ensure_ascii=False, separators=(",", ":")).encode())
    small = store.to_parcel(made, max_bytes=size + 100)
    assert small == {"checkpoint": made.to_json()}
    assert store.waiting() == []  # by value: nothing kept
    large = store.to_parcel(made, max_bytes=size // 2)
    assert large == {"reference": made.reference}
    # Either crosses a process as JSON text, and reads back the same checkpoint.
    for parcel in (small, large):
        assert store.from_parcel(json.loads(json.dumps(parcel))) == made
    with pytest.raises(ValueError, match="a parcel is"):
        store.from_parcel({"checkpoint": made.to_json(), "reference": made.reference})


# --- many processes, many replicas ------------------------------------------------------------


def _decide_in_child(
    where: tuple[str, str], references: list[str], reviewer: str, start: Any, out: Any
) -> None:
    """A replica: its own store, deciding every reference as ``reviewer`` once ``start`` is
    set; sends ("won"|"refused", reference, decision's by) for each."""
    store = open_store(where)
    start.wait()
    for reference in references:
        try:
            decided = store.decide(reference, {**RETURNED, "by": reviewer, "at": AT})
        except AlreadyDecidedError as error:
            out.put(("refused", reference, error.decided.decision.by))
        else:
            out.put(("won", reference, decided.decision.by))
    store.close()


def test_replicas_racing_on_every_escalation_keep_one_decision_each(
    where: tuple[str, str],
) -> None:
    with open_store(where) as store:
        made = [checkpoint(f"run-{i}") for i in range(40)]
        references = store.put_many(made)
    context = multiprocessing.get_context("spawn")
    start, out = context.Event(), context.Queue()
    reviewers = [f"reviewer-{i}@example.com" for i in range(4)]
    children = [
        context.Process(target=_decide_in_child, args=(where, references, who, start, out))
        for who in reviewers
    ]
    for child in children:
        child.start()
    start.set()
    results = [out.get(timeout=120) for _ in range(len(reviewers) * len(references))]
    for child in children:
        child.join(timeout=60)
        assert child.exitcode == 0
    with open_store(where) as store:
        for reference in references:
            mine = [r for r in results if r[1] == reference]
            winners = [r for r in mine if r[0] == "won"]
            assert len(winners) == 1, mine
            kept = store.decided(reference)
            assert kept is not None
            # Every refusal names the one decision kept.
            assert {r[2] for r in mine} == {kept.decision.by} == {winners[0][2]}
        assert store.waiting() == []


@pytest.mark.parametrize("bad", ["a\x00b", "\ud800"])
def test_a_text_no_store_can_keep_is_refused_alike_by_every_store(
    store: EscalationStore, bad: str
) -> None:
    made = checkpoint("run-1")
    with pytest.raises(ValueError, match="which a store cannot keep"):
        store.put(made, process=bad)
    assert store.waiting() == []
    store.put(made)
    with pytest.raises(ValueError, match="which a store cannot keep"):
        store.claim(made.reference, by=bad, seconds=60)
    # A decision is refused before the store is asked: the library's rule that a decision is
    # recordable before it is applied (issue 34) names the same text.
    with pytest.raises(ValueError, match="recordable before it is applied: the text at /by"):
        store.decide(made.reference, {**RETURNED, "by": bad, "at": AT})
    with pytest.raises(ValueError, match="which a store cannot keep"):
        store.waiting(step=bad)
    assert store.decided(made.reference) is None
