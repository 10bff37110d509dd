"""sglang's own request and response models for ``/v1/decisions``, imported from its wheel.

sglang needs CUDA to serve, but its ``/v1/decisions`` schema is a set of pydantic classes in
``sglang/srt/entrypoints/openai/protocol.py``. That one module is imported here from the wheel
as it is (``pip download --no-deps sglang==0.5.23``; ``ENV`` names the wheel file), without
running the package's ``__init__`` (which loads torch): the packages above it are made empty
namespaces, and the one helper it imports from ``sglang.utils`` (a JSON-schema printer no
decision model uses) is a stand-in. Its own imports are pydantic, msgspec and openai's types.

Nothing of sglang is kept in this repository: the wheel is read where it lies.
"""

from __future__ import annotations

import os
import sys
import types
import zipfile
from functools import cache
from typing import Any

__all__ = ["ENV", "VERSION", "protocol"]

#: The environment variable naming sglang's wheel (a ``.whl`` file).
ENV = "CHECKPROFILE_TEST_SGLANG_WHEEL"

#: The sglang release whose protocol the adapter speaks.
VERSION = "0.5.23"

_MODULE = "sglang.srt.entrypoints.openai.protocol"
_SOURCE = "sglang/srt/entrypoints/openai/protocol.py"


@cache
def protocol(wheel: str | None = None) -> Any:
    """sglang's protocol module, from ``wheel`` (default: ``$ENV``). Raises ``LookupError``
    when no wheel is named, and ``ImportError`` when the module cannot be imported."""
    path = wheel or os.environ.get(ENV)
    if not path:
        raise LookupError(f"set {ENV} to sglang's wheel (pip download --no-deps sglang=={VERSION})")
    with zipfile.ZipFile(path) as archive:
        source = archive.read(_SOURCE).decode("utf-8")
    saved = {name: sys.modules.get(name) for name in [*_packages(), "sglang.utils", _MODULE]}
    try:
        for name in _packages():
            package = types.ModuleType(name)
            package.__path__ = []
            sys.modules[name] = package
        helpers = types.ModuleType("sglang.utils")
        helpers.convert_json_schema_to_str = lambda schema: schema  # type: ignore[attr-defined]
        sys.modules["sglang.utils"] = helpers
        module = types.ModuleType(_MODULE)
        module.__file__ = f"{path}/{_SOURCE}"
        sys.modules[_MODULE] = module  # pydantic resolves the module's annotations through it
        exec(compile(source, module.__file__, "exec"), module.__dict__)
        return module
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous


def _packages() -> list[str]:
    parts = _MODULE.split(".")[:-1]
    return [".".join(parts[: i + 1]) for i in range(len(parts))]
