"""The conformance corpus: ``check-1`` behaviour as language-neutral cases, and their runner.

The corpus ships in this package (``cases/<stage>/*.yaml``, one YAML sequence of cases per
file, each case described by ``case.schema.json``). Another implementation runs the same files
against its own code; this module runs them against checkprofile::

    from checkprofile.conformance import run_corpus
    failed = [result for result in run_corpus() if not result.passed]

The YAML files are the corpus. Beside them, ``corpus.json`` holds the same cases as JSON,
written by ``python tools/gen_conformance.py`` with the SHA-256 of every file it
was made from: the default corpus is read from it only while every YAML file and the schema are
byte for byte what it was made from (reading YAML in pure Python is most of a run's cost), and
from the YAML otherwise. The test suite fails when it is stale.

``docs/conformance.md`` describes the format for implementers in any language. Loading refuses
a corpus that is unreadable or does not match the schema with :class:`CorpusError` (one line,
naming the file and the JSON Pointer); a case whose expectation differs from what the library
does is a :class:`CaseResult` with ``passed`` false and a one-line ``diff``.
"""

from __future__ import annotations

from ._corpus import CORPUS_JSON as CORPUS_JSON  # tools/gen_conformance.py writes it
from ._corpus import (
    STAGES,
    Case,
    CorpusError,
    Stage,
    case_schema,
    default_directory,
    load_cases,
)
from ._corpus import _parse as _parse  # the tests read a YAML file as the corpus does
from ._corpus import corpus_json as corpus_json  # the JSON form that tool writes
from ._runner import CaseResult, covered_decisions, run_case, run_cases, run_corpus

__all__ = [
    "STAGES",
    "Case",
    "CaseResult",
    "CorpusError",
    "Stage",
    "case_schema",
    "covered_decisions",
    "default_directory",
    "load_cases",
    "run_case",
    "run_cases",
    "run_corpus",
]
