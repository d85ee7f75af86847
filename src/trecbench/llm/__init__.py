"""The only place that talks to models: litellm calls, cached, retried, re-asked, counted and budgeted.

Importing this package is cheap: litellm (seconds to import) loads when the first `LLM` is made, with
its network look-ups turned off (`trecbench.llm._litellm`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trecbench.helpers.lazy import attribute, by_module

# What type checkers and editors see; at run time `_EXPORTS` imports each name on first use (helpers/lazy.py).
if TYPE_CHECKING:
    from trecbench.llm.client import LLM as LLM
    from trecbench.llm.config import ModelConfig as ModelConfig
    from trecbench.llm.records import Completion as Completion, Outcome as Outcome, Usage as Usage, CallRecord as CallRecord
    from trecbench.llm.cache import ResponseCache as ResponseCache, ensure_schema as ensure_schema, request_key as request_key
    from trecbench.llm.budget import Budget as Budget, Estimate as Estimate, Plan as Plan
    from trecbench.llm.errors import (
        ParseError as ParseError, LLMError as LLMError, ModelCallError as ModelCallError, BudgetExceeded as BudgetExceeded,
    )
    from trecbench.llm.parse import (
        final_answer as final_answer, extract_json as extract_json, json_object as json_object, json_list as json_list,
        reask_messages as reask_messages,
    )
    from trecbench.llm.prompts import TaskPrompt as TaskPrompt, TASKS as TASKS

_EXPORTS = by_module({
    "trecbench.llm.client": ("LLM",),
    "trecbench.llm.config": ("ModelConfig",),
    "trecbench.llm.records": ("Completion", "Outcome", "Usage", "CallRecord"),
    "trecbench.llm.cache": ("ResponseCache", "ensure_schema", "request_key"),
    "trecbench.llm.budget": ("Budget", "Estimate", "Plan"),
    "trecbench.llm.errors": ("ParseError", "LLMError", "ModelCallError", "BudgetExceeded"),
    "trecbench.llm.parse": ("final_answer", "extract_json", "json_object", "json_list", "reask_messages"),
    "trecbench.llm.prompts": ("TaskPrompt", "TASKS"),
})

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    return attribute(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return __all__
