"""The README's API tour, run as written: a new user pasting it gets what it shows."""

from __future__ import annotations

import doctest
from pathlib import Path

import conftest

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_tour_runs_as_documented() -> None:
    before = conftest.VERDICTS_CHECKED[0]
    result = doctest.testfile(
        str(README), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted > 10
    assert result.failed == 0
    # Every verdict of the tour went through the schema check too.
    assert conftest.VERDICTS_CHECKED[0] > before
