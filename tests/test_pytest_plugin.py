"""The pytest plugin, run as a user's test suite runs it: in a pytest of its own (pytester).

Both modes: recording asks a live evaluator (a real System One adapter talking HTTP to a host on
loopback, or a scripted one) and writes the cassette; replaying answers from it with no live
evaluator, no key and no host. A changed prompt fails and says what changed; recording again
rewrites only what changed; ``-p no:checkprofile`` turns the plugin off; loading the plugin
imports nothing of checkprofile.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from loopback import LoopbackServer, systemone

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent.parent
TESTING_PAGE = ROOT / "docs" / "testing.md"

# A host's test module: the material comes from material.json beside it, so a test here can
# change what the evaluator is shown without touching the module. The live evaluator is
# scripted, and answers.log counts what it was asked.
HOST_TESTS = """
import json
from pathlib import Path

from checkprofile import Limits, Material, Submission, YesNoAnswer, parse_check, run_check_sync
from checkprofile.testing import RecordingEvaluator, ScriptedEvaluator, assert_outcome

HERE = Path(__file__).parent
AT = "2026-10-06T09:04:20Z"
SETUP = json.loads((HERE / "material.json").read_text())
CHECK = parse_check(SETUP["check"])
LIVE_ANSWERS = {
    "Is the report attached?": YesNoAnswer(0.97),
    "Does the summary name both lists?": YesNoAnswer(0.4),
    "Is the vendor named?": YesNoAnswer(0.99),
}


class Counted(RecordingEvaluator):
    async def answer(self, bundle):
        with open(HERE / "answers.log", "a") as log:
            log.write(",".join(bundle.check.asks) + "\\n")
        return await super().answer(bundle)


def live():
    return Counted(ScriptedEvaluator(LIVE_ANSWERS, model="judge-2026-09-30"))


def material(summary="Cleared on both lists."):
    return Material(
        SETUP["instructions"],
        SETUP["body"],
        SETUP["run_data"],
        Submission({"cleared": True}, summary=summary),
    )


def test_screening(check_cassette):
    evaluator = check_cassette("screening", live=live)
    outcome = run_check_sync(CHECK, material(), evaluator, limits=Limits(), now=AT)
    assert_outcome(
        outcome,
        action="not_accepted",
        verdict="fail",
        issues=["check: Does the summary name both lists? → no (0.4)"],
        model="judge-2026-09-30",
    )
    assert [answer.source for answer in outcome.answers] == ["replayed", "replayed"]


def test_vendor(check_cassette):
    # Its own material: what test_screening is shown may change without touching this one.
    evaluator = check_cassette("screening", live=live)
    check = parse_check("Is the vendor named?")
    vendor = Material(
        "Name the vendor.", "# Vendors\\n", {"inputs": {}, "steps": {}}, Submission({"v": "Acme"})
    )
    outcome = run_check_sync(check, vendor, evaluator, limits=Limits(), now=AT)
    assert_outcome(outcome, action="complete", results=["pass"])
"""

SETUP: dict[str, Any] = {
    "check": [{"ask": "Is the report attached?"}, {"ask": "Does the summary name both lists?"}],
    "instructions": "Check the vendor against the OFAC and EU lists.",
    "body": "# Vendor onboarding\n\nScreen every new vendor.\n",
    "run_data": {"inputs": {"vendor": "Acme GmbH"}, "steps": {}},
}


@pytest.fixture
def host(pytester: pytest.Pytester) -> pytest.Pytester:
    """A host's test directory with :data:`HOST_TESTS` and its material."""
    pytester.makepyfile(test_host=HOST_TESTS)
    write_setup(pytester, SETUP)
    return pytester


def write_setup(pytester: pytest.Pytester, setup: dict[str, Any]) -> None:
    (pytester.path / "material.json").write_text(json.dumps(setup), encoding="utf-8")


def cassette(pytester: pytest.Pytester, module: str = "test_host") -> Path:
    return pytester.path / "cassettes" / module / "screening.json"


def asked(pytester: pytest.Pytester) -> list[str]:
    """What the live evaluator was asked, one line per call, since the last look."""
    log = pytester.path / "answers.log"
    if not log.exists():
        return []
    lines = log.read_text(encoding="utf-8").splitlines()
    log.unlink()
    return lines


def record(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("--checkprofile-record", "-p", "no:cacheprovider", *args)


def replay(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


# --- record, then replay ---------------------------------------------------------------------


def test_a_real_model_recorded_once_replays_without_a_key_or_a_host(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The done-when, with the page's own example: record through the real System One
    # adapter (HTTP to a host on loopback), then replay with no key, no base URL, no host.
    for path, text in page_files(TESTING_PAGE).items():
        target = pytester.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    with LoopbackServer(default=systemone(model="jev-2026-09-15")) as host:
        monkeypatch.setenv("TYPESAFE_BASE_URL", host.url)
        monkeypatch.setenv("TYPESAFE_API_KEY", "test-key")
        recorded = pytester.runpytest_subprocess("--checkprofile-record")
        assert host.count("/v1/systemone") == 1
    recorded.assert_outcomes(passed=1)
    recorded.stdout.fnmatch_lines(
        ["*checkprofile cassettes*", "tests/cassettes/test_screening/screening.json: 1 asked*"]
    )
    saved = json.loads(
        (pytester.path / "tests/cassettes/test_screening/screening.json").read_text("utf-8")
    )
    [entry] = saved["entries"]
    assert (entry["model"], entry["configured"]) == ("jev-2026-09-15", "jev-latest")
    assert [q["answer"]["source"] for q in entry["questions"]] == ["native", "native"]

    monkeypatch.delenv("TYPESAFE_BASE_URL")
    monkeypatch.delenv("TYPESAFE_API_KEY")  # SystemOneEvaluator refuses to be made without one
    replayed = pytester.runpytest_subprocess()
    replayed.assert_outcomes(passed=1)
    assert "checkprofile cassettes" not in replayed.stdout.str()


def page_files(page: Path) -> dict[str, str]:
    """The files a docs page shows, each a fenced block after ``<!-- file: PATH -->``."""
    text = page.read_text(encoding="utf-8")
    found = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)^```\n", text, re.S | re.M)
    assert found, f"{page.name} shows no file"
    return dict(found)


def test_recording_writes_what_was_answered_and_replay_gives_it_back(host: pytest.Pytester) -> None:
    recorded = record(host)
    recorded.assert_outcomes(passed=2)
    assert asked(host) == [
        "Is the report attached?,Does the summary name both lists?",
        "Is the vendor named?",
    ]
    recorded.stdout.fnmatch_lines(["cassettes/test_host/screening.json: 2 asked, 0 replayed"])
    text = cassette(host).read_text(encoding="utf-8")
    saved = json.loads(text)
    assert saved["format"] == "checkprofile-cassette-2"
    keys = [entry["key"] for entry in saved["entries"]]
    assert keys == sorted(keys)
    entry = next(e for e in saved["entries"] if len(e["questions"]) == 2)
    assert entry["model"] == "judge-2026-09-30"
    assert entry["questions"][1] == {
        "ask": "Does the summary name both lists?",
        "pass": 0.9,
        "answer": {"p": 0.4, "source": "scripted"},
    }
    assert entry["shown"]["instructions"] == ["Check the vendor against the OFAC and EU lists."]
    assert entry["shown"]["body"] == ["# Vendor onboarding", "", "Screen every new vendor.", ""]
    assert entry["shown"]["run_data"] == SETUP["run_data"]

    replayed = replay(host)
    replayed.assert_outcomes(passed=2)
    assert asked(host) == []  # the live evaluator was not made, let alone asked
    assert cassette(host).read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    ("change", "piece", "removed", "added"),
    [
        pytest.param(
            {"instructions": "Check the vendor against the OFAC, EU and UK lists."},
            "instructions",
            "-Check the vendor against the OFAC and EU lists.",
            "+Check the vendor against the OFAC, EU and UK lists.",
            id="instructions",
        ),
        pytest.param(
            {"body": "# Vendor onboarding\n\nScreen every vendor.\n"},
            "body",
            "-Screen every new vendor.",
            "+Screen every vendor.",
            id="body",
        ),
        pytest.param(
            {"run_data": {"inputs": {"vendor": "Acme AG"}, "steps": {}}},
            "run data",
            '-    "vendor": "Acme GmbH"',
            '+    "vendor": "Acme AG"',
            id="run-data",
        ),
        pytest.param(
            {
                "check": [
                    {"ask": "Is the report attached?", "pass": 0.95},
                    {"ask": "Does the summary name both lists?"},
                ]
            },
            "questions",
            '-    "pass": 0.9',
            '+    "pass": 0.95',
            id="threshold",
        ),
    ],
)
def test_a_changed_prompt_fails_and_says_what_changed(
    host: pytest.Pytester, change: dict[str, Any], piece: str, removed: str, added: str
) -> None:
    record(host).assert_outcomes(passed=2)
    asked(host)
    before = cassette(host).read_bytes()
    write_setup(host, {**SETUP, **change})
    result = replay(host, "-k", "test_screening")
    result.assert_outcomes(failed=1)
    assert asked(host) == []  # nothing was asked of any model
    output = result.stdout.str()
    assert 'the cassette "screening" has no recording of what the evaluator was shown' in output
    assert 'asked: "Is the report attached?", "Does the summary name both lists?"' in output
    assert f"differs in: {piece}\n" in output
    assert f"--- recorded {piece}\n+++ shown {piece}\n" in output
    assert f"\n{removed}\n" in output
    assert f"\n{added}\n" in output
    assert "--checkprofile-record" in output
    assert cassette(host).read_bytes() == before  # a replay never writes


def test_a_changed_submission_names_the_submission(host: pytest.Pytester) -> None:
    record(host).assert_outcomes(passed=2)
    host.makepyfile(
        test_host=HOST_TESTS.replace('summary="Cleared on both lists."', 'summary="Cleared."')
    )
    result = replay(host, "-k", "test_screening")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*differs in: submission",
            '-  "summary": "Cleared on both lists."',
            '+  "summary": "Cleared."',
        ]
    )


def test_replaying_with_no_cassette_says_it_does_not_exist(host: pytest.Pytester) -> None:
    result = replay(host)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*the cassette does not exist", "*--checkprofile-record*"])
    assert asked(host) == []
    assert not cassette(host).exists()


def test_recording_again_rewrites_only_what_changed(host: pytest.Pytester) -> None:
    record(host).assert_outcomes(passed=2)
    asked(host)
    first = cassette(host).read_text(encoding="utf-8")
    stamp = cassette(host).stat().st_mtime_ns

    # Nothing changed: nothing is asked, and the file is not even written.
    again = record(host)
    again.assert_outcomes(passed=2)
    assert asked(host) == []
    again.stdout.fnmatch_lines(["cassettes/test_host/screening.json: 0 asked, 2 replayed"])
    assert cassette(host).stat().st_mtime_ns == stamp

    # One prompt changed: only its bundle is asked; the other entry keeps its bytes, and the
    # entry no test uses any more is removed.
    write_setup(host, {**SETUP, "instructions": "Check the vendor against the UN list."})
    changed = record(host)
    changed.assert_outcomes(passed=2)
    assert asked(host) == ["Is the report attached?,Does the summary name both lists?"]
    changed.stdout.fnmatch_lines(
        ["cassettes/test_host/screening.json: 1 asked, 1 replayed, 1 unused removed"]
    )
    now = cassette(host).read_text(encoding="utf-8")
    assert entry_text(now, "Is the vendor named?") == entry_text(first, "Is the vendor named?")
    assert "Check the vendor against the UN list." in now
    assert "Check the vendor against the OFAC and EU lists." not in now
    assert len(json.loads(now)["entries"]) == 2
    replay(host).assert_outcomes(passed=2)


def entry_text(text: str, ask: str) -> str:
    """The lines of the cassette entry that asks ``ask`` (and nothing else), as written."""
    entries = re.split(r"(?m)^    \{\n", text)[1:]
    [found] = [
        entry for entry in entries if f'"ask": "{ask}"' in entry and entry.count('"ask"') == 1
    ]
    # Up to the line that closes it: what follows (a comma, or the end of the list when the
    # entry is the last by key) is the file's, not the entry's.
    return found.split("\n    }", 1)[0]


def test_a_partial_run_keeps_what_the_tests_it_skipped_recorded(host: pytest.Pytester) -> None:
    record(host).assert_outcomes(passed=2)
    asked(host)
    write_setup(host, {**SETUP, "instructions": "Check the vendor against the UN list."})
    result = record(host, "-k", "test_screening")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*1 asked, 0 replayed, 2 unused kept (not every test of the module ran and passed)"]
    )
    saved = json.loads(cassette(host).read_text(encoding="utf-8"))
    assert len(saved["entries"]) == 3
    # Named one by one is partial too.
    result = record(host, "test_host.py::test_screening")
    result.stdout.fnmatch_lines(["*0 asked, 1 replayed, 2 unused kept*"])
    # A replay of the whole module says what no test used, and changes nothing.
    replayed = replay(host)
    replayed.assert_outcomes(passed=2)
    replayed.stdout.fnmatch_lines(
        [
            "*checkprofile cassettes*",
            "cassettes/test_host/screening.json: 1 recording no test used"
            " (pytest --checkprofile-record removes them)",
        ]
    )
    assert len(json.loads(cassette(host).read_text(encoding="utf-8"))["entries"]) == 3


FLAKY_LIVE = """

def flaky():
    from checkprofile import Failure
    return ScriptedEvaluator(
        {
            "Is the report attached?": YesNoAnswer(0.97),
            "Does the summary name both lists?": [
                Failure("rate_limited", "HTTP 429", retry_after=0.0),
                YesNoAnswer(0.4),
            ],
        },
        model="judge-2026-09-30",
    )


def test_flaky(check_cassette):
    outcome = run_check_sync(
        CHECK, material(), check_cassette("flaky", live=flaky), limits=Limits(),
        now="2026-10-06T09:04:20Z", max_retry_wait=0,
    )
    assert_outcome(outcome, verdict="fail")
    assert outcome.attempts == 2
"""


def test_a_failure_is_recorded_as_a_failure_and_asked_again_next_time(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_host=HOST_TESTS + FLAKY_LIVE)
    write_setup(pytester, SETUP)
    record(pytester, "-k", "flaky").assert_outcomes(passed=1)
    saved = json.loads((pytester.path / "cassettes/test_host/flaky.json").read_text("utf-8"))
    whole, subset = sorted(saved["entries"], key=lambda entry: -len(entry["questions"]))
    assert whole["questions"][1]["failure"] == {
        "reason": "rate_limited",
        "detail": "HTTP 429",
        "retry_after": 0.0,
    }
    assert [q["ask"] for q in subset["questions"]] == ["Does the summary name both lists?"]
    assert subset["questions"][0]["answer"]["p"] == 0.4

    # The replay goes through the same two attempts: the failure stays a failure.
    replay(pytester, "-k", "flaky").assert_outcomes(passed=1)
    # Recording again asks the entry with a failure anew; the complete one is replayed.
    rerecorded = record(pytester, "-k", "flaky")
    rerecorded.assert_outcomes(passed=1)
    rerecorded.stdout.fnmatch_lines(
        ["*flaky.json: 1 asked, 1 replayed, 1 with a question not answered*"]
    )


def test_a_miss_the_host_swallows_still_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_swallow="""
        from checkprofile import Limits, Material, Submission, parse_check, run_check_sync

        def test_swallowing(check_cassette):
            evaluator = check_cassette("nothing")
            try:
                run_check_sync(
                    parse_check("Done?"),
                    Material("i", "b", {"inputs": {}, "steps": {}}, Submission({})),
                    evaluator,
                    limits=Limits(),
                )
            except BaseException:
                pass  # a host that catches everything
        """
    )
    result = replay(pytester)
    result.assert_outcomes(passed=1, errors=1)  # the call passed; its teardown says why not
    result.stdout.fnmatch_lines(
        ["*ERROR at teardown of test_swallowing*", '*the cassette "nothing" has no recording*']
    )


def test_recording_without_a_live_evaluator_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_nolive="""
        def test_it(check_cassette):
            check_cassette("screening")
        """
    )
    result = record(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*is being recorded, and recording asks a live evaluator*"])


@pytest.mark.parametrize(
    ("name", "message"),
    [
        pytest.param("../escape", "a cassette's name is a file name", id="parent"),
        pytest.param("screening.json", "without .json", id="suffix"),
        pytest.param("", "a cassette's name is a file name", id="empty"),
    ],
)
def test_a_cassette_name_is_a_file_name(pytester: pytest.Pytester, name: str, message: str) -> None:
    pytester.makepyfile(
        test_named=f"""
        def test_it(check_cassette):
            check_cassette({name!r})
        """
    )
    result = replay(pytester)
    result.assert_outcomes(failed=1)
    assert message in result.stdout.str()


def test_an_unreadable_cassette_fails_the_test_and_says_where(host: pytest.Pytester) -> None:
    record(host).assert_outcomes(passed=2)
    path = cassette(host)
    saved = json.loads(path.read_text(encoding="utf-8"))
    saved["entries"][0]["questions"][0]["answer"] = {"p": 1.7}
    path.write_text(json.dumps(saved, indent=2), encoding="utf-8")
    for result in (replay(host), record(host)):
        result.assert_outcomes(failed=2)
        result.stdout.fnmatch_lines(
            [
                "*screening.json: entries[[]0[]].questions[[]0[]].answer: the answer does not fit"
                " its question: a probability must be a finite number in [[]0, 1[]], got 1.7"
            ]
        )
    assert json.loads(path.read_text(encoding="utf-8")) == saved  # nothing overwrote it


# --- assertions --------------------------------------------------------------------------------

WRONG_EXPECTATION = """
from checkprofile import Limits, Material, Submission, YesNoAnswer, parse_check, run_check_sync
from checkprofile.testing import ScriptedEvaluator, assert_outcome


def test_expects_the_wrong_outcome():
    check = parse_check("Is it done?")
    material = Material("i", "b", {"inputs": {}, "steps": {}}, Submission({}))
    outcome = run_check_sync(
        check, material, ScriptedEvaluator({"Is it done?": YesNoAnswer(0.2)}), limits=Limits()
    )
    assert_outcome(outcome, action="complete", verdict="fail", issues=[])
"""


def test_a_wrong_expectation_fails_with_pytests_own_diff(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_wrong=WRONG_EXPECTATION)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            '*assert_outcome(outcome, action="complete", verdict="fail", issues=[[]])',
            "E       AssertionError: assert *",
            "E         Differing items:",
        ]
    )
    # Each difference, in whatever order pytest lists them.
    lines = result.stdout.lines
    assert "E         {'action': 'not_accepted'} != {'action': 'complete'}" in lines
    assert "E         {'issues': ['check: Is it done? → no (0.2)']} != {'issues': []}" in lines
    assert "assertions.py" not in result.stdout.str()  # the helper's own frame is hidden


def test_without_the_plugin_a_wrong_expectation_still_says_what_differs(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_wrong=WRONG_EXPECTATION)
    result = pytester.runpytest_subprocess("-p", "no:checkprofile", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    lines = result.stdout.lines
    start = lines.index("E       AssertionError: the outcome is not what was expected:")
    assert lines[start + 1 : start + 3] == [
        "E         action: 'not_accepted' != 'complete' (expected)",
        "E         issues: ['check: Is it done? → no (0.2)'] != [] (expected)",
    ]


# --- the plugin itself -------------------------------------------------------------------------


def test_p_no_checkprofile_turns_the_plugin_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_uses="""
        def test_it(check_cassette):
            pass
        """
    )
    off = pytester.runpytest_subprocess("-p", "no:checkprofile")
    off.assert_outcomes(errors=1)
    off.stdout.fnmatch_lines(["*fixture 'check_cassette' not found*"])
    refused = pytester.runpytest_subprocess("-p", "no:checkprofile", "--checkprofile-record")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*unrecognized arguments: --checkprofile-record*"])


def test_the_plugin_is_registered_by_installing_the_package() -> None:
    from importlib.metadata import entry_points

    [plugin] = [ep for ep in entry_points(group="pytest11") if ep.name == "checkprofile"]
    assert plugin.value == "checkprofile._pytest_plugin"


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    # pytest loads it into every session of every environment that has checkprofile: it may
    # load the package's __init__ (a table of names) and itself, nothing else.
    script = textwrap.dedent(
        """
        import sys
        import pytest

        before = set(sys.modules)
        import checkprofile._pytest_plugin
        print(" ".join(sorted(set(sys.modules) - before)))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd="/"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["checkprofile", "checkprofile._pytest_plugin"]


def test_a_session_that_uses_no_cassette_never_imports_the_rest_of_checkprofile(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_plain="""
        import sys

        def test_nothing_of_checkprofile_was_loaded():
            loaded = [m for m in sys.modules if m.startswith(("checkprofile", "jsonschema"))]
            assert sorted(loaded) == ["checkprofile", "checkprofile._pytest_plugin"]
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
