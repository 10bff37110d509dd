"""The cassettes of one pytest session: what the ``check_cassette`` fixture hands out.

The plugin module that pytest loads (``checkprofile._pytest_plugin``, which imports nothing
heavy, so that every pytest session can load it) holds the hooks and the fixture, and comes
here the first time a test asks for a cassette. It passes in what the hooks saw: each test's
reports, and the test modules of which something was deselected.

A cassette file is ``cassettes/<test module>/<name>.json`` beside the test module. When
recording, a cassette is written after each test that used it, so an interrupted session
keeps what it paid for; at the end of the session, recordings that no test used are removed
from the cassettes of every test module that ran in full and passed, and kept (and listed)
otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Final

import attrs
import pytest

from .._shown import show
from .cassette import Cassette, CassetteEvaluator, Live

__all__ = ["Cassettes", "cassette_path"]

#: A cassette's name: a file name, without the directory or ``.json``.
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")

#: Where each test's reports are kept by the plugin: node id -> phase -> outcome.
Reports = Mapping[str, Mapping[str, str]]


def cassette_path(module: Path, name: str) -> Path:
    """The file of the cassette ``name`` of the tests in ``module``."""
    if not isinstance(name, str) or not _NAME.match(name) or name.endswith(".json"):
        raise ValueError(
            "a cassette's name is a file name of letters, digits, '.', '_' and '-', without"
            f" .json, got {show(name)}"
        )
    return module.parent / "cassettes" / module.stem / f"{name}.json"


@attrs.define
class _Opened:
    cassette: Cassette
    module: Path
    nodeids: set[str] = attrs.field(factory=set)


class Cassettes:
    """The cassettes a session has opened, by file."""

    def __init__(self, *, record: bool, root: Path) -> None:
        self.record = record
        self.root = root
        self.opened: dict[Path, _Opened] = {}
        self.removed: dict[Path, tuple[str, ...]] = {}
        #: What the session did with its cassettes, one line each (made by :meth:`finish`).
        self.report: list[str] = []

    def opener(
        self, request: pytest.FixtureRequest, reports: Reports
    ) -> Callable[..., CassetteEvaluator]:
        """The ``check_cassette`` function of one test."""
        module = request.node.path
        nodeid = request.node.nodeid
        evaluators: list[CassetteEvaluator] = []

        def check_cassette(name: str, *, live: Live | None = None) -> CassetteEvaluator:
            """An evaluator for the cassette ``name``: it replays what was recorded, and with
            ``pytest --checkprofile-record`` asks ``live`` (an evaluator, or a function of no
            arguments that makes one) for what the cassette lacks."""
            path = cassette_path(module, name)
            opened = self.opened.get(path)
            if opened is None:
                cassette = Cassette(path, record=self.record, label=name)
                opened = self.opened[path] = _Opened(cassette, module)
            opened.nodeids.add(nodeid)
            evaluator = opened.cassette.evaluator(live)
            evaluators.append(evaluator)
            return evaluator

        def after() -> None:
            for evaluator in evaluators:
                if self.record:
                    evaluator.cassette.save()
            missed = [message for evaluator in evaluators for message in evaluator.misses]
            # A miss fails the test where it happens; if the code under test caught that, the
            # test must still not pass.
            if missed and reports.get(nodeid, {}).get("call") == "passed":
                pytest.fail(missed[0], pytrace=False)

        request.addfinalizer(after)
        return check_cassette

    def finish(self, items: Iterable[pytest.Item], reports: Reports, partial: set[Path]) -> None:
        """At the end of the session: when recording, remove the recordings no test used from
        the cassettes of each test module that ran in full and passed, and write them; then
        say what was done (:attr:`report`)."""
        whole = _whole_modules(items, reports, partial)
        for path, opened in self.opened.items():
            if self.record and opened.module in whole:
                self.removed[path] = opened.cassette.prune()
                opened.cassette.save()
        self.report = self._summary(whole)

    def _summary(self, whole: set[Path]) -> list[str]:
        lines = []
        for path, opened in sorted(self.opened.items()):
            cassette = opened.cassette
            where = _relative(path, self.root)
            unused = cassette.unused()
            failed = cassette.failed()
            if self.record:
                parts = [
                    f"{len(cassette.asked)} asked",
                    f"{len(cassette.used - cassette.asked)} replayed",
                ]
                removed = self.removed.get(path, ())
                if removed:
                    parts.append(f"{len(removed)} unused removed")
                if unused:
                    parts.append(
                        f"{len(unused)} unused kept (not every test of the module ran and passed)"
                    )
                if failed:
                    parts.append(
                        f"{len(failed)} with a question not answered (they are asked again when"
                        " next recorded)"
                    )
                lines.append(f"{where}: {', '.join(parts)}")
            elif unused and opened.module in whole:
                count = len(unused)
                lines.append(
                    f"{where}: {count} recording{'s' * (count != 1)} no test used"
                    " (pytest --checkprofile-record removes them)"
                )
        return lines


def _whole_modules(items: Iterable[pytest.Item], reports: Reports, partial: set[Path]) -> set[Path]:
    """The test modules every test of which was selected, ran, and passed."""
    passed: dict[Path, bool] = {}
    for item in items:
        phases = reports.get(item.nodeid, {})
        ok = all(phases.get(when) == "passed" for when in ("setup", "call", "teardown"))
        passed[item.path] = passed.get(item.path, True) and ok
    return {module for module, ok in passed.items() if ok and module not in partial}


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
