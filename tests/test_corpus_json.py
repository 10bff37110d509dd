"""The corpus's JSON form: the same cases as the YAML, current, and used only while it is.

``checkprofile/conformance/corpus.json`` is written from the YAML files by the generator, with
the SHA-256 of every file it was made from. The runner reads it instead of parsing YAML (most
of a run's cost) only while every file is byte for byte what it was made from; an edited case
file is read as YAML, so the YAML stays the corpus.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from checkprofile import conformance
from checkprofile.conformance import CORPUS_JSON, corpus_json, default_directory, load_cases

PACKAGE = Path(conformance.__file__).resolve().parent.parent
FORM = PACKAGE / "conformance" / CORPUS_JSON


def test_the_json_form_is_current() -> None:
    assert FORM.read_text(encoding="utf-8") == corpus_json(), (
        f"{FORM} is out of date: run python tools/gen_conformance.py"
    )


def test_the_json_form_holds_the_cases_of_the_yaml() -> None:
    shipped = load_cases()  # from the JSON form
    from_yaml = load_cases(default_directory())  # a directory given: always its YAML
    assert [(c.id, c.stage, c.rule, c.decisions, c.source, c.index) for c in shipped] == [
        (c.id, c.stage, c.rule, c.decisions, c.source, c.index) for c in from_yaml
    ]
    assert [dict(c.data) for c in shipped] == [dict(c.data) for c in from_yaml]


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "site"
    shutil.copytree(PACKAGE, copy / "checkprofile", ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _python(code: str, path: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=path,
        env={**os.environ, "PYTHONPATH": str(path)},
        timeout=120,
        check=True,
    )
    return done.stdout


def test_an_edited_case_file_is_read_as_yaml_not_from_the_stale_form(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    cases = copy / "checkprofile" / "conformance" / "cases" / "grading" / "yes_no.yaml"
    text = cases.read_text(encoding="utf-8")
    first_id = next(c.id for c in load_cases() if c.source.endswith("grading/yes_no.yaml"))
    cases.write_text(text.replace(first_id, first_id + "-edited", 1), encoding="utf-8")
    code = (
        "import sys; from checkprofile.conformance import load_cases;"
        "print(sorted(c.id for c in load_cases() if c.id.endswith('-edited')));"
        "print('ruamel' in sys.modules)"
    )
    assert _python(code, copy).splitlines() == [f"['{first_id}-edited']", "True"]


def test_the_shipped_corpus_loads_without_yaml_or_jsonschema(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    code = (
        "import sys; from checkprofile.conformance import load_cases, run_cases;"
        "results = run_cases(load_cases());"
        "print(len(results), all(r.passed for r in results));"
        "print(sorted(m for m in ('ruamel', 'jsonschema') if m in sys.modules))"
    )
    assert _python(code, copy).splitlines() == [f"{len(load_cases())} True", "[]"]
