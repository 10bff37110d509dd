"""Evaluators backed by real models, each behind an optional extra.

Import each adapter by its module name; this package imports no SDK on its own::

    from checkprofile.adapters.systemone import SystemOneEvaluator  # checkprofile[systemone]
    from checkprofile.adapters.openai_decisions import DecisionsEvaluator  # checkprofile[openai]
    from checkprofile.adapters.openai_chat import ChatEvaluator  # checkprofile[openai]

``evaluator_from_spec("systemone:MODEL", environ=os.environ)`` builds one from a spec, as
``checkprofile run --evaluator`` does (the SDK is imported then, for that scheme only).

Every adapter follows the same rules: the material goes in as JSON data, never spliced into
instructions; SDK-level retries are off (the profile's single re-ask is the only retry); a
question it could not answer is a :class:`~checkprofile.Failure` with a reason, never a guess;
and the reply names the model version that answered, not the alias it was configured with.
"""

from __future__ import annotations

from ._spec import evaluator_from_spec

__all__ = ["evaluator_from_spec"]
