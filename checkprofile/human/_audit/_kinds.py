"""Every kind of audit record, together: what a store keeps and a source gives.

A verdict and a decision (:mod:`._records`), a spot check of an enforced verdict
(:mod:`._spot`) and a model's qualification (:mod:`._qualification`) each live in the module of
their kind; this one names them all, above those modules, so that no kind's module has to
know of the others (no circle, not even one for type checkers).
"""

from __future__ import annotations

from typing import Final

from ._qualification import QualificationRecord
from ._records import DecisionRecord, VerdictRecord
from ._spot import SpotCheckRecord

__all__ = ["RECORD_TYPES", "AuditRecord"]

#: Any record of the trail.
AuditRecord = VerdictRecord | DecisionRecord | SpotCheckRecord | QualificationRecord

#: The classes of :data:`AuditRecord`, for a check by type.
RECORD_TYPES: Final = (VerdictRecord, DecisionRecord, SpotCheckRecord, QualificationRecord)
