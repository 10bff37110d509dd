"""A message quoting a path stays short, whatever path it quotes (issue 27).

A path of a million characters gave an ``OSError`` whose message quoted all of it (1,000,033
characters): every path a caller gives goes through one function (``file_name``), which
refuses a name longer than any the system opens and names it by its head, so every error
after it quotes a bounded name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from checkprofile import ProcessError, load_process
from checkprofile.human import JsonLinesRecorder, calibrate, iter_records, read_records
from checkprofile.testing.cassette import Cassette, CassetteError

LONG = "a" * 1_000_000
NAMES = {
    "long": LONG,
    "long-with-a-nul": LONG + "\0",
    "long-nested": "d/" * 500_000,
    "long-path": Path(LONG),
    "long-bytes": LONG.encode(),
}
CALLS: dict[str, tuple[Callable[[Any], Any], type[BaseException]]] = {
    "iter_records": (lambda name: list(iter_records(name)), OSError),
    "read_records": (read_records, OSError),
    "calibrate": (calibrate, OSError),
    "load_process": (load_process, ProcessError),
    "JsonLinesRecorder": (JsonLinesRecorder, OSError),
}


@pytest.mark.parametrize("name", list(NAMES.values()), ids=list(NAMES))
@pytest.mark.parametrize("call", list(CALLS))
def test_an_error_about_a_path_quotes_a_bounded_part_of_it(call: str, name: Any) -> None:
    function, error = CALLS[call]
    if call == "load_process" and isinstance(name, bytes):
        name = name.decode()
    with pytest.raises(error) as raised:
        function(name)
    message = str(raised.value)
    assert len(message) < 2_000, f"{call}: a message of {len(message)} characters"
    assert "aaaa" in message or "d/d/" in message  # the path's head, to know which it was


@pytest.mark.parametrize("name", [LONG, "d/" * 500_000], ids=["long", "long-nested"])
def test_a_cassette_message_quotes_a_bounded_part_of_its_path(name: str) -> None:
    with pytest.raises(CassetteError) as raised:
        Cassette(name)
    message = str(raised.value)
    assert len(message) < 3_000, f"a message of {len(message)} characters"
    assert message.startswith(name[:100])


def test_an_ordinary_path_is_named_whole(tmp_path: Path) -> None:
    missing = tmp_path / ("x" * 200) / "trail.jsonl"
    with pytest.raises(FileNotFoundError) as raised:
        list(iter_records(missing))
    assert str(missing) in str(raised.value)
