"""Asking an evaluator and reading its reply strictly (`_evaluator.py`): a reply that cannot be
read makes each question malformed, and a failure it reports is kept made plain."""

from __future__ import annotations

from typing import Any

import pytest

from checkprofile import Failure, Limits, Reply, YesNoAnswer, parse_check, run_check_sync
from support import AT, Claims, Counts, Reports, SaysItIsText, material, run_with

# Found by mutation runs, each under its draw's seed (docs/mutation-results.md) --------------------


# found by a mutation draw (seed 27): what an evaluator's failure report keeps
def failure_kept(failure: Any) -> Failure:
    check = parse_check("Is it right?")
    outcome = run_check_sync(
        check, material(), Reports(failure), limits=Limits(), now=AT, max_retry_wait=0.0
    )
    assert outcome.verdict.verdict == "error"
    ((_, kept),) = outcome.failures
    return kept


@pytest.mark.parametrize("wait", [0, 0.0, 1.5])
def test_a_retry_after_of_zero_seconds_is_kept_as_retry_now(wait: float) -> None:
    # `>= 0` -> `> 0` survived: a server's "retry at once" (0 s) was dropped as no hint.
    kept = failure_kept(Failure("rate_limited", "429", retry_after=wait))
    assert kept.retry_after == wait
    assert kept.retry_after is not None


@pytest.mark.parametrize("wait", [-1.0, float("nan"), float("inf"), "2", True])
def test_a_retry_after_that_is_not_seconds_is_none(wait: Any) -> None:
    assert failure_kept(Failure("rate_limited", "429", retry_after=wait)).retry_after is None


@pytest.mark.parametrize("reason", ["tired", "Timeout", "", 7, None, ["timeout"]])
def test_a_failure_reason_outside_failure_reason_is_unknown(reason: Any) -> None:
    # Kept as given survived: a reason no host can act on must be "unknown".
    kept = failure_kept(Failure(reason, "what the evaluator said"))
    assert kept.reason == "unknown"
    assert kept.detail == "what the evaluator said"


def test_a_known_failure_reason_is_kept() -> None:
    assert failure_kept(Failure("tokens_exceeded", "too long")).reason == "tokens_exceeded"


@pytest.mark.parametrize(("length", "cut"), [(999, False), (1000, False), (1001, True)])
def test_a_failure_detail_of_up_to_1000_characters_is_kept_whole(length: int, cut: bool) -> None:
    # A detail of exactly 1000 characters cut (`>` -> `>=`) survived.
    detail = "d" * length
    kept = failure_kept(Failure("server_error", detail))
    if cut:
        assert kept.detail == "d" * 999 + "…"
    else:
        assert kept.detail == detail


# found by a mutation draw (seed 27): a failure's reason compared by `==`, not by identity
class ReasonImpostor(metaclass=SaysItIsText):
    """Hashes and compares as "timeout", and its type says it is str."""

    def __hash__(self) -> int:
        return hash("timeout")

    def __eq__(self, other: object) -> bool:
        return True


def test_a_failure_reason_that_only_claims_to_be_text_is_unknown() -> None:
    # `type(why) is str` -> `==` survived: the reason's own metaclass would say yes.
    kept = failure_kept(Failure(ReasonImpostor(), "x"))  # type: ignore[arg-type]
    assert type(kept.reason) is str  # its own __eq__ would say it equals anything
    assert kept.reason == "unknown"


# found by a mutation draw (seed 2028): `[...] * count` -> `+ count` for a reply that cannot be read
class Replies:
    """Gives the same reply, whatever it is asked."""

    model = "m"

    def __init__(self, reply: object) -> None:
        self.reply = reply

    async def answer(self, bundle: Any) -> Any:
        return self.reply


TWO = parse_check([{"ask": "Is it right?"}, {"ask": "Is it complete?"}])


@pytest.mark.parametrize(
    ("reply", "detail"),
    [
        ("yes", 'the evaluator returned "yes", not a Reply'),
        (Reply("m-1", [YesNoAnswer(0.95)]), "1 answers for 2 questions"),
        (Reply(" ", [YesNoAnswer(0.95)] * 2), 'the reply names no model: " "'),
        (
            Reply("m" * 1001, [YesNoAnswer(0.95)] * 2),
            "the reply's model name is 1001 characters long, more than 1000: \"mmm",
        ),
    ],
    ids=["no-reply", "too-few-answers", "blank-model", "model-name-too-long"],
)
def test_a_reply_that_cannot_be_read_makes_every_question_malformed(
    reply: object, detail: str
) -> None:
    # `[...] * count` -> `+ count` survived for the model name over 1000 characters: each
    # question asked gets its own malformed failure, saying why, and the verdict is an error.
    outcome = run_check_sync(TWO, material(), Replies(reply), limits=Limits(), max_retry_wait=0.0)
    assert outcome.verdict.verdict == "error"
    assert len(outcome.failures) == 2
    for _, failure in outcome.failures:
        assert failure.reason == "malformed"
        assert failure.detail.startswith(detail)


def test_a_reply_naming_its_model_in_1000_characters_is_read() -> None:
    outcome = run_check_sync(
        TWO, material(), Replies(Reply("m" * 1000, [YesNoAnswer(0.95)] * 2)), limits=Limits()
    )
    assert outcome.verdict.verdict == "pass"


# found by a mutation draw (seed 2029): a reply's, an entry's and a usage's types compared by `!=`
@pytest.mark.parametrize(
    ("reply", "detail"),
    [
        (Claims(), "the evaluator returned"),
        (Reply(Claims(), [YesNoAnswer(0.95)]), "the reply names no model"),  # type: ignore[arg-type]
        (Reply("m-1", [Claims()]), "a yes/no question needs a YesNoAnswer, got Claims"),  # type: ignore[list-item]
    ],
    ids=["reply", "model", "failure"],
)
def test_a_reply_or_entry_whose_type_only_claims_to_be_the_right_one_is_malformed(
    reply: object, detail: str
) -> None:
    # An entry claiming to be a Failure is not taken as the "timeout" it says it is.
    outcome = run_with(evaluator=Replies(reply))
    ((_, failure),) = outcome.failures
    assert failure.reason == "malformed"
    assert failure.detail.startswith(detail)


def test_a_failure_whose_reason_and_detail_only_claim_to_be_text_is_unknown_and_shown() -> None:
    kept = failure_kept(Failure(Claims(), Claims()))  # type: ignore[arg-type]
    assert kept.reason == "unknown"
    assert type(kept.detail) is str


@pytest.mark.parametrize("given", ["bundle", "quiet"])
def test_ask_evaluator_refuses_a_bundle_or_quiet_that_only_claims_its_type(given: str) -> None:
    import asyncio

    from checkprofile import ask_evaluator, build_bundle

    evaluator = Counts()
    bundle = build_bundle(parse_check("Is it right?"), material(), state_bytes=65536)
    arguments: dict[str, Any] = {"bundle": bundle, given: Claims()}
    with pytest.raises(TypeError, match=given):
        asyncio.run(ask_evaluator(evaluator, arguments.pop("bundle"), **arguments))
    assert evaluator.asked == 0


def test_a_replys_usage_that_only_claims_to_be_usage_is_no_usage() -> None:
    # Usage is kept only as the type that checked its figures, judged by identity.
    reply = Reply("m-1", [YesNoAnswer(0.95)], usage=Claims())  # type: ignore[arg-type]
    outcome = run_with(evaluator=Replies(reply))
    assert outcome.verdict.verdict == "pass"
    assert outcome.usage is None


# found by a mutation draw (seed 2030): the count of answers compared by `is not`
def test_a_check_of_300_questions_answered_in_full_is_read() -> None:
    # `len(reply.answers) != count` -> `is not` survived: equal counts above 256 are two int
    # objects, and every such reply was malformed.
    many = parse_check([{"ask": f"Is part {n} right?"} for n in range(300)])
    outcome = run_check_sync(many, material(), Reports(YesNoAnswer(0.95)), limits=Limits())
    assert outcome.verdict.verdict == "pass"
    assert len(outcome.verdict.questions) == 300


# found by a mutation draw (seed 2032): a call's seconds as a ratio, not a difference
class Slow(Reports):
    """Answers yes after `wait` seconds."""

    def __init__(self, wait: float) -> None:
        super().__init__(YesNoAnswer(0.95))
        self.wait = wait

    async def answer(self, bundle: Any) -> Reply:
        import asyncio

        await asyncio.sleep(self.wait)
        return await super().answer(bundle)


def test_a_calls_seconds_are_the_time_it_took() -> None:
    # `perf_counter() - start` -> `/ start` survived: the ratio is close to 1 for any call,
    # inside the bound the usage tests set. A call 0.3 s slower takes 0.3 s longer.
    quick, slow = (run_with(evaluator=Slow(wait)).calls[0].seconds for wait in (0.0, 0.3))
    assert 0 <= quick < slow
    assert slow - quick >= 0.29
