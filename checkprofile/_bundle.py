"""What one evaluator call is shown: the material of one submission, made into a bundle.

:func:`build_bundle` takes a :class:`Material` (the step's instructions and body, the run
data as the host holds it, the submission) and makes the :class:`Bundle` the evaluator sees:
the texts as given, the submission as shown (:mod:`._submission`) and the run data cut to the
check's state budget (:mod:`._cut`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from ._check import Check
from ._cut import cut_run_data
from ._json_text import canonical_json, json_problem, utf8_size
from ._shown import show
from ._submission import MAX_REASON, Evidence, Submission, evidence_items, shown_submission
from .errors import LimitsError, MaterialError

__all__ = [
    "MAX_REASON",
    "Bundle",
    "Evidence",
    "Material",
    "Submission",
    "build_bundle",
    "canonical_json",
    "evidence_items",
    "shown_submission",
]


@attrs.frozen
class Material:
    """Everything the evaluator may see about one submission.

    ``run_data`` is the run's data as the host holds it (``inputs``, ``steps`` keyed by step
    id, ...); it is read when the bundle is built and never changed. ``show_route`` (default
    ``False``) shows the evaluator the submission's route, ``next`` and ``reason``: the
    profile does not list them among what it sees, so a host opts in (say, for a question
    about the route the agent chose).
    """

    instructions: str
    body: str
    run_data: Mapping[str, Any]
    submission: Submission
    show_route: bool = attrs.field(default=False, kw_only=True)


@attrs.frozen
class Bundle:
    """What one evaluator call is shown. Build it with :func:`build_bundle`.

    ``run_data_json`` is the exact run data text shown (within the budget) and ``run_data``
    the same as a fresh dict. ``dropped_steps`` are the step ids left out, oldest first;
    ``dropped_fields`` are JSON Pointers of other run data removed (input fields, then
    top-level keys), in the order removed. The evaluator is told both.
    """

    check: Check
    instructions: str
    body: str
    submission: Submission
    submission_json: str
    run_data_json: str
    truncated: bool = False
    dropped_steps: tuple[str, ...] = ()
    dropped_fields: tuple[str, ...] = ()

    @property
    def run_data(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.run_data_json)
        return data

    @property
    def run_data_bytes(self) -> int:
        return utf8_size(self.run_data_json)

    def with_check(self, check: Check) -> Bundle:
        """The same material, asking ``check`` (used to re-ask the unanswered questions)."""
        return attrs.evolve(self, check=check)


def build_bundle(check: Check, material: Material, *, state_bytes: int) -> Bundle:
    """The evaluator's view of ``material`` for ``check``, run data cut to ``state_bytes``.

    Raises :class:`~checkprofile.errors.MaterialError` for run data or a submission that
    cannot be shown as JSON, naming where.

    It does not check that the run data has core-2's shape, on purpose: it needs a map (with
    ``inputs`` and ``steps`` maps keyed by strings when they are there) and shows anything
    else as it is, a key the profile does not name cut before any input. What the evaluator
    is shown is the host's run data, and the profile's truncation rules say what happens to
    every part of it (the conformance corpus pins them, extra top-level keys and records
    without ``history`` included). Run data read from outside is checked at the edge:
    :func:`~checkprofile.check_run_data` (the command line does so for ``--run-data``).
    """
    if type(state_bytes) is not int or state_bytes < 2:
        raise LimitsError(
            f"state_bytes must be an integer of at least 2 (bytes), got {show(state_bytes)}"
        )
    if type(check) is not Check:
        raise TypeError(f"build_bundle takes a Check (see parse_check), got {show(check)}")
    if not issubclass(type(material), Material):
        raise TypeError(f"material must be a Material, got {show(material)}")
    if type(material.submission) is not Submission:
        raise TypeError(
            f"material.submission must be a Submission, got {show(material.submission)}"
        )
    if type(material.show_route) is not bool:
        raise TypeError(
            f"material.show_route must be true or false (a bool), got {show(material.show_route)}"
        )
    texts = {}
    for name in ("instructions", "body"):
        value = getattr(material, name)
        if not issubclass(type(value), str):
            raise MaterialError(f"material.{name} must be a string, got {show(value)}")
        texts[name] = str.__str__(value)
    try:
        submission_json = canonical_json(
            shown_submission(material.submission, show_route=material.show_route)
        )
    except (TypeError, ValueError, RecursionError) as error:
        raise MaterialError(
            f"the submission cannot be shown as JSON: {json_problem(error)}"
        ) from None
    view = cut_run_data(material.run_data, state_bytes)
    return Bundle(
        check=check,
        instructions=texts["instructions"],
        body=texts["body"],
        submission=material.submission,
        submission_json=submission_json,
        run_data_json=view.text,
        truncated=bool(view.dropped_steps or view.dropped_fields),
        dropped_steps=view.dropped_steps,
        dropped_fields=view.dropped_fields,
    )
