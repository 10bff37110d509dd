"""``describe.limits``: the server's defaults for checks (profile section 5)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ._convert import (
    NotJson,
    converter,
    is_probability,
    override,
    plain,
    plain_scalar,
    register_renamed,
)
from ._shown import show
from .errors import LimitsError

__all__ = ["Limits"]

# Python attribute -> describe.limits key. The JSON names are the profile's.
_JSON_NAMES = {
    "check_pass": "checkPass",
    "check_fail": "checkFail",
    "check_confidence": "checkConfidence",
    "check_state_bytes": "checkStateBytes",
}

# The smallest run data view is "{}": a budget below 2 bytes could never be met.
_MIN_STATE_BYTES = 2


def _limit_errors(values: Mapping[str, Any], names: Mapping[str, str]) -> list[str]:
    """Every reason ``values`` (keyed by attribute) are not usable limits, named by ``names``."""
    errors = []
    for attr in ("check_pass", "check_fail", "check_confidence"):
        value = values[attr]
        if value is None and attr == "check_fail":
            continue
        if not is_probability(value):
            errors.append(f"{names[attr]} must be a number in [0, 1], got {show(value)}")
    size = values["check_state_bytes"]
    if type(size) is not int or size < _MIN_STATE_BYTES:
        errors.append(
            f"{names['check_state_bytes']} must be an integer of at least {_MIN_STATE_BYTES}"
            f" (bytes), got {show(size)}"
        )
    fail, pass_ = values["check_fail"], values["check_pass"]
    if not errors and fail is not None and fail > pass_:
        errors.append(
            f"{names['check_fail']} {show(fail)} is above {names['check_pass']} {show(pass_)}"
        )
    return errors


@attrs.frozen
class Limits:
    """The check limits a server publishes in ``describe.limits``.

    ``check_pass``: default yes/no pass threshold; ``check_fail``: default yes/no fail threshold
    (``None``: below ``pass`` fails); ``check_confidence``: default confidence threshold for
    choice and rubric questions; ``check_state_bytes``: how many bytes of run data the
    evaluator is shown. Invalid values raise :class:`~checkprofile.errors.LimitsError`.
    """

    # Each value is made plain as it is given (a float subclass is its float), so the checks
    # below judge the value and not a subclass's own comparisons.
    check_pass: float = attrs.field(default=0.9, converter=plain_scalar)
    check_fail: float | None = attrs.field(default=None, converter=plain_scalar)
    check_confidence: float = attrs.field(default=0.8, converter=plain_scalar)
    check_state_bytes: int = attrs.field(default=65536, converter=plain_scalar)

    def __attrs_post_init__(self) -> None:
        errors = _limit_errors(
            attrs.asdict(self, recurse=False), {name: name for name in _JSON_NAMES}
        )
        if errors:
            raise LimitsError("; ".join(errors))

    @classmethod
    def from_json(cls, data: object) -> Limits:
        """Read ``describe.limits``. Missing keys take the server defaults; other keys
        (``runDataBytes`` and the like) are ignored, so a whole ``limits`` object can be given."""
        try:
            data = plain(data)
        except NotJson as error:
            raise LimitsError(f"limits must be JSON data: {error}") from None
        if not isinstance(data, dict):
            raise LimitsError(f"limits must be a JSON object, got {show(data)}")
        defaults = attrs.asdict(cls(), recurse=False)
        values = {
            attr: data[key] if key in data else defaults[attr] for attr, key in _JSON_NAMES.items()
        }
        errors = _limit_errors(values, _JSON_NAMES)
        if errors:
            raise LimitsError("; ".join(errors))
        return converter.structure({key: values[attr] for attr, key in _JSON_NAMES.items()}, cls)

    def to_json(self) -> dict[str, Any]:
        """The ``describe.limits`` keys (``checkFail`` is left out while it is ``None``)."""
        data: dict[str, Any] = converter.unstructure(self)
        return data


# `checkFail` is left out while it is None (no default fail threshold); the rest always show.
_OVERRIDES: dict[str, Any] = {attr: override(rename=key) for attr, key in _JSON_NAMES.items()}
_OVERRIDES["check_fail"] = override(rename="checkFail", omit_if_default=True)
register_renamed(Limits, **_OVERRIDES)
