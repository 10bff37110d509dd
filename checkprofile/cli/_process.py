"""``lint``, ``normalize``, ``bundle`` and ``run``: PROCESS.md files and their checks."""

from __future__ import annotations

from ._common import Commands


def register(commands: Commands) -> None:
    """Add this module's commands."""
