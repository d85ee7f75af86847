"""Prices and token counts from litellm's offline cost map; a model without a price costs 0, flagged.

Prices are read from the cost map's JSON file in litellm's package without importing litellm (seconds of
start-up) until something else needs it; once litellm is imported its own cost functions are used.
"""
from __future__ import annotations

import json
import sys
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Mapping, Sequence

from trecbench.llm._litellm import load

_COST_MAP_FILE = "model_prices_and_context_window_backup.json"


@lru_cache(maxsize=1)
def _cost_map_file() -> dict[str, Any]:
    spec = find_spec("litellm")  # finds the package without running it
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / _COST_MAP_FILE
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
    return {}


def _litellm_loaded() -> bool:
    return "litellm" in sys.modules


def price_entry(model: str) -> Mapping[str, Any] | None:
    """The cost map's entry for `model` (`provider/name` also found under `name` when the provider matches)."""
    table = load().model_cost if _litellm_loaded() else _cost_map_file()
    entry = table.get(model)
    if entry is None and "/" in model:
        provider, name = model.split("/", 1)
        candidate = table.get(name)
        if candidate is not None and candidate.get("litellm_provider") == provider:
            entry = candidate
    return entry


def _table_prices(model: str) -> tuple[float, float] | None:
    entry = price_entry(model) or {}
    cin, cout = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
    if not cin and not cout:
        return None
    return float(cin or 0.0), float(cout or 0.0)


# Providers for which litellm's model-info lookup downloads the model's config from huggingface.co,
# offline mode or not: their price is looked up in the cost map only.
_FETCHING_PROVIDERS = {"huggingface"}


def is_priced(model: str) -> bool:
    """True when litellm's cost map (or `litellm.register_model`) gives `model` a non-zero per-token price."""
    if not _litellm_loaded():
        return _table_prices(model) is not None
    litellm = load()
    try:
        provider = litellm.get_llm_provider(model=model)[1]
    except Exception:
        return False
    if provider in _FETCHING_PROVIDERS:
        entry = litellm.model_cost.get(model) or {}
        return bool(entry.get("input_cost_per_token") or entry.get("output_cost_per_token"))
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(model=model, prompt_tokens=1000, completion_tokens=1000)
    except Exception:
        return False
    return float(prompt_cost) + float(completion_cost) > 0


def call_cost(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float, bool]:
    """(cost in USD, known) of a call with these token counts; (0.0, False) when the model has no price."""
    if not _litellm_loaded():
        prices = _table_prices(model)
        if prices is None:
            return 0.0, False
        return prompt_tokens * prices[0] + completion_tokens * prices[1], True
    litellm = load()
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    except Exception:
        return 0.0, False
    return float(prompt_cost) + float(completion_cost), True


def count_tokens(model: str, messages: Sequence[Mapping[str, Any]], *, import_litellm: bool = True) -> int:
    """Prompt tokens of `messages` for `model` (litellm.token_counter; ~4 characters a token if that fails).

    With `import_litellm=False` the approximation is used unless litellm is already imported.
    """
    if not import_litellm and not _litellm_loaded():
        return max(1, len(json.dumps(list(messages), ensure_ascii=False)) // 4)
    litellm = load()
    try:
        return int(litellm.token_counter(model=model, messages=list(messages)))
    except Exception:
        return max(1, len(json.dumps(list(messages), ensure_ascii=False)) // 4)


def count_text_tokens(model: str, text: str, *, import_litellm: bool = True) -> int:
    """Tokens of a plain text for `model` (same fallback and `import_litellm` as `count_tokens`)."""
    if not import_litellm and not _litellm_loaded():
        return max(1, len(text) // 4) if text else 0
    litellm = load()
    try:
        return int(litellm.token_counter(model=model, text=text))
    except Exception:
        return max(1, len(text) // 4) if text else 0
