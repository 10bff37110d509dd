"""Test-session wiring shared by every test module.

Every verdict a test produces goes through ``combine`` or ``error_verdict``. Both are wrapped
here, in every namespace that holds them, before any test module is imported, so each verdict
made anywhere in the suite is validated against the shipped verdict schema and must survive a
JSON round trip unchanged. A test cannot forget to check.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import hypothesis

import checkprofile
import checkprofile._run
import checkprofile._verdict
from support import assert_verdict_valid

# CI runs the same examples every time (a landing must not hang on a lucky draw); elsewhere
# each run explores new ones. `thorough` is for hunting: HYPOTHESIS_PROFILE=thorough pytest.
hypothesis.settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True)
hypothesis.settings.register_profile("dev", max_examples=200, deadline=None)
hypothesis.settings.register_profile("thorough", max_examples=3000, deadline=None)
# CI's second, short run: a fresh seed it prints (`.ci/run`), so what a random draw finds
# can be run again with `--hypothesis-seed`. `mutation`: the mutation run's (tools/mutation.py),
# the same few examples for every mutant, so a mutant is judged in seconds and alike each time.
hypothesis.settings.register_profile("fresh", max_examples=60, deadline=None)
hypothesis.settings.register_profile("mutation", max_examples=10, deadline=None, derandomize=True)
hypothesis.settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
)

VERDICTS_CHECKED = [0]


def _validating(make: Callable[..., checkprofile.Verdict]) -> Callable[..., checkprofile.Verdict]:
    @functools.wraps(make)
    def wrapper(*args: Any, **kwargs: Any) -> checkprofile.Verdict:
        verdict = make(*args, **kwargs)
        assert_verdict_valid(verdict)
        VERDICTS_CHECKED[0] += 1
        return verdict

    return wrapper


for _name in ("combine", "error_verdict"):
    _wrapped = _validating(getattr(checkprofile._verdict, _name))
    for _module in (checkprofile._verdict, checkprofile._run, checkprofile):
        setattr(_module, _name, _wrapped)


# Modules whose real host .ci/run builds in the background while the suite runs (pip compiles
# llama.cpp for about 9 minutes): they run last, when the build is done, so the suite does not
# stop to wait for it on the way (tests/llamahost.py's wait_for_build waits if it must).
_BUILT_WHILE_RUNNING = ("test_qualify_hosts_llama.py",)


def pytest_collection_modifyitems(items: list[Any]) -> None:
    items.sort(key=lambda item: item.path.name in _BUILT_WHILE_RUNNING)  # stable: else as found
