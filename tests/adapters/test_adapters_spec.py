"""evaluator_from_spec: the command line's --evaluator SCHEME:MODEL."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from loopback import (
    LoopbackServer,
    decisions,
    loopback_fixture,  # noqa: F401 (a pytest fixture)
    systemone,
)

from checkprofile import Limits, Material, Submission, parse_check, run_check_sync
from checkprofile.adapters import evaluator_from_spec
from checkprofile.adapters._spec import SCHEMES
from support import spec_full_form

ROOT = Path(__file__).resolve().parents[2]


def material() -> Material:
    return Material("Check the vendor.", "", {"steps": {}}, Submission({"cleared": True}))


@pytest.mark.parametrize(
    ("spec", "environ", "words"),
    [
        pytest.param(
            "jev-latest", {}, 'unknown evaluator "jev-latest": use one of', id="no-scheme"
        ),
        pytest.param("gemini:pro", {}, 'unknown evaluator "gemini:pro"', id="unknown-scheme"),
        pytest.param("systemone:", {}, "names no model: use systemone:MODEL", id="no-model"),
        pytest.param("systemone: ", {}, "names no model", id="blank-model"),
        pytest.param("systemone:jev", {}, "needs an API key: set TYPESAFE_API_KEY", id="no-key"),
        pytest.param(
            "openai-decisions:gpt-6-luna",
            {"OPENAI_API_KEY": "  "},
            "needs an API key: set OPENAI_API_KEY",
            id="blank-key",
        ),
    ],
)
def test_a_bad_spec_is_one_line_naming_it(spec: str, environ: dict[str, str], words: str) -> None:
    with pytest.raises(ValueError) as caught:
        evaluator_from_spec(spec, environ=environ)
    message = str(caught.value)
    assert words in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("spec", "sdk", "extra"),
    [
        ("systemone:jev-latest", "typesafe_sdk", "systemone"),
        ("openai-decisions:gpt-6-luna", "openai", "openai"),
        ("openai-chat:llama3", "openai", "openai"),
    ],
)
def test_a_missing_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, spec: str, sdk: str, extra: str
) -> None:
    # An entry of None in sys.modules is how Python marks a module as not importable.
    monkeypatch.setitem(sys.modules, sdk, None)
    with pytest.raises(ValueError) as caught:
        evaluator_from_spec(spec, environ={"TYPESAFE_API_KEY": "k", "OPENAI_API_KEY": "k"})
    # Both ways to install it: from an index, and from a clone (where no index has it yet).
    assert str(caught.value) == (
        f'evaluator "{spec}" needs the {extra} extra: pip install "checkprofile[{extra}]" '
        f'(in a clone of checkprofile: pip install -e ".[{extra}]")'
    )


def test_systemone_uses_the_sdk_environment(loopback: LoopbackServer) -> None:
    loopback.default = systemone()
    environ = {"TYPESAFE_API_KEY": "key-from-env", "TYPESAFE_BASE_URL": loopback.url}
    evaluator = evaluator_from_spec("systemone:jev-latest", environ=environ, timeout=5)
    assert evaluator.model == "jev-latest"
    outcome = run_check_sync(parse_check(spec_full_form()), material(), evaluator, limits=Limits())
    assert outcome.verdict.verdict == "pass"
    assert loopback.last().headers["authorization"] == "Bearer key-from-env"
    assert loopback.last().path == "/v1/systemone"


def test_openai_decisions_uses_the_sdk_environment(loopback: LoopbackServer) -> None:
    loopback.default = decisions()
    environ = {"OPENAI_API_KEY": "key-from-env", "OPENAI_BASE_URL": loopback.url + "/v1"}
    evaluator = evaluator_from_spec("openai-decisions:gpt-6-luna", environ=environ)
    outcome = run_check_sync(parse_check(spec_full_form()), material(), evaluator, limits=Limits())
    assert outcome.verdict.verdict == "pass"
    assert loopback.last().headers["authorization"] == "Bearer key-from-env"
    assert loopback.last().path == "/v1/decisions"


def test_openai_chat_needs_no_key_and_keeps_colons_in_the_model() -> None:
    evaluator = evaluator_from_spec(
        "openai-chat:llama3:8b", environ={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    )
    assert type(evaluator).__name__ == "ChatEvaluator"
    assert evaluator.model == "llama3:8b"


def test_a_bad_timeout_names_the_spec() -> None:
    with pytest.raises(ValueError, match=r'^evaluator "systemone:jev": timeout must be .* got 0$'):
        evaluator_from_spec("systemone:jev", environ={"TYPESAFE_API_KEY": "k"}, timeout=0)


def test_every_scheme_is_documented() -> None:
    assert set(SCHEMES) == {"systemone", "openai-decisions", "openai-chat", "sglang-decisions"}
    cli = (ROOT / "docs" / "cli.md").read_text()
    environment = (ROOT / "docs" / "environment.md").read_text()
    for name, scheme in SCHEMES.items():
        assert f"`{name}:MODEL`" in cli, name
        assert f"`{scheme.key}`" in environment and f"`{scheme.base_url}`" in environment, name


def test_the_decisions_material_part_comes_from_its_variable() -> None:
    pytest.importorskip("openai")
    environ = {"OPENAI_API_KEY": "k", "CHECKPROFILE_DECISIONS_MATERIAL_PART": " input_text "}
    evaluator = evaluator_from_spec("openai-decisions:luna", environ=environ)
    assert evaluator.material_part == "input_text"  # type: ignore[attr-defined]
    default = evaluator_from_spec("openai-decisions:luna", environ={"OPENAI_API_KEY": "k"})
    assert default.material_part == "input_json"  # type: ignore[attr-defined]


def test_a_bad_material_part_names_the_variable_it_came_from() -> None:
    pytest.importorskip("openai")
    environ = {"OPENAI_API_KEY": "k", "CHECKPROFILE_DECISIONS_MATERIAL_PART": "json"}
    with pytest.raises(
        ValueError,
        match=r'^evaluator "openai-decisions:luna": material_part must be one of input_json,'
        r' input_text, got "json" \(from CHECKPROFILE_DECISIONS_MATERIAL_PART\)$',
    ):
        evaluator_from_spec("openai-decisions:luna", environ=environ)


def test_the_material_part_variable_is_documented() -> None:
    environment = (ROOT / "docs" / "environment.md").read_text()
    for scheme in SCHEMES.values():
        for variable in scheme.options:
            assert f"`{variable}`" in environment, variable
