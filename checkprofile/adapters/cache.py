"""Answers remembered by exactly what was asked, so a replayed submission costs no model call.

:class:`CachingEvaluator` wraps any evaluator. Its key for a bundle is the SHA-256 of the
canonical JSON of everything the inner evaluator was given and is configured with: its
identity (``cache_identity`` when it has one, else its class), its ``model``, the questions
asked (as the check states them, a choice's names in their order) and the rendered material
(instructions, body, the submission and run data texts, and what was left out of the run
data). Only answers are kept,
never failures, and only answers that fit their question; what comes back from the cache is
checked again as strictly as a provider's response, and anything unreadable is a miss.

The core re-asks only the questions not answered (``bundle.with_check``), so a check whose
answers came in two attempts is stored under two keys: the whole check's (the answers of the
first attempt) and the re-asked subset's. On a replay the wrapper looks up the whole check,
then asks itself for whatever that entry lacks -- the same subset as the first time, whose
entry holds the rest -- so the replay gets every answer without a model call.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path, PurePath
from typing import Any, Final, Protocol, cast, runtime_checkable

from .._bundle import Bundle, canonical_json
from .._check import Check, ChoiceQuestion, Question, RubricQuestion
from .._convert import is_finite, plain_text
from .._evaluator import Evaluator, Reply, ask_evaluator
from .._files import read_bounded
from .._log import logger as _logger
from .._shown import is_blank, show
from .._types import is_mapping, is_sequence
from .._verdict import Answer, ChoiceAnswer, Failure, RubricAnswer, YesNoAnswer, answer_problem

__all__ = [
    "CacheStore",
    "CachingEvaluator",
    "DirectoryStore",
    "MemoryStore",
    "answer_from_json",
    "answer_to_json",
    "cache_key",
    "write_atomically",
]

logger = _logger("adapters.cache")

#: Names the key's recipe and the entries' layout. A change to either must change it, so an
#: old entry is a miss rather than misread.
CACHE_FORMAT: Final = "checkprofile-cache-2"

# The most bytes of one cache file read: far above the answers of any check (a few hundred
# bytes a question), so a larger file is not an entry.
_ENTRY_BYTES: Final = 16 * 1024 * 1024

_KEY: Final = re.compile(r"[0-9a-f]{64}\Z")
_POSITION: Final = re.compile(r"(?:0|[1-9][0-9]{0,8})\Z")


@runtime_checkable
class CacheStore(Protocol):
    """Where entries live: JSON texts under keys (64 lower-case hex digits).

    ``get`` returns ``None`` for a key it does not hold; it may also return ``None`` (or any
    text) for an entry it cannot read -- the wrapper treats an unreadable entry as a miss.
    ``put`` replaces the entry; a reader must never see half of one.
    """

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, text: str) -> None: ...


class MemoryStore:
    """Entries in a dict, for one process (tests, a short-lived host)."""

    def __init__(self) -> None:
        self._entries: dict[str, str] = {}

    def get(self, key: str) -> str | None:
        return self._entries.get(key)

    def put(self, key: str, text: str) -> None:
        self._entries[key] = text

    def __len__(self) -> int:
        return len(self._entries)


class DirectoryStore:
    """One JSON file per entry, ``<key>.json`` in ``directory`` (made if missing).

    A file is written to a temporary name in the same directory and moved into place with
    ``os.replace``, so a reader sees the old entry or the new one, never a torn one, and many
    processes may share the directory. A file that cannot be read is a miss, logged.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> Path:
        """The file of ``key``. Only a key made by :func:`cache_key` names a file: anything
        else (``../x``, say) is refused."""
        if not isinstance(key, str) or not _KEY.match(key):
            raise ValueError(f"a cache key is 64 lower-case hex digits, got {show(key)}")
        return self.directory / f"{key}.json"

    def get(self, key: str) -> str | None:
        path = self.path(key)
        try:
            # Bounded, as every file checkprofile reads: a cache entry holds answers, not
            # megabytes, so a file past the bound (or one that never ends) is a miss, unread.
            return read_bounded(path, limit=_ENTRY_BYTES).decode("utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as error:
            logger.warning("cache file %s cannot be read, treated as a miss: %s", path, error)
            return None

    def put(self, key: str, text: str) -> None:
        write_atomically(self.path(key), text)


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` so that a reader sees the old file or the new one,
    never a torn one: a temporary file in the same directory (readable and writable by its
    owner only), flushed to disk, then moved into place with ``os.replace``."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())  # the rename must not land before the bytes do
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _identity(evaluator: object) -> str:
    identity = getattr(evaluator, "cache_identity", None)
    if isinstance(identity, str):
        return identity
    kind = type(evaluator)
    return f"{kind.__module__}.{kind.__qualname__}"


def cache_key(evaluator: Evaluator, bundle: Bundle) -> str:
    """The key of ``bundle`` asked of ``evaluator``: SHA-256 (hex) of the canonical JSON of
    the evaluator's identity and ``model``, the questions of ``bundle.check`` in order (in
    full: an evaluator may use any of a question's fields; a choice's names in their order)
    and the rendered material."""
    material = {
        "format": CACHE_FORMAT,
        "evaluator": _identity(evaluator),
        "model": evaluator.model,
        "questions": bundle.check.to_json(),
        # A choice's names in the order the evaluator is shown them: the canonical JSON sorts
        # the keys of `one_of`, so the questions alone would not tell two orders apart.
        "choices": [list(q.names) if isinstance(q, ChoiceQuestion) else None for q in bundle.check],
        "instructions": bundle.instructions,
        "body": bundle.body,
        # The exact texts the evaluator is shown, as strings: no re-encoding can blur them.
        "submission_json": bundle.submission_json,
        "run_data_json": bundle.run_data_json,
        "truncated": bundle.truncated,
        "dropped_steps": list(bundle.dropped_steps),
        "dropped_fields": list(bundle.dropped_fields),
    }
    return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()


class CachingEvaluator:
    """An :class:`~checkprofile.Evaluator` that answers from ``store`` what ``inner`` has
    answered before, and asks ``inner`` the rest.

    ``store`` is a :class:`CacheStore` or a directory (a :class:`DirectoryStore` there).
    ``model`` is the inner evaluator's. A reply from the cache names the model version that
    gave the answers when they were first given; its answers have ``source="replayed"`` and
    keep their distributions. Failures are never stored, nor answers that do not fit their
    question, nor anything from a reply the core would reject (wrong length, no model). A
    store that cannot be written costs the cache, never the answer (a warning is logged).

    ``hits`` and ``misses`` count questions answered from the store and questions passed to
    ``inner``. Concurrent checks may share one instance; two checks that miss on the same key
    at once both ask ``inner``, and the last to finish is kept.

    Raises :class:`TypeError` for an ``inner`` that is not an evaluator or a ``store`` that is
    neither a store nor a path, and :class:`OSError` (or :class:`ValueError`, for a name no
    file can have) for a directory that cannot be made.
    """

    def __init__(self, inner: Evaluator, store: CacheStore | str | os.PathLike[str]) -> None:
        try:
            is_evaluator = isinstance(inner, Evaluator)
        except Exception:  # an object whose own __getattr__ raises is not an evaluator
            is_evaluator = False
        if not is_evaluator:
            raise TypeError(f"inner must be an Evaluator (model and answer), got {show(inner)}")
        if issubclass(type(store), (str, PurePath)):
            store = DirectoryStore(cast("str | PurePath", plain_text(store)))
        elif not _is_store(store):
            raise TypeError(
                f"store must be a CacheStore (get and put) or a directory, got {show(store)}"
            )
        self.inner = inner
        self.store: CacheStore = cast(CacheStore, store)
        self.hits = 0
        self.misses = 0

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def operation_name(self) -> object:
        """The inner evaluator's ``operation_name`` (``None`` when it names none): telemetry
        names a cached evaluator's calls by the operation behind the cache."""
        try:  # an evaluator's own __getattr__ may raise anything: it then names none
            return getattr(self.inner, "operation_name", None)
        except Exception:
            return None

    async def answer(self, bundle: Bundle) -> Reply:
        """The answers of ``bundle.check``: from the store where it holds them, else from
        ``inner`` (and then stored)."""
        key = cache_key(self.inner, bundle)
        cached = self._load(key, bundle.check)
        if not cached:
            self.misses += len(bundle.check)
            reply = await self.inner.answer(bundle)
            self._save(key, bundle.check, reply)
            return reply
        self.hits += len(cached)
        entries: list[Answer | Failure | None] = [None] * len(bundle.check)
        models: list[str] = []
        for index, (model, answer) in cached.items():
            entries[index] = answer
            if model not in models:
                models.append(model)
        missing = [index for index, entry in enumerate(entries) if entry is None]
        if missing:
            # Asked as the core asked it the first time: the subset's own entry has the rest.
            subset = bundle.with_check(bundle.check.select(missing))
            # Quietly: the check that asked reports each failure of the reply once.
            asked_model, answers = await ask_evaluator(self, subset, quiet=True)
            for index, entry in zip(missing, answers, strict=True):
                entries[index] = entry
            answered = any(not isinstance(entry, Failure) for entry in answers)
            if asked_model is not None and answered and asked_model not in models:
                models.append(asked_model)
        return Reply(", ".join(models), [entry for entry in entries if entry is not None])

    def _save(self, key: str, check: Check, reply: object) -> None:
        if type(reply) is not Reply or len(reply.answers) != len(check):
            return  # the core rejects the reply as a whole: nothing in it is an answer
        model = reply.model
        if type(model) is not str or is_blank(model):
            return
        stored = {
            # An entry that fits its question is an answer (its type, not its __class__).
            str(index): answer_to_json(cast(Answer, entry))
            for index, (question, entry) in enumerate(zip(check, reply.answers, strict=True))
            if type(entry) is not Failure and answer_problem(question, entry) is None
        }
        if not stored:
            return
        try:
            text = canonical_json(
                {"format": CACHE_FORMAT, "key": key, "model": model, "answers": stored}
            )
        except (TypeError, ValueError) as error:  # a distribution JSON cannot hold
            logger.warning("answers for cache key %s cannot be stored: %s", key, error)
            return
        try:
            self.store.put(key, text)
        except OSError as error:
            logger.warning("cache entry %s cannot be written: %s", key, error)

    def _load(self, key: str, check: Check) -> dict[int, tuple[str, Answer]]:
        """The stored answers for ``key`` by question index, with the model that gave them;
        empty for a miss or an entry that does not read back as answers to ``check``."""
        try:
            text = self.store.get(key)
        except OSError as error:
            logger.warning("cache entry %s cannot be read, treated as a miss: %s", key, error)
            return {}
        if text is None:
            return {}
        try:
            return _from_json(text, key, check)
        except (ValueError, TypeError, KeyError, RecursionError) as error:
            logger.warning("cache entry %s is not readable, treated as a miss: %s", key, error)
            return {}


def _is_store(store: object) -> bool:
    try:
        return isinstance(store, CacheStore)
    except Exception:  # an object whose own __getattr__ raises is not a store
        return False


def answer_to_json(answer: Answer) -> dict[str, Any]:
    """``answer`` as stored: ``{"p"}``, ``{"name", "confidence"}`` or ``{"level",
    "confidence"}``, with its ``distribution`` (``[option, p]`` pairs) and ``source`` when it
    has them. Recorded answers (cache entries, cassettes) are kept in this shape."""
    data: dict[str, Any]
    if isinstance(answer, YesNoAnswer):
        data = {"p": answer.p}
    elif isinstance(answer, ChoiceAnswer):
        data = {"name": answer.name, "confidence": answer.confidence}
    else:
        data = {"level": int(answer.level), "confidence": answer.confidence}
    if not isinstance(answer, YesNoAnswer) and answer.distribution is not None:
        data["distribution"] = [[option, p] for option, p in answer.distribution]
    if answer.source is not None:
        data["source"] = answer.source  # where the number first came from, for people
    return data


def _from_json(text: str, key: str, check: Check) -> dict[int, tuple[str, Answer]]:
    data = json.loads(text)
    if not is_mapping(data) or data.get("format") != CACHE_FORMAT:
        raise ValueError(f"not a {CACHE_FORMAT} entry")
    if data.get("key") != key:
        raise ValueError(f"the entry is for key {show(data.get('key'))}")  # a misplaced file
    model = data.get("model")
    if type(model) is not str or is_blank(model):
        raise ValueError(f"the entry names no model: {show(model)}")
    answers = data.get("answers")
    if not is_mapping(answers) or not answers:
        raise ValueError(f"the entry holds no answers: {show(answers)}")
    result: dict[int, tuple[str, Answer]] = {}
    for position, stored in answers.items():
        # ASCII digits only: str.isdigit() takes any script's digits ("١" would be question 1).
        if (
            not isinstance(position, str)
            or not _POSITION.match(position)
            or int(position) >= len(check)
        ):
            raise ValueError(f"the entry answers question {show(position)} of {len(check)}")
        question = check[int(position)]
        answer = answer_from_json(question, stored)
        problem = answer_problem(question, answer)
        if problem is not None:  # the store is input like any other: it never passes unread
            raise ValueError(f"question {show(question.ask)}: {problem}")
        result[int(position)] = (model, answer)
    return result


def answer_from_json(question: Question, stored: object) -> Answer:
    """The answer to ``question`` stored by :func:`answer_to_json`, with ``source="replayed"``
    (the stored source is where the number first came from). Raises ``ValueError``,
    ``KeyError`` or ``TypeError`` for a stored value of the wrong shape; whether the answer
    fits its question is for :func:`~checkprofile.answer_problem` to say."""
    if not is_mapping(stored):
        raise ValueError(f"an answer must be a JSON object, got {show(stored)}")
    if isinstance(question, ChoiceQuestion):
        return ChoiceAnswer(
            stored["name"],
            stored["confidence"],
            source="replayed",
            distribution=_pairs(stored.get("distribution"), str),
        )
    if isinstance(question, RubricQuestion):
        level = stored["level"]
        return RubricAnswer(
            level,
            stored["confidence"],
            source="replayed",
            distribution=_pairs(stored.get("distribution"), int),
        )
    return YesNoAnswer(stored["p"], source="replayed")


def _pairs(value: object, kind: type[Any]) -> tuple[tuple[Any, float], ...] | None:
    if value is None:
        return None
    if not is_sequence(value) or isinstance(value, str):
        raise ValueError(f"a distribution must be a list of pairs, got {show(value)}")
    pairs = []
    for pair in value:
        if (
            not is_sequence(pair)
            or len(pair) != 2
            or type(pair[0]) is not kind
            or not is_finite(pair[1])
        ):
            raise ValueError(f"a distribution entry must be [option, number], got {show(pair)}")
        pairs.append((pair[0], float(pair[1])))
    return tuple(pairs)
