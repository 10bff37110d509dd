"""Evaluators with one known fault each, and the cases they are qualified on.

Every evaluator reads the truth of a case from its submission (``output.quality``: ``good``
or ``bad``), as a model that knows the work would; each fault bends that in one way only.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from checkprofile import (
    Bundle,
    ChoiceAnswer,
    Material,
    Reply,
    Submission,
    YesNoAnswer,
    parse_check,
)
from checkprofile._check import ChoiceQuestion, YesNoQuestion
from checkprofile._verdict import Answer
from checkprofile.qualify import INJECTIONS, QualifyCase

CHECK = parse_check(
    [
        {"ask": "The report is correct and complete.", "pass": 0.8, "fail": 0.3},
        {
            "ask": "How does the report state its purpose?",
            "one_of": {"specific": "A specific purpose.", "vague": "Vague.", "missing": "None."},
            "pass": ["specific"],
            "unsure": ["vague"],
        },
    ]
)


def cases(count: int = 40, *, cut: bool = True) -> list[QualifyCase]:
    """``count`` cases, alternately good (accepted) and bad (refused), each with run data
    that a 300-byte budget cuts."""
    made = []
    for number in range(count):
        good = number % 2 == 0
        submission = Submission(
            {"report": f"report {number}", "quality": "good" if good else "bad"},
            summary=f"Report {number}.",
        )
        run_data = {
            "inputs": {"traveller": f"traveller {number}"},
            "steps": {"gather": {"output": {"receipts": ["r" * 40] * 12}, "history": []}},
        }
        made.append(
            QualifyCase(
                name=f"case-{number}",
                material=Material("Assemble the report.", "", run_data, submission),
                accepted=good,
                cut_bytes=300 if cut else None,
            )
        )
    return made


Judge = Callable[[Bundle], bool]


def truth(bundle: Bundle) -> bool:
    return '"quality":"good"' in bundle.submission_json


class Fake:
    """An evaluator that answers each question from ``good(bundle)``; the keyword options
    bend one kind of answer."""

    def __init__(
        self,
        name: str,
        *,
        good: Judge = truth,
        choice: Callable[[ChoiceQuestion, bool], Answer] | None = None,
        form: Callable[[bool], Answer] | None = None,
        yes_no: Callable[[bool], Answer] | None = None,
    ) -> None:
        self.name = name
        self.good = good
        self._choice = choice
        self._form = form
        self._yes_no = yes_no
        self.bundles: list[Bundle] = []

    @property
    def model(self) -> str:
        return self.name

    async def answer(self, bundle: Bundle) -> Reply:
        self.bundles.append(bundle)
        good = self.good(bundle)
        answers: list[Answer] = []
        for question in bundle.check:
            if isinstance(question, YesNoQuestion):
                made = self._yes_no(good) if self._yes_no else YesNoAnswer(0.95 if good else 0.05)
            elif isinstance(question, ChoiceQuestion) and set(question.names) == {"yes", "no"}:
                made = (
                    self._form(good) if self._form else ChoiceAnswer("yes" if good else "no", 0.95)
                )
            else:
                assert isinstance(question, ChoiceQuestion)
                made = (
                    self._choice(question, good)
                    if self._choice
                    else ChoiceAnswer("specific" if good else "missing", 0.9)
                )
            answers.append(made)
        return Reply(f"{self.name}-2026", answers)


def well_behaved() -> Fake:
    return Fake("well-behaved")


def order_biased() -> Fake:
    """Picks the option listed first, whatever the work."""
    return Fake("order-biased", choice=lambda q, good: ChoiceAnswer(q.names[0], 0.9))


def injection_follower() -> Fake:
    """Takes a claim of quality in the submission at its word."""
    return Fake(
        "injection-follower",
        good=lambda b: truth(b) or any(claim in b.submission_json for claim in INJECTIONS),
    )


def coin_flip(seed: int = 7) -> Fake:
    """Half the time it answers from the work; half the time at random."""
    rng = random.Random(seed)

    def noisy(good: bool) -> bool:
        return good if rng.random() < 0.5 else rng.random() < 0.5

    return Fake(
        "coin-flip",
        yes_no=lambda good: YesNoAnswer(0.95 if noisy(good) else 0.05),
        choice=lambda q, good: ChoiceAnswer("specific" if noisy(good) else "missing", 0.9),
        form=lambda good: ChoiceAnswer("yes" if noisy(good) else "no", 0.95),
    )


def form_disagrees() -> Fake:
    """Its two-way choice says the opposite of its yes/no answer."""
    return Fake("form-disagrees", form=lambda good: ChoiceAnswer("no" if good else "yes", 0.95))


def constant() -> Fake:
    """The same answers whatever it is shown (as a random tiny model does)."""
    return Fake(
        "constant",
        good=lambda b: True,
        yes_no=lambda good: YesNoAnswer(0.527),
        choice=lambda q, good: ChoiceAnswer("missing", 0.6),
        form=lambda good: ChoiceAnswer("yes", 0.527),
    )


def cut_sensitive() -> Fake:
    """Judges the work bad whenever the run data was cut."""
    return Fake("cut-sensitive", good=lambda b: truth(b) and not b.truncated)
