"""Tools for test suites: assert verdict logic without a model, replay a real one's answers.

- :class:`ScriptedEvaluator` answers from a script keyed by each question's ``ask``;
  :class:`RecordingEvaluator` wraps any evaluator and keeps what it was shown and answered;
  :func:`replay_evaluator` gives the answers of an answers file (``replay:ANSWERS``).
- :mod:`checkprofile.testing.cassette`: a real model's answers recorded once into a file,
  replayed without a key; pytest's ``check_cassette`` fixture (the plugin that installing
  checkprofile registers) is the usual way to use it.
- :func:`assert_outcome` (:mod:`checkprofile.testing.assertions`) compares an outcome's action,
  verdict, issue lines and results, failing with pytest's own diff.
- :mod:`checkprofile.testing.strategies`: Hypothesis strategies for check keys, checks, answers
  (valid and malformed), run data and submissions. It needs ``hypothesis``; nothing else here
  does.

    >>> from checkprofile import YesNoAnswer
    >>> from checkprofile.testing import ScriptedEvaluator
    >>> evaluator = ScriptedEvaluator({"Is the report attached?": YesNoAnswer(0.97)})
"""

from __future__ import annotations

from ._replay import ReplayError, replay_evaluator
from ._scripted import RecordingEvaluator, ScriptedEvaluator, Step
from .assertions import assert_outcome

__all__ = [
    "RecordingEvaluator",
    "ReplayError",
    "ScriptedEvaluator",
    "Step",
    "assert_outcome",
    "replay_evaluator",
]
