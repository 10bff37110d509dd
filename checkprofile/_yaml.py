"""YAML 1.2, core schema only, into plain JSON-like data with a line and column for every node.

ruamel.yaml's own loaders go beyond the core schema (``2026-10-06`` becomes a date, ``1_000`` an
int, an anchored ``true`` an int subclass) and keep positions only on their own container types.
So this module reads ruamel.yaml's parse *events* and resolves every scalar itself, by the core
schema's table (YAML 1.2.2, section 10.3.2): ``yes``/``no``/``on``/``off`` stay strings, keys are
always strings, duplicate keys are refused, and each value and each key keeps where it starts.
"""

from __future__ import annotations

from ._yamldoc import MAX_ALIAS_TEXT, MAX_DEPTH, MAX_NODES, Document, Mark, YamlError

__all__ = ["MAX_ALIAS_TEXT", "MAX_DEPTH", "MAX_NODES", "Document", "Mark", "YamlError", "load_yaml"]


def load_yaml(text: str, *, line_offset: int = 0) -> Document:
    """Parse one YAML 1.2 document (core schema) into a :class:`Document`.

    ``line_offset`` lines come before ``text`` in its file, so every :class:`Mark` is a line of
    that file. Raises :class:`YamlError` for text that is not such a document: bad syntax, two
    documents, a duplicate key, a key that is a map or a list, an unknown tag.
    """
    # The parser (ruamel.yaml) is imported by the first file read, not by importing this module:
    # a host that only locates problems, or reads JSON, never pays for it.
    from ._yamlparse import parse

    return parse(text, line_offset=line_offset)
