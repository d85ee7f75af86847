"""Prices and token counts from litellm's offline cost map; a model without a price costs 0, flagged."""
from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

from trecbench.llm._litellm import load


# Providers for which litellm's model-info lookup downloads the model's config from huggingface.co,
# offline mode or not: their price is looked up in the cost map only.
_FETCHING_PROVIDERS = {"huggingface"}


def is_priced(model: str) -> bool:
    """True when litellm's cost map (or `litellm.register_model`) gives `model` a non-zero per-token price."""
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


def call_cost(model: str, prompt_tokens: int, completion_tokens: int,
              prices: tuple[float, float] | None = None) -> tuple[float, bool]:
    """(cost in USD, known) of a call with these token counts; (0.0, False) when the model has no price.

    `prices` (input, output dollars per million tokens) are used instead of litellm's cost map when given.
    """
    if prices is not None:
        return (prompt_tokens * prices[0] + completion_tokens * prices[1]) / 1e6, True
    litellm = load()
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    except Exception:
        return 0.0, False
    return float(prompt_cost) + float(completion_cost), True


def count_tokens(model: str, messages: Sequence[Mapping[str, Any]]) -> int:
    """Prompt tokens of `messages` for `model` (litellm.token_counter; ~4 characters a token if that fails)."""
    litellm = load()
    try:
        return int(litellm.token_counter(model=model, messages=list(messages)))
    except Exception:
        return max(1, len(json.dumps(list(messages), ensure_ascii=False)) // 4)


def count_text_tokens(model: str, text: str) -> int:
    """Tokens of a plain text for `model` (same fallback as `count_tokens`)."""
    litellm = load()
    try:
        return int(litellm.token_counter(model=model, text=text))
    except Exception:
        return max(1, len(text) // 4) if text else 0


def dollars(value: float) -> str:
    """`$` and at least two decimals, or three significant digits below a cent, so a non-zero cost never shows 0."""
    if not value or not math.isfinite(value):
        return f"${value:.2f}"
    decimals = max(2, 2 - math.floor(math.log10(abs(value))))
    return f"${value:.{decimals}f}"
