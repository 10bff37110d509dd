"""core-2's shape of a PROCESS.md frontmatter: the shipped schema, and the laws the reader keeps.

The laws, over generated frontmatters that core-2 takes (every key of every closed map, field
types nested, routes, data sources, emails, and valid check keys):

* such a file always reads clean, and reads back as the data written;
* one unknown key put into any closed map, anywhere, gives exactly one problem, at that key;
* one required key taken out of any map gives exactly one problem, at that map.
"""

from __future__ import annotations

import copy
import io
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any, Final

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from test_validate import valid_keys

from checkprofile import (
    PROFILE,
    Limits,
    lint_process,
    process_problems,
    process_schema,
    publication_problems,
    read_process,
    validate_check,
)
from checkprofile._yaml import load_yaml

Location = tuple[str | int, ...]

ROOT = Path(__file__).resolve().parent.parent


# The shipped schema ---------------------------------------------------------------------------


def test_the_process_schema_is_a_draft_2020_12_schema_and_a_fresh_copy() -> None:
    schema = process_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    schema["$defs"].clear()
    assert process_schema()["$defs"], "each call gives a fresh copy"


def test_the_schema_file_is_package_data_in_the_wheel_list() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"schemas/*.json"' in pyproject
    assert (ROOT / "checkprofile" / "schemas" / "process.schema.json").is_file()


def test_the_schema_closes_every_map_it_describes() -> None:
    # core-2: "unknown fields anywhere in the frontmatter are refused".
    def walk(node: object) -> int:
        count = 0
        if isinstance(node, dict):
            if "properties" in node:
                assert node.get("additionalProperties") is False, node.get("title")
                assert node.get("title"), "a closed map is named in its unknown-key message"
                count += 1
            count += sum(walk(value) for value in node.values())
        elif isinstance(node, list):
            count += sum(walk(value) for value in node)
        return count

    assert walk(process_schema()) == 6  # frontmatter, field type, step, route, source, emails


def test_a_vendored_copy_finds_its_schema_under_its_own_name(tmp_path: Path) -> None:
    import shutil

    vendor = tmp_path / "host" / "_vendor"
    vendor.mkdir(parents=True)
    for folder in (tmp_path / "host", vendor):
        (folder / "__init__.py").write_text("")
    shutil.copytree(
        ROOT / "checkprofile", vendor / "checkprofile", ignore=shutil.ignore_patterns("__pycache__")
    )
    code = (
        "import sys; from host._vendor.checkprofile import read_process, ProcessError\n"
        "try:\n"
        "    read_process('---\\nname: x\\ndescription: y\\nsteps: [{id: a, chek: z}]\\n---\\n')\n"
        "except ProcessError as error:\n"
        "    print(error)\n"
        "print('checkprofile' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == [
        '<string>:4:17: /steps/0/chek: unknown key "chek"; did you mean "check"?',
        "False",
    ]


# Generated frontmatters that core-2 takes -----------------------------------------------------

LOWER = "abcdefghijklmnopqrstuvwxyz"
DIGITS = "0123456789"
words = st.text(LOWER + DIGITS, min_size=1, max_size=8)
TYPE_NAMES = ["string", "number", "boolean", "date", "datetime", "list", "object", "person"]
KINDS = ["agent", "task", "approve", "wait", "wait_until", "wait_for", "finish"]

# Every key any map of a frontmatter (or a check question) knows: a key put in that is none of
# these is unknown wherever it goes.
KNOWN = frozenset(
    key
    for definition in process_schema()["$defs"].values()
    for key in definition.get("properties", {})
) | {"ask", "pass", "fail", "one_of", "unsure", "levels", "confidence", "advisory"}

# Text a YAML writer writes back as it is: ruamel.yaml writes a NEL (U+0085) inside a quoted
# scalar as a line break (YAML 1.1), and the text comes back changed. No such characters here.
UNWRITABLE: Final = ("Cs", "Cc", "Cf", "Co", "Cn", "Zl", "Zp")
characters = st.characters(blacklist_categories=UNWRITABLE)
texts = st.text(characters, max_size=10)
nonempty = st.text(characters, min_size=1, max_size=10)
scalars = (
    st.text(characters, max_size=8)
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.booleans()
)


def field_maps(items: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.sampled_from(TYPE_NAMES)},
        optional={
            "description": texts,
            "optional": st.booleans(),
            "one_of": st.lists(scalars, min_size=1, max_size=3),
            "items": items,
        },
    )


field_types = st.recursive(st.sampled_from(TYPE_NAMES), field_maps, max_leaves=3)
fields = st.dictionaries(nonempty, field_types, max_size=2)
routes = st.lists(
    texts | st.fixed_dictionaries({"to": texts}, optional={"when": nonempty}),
    max_size=3,
)


@st.composite
def step_maps(draw: st.DrawFn, step_id: str, check: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"id": step_id}
    kind = draw(st.sampled_from([*KINDS, None]))
    if kind is not None:
        step[kind] = draw(texts)
    step.update(
        draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "parallel": st.lists(texts, max_size=2),
                    "output": fields,
                    "evidence": st.lists(st.sampled_from(["file", "link"]), max_size=2),
                    "next": texts | routes,
                    "person": texts,
                    "on_reject": texts,
                    "due": texts,
                    "timeout": texts,
                    "on_timeout": texts,
                },
            )
        )
    )
    # The profile's keys, where the profile allows them.
    if kind in ("agent", "task") and draw(st.booleans()):
        step["check"] = copy.deepcopy(check)  # each step its own: a YAML writer shares no node
        if draw(st.booleans()):
            step["advisory"] = draw(st.booleans())
    return step


def writable(value: Any) -> Any:
    """``value`` with each character a YAML writer would change made a "?"."""
    if isinstance(value, str):
        return "".join("?" if unicodedata.category(c) in UNWRITABLE else c for c in value)
    if isinstance(value, dict):
        return {writable(key): writable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [writable(item) for item in value]
    return value


@st.composite
def frontmatters(draw: st.DrawFn) -> tuple[dict[str, Any], Limits]:
    drawn, limits = draw(valid_keys())
    check = writable(drawn)
    if validate_check(check, limits=limits):  # two texts made the same: rare
        check = "Is it done?"
    ids = draw(st.lists(texts, min_size=1, max_size=3, unique=True))
    data: dict[str, Any] = {
        "name": "-".join(draw(st.lists(words, min_size=1, max_size=4))),
        "description": draw(nonempty),
        "steps": [draw(step_maps(step_id, check)) for step_id in ids],
    }
    data.update(
        draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "inputs": fields,
                    "data_sources": st.lists(
                        st.fixed_dictionaries(
                            {
                                "key": st.builds(
                                    str.__add__,
                                    st.sampled_from(LOWER),
                                    st.text(LOWER + DIGITS + "_-", max_size=63),
                                ),
                                "operations": st.lists(
                                    st.sampled_from(["read", "write"]), min_size=1, max_size=2
                                ),
                            },
                            optional={
                                "resources": st.lists(
                                    st.text(characters, min_size=1, max_size=200),
                                    min_size=1,
                                    max_size=2,
                                )
                            },
                        ),
                        min_size=1,
                        max_size=2,
                    ),
                    "emails": st.fixed_dictionaries(
                        {
                            "templates": st.lists(
                                st.text(characters, min_size=1, max_size=100),
                                min_size=1,
                                max_size=2,
                            )
                        },
                        optional={
                            "recipients": st.lists(
                                st.builds("@{}.{}".format, words, words),
                                min_size=1,
                                max_size=2,
                            )
                        },
                    ),
                    "files": st.booleans(),
                },
            )
        )
    )
    # Keys in any order: the reader must not care.
    order = draw(st.permutations(list(data)))
    return {key: data[key] for key in order}, limits


def dump(data: Any) -> str:
    """A PROCESS.md file with ``data`` as its frontmatter, written by a real YAML writer."""
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.allow_unicode = True
    yaml.width = 4096
    yaml.sort_base_mapping_type_on_output = False  # type: ignore[assignment]
    out = io.StringIO()
    yaml.dump(data, out)
    return f"---\n{out.getvalue()}---\nThe body.\n"


def located(text: str) -> Any:
    """The frontmatter of ``text`` with where each key and value is, in the file's lines."""
    return load_yaml(text.split("---\n")[1], line_offset=1)


def closed_maps(data: dict[str, Any]) -> list[Location]:
    """The path of every closed map in a frontmatter: the places an unknown key is refused."""
    found: list[Location] = [()]

    def field_type(value: Any, at: Location) -> None:
        if isinstance(value, dict):
            found.append(at)
            if "items" in value:
                field_type(value["items"], (*at, "items"))

    for name, value in data.get("inputs", {}).items():
        field_type(value, ("inputs", name))
    for index, step in enumerate(data["steps"]):
        at: Location = ("steps", index)
        found.append(at)
        for name, value in step.get("output", {}).items():
            field_type(value, (*at, "output", name))
        if isinstance(step.get("next"), list):
            found.extend(
                (*at, "next", n) for n, r in enumerate(step["next"]) if isinstance(r, dict)
            )
        if isinstance(step.get("check"), list):
            found.extend((*at, "check", n) for n in range(len(step["check"])))
    found.extend(("data_sources", n) for n in range(len(data.get("data_sources", []))))
    if "emails" in data:
        found.append(("emails",))
    return found


def required_keys(data: dict[str, Any]) -> list[tuple[Location, str]]:
    """Each map of a frontmatter with a key core-2 requires of it."""
    found: list[tuple[Location, str]] = [((), "name"), ((), "description"), ((), "steps")]
    for at in closed_maps(data):
        node: Any = data
        for token in at:
            node = node[token]
        if at[:1] == ("steps",) and len(at) == 2:
            found.append((at, "id"))
        elif "to" in node and at[-2:-1] == ("next",):
            found.append((at, "to"))
        elif at[:1] == ("data_sources",):
            found.extend([(at, "key"), (at, "operations")])
        elif at == ("emails",):
            found.append((at, "templates"))
        elif "type" in node and at and at[-2:-1] != ("check",):
            found.append((at, "type"))
    return found


def at(data: Any, path: Location) -> Any:
    for token in path:
        data = data[token]
    return data


# A whole frontmatter is a large example (about 50 ms to draw, write and read twice): a quarter
# of the profile's examples keeps these laws to seconds (50 in CI, 750 with `thorough`).
frontmatter_settings = settings(max_examples=max(10, settings().max_examples // 4))


def lint(text: str, limits: Limits) -> list[tuple[Location, int, int, str]]:
    found = lint_process(text, source="PROCESS.md", profiles=[PROFILE], limits=limits)
    return [(p.path, p.line, p.column, p.message) for p in found]


@frontmatter_settings
@given(frontmatters())
def test_a_frontmatter_core_2_takes_reads_clean_and_back(
    drawn: tuple[dict[str, Any], Limits],
) -> None:
    data, limits = drawn
    text = dump(data)
    process = read_process(text, source="PROCESS.md")
    assert process.data == data
    assert process.body == "The body.\n"
    assert publication_problems(process, profiles=[PROFILE], limits=limits) == ()
    assert lint(text, limits) == []
    # What the reader takes, the shipped schema takes (it is the schema the reader uses).
    assert jsonschema.Draft202012Validator(process_schema()).is_valid(data)


@frontmatter_settings
@given(frontmatters(), st.data())
def test_one_unknown_key_anywhere_is_one_problem_at_that_key(
    drawn: tuple[dict[str, Any], Limits], draws: st.DataObject
) -> None:
    data, limits = drawn
    # Every closed map of the example in turn, each time with one key it does not know.
    for where in closed_maps(data):
        changed = copy.deepcopy(data)
        members = at(changed, where)
        key = draws.draw(nonempty.filter(lambda key: key not in KNOWN), label="key")
        if key in members:
            continue
        items = list(members.items())
        index = draws.draw(st.integers(0, len(items)), label="position")
        items.insert(index, (key, draws.draw(scalars, label="value")))
        members.clear()
        members.update(items)
        text = dump(changed)
        member = (*where, key)
        mark = located(text).keys[member]
        [(path, line, column, message)] = lint(text, limits)
        assert (path, line, column) == (member, mark.line, mark.column)
        assert message.startswith("unknown key")


@frontmatter_settings
@given(frontmatters())
def test_one_required_key_taken_out_is_one_problem_at_its_map(
    drawn: tuple[dict[str, Any], Limits],
) -> None:
    data, limits = drawn
    # Every required key of the example in turn.
    for where, key in required_keys(data):
        changed = copy.deepcopy(data)
        del at(changed, where)[key]
        text = dump(changed)
        mark = located(text).values[where]
        [(path, line, column, message)] = lint(text, limits)
        assert (path, line, column) == (where, mark.line, mark.column)
        assert message.startswith(f'missing "{key}": ')


@frontmatter_settings
@given(frontmatters(), st.data())
def test_a_required_key_misspelt_is_one_problem_at_the_misspelling(
    drawn: tuple[dict[str, Any], Limits], draws: st.DataObject
) -> None:
    # "stepz" for "steps": the unknown key, with its hint; not also "steps" missing.
    data, limits = drawn
    for where, key in required_keys(data):
        changed = copy.deepcopy(data)
        members = at(changed, where)
        wrong = key + draws.draw(st.sampled_from(["z", "s", "_"]), label="typo")
        if wrong in members or wrong in KNOWN:
            continue
        members[wrong] = members.pop(key)
        text = dump(changed)
        [(path, _, _, message)] = lint(text, limits)
        assert path == (*where, wrong)
        assert message == f'unknown key "{wrong}"; did you mean "{key}"?'


@frontmatter_settings
@given(frontmatters(), st.data())
def test_a_frontmatter_as_data_has_the_problems_of_its_file(
    drawn: tuple[dict[str, Any], Limits], draws: st.DataObject
) -> None:
    # process_problems is lint_process for a host that keeps its processes as data: the same
    # problems, paths and messages, in the same order, whatever is wrong.
    data, limits = drawn
    changed = copy.deepcopy(data)
    maps = closed_maps(changed)
    where = draws.draw(st.sampled_from(maps), label="where")
    members = at(changed, where)
    if members and draws.draw(st.booleans(), label="remove"):
        del members[draws.draw(st.sampled_from(sorted(members)), label="key")]
    else:
        members[draws.draw(nonempty, label="key")] = draws.draw(scalars, label="value")
    from_file = [(path, message) for path, _, _, message in lint(dump(changed), limits)]
    from_data = process_problems(changed, profiles=[PROFILE], limits=limits)
    assert [(p.path, p.message) for p in from_data] == from_file


def test_a_frontmatter_that_is_not_json_data_is_one_problem_at_its_place() -> None:
    data = {"name": "x", "description": "d", "steps": [{"id": "a", "agent": float("nan")}]}
    [problem] = process_problems(data, profiles=[PROFILE])
    assert problem.path == ("steps", 0, "agent")
    assert problem.message == "nan is not a JSON number"


def test_a_repeated_step_id_in_data_names_the_earlier_step_by_its_index() -> None:
    steps = [{"id": "a", "agent": "Do it."}, {"id": "a", "agent": "Again."}]
    data = {"name": "x", "description": "d", "steps": steps}
    [problem] = process_problems(data, profiles=[PROFILE])
    assert problem.path == ("steps", 1, "id")
    assert problem.message == (
        'step id "a" is already the id of step 0: ids are unique within a process'
    )
