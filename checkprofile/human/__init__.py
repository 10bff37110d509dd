"""The human side of a check: the profile's records, receipts, decisions and the audit trail.

When a check is unsure a person decides. This module turns an :class:`~checkprofile.Outcome`
into every record the profile asks for (:func:`records_for`), gives the person a receipt to
decide from (:func:`receipt_for`; as a page with a form, :func:`receipt_html`, its post read
by :func:`decision_from_form`), takes their decision as a typed record
(:class:`Returned`, :class:`Completed`, :class:`Failed`; :func:`apply_decision`), and keeps an
audit trail of verdicts and decisions (:class:`JsonLinesRecorder`, :func:`read_records`; or
:class:`PostgresRecorder`, one store for many replicas), from which :func:`calibrate` measures
how advisory verdicts agreed with the people who decided the same submissions.
:class:`StepState` and one call per event (:func:`after_check`, :func:`after_decision`,
:func:`after_rework`) give a step's next state in core-2's shapes, and a :class:`Checkpoint`
(:func:`checkpoint_for`) holds an escalation whole, to decide later in another process; an
escalation store (:class:`SqliteEscalationStore`, or :class:`PostgresEscalationStore` for many
replicas) keeps the waiting ones and applies the first decision on each, once.
Everything but the recorders and the reading is pure: times come from the verdict or the
decision.
See ``docs/human-side.md``.
"""

from __future__ import annotations

from .._bundle_bytes import SHOWN_PIECES, bundle_bytes, bundle_sha256, shown_pieces
from .._verdict import Provenance
from ._audit._kinds import AuditRecord
from ._audit._postgres import PostgresRecorder, StoreError
from ._audit._qualification import ProbeResult, QualificationRecord
from ._audit._recorders import JsonLinesRecorder, Recorder
from ._audit._records import (
    AUDIT_FORMAT,
    DecisionRecord,
    VerdictRecord,
    check_key,
    decision_record,
    resolution_record,
    submission_key,
    submission_sha256,
    verdict_record,
)
from ._audit._sources import iter_records, read_records
from ._audit._spot import SpotCheckRecord, SpotPlan, sample_tag, spot_check_record
from ._audit._strict import MAX_LINE_BYTES, AuditError, TornLine, TornLineWarning, record_from_json
from ._calibration._calibrate import (
    MIN_CASES,
    Calibration,
    CallCost,
    Case,
    CheckCalibration,
    CheckCases,
    Confusion,
    CurvePoint,
    Figure,
    Figures,
    QuestionCalibration,
    Thresholds,
    TokenTotal,
    calibrate,
    calibrate_cases,
)
from ._calibration._monitor import (
    MonitorReport,
    MonitorSettings,
    StepWatch,
    monitor,
    monitor_update,
)
from ._calibration._monitor_report import monitor_html, monitor_text
from ._calibration._report import calibration_html, calibration_text
from ._decide._checkpoint import CHECKPOINT_FORMAT, Checkpoint, CheckpointError, checkpoint_for
from ._decide._decisions import (
    Completed,
    Decision,
    DecisionKind,
    DecisionRequiredError,
    Failed,
    Resolution,
    Returned,
    apply_decision,
    decision_from_json,
)
from ._decide._form import FORM_CHOICES, FormRefusedError, decision_from_form, form_post
from ._decide._page import receipt_headers, receipt_html
from ._decide._receipts import (
    RECEIPT_FORMAT,
    Receipt,
    ReceiptError,
    ShownPiece,
    distance_from_passing,
    drivers,
    receipt_for,
    threshold_text,
)
from ._decide._records import Escalation, Handoff, Records, ReturnNote, records_for
from ._decide._state import (
    STATE_FORMAT,
    StateError,
    StepState,
    after_check,
    after_decision,
    after_rework,
    escalate_error,
    replayable,
)
from ._decide._store import (
    DEFAULT_ESCALATION_TABLE,
    AlreadyDecidedError,
    Claim,
    ClaimedError,
    Decided,
    EscalationStore,
    EscalationStoreError,
    NoSuchEscalationError,
    SameDeciderError,
    SqliteEscalationStore,
    Waiting,
)
from ._decide._store_postgres import PostgresEscalationStore

# Plain sorted() order, the house rule (ruff would put the constants first).
__all__ = [  # noqa: RUF022
    "AUDIT_FORMAT",
    "AlreadyDecidedError",
    "AuditError",
    "AuditRecord",
    "CHECKPOINT_FORMAT",
    "Calibration",
    "CallCost",
    "Case",
    "CheckCalibration",
    "CheckCases",
    "Checkpoint",
    "CheckpointError",
    "Claim",
    "ClaimedError",
    "Completed",
    "Confusion",
    "CurvePoint",
    "DEFAULT_ESCALATION_TABLE",
    "Decided",
    "Decision",
    "DecisionKind",
    "DecisionRecord",
    "DecisionRequiredError",
    "Escalation",
    "EscalationStore",
    "EscalationStoreError",
    "FORM_CHOICES",
    "Failed",
    "Figure",
    "Figures",
    "FormRefusedError",
    "Handoff",
    "JsonLinesRecorder",
    "MAX_LINE_BYTES",
    "MIN_CASES",
    "MonitorReport",
    "MonitorSettings",
    "NoSuchEscalationError",
    "PostgresEscalationStore",
    "PostgresRecorder",
    "ProbeResult",
    "Provenance",
    "QualificationRecord",
    "QuestionCalibration",
    "RECEIPT_FORMAT",
    "Receipt",
    "ReceiptError",
    "Recorder",
    "Records",
    "Resolution",
    "ReturnNote",
    "Returned",
    "SHOWN_PIECES",
    "STATE_FORMAT",
    "SameDeciderError",
    "ShownPiece",
    "SpotCheckRecord",
    "SpotPlan",
    "SqliteEscalationStore",
    "StateError",
    "StepState",
    "StepWatch",
    "StoreError",
    "Thresholds",
    "TokenTotal",
    "TornLine",
    "TornLineWarning",
    "VerdictRecord",
    "Waiting",
    "after_check",
    "after_decision",
    "after_rework",
    "apply_decision",
    "bundle_bytes",
    "bundle_sha256",
    "calibrate",
    "calibrate_cases",
    "calibration_html",
    "calibration_text",
    "check_key",
    "checkpoint_for",
    "decision_from_form",
    "decision_from_json",
    "decision_record",
    "distance_from_passing",
    "drivers",
    "escalate_error",
    "form_post",
    "iter_records",
    "monitor",
    "monitor_html",
    "monitor_text",
    "monitor_update",
    "read_records",
    "receipt_for",
    "receipt_headers",
    "receipt_html",
    "record_from_json",
    "records_for",
    "replayable",
    "resolution_record",
    "sample_tag",
    "shown_pieces",
    "spot_check_record",
    "submission_key",
    "submission_sha256",
    "threshold_text",
    "verdict_record",
]
