"""CachingEvaluator: hits, misses, failures never kept, unreadable entries are misses."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import attrs
import pytest
import test_adapters_openai_chat as chat
from hypothesis import given
from hypothesis import strategies as st
from loopback import (
    LoopbackServer,
    Scripted,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
)

from checkprofile import (
    Bundle,
    ChoiceAnswer,
    Failure,
    Limits,
    Material,
    Outcome,
    Reply,
    RubricAnswer,
    Submission,
    YesNoAnswer,
    build_bundle,
    parse_check,
    run_check,
    run_check_sync,
)
from checkprofile.adapters import cache as cache_module
from checkprofile.adapters.cache import (
    CacheStore,
    CachingEvaluator,
    DirectoryStore,
    MemoryStore,
    cache_key,
)
from checkprofile.testing import ScriptedEvaluator
from support import AT

ATTACHED = "Is the report attached?"
WHAT = "What does the summary do?"
HOW = "How many lists are covered?"

CHECK = parse_check(
    [
        {"ask": ATTACHED},
        {"ask": WHAT, "one_of": {"states": "States it.", "hedges": "Hedges."}, "pass": ["states"]},
        {"ask": HOW, "levels": ["None.", "One.", "Both."], "pass": 2},
    ]
)

ANSWERS: dict[str, Any] = {
    ATTACHED: YesNoAnswer(0.95, source="logprobs"),
    WHAT: ChoiceAnswer(
        "states", 0.9, source="logprobs", distribution=(("states", 0.9), ("hedges", 0.1))
    ),
    HOW: RubricAnswer(2, 0.85, source="logprobs", distribution=((0, 0.05), (1, 0.1), (2, 0.85))),
}


def material(output: Any = None, **changes: Any) -> Material:
    base = Material(
        instructions="Check the vendor against the OFAC and EU lists.",
        body="# Vendor onboarding\n",
        run_data={"inputs": {"vendor": "Acme"}, "steps": {"s1": {"note": "searched"}}},
        submission=Submission(output if output is not None else {"cleared": True}, "done"),
    )
    return attrs.evolve(base, **changes)


def run(evaluator: Any, mat: Material | None = None, check: Any = CHECK) -> Outcome:
    return run_check_sync(
        check, mat or material(), evaluator, limits=Limits(), now=AT, max_retry_wait=0.01
    )


def scripted(answers: dict[str, Any] | None = None, model: str = "judge-v1") -> ScriptedEvaluator:
    return ScriptedEvaluator(answers if answers is not None else ANSWERS, model=model)


def bundle(mat: Material | None = None, check: Any = CHECK) -> Bundle:
    return build_bundle(check, mat or material(), state_bytes=Limits().check_state_bytes)


# -- hits and misses -------------------------------------------------------------------------


def test_a_replay_gives_the_same_verdict_without_asking_again() -> None:
    inner = scripted()
    cache = CachingEvaluator(inner, MemoryStore())
    first = run(cache)
    again = run(cache)
    assert len(inner.calls) == 1
    assert again.verdict.to_json() == first.verdict.to_json()
    assert again.verdict.verdict == "pass"
    assert again.answers == first.answers
    assert {answer.source for answer in again.answers} == {"replayed"}
    choice = again.answers[1]
    assert isinstance(choice, ChoiceAnswer)
    assert choice.distribution == (("states", 0.9), ("hedges", 0.1))  # kept for calibration
    assert (cache.hits, cache.misses) == (3, 3)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"submission": Submission({"cleared": False}, "done")}, id="submission"),
        pytest.param({"submission": Submission({"cleared": True}, "done!")}, id="summary"),
        pytest.param({"instructions": "Check the vendor."}, id="instructions"),
        pytest.param({"body": "# Other\n"}, id="body"),
        pytest.param({"run_data": {"inputs": {"vendor": "Acme"}, "steps": {}}}, id="run-data"),
    ],
)
def test_a_different_material_is_a_miss(change: dict[str, Any]) -> None:
    inner = scripted()
    cache = CachingEvaluator(inner, MemoryStore())
    run(cache)
    run(cache, material(**change))
    assert len(inner.calls) == 2


def test_a_different_question_or_model_is_a_miss() -> None:
    store = MemoryStore()
    inner = scripted()
    run(CachingEvaluator(inner, store))
    # A changed threshold: the model sees the same text, but an evaluator may read any field.
    stricter = parse_check([{"ask": ATTACHED, "pass": 0.97}, *CHECK.to_json()[1:]])
    run(CachingEvaluator(inner, store), check=stricter)
    other = scripted(model="judge-v2")
    run(CachingEvaluator(other, store))
    assert (len(inner.calls), len(other.calls)) == (2, 1)


def test_the_key_covers_everything_the_evaluator_is_shown() -> None:
    inner = scripted()
    base = bundle()
    keys = {
        cache_key(inner, base),
        cache_key(inner, base.with_check(CHECK.select([0, 1]))),
        cache_key(inner, bundle(material({"cleared": False}))),
        cache_key(scripted(model="judge-v2"), base),
        cache_key(inner, attrs.evolve(base, truncated=True, dropped_steps=("s0",))),
        cache_key(inner, attrs.evolve(base, dropped_fields=("/x",))),
    }
    assert len(keys) == 6
    assert cache_key(inner, base) == cache_key(scripted(), bundle())  # and nothing else


def test_an_evaluator_names_what_else_shapes_its_requests() -> None:
    class Configured(ScriptedEvaluator):
        def __init__(self, identity: str) -> None:
            super().__init__(ANSWERS, model="judge-v1")
            self.cache_identity = identity

    assert cache_key(Configured("host-a"), bundle()) != cache_key(Configured("host-b"), bundle())


def test_the_order_of_a_choices_names_is_part_of_the_key() -> None:
    # The evaluator is shown the names in the check's order (a chat model reads them as
    # A, B, ...): two checks that differ only in that order ask different questions.
    other = parse_check(
        [
            {"ask": ATTACHED},
            {
                "ask": WHAT,
                "one_of": {"hedges": "Hedges.", "states": "States it."},
                "pass": ["states"],
            },
            {"ask": HOW, "levels": ["None.", "One.", "Both."], "pass": 2},
        ]
    )
    assert other.to_json() == CHECK.to_json()  # equal as JSON objects: only the order differs
    inner = scripted()
    assert cache_key(inner, bundle(check=other)) != cache_key(inner, bundle())
    cache = CachingEvaluator(inner, MemoryStore())
    run(cache)
    run(cache, check=other)
    assert len(inner.calls) == 2  # asked again, not answered from the other order's entry


def test_a_cache_file_past_the_bound_is_a_miss_never_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A file far larger than any entry (sparse: no disk is used) is refused by its size
    # before a byte of it is read, as every file checkprofile reads whole.
    inner = scripted()
    path = DirectoryStore(tmp_path).path(cache_key(inner, bundle()))
    with path.open("wb") as file:
        file.truncate(cache_module._ENTRY_BYTES + 1)
    with caplog.at_level(logging.WARNING, logger="checkprofile.adapters.cache"):
        outcome = run(CachingEvaluator(inner, tmp_path))
    assert outcome.verdict.verdict == "pass" and len(inner.calls) == 1
    assert "cannot be read, treated as a miss" in caplog.text
    assert f"larger than {cache_module._ENTRY_BYTES:,} bytes" in caplog.text


def test_an_inner_failure_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    # The replay answers two questions from the store and asks the inner evaluator the third,
    # which fails: one warning for each attempt that left it unanswered, not one more for the
    # cache's own ask.
    inner = scripted({**ANSWERS, WHAT: Failure("timeout", "slow")})
    cache = CachingEvaluator(inner, MemoryStore())
    run(cache)
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="checkprofile"):
        again = run(cache)
    assert again.attempts == 2
    warned = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(warned) == 2, [record.getMessage() for record in warned]
    assert all("did not answer 1 of" in record.getMessage() for record in warned)


# -- failures are never kept -----------------------------------------------------------------


def test_a_failure_is_asked_again_and_the_answers_beside_it_are_not() -> None:
    inner = scripted({**ANSWERS, WHAT: Failure("timeout", "slow")})
    cache = CachingEvaluator(inner, MemoryStore())
    first = run(cache)
    assert first.verdict.verdict == "error"
    assert inner.asked(WHAT) == 2
    again = run(cache)
    assert again.verdict.verdict == "error"
    # Only the failing question reaches the model again, twice (the core's one re-ask).
    assert (inner.asked(ATTACHED), inner.asked(WHAT), inner.asked(HOW)) == (1, 4, 1)


def test_answers_from_two_attempts_replay_with_no_call() -> None:
    # The first attempt stores two answers under the whole check's key; the re-ask stores the
    # third under the subset's key; the replay finds all three.
    inner = scripted({**ANSWERS, WHAT: [Failure("rate_limited", "429"), ANSWERS[WHAT]]})
    cache = CachingEvaluator(inner, MemoryStore())
    first = run(cache)
    assert (first.verdict.verdict, first.attempts) == ("pass", 2)
    again = run(cache)
    assert (again.verdict.to_json(), again.attempts) == (first.verdict.to_json(), 1)
    assert len(inner.calls) == 2


def test_an_answer_that_does_not_fit_its_question_is_not_kept() -> None:
    inner = scripted({**ANSWERS, ATTACHED: [YesNoAnswer(1.7), YesNoAnswer(0.2)]})
    store = MemoryStore()
    outcome = run(CachingEvaluator(inner, store))
    assert outcome.verdict.verdict == "fail"  # the re-ask's 0.2, never 1.7
    stored = [json.loads(text) for text in store._entries.values()]
    assert [sorted(entry["answers"]) for entry in stored] == [["1", "2"], ["0"]]


def test_a_reply_the_core_rejects_is_not_kept() -> None:
    class Short:
        model = "judge-v1"

        async def answer(self, bundle: Bundle) -> Reply:
            return Reply("judge-v1", [YesNoAnswer(0.99)])  # one answer for three questions

    store = MemoryStore()
    assert run(CachingEvaluator(Short(), store)).verdict.verdict == "error"
    assert len(store) == 0


def test_only_the_answered_questions_of_a_reply_are_kept() -> None:
    inner = scripted({ATTACHED: ANSWERS[ATTACHED]})  # no script for the others
    store = MemoryStore()
    outcome = run(CachingEvaluator(inner, store))
    assert outcome.verdict.verdict == "error"
    assert [json.loads(text)["answers"].keys() for text in store._entries.values()] == [{"0"}]


# -- the directory store ---------------------------------------------------------------------


def test_a_directory_store_keeps_one_file_per_key_and_no_temporary_files(tmp_path: Path) -> None:
    inner = scripted()
    cache = CachingEvaluator(inner, tmp_path / "cache")
    run(cache)
    files = sorted((tmp_path / "cache").iterdir())
    assert [file.name for file in files] == [f"{cache_key(inner, bundle())}.json"]
    entry = json.loads(files[0].read_text("utf-8"))
    assert entry["model"] == "judge-v1"
    assert entry["answers"]["0"] == {"p": 0.95, "source": "logprobs"}
    # A new process (a new wrapper over the same directory) replays it.
    again = run(CachingEvaluator(inner, str(tmp_path / "cache")))
    assert again.verdict.verdict == "pass"
    assert len(inner.calls) == 1


def entry_text(inner: ScriptedEvaluator, **overrides: Any) -> str:
    entry = {
        "format": "checkprofile-cache-2",
        "key": cache_key(inner, bundle()),
        "model": "judge-v1",
        "answers": {"0": {"p": 0.99}, "1": {"name": "states", "confidence": 0.9}},
    }
    entry.update(overrides)
    return json.dumps(entry)


CORRUPT: list[Any] = [
    pytest.param(lambda inner: "", id="empty"),
    pytest.param(lambda inner: '{"format": "checkprofile-cache-2", "ke', id="torn"),
    pytest.param(lambda inner: b"\xff\xfe\x00garbage", id="not-utf-8"),
    pytest.param(lambda inner: "[]", id="not-an-object"),
    pytest.param(lambda inner: "[" * 100_000, id="deeply-nested"),
    pytest.param(lambda inner: entry_text(inner, format="other-cache-9"), id="other-format"),
    pytest.param(lambda inner: entry_text(inner, key="0" * 64), id="misplaced"),
    pytest.param(lambda inner: entry_text(inner, model=""), id="no-model"),
    pytest.param(lambda inner: entry_text(inner, answers={}), id="no-answers"),
    pytest.param(lambda inner: entry_text(inner, answers={"0": {"p": 1.7}}), id="p-above-1"),
    pytest.param(lambda inner: entry_text(inner, answers={"0": {"p": True}}), id="p-a-bool"),
    pytest.param(lambda inner: entry_text(inner, answers={"0": {"p": "0.99"}}), id="p-a-string"),
    pytest.param(lambda inner: entry_text(inner, answers={"0": {}}), id="p-missing"),
    pytest.param(
        lambda inner: entry_text(inner, answers={"1": {"name": "pass", "confidence": 1}}),
        id="unknown-choice",
    ),
    pytest.param(
        lambda inner: entry_text(inner, answers={"2": {"level": 3, "confidence": 1}}),
        id="level-out-of-range",
    ),
    pytest.param(
        lambda inner: entry_text(
            inner, answers={"1": {"name": "states", "confidence": 1, "distribution": "x"}}
        ),
        id="bad-distribution",
    ),
    pytest.param(lambda inner: entry_text(inner, answers={"3": {"p": 0.99}}), id="no-question-3"),
    pytest.param(lambda inner: entry_text(inner, answers={"-0": {"p": 0.99}}), id="odd-index"),
    # ASCII digits only: "\u0660" (ARABIC-INDIC ZERO) passed str.isdigit() and int() read it
    # as question 0, so a poisoned entry answered the question it named in another script.
    pytest.param(
        lambda inner: entry_text(inner, answers={"\u0660": {"p": 0.99}}), id="arabic-indic-0"
    ),
    pytest.param(lambda inner: entry_text(inner, answers={"00": {"p": 0.99}}), id="leading-0"),
]


@pytest.mark.parametrize("corrupt", CORRUPT)
def test_an_unreadable_cache_file_is_a_miss_never_a_pass(
    tmp_path: Path, corrupt: Any, caplog: pytest.LogCaptureFixture
) -> None:
    inner = scripted({**ANSWERS, ATTACHED: YesNoAnswer(0.2)})  # the model says no
    path = DirectoryStore(tmp_path).path(cache_key(inner, bundle()))
    content = corrupt(inner)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="checkprofile.adapters.cache"):
        outcome = run(CachingEvaluator(inner, tmp_path))
    assert outcome.verdict.verdict == "fail"  # asked afresh, whatever the file said
    assert len(inner.calls) == 1
    assert "treated as a miss" in caplog.text
    assert json.loads(path.read_text("utf-8"))["answers"]["0"]["p"] == 0.2  # replaced


def test_a_directory_where_a_file_should_be_is_a_miss(tmp_path: Path) -> None:
    inner = scripted()
    DirectoryStore(tmp_path).path(cache_key(inner, bundle())).mkdir()
    outcome = run(CachingEvaluator(inner, tmp_path))
    assert outcome.verdict.verdict == "pass"
    assert len(inner.calls) == 1


def test_a_store_that_cannot_be_written_costs_the_cache_not_the_answer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class ReadOnly(MemoryStore):
        def put(self, key: str, text: str) -> None:
            raise PermissionError(f"read-only: {key}")

    inner = scripted()
    with caplog.at_level(logging.WARNING, logger="checkprofile.adapters.cache"):
        outcome = run(CachingEvaluator(inner, ReadOnly()))
    assert outcome.verdict.verdict == "pass"
    assert "cannot be written" in caplog.text


@pytest.mark.parametrize("key", ["../escape", "A" * 64, "0" * 63, "0" * 64 + "/x"])
def test_a_directory_store_refuses_a_key_it_did_not_make(tmp_path: Path, key: str) -> None:
    with pytest.raises(ValueError, match="64 lower-case hex digits"):
        DirectoryStore(tmp_path).put(key, "{}")


def test_bad_arguments_are_refused_naming_them() -> None:
    with pytest.raises(TypeError, match="inner must be an Evaluator"):
        CachingEvaluator(object(), MemoryStore())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="store must be a CacheStore"):
        CachingEvaluator(scripted(), {"a": "b"})  # type: ignore[arg-type]
    assert isinstance(MemoryStore(), CacheStore)


# -- concurrent checks -----------------------------------------------------------------------


def test_concurrent_checks_share_one_cache(tmp_path: Path) -> None:
    inner = scripted()
    cache = CachingEvaluator(inner, tmp_path)

    async def host() -> list[Outcome]:
        return await asyncio.gather(
            *(
                run_check(CHECK, material({"n": n % 10}), cache, limits=Limits(), now=AT)
                for n in range(40)
            )
        )

    first = asyncio.run(host())
    assert {outcome.verdict.verdict for outcome in first} == {"pass"}
    asked = len(inner.calls)
    assert 10 <= asked <= 40  # same-key checks in flight at once may each ask
    again = asyncio.run(host())
    assert [o.verdict.to_json() for o in again] == [o.verdict.to_json() for o in first]
    assert len(inner.calls) == asked
    assert len(list(tmp_path.iterdir())) == 10  # one entry per submission, none torn


# -- over the chat fallback on loopback ------------------------------------------------------


def test_a_replay_over_the_chat_fallback_sends_no_request(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.default = chat.by_question(chat.GOOD)
    cache = CachingEvaluator(chat.evaluator(loopback), tmp_path)
    first = run_check_sync(chat.CHECK, chat.material(), cache, limits=Limits(), now=AT)
    assert loopback.count(chat.PATH) == 3
    again = run_check_sync(chat.CHECK, chat.material(), cache, limits=Limits(), now=AT)
    assert loopback.count(chat.PATH) == 3
    assert again.verdict.to_json() == first.verdict.to_json()
    assert again.verdict.model == chat.RESOLVED  # the version that answered, not the alias asked


def test_over_the_chat_fallback_only_the_failed_question_is_asked_again(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    ask = chat.CHECK.asks[2]
    loopback.default = chat.by_question(
        {**chat.GOOD, ask: [chat.chat_error(503, "busy"), chat.GOOD[ask]]}
    )
    cache = CachingEvaluator(chat.evaluator(loopback), tmp_path)
    first = run_check_sync(
        chat.CHECK, chat.material(), cache, limits=Limits(), now=AT, max_retry_wait=0.01
    )
    assert (first.verdict.verdict, first.attempts, loopback.count(chat.PATH)) == ("pass", 2, 4)
    assert len(chat.requests_for(loopback, ask)) == 2
    again = run_check_sync(chat.CHECK, chat.material(), cache, limits=Limits(), now=AT)
    assert again.verdict.to_json() == first.verdict.to_json()
    assert loopback.count(chat.PATH) == 4


def test_over_the_chat_fallback_another_endpoint_is_another_key(
    loopback: LoopbackServer, tmp_path: Path
) -> None:
    loopback.default = chat.by_question(chat.GOOD)
    run_check_sync(
        chat.CHECK,
        chat.material(),
        CachingEvaluator(chat.evaluator(loopback), tmp_path),
        limits=Limits(),
        now=AT,
    )
    with LoopbackServer(default=chat.by_question(chat.GOOD)) as other:
        run_check_sync(
            chat.CHECK,
            chat.material(),
            CachingEvaluator(chat.evaluator(other), tmp_path),
            limits=Limits(),
            now=AT,
        )
        assert other.count(chat.PATH) == 3


def test_a_hanging_endpoint_is_not_remembered(loopback: LoopbackServer, tmp_path: Path) -> None:
    loopback.default = Scripted(json={}, delay=0.5)
    cache = CachingEvaluator(chat.evaluator(loopback, timeout=0.1), tmp_path)
    outcome = run_check_sync(
        chat.CHECK, chat.material(), cache, limits=Limits(), now=AT, max_retry_wait=0.01
    )
    assert outcome.verdict.verdict == "error"
    assert list(tmp_path.iterdir()) == []


def test_a_directory_entry_is_readable_and_writable_by_its_owner_only(tmp_path: Path) -> None:
    store = DirectoryStore(tmp_path)
    store.put("a" * 64, "{}")
    assert store.path("a" * 64).stat().st_mode & 0o777 == 0o600
    assert store.get("a" * 64) == "{}"
    assert store.get("b" * 64) is None


# -- laws ------------------------------------------------------------------------------------

_probabilities = st.floats(min_value=0, max_value=1)


@given(
    p=_probabilities,
    name=st.sampled_from(["states", "hedges"]),
    level=st.integers(min_value=0, max_value=2),
    confidences=st.tuples(_probabilities, _probabilities),
    shares=st.lists(_probabilities, min_size=3, max_size=3),
)
def test_a_replayed_answer_is_the_answer_that_was_given(
    p: float, name: str, level: int, confidences: tuple[float, float], shares: list[float]
) -> None:
    # Any valid answer: distributions sum to 1 with the chosen answer the most probable (the
    # core refuses anything else, and a refused answer is never cached).
    top, *rest = sorted(shares, reverse=True)
    weights = [top + 1.0, *rest]  # the chosen share strictly largest, whatever was drawn
    levels = [weights[0] if i == level else 0.0 for i in range(3)]
    others = iter(weights[1:])
    levels = [value if i == level else next(others) for i, value in enumerate(levels)]
    other = "hedges" if name == "states" else "states"
    pair = [
        (name, weights[0] / (weights[0] + weights[1])),
        (other, weights[1] / (weights[0] + weights[1])),
    ]
    given_answers = [
        YesNoAnswer(p),
        ChoiceAnswer(name, confidences[0], distribution=tuple(pair)),
        RubricAnswer(
            level,
            confidences[1],
            distribution=tuple((i, v / sum(levels)) for i, v in enumerate(levels)),
        ),
    ]
    inner = scripted(dict(zip(CHECK.asks, given_answers, strict=True)))
    cache = CachingEvaluator(inner, MemoryStore())
    first = asyncio.run(cache.answer(bundle()))
    again = asyncio.run(cache.answer(bundle()))
    assert len(inner.calls) == 1
    assert again.model == first.model == "judge-v1"
    assert again.answers == first.answers
    for before, after in zip(first.answers, again.answers, strict=True):
        assert getattr(after, "distribution", None) == getattr(before, "distribution", None)
        assert getattr(after, "source", None) == "replayed"


def test_a_replay_names_every_version_that_gave_the_answers() -> None:
    class Upgraded:
        """Answers the first attempt as v1, and the re-ask as v2."""

        model = "judge-latest"

        def __init__(self) -> None:
            self.calls = 0

        async def answer(self, bundle: Bundle) -> Reply:
            self.calls += 1
            if self.calls == 1:
                return Reply("v1", [ANSWERS[ATTACHED], Failure("timeout"), ANSWERS[HOW]])
            return Reply("v2", [ANSWERS[WHAT]])

    inner = Upgraded()
    cache = CachingEvaluator(inner, MemoryStore())
    first = run(cache)
    again = run(cache)
    assert (first.verdict.model, again.verdict.model) == ("v1, v2", "v1, v2")
    assert inner.calls == 2
