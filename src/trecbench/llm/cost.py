"""Prices and token counts from litellm's offline cost map; a model without a price costs 0, flagged.

The one home of what a model call costs: a live call's (`call_cost`), a batch request's (`batch_cost`),
the per-token prices an estimate multiplies (`model_prices`), and what cached replies were paid (`paid_for`).

Prices are read from the cost map's JSON file in litellm's package without importing litellm (seconds of
start-up; trecbench.llm.cost_map) and looked up by `price_key`; once litellm is imported its own table is
read (a model registered with `litellm.register_model` counts) and its own cost functions are used.
Token counts are litellm's token_counter's numbers, counted without litellm (trecbench.llm.tokens) unless
it is imported already.
"""
from __future__ import annotations

import json
import math
import re
import sqlite3
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Collection, Mapping, Sequence

from trecbench.llm._litellm import load
from trecbench.llm.cost_map import canonical, cost_map

_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")  # a release date after a model's name: gpt-5.5-2026-04-24
_AZURE_NAMES = {"gpt-35-turbo": "azure/gpt-35-turbo", "gpt-35-turbo-instruct": "azure/gpt-35-turbo-instruct"}


def _litellm_loaded() -> bool:
    return "litellm" in sys.modules


def _table() -> Mapping[str, Any]:
    return load().model_cost if _litellm_loaded() else cost_map()


def price_key(model: str) -> str | None:
    """The cost map's name for `model`, as litellm's model-info look-up finds it, or None.

    The name itself, or lower-cased; `provider/name` also under `name` when that entry is the provider's;
    a dated release (`-2026-04-24`) under its undated name; Azure's `gpt-35-turbo` under `azure/`. An alias
    found under the bare name is reported as the model it stands for (litellm names it so).
    """
    table = _table()
    for name in dict.fromkeys((model, model.lower())):
        for candidate in (name, _DATED.sub("", name), _AZURE_NAMES.get(name)):
            if candidate is None:
                continue
            if candidate in table:
                return candidate
            if "/" in candidate:
                provider, bare = candidate.split("/", 1)
                entry = table.get(bare)
                if entry is not None and entry.get("litellm_provider") == provider:
                    return canonical(bare)
    return None


def price_entry(model: str) -> Mapping[str, Any] | None:
    """The cost map's entry for `model` (found by `price_key`)."""
    key = price_key(model)
    return None if key is None else _table()[key]


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


# Providers whose every model litellm says takes a response schema.
_SCHEMA_PROVIDERS = {"predibase", "fireworks_ai", "lm_studio", "nebius", "databricks"}


def supports_response_schema(model: str) -> bool:
    """litellm's `supports_response_schema(model)`, answered from its cost map (the entry's flag, or a
    provider whose every model takes one) without importing litellm. litellm's fallback rules, which
    place a few unlisted names in a family (`openai/databricks-claude-...`), are not applied."""
    provider, _, name = model.partition("/")
    entry = price_entry(model) or {}
    if not name:
        provider = str(entry.get("litellm_provider") or "")
    return provider in _SCHEMA_PROVIDERS or entry.get("supports_response_schema") is True


def call_cost(model: str, prompt_tokens: int, completion_tokens: int,
              prices: tuple[float, float] | None = None) -> tuple[float, bool]:
    """(cost in USD, known) of a call with these token counts; (0.0, False) when the model has no price.

    `prices` (input, output dollars per million tokens) are used instead of litellm's cost map when given.
    """
    if prices is not None:
        return (prompt_tokens * prices[0] + completion_tokens * prices[1]) / 1e6, True
    if not _litellm_loaded():
        prices_per_token = _table_prices(model)
        if prices_per_token is None:
            return 0.0, False
        return prompt_tokens * prices_per_token[0] + completion_tokens * prices_per_token[1], True
    litellm = load()
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    except Exception:
        return 0.0, False
    return float(prompt_cost) + float(completion_cost), True


class UnknownModelError(ValueError):
    """The model has no price in litellm's cost map: give prices per million tokens instead."""


@dataclass(frozen=True)
class Prices:
    """Dollars per token, and where they come from."""

    input: float
    output: float
    source: str


def model_prices(model: str, input_price: float | None = None, output_price: float | None = None) -> Prices:
    """Dollars per token for `model`: the given prices (per million tokens) or litellm's cost map.

    Raises UnknownModelError when the model is not in the map and no prices are given.
    """
    if input_price is not None and output_price is not None:
        return Prices(input_price / 1e6, output_price / 1e6, "given")
    key = price_key(model)
    if key is None:
        raise UnknownModelError(
            f"model {model!r} has no price in litellm's cost map (litellm {_version()}); give prices in dollars "
            f"per million tokens with --input-price and --output-price (e.g. --input-price 0.15 --output-price 0.60), "
            f"or use a model name the map knows, such as gpt-4o-mini or anthropic/claude-sonnet-4-5")
    entry = _table()[key]
    cin = float(entry.get("input_cost_per_token") or 0.0)  # a mapped model without a price field costs 0, as in litellm
    cout = float(entry.get("output_cost_per_token") or 0.0)
    if input_price is not None:
        cin = input_price / 1e6
    if output_price is not None:
        cout = output_price / 1e6
    return Prices(cin, cout, f"litellm cost map ({key})")


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("litellm")
    except Exception:
        return "?"


def batch_cost(model: str, prompt_tokens: int, completion_tokens: int) -> tuple[float, bool]:
    """(USD, known) of a batch request: litellm's batch prices where it has them, else half the live price."""
    info = price_entry(model) or {}
    ins, outs = info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches")
    if ins is not None and outs is not None:
        return float(ins) * prompt_tokens + float(outs) * completion_tokens, True
    cost, known = call_cost(model, prompt_tokens, completion_tokens)
    return cost * 0.5, known


def paid_for(conn: sqlite3.Connection, model: str, texts: Collection[str]) -> float | None:
    """Dollars first paid for the cached replies of `model` whose text is one of `texts` (None: none cached).

    A cached reply is `model`'s when it names `model` or its bare name (providers answer without the
    `provider/` prefix); the cost is the one recorded when the reply arrived, whatever prices say now.
    """
    from trecbench.store.model_calls import reply_costs

    bare = model.split("/", 1)[-1]
    costs = [cost for m, text, cost in reply_costs(conn) if text in texts and m in (model, bare)]
    if not costs:
        return None
    return float(sum(costs))


class PromptCounter:
    """Prompt tokens of chat messages for one model, the numbers litellm.token_counter gives, counted faster.

    litellm counts a conversation as a sum over its messages: a fixed part for each message's role and
    fields, plus its tokenizer's count of each content string (counted in fixed-size chunks of the
    string, so a string's count depends on the whole string). This counter takes the count function
    once (not once a call), counts the fixed parts of a shape of conversation (its roles and fields)
    once, and remembers the counts of the contents of every message but the last (a judge's
    instructions, the same in every call), so each call tokenizes only its own text (the topic and its
    passages), once.

    Given `litellm` (or with litellm imported already) the count function and the whole-conversation
    count are litellm's own: the first conversation of each shape is also counted by litellm.token_counter,
    and if the two disagree (another litellm), that shape is counted by litellm every time; content that
    is not a string (lists of parts) is always counted by litellm.token_counter. Without litellm they are
    trecbench.llm.tokens' (the same arithmetic, checked against litellm there), and litellm is not imported.
    """

    MEMO = 256  # distinct remembered contents; the memo starts over when full

    def __init__(self, model: str, litellm: Any = None):
        self.model = model
        self.litellm = litellm if litellm is not None else (load() if _litellm_loaded() else None)
        self.text = self._count_function()
        self._fixed: dict[tuple, int | None] = {}  # a shape's fixed tokens, None where litellm counts
        self._memo: dict[str, int] = {}

    def _count_function(self) -> Any:
        """litellm's own count of a text for this model (what token_counter(text=...) calls), else that call;
        without litellm, trecbench.llm.tokens' count."""
        if self.litellm is None:
            from trecbench.llm.tokens import text_counter

            return text_counter(self.model)
        try:
            from litellm.litellm_core_utils.token_counter import _get_count_function

            return _get_count_function(self.model, None)
        except Exception:  # another litellm: the public call counts the same, only slower
            return lambda text: int(self.litellm.token_counter(model=self.model, text=text))

    def _whole(self, messages: list) -> int:
        if self.litellm is None:
            from trecbench.llm.tokens import count_messages

            return count_messages(self.model, messages)
        return int(self.litellm.token_counter(model=self.model, messages=messages))

    def _content(self, text: str) -> int:
        count = self._memo.get(text)
        if count is None:
            if len(self._memo) >= self.MEMO:
                self._memo.clear()
            count = self._memo[text] = int(self.text(text))
        return count

    def __call__(self, messages: Sequence[Mapping[str, Any]]) -> int:
        messages = list(messages)
        if not messages or not all(isinstance(m.get("content"), str) and all(isinstance(v, str) for v in m.values())
                                   for m in messages):
            return self._whole(messages)
        shape = tuple(tuple(sorted((k, v) for k, v in m.items() if k != "content")) for m in messages)
        fixed = self._fixed.get(shape, -1)
        if fixed is None:
            return self._whole(messages)
        contents = [self._content(m["content"]) for m in messages[:-1]] + [int(self.text(messages[-1]["content"]))]
        if fixed == -1:  # a new shape: its fixed part, checked against the count of this whole conversation
            empty = [{**m, "content": ""} for m in messages]
            fixed = self._whole(empty)
            whole = self._whole(messages)
            self._fixed[shape] = fixed if fixed + sum(contents) == whole else None
            return whole
        return fixed + sum(contents)


@lru_cache(maxsize=16)
def prompt_counter(model: str) -> PromptCounter:
    """The PromptCounter of `model`, made once a process (litellm's if it is imported then, else without it)."""
    return PromptCounter(model)


def _approximate(text: str) -> int:
    from trecbench.llm.tokens import approximate_tokens

    return approximate_tokens(text)


def count_tokens(model: str, messages: Sequence[Mapping[str, Any]], *, import_litellm: bool = False) -> int:
    """Prompt tokens of `messages` for `model`: litellm.token_counter's count (see PromptCounter), or, if that
    fails, one token per CHARS_PER_TOKEN characters of the messages' JSON.

    litellm is never imported for it (`import_litellm` is kept for callers; the count is the same).
    """
    try:
        return prompt_counter(model)(messages)
    except Exception:
        return _approximate(json.dumps(list(messages), ensure_ascii=False))


def count_text_tokens(model: str, text: str, *, import_litellm: bool = False) -> int:
    """Tokens of a plain text for `model` (same count and fallback as `count_tokens`)."""
    try:
        return int(prompt_counter(model).text(text))
    except Exception:
        return _approximate(text)


def dollars(value: float) -> str:
    """`$` and at least two decimals, or three significant digits below a cent, so a non-zero cost never shows 0."""
    if not value or not math.isfinite(value):
        return f"${value:.2f}"
    decimals = max(2, 2 - math.floor(math.log10(abs(value))))
    return f"${value:.{decimals}f}"
