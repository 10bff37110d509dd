"""The cases a battery runs on: real submissions with their material, and what people said.

A case is a :class:`QualifyCase`: the material of one submission (instructions, body, run data,
the submission), whether people ``accepted`` it (``None`` when unknown), and, where the host
marked it, the smaller run data budget ``cut_bytes`` at which its answer should not change.

:func:`read_cases` reads a folder of case files (``*.json``, ``*.yaml``, ``*.yml``, by name),
each::

    {"submission": {...core-2's submission...},
     "run_data": {...core-2's run data...},      optional (default: no inputs, no steps)
     "run": "…",                                  optional: the run id, to join the trail
     "accepted": true|false,                      optional: what people decided
     "cut_bytes": N}                              optional: the cut probe's budget (>= 2)

An audit trail holds hashes of what was checked, never the submissions, so it cannot give the
material itself; what it gives is what people decided: with ``trail=``, a case's ``accepted``
comes from the decisions recorded on its submission key (its ``run``, the step, its
submission), the latest decision counting.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from .._bundle import Material, Submission
from .._files import read_bounded
from .._shown import show
from .._time import at_order
from ..errors import CheckprofileError, MaterialError

__all__ = ["CasesError", "QualifyCase", "read_cases"]

_CASE_KEYS: Final = frozenset(("submission", "run_data", "run", "accepted", "cut_bytes"))
_CASE_BYTES: Final = 16 * 1024 * 1024
_SUFFIXES: Final = (".json", ".yaml", ".yml")


class CasesError(CheckprofileError, ValueError):
    """A case file or folder that cannot be read as cases: the message names the file."""


@attrs.frozen(kw_only=True)
class QualifyCase:
    """One case of the battery (see the module docstring)."""

    name: str
    material: Material
    accepted: bool | None = None
    cut_bytes: int | None = None
    run: str | None = None

    def __attrs_post_init__(self) -> None:
        if type(self.material) is not Material:
            raise TypeError(f"material must be a Material, got {show(self.material)}")
        if self.accepted is not None and type(self.accepted) is not bool:
            raise TypeError(f"accepted must be true, false or None, got {show(self.accepted)}")
        if self.cut_bytes is not None and (type(self.cut_bytes) is not int or self.cut_bytes < 2):
            raise ValueError(f"cut_bytes must be a whole number >= 2, got {show(self.cut_bytes)}")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _load(path: Path) -> Any:
    data = read_bounded(path, limit=_CASE_BYTES).decode("utf-8")
    if path.suffix == ".json":
        return json.loads(data, parse_constant=_no_constant)
    from .._yaml import load_yaml

    return load_yaml(data).data


def read_cases(
    directory: str | os.PathLike[str],
    *,
    material: Callable[[Submission, Mapping[str, Any]], Material],
    step: str,
    trail: Iterable[object] | None = None,
) -> list[QualifyCase]:
    """The cases in ``directory`` (see the module docstring). ``material(submission,
    run_data)`` makes each case's material (the CLI gives the step's instructions and body);
    ``step`` is the step id that joins a case with the decisions of ``trail`` (audit records,
    as :func:`~checkprofile.human.iter_records` gives them). Raises :class:`CasesError` naming
    the file for one that is not a case, and for a folder with no case files."""
    folder = Path(directory)
    if not folder.is_dir():
        raise CasesError(f"{folder}: not a folder of cases")
    files = sorted(p for p in folder.iterdir() if p.suffix in _SUFFIXES and p.is_file())
    if not files:
        raise CasesError(f"{folder}: no case files (*.json, *.yaml) in this folder")
    decided = _decisions(trail, step) if trail is not None else {}
    cases = []
    for path in files:
        try:
            data = _load(path)
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise CasesError(f"{path}: not a case file: {error}") from None
        cases.append(_case(path, data, material, step, decided))
    return cases


def _case(
    path: Path,
    data: object,
    material: Callable[[Submission, Mapping[str, Any]], Material],
    step: str,
    decided: Mapping[str, bool],
) -> QualifyCase:
    if type(data) is not dict or "submission" not in data:
        raise CasesError(f"{path}: a case is a map with a submission, got {show(data)}")
    unknown = sorted(set(data) - _CASE_KEYS, key=str)
    if unknown:
        raise CasesError(f"{path}: a case has no key {show(unknown[0])}")
    try:
        submission = Submission.from_json(data["submission"])
    except (MaterialError, TypeError, ValueError) as error:
        raise CasesError(f"{path}: submission: {error}") from None
    run_data = data.get("run_data", {"inputs": {}, "steps": {}})
    if type(run_data) is not dict:
        raise CasesError(f"{path}: run_data must be a map, got {show(run_data)}")
    run = data.get("run")
    if run is not None and (type(run) is not str or not run.strip()):
        raise CasesError(f"{path}: run must be a run id, got {show(run)}")
    accepted = data.get("accepted")
    if run is not None and accepted is None:
        from ..human._audit._records import submission_key

        accepted = decided.get(submission_key(run, step, submission))
    try:
        return QualifyCase(
            name=path.name,
            material=material(submission, run_data),
            accepted=accepted,
            cut_bytes=data.get("cut_bytes"),
            run=run,
        )
    except (TypeError, ValueError, MaterialError) as error:
        raise CasesError(f"{path}: {error}") from None


def _decisions(trail: Iterable[object], step: str) -> dict[str, bool]:
    """Whether people accepted each submission key of ``step``: the latest decision's word."""
    from ..human._audit._records import DecisionRecord

    latest: dict[str, tuple[str, bool]] = {}
    for record in trail:
        if isinstance(record, DecisionRecord) and record.step == step:
            order = at_order(record.at)
            if record.key not in latest or latest[record.key][0] <= order:
                latest[record.key] = (order, record.accepted)
    return {key: accepted for key, (_, accepted) in latest.items()}


def known(cases: Sequence[QualifyCase]) -> tuple[int, int]:
    """How many ``cases`` people accepted, and how many they refused."""
    accepted = sum(case.accepted is True for case in cases)
    return accepted, sum(case.accepted is False for case in cases)
