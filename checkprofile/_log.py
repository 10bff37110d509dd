"""The package's loggers: one per area, all silent until the host configures logging.

The library never prints and never configures logging: the package logger has a
:class:`logging.NullHandler` (so Python's last-resort handler never writes a library record to
stderr), and a host sees records only where it adds a handler, as ``logging.basicConfig()``
does. docs/embedding.md lists the names and what each area says:

- ``checkprofile.run``: an evaluator that raised (with the traceback), that reported a
  failure, or whose reply was not a reply; each outcome, at ``DEBUG``.
- ``checkprofile.adapters`` (and ``checkprofile.adapters.cache``): the shipped evaluators.
- ``checkprofile.human``: the audit trail's recorders.
- ``checkprofile.cli``: the command line's internal errors, with the traceback.
- ``checkprofile.telemetry``: a telemetry component (the host's OpenTelemetry SDK, its
  processors, exporters or instruments) that raised, once per kind of call.

The names are under the package's own name, so a host that vendors the package under another
(``myserver._vendor.checkprofile``) gets its loggers there.
"""

from __future__ import annotations

import logging
from typing import Final, Literal

__all__ = ["AREAS", "ROOT", "logger"]

#: The package logger's name: ``checkprofile``, or the name the package is vendored under.
ROOT: Final = __name__.rpartition(".")[0]

Area = Literal["run", "adapters", "adapters.cache", "human", "cli", "telemetry"]

#: Every area that logs, each a child of :data:`ROOT`.
AREAS: Final[tuple[Area, ...]] = ("run", "adapters", "adapters.cache", "human", "cli", "telemetry")

logging.getLogger(ROOT).addHandler(logging.NullHandler())


def logger(area: Area) -> logging.Logger:
    """The logger of ``area`` (``checkprofile.<area>``)."""
    return logging.getLogger(f"{ROOT}.{area}")
