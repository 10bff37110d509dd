"""A recommendation for the whole check, with a guarantee: the thresholds of all its
questions searched together, under the profile's worst-of rule, for the fewest cases sent to a
person such that the check's wrong passes (a pass the person refused) and wrong fails (a fail
the person accepted) stay, each as a share of all submissions, at most the rates the user sets,
with the confidence the user sets.

The method is Learn then Test with fixed-sequence testing (Angelopoulos, Bates, Candès,
Jordan and Lei, 2021), which holds out of sample whatever the model or the people do:

1. The cases are split in two by a keyed hash of each case's content (what the model
   answered, what the person decided, and how many cases of the same content came before:
   see :func:`test_cases`), never by a run's id or a submission key, so the recommendation is
   a function of the records' content and the options: a **fit** third and a **test** two
   thirds (the test needs the more cases: its bounds, not the path, decide how far the
   thresholds can go).
2. On the fit half a **path** of thresholds is built, from the strictest (every question
   ``pass: 1``, no ``fail``, ``confidence: 1``: almost everything to a person) to laxer ones,
   one step at a time: each step lowers one question's ``pass`` or ``confidence`` or raises its
   ``fail`` to the next value where a fit case changes, choosing the step that spares the most
   cases from a person for the least added risk, as long as the fit half's wrong passes and
   wrong fails stay within the rates. On the path a case only ever moves from unsure to pass
   or fail, so both risks grow and the cases sent to a person shrink along it.
3. On the test half, the thresholds of the path are tested in order: for each, the null
   hypothesis "wrong passes exceed their rate, or wrong fails exceed theirs" is rejected when
   the exact binomial (Clopper–Pearson) p-value of both counts is at most ``1 - confidence``.
   Testing stops at the first thresholds not rejected. Since the path was made without the
   test half, every rejected thresholds keep both risks within their rates at once, with
   probability at least ``confidence``; the recommendation is the last of them (the fewest
   cases to a person).

**A check of one question** needs no path, and so no split: its thresholds already come in
an order that no data chose, along which its risks only grow. Every case tests them:

- yes/no: wrong passes depend on ``pass`` alone and wrong fails on ``fail`` alone, so
  ``pass`` is tested from 1 down (the null "wrong passes exceed their rate", exact binomial
  test) and ``fail`` from 0 up ("wrong fails exceed theirs"), each by fixed-sequence
  testing at half of ``1 - confidence`` (Bonferroni over the two sequences); the
  recommendation is the lowest ``pass`` and the highest ``fail`` rejected (``fail`` at most
  ``pass``), and both rates hold at once with probability at least ``confidence``. Its
  bounds are the exact upper bounds at ``1 - (1 - confidence) / 2``.
- choice and rubric: ``confidence`` from 1 down, both nulls tested together at
  ``1 - confidence``, stopping at the first not rejected.

Each sequence rejects every threshold that Learn-then-Test with Holm over the same grid would
(Holm tests each at ``(1 - confidence) / m``, m at least 2 while any is left, and the tails
only grow along the sequence), so it never sends more cases to a person than that
procedure (``benchmarks/bench_ltt.py`` measures both). ``fit_cases`` is then 0 and
``test_cases`` every case.

**A check of several questions** (two yes/no questions, or three, or a yes/no and choices:
see ``_grid``) is tested without a split, by Learn-then-Test with Holm over the product of its
questions' grids (of 0.05, or 0.10 where 0.05 has too many combinations): trying every
combination on every case finds thresholds a path does not. From :data:`GRID_ALONE` cases the
grid alone is tested, at ``1 - confidence``; below, the path too, the grid at
:data:`GRID_SHARE` of that level and the path at the rest, so both promises hold at once with
probability at least ``confidence`` (Bonferroni), and the one sending fewer cases to a person
is the recommendation (the path's on a tie). ``benchmarks/bench_ltt_many.py`` measured why
for two questions, ``bench_ltt_three.py`` for three: on 300 cases the path often spares more
than the grid, from 1,000 it spares no more, and giving the path part of the level there
costs the grid more than the path gains. A check whose grid has too many combinations (four
yes/no questions and up), or a month too large to try them all on, is recommended by its
path alone.

When not even the strictest thresholds are rejected (too few cases, or a model whose surest
answers are wrong too often), nothing is promised, and the recommendation shows the path's
thresholds with the lowest bounds as the closest.

Every answer is graded with the core's :func:`checkprofile.grade` and every verdict is the
core's :func:`checkprofile.worst_of`, so the recommendation is what the check would do.
"""

from __future__ import annotations

import bisect
import collections
import functools
import hashlib
import itertools
import math
import operator
import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final, Literal

import attrs

from ..._check import Check, ChoiceQuestion, Question, YesNoQuestion
from ..._verdict import Answer, ChoiceAnswer, Result, RubricAnswer, YesNoAnswer, grade, worst_of
from ._binomial import binomial_cdf, upper_bound
from ._columns import GRID, RESULTS, Column, Label, negated, selected
from ._figures import Figures, Person, figures_of
from ._grid import grid_choice, grid_step
from ._search import Setting, Thresholds, thresholds_of

__all__ = [
    "CONFIDENCE",
    "MAX_WRONG_FAIL",
    "MAX_WRONG_PASS",
    "Recommendation",
    "binomial_cdf",
    "recommend",
    "test_cases",
    "upper_bound",
]

#: Thresholds on the path move in steps of this many grid values (0.05): finer steps would
#: follow the fit half's noise, and the test half would stop the path sooner.
STRIDE: Final = 1

#: From this many cases, a check with a grid is recommended by Holm over the grid alone, at
#: the whole level: there the path, at part of the level, spared a person no more than the grid
#: at the whole level would (``benchmarks/bench_ltt_many.py``, ``bench_ltt_three.py``), and
#: halving the grid's level sent a third of a point more to a person than Learn-then-Test
#: with Holm.
GRID_ALONE: Final = 1_000

#: Below :data:`GRID_ALONE` cases, the share of the level the grid is tested at; the path
#: takes the rest (Bonferroni: both promises hold at once). Halves let the grid lose to
#: Learn-then-Test with Holm where the path is weak (three questions, one of them useless:
#: 3.4 points more to a person on 300 cases, beyond the interval); at four fifths no
#: measured world of two or three questions sent more than LTT-Holm on 300 cases, and the
#: path still spared 0.2 to 4 points in each (``bench_ltt_many.py``, ``bench_ltt_three.py``).
GRID_SHARE: Final = 0.8

#: The defaults: at most 5% of submissions passed that a person refused, at most 10% failed
#: that a person accepted, promised with 90% confidence.
MAX_WRONG_PASS: Final = 0.05
MAX_WRONG_FAIL: Final = 0.10
CONFIDENCE: Final = 0.90


#: How many other splits of the same cases a check of several questions is also
#: recommended on, to say how much the recommendation depends on its split; only up to
#: SPREAD_CASES cases (beyond, the split moves it little, and each split costs a search).
OTHER_SPLITS: Final = 4
SPREAD_CASES: Final = 20_000


#: How thresholds were tested: ``sequences`` (one question: every case, in an order no case
#: chose), ``path`` (a path fitted on some cases, tested on the others), ``grid`` (every
#: combination of a grid, on every case, Holm's step-down: see ``_grid``).
Method = Literal["sequences", "path", "grid"]


@attrs.frozen(kw_only=True)
class Recommendation:
    """The check's recommended ``thresholds`` (one per question, in order) and whether they
    are ``promised`` to keep wrong passes within ``max_wrong_pass`` and wrong fails within
    ``max_wrong_fail`` (each a share of all submissions) with ``confidence``. ``at_recommended``
    holds the verdict's figures under them over every case; ``wrong_pass_bound`` and
    ``wrong_fail_bound`` are the exact one-sided upper bounds, at ``confidence``, of the two
    risks on the ``test_cases`` (the other ``fit_cases`` built the path; ``path`` thresholds
    were on it, of which ``rejected`` passed the test). ``other_splits``: for a check of
    several questions on at most :data:`SPREAD_CASES` cases, the share of cases a person
    would see under the recommendation of each of :data:`OTHER_SPLITS` other splits of the
    same cases (``None`` where that split promises nothing): how much the recommendation
    depends on its split; empty otherwise. ``method``: how the thresholds were tested
    (:data:`Method`); for ``grid``, ``path`` counts the combinations tested, the bounds are
    at the level the chosen one was rejected at, and ``grid_step`` is the grid's step in
    hundredths (``None`` for the other methods)."""

    promised: bool
    max_wrong_pass: float
    max_wrong_fail: float
    confidence: float
    thresholds: tuple[Thresholds, ...]
    at_recommended: Figures
    wrong_pass_bound: float
    wrong_fail_bound: float
    fit_cases: int
    test_cases: int
    path: int
    rejected: int
    other_splits: tuple[float | None, ...] = ()
    method: Method = "path"
    grid_step: int | None = None


# --- the cases of one half, under thresholds moved one step at a time -------------------------

_worst_of = functools.cache(worst_of)

# A question's setting: see _search.Setting. Each question's cases are kept by their cell
# (Column.cells: the answers of one code and one grid bucket, which grade alike under every
# grid setting): a case reaches GRID[k] when its bucket is above k.

# A case's state packs what its verdict needs into one int: bit 0 says whether the person
# refused the submission, bits 2q+1 and 2q+2 hold question q's result as its index in
# RESULTS. A move of question q adds one number to the state of every case it moves, and the
# verdict of a state is the core's worst-of, found once for all the cases of that state.
_INDEX: Final[dict[Result, int]] = {result: index for index, result in enumerate(RESULTS)}


def _strictest(question: Question) -> Setting:
    return (100, 0) if isinstance(question, YesNoQuestion) else (100,)


@attrs.frozen
class _Change:
    """The cases of one cell whose result changes under a new setting: the ``cell``, its
    result ``before`` and ``after``, and how many of its cases are in each state."""

    cell: int
    before: Result
    after: Result
    states: Counter[int]


def _tally(moves: Counter[tuple[Result, Result, bool]]) -> tuple[int, int, int]:
    """How wrong passes, wrong fails and unsure results change by ``moves``: counts of
    (result before, result after, whether the result should not pass)."""
    tally = [0, 0, 0]
    for (before, after, refused), count in moves.items():
        for value, sign in ((before, -count), (after, count)):
            tally[0] += sign * (value == "pass" and refused)
            tally[1] += sign * (value == "fail" and not refused)
            tally[2] += sign * (value == "unsure")
    return tally[0], tally[1], tally[2]


class _Half:
    """Cases under settings, with their verdicts' counts kept as settings move. Each case
    keeps a state (see _INDEX); each question's cases are kept by their cells
    (``cases_of[q][cell]``), so the cases a move changes are those of a few cells, and what a
    move would change is counted by their states."""

    def __init__(
        self,
        check: Check,
        columns: Sequence[Column],
        cells: Sequence[Sequence[int]],
        refused: bytes,
        wrong_to_pass: Sequence[bytes],
    ):
        """``cells`` of each question's cases, whether the person ``refused`` each, and per
        question and case whether its own result should not pass."""
        self.check = check
        self.columns = columns
        self.cases = len(refused)
        self.settings = [_strictest(question) for question in check]
        self._graded: dict[tuple[int, Setting], dict[int, Result]] = {}
        # The changes of the settings tried since the last move (see _changes).
        self._tried: dict[tuple[int, Setting], list[_Change]] = {}
        self._verdicts: dict[int, Result] = {}
        self.cases_of: list[dict[int, array[int]]] = []
        # Per question: its cells by bucket, the buckets holding a case, and how many cases
        # of each cell should not pass.
        self.by_bucket: list[list[list[int]]] = []
        self.occupied: list[list[int]] = []
        self.wrong_in: list[Counter[int]] = []
        state = list(refused)
        for q, (mine, wrong) in enumerate(zip(cells, wrong_to_pass, strict=True)):
            cases = {cell: array("i") for cell in sorted(set(mine))}
            collections.deque(map(array.append, map(cases.__getitem__, mine), range(self.cases)), 0)
            self.cases_of.append(cases)
            by_bucket: list[list[int]] = [[] for _ in range(len(GRID) + 1)]
            for cell in cases:
                by_bucket[cell & 127].append(cell)
            self.by_bucket.append(by_bucket)
            self.occupied.append([bucket for bucket, found in enumerate(by_bucket) if found])
            self.wrong_in.append(Counter(itertools.compress(mine, wrong)))
            setting = self.settings[q]
            packed = {cell: _INDEX[self._grade(q, cell, setting)] << 2 * q + 1 for cell in cases}
            state = list(map(operator.add, state, map(packed.__getitem__, mine)))
        self.state = state
        self.counts: Counter[tuple[Result, Person]] = Counter()
        for each, count in Counter(state).items():
            self.counts[(self._verdict(each), _person(each))] += count

    def _verdict(self, state: int) -> Result:
        """The verdict of the cases in ``state``: the worst of their questions' results."""
        found = self._verdicts.get(state)
        if found is None:
            results = (RESULTS[state >> 2 * q + 1 & 3] for q in range(len(self.check)))
            found = self._verdicts[state] = _worst_of(tuple(results))
        return found

    def _grade(self, q: int, cell: int, setting: Setting) -> Result:
        """The result of question ``q``'s answers in ``cell`` under ``setting``: an answer
        of its code at ``GRID[bucket - 1]`` grades as every answer of the bucket does under
        grid thresholds (see ``_calibrate_search._Sweep``)."""
        graded = self._graded.get((q, setting))
        if graded is None:
            graded = self._graded[(q, setting)] = {}
        found = graded.get(cell)
        if found is None:
            question = thresholds_of(self.check[q], setting).apply(self.check[q])
            found = graded[cell] = grade(question, self.columns[q].of_cell(cell))
        return found

    def _changes(self, q: int, setting: Setting) -> list[_Change]:
        """The cells of question ``q`` whose result changes under ``setting``, with the
        states of their cases. Only the cells of the buckets between the old and the new
        thresholds can change."""
        tried = self._tried.get((q, setting))
        if tried is not None:
            return tried
        old = self.settings[q]
        touched = dict.fromkeys(
            cell
            for a, b in zip(old, setting, strict=True)
            for bucket in range(min(a, b) + 1, max(a, b) + 1)
            for cell in self.by_bucket[q][bucket]
        )
        changes = []
        for cell in touched:
            before, after = self._grade(q, cell, old), self._grade(q, cell, setting)
            if before != after:
                states = Counter(map(self.state.__getitem__, self.cases_of[q][cell]))
                changes.append(_Change(cell, before, after, states))
        self._tried[(q, setting)] = changes
        return changes

    @staticmethod
    def _moved(q: int, change: _Change) -> int:
        """What ``change`` adds to the state of each of its cases."""
        return _INDEX[change.after] - _INDEX[change.before] << 2 * q + 1

    def delta(self, q: int, setting: Setting) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """How wrong passes, wrong fails and cases to a person would change: of the verdicts,
        and of question ``q``'s own results (against the decision on the whole submission)."""
        verdicts: Counter[tuple[Result, Result, bool]] = Counter()
        own: Counter[tuple[Result, Result, bool]] = Counter()
        for change in self._changes(q, setting):
            moved = self._moved(q, change)
            for state, count in change.states.items():
                verdicts[(self._verdict(state), self._verdict(state + moved), state & 1 == 1)] += (
                    count
                )
            wrong = self.wrong_in[q][change.cell]
            own[(change.before, change.after, True)] += wrong
            own[(change.before, change.after, False)] += len(self.cases_of[q][change.cell]) - wrong
        return _tally(verdicts), _tally(own)

    def move(self, q: int, setting: Setting) -> None:
        state = self.state
        for change in self._changes(q, setting):
            moved = self._moved(q, change)
            for case in self.cases_of[q][change.cell]:
                state[case] += moved
            for each, count in change.states.items():
                person = _person(each)
                self.counts[(self._verdict(each), person)] -= count
                self.counts[(self._verdict(each + moved), person)] += count
        self.settings[q] = setting
        self._tried.clear()

    @property
    def wrong(self) -> tuple[int, int]:
        return self.counts[("pass", "refused")], self.counts[("fail", "accepted")]

    def steps(self, q: int) -> list[Setting]:
        """The next settings of question ``q``: each threshold moved, in steps of
        :data:`STRIDE` grid values, to the next where a case of this half changes (a pass
        lowered, a fail raised, a confidence lowered)."""
        occupied, setting = self.occupied[q], self.settings[q]
        found = []
        # Lowering a threshold at GRID[k] to GRID[j] lets through the buckets in (j, k].
        below = bisect.bisect_right(occupied, setting[0])
        if below:
            lowered = (occupied[below - 1] - 1) // STRIDE * STRIDE
            if len(setting) == 1 or lowered >= setting[1]:
                found.append((max(lowered, 0), *setting[1:]))
        if len(setting) == 2:
            # Raising fail from GRID[f] to GRID[g] fails the buckets in (f, g].
            above = bisect.bisect_right(occupied, setting[1])
            if above < len(occupied):
                raised = min(-(-occupied[above] // STRIDE) * STRIDE, setting[0])
                if occupied[above] <= raised:
                    found.append((setting[0], raised))
        return [step for step in found if step != setting]


def _half(
    check: Check,
    columns: Sequence[Column],
    refused: bytes,
    labels: Sequence[Sequence[Label | None]],
    half: bytes,
) -> _Half:
    """The cases where ``half`` is 1, as a :class:`_Half`."""
    mine = bytes(itertools.compress(refused, half))
    return _Half(
        check,
        columns,
        [selected(column.cells(), half) for column in columns],
        mine,
        _wrong_to_pass(check, mine, list(itertools.compress(labels, half)) if labels else ()),
    )


def _person(state: int) -> Person:
    return "refused" if state & 1 else "accepted"


def _wrong_to_pass(
    check: Check, refused: bytes, labels: Sequence[Sequence[Label | None]]
) -> list[bytes]:
    """Per question and case: whether the question's own result should not pass, by the
    person's label of it where there is one, else by their decision on the whole."""
    if not labels:
        return [refused] * len(check)
    return [
        bytes(
            no if not row or (label := row[q]) is None else _label_refuses(question, label)
            for row, no in zip(labels, refused, strict=True)
        )
        for q, question in enumerate(check)
    ]


def _label_refuses(question: Question, label: Label) -> bool:
    """Whether a person's ``label`` of ``question`` says its answer should not pass."""
    answer: Answer
    if isinstance(question, YesNoQuestion):
        answer = YesNoAnswer(1.0 if label is True else 0.0)
    elif isinstance(question, ChoiceQuestion):
        answer = ChoiceAnswer(str(label), 1.0)
    else:
        answer = RubricAnswer(int(label), 1.0)
    return grade(question, answer) != "pass"


#: What the split's hash is keyed with: a new value would be a new split for every check.
_SPLIT_KEY: Final = b"checkprofile calibration split 1"


def test_cases(
    columns: Sequence[Column],
    refused: bytes,
    labels: Sequence[Sequence[Label | None]] = (),
    *,
    salt: int = 0,
) -> bytes:
    """Whether each case is among the test cases (about two in three; 1) or the fit cases
    (0). A keyed hash decides, of the case's content (what the model answered: each
    question's name or level and its probability or confidence, exactly; what the person
    decided; their labels, if any) and of how many cases of the same content came before it:
    never a run's id or a submission key. Cases of one content are alike, so which of them
    comes first changes nothing: the split is a function of the records' content, and the
    same records under other ids (in any order) give the same split and the same
    recommendation. Counting the cases of one content keeps them from all falling on one
    side (a trail whose answers take a few values holds many such cases): each is split as
    if by a coin of its own. ``salt`` chooses another split of the same kind."""
    n = len(refused)
    parts: list[Iterable[bytes]] = []
    for column in columns:
        values = array("d", column.values)
        if sys.byteorder != "little":
            values.byteswap()
        raw = values.tobytes()
        parts.append([raw[i : i + 8] for i in range(0, 8 * n, 8)])
        if column.kind != "yes_no":
            named = {
                code: f"{column.named(code)}\0".encode("utf-8", "surrogatepass")
                for code in set(column.codes)
            }
            parts.append(list(map(named.__getitem__, column.codes)))
    parts.append([b"\1" if no else b"\0" for no in refused])
    if labels:
        parts.append([_labels_bytes(row) for row in labels])
    # Each row opens with the split's key, so its hash is keyed (and salted) at no cost
    # (the key repeats without end: the other parts, all as long, set the rows).
    parts.insert(0, itertools.repeat(_SPLIT_KEY + bytes([salt])))
    seen: dict[bytes, int] = {}
    found = bytearray(n)
    blake2b = hashlib.blake2b
    for case, row in enumerate(map(b"".join, zip(*parts, strict=False))):
        before = seen.get(row, 0)
        seen[row] = before + 1
        # The first case of a content is hashed as it is, the next with their count.
        counted = row + b"\xff" + before.to_bytes(8, "little") if before else row
        found[case] = blake2b(counted, digest_size=8).digest()[0] % 3 != 0
    return bytes(found)


def _labels_bytes(row: Sequence[Label | None]) -> bytes:
    """A case's labels as bytes that tell every two apart (``True`` from ``1``, ``"1"``)."""
    return "\0".join(
        "-" if label is None else f"{type(label).__name__[0]}{label}" for label in row
    ).encode("utf-8", "surrogatepass")


def recommend(
    check: Check,
    columns: Sequence[Column],
    refused: bytes,
    *,
    labels: Sequence[Sequence[Label | None]] = (),
    max_wrong_pass: float = MAX_WRONG_PASS,
    max_wrong_fail: float = MAX_WRONG_FAIL,
    confidence: float = CONFIDENCE,
    min_cases: int,
) -> Recommendation:
    """The recommendation for ``check`` from its cases (the ``columns`` of its answers, one
    per question; whether the person ``refused`` each, 1 or 0; their ``labels``, if any), as
    the module docstring describes: a function of the cases' content and the options, split
    by :func:`test_cases`."""
    if len(check) == 1:
        return _one_question(
            check,
            columns,
            refused,
            labels,
            max_wrong_pass=max_wrong_pass,
            max_wrong_fail=max_wrong_fail,
            confidence=confidence,
            min_cases=min_cases,
        )
    n, level = len(refused), 1 - confidence
    rates = (max_wrong_pass, max_wrong_fail)
    # A check with a grid (see the module docstring): from GRID_ALONE cases, Holm over the
    # grid alone, at the whole level; below, the path too, each at a share of it (both
    # promises then hold at once: Bonferroni), and the one sparing more is taken.
    step = grid_step(check, n)
    if step is not None and n >= GRID_ALONE:
        return _on_grid(check, columns, refused, *rates, confidence, min_cases, step, level)
    path_confidence = confidence if step is None else 1 - level * (1 - GRID_SHARE)
    spent = (*rates, path_confidence, min_cases)
    found = _split(check, columns, refused, labels, test_cases(columns, refused, labels), *spent)
    found = attrs.evolve(found, confidence=confidence)
    if n <= SPREAD_CASES:
        others = []
        for salt in range(1, OTHER_SPLITS + 1):
            tested = test_cases(columns, refused, labels, salt=salt)
            other = _split(check, columns, refused, labels, tested, *spent)
            others.append(other.at_recommended.to_person_share.value if other.promised else None)
        found = attrs.evolve(found, other_splits=tuple(others))
    if step is None:
        return found
    grid = _on_grid(
        check, columns, refused, *rates, confidence, min_cases, step, level * GRID_SHARE
    )
    spares_more = grid.at_recommended.to_person < found.at_recommended.to_person
    return grid if grid.promised and (spares_more or not found.promised) else found


def _on_grid(
    check: Check,
    columns: Sequence[Column],
    refused: bytes,
    max_wrong_pass: float,
    max_wrong_fail: float,
    confidence: float,
    min_cases: int,
    step: int,
    level: float,
) -> Recommendation:
    """The recommendation of Holm over the grid of ``step`` hundredths at ``level`` (of the
    ``confidence`` the whole recommendation promises; see ``_grid``); when it rejects
    nothing, the combination of the smallest p-value, as the closest."""
    grid = grid_choice(
        check,
        columns,
        refused,
        step=step,
        max_wrong_pass=max_wrong_pass,
        max_wrong_fail=max_wrong_fail,
        level=level,
    )
    n, counts = len(refused), grid.counts
    bound = 1 - (level / grid.tested if grid.level is None else grid.level)
    return Recommendation(
        promised=grid.level is not None,
        max_wrong_pass=max_wrong_pass,
        max_wrong_fail=max_wrong_fail,
        confidence=confidence,
        thresholds=tuple(
            thresholds_of(question, setting)
            for question, setting in zip(check, grid.settings, strict=True)
        ),
        at_recommended=figures_of(+counts, min_cases),
        wrong_pass_bound=upper_bound(counts[("pass", "refused")], n, bound),
        wrong_fail_bound=upper_bound(counts[("fail", "accepted")], n, bound),
        fit_cases=0,
        test_cases=n,
        path=grid.tested,
        rejected=grid.rejected,
        method="grid",
        grid_step=grid.step,
    )


def _split(
    check: Check,
    columns: Sequence[Column],
    refused: bytes,
    labels: Sequence[Sequence[Label | None]],
    tested: bytes,
    max_wrong_pass: float,
    max_wrong_fail: float,
    confidence: float,
    min_cases: int,
) -> Recommendation:
    """The recommendation by Learn then Test on the fit and ``tested`` cases."""
    fit, test = (_half(check, columns, refused, labels, half) for half in (negated(tested), tested))
    path = _path(fit, max_wrong_pass, max_wrong_fail)
    n = test.cases
    level = 1 - confidence
    rejected = 0
    chosen: tuple[list[Setting], Counter[tuple[Result, Person]], tuple[int, int]] | None = None
    closest = chosen
    for q, setting in path:
        if q >= 0:
            test.move(q, setting)
            fit.move(q, setting)
        wrong_pass, wrong_fail = test.wrong
        p_value = max(
            binomial_cdf(wrong_pass, n, max_wrong_pass),
            binomial_cdf(wrong_fail, n, max_wrong_fail),
        )
        here = (list(test.settings), fit.counts + test.counts, test.wrong)
        if n >= min_cases and p_value <= level:
            rejected += 1
            chosen = here
            continue
        # Fixed-sequence testing stops at the first thresholds not rejected. When that is the
        # first, the strictest, they are the closest: the bounds only grow along the path.
        closest = here
        break
    picked = chosen if chosen is not None else closest
    assert picked is not None
    settings, counts, (wrong_pass, wrong_fail) = picked
    return Recommendation(
        promised=chosen is not None,
        max_wrong_pass=max_wrong_pass,
        max_wrong_fail=max_wrong_fail,
        confidence=confidence,
        thresholds=tuple(
            thresholds_of(question, setting)
            for question, setting in zip(check, settings, strict=True)
        ),
        at_recommended=figures_of(+counts, min_cases),
        wrong_pass_bound=upper_bound(wrong_pass, n, confidence),
        wrong_fail_bound=upper_bound(wrong_fail, n, confidence),
        fit_cases=fit.cases,
        test_cases=n,
        path=len(path),
        rejected=rejected,
    )


def _one_question(
    check: Check,
    columns: Sequence[Column],
    refused: bytes,
    labels: Sequence[Sequence[Label | None]],
    *,
    max_wrong_pass: float,
    max_wrong_fail: float,
    confidence: float,
    min_cases: int,
) -> Recommendation:
    """The recommendation for a check of one question, on every case, with no split (see the
    module docstring): each threshold tested in a fixed order that no data chose."""
    whole = _half(check, columns, refused, labels, b"\1" * len(refused))
    n = whole.cases
    level = 1 - confidence
    enough = n >= min_cases
    tested = rejected = 0
    yes_no = isinstance(check[0], YesNoQuestion)
    # Yes/no: wrong passes follow pass alone and wrong fails fail alone, each tested on its
    # own sequence at half the level; otherwise both follow confidence, tested together.
    share = level / 2 if yes_no else level
    sequences: list[list[tuple[Setting, int]]] = (
        [[((p, 0), 0) for p in range(100, -1, -1)], [((100, f), 1) for f in range(101)]]
        if yes_no
        else [[((c,), 2) for c in range(100, -1, -1)]]
    )
    reached: list[int | None] = []
    for sequence in sequences:
        found = None
        for tried, which in sequence:
            whole.move(0, tried)
            wrong_pass, wrong_fail = whole.wrong
            tails = (
                binomial_cdf(wrong_pass, n, max_wrong_pass),
                binomial_cdf(wrong_fail, n, max_wrong_fail),
            )
            tested += 1
            p_value = max(tails) if which == 2 else tails[which]
            if not enough or p_value > share:
                break  # fixed-sequence testing stops at the first not rejected
            rejected += 1
            found = tried[0] if which != 1 else tried[1]
        reached.append(found)
    promised = None not in reached
    if not promised:
        setting: Setting = (100, 0) if yes_no else (100,)
    elif yes_no:
        passing, failing = reached
        assert passing is not None and failing is not None
        setting = (passing, min(failing, passing))
    else:
        assert reached[0] is not None
        setting = (reached[0],)
    whole.move(0, setting)
    wrong_pass, wrong_fail = whole.wrong
    bound = 1 - share
    return Recommendation(
        promised=promised,
        max_wrong_pass=max_wrong_pass,
        max_wrong_fail=max_wrong_fail,
        confidence=confidence,
        thresholds=(thresholds_of(check[0], setting),),
        at_recommended=figures_of(+whole.counts, min_cases),
        wrong_pass_bound=upper_bound(wrong_pass, n, bound),
        wrong_fail_bound=upper_bound(wrong_fail, n, bound),
        fit_cases=0,
        test_cases=n,
        path=tested,
        rejected=rejected,
        method="sequences",
    )


def _path(half: _Half, max_wrong_pass: float, max_wrong_fail: float) -> list[tuple[int, Setting]]:
    """The path from the strictest thresholds, as moves (question, its new setting); the
    first, (-1, ()), stands for the strictest themselves. ``half`` is moved to its end and
    back to the strictest thresholds. The path goes on while the fit half's wrong passes and
    wrong fails stay within their rates. (Stopping each risk where the test could still
    certify it, so as to spend both, was tried: it sent no fewer cases to a person in
    ``benchmarks/bench_ltt_many.py``.)"""
    n = max(half.cases, 1)
    allowed = (max_wrong_pass * n, max_wrong_fail * n)
    moves: list[tuple[int, Setting]] = [(-1, ())]
    start = list(half.settings)
    while True:
        best: tuple[tuple[float, float], int, Setting] | None = None
        wrong_pass, wrong_fail = half.wrong
        for q in range(len(half.check)):
            for setting in half.steps(q):
                (more_pass, more_fail, unsure), own = half.delta(q, setting)
                if wrong_pass + more_pass > allowed[0] or wrong_fail + more_fail > allowed[1]:
                    continue
                # The verdicts' change counts; while the other questions keep a case unsure,
                # the question's own change stands in for it, at a tenth of the weight, so
                # the questions loosen together rather than one of them all the way.
                spared = -unsure - own[2] / 10
                cost = (more_pass + own[0] / 10) / allowed[0]
                cost += (more_fail + own[1] / 10) / allowed[1]
                if spared <= 0 and cost <= 0:
                    continue  # nothing changes: not a step
                score = (math.inf if cost <= 0 else spared / cost, spared)
                if best is None or score > best[0]:
                    best = (score, q, setting)
        if best is None:
            break
        _, q, setting = best
        half.move(q, setting)
        moves.append((q, setting))
    for q, setting in enumerate(start):
        half.move(q, setting)
    return moves
