"""Cassettes: a real model's answers, recorded once and replayed by tests without a key.

A cassette is a JSON file of entries, one for each bundle an evaluator was shown, keyed by
exactly what it was shown: the :func:`~checkprofile.adapters.cache.cache_key` of the bundle,
which covers the questions in full, the instructions, the body, the submission's and the run
data's JSON texts, and what was left out of the run data. Beside the key each entry keeps, for
the people who review it, the questions with what the model answered to each (or why it did
not), the model version that answered, and the material it was shown. On load, every entry's key
must be the key of what it holds, so an entry edited after it was recorded is refused, never
replayed.

:class:`CassetteEvaluator` replays: a bundle whose key the cassette holds is answered as
recorded (answers with ``source="replayed"``, failures as the same failures, under the recorded
model version); a bundle it does not hold is never sent anywhere -- the test fails, with the
questions asked and a diff against the nearest recording. When recording, a bundle the
cassette does not hold, or holds with a failure in it, is asked of the live evaluator, and the
reply is kept as the core reads it (:func:`~checkprofile.ask_evaluator`): answers that fit, and
every failure as a failure, so a failure can never come back as an answer.

The pytest plugin (``check_cassette``) is the usual way in; this module works without it.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, NoReturn, cast, get_args

import attrs

from .._bundle import Bundle, Submission, canonical_json, evidence_items
from .._check import Check
from .._convert import is_finite
from .._evaluator import Evaluator, Reply, ask_evaluator
from .._files import read_bounded
from .._json_read import JsonFaultError, line_column, load_json
from .._shown import bare, error_text, show
from .._validate import parse_check
from .._verdict import Answer, Failure, Source, answer_problem
from ..adapters.cache import answer_from_json, answer_to_json, cache_key, write_atomically
from ..errors import CheckError, CheckprofileError, FailureReason, MaterialError

__all__ = ["CASSETTE_FORMAT", "Cassette", "CassetteError", "CassetteEvaluator", "Live"]

#: Names the layout of a cassette file and the recipe of its keys. A change to either changes
#: it, so an old cassette is refused with a clear message rather than misread.
CASSETTE_FORMAT: Final = "checkprofile-cassette-2"

_ABOUT: Final = (
    "Answers recorded by checkprofile's check_cassette fixture, one entry for each bundle the"
    " evaluator was shown, keyed by exactly what it was shown. Tests replay them; pytest"
    " --checkprofile-record asks the live evaluator for what is missing."
)

#: An evaluator, or a function of no arguments that makes one (called only when recording).
Live = Evaluator | Callable[[], Evaluator]

_KEY: Final = re.compile(r"[0-9a-f]{64}\Z")
_REASONS: Final = frozenset(get_args(FailureReason))
_SOURCES: Final = frozenset(get_args(Source))
_ANSWER_KEYS: Final = frozenset({"p", "name", "level", "confidence", "distribution", "source"})
_FAILURE_KEYS: Final = frozenset({"reason", "detail", "retry_after"})
_ENTRY_KEYS: Final = ("key", "model", "configured", "questions", "shown")
_SHOWN_KEYS: Final = frozenset({"instructions", "body", "submission", "run_data", "left_out"})
# The pieces of what an evaluator is shown, in the order a miss names them.
_PIECES: Final = ("questions", "instructions", "body", "submission", "run data", "left out")
# A miss shows at most this many lines of diff for each piece that differs.
_DIFF_LINES: Final = 40
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class CassetteError(CheckprofileError, ValueError):
    """A cassette file that cannot be used: it is unreadable or not a cassette (the message
    names the file and the place in it), or it cannot be written."""


class _KeyedByWhatWasShown:
    """The evaluator a cassette key is made for. A cassette's key is the cache key of the
    bundle asked of this one, so it depends on the bundle alone -- never on the live
    evaluator, which a replay does not have."""

    cache_identity: Final = CASSETTE_FORMAT
    model: Final = "recorded"

    async def answer(self, bundle: Bundle) -> Reply:
        raise NotImplementedError("a cassette key's evaluator answers nothing")


_KEYED: Final = _KeyedByWhatWasShown()


def bundle_key(bundle: Bundle) -> str:
    """The key of ``bundle`` in a cassette (64 lower-case hex digits)."""
    return cache_key(_KEYED, bundle)


@attrs.frozen
class Entry:
    """One recording: what ``bundle_key`` names, the ``model`` version that answered (``None``
    when the reply named none, as when the evaluator raised), the model the live evaluator
    was ``configured`` with, the ``records`` of the questions asked (each question in the
    check's full form with its ``answer`` or ``failure``, as the file holds them), the
    ``results`` a replay gives for them, and what the evaluator was ``shown``."""

    key: str
    model: str | None
    configured: str
    records: tuple[dict[str, Any], ...]
    results: tuple[Answer | Failure, ...]
    shown: dict[str, Any]

    @classmethod
    def of(
        cls,
        key: str,
        bundle: Bundle,
        model: str | None,
        configured: str,
        entries: Sequence[Answer | Failure],
    ) -> Entry:
        """The recording of ``entries``, what an evaluator answered to ``bundle``."""
        records = []
        results: list[Answer | Failure] = []
        asked = zip(bundle.check, bundle.check.to_json(), entries, strict=True)
        for question, shown, entry in asked:
            if isinstance(entry, Failure):
                failure: dict[str, Any] = {"reason": entry.reason, "detail": entry.detail}
                if entry.retry_after is not None:
                    failure["retry_after"] = entry.retry_after
                records.append({**shown, "failure": failure})
                results.append(entry)
            else:
                stored = answer_to_json(entry)
                records.append({**shown, "answer": stored})
                # As a replay will give it (source="replayed"): a test sees the same either way.
                results.append(answer_from_json(question, stored))
        return cls(key, model, configured, tuple(records), tuple(results), shown_material(bundle))

    @property
    def questions(self) -> list[dict[str, Any]]:
        """The questions asked, in the check's full form."""
        return [
            {k: v for k, v in record.items() if k not in ("answer", "failure")}
            for record in self.records
        ]

    @property
    def complete(self) -> bool:
        """Whether every question was answered."""
        return not any(isinstance(result, Failure) for result in self.results)

    def reply(self) -> Reply:
        """The reply as the evaluator gave it, read strictly: the recorded version (or the
        configured model, when the reply named none) and each answer or failure."""
        return Reply(self.model or self.configured, self.results)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "model": self.model,
            "configured": self.configured,
            "questions": list(self.records),
            "shown": self.shown,
        }


def shown_material(bundle: Bundle) -> dict[str, Any]:
    """What ``bundle`` shows an evaluator, for people: texts as lists of lines, the submission
    and run data as JSON values, and what was left out of the run data (when anything was)."""
    shown: dict[str, Any] = {
        "instructions": bundle.instructions.split("\n"),
        "body": bundle.body.split("\n"),
        "submission": json.loads(bundle.submission_json),
        "run_data": json.loads(bundle.run_data_json),
    }
    if bundle.truncated:
        shown["left_out"] = {
            "steps": list(bundle.dropped_steps),
            "fields": list(bundle.dropped_fields),
        }
    return shown


class Cassette:
    """The recordings of one cassette file at ``path`` (read when made; a missing file holds
    none).

    With ``record``, :meth:`evaluator` asks a live evaluator for whatever the file lacks and
    :meth:`save` writes the file when it changed. ``label`` names the cassette in messages
    (default: the file's name without ``.json``). ``used`` holds the keys answered from the
    cassette or recorded into it since it was made; ``asked`` the keys recorded now.
    Raises :class:`CassetteError` for a file that is not a cassette this version reads.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, record: bool = False, label: str | None = None
    ) -> None:
        if not isinstance(record, bool):
            raise TypeError(f"record must be true or false (a bool), got {show(record)}")
        self.path = Path(path)
        self.record = record
        self.label = label if label is not None else self.path.name.removesuffix(".json")
        self.used: set[str] = set()
        self.asked: set[str] = set()
        self._entries = _read(self.path)
        self._saved = {key: entry.to_json() for key, entry in self._entries.items()}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys of the recordings, sorted (the file's order)."""
        return tuple(sorted(self._entries))

    def entry(self, key: str) -> Entry | None:
        """The recording under ``key``, if there is one."""
        return self._entries.get(key)

    def unused(self) -> tuple[str, ...]:
        """The keys of recordings that nothing has used since the cassette was read."""
        return tuple(key for key in self.keys if key not in self.used)

    def failed(self) -> tuple[str, ...]:
        """The keys of recordings in which some question was not answered."""
        return tuple(key for key in self.keys if not self._entries[key].complete)

    def evaluator(self, live: Live | None = None) -> CassetteEvaluator:
        """An evaluator answering from this cassette; when recording, ``live`` (an evaluator,
        or a function of no arguments that makes one) answers what the cassette lacks. The
        function is called here, and only when recording: a replay never needs a key."""
        if not self.record:
            return CassetteEvaluator(self, None)
        if live is None:
            raise TypeError(
                f"the cassette {show(self.label)} is being recorded, and recording asks a live"
                " evaluator: give one, e.g. check_cassette(name, live=lambda: MyEvaluator(...))"
            )
        evaluator = live
        if not isinstance(live, Evaluator):
            if not callable(live):
                raise TypeError(
                    "live must be an evaluator or a function of no arguments that makes one,"
                    f" got {show(live)}"
                )
            evaluator = live()
            if not isinstance(evaluator, Evaluator):
                raise TypeError(
                    f"live() must return an evaluator (model and answer), got {show(evaluator)}"
                )
        assert isinstance(evaluator, Evaluator)
        return CassetteEvaluator(self, evaluator)

    def keep(self, entry: Entry) -> None:
        """Record ``entry``, replacing any recording under its key."""
        self._entries[entry.key] = entry
        self.used.add(entry.key)
        self.asked.add(entry.key)

    def prune(self) -> tuple[str, ...]:
        """Remove the recordings nothing has used (:meth:`unused`); returns their keys."""
        gone = self.unused()
        for key in gone:
            del self._entries[key]
        return gone

    def text(self) -> str:
        """The file's text for the recordings held now: entries sorted by key, keys in a fixed
        order, two-space indents. The same recordings always give the same bytes, so an entry
        that was used and not asked again is written back exactly as it was read."""
        document = {
            "format": CASSETTE_FORMAT,
            "about": _ABOUT,
            "entries": [self._entries[key].to_json() for key in self.keys],
        }
        text = json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        # A lone surrogate (half of a UTF-16 pair) stays escaped, as canonical_json writes it:
        # the file is always valid UTF-8.
        return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)

    def changed(self) -> bool:
        """Whether the recordings differ from those in the file when it was read."""
        now = {key: entry.to_json() for key, entry in self._entries.items()}
        return now != self._saved

    def save(self) -> bool:
        """Write the file if the recordings changed (atomically: a reader sees the old file or
        the new one). Returns whether it wrote. Raises :class:`CassetteError` if it cannot."""
        if not self.changed():
            return False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self.path, self.text())
        except OSError as error:
            raise CassetteError(
                f"{_named(self.path)}: cannot write the cassette: {error_text(error, named=False)}"
            ) from None
        self._saved = {key: entry.to_json() for key, entry in self._entries.items()}
        return True

    def miss(self, bundle: Bundle) -> str:
        """Why ``bundle`` has no recording: the questions asked, and how the nearest recording
        differs from what was shown, piece by piece, as unified diffs."""
        asks = ", ".join(show(ask, limit=80) for ask in bundle.check.asks)
        lines = [
            f"the cassette {show(self.label)} has no recording of what the evaluator was shown",
            f"  cassette: {_named(self.path)}",
            f"  asked: {asks}",
        ]
        shown = _pieces(bundle.check.to_json(), shown_material(bundle))
        nearest = self._nearest(shown)
        if nearest is None:
            held = "does not exist" if not self.path.exists() else "holds no recordings"
            lines.append(f"  the cassette {held}")
        else:
            entry, differing = nearest
            recorded = _pieces(entry.questions, entry.shown)
            lines.append(
                f"  the nearest recording (key {entry.key[:12]}) differs in: {', '.join(differing)}"
            )
            for piece in differing:
                lines.extend(_diff(piece, recorded[piece], shown[piece]))
        lines.append(
            "Nothing was asked: a replay never calls a model. To record what is shown now, run"
            " pytest with --checkprofile-record (it asks the live evaluator and rewrites the"
            " cassette)."
        )
        return "\n".join(lines)

    def _nearest(self, shown: Mapping[str, str]) -> tuple[Entry, list[str]] | None:
        best: tuple[tuple[int, float, str], Entry, list[str]] | None = None
        for key in self.keys:
            entry = self._entries[key]
            recorded = _pieces(entry.questions, entry.shown)
            differing = [piece for piece in _PIECES if recorded[piece] != shown[piece]]
            likeness = sum(
                difflib.SequenceMatcher(None, recorded[piece], shown[piece]).quick_ratio()
                for piece in differing
            )
            rank = (len(differing), -likeness, key)
            if best is None or rank < best[0]:
                best = (rank, entry, differing)
        return None if best is None else (best[1], best[2])


class CassetteEvaluator:
    """An :class:`~checkprofile.Evaluator` that answers from a :class:`Cassette`.

    Made by :meth:`Cassette.evaluator`. A recorded bundle is answered as recorded. Anything
    else, when replaying, fails the running test (``pytest.fail``: an exception that no
    ``except Exception`` catches, so it cannot be turned into an error verdict that a test
    then accepts); when recording, it is asked of the live evaluator and kept.

    ``model`` is the model the live evaluator was configured with (when recording) or was
    configured with when the last answer it gave was recorded (when replaying).
    """

    def __init__(self, cassette: Cassette, live: Evaluator | None) -> None:
        self.cassette = cassette
        self.live = live
        self.misses: list[str] = []
        self._configured: str | None = None

    @property
    def model(self) -> str:
        if self.live is not None:
            return self.live.model
        return self._configured or f"cassette:{self.cassette.label}"

    async def answer(self, bundle: Bundle) -> Reply:
        key = bundle_key(bundle)
        entry = self.cassette.entry(key)
        # When recording, a recording with a failure in it is asked again: a timeout on the
        # day it was made is not what the model answers.
        if entry is not None and (self.live is None or entry.complete):
            self.cassette.used.add(key)
            self._configured = entry.configured
            return entry.reply()
        if self.live is None:
            message = self.cassette.miss(bundle)
            self.misses.append(message)
            _fail(message)
        model, results = await ask_evaluator(self.live, bundle)
        entry = Entry.of(key, bundle, model, self.live.model, results)
        self.cassette.keep(entry)
        return entry.reply()


def _fail(message: str) -> NoReturn:
    # pytest's own failure: a BaseException, so run_check lets it through, and reported with
    # the message alone. Imported here: the rest of this module works without pytest.
    import pytest

    pytest.fail(message, pytrace=False)


# --- reading a cassette file ---------------------------------------------------------------------


def _named(path: Path) -> str:
    """``path`` for a message: as it is, or its head when it is longer than any path a
    person reads (a message stays bounded whatever path it quotes)."""
    text = str(path)
    return text if len(text) <= _PATH_SHOWN else bare(text, _PATH_SHOWN)


_PATH_SHOWN: Final = 1000


def _read(path: Path) -> dict[str, Entry]:
    try:
        text = read_bounded(path).decode("utf-8")  # bounded, as every file checkprofile reads
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        problem = error_text(error, named=False)
        raise CassetteError(f"{_named(path)}: cannot read the cassette: {problem}") from None
    try:
        data = load_json(text)
    except json.JSONDecodeError as error:
        where = f"{_named(path)}:{error.lineno}:{error.colno}"
        raise CassetteError(f"{where}: not JSON: {error.msg}") from None
    except JsonFaultError as error:
        line, column = line_column(text, [error.fault.index])[error.fault.index]
        refused = error.fault.worded(
            key="the key {} appears twice in one object",
            constant="{} is not a JSON number",
            integer="an integer of {} digits is too long to read",
        )
        raise CassetteError(f"{_named(path)}:{line}:{column}: not a cassette: {refused}") from None
    except RecursionError:
        raise CassetteError(f"{_named(path)}: not a cassette: nested too deeply") from None
    reader = _Reader(path)
    return reader.document(data)


@attrs.define
class _Reader:
    path: Path

    def fail(self, where: Sequence[str | int], message: str) -> NoReturn:
        place = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in where)
        raise CassetteError(f"{_named(self.path)}: {place.lstrip('.') or 'the file'}: {message}")

    def document(self, data: object) -> dict[str, Entry]:
        if not isinstance(data, dict):
            self.fail((), f"a cassette is a JSON object, got {show(data)}")
        if data.get("format") != CASSETTE_FORMAT:
            self.fail(
                ("format",),
                f"expected {show(CASSETTE_FORMAT)}, got {show(data.get('format'))}: a cassette"
                " this version of checkprofile does not read (record it again)",
            )
        self.known(data, (), {"format", "about", "entries"})
        entries = data.get("entries")
        if not isinstance(entries, list):
            self.fail(("entries",), f"expected a list of entries, got {show(entries)}")
        found: dict[str, Entry] = {}
        for index, item in enumerate(entries):
            entry = self.entry(item, ("entries", index))
            if entry.key in found:
                self.fail(("entries", index, "key"), f"the key {entry.key} appears twice")
            found[entry.key] = entry
        return found

    def known(
        self, data: Mapping[str, Any], where: tuple[str | int, ...], keys: Iterable[str]
    ) -> None:
        unknown = sorted(set(data) - set(keys))
        if unknown:
            self.fail((*where, unknown[0]), "unknown key")

    def entry(self, item: object, where: tuple[str | int, ...]) -> Entry:
        if not isinstance(item, dict):
            self.fail(where, f"an entry is a JSON object, got {show(item)}")
        self.known(item, where, _ENTRY_KEYS)
        for name in _ENTRY_KEYS:
            if name not in item:
                self.fail(where, f"the entry has no {show(name)}")
        key = item["key"]
        if not isinstance(key, str) or not _KEY.match(key):
            self.fail((*where, "key"), f"a key is 64 lower-case hex digits, got {show(key)}")
        model = item["model"]
        if model is not None and (not isinstance(model, str) or not model.strip()):
            self.fail((*where, "model"), f"expected a model version or null, got {show(model)}")
        configured = item["configured"]
        if not isinstance(configured, str) or not configured.strip():
            self.fail((*where, "configured"), f"expected a model name, got {show(configured)}")
        check, results = self.questions(item["questions"], (*where, "questions"))
        if model is None and any(not isinstance(result, Failure) for result in results):
            self.fail((*where, "model"), "answers need the model version that gave them")
        shown = self.shown(item["shown"], (*where, "shown"))
        # The key must be the key of what the entry holds: an entry whose questions or shown
        # material were edited under an old key would replay its answers for what a reviewer
        # never saw (or never saw answered so).
        if self.held_key(check, shown, (*where, "shown")) != key:
            self.fail(
                (*where, "key"),
                f"the key {key[:12]}... is not the key of the questions and the material the"
                " entry holds: the entry was edited after it was recorded (record it again)",
            )
        return Entry(key, model, configured, tuple(item["questions"]), results, shown)

    def held_key(self, check: Check, shown: dict[str, Any], where: tuple[str | int, ...]) -> str:
        """The key of the bundle that shows ``check`` and the material ``shown`` holds."""
        submitted = shown["submission"]
        try:
            submission = Submission(
                submitted.get("output"),
                submitted.get("summary"),
                evidence_items(submitted.get("evidence", [])),
                next=submitted.get("next"),
                reason=submitted.get("reason"),
            )
            submission_json = canonical_json(submitted)
            run_data_json = canonical_json(shown["run_data"])
        except (MaterialError, TypeError, ValueError) as error:
            self.fail((*where, "submission"), f"not a submission as shown: {error}")
        left_out = shown.get("left_out")
        bundle = Bundle(
            check=check,
            instructions="\n".join(shown["instructions"]),
            body="\n".join(shown["body"]),
            submission=submission,
            submission_json=submission_json,
            run_data_json=run_data_json,
            truncated=left_out is not None,
            dropped_steps=() if left_out is None else tuple(left_out["steps"]),
            dropped_fields=() if left_out is None else tuple(left_out["fields"]),
        )
        return bundle_key(bundle)

    def questions(
        self, items: object, where: tuple[str | int, ...]
    ) -> tuple[Check, tuple[Answer | Failure, ...]]:
        if not isinstance(items, list) or not items:
            self.fail(where, f"expected a non-empty list of questions, got {show(items)}")
        questions: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            if not isinstance(item, dict) or ("answer" in item) == ("failure" in item):
                self.fail((*where, index), 'a recorded question has an "answer" or a "failure"')
            questions.append({k: v for k, v in item.items() if k not in ("answer", "failure")})
        try:
            check = parse_check(questions)
        except CheckError as error:
            problem = error.problems[0]
            self.fail((*where, *problem.path), problem.message)
        if check.to_json() != questions:
            self.fail(where, "the questions are not a check's full form, as recorded")
        return check, tuple(
            self.result(question, item, (*where, index))
            for index, (question, item) in enumerate(zip(check, items, strict=True))
        )

    def result(
        self, question: Any, item: Mapping[str, Any], where: tuple[str | int, ...]
    ) -> Answer | Failure:
        if "failure" in item:
            return self.failure(item["failure"], (*where, "failure"))
        stored = item["answer"]
        where = (*where, "answer")
        if not isinstance(stored, dict):
            self.fail(where, f"an answer is a JSON object, got {show(stored)}")
        self.known(stored, where, _ANSWER_KEYS)
        # Judged as text first: a list or an object (JSON allows them) cannot even be hashed.
        source = stored.get("source", "replayed")
        if not isinstance(source, str) or source not in _SOURCES:
            self.fail((*where, "source"), f"not a source of answers: {show(stored['source'])}")
        try:
            answer = answer_from_json(question, stored)
        except KeyError as error:
            self.fail(where, f"the answer has no {show(error.args[0])}")
        except (ValueError, TypeError) as error:
            self.fail(where, str(error))
        problem = answer_problem(question, answer)
        if problem is not None:
            self.fail(where, f"the answer does not fit its question: {problem}")
        return answer

    def failure(self, stored: object, where: tuple[str | int, ...]) -> Failure:
        if not isinstance(stored, dict):
            self.fail(where, f"a failure is a JSON object, got {show(stored)}")
        self.known(stored, where, _FAILURE_KEYS)
        reason = stored.get("reason")
        if not isinstance(reason, str) or reason not in _REASONS:
            self.fail((*where, "reason"), f"not a failure reason: {show(reason)}")
        detail = stored.get("detail", "")
        if not isinstance(detail, str):
            self.fail((*where, "detail"), f"expected a string, got {show(detail)}")
        retry_after = stored.get("retry_after")
        if retry_after is not None and (not is_finite(retry_after) or retry_after < 0):
            self.fail((*where, "retry_after"), f"expected seconds, got {show(retry_after)}")
        return Failure(cast(FailureReason, reason), detail, retry_after=retry_after)

    def shown(self, shown: object, where: tuple[str | int, ...]) -> dict[str, Any]:
        if not isinstance(shown, dict):
            self.fail(where, f"expected what the evaluator was shown, got {show(shown)}")
        self.known(shown, where, _SHOWN_KEYS)
        for name in ("instructions", "body"):
            lines = shown.get(name)
            if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
                self.fail((*where, name), f"expected a list of lines, got {show(lines)}")
        for name in ("submission", "run_data"):
            if not isinstance(shown.get(name), dict):
                self.fail((*where, name), f"expected a JSON object, got {show(shown.get(name))}")
        left_out = shown.get("left_out", {"steps": [], "fields": []})
        if (
            not isinstance(left_out, dict)
            or set(left_out) != {"steps", "fields"}
            or not all(
                isinstance(items, list) and all(isinstance(item, str) for item in items)
                for items in left_out.values()
            )
        ):
            self.fail((*where, "left_out"), f"expected steps and fields, got {show(left_out)}")
        return shown


# --- what differs --------------------------------------------------------------------------------


def _pieces(questions: list[dict[str, Any]], shown: Mapping[str, Any]) -> dict[str, str]:
    """Each piece of what an evaluator is shown, as text to compare and diff."""

    def pretty(value: object) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)

    return {
        "questions": json.dumps(questions, indent=2, ensure_ascii=False),
        "instructions": "\n".join(shown["instructions"]),
        "body": "\n".join(shown["body"]),
        "submission": pretty(shown["submission"]),
        "run data": pretty(shown["run_data"]),
        "left out": pretty(shown.get("left_out", {"fields": [], "steps": []})),
    }


def _diff(piece: str, recorded: str, shown: str) -> list[str]:
    lines = list(
        difflib.unified_diff(
            recorded.split("\n"),
            shown.split("\n"),
            f"recorded {piece}",
            f"shown {piece}",
            n=2,
            lineterm="",
        )
    )
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"... ({len(lines) - _DIFF_LINES} more lines of diff)"]
    return lines
