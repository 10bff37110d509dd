"""Write docs/api.md: every public name of every public module, with its signature.

Run ``python tools/gen_api.py`` after changing what a public module exports, a public
function's or class's parameters, their defaults, or a public constant: the page is written
from the code itself (``inspect``), so it cannot drift from it. ``--check`` only says whether
the page on disk is what it would write; the test suite checks the same
(``tests/test_api_reference.py``), so a change to the public surface that was not meant (a
keyword-only option made positional, a default changed, a constant moved) fails a test, and
one that was meant shows in the diff of this page, beside its CHANGELOG entry.

A development tool of this repository, outside the runtime package (no install ships it).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
import textwrap
from collections.abc import Iterator, Sized
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parent.parent
PAGE: Final = ROOT / "docs" / "api.md"

# The public modules, in the order the page gives them; each one's __all__ is its surface.
MODULES: Final = (
    "checkprofile",
    "checkprofile.errors",
    "checkprofile.human",
    "checkprofile.qualify",
    "checkprofile.testing",
    "checkprofile.testing.assertions",
    "checkprofile.testing.cassette",
    "checkprofile.testing.strategies",
    "checkprofile.adapters",
    "checkprofile.adapters.cache",
    "checkprofile.adapters.openai_chat",
    "checkprofile.adapters.openai_decisions",
    "checkprofile.adapters.sglang_decisions",
    "checkprofile.adapters.systemone",
    "checkprofile.conformance",
    "checkprofile.cli",
)

# The helpers docs/writing-an-evaluator.md gives for a new backend inside the library: private
# modules (a host never imports them), but a backend written against them relies on them too.
WRITER_MODULES: Final = (
    "checkprofile.adapters._common",
    "checkprofile.adapters._errors",
    "checkprofile.adapters._read",
    "checkprofile.adapters._spec",
    "checkprofile.adapters._transport",
)

# A constant's value is shown when its repr is this short; a longer one by its type and size.
_SHORT: Final = 120

HEAD: Final = """\
# API reference

Every public name of every public module, with its signature, as the code gives it
(`inspect`). Written by `python tools/gen_api.py`, and checked by the test suite: a change
to any of these signatures, defaults or constants shows in this page's diff, so it is never
made by accident. What each name does is in its docstring (the first line is given here) and
in the guides: [embedding](embedding.md), [the human side](human-side.md),
[evaluators](evaluators.md), [testing](testing.md).

A name exported by more than one module is described where it is first given, and listed
after that as the same object. Annotations are shown as written in the source. The last
sections are the private helpers [writing-an-evaluator.md](writing-an-evaluator.md) gives for
a new backend inside the library: a host never imports them.
"""


def render() -> str:
    """The whole page."""
    seen: dict[int, str] = {}
    parts = [HEAD]
    for name in (*MODULES, *WRITER_MODULES):
        module = importlib.import_module(name)
        exported = list(getattr(module, "__all__", ()))
        parts.append(f"\n## `{name}`\n\n{_summary(module)}\n\n")
        again = []
        lines: list[str] = []
        for public in exported:
            value = getattr(module, public)
            if id(value) in seen and _is_described(value):
                again.append(f"`{public}` ({seen[id(value)]})")
                continue
            if _is_described(value):
                seen[id(value)] = f"`{name}.{public}`"
            lines.extend(_entry(public, value))
        if lines:
            parts.append("```python\n" + "\n".join(lines).rstrip("\n") + "\n```\n")
        if again:
            parts.append("The same objects as given above: " + ", ".join(again) + ".\n")
    text = "".join(parts)
    if " at 0x" in text:  # an object's address: the page would differ from run to run
        raise SystemExit("gen_api: a default or constant is shown by its address; give it a repr")
    return text


def _is_described(value: object) -> bool:
    return inspect.isclass(value) or _is_function(value) or _is_alias(value)


def _is_alias(value: object) -> bool:
    """A type alias (``Literal[...]``, a union of types)."""
    return type(value).__module__ in ("typing", "types")


def _is_function(value: object) -> bool:
    """A function, or one wrapped by a decorator (``functools.cache``) that says what it wraps."""
    return inspect.isfunction(inspect.unwrap(value))  # type: ignore[arg-type]


def _entry(name: str, value: object) -> Iterator[str]:
    if inspect.isclass(value):
        yield from _class(name, value)
    elif _is_function(value):
        yield from _doc(value)
        yield f"def {name}{_signature(value)}: ..."
        yield ""
    else:
        yield f"{name} = {_value(value)}"
        yield ""


def _class(name: str, cls: type) -> Iterator[str]:
    bases = ", ".join(base.__name__ for base in cls.__bases__ if base is not object)
    yield from _doc(cls)
    yield f"class {name}({bases}):" if bases else f"class {name}:"
    body = []
    init = cls.__dict__.get("__init__")
    if inspect.isfunction(init) and init.__module__.startswith("checkprofile"):
        body.append(f"    def __init__{_signature(init)}: ...")
    for member, raw in sorted(cls.__dict__.items()):
        if member.startswith("_"):
            continue
        if isinstance(raw, property):
            body.append("    @property")
            body.append(f"    def {member}{_signature(raw.fget)}: ...")
        elif isinstance(raw, (classmethod, staticmethod)):
            body.append(f"    @{type(raw).__name__}")
            body.append(f"    def {member}{_signature(raw.__func__)}: ...")
        elif inspect.isfunction(raw):
            body.append(f"    def {member}{_signature(raw)}: ...")
        elif (
            not callable(raw) and not isinstance(raw, (str, bytes)) and _is_attrs_field(cls, member)
        ):
            continue  # an attrs field: it is in __init__
        elif not callable(raw) and type(raw).__module__ == "builtins":
            body.append(f"    {member} = {_value(raw)}")
    yield from body or ["    ..."]
    yield ""


def _is_attrs_field(cls: type, member: str) -> bool:
    fields = getattr(cls, "__attrs_attrs__", ())
    return any(field.name == member for field in fields)


def _doc(value: object) -> Iterator[str]:
    """The docstring's first paragraph, as comment lines."""
    doc = inspect.getdoc(value)
    if doc and not (inspect.isclass(value) and doc == inspect.getdoc(value.__base__)):
        first = " ".join(doc.strip().split("\n\n")[0].split())
        yield from textwrap.wrap(first, 96, initial_indent="# ", subsequent_indent="# ")


def _summary(module: object) -> str:
    doc = inspect.getdoc(module) or ""
    return doc.strip().split("\n\n")[0].replace("\n", " ")


def _signature(function: Any) -> str:
    signature = inspect.signature(function)
    parameters = list(signature.parameters.values())
    shown = []
    marked = False  # whether `*` or a `*args` came already
    for i, p in enumerate(parameters):
        if p.kind is p.KEYWORD_ONLY and not marked:
            shown.append("*")
            marked = True
        if p.kind is p.VAR_POSITIONAL:
            marked = True
        stars = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else ""
        text = stars + p.name
        if p.annotation is not p.empty:
            text += f": {_annotation(p.annotation)}"
        if p.default is not p.empty:
            text += f" = {p.default!r}" if p.annotation is not p.empty else f"={p.default!r}"
        shown.append(text)
        following = parameters[i + 1] if i + 1 < len(parameters) else None
        if p.kind is p.POSITIONAL_ONLY and (following is None or following.kind is not p.kind):
            shown.append("/")
    returns = ""
    if signature.return_annotation is not signature.empty:
        returns = f" -> {_annotation(signature.return_annotation)}"
    return f"({', '.join(shown)}){returns}"


def _annotation(annotation: object) -> str:
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def _value(value: object) -> str:
    shown = repr(value)
    if _is_alias(value):  # all of it, without the private modules' names
        return re.sub(r"\bcheckprofile(?:\.\w+)*\.(?=\w)", "", shown)
    if len(shown) <= _SHORT:
        return shown
    size = f"{len(value):,} items" if isinstance(value, Sized) else "long"
    if isinstance(value, str):
        size = f"{len(value):,} characters"
    return f"...  # a {type(value).__name__} of {size}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="say whether docs/api.md is current; write nothing"
    )
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE.relative_to(ROOT)} is out of date: run python tools/gen_api.py")
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
