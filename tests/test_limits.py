"""``describe.limits``: defaults, JSON, and refusals that name the key and the value."""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkprofile import CheckprofileError, Limits, LimitsError

DEFAULT_JSON = {"checkPass": 0.9, "checkConfidence": 0.8, "checkStateBytes": 65536}

# attribute name -> describe.limits key
KEYS = {
    "check_pass": "checkPass",
    "check_fail": "checkFail",
    "check_confidence": "checkConfidence",
    "check_state_bytes": "checkStateBytes",
}


def test_defaults_are_the_profiles_server_defaults() -> None:
    limits = Limits()
    assert limits.check_pass == 0.9
    assert limits.check_fail is None
    assert limits.check_confidence == 0.8
    assert limits.check_state_bytes == 65536  # 64 KB


def test_limits_are_frozen() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        Limits().check_pass = 0.5  # type: ignore[misc]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param({}, Limits(), id="empty-takes-defaults"),
        pytest.param(DEFAULT_JSON, Limits(), id="defaults-spelled-out"),
        pytest.param({"checkPass": 0.75}, Limits(check_pass=0.75), id="only-pass"),
        pytest.param(
            {"checkPass": 0.8, "checkFail": 0.4},
            Limits(check_pass=0.8, check_fail=0.4),
            id="pass-and-fail",
        ),
        pytest.param({"checkFail": None}, Limits(), id="fail-null-is-none"),
        pytest.param({"checkFail": 0.9}, Limits(check_fail=0.9), id="fail-equal-to-pass"),
        pytest.param({"checkConfidence": 0}, Limits(check_confidence=0), id="confidence-zero"),
        pytest.param({"checkPass": 1}, Limits(check_pass=1), id="integer-pass-1"),
        pytest.param({"checkStateBytes": 2}, Limits(check_state_bytes=2), id="state-bytes-minimum"),
        pytest.param(
            {"checkStateBytes": 1048576}, Limits(check_state_bytes=1048576), id="state-bytes-1mb"
        ),
        pytest.param(
            {"runDataBytes": 1000000, "maxSteps": 50, "checkPass": 0.95},
            Limits(check_pass=0.95),
            id="other-limits-ignored",
        ),
        pytest.param(
            {"check_pass": 0.1, "CheckPass": 0.2, "checkpass": 0.3},
            Limits(),
            id="near-miss-spellings-are-other-keys",
        ),
    ],
)
def test_from_json(data: dict[str, Any], expected: Limits) -> None:
    assert Limits.from_json(data) == expected


def test_from_json_takes_a_whole_describe_limits_object() -> None:
    limits = {
        "runDataBytes": 1_000_000,
        "checkPass": 0.85,
        "checkFail": 0.3,
        "checkConfidence": 0.7,
        "checkStateBytes": 32768,
        "someFutureLimit": {"nested": [1, 2]},
    }
    assert Limits.from_json(limits) == Limits(0.85, 0.3, 0.7, 32768)


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        pytest.param(Limits(), DEFAULT_JSON, id="defaults-omit-check-fail"),
        pytest.param(
            Limits(check_pass=0.8, check_fail=0.4, check_confidence=0.6, check_state_bytes=1024),
            {"checkPass": 0.8, "checkFail": 0.4, "checkConfidence": 0.6, "checkStateBytes": 1024},
            id="every-key",
        ),
        pytest.param(
            Limits(check_fail=0.0),
            {**DEFAULT_JSON, "checkFail": 0.0},
            id="check-fail-zero-is-kept",
        ),
    ],
)
def test_to_json(limits: Limits, expected: dict[str, Any]) -> None:
    assert limits.to_json() == expected
    assert Limits.from_json(limits.to_json()) == limits


BAD_NUMBERS = [
    pytest.param(True, "true", id="true"),
    pytest.param(False, "false", id="false"),
    pytest.param("0.9", '"0.9"', id="string"),
    pytest.param(math.nan, "nan", id="nan"),
    pytest.param(math.inf, "inf", id="inf"),
    pytest.param(-0.1, "-0.1", id="negative"),
    pytest.param(1.01, "1.01", id="above-1"),
    pytest.param(2, "2", id="integer-2"),
    pytest.param([0.9], "a list", id="list"),
]


@pytest.mark.parametrize("key", ["checkPass", "checkFail", "checkConfidence"])
@pytest.mark.parametrize(("value", "shown"), BAD_NUMBERS)
def test_from_json_refuses_a_bad_threshold(key: str, value: object, shown: str) -> None:
    # With checkPass 1, no valid checkFail is above it: only the bad value is reported.
    data = {"checkPass": 1, key: value}
    with pytest.raises(LimitsError) as caught:
        Limits.from_json(data)
    message = str(caught.value)
    assert key in message
    assert shown in message


@pytest.mark.parametrize("attr", ["check_pass", "check_fail", "check_confidence"])
@pytest.mark.parametrize(("value", "shown"), BAD_NUMBERS)
def test_constructor_refuses_a_bad_threshold(attr: str, value: object, shown: str) -> None:
    kwargs: dict[str, Any] = {"check_pass": 1, attr: value}
    with pytest.raises(LimitsError) as caught:
        Limits(**kwargs)
    assert attr in str(caught.value)
    assert shown in str(caught.value)


@pytest.mark.parametrize("key", ["checkPass", "checkConfidence"])
def test_from_json_refuses_null_for_a_required_threshold(key: str) -> None:
    with pytest.raises(LimitsError, match=key):
        Limits.from_json({key: None})


BAD_SIZES = [
    pytest.param(1, "1", id="one"),
    pytest.param(0, "0", id="zero"),
    pytest.param(-1, "-1", id="negative"),
    pytest.param(2.0, "2.0", id="float-2.0"),
    pytest.param(65536.0, "65536.0", id="float-65536.0"),
    pytest.param(math.nan, "nan", id="nan"),
    pytest.param("65536", '"65536"', id="string"),
    pytest.param(True, "true", id="true"),
    pytest.param(None, "null", id="null"),
]


@pytest.mark.parametrize(("value", "shown"), BAD_SIZES)
def test_from_json_refuses_a_bad_state_budget(value: object, shown: str) -> None:
    with pytest.raises(LimitsError) as caught:
        Limits.from_json({"checkStateBytes": value})
    assert "checkStateBytes" in str(caught.value)
    assert shown in str(caught.value)


@pytest.mark.parametrize(("value", "shown"), BAD_SIZES)
def test_constructor_refuses_a_bad_state_budget(value: object, shown: str) -> None:
    kwargs: dict[str, Any] = {"check_state_bytes": value}
    with pytest.raises(LimitsError) as caught:
        Limits(**kwargs)
    assert "check_state_bytes" in str(caught.value)
    assert shown in str(caught.value)


def test_fail_above_pass_is_refused() -> None:
    with pytest.raises(LimitsError) as caught:
        Limits.from_json({"checkPass": 0.9, "checkFail": 0.95})
    assert "checkFail" in str(caught.value)
    assert "checkPass" in str(caught.value)
    assert "0.95" in str(caught.value)
    with pytest.raises(LimitsError, match="check_fail"):
        Limits(check_pass=0.5, check_fail=math.nextafter(0.5, 1))
    # A fail above the default pass, when pass is not given, is just as wrong.
    with pytest.raises(LimitsError):
        Limits.from_json({"checkFail": 0.95})


def test_every_bad_key_is_named_at_once() -> None:
    with pytest.raises(LimitsError) as caught:
        Limits.from_json({"checkPass": "high", "checkConfidence": -1, "checkStateBytes": 0})
    message = str(caught.value)
    for key in ("checkPass", "checkConfidence", "checkStateBytes"):
        assert key in message


@pytest.mark.parametrize(
    "data", [None, [], ["checkPass", 0.9], "checkPass: 0.9", 0.9, True], ids=repr
)
def test_from_json_refuses_what_is_not_an_object(data: object) -> None:
    with pytest.raises(LimitsError):
        Limits.from_json(data)


def test_limits_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        Limits(check_confidence=2)
    with pytest.raises(CheckprofileError):
        Limits.from_json({"checkPass": 2})


@pytest.mark.parametrize(
    ("key", "attr"),
    [("checkPass", "check_pass"), ("checkConfidence", "check_confidence")],
)
def test_a_threshold_beyond_any_float_is_refused(key: str, attr: str) -> None:
    # JSON integers have no size limit (json.loads("1" + "0" * 400) is an int).
    huge = 10**400
    with pytest.raises(LimitsError, match=key):
        Limits.from_json({key: huge})
    with pytest.raises(LimitsError, match=attr):
        Limits(**{attr: huge})


thresholds = st.floats(0, 1)


@st.composite
def valid_limits(draw: st.DrawFn) -> Limits:
    pass_at = draw(thresholds | st.sampled_from([0, 1]))
    fail = draw(st.none() | st.floats(0, pass_at))
    return Limits(
        check_pass=pass_at,
        check_fail=fail,
        check_confidence=draw(thresholds),
        check_state_bytes=draw(st.integers(min_value=2, max_value=2**40)),
    )


@given(valid_limits())
def test_json_round_trip(limits: Limits) -> None:
    data = limits.to_json()
    assert set(data) <= set(KEYS.values())
    assert ("checkFail" in data) == (limits.check_fail is not None)
    assert all(value is not None for value in data.values())
    assert Limits.from_json(data) == limits


limit_values = (
    st.integers(-(2**64), 2**64)  # a huge integer is its own test above
    | st.floats()
    | st.none()
    | st.booleans()
    | st.text(max_size=5)
)


@given(st.dictionaries(st.sampled_from(sorted(KEYS.values())) | st.text(max_size=20), limit_values))
def test_from_json_raises_only_limits_error(data: dict[str, Any]) -> None:
    try:
        limits = Limits.from_json(data)
    except LimitsError:
        return
    for attr, key in KEYS.items():
        if key in data and data[key] is not None:
            assert getattr(limits, attr) == data[key]
