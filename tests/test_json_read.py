"""The one strict JSON reader (checkprofile/_json_read.py): what it refuses, where it says the
fault is, and that every reader of outside JSON text refuses alike through it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkprofile._json_read import JsonFaultError, line_column, load_json
from checkprofile.human import AuditError, read_records
from checkprofile.human._calibration._labels import read_labels

FAULTS = [
    pytest.param('{"a": 1,\n "a": 2}', "key", "a", (2, 2), id="key-twice"),
    pytest.param('[{"b": {"c": 1, "c": 1}}]', "key", "c", (1, 17), id="nested-key-twice"),
    pytest.param('{"a": [1, NaN]}', "constant", "NaN", (1, 11), id="nan"),
    pytest.param('{"a": -Infinity}', "constant", "-Infinity", (1, 7), id="infinity"),
    pytest.param('{"a": ' + "9" * 5000 + "}", "integer", 5000, (1, 7), id="past-python"),
    pytest.param('[NaN, {"a": 1, "a": 2}]', "constant", "NaN", (1, 2), id="first-of-two"),
]


@pytest.mark.parametrize(("text", "kind", "subject", "place"), FAULTS)
def test_a_fault_is_named_with_its_place(
    text: str, kind: str, subject: object, place: tuple[int, int]
) -> None:
    with pytest.raises(JsonFaultError) as caught:
        load_json(text)
    fault = caught.value.fault
    assert (fault.kind, fault.subject) == (kind, subject)
    assert line_column(text, [fault.index])[fault.index] == place


def test_an_integer_past_the_callers_bound_is_a_fault_and_digits_in_text_are_not() -> None:
    assert load_json('{"a": ' + "9" * 100 + "}", max_digits=100) == {"a": int("9" * 100)}
    with pytest.raises(JsonFaultError) as caught:
        load_json('{"a": -' + "9" * 101 + "}", max_digits=100)
    assert (caught.value.fault.kind, caught.value.fault.subject) == ("integer", 101)
    assert "at most 100" in str(caught.value)
    # A long run of digits in a string, or in a fraction, is no integer.
    text = '{"a": "' + "1" * 500 + '", "b": 0.' + "1" * 500 + "}"
    assert load_json(text, max_digits=100) == json.loads(text)


def test_what_is_not_json_is_the_json_modules_error() -> None:
    with pytest.raises(json.JSONDecodeError, match="BOM"):
        load_json('\ufeff{"a": 1}')
    # A fault before the text stops being JSON: the text is not JSON, said at its place.
    with pytest.raises(json.JSONDecodeError) as caught:
        load_json('{"a": 1, "a": 2, ')
    assert caught.value.pos == len('{"a": 1, "a": 2, ')
    with pytest.raises(RecursionError):
        load_json("[" * 100_000 + "]" * 100_000)


def test_a_fault_worded_by_its_caller() -> None:
    with pytest.raises(JsonFaultError) as caught:
        load_json('{"k\\n": 1, "k\\n": 2}')
    words = {"key": "key {} twice", "constant": "{} no number", "integer": "{} digits"}
    assert caught.value.fault.worded(**words) == 'key "k\\n" twice'  # shown, never raw


@pytest.mark.parametrize(
    ("text", "kind"),
    [('{"a": 1, "a": 1}', "twice"), ('{"a": NaN}', "NaN"), ('{"a": ' + "1" * 200 + "}", "200")],
)
def test_the_audit_trail_and_the_labels_refuse_through_the_one_reader(
    tmp_path: Path, text: str, kind: str
) -> None:
    for read in (read_records, read_labels):
        path = tmp_path / "lines.jsonl"
        path.write_text(text + "\n", encoding="utf-8")
        if read is read_labels and kind == "200":
            continue  # labels take Python's own bound: a level is a small integer anyway
        with pytest.raises(AuditError) as caught:
            read(path)
        assert kind in str(caught.value) and "(column " in str(caught.value)
