"""checkprofile's pytest plugin: the ``check_cassette`` fixture and ``--checkprofile-record``.

Installing checkprofile registers this module with pytest (the ``pytest11`` entry point named
``checkprofile``; ``pytest -p no:checkprofile`` turns it off). pytest then loads it into every
session in that environment, whether or not a test uses it, so it imports nothing but pytest,
the standard library and the package's ``__init__`` (which only lists its names and loads each
on first use): the rest of checkprofile (with jsonschema, asyncio, cattrs) is imported when a
test first asks for a cassette. A vendored copy registers it by its own name
(``-p myserver._vendor.checkprofile._pytest_plugin``).

What it does is in :mod:`checkprofile.testing._plugin` and :mod:`checkprofile.testing.cassette`;
here are only the hooks, which keep what they see for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

    from .testing._plugin import Cassettes


# Before any test module imports it: assert_outcome's failures are pytest's own comparisons.
pytest.register_assert_rewrite(f"{__package__}.testing.assertions")

# node id -> phase ("setup", "call", "teardown") -> outcome ("passed", "failed", "skipped")
_REPORTS = pytest.StashKey[dict[str, dict[str, str]]]()
# Test modules some of whose tests were deselected (-k, -m, --deselect, --lf, ...).
_DESELECTED = pytest.StashKey[set[Path]]()
_CASSETTES: pytest.StashKey[Cassettes] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("checkprofile", "checkprofile: recorded model answers")
    group.addoption(
        "--checkprofile-record",
        action="store_true",
        default=False,
        dest="checkprofile_record",
        help=(
            "check_cassette asks its live evaluator for every bundle its cassette does not"
            " hold (or holds with a failure) and writes the cassette; without this option a"
            " cassette only replays, and a bundle it does not hold fails the test"
        ),
    )


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_REPORTS] = {}
    config.stash[_DESELECTED] = set()
    config.pluginmanager.register(_Watcher(config), "checkprofile-watcher")


class _Watcher:
    """Keeps what the cassettes read at the end of the session: each test's outcome in each
    phase, and which test modules were not selected in full. Cheap enough for every test of
    every session."""

    def __init__(self, config: pytest.Config) -> None:
        self.reports = config.stash[_REPORTS]
        self.deselected = config.stash[_DESELECTED]

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected.update(item.path for item in items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports.setdefault(report.nodeid, {})[report.when] = report.outcome


@pytest.fixture
def check_cassette(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``check_cassette(name, *, live=None)``: an evaluator that replays the answers recorded
    in ``cassettes/<test module>/<name>.json`` beside the test module. A bundle the cassette
    does not hold fails the test, with what changed; nothing is ever asked of a model. With
    ``pytest --checkprofile-record`` it asks ``live`` (an evaluator, or a function of no
    arguments that makes one, called only then) for what the cassette lacks, and writes it."""
    from .testing._plugin import Cassettes

    config = request.config
    if _CASSETTES not in config.stash:
        config.stash[_CASSETTES] = Cassettes(
            record=bool(config.getoption("checkprofile_record")), root=config.rootpath
        )
    reports = config.stash[_REPORTS]
    return config.stash[_CASSETTES].opener(request, reports)


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if _CASSETTES in config.stash:
        reports = config.stash[_REPORTS]
        config.stash[_CASSETTES].finish(session.items, reports, _partial(config))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lines = config.stash[_CASSETTES].report if _CASSETTES in config.stash else []
    if lines:
        terminalreporter.section("checkprofile cassettes")
        for line in lines:
            terminalreporter.write_line(line)


def _partial(config: pytest.Config) -> set[Path]:
    """Test modules not run in full: some tests deselected, or named one by one (``::``)."""
    partial: set[Path] = config.stash[_DESELECTED].copy()
    here = config.invocation_params.dir
    for arg in config.args:
        path, separator, _ = str(arg).partition("::")
        if separator:
            partial.add((here / path).resolve())
    return partial
