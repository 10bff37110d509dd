"""The exception family of checkprofile, and :class:`Problem`.

Every error the library raises on purpose is a :class:`CheckprofileError`. Each subclass also
inherits the standard exception it resembles, so ``except ValueError`` keeps working.

Two kinds of error are kept apart, because a host reacts to them differently:

* *your input is wrong* -- :class:`CheckError` (a check key), :class:`LimitsError`,
  :class:`MaterialError`, :class:`VerdictError` (a recorded verdict that does not hold up);
* *the model misbehaved* -- :class:`AnswerError` (an answer that does not fit its question) and
  :class:`EvaluatorError` (an evaluator that could not answer). These never become a pass or a
  fail; :func:`checkprofile.run_check` turns them into an ``error`` verdict.

The whole family, wherever each class is defined (each is imported from the public module
named, never from where it lives)::

    CheckprofileError(Exception)
    +-- CheckError(ValueError)             checkprofile, checkprofile.errors: a check key
    +-- LimitsError(ValueError)            checkprofile.errors: profile limits
    +-- MaterialError(ValueError)          checkprofile.errors: a submission, run data, a text
    +-- VerdictError(ValueError)           checkprofile.errors: a recorded verdict
    +-- AnswerError(ValueError)            checkprofile.errors: an answer that does not fit
    +-- EvaluatorError(RuntimeError)       checkprofile.errors: an evaluator could not answer
    +-- ProcessError(ValueError)           checkprofile: a PROCESS.md file
    +-- YamlError(ValueError)              (internal) a PROCESS.md's frontmatter, read as YAML
    +-- CorpusError(ValueError)            checkprofile.conformance: a conformance case
    +-- CassetteError(ValueError)          checkprofile.testing: a cassette file
    +-- ReplayError(ValueError)            checkprofile.testing: recorded answers to replay
    +-- ReceiptError(ValueError)           checkprofile.human: a receipt's JSON
    +-- StateError(ValueError)             checkprofile.human: a step's state or event
    |   +-- CheckpointError                checkprofile.human: an escalation's checkpoint
    +-- DecisionRequiredError(TypeError, ValueError)
    |                                      checkprofile.human: a person's decision
    +-- FormRefusedError(PermissionError)  checkprofile.human: a decision form's post
    +-- AuditError(ValueError)             checkprofile.human: an audit record or trail
    +-- StoreError(OSError)                checkprofile.human: the PostgreSQL store
    +-- EscalationStoreError(OSError)      checkprofile.human: an escalation store
    +-- NoSuchEscalationError(KeyError)    checkprofile.human: no such checkpoint in a store
    +-- AlreadyDecidedError(ValueError)    checkprofile.human: a second decision, refused
    +-- ClaimedError(PermissionError)      checkprofile.human: another reviewer's lease
    +-- SameDeciderError(PermissionError)  checkprofile.human: the submitter deciding
    +-- CasesError(ValueError)             checkprofile.qualify: a folder of cases
    +-- BudgetError(ValueError)            checkprofile.qualify: more requests than allowed
    +-- EvaluatorUnreachableError(RuntimeError)
                                           checkprofile.qualify: a battery no request answered

The adapters' transport raises an :class:`EvaluatorError` of its own (a boundary broken: a
redirect, a body past its cap, a deadline), which the evaluator reports as a failure. Outside
the family, on purpose: the command line's usage error (it only sets the exit status), and the
private markers readers use inside one module.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from ._shown import shown_pointer

__all__ = [
    "AnswerError",
    "CheckError",
    "CheckprofileError",
    "EvaluatorError",
    "FailureReason",
    "LimitsError",
    "MaterialError",
    "Problem",
    "VerdictError",
    "pointer_token",
]

#: Why an evaluator did not answer a question. ``malformed`` covers every answer that does not
#: fit its question (wrong type, out of range, unknown name, missing). ``redirected``: the host
#: answered with a redirect, which is never followed. ``unsupported``: the host said it cannot
#: answer that kind of question (it is not asked again within the check).
FailureReason = Literal[
    "timeout",
    "rate_limited",
    "refusal",
    "malformed",
    "tokens_exceeded",
    "auth",
    "server_error",
    "unavailable",
    "redirected",
    "unsupported",
    "unknown",
]


def pointer_token(token: str | int) -> str:
    """One reference token of an RFC 6901 JSON Pointer: a map key (a string) or a list index
    (an int). Raises :class:`TypeError` for anything else, and :class:`ValueError` for an
    int too long to write (no list has such an index)."""
    kind = type(token)
    if issubclass(kind, str):
        text = str.__str__(token)
    elif issubclass(kind, int) and kind is not bool:
        try:
            text = int.__repr__(token)
        except ValueError:
            raise ValueError("a list index too long to write is no index") from None
    else:
        raise TypeError(f"a JSON Pointer token is a string or an int, got a {kind.__name__}")
    # Section 3: "~" must be escaped before "/", or "~1" would be read back as "/".
    return text.replace("~", "~0").replace("/", "~1")


def _path(tokens: tuple[str | int, ...] | list[str | int]) -> tuple[str | int, ...]:
    return tuple(tokens)


@attrs.frozen
class Problem:
    """One thing wrong with a check key.

    ``path`` leads from the root of the check key to the offending key or value (strings are map
    keys, integers list indexes); ``pointer`` is the same path as an RFC 6901 JSON Pointer
    (``""`` for the root). ``message`` quotes the value given and says what was expected.
    """

    path: tuple[str | int, ...] = attrs.field(converter=_path)
    message: str

    @property
    def pointer(self) -> str:
        return "".join("/" + pointer_token(token) for token in self.path)

    def rerooted(self, *prefix: str | int) -> Problem:
        """The same problem seen from an enclosing document (``prefix`` leads to the check key)."""
        return Problem((*prefix, *self.path), self.message)

    def __str__(self) -> str:
        return f"{shown_pointer(self.pointer) if self.pointer else '(root)'}: {self.message}"


#: How many problems an error's message lists; all of them are in its ``problems``.
LISTED_PROBLEMS = 50


def problems_text(what: str, problems: tuple[Problem, ...]) -> str:
    """``what has N problems:`` and one line per problem, the first :data:`LISTED_PROBLEMS`
    of them (a message stays readable, and its size bounded, however many there are)."""
    count = len(problems)
    lines = [f"  {problem}" for problem in problems[:LISTED_PROBLEMS]]
    if count > LISTED_PROBLEMS:
        lines.append(f"  ... and {count - LISTED_PROBLEMS} more (see .problems)")
    return f"{what} has {count} problem{'s' * (count != 1)}:\n" + "\n".join(lines)


class CheckprofileError(Exception):
    """Base of every error checkprofile raises on purpose.

    Every one pickles and reads back as itself (its message, ``args`` and attributes), whatever
    its ``__init__`` takes, so an error crosses a process as a task queue or an engine carries
    it (Celery, DBOS and multiprocessing pickle a task's error)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuilt_error, (type(self), self.args, dict(self.__dict__))


def _rebuilt_error(
    kind: type[CheckprofileError], args: tuple[Any, ...], state: dict[str, Any]
) -> CheckprofileError:
    """The error pickled by :meth:`CheckprofileError.__reduce__`, without calling its
    ``__init__`` (which may take other arguments than its ``args``)."""
    error = kind.__new__(kind, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class CheckError(CheckprofileError, ValueError):
    """A check key is not valid. ``problems`` holds every problem found, never just the first."""

    problems: tuple[Problem, ...]

    def __init__(self, problems: tuple[Problem, ...] | list[Problem]) -> None:
        problems = tuple(problems)
        if not problems:
            raise ValueError("CheckError needs at least one problem")
        self.problems = problems
        super().__init__(problems_text("the check key", problems))


class LimitsError(CheckprofileError, ValueError):
    """``describe.limits`` values that are not usable (named with the bad value)."""


class MaterialError(CheckprofileError, ValueError):
    """The material for a check (run data, submission) cannot be shown to an evaluator, or
    does not have core-2's shape where it is checked for it.

    ``path`` leads to the bad part from the root of what was read (``("evidence", 1)`` in a
    submission), ``()`` when it is the whole. ``problems`` holds every problem found when a
    whole shape was checked (:func:`checkprofile.check_run_data`,
    :meth:`checkprofile.Submission.from_json`), the first of them at ``path``; it is empty
    for an error about one value.
    """

    path: tuple[str | int, ...]
    problems: tuple[Problem, ...]

    def __init__(
        self,
        message: str,
        *,
        path: tuple[str | int, ...] = (),
        problems: tuple[Problem, ...] = (),
    ) -> None:
        super().__init__(message)
        self.path = path
        self.problems = tuple(problems)


class VerdictError(CheckprofileError, ValueError):
    """A verdict record that does not have the check-verdict shape, or contradicts itself."""


class AnswerError(CheckprofileError, ValueError):
    """An evaluator's answer does not fit its question: the model misbehaved.

    Raised by :func:`checkprofile.grade` and :func:`checkprofile.combine`;
    :func:`checkprofile.run_check` never lets such an answer pass or fail, it re-asks instead.
    """


class EvaluatorError(CheckprofileError, RuntimeError):
    """An evaluator could not answer. ``reason`` says why, in the :data:`FailureReason` terms.

    Evaluators may raise it (or return a :class:`checkprofile.Failure`); either way the
    question counts as not answered. ``retry_after`` (seconds) is the server's hint, if any:
    the one re-ask waits for it (see ``run_check(max_retry_wait=...)``).
    """

    reason: FailureReason
    retry_after: float | None

    def __init__(
        self,
        message: str,
        *,
        reason: FailureReason = "unknown",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.retry_after = retry_after
