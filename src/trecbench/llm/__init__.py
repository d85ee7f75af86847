"""The only place that talks to models: litellm calls, cached, retried, re-asked, counted and budgeted.

Importing this package is cheap: litellm (seconds to import) loads when the first `LLM` is made, with
its network look-ups turned off (`trecbench.llm._litellm`).
"""
from __future__ import annotations

from typing import Any

from trecbench.helpers.lazy import attribute, by_module

_EXPORTS = by_module({
    "trecbench.llm.client": ("LLM", "ModelConfig"),
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
