"""Behaviour a mutation run found no test for in the core (issue 27): each test here fails on
the change that survived (named in its comment) and passes on the code."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from checkprofile import (
    AnswerError,
    ChoiceAnswer,
    Failure,
    Limits,
    LimitsError,
    Outcome,
    Reply,
    RubricAnswer,
    Verdict,
    VerdictError,
    YesNoAnswer,
    answer_problem,
    combine,
    format_at,
    outcome_for,
    parse_check,
    run_check_sync,
)
from support import AT, material

CHOICE = parse_check(
    [{"ask": "Tone?", "one_of": {"calm": "Calm.", "angry": "Angry."}, "pass": ["calm"]}]
)


# _verdict: a distribution's sum tolerance (0.01 -> 0.02 survived) --------------------------


@pytest.mark.parametrize(
    ("total", "kept"),
    [(1.0, True), (1.009, True), (0.991, True), (1.015, False), (0.985, False), (1.03, False)],
)
def test_a_distribution_that_does_not_sum_to_one_within_a_hundredth_is_refused(
    total: float, kept: bool
) -> None:
    answer = ChoiceAnswer("calm", 0.6, distribution=(("calm", 0.6), ("angry", total - 0.6)))
    problem = answer_problem(CHOICE[0], answer)
    if kept:
        assert problem is None
    else:
        assert problem is not None and "the distribution sums to" in problem


# _run: what an evaluator's failure report keeps ---------------------------------------------


class Reports:
    """Answers every question with ``failure``, on every attempt."""

    model = "m"

    def __init__(self, failure: Any) -> None:
        self.failure = failure

    async def answer(self, bundle: Any) -> Reply:
        return Reply("m-1", [self.failure] * len(bundle.check))


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


# Found by tools/mutation.py --------------------------------------------------------------------


def test_a_rubric_level_out_of_range_names_the_levels_that_exist() -> None:
    check = parse_check([{"ask": "How many?", "levels": ["none", "some", "all"], "pass": 2}])
    problem = answer_problem(check[0], RubricAnswer(3, 0.9))
    assert problem == "a level must be from 0 to 2, got 3"


def test_a_failures_retry_after_is_given_by_keyword_only() -> None:
    with pytest.raises(TypeError):
        Failure("rate_limited", "429", 2.0)  # type: ignore[call-arg]
    assert Failure("rate_limited", "429", retry_after=2.0).retry_after == 2.0


class SaysItIsText(type):
    """A metaclass whose classes say they are no different from any type."""

    def __eq__(cls, other: object) -> bool:
        return True

    def __ne__(cls, other: object) -> bool:
        return False

    __hash__ = type.__hash__


class ModelName(metaclass=SaysItIsText):
    pass


def test_a_model_of_a_type_that_says_it_is_str_is_refused() -> None:
    check = parse_check("Is it right?")
    with pytest.raises(ValueError, match="model must name what answered"):
        combine(check, [YesNoAnswer(0.95)], model=ModelName(), at=AT)  # type: ignore[arg-type]


def _positional(kind: str) -> Any:
    # Each call gives an option by position, as a typed caller cannot (hence the ignores).
    if kind == "yes-no-source":
        return YesNoAnswer(0.9, "native")  # type: ignore[call-arg]
    if kind == "choice-source":
        return ChoiceAnswer("calm", 0.9, "native")  # type: ignore[call-arg]
    if kind == "rubric-source":
        return RubricAnswer(1, 0.9, "native")  # type: ignore[call-arg]
    return RubricAnswer(1, 0.9, None, ((1, 1.0),))  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "kind", ["yes-no-source", "choice-source", "rubric-source", "rubric-distribution"]
)
def test_an_answers_source_and_distribution_are_given_by_keyword_only(kind: str) -> None:
    # Options are keyword-only (the house rule): a positional "native" would be taken for
    # whatever field comes next in some later version.
    with pytest.raises(TypeError):
        _positional(kind)


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


def test_an_outcome_is_built_by_keyword_only() -> None:
    # kw_only=False survived: an Outcome built by position would take a field for the next
    # one in some later version.
    outcome = failure_kept_outcome()
    values = {field.name: getattr(outcome, field.name) for field in attrs.fields(Outcome)}
    assert Outcome(**values) == outcome
    with pytest.raises(TypeError):
        Outcome(*values.values())  # type: ignore[call-arg]


def failure_kept_outcome() -> Outcome:
    check = parse_check("Is it right?")
    return run_check_sync(check, material(), Reports(YesNoAnswer(0.95)), limits=Limits(), now=AT)


@pytest.mark.parametrize(
    ("kind", "made"),
    [
        ("yes-no", lambda source: YesNoAnswer(0.9, source=source)),
        ("choice", lambda source: ChoiceAnswer("calm", 0.9, source=source)),
        ("rubric", lambda source: RubricAnswer(1, 0.9, source=source)),
    ],
)
def test_answers_that_differ_only_in_where_they_came_from_are_equal(
    kind: str, made: Callable[[Any], Any]
) -> None:
    # eq=True survived on the source: an answer read back from a record (which holds no
    # source) must equal the one graded, whichever way the evaluator read it.
    native, fallback, unknown = made("native"), made("fallback"), made(None)
    assert native == fallback == unknown
    assert hash(native) == hash(fallback) == hash(unknown)


@pytest.mark.parametrize(
    "distribution",
    [
        (("calm", 0.6, 0), ("angry", 0.4, 0)),
        (("calm",), ("angry",)),
        ("calm", 0.6),
        ((("calm", 0.6),),),
    ],
    ids=["triples", "singles", "flat", "nested"],
)
def test_a_distribution_of_other_than_pairs_is_named_as_such(distribution: Any) -> None:
    # `or` -> `and` survived: a tuple of other than pairs raised from the unpacking.
    answer = ChoiceAnswer("calm", 0.6, distribution=distribution)
    problem = answer_problem(CHOICE[0], answer)
    assert problem is not None
    assert problem.startswith("a distribution must be (option, probability) pairs, got")


@pytest.mark.parametrize("model", ["", " ", "\u3000\t"])
def test_a_verdict_record_naming_a_blank_model_says_the_model_is_blank(model: str) -> None:
    # `==` -> `is` survived on the pattern: the message fell back to the schema's own words.
    assert refusal_of_record_with("model", model) == (
        f"not a check verdict: at /model: expected a non-blank string, got {json.dumps(model)}"
    )


def refusal_of_record_with(field: str, value: object) -> str:
    """The words refusing a good verdict record whose ``field`` holds ``value``."""
    data = combine(CHOICE, [ChoiceAnswer("calm", 0.95)], model="m-1", at=AT).to_json()
    data[field] = value
    with pytest.raises(VerdictError) as caught:
        Verdict.from_json(data)
    return str(caught.value)


class LimitsImpostor(metaclass=SaysItIsText):
    """A value whose type says it is no different from Limits."""


def test_limits_whose_type_only_claims_to_be_limits_are_refused() -> None:
    # `type(limits) is not Limits` -> `!=` survived: the host's own comparison was trusted.
    with pytest.raises(TypeError, match="limits must be a Limits"):
        run_check_sync(
            parse_check("Is it right?"),
            material(),
            Reports(YesNoAnswer(0.95)),
            limits=LimitsImpostor(),  # type: ignore[arg-type]
        )


# found by a fourth mutation draw (seed 2028) ------------------------------------------------------

KINDS = parse_check(
    [
        {"ask": "Is it right?"},
        {"ask": "Tone?", "one_of": {"calm": "Calm.", "angry": "Angry."}, "pass": ["calm"]},
        {"ask": "How many?", "levels": ["none", "some", "all"], "pass": 2},
    ]
)
LONG_NAMED = type("T" * 100, (), {})


@pytest.mark.parametrize(
    ("index", "needed", "answer", "named"),
    [
        (0, "a yes/no question needs a YesNoAnswer", None, "nothing"),
        (0, "a yes/no question needs a YesNoAnswer", ChoiceAnswer("calm", 0.9), "ChoiceAnswer"),
        (1, "a choice question needs a ChoiceAnswer", YesNoAnswer(0.9), "YesNoAnswer"),
        (1, "a choice question needs a ChoiceAnswer", None, "nothing"),
        (2, "a rubric question needs a RubricAnswer", "some", "str"),
        (2, "a rubric question needs a RubricAnswer", LONG_NAMED(), "T" * 58 + "…"),
    ],
)
def test_an_answer_of_the_wrong_kind_names_the_kind_needed_and_the_type_it_got(
    index: int, needed: str, answer: object, named: str
) -> None:
    # The type's name bounded at 60 characters (-> 59 survived): a message stays one short line
    # whatever the evaluator gave, and says what it was.
    assert answer_problem(KINDS[index], answer) == f"{needed}, got {named}"


def test_outcome_for_takes_its_options_by_keyword_only() -> None:
    # `*` -> `/` survived: a count of attempts given by position was taken as the attempts.
    verdict = combine(parse_check("Is it right?"), [YesNoAnswer(0.95)], model="m-1", at=AT)
    assert outcome_for(verdict=verdict, attempts=2).attempts == 2
    with pytest.raises(TypeError):
        outcome_for(verdict, 2)  # type: ignore[call-arg]


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


def test_limits_equal_to_those_the_check_was_read_with_are_its_limits() -> None:
    # `!=` -> `is not` survived: equal thresholds made apart (two float objects) were called
    # different. Limits read from the same JSON twice are the same limits.
    read, given = (Limits.from_json(json.loads('{"checkPass": 0.85}')) for _ in range(2))
    assert read.check_pass == given.check_pass and read.check_pass is not given.check_pass
    check = parse_check("Is it right?", limits=read)
    outcome = run_check_sync(check, material(), Reports(YesNoAnswer(0.87)), limits=given)
    assert outcome.verdict.verdict == "pass"
    with pytest.raises(LimitsError, match=r"checkPass 0\.9 \(read with 0\.85\)"):
        run_check_sync(check, material(), Reports(YesNoAnswer(0.87)), limits=Limits())


# found by a fifth mutation draw (seed 2029) -------------------------------------------------------


class AnswerImpostor(metaclass=SaysItIsText):
    """An evaluator's answer whose type says it is no different from any answer type."""

    p = confidence = 0.95
    name = "calm"
    level = 2
    distribution = None


@pytest.mark.parametrize(
    ("index", "needed"),
    [
        (0, "a yes/no question needs a YesNoAnswer"),
        (1, "a choice question needs a ChoiceAnswer"),
        (2, "a rubric question needs a RubricAnswer"),
    ],
)
def test_an_answer_whose_type_only_claims_to_be_an_answer_type_is_refused(
    index: int, needed: str
) -> None:
    # `type(answer) is not RubricAnswer` -> `!=` survived: the type's own comparison was
    # trusted, and an object with the right attributes was graded as an answer.
    assert answer_problem(KINDS[index], AnswerImpostor()) == f"{needed}, got AnswerImpostor"


class NameImpostor(metaclass=SaysItIsText):
    """A choice's name that says it is text, and equal to any answer's name."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


def test_a_choice_whose_name_only_claims_to_be_text_is_refused() -> None:
    answer = ChoiceAnswer(NameImpostor(), 0.9)
    problem = answer_problem(KINDS[1], answer)
    assert problem is not None and problem.endswith("is not an answer of one_of (calm, angry)")


class Claims(metaclass=SaysItIsText):
    """A value whose type says it is no different from any type, and which says it equals any
    value: what only a comparison by identity tells apart from the thing it claims to be."""

    reason = "timeout"
    detail = "slow"
    retry_after = None
    exception = None
    model = "m-1"
    answers = (YesNoAnswer(0.95),)
    usage = None

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = object.__hash__


def _run_with(**given: Any) -> Outcome:
    arguments: dict[str, Any] = {
        "check": parse_check("Is it right?"),
        "material": material(),
        "evaluator": Reports(YesNoAnswer(0.95)),
        "limits": Limits(),
        "max_retry_wait": 0.0,
        **given,
    }
    check, bundle, evaluator = (
        arguments.pop("check"),
        arguments.pop("material"),
        arguments.pop("evaluator"),
    )
    return run_check_sync(check, bundle, evaluator, **arguments)


class Counts(Reports):
    """Answers yes, and counts how often it was asked."""

    def __init__(self) -> None:
        super().__init__(YesNoAnswer(0.95))
        self.asked = 0

    async def answer(self, bundle: Any) -> Reply:
        self.asked += 1
        return await super().answer(bundle)


def test_a_verdict_whose_type_only_claims_to_be_a_verdict_is_refused() -> None:
    with pytest.raises(TypeError, match="Verdict"):
        outcome_for(Claims())  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["check", "advisory", "limits"])
def test_an_argument_whose_type_only_claims_to_be_the_right_one_is_refused_before_asking(
    name: str,
) -> None:
    # Compared by `!=`, the type's own comparison said yes: an advisory that is no bool was
    # refused only after the model had been asked (and paid for).
    evaluator = Counts()
    with pytest.raises(TypeError, match=name):
        _run_with(evaluator=evaluator, **{name: Claims()})
    assert evaluator.asked == 0


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
    outcome = _run_with(evaluator=Replies(reply))
    ((_, failure),) = outcome.failures
    assert failure.reason == "malformed"
    assert failure.detail.startswith(detail)


def test_a_failure_whose_reason_and_detail_only_claim_to_be_text_is_unknown_and_shown() -> None:
    kept = failure_kept(Failure(Claims(), Claims()))  # type: ignore[arg-type]
    assert kept.reason == "unknown"
    assert type(kept.detail) is str


class BusyOnce:
    """Says "rate limited, retry after `wait` seconds" once, then answers yes."""

    model = "m"

    def __init__(self, wait: float) -> None:
        self.wait = wait
        self.asked: list[float] = []

    async def answer(self, bundle: Any) -> Reply:
        self.asked.append(time.monotonic())
        if len(self.asked) == 1:
            return Reply("m-1", [Failure("rate_limited", "429", retry_after=self.wait)])
        return Reply("m-1", [YesNoAnswer(0.95)])


def test_the_re_ask_waits_the_servers_hint_within_max_retry_wait() -> None:
    # `seconds > 0` -> `< 0` survived in the pause before the re-ask: a server's "retry after
    # 0.3 s" was asked again at once, to be refused again.
    evaluator = BusyOnce(0.3)
    outcome = _run_with(evaluator=evaluator, max_retry_wait=5.0)
    assert outcome.verdict.verdict == "pass" and outcome.attempts == 2
    first, second = evaluator.asked
    assert second - first >= 0.29


class PairsImpostor(metaclass=SaysItIsText):
    """A distribution (or a pair of one) whose type says it is a tuple: it iterates and has a
    length as a tuple would."""

    def __init__(self, *items: object) -> None:
        self.items = items

    def __iter__(self) -> Any:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> object:
        return self.items[index]


@pytest.mark.parametrize(
    "distribution",
    [
        PairsImpostor(("calm", 0.6), ("angry", 0.4)),
        (PairsImpostor("calm", 0.6), ("angry", 0.4)),
    ],
    ids=["the-distribution", "a-pair"],
)
def test_a_distribution_whose_type_only_claims_to_be_a_tuple_is_refused(
    distribution: Any,
) -> None:
    answer = ChoiceAnswer("calm", 0.6, distribution=distribution)
    problem = answer_problem(CHOICE[0], answer)
    assert problem is not None
    assert problem.startswith("a distribution must be (option, probability) pairs, got")


def test_a_check_whose_type_only_claims_to_be_a_check_is_refused_where_one_is_taken() -> None:
    record = combine(CHOICE, [ChoiceAnswer("calm", 0.95)], model="m-1", at=AT).to_json()
    with pytest.raises(TypeError, match="check must be a Check"):
        Verdict.from_json(record, check=Claims())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="check must be a Check"):
        combine(Claims(), [ChoiceAnswer("calm", 0.95)], model="m-1", at=AT)  # type: ignore[arg-type]


class AskImpostor(metaclass=SaysItIsText):
    """A key that says it is text, equal to any ask, and hashes as the check's ask does."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("Tone?")


def test_answers_keyed_by_what_only_claims_to_be_an_ask_are_refused() -> None:
    with pytest.raises(AnswerError, match="which the check does not ask"):
        combine(CHOICE, {AskImpostor(): ChoiceAnswer("calm", 0.95)}, model="m-1", at=AT)  # type: ignore[dict-item]


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
    outcome = _run_with(evaluator=Replies(reply))
    assert outcome.verdict.verdict == "pass"
    assert outcome.usage is None


# found by a sixth mutation draw (seed 2030) -------------------------------------------------------


def test_a_rubric_level_recorded_as_a_whole_float_is_read_as_its_integer() -> None:
    # `q.kind == "rubric"` -> `<` survived: a level of 2.0 (an integer in JSON) stayed a float,
    # and was written back as 2.0.
    record = combine(
        KINDS,
        [YesNoAnswer(0.95), ChoiceAnswer("calm", 0.9), RubricAnswer(2, 0.9)],
        model="m-1",
        at=AT,
    ).to_json()
    record["questions"][2]["answer"] = 2.0
    read = Verdict.from_json(record)
    level = read.questions[2].answer
    assert level == 2 and type(level) is int
    assert json.dumps(read.to_json()["questions"][2]["answer"]) == "2"
    assert read.questions[1].answer == "calm" and read.questions[0].answer == 0.95


def test_a_check_of_300_questions_answered_in_full_is_read() -> None:
    # `len(reply.answers) != count` -> `is not` survived: equal counts above 256 are two int
    # objects, and every such reply was malformed.
    many = parse_check([{"ask": f"Is part {n} right?"} for n in range(300)])
    outcome = run_check_sync(many, material(), Reports(YesNoAnswer(0.95)), limits=Limits())
    assert outcome.verdict.verdict == "pass"
    assert len(outcome.verdict.questions) == 300


def test_the_library_imports_no_asyncio_until_it_waits() -> None:
    # `if TYPE_CHECKING:` negated survived: asyncio was imported with the library, which a
    # host that never waits (the conformance runner) starts without.
    import os
    import subprocess
    import sys

    code = "import sys, checkprofile, checkprofile._run; print('asyncio' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    assert done.stdout.strip() == "False"


# found by an eighth mutation draw (seed 2032) -----------------------------------------------------


def test_an_outcome_made_from_a_verdict_alone_took_one_attempt() -> None:
    # The default `attempts=1` -> `0` survived.
    verdict = combine(parse_check("Is it right?"), [YesNoAnswer(0.95)], model="m-1", at=AT)
    assert outcome_for(verdict).attempts == 1


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
    quick, slow = (_run_with(evaluator=Slow(wait)).calls[0].seconds for wait in (0.0, 0.3))
    assert 0 <= quick < slow
    assert slow - quick >= 0.29


# found by hunting in the usual modules (seed 4002) ----------------------------------------------


@pytest.mark.parametrize("at", ["2026-11-02 09:00", "2026-11-02T09:00:00+00:00", " "])
def test_a_verdict_record_whose_time_is_no_time_says_so_not_that_it_is_blank(at: str) -> None:
    # `and` -> `or` survived: every pattern a record breaks was named as a blank text, though
    # the time's pattern is another one.
    assert refusal_of_record_with("at", at) == (
        "not a check verdict: at /at: expected an RFC 3339 time in UTC ending in Z,"
        f" got {json.dumps(at)}"
    )


class _Offset(dt.tzinfo):
    """A tzinfo of one's own, whose offset is ``offset`` (a timedelta, or anything else)."""

    def __init__(self, offset: object) -> None:
        self.offset = offset

    def utcoffset(self, when: dt.datetime | None) -> Any:
        return self.offset

    def dst(self, when: dt.datetime | None) -> None:
        return None

    def tzname(self, when: dt.datetime | None) -> str:
        return "own"


@pytest.mark.parametrize(
    "offset",
    [dt.timedelta(hours=24), dt.timedelta(hours=-25), "+02:00"],
    ids=["a-day", "over-a-day-west", "a-text"],
)
def test_a_time_whose_own_tzinfo_gives_no_offset_python_takes_is_refused_as_no_time(
    offset: object,
) -> None:
    # Python refuses an offset of a day or more with a ValueError, and one of another type
    # with a TypeError: both are the host's time that is no time, never Python's words.
    at = dt.datetime(2026, 11, 2, 9, tzinfo=_Offset(offset))
    with pytest.raises(ValueError, match=r"^at must be a time in UTC's years 1 to 9999, got "):
        format_at(at)
