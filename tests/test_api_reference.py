"""The public surface changes only on purpose: docs/api.md is what the code gives.

Every signature a host calls (a keyword-only option, a default, a class's fields) and every
public constant is on that page, written by tools/gen_api.py from the code. A change that was
meant is made by running the tool, and shows in the page's diff; one that was not (an option
made positional, a default moved by one) fails here.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import checkprofile
import gen_api

ROOT = Path(__file__).resolve().parent.parent


def test_the_api_reference_is_what_the_code_gives() -> None:
    page = gen_api.PAGE.read_text(encoding="utf-8")
    assert page == gen_api.render(), "docs/api.md is out of date: run python tools/gen_api.py"


def test_every_public_module_is_in_the_reference() -> None:
    # A public module is one whose dotted name has no part starting with "_".
    public = {
        info.name
        for info in pkgutil.walk_packages(checkprofile.__path__, "checkprofile.")
        if not any(part.startswith("_") for part in info.name.split("."))
    }
    assert public | {"checkprofile"} == set(gen_api.MODULES)


def test_every_exported_name_is_on_the_page() -> None:
    page = gen_api.render()
    for name in (*gen_api.MODULES, *gen_api.WRITER_MODULES):
        module = importlib.import_module(name)
        section = page.split(f"\n## `{name}`\n", 1)[1].split("\n## `", 1)[0]
        for public in module.__all__:
            given = re.search(rf"^(?:class |def )?{re.escape(public)}\b", section, re.MULTILINE)
            again = f"`{public}` (`" in section
            assert given or again, f"{name}.{public} is not on the page"


def test_a_keyword_only_option_made_positional_shows_on_the_page() -> None:
    def before(check: object, *, limits: object = None) -> None: ...

    def after(check: object, limits: object = None, /) -> None: ...

    assert gen_api._signature(before) == "(check: object, *, limits: object = None) -> None"
    assert gen_api._signature(after) == "(check: object, limits: object = None, /) -> None"


def test_a_default_is_shown_by_its_value() -> None:
    def attempts(verdict: object, *, attempts: int = 1, quiet=False) -> None: ...  # type: ignore[no-untyped-def]

    assert gen_api._signature(attempts) == (
        "(verdict: object, *, attempts: int = 1, quiet=False) -> None"
    )


def test_the_tool_says_a_stale_page_is_out_of_date_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "docs" / "api.md"
    stale.parent.mkdir()
    stale.write_text("# API reference\n", encoding="utf-8")
    monkeypatch.setattr(gen_api, "ROOT", tmp_path)
    monkeypatch.setattr(gen_api, "PAGE", stale)
    assert gen_api.main(["--check"]) == 1
    assert capsys.readouterr().out == "docs/api.md is out of date: run python tools/gen_api.py\n"
    assert stale.read_text(encoding="utf-8") == "# API reference\n"
    assert gen_api.main([]) == 0
    assert gen_api.main(["--check"]) == 0
    assert stale.read_text(encoding="utf-8") == gen_api.render()


def test_the_helpers_a_backend_is_written_with_are_in_the_reference() -> None:
    # Each private adapters module docs/writing-an-evaluator.md names a helper of (`_x.name`,
    # `_x`, or imported from).
    guide = (ROOT / "docs" / "writing-an-evaluator.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`_(\w+)[`.]", guide)) | set(
        re.findall(r"adapters\._(\w+) import", guide)
    )
    assert {f"checkprofile.adapters._{name}" for name in named} == set(gen_api.WRITER_MODULES)


def test_the_reference_is_listed_in_the_docs_index() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert "[api.md](api.md)" in index
