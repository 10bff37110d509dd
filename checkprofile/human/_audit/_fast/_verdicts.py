"""Reading verdict records fast: what makes calibration over a month of records quick.

A trail carries the same few checks on every line, and almost every line as the writer wrote
it. So each distinct check is parsed once (:class:`_Checks`), a verdict whose shape plain type
checks recognize is rebuilt by the core's own thresholds without the schema, and a line laid
out as the writer lays it out has only what follows its check read, by one pattern
(:func:`_tail`; its calls too). What it reads comes as :class:`VerdictFacts`, exactly the
record the strict reading (``_audit_strict``) would build; anything it does not find plainly
right, right or wrong, goes the strict way, which explains what is wrong.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Container
from typing import Any, NamedTuple, cast, get_args

from ...._bundle import canonical_json
from ...._check import Check, ChoiceQuestion, Question, YesNoQuestion
from ...._json_read import load_json
from ...._usage import ModelCall, call_from_json
from ...._validate import parse_check
from ...._verdict import Provenance, QuestionResult, Source, Verdict, grade_value, is_at_text
from .._records import _ACTIONS, VerdictRecord, _key_from, check_key
from .._strict import _VERDICT_KEYS, _is_hash
from ._plain import (
    _HASH_TEXT,
    _PLAIN_DECODER,
    _TEXT,
    Body,
    Distribution,
    Plain,
    _distribution,
    _keys_add_up,
    _subject,
    _worst,
)
from ._tail import Tail, tail_reader, written_calls

__all__ = ["Distribution", "Plain", "VerdictFacts", "verdict_facts", "verdict_line"]


class _Known(NamedTuple):
    """A valid check in its full form, its key, each question with what reading its answers
    needs (:func:`_plan`), and, when it was seen as written in a line and read strictly, how
    many ``":`` that text holds (``None``: not known, or an ask or answer name starts with
    ``:``, so a count of keys in the line would not add up)."""

    check: Check
    key: str
    plan: tuple[_Step, ...]
    colons: int | None = None
    tail: Tail | None = None


#: What a question's entry in a verdict and its provenance entry hold, plainly right: the
#: answer, its recorded result, the distribution kept beside it and its source.
_Read = tuple["Plain", str, "Distribution | None", "str | None"]
# Reads one question's entry and provenance entry (``None``: no provenance), or gives ``None``.
_Step = Callable[[object, object], "_Read | None"]
# Checks one question's values: answer, confidence, result, source and distribution (its
# (option, probability) pairs as written, of the option's type (:func:`_pairs`); ``None``:
# none), or gives ``None``.
_Values = Callable[[Any, Any, Any, Any, Any], "_Read | None"]


def _plan(check: Check) -> tuple[_Step, ...]:
    """A reader for each question of ``check`` (see :func:`_verdict_body`)."""
    return tuple(_step(question, _values(question)) for question in check)


def _step(question: Question, values: _Values) -> _Step:
    """The reader of ``question``'s entry in a verdict, and its provenance entry."""
    ask, kind = question.ask, question.kind
    fields = _QUESTION_FIELDS if kind == "yes_no" else _QUESTION_FIELDS_CONFIDENCE
    option = str if kind == "choice" else int

    def read(entry: object, origin: object) -> _Read | None:
        if (
            type(entry) is not dict
            or entry.keys() != fields
            or entry["ask"] != ask
            or entry["kind"] != kind
        ):
            return None
        source = pairs = None
        if origin is not None:
            source, pairs = _origin(origin)
            if source is False:
                return None
            if pairs is not None and kind != "yes_no":
                pairs = _pairs(pairs, option)
                if pairs is None:
                    return None
        return values(entry["answer"], entry.get("confidence"), entry["result"], source, pairs)

    return read


def _values(question: Question) -> _Values:
    """The checker of ``question``'s values: plain type checks that take an answer only where
    :func:`~checkprofile.answer_problem` takes it (or more strictly), then its thresholds."""
    if isinstance(question, YesNoQuestion):

        def yes_no(p: Any, _: Any, result: Any, source: Any, pairs: Any) -> _Read | None:
            # A probability: a finite number in [0, 1] (a NaN or an infinity fails the test).
            # (The full reading keeps a yes/no distribution unchecked.)
            if (
                (type(p) is not float and type(p) is not int)
                or not 0 <= p <= 1
                or pairs is not None
            ):
                return None
            if grade_value(question, p, None) != result:
                return None
            return (p, None), result, None, source

        return yes_no
    options: Container[object]
    option: type
    if isinstance(question, ChoiceQuestion):
        options, option = frozenset(question.names), str
    else:
        options, option = range(len(question.levels)), int

    def chosen(answer: Any, confidence: Any, result: Any, source: Any, pairs: Any) -> _Read | None:
        if (
            (type(confidence) is not float and type(confidence) is not int)
            or not 0 <= confidence <= 1
            or type(answer) is not option
            or answer not in options
        ):
            return None
        shown = None
        if pairs is not None:
            shown = _distribution(pairs, options, answer)
            if shown is None:
                return None
        if option is str:
            # One text per answer name, not one per line (calibration keeps answers).
            answer = sys.intern(cast("str", answer))
        # The schema's reading makes a confidence a float (1 is read as 1.0).
        confidence = float(confidence)
        if grade_value(question, answer, confidence) != result:
            return None
        return (answer, confidence), result, shown, source

    return chosen


class _Checks:
    """Each distinct check of a trail parsed once: a month of one step's verdicts carries the
    same check on every line. Keyed by its canonical JSON text, and, for lines in the writer's
    own key order, by the check's text as it stands in the line (no re-encoding at all). Only
    checks that are valid and in their full form are kept, with their key; anything else is
    left to the full reading.

    Learning a check costs less than a strict reading of its line, but making its tail reader
    (:func:`tail_reader`) costs about twenty, and pays for itself only over the lines that
    follow. So the tail reader is made at a check's :attr:`TAIL_AFTER`th line, and past
    :attr:`LIMIT` distinct checks no more are learned (:attr:`full`): a line of another check
    is then read the strict way, at the strict reading's cost, and what is kept stays bounded
    however many checks a trail holds."""

    LIMIT = 64  # a trail has a handful of checks
    # Making a tail reader costs what about 20 lines read the strict way do, and each line
    # read by the plain fast way saves most of one: a check's tail is made at its 32nd line.
    TAIL_AFTER = 32

    def __init__(self) -> None:
        self._known: dict[str, _Known] = {}
        self._written: dict[str, _Known] = {}
        self._lines: dict[str, int] = {}  # of each check in _written without a tail yet

    @property
    def full(self) -> bool:
        """Whether no more checks are learned."""
        return len(self._known) >= self.LIMIT

    def get(self, value: object, written: str | None = None) -> _Known | None:
        """The check ``value`` and its key; ``written`` is its JSON text in the line, when
        the line is laid out as the writer lays it out (see :meth:`_Reader._verdict`)."""
        if written is not None:
            found = self._written.get(written)
            if found is not None:
                return found
        try:
            text = canonical_json(value)
        except (ValueError, TypeError, RecursionError):
            return None
        found = self._known.get(text)
        if found is None:
            if self.full:
                return None
            try:
                check = parse_check(value)
                if check.to_json() != value:
                    return None
            except Exception:  # the full reading explains it
                return None
            found = self._known[text] = _Known(check, check_key(check), _plan(check))
        if written is not None and len(self._written) < self.LIMIT:
            # A cut that is one whole JSON value is the value's own text: JSON values are
            # prefix-free, and the cut starts where the value does. Read strictly, it holds no
            # repeated key, so the keys of a line can be counted around it.
            try:
                load_json(written)
            except (ValueError, RecursionError):
                return found
            names = [q.ask for q in found.check] + [
                name for q in found.check if isinstance(q, ChoiceQuestion) for name in q.names
            ]
            colons = None if any(name.startswith(":") for name in names) else written.count('":')
            found = self._written[written] = found._replace(colons=colons)
        return found

    def written(self, text: str) -> _Known | None:
        """The check whose JSON text, as a line of the writer's holds it, is ``text``: one
        seen before, read strictly (see :meth:`get`), with its tail reader from the
        :attr:`TAIL_AFTER`th line that holds it on."""
        found = self._written.get(text)
        if found is not None and found.tail is None:
            seen = self._lines.get(text, 1) + 1
            if seen < self.TAIL_AFTER:
                self._lines[text] = seen
            else:
                self._lines.pop(text, None)
                tail = tail_reader(found.check, found.key)
                found = self._written[text] = found._replace(tail=tail or _NO_TAIL)
        return found


def _no_tail(text: str, start: int) -> None:
    """The tail reader of a check that has none (:func:`tail_reader`): the line is read the
    plain way."""
    return None


_NO_TAIL: Tail = _no_tail


_VERDICT_ORDER = (
    _VERDICT_KEYS,
    (*_VERDICT_KEYS, "provenance"),
    (*_VERDICT_KEYS, "calls"),
    (*_VERDICT_KEYS, "provenance", "calls"),
)
# Every set of keys a verdict record may have: the required ones, each optional one or both.
_VERDICT_KEY_SETS = frozenset(frozenset(order) for order in _VERDICT_ORDER)
_BODY_FIELDS = frozenset(("verdict", "advisory", "model", "questions", "at"))
_BODY_FIELDS_TRUNCATED = _BODY_FIELDS | {"truncated"}
_QUESTION_FIELDS = frozenset(("ask", "kind", "answer", "result"))
_QUESTION_FIELDS_CONFIDENCE = _QUESTION_FIELDS | {"confidence"}
_ORIGIN_FIELDS = (frozenset(("source",)), frozenset(("source", "distribution")))
_SOURCES = frozenset(get_args(Source))
# The cut of a writer's verdict line that holds its check: after the key, up to the next key.
_CHECK_AT, _CHECK_END = ',"check":[', '],"verdict":{'
# A writer's verdict line up to its check: each value as the writer writes it, every text
# plain (the line holds no backslash, so no text holds an escape).
_VERDICT_HEAD = re.compile(
    rf'\{{"record":"verdict","format":1,"key":{_HASH_TEXT},"run":{_TEXT},"step":{_TEXT},'
    rf'"submission_sha256":{_HASH_TEXT},"bundle_sha256":(?:{_HASH_TEXT}|null),'
    rf'"check_key":{_HASH_TEXT},"action":"(complete|not_accepted|escalate|retry)",'
    r'"attempts":([12]),"check":'
)
_REST_KEY_SETS = frozenset(
    frozenset(keys)
    for keys in (
        ("verdict",),
        ("verdict", "provenance"),
        ("verdict", "calls"),
        ("verdict", "provenance", "calls"),
    )
)


def verdict_facts(
    checks: _Checks, data: dict[str, Any], text: str | None = None
) -> VerdictFacts | None:
    """The facts of verdict record ``data``, or ``None`` to read it the full way (``checks``:
    those the reader has read).
    ``text``: ``data`` was parsed from this line without the check for repeated keys, so
    the keys must be counted against it (:func:`_keys_add_up`)."""
    keys = data.keys()
    if frozenset(keys) not in _VERDICT_KEY_SETS:
        return None
    run, step, digest, key = data["run"], data["step"], data["submission_sha256"], data["key"]
    action, attempts, bundle = data["action"], data["attempts"], data["bundle_sha256"]
    if not (
        _subject(data, run, step, digest, key)
        and (bundle is None or _is_hash(bundle))
        and type(action) is str
        and action in _ACTIONS
        and type(attempts) is int
        and (attempts == 1 or attempts == 2)
    ):
        return None
    written = None
    if text is not None:
        if tuple(data) not in _VERDICT_ORDER:
            return None
        # Every value before "check" is a plain string, number or null, in which no
        # unescaped quote can stand: the first `,"check":[` is the key itself.
        start = text.find(_CHECK_AT)
        end = text.find(_CHECK_END, start)
        if not 0 <= start < end:
            return None
        written = text[start + len(_CHECK_AT) - 1 : end + 1]
    found = checks.get(data["check"], written)
    if found is None or found.key != data["check_key"]:
        return None
    if text is not None and found.colons is None:
        return None
    return _facts(data, found, text, found.colons or 0, key, run, step, digest, bundle)


def verdict_line(checks: _Checks, text: str) -> VerdictFacts | None:
    """The facts of the verdict line ``text`` (no backslash in it) when it is laid out as
    the writer lays it out and its check's text is one already read (:meth:`_Checks.get`):
    only what follows the check is parsed. ``None`` to read it another way.

    The line is then the head that :data:`_VERDICT_HEAD` matches (each key once, each
    value plain), the check's own text (one whole JSON value: what follows it is not part
    of it), and ``,"verdict":…}``: read as the object ``{"verdict":…}``, with no key of
    the head in it, it gives what the whole line would."""
    # The check's text is looked up first (a line of a check not known costs two finds and a
    # lookup), then the head is matched up to where the check starts.
    cut = text.find(_CHECK_AT)
    if cut < 0:
        return None
    start = cut + len(_CHECK_AT) - 1
    end = text.find(_CHECK_END, start)
    found = checks.written(text[start : end + 1]) if end > 0 else None
    if found is None:
        return None
    head = _VERDICT_HEAD.match(text)
    if head is None or head.end() != start:
        return None
    key, run, step, digest, bundle, check, action, attempts = head.groups()
    if (
        not run.strip()
        or not step.strip()
        or check != found.key
        or key != _key_from(run, step, digest)
    ):
        return None
    tail = found.tail(text, end + 1) if found.tail is not None else None
    if tail is not None:
        name, advisory, model, at, truncated, body, listed = tail
        # The calls' text is one JSON list whose keys the pattern pinned, each once.
        calls = () if listed is None else written_calls(listed, int(attempts))
        if calls is None:
            return None
        return VerdictFacts(
            key, run, step, digest, bundle, found.key, action, int(attempts), found.check,
            name, advisory, model, at, truncated, *body, calls,
        )  # fmt: skip
    rest = "{" + text[end + 2 :]
    try:
        data = _PLAIN_DECODER.decode(rest)
    except (ValueError, RecursionError):
        return None
    if type(data) is not dict or frozenset(data) not in _REST_KEY_SETS:
        return None
    return _facts(data, found, rest, 0, key, run, step, digest, bundle, action, int(attempts))


def _facts(
    data: dict[str, Any],
    found: _Known,
    text: str | None,
    colons: int,
    key: str,
    run: str,
    step: str,
    digest: str,
    bundle: str | None,
    action: str | None = None,
    attempts: int | None = None,
) -> VerdictFacts | None:
    """The facts of a verdict record whose head (``key`` to ``bundle``; ``action`` and
    ``attempts`` when ``data`` does not hold them) and check (``found``) are right, from its
    ``"verdict"`` and ``"provenance"`` in ``data``; ``None`` when those are not plainly right.
    ``text``: ``data`` was parsed from this text without the check for repeated keys, so its
    keys must add up, with ``colons`` more for a check's text within it."""
    body = data["verdict"]
    origins = data.get("provenance", _ABSENT)
    made = _verdict_body(body, found.check, found.plan, origins)
    if made is None:
        return None
    calls = _calls(data.get("calls", _ABSENT), data["attempts"] if attempts is None else attempts)
    if calls is None:
        return None
    if text is not None:
        keys_seen = len(data) + len(body) + sum(map(len, body["questions"]))
        if origins is not _ABSENT:
            keys_seen += sum(len(origin) for origin in origins if origin is not None)
        keys_seen += sum(map(len, data.get("calls", ())))
        if not _keys_add_up(text, keys_seen + colons):
            return None
    answers, results, distributions, sources = made
    return VerdictFacts(
        key,
        run,
        step,
        digest,
        bundle,
        found.key,
        data["action"] if action is None else action,
        data["attempts"] if attempts is None else attempts,
        found.check,
        body["verdict"],
        body["advisory"],
        body["model"],
        body["at"],
        body.get("truncated", False),
        answers,
        results,
        distributions,
        sources,
        calls,
    )


def _calls(listed: object, attempts: int) -> tuple[ModelCall, ...] | None:
    """A record's calls (none when absent), or ``None`` when they are not plainly right."""
    if listed is _ABSENT:
        return ()
    if type(listed) is not list or len(listed) != attempts:
        return None
    try:
        return tuple(call_from_json(call) for call in listed)
    except ValueError:
        return None


class VerdictFacts(NamedTuple):
    """A verdict record as the fast path read it, every field checked, before it is built as
    a :class:`VerdictRecord` (:meth:`record`); calibration takes these as they are.
    ``answers`` hold each answer as its value and confidence (:data:`Plain`; none for an
    ``error`` verdict), ``distributions`` the
    distribution the provenance keeps beside it, ``sources`` each answer's source (``None``:
    the record has no provenance)."""

    key: str
    run: str
    step: str
    submission_sha256: str
    bundle_sha256: str | None
    check_key: str
    action: str
    attempts: int
    check: Check
    verdict: str
    advisory: bool
    model: str
    at: str
    truncated: bool
    answers: tuple[Plain, ...]
    results: tuple[str, ...]
    distributions: tuple[Distribution | None, ...]
    sources: tuple[str | None, ...] | None
    calls: tuple[ModelCall, ...] = ()

    def record(self) -> VerdictRecord:
        """The typed record: what :func:`record_from_json` makes of the same line."""
        check = self.check
        if self.verdict == "error":
            questions = [
                QuestionResult(ask=q.ask, kind=q.kind, answer=None, result="unsure") for q in check
            ]
        else:
            questions = [
                QuestionResult(
                    ask=q.ask,
                    kind=q.kind,
                    answer=value,
                    confidence=confidence,
                    result=result,  # type: ignore[arg-type]
                )
                for q, (value, confidence), result in zip(
                    check, self.answers, self.results, strict=True
                )
            ]
        verdict = Verdict(
            verdict=self.verdict,  # type: ignore[arg-type]
            advisory=self.advisory,
            model=self.model,
            questions=questions,
            truncated=self.truncated,
            at=self.at,
            check=check,
        )
        provenance: tuple[Provenance, ...] = ()
        if self.sources is not None:
            provenance = tuple(
                _NO_ORIGIN if source is None else Provenance(source, shown)
                for source, shown in zip(self.sources, self.distributions, strict=True)
            )
        return VerdictRecord(
            key=self.key,
            run=self.run,
            step=self.step,
            submission_sha256=self.submission_sha256,
            bundle_sha256=self.bundle_sha256,
            check_key=self.check_key,
            action=self.action,  # type: ignore[arg-type]
            attempts=self.attempts,
            check=check,
            verdict=verdict,
            provenance=provenance,
            calls=self.calls,
        )


def _verdict_body(
    data: object, check: Check, plan: tuple[_Step, ...], origins: object
) -> Body | None:
    """The answers, results, distributions and sources of the verdict ``data`` of ``check``
    and the provenance ``origins`` (``_ABSENT``: there is none), when plain type checks find
    both in the shape the verdict schema and :func:`provenance_from_json` take, each answer
    fits its question as :func:`~checkprofile.answer_problem` asks (or more strictly), its
    thresholds give every recorded result, and each distribution is plainly one the core
    takes for its answer (:func:`_distribution`); ``None`` otherwise. ``plan`` reads each question
    (:func:`_plan`)."""
    if type(data) is not dict:
        return None
    keys = data.keys()
    truncated = data.get("truncated", False)
    if not (keys == _BODY_FIELDS or (keys == _BODY_FIELDS_TRUNCATED and truncated is True)):
        return None
    name, advisory, model, at = data["verdict"], data["advisory"], data["model"], data["at"]
    questions = data["questions"]
    if (
        type(name) is not str
        or type(advisory) is not bool
        or type(model) is not str
        or not model.strip()
        or type(at) is not str
        or type(questions) is not list
        or len(questions) != len(plan)
    ):
        return None
    absent = origins is _ABSENT
    if absent:
        origins = _NONE * len(plan)
    elif type(origins) is not list or len(origins) != len(plan) or name == "error":
        return None  # (an error verdict has no provenance to speak of)
    if name == "error":
        if not is_at_text(at):
            return None
        for question, entry in zip(check, questions, strict=True):
            if (
                type(entry) is not dict
                or entry.keys() != _QUESTION_FIELDS
                or entry["ask"] != question.ask
                or entry["kind"] != question.kind
                or entry["answer"] is not None
                or entry["result"] != "unsure"
            ):
                return None
        return (), ("unsure",) * len(plan), (None,) * len(plan), None
    read = [
        step(entry, origin) for step, entry, origin in zip(plan, questions, origins, strict=True)
    ]
    return _finish(name, model, at, read, absent)


def _finish(name: str, model: str, at: str, read: list[_Read | None], absent: bool) -> Body | None:
    """The body of a verdict named ``name`` whose questions read as ``read`` (``absent``: it
    has no provenance), when the model is named, the time is one, each question was plainly
    right and the name is the worst of their results; ``None`` otherwise."""
    if not model.strip() or not is_at_text(at) or None in read:
        return None
    answers, results, distributions, sources = zip(*read, strict=True)
    if _worst(results) != name:
        return None
    if absent:
        return answers, results, distributions, None
    if sources.count(None) == len(sources):
        return None  # provenance that knows no source is left out, not written
    return answers, results, distributions, sources


def _pairs(pairs: object, option: type) -> Distribution | None:
    """The distribution ``pairs`` (parsed JSON) as its (option, probability) pairs, when it
    is a non-empty list of ``[option, probability]`` lists, each option of type ``option``
    and each probability a number; ``None`` otherwise (see :func:`_distribution`)."""
    if type(pairs) is not list or not pairs:
        return None
    typed = []
    for pair in pairs:
        if type(pair) is not list or len(pair) != 2:
            return None
        name, probability = pair
        if type(name) is not option or (
            type(probability) is not float and type(probability) is not int
        ):
            return None
        typed.append((name, probability))
    return tuple(typed)


_NO_ORIGIN = Provenance()
_ABSENT = object()
_NONE = [None]


def _origin(origin: object) -> tuple[Any, Any]:
    """The source and distribution (as written: ``None`` for none) of a provenance entry that
    is not null: ``(None, None)`` for ``{}``, ``(False, None)`` for an entry the fast path
    leaves to the full reading."""
    if type(origin) is not dict:
        return False, None
    if not origin:
        return None, None
    source = origin.get("source")
    if type(source) is not str or source not in _SOURCES:
        return False, None
    if len(origin) == 1:
        return source, None
    if len(origin) != 2 or "distribution" not in origin:
        return False, None
    return source, origin["distribution"]
