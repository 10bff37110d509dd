# Names vulture (tools/vulture, run by .ci/run at --min-confidence 60) cannot see used, each
# group with why it is alive. Not imported by anything: vulture reads it as a list of uses.
# A new entry needs a reason as these have; dead code is deleted, not listed here.
# ruff: noqa
# mypy: ignore-errors
# fmt: off

# The package face's lazy names (PEP 562): called by the import system.
__getattr__
__dir__

# attrs validators, registered by their decorator (`@field.validator`).
_._check_questions
_._key_is_text
_._person_decided
_._answers_fit

# The fast schema reader's keywords: found by name (getattr(self, "_k_" + keyword)).
_._k_ref
_._k_type
_._k_enum
_._k_const
_._k_properties
_._k_additionalProperties
_._k_unevaluatedProperties
_._k_required
_._k_propertyNames
_._k_minProperties
_._k_items
_._k_minItems
_._k_maxItems
_._k_uniqueItems
_._k_minLength
_._k_maxLength
_._k_pattern
_._k_minimum
_._k_maximum
_._k_allOf
_._k_anyOf
_._k_oneOf
_._k_not
_._k_if

# pytest's hooks, called by pytest by name.
pytest_addoption
pytest_configure
_.pytest_deselected
_.pytest_runtest_logreport
pytest_sessionfinish
pytest_terminal_summary

# Public API that the package itself does not call: hosts do (docs/api.md lists each).
_.from_record
_.decide
_.render_text
_.candidate_json
_.holds  # Window.holds: for a RecordSource of a host's own, which may read a superset
model_echoed
fit_cases
_.promised_by  # MonitorSettings.promised_by: a host watches what its recommendation promised

# Settings of third-party objects, read by those libraries (pydantic, ruamel.yaml, psycopg).
model_config
_.default_flow_style
_.sort_base_mapping_type_on_output
_.allow_block_plain
_.allow_flow_plain
_.allow_block
_.allow_single_quoted
_.allow_unicode
_.allow_duplicate_keys
_.itersize

# The escalation store's public surface, for hosts (tests/human/decide/test_human_store.py and
# examples/many-machines call them; nothing inside the package does).
_.claim
_.release
_.to_parcel
_.from_parcel
claimed_by
claimed_until
# Figure.at_least: public (checkprofile.human.Figure), for a host judging one share; the
# report's "met" no longer uses it, since a share chosen by a search needs the correction.
_.at_least
# A qualification's public reading (checkprofile.qualify): a probe's ``compared`` (read by
# ProbeResult.to_json through getattr) and Qualifications.from_trail, a host's entry point.
_.compared
_.from_trail
