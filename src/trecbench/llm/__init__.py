"""The only place that talks to models: litellm calls, cached, retried, re-asked, counted and budgeted.

Importing this package is cheap: litellm (seconds to import) loads when the first `LLM` is made, with
its network look-ups turned off (`trecbench.llm._litellm`).
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "LLM": "client",
    "ModelConfig": "client",
    "Completion": "records",
    "Outcome": "records",
    "Usage": "records",
    "CallRecord": "records",
    "ResponseCache": "cache",
    "ensure_schema": "cache",
    "request_key": "cache",
    "Budget": "budget",
    "Estimate": "budget",
    "Plan": "budget",
    "ParseError": "errors",
    "LLMError": "errors",
    "ModelCallError": "errors",
    "BudgetExceeded": "errors",
    "final_answer": "parse",
    "extract_json": "parse",
    "json_object": "parse",
    "json_list": "parse",
    "reask_messages": "parse",
    "TaskPrompt": "prompts",
    "TASKS": "prompts",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"trecbench.llm.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'trecbench.llm' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
