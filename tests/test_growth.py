"""Growth tests: nothing costs more than linearly in the size of its input.

Each test measures the same work at sizes ``n`` and ``4n`` in the same run (CPU time, best of
several, setup excluded) and asserts a ratio under 8 in one of three rounds: linear work is
about 4 times the cost, quadratic 16 times in every round, so the bound tells them apart with
room for a busy machine. The sizes are
small enough to keep the suite fast and large enough that a quadratic path shows (each was one
in the issue: 200k run data keys took 220 s).
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from typing import Any

import pytest

import checkprofile
from checkprofile import (
    ChoiceAnswer,
    Limits,
    Material,
    Submission,
    YesNoAnswer,
    build_bundle,
    combine,
    issue_lines,
    parse_check,
    run_data_problems,
    validate_check,
)
from checkprofile._convert import plain
from checkprofile._json_read import load_json
from checkprofile._shown import show
from checkprofile.cli._common import DataFile
from checkprofile.human import receipt_for
from checkprofile.testing import ScriptedEvaluator

LINEAR = 8.0


def cost(work: Callable[[], object], repeat: int = 3) -> float:
    """The least CPU time of ``repeat`` runs, with the cyclic garbage collector off: its passes
    grow with every object alive in the test session, not with the work measured."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            start = time.process_time()
            work()
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return max(best, 1e-4)


def assert_linear(
    prepare: Callable[[int], Callable[[], object]], n: int, *, rounds: int = 3
) -> None:
    """The ratio of ``4n``'s cost to ``n``'s under :data:`LINEAR` in one of ``rounds`` rounds:
    a small size takes a few milliseconds, and a machine busy elsewhere (CI compiles a host
    beside the suite) can stretch one measurement past the bound; a quadratic path costs 16
    times in every round."""
    small, large = prepare(n), prepare(4 * n)
    small()  # warm caches (schemas, validators) before measuring
    ratios = []
    for _ in range(rounds):
        ratios.append(cost(large) / cost(small))
        if ratios[-1] < LINEAR:
            return
    shown = ", ".join(f"{ratio:.1f}" for ratio in ratios)
    raise AssertionError(f"4 times the input cost {min(ratios):.1f} times as much ({shown})")


def _material(run_data: dict[str, Any]) -> Material:
    return Material("Check it.", "# Body\n", run_data, Submission({"done": True}))


CHECK = parse_check("Is it done?")


def test_dropping_top_level_run_data_keys_is_linear() -> None:
    def prepare(n: int) -> Callable[[], object]:
        run = {f"key{i:07d}": "x" * 10 for i in range(n)}
        material = _material({**run, "inputs": {}, "steps": {}})
        return lambda: build_bundle(CHECK, material, state_bytes=100)

    assert_linear(prepare, 5_000)


def test_dropping_input_fields_is_linear() -> None:
    def prepare(n: int) -> Callable[[], object]:
        material = _material({"inputs": {f"f{i:07d}": i for i in range(n)}, "steps": {}})
        return lambda: build_bundle(CHECK, material, state_bytes=100)

    assert_linear(prepare, 5_000)


def test_cutting_steps_is_linear() -> None:
    def prepare(n: int) -> Callable[[], object]:
        steps = {
            f"s{i:07d}": {"at": f"2026-10-{1 + i % 28:02d}T09:00:00Z", "history": [], "n": i}
            for i in range(n)
        }
        material = _material({"inputs": {}, "steps": steps})
        return lambda: build_bundle(CHECK, material, state_bytes=2_000)

    assert_linear(prepare, 5_000)


def test_a_choice_of_many_names_is_checked_in_linear_time() -> None:
    def prepare(n: int) -> Callable[[], object]:
        key = [
            {
                "ask": "Which?",
                "one_of": {f"name{i}": "A name." for i in range(n)},
                "pass": [f"other{i}" for i in range(n)],
            }
        ]
        return lambda: validate_check(key)

    assert_linear(prepare, 500)


def test_many_questions_are_checked_and_combined_in_linear_time() -> None:
    def prepare(n: int) -> Callable[[], object]:
        key = [{"ask": f"Question {i}?", "pass": 0.5} for i in range(n)]
        check = parse_check(key)
        answers = {f"Question {i}?": YesNoAnswer(0.1) for i in range(n)}

        def work() -> object:
            validate_check(key)
            verdict = combine(check, answers, model="m", at="2026-10-06T09:04:20Z")
            return issue_lines(verdict)

        return work

    assert_linear(prepare, 200)


def test_run_data_with_many_unknown_keys_is_checked_in_linear_time() -> None:
    def prepare(n: int) -> Callable[[], object]:
        steps = {f"s{i}": {"history": [], f"odd{i}": 1} for i in range(n)}
        return lambda: run_data_problems({"inputs": {}, "steps": steps})

    assert_linear(prepare, 1_000)


def test_locating_many_problems_in_a_json_file_is_linear() -> None:
    def prepare(n: int) -> Callable[[], object]:
        data = {"inputs": {}, "steps": {f"s{i}": {"history": [], "odd": 1} for i in range(n)}}
        text = json.dumps(data, indent=1)
        file = DataFile("run.json", load_json(text), text)
        problems = run_data_problems(file.data)
        assert len(problems) == n
        return lambda: file.problems(problems)

    assert_linear(prepare, 1_000)


def test_reading_json_strictly_is_linear() -> None:
    """Judged against ``json.loads`` on the same texts: building many objects is itself more
    than linear on a machine with small caches (plain ``json.loads`` measures 4 to 16 times for
    8 times the keys), so the bound is on what the strict reader adds: its share of the cost
    must not grow with the input. The four readings are interleaved (a busy moment then touches
    both sides), each kept as the best of five, and a linear reader gets three tries, since
    two CI runs each found one reading of a millisecond slowed by half. The reader measures
    0.9 to 1.0; a quadratic duplicate-key check measured 4.3 to 5.6."""

    def text(n: int) -> str:
        return json.dumps({f"k{i}": [i, {"a": "x" * 20}] for i in range(n)})

    small, large = text(5_000), text(40_000)
    readers: dict[str, Callable[[str], object]] = {"strict": load_json, "plain": json.loads}
    load_json(small)
    shares = []
    for _ in range(3):
        best: dict[tuple[str, str], float] = {}
        gc.collect()
        gc.disable()
        try:
            for _ in range(5):
                for name, read in readers.items():
                    for size, each in (("small", small), ("large", large)):
                        start = time.process_time()
                        read(each)
                        spent = max(time.process_time() - start, 1e-4)
                        best[name, size] = min(best.get((name, size), spent), spent)
        finally:
            gc.enable()
        strict = best["strict", "large"] / best["strict", "small"]
        plain_growth = best["plain", "large"] / best["plain", "small"]
        shares.append(strict / plain_growth)
        if shares[-1] < 2.5:
            return
    pytest.fail(f"8 times the input cost the strict reader, against json.loads, {shares} times")


def test_making_values_plain_is_linear() -> None:
    def prepare(n: int) -> Callable[[], object]:
        value = {f"k{i}": [i, {"a": "x", "b": [1.5, None, True]}] for i in range(n)}
        return lambda: plain(value)

    assert_linear(prepare, 10_000)


def test_a_receipt_of_many_questions_renders_in_linear_time() -> None:
    def prepare(n: int) -> Callable[[], object]:
        key: list[dict[str, Any]] = [
            {"ask": f"Which {i}?", "one_of": {"a": "A.", "b": "B."}, "pass": ["a"]}
            for i in range(n)
        ]
        check = parse_check(key)
        script = {f"Which {i}?": ChoiceAnswer("b", 0.9) for i in range(n)}
        outcome = checkprofile.run_check_sync(
            check,
            _material({}),
            ScriptedEvaluator(script),
            limits=Limits(),
            now="2026-10-06T09:04:20Z",
        )
        receipt = receipt_for(outcome, run_id="r", step_id="s")
        return receipt.render_text

    assert_linear(prepare, 300)


@pytest.mark.parametrize("kind", ["text", "int"])
def test_a_message_costs_the_same_whatever_the_size_of_its_value(kind: str) -> None:
    # show() looks only at the head of a text, and describes a long int by its size.
    def prepare(n: int) -> Callable[[], object]:
        value: object = "x" * n if kind == "text" else 7**n
        return lambda: [show(value) for _ in range(2_000)]

    small, large = prepare(10_000), prepare(1_000_000)
    small()
    assert cost(large) / cost(small) < 4
