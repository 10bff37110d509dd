"""Reading audit lines fast: at close to the cost of parsing their JSON.

The reader sends each line the writer laid out to the fast reading of its kind (verdicts:
``_audit_fast_verdicts``, decisions: ``_audit_fast_decisions``), and anything they do not find
plainly right, right or wrong, to the strict reading (``_audit_strict``), which explains what
is wrong. What a fast reading reads comes as its facts (:class:`VerdictFacts`,
:class:`DecisionFacts`), exactly the record the strict reading would build.
"""

from __future__ import annotations

import sys
from typing import Final

from ...._keepable import recordable_problem
from ....errors import MaterialError, VerdictError
from ..._decide._decisions import DecisionRequiredError
from .._kinds import AuditRecord
from .._strict import AuditError, TornLine, line_data, line_text, record_from_json
from ._decisions import DecisionFacts, decision_facts, decision_line
from ._plain import _PLAIN_DECODER
from ._verdicts import Distribution, Plain, VerdictFacts, _Checks, verdict_facts, verdict_line

__all__ = ["DecisionFacts", "Distribution", "Facts", "Plain", "VerdictFacts"]

#: A record as the fast path read it.
Facts = VerdictFacts | DecisionFacts

#: The longest line read the fast way, in characters: a writer's verdict of a check of dozens of
#: questions is a few KB. A longer line goes the strict way, whose cost grows with the line
#: alone (the fast way's pattern and reader grow with its check).
FAST_LINE: Final = 64 * 1024

# The plain decoder turns digits into ints itself: only where Python bounds their length
# (3.10.7 and later, unless a host lifted the bound), so a long run of digits costs little.
_PLAIN_ROUTE: Final = 0 < getattr(sys, "get_int_max_str_digits", lambda: 0)() <= 10_000


class _Reader:
    """Audit lines into typed records, at close to the cost of parsing their JSON.

    :func:`record_from_json` is the authority on what a record is, and says what is wrong
    with one that is not: it validates each verdict against the verdict schema, parses its
    check, and grades its answers again. The fast path here takes a verdict record only when
    plain type checks find every field in the shape the schema asks for, its check is one
    already parsed (:class:`_Checks`), and the core's own thresholds give each recorded
    result; and a decision record only when it is one of the plain decisions people make
    most (:func:`~..._decide._decisions.plain_decision`). It builds exactly the record
    :func:`record_from_json` would (the tests compare the two on generated and broken
    records). Anything else, right or wrong, goes the full way. ``fast=False`` reads every
    line the full way (the tests' reference).
    """

    def __init__(self, *, fast: bool = True) -> None:
        self._checks = _Checks()
        self._fast = fast

    def line(self, name: str, number: int, line: bytes) -> AuditRecord | TornLine:
        """The record on ``line`` (its bytes, without the newline), or the fragment a writer
        left; raises :class:`AuditError` for anything else."""
        read = self.read(name, number, line)
        return read.record() if isinstance(read, (VerdictFacts, DecisionFacts)) else read

    def read(self, name: str, number: int, line: bytes) -> AuditRecord | Facts | TornLine:
        """As :meth:`line`, but a record the fast path reads comes as its facts."""
        text = line_text(name, number, line)
        if isinstance(text, TornLine):
            return text
        if (
            self._fast
            and _PLAIN_ROUTE
            and len(text) <= FAST_LINE
            and text.startswith('{"record":"')
            and "\\" not in text
        ):
            # A line as the writer writes it: parsed by the json module alone (its hooks cost a
            # third more), and taken when the fast path finds it right and its keys add up to
            # what the text holds (a repeated key would not). A verdict whose check was seen
            # before, in a line of the same layout, has only what follows its check parsed.
            facts: Facts | None = None
            verdict = text.startswith('{"record":"verdict"')
            if verdict:
                facts = verdict_line(self._checks, text)
            elif text.startswith('{"record":"decision"'):
                facts = decision_line(text)
            if facts is not None:
                return facts
            if verdict and self._checks.full:
                # Past the checks it learns, a verdict is read fast only by a check it knows
                # as written: any other line goes the strict way at once.
                return self._strictly(name, number, text)
            try:
                plain = _PLAIN_DECODER.decode(text)
            except (ValueError, RecursionError):
                plain = None
            if type(plain) is dict:
                kind = plain.get("record")
                found: Facts | None = None
                if kind == "verdict":
                    found = verdict_facts(self._checks, plain, text)
                elif kind == "decision":
                    found = decision_facts(plain, text)
                if found is not None:
                    return found
        return self._strictly(name, number, text)

    def _strictly(self, name: str, number: int, text: str) -> AuditRecord | Facts | TornLine:
        """The record on the line ``text`` read the strict way (its fields may still be taken
        as facts: :meth:`record`)."""
        data = line_data(name, number, text)
        if isinstance(data, TornLine):
            return data
        try:
            return self.record(data, fast=len(text) <= FAST_LINE)
        except DecisionRequiredError as error:
            raise AuditError(name, number, f"decision: {error}") from None
        except (VerdictError, MaterialError, ValueError, TypeError) as error:
            raise AuditError(name, number, str(error)) from None
        except RecursionError:
            raise AuditError(name, number, "not a record: nested too deeply") from None

    def record(self, data: object, *, fast: bool = True) -> AuditRecord | Facts:
        """The record ``data``, read strictly (no key repeated, no lone surrogate); ``fast``:
        its facts may be taken by plain checks (not for a line past :data:`FAST_LINE`)."""
        if self._fast and fast and type(data) is dict:
            kind = data.get("record")
            found: Facts | None = None
            # Past the checks the reader learns, a verdict is taken fast only by its check's
            # text in a writer's line (:meth:`read`): a check is not looked for here.
            if kind == "verdict" and not self._checks.full:
                found = verdict_facts(self._checks, data)
            elif kind == "decision" and _keepable(data.get("decision")):
                # A decision no store can keep (a NUL, a lone surrogate) is the strict
                # reading's to refuse, in its words.
                found = decision_facts(data)
            if found is not None:
                return found
        return record_from_json(data)


def _keepable(decision: object) -> bool:
    """Whether every store can keep the texts of ``decision`` (no NUL, no lone surrogate)."""
    return recordable_problem(decision, sized=False) is None
