"""Which model to call and how (`ModelConfig`), and the checks of a model's name: what option parsing needs.

Light on purpose: a command's options are parsed, and a dry run of `judge llm` made, with this module
alone, without the client (llm/client.py, which imports asyncio and the transports). The client takes
these names from here; `trecbench.llm.ModelConfig` and `trecbench.llm.client.ModelConfig` are this class.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from trecbench.llm._litellm import load
from trecbench.llm.errors import LLMError

__all__ = ["ModelConfig", "TRANSPORTS", "STRUCTURED_OUTPUT_VARIABLE", "structured_output_setting", "KNOWN_PROVIDERS",
           "known_without_litellm", "check_model_name", "first_line"]

TRANSPORTS = ("auto", "litellm", "openai")


@dataclass(frozen=True)
class ModelConfig:
    """Which model to call and how.

    `model` is a litellm model name (`openai/gpt-4o-mini`, `hosted_vllm/llama-3-8b`, ...); with
    `deployments` it names the group, and each deployment (`{"model": ..., "api_base": ..., "api_key":
    ...}`, `model` defaulting to this one) is a server that calls are spread over (to the one with the
    fewest in flight, or by litellm's Router when the transport is litellm). `params` are
    sent with every call and are part of the cache key. `max_retries` counts retries after the first
    attempt; back-off starts at `backoff` seconds and doubles up to `max_backoff`. At most `concurrency`
    requests are in flight, and with `rpm` at most that many start per minute. `transport` is `litellm`,
    `openai` (the openai SDK straight to OpenAI-compatible servers), or `auto`: the SDK where every
    endpoint is an `openai/` or `hosted_vllm/` model with an api_base, litellm elsewhere (see transport.py).
    `prices` are (input, output) dollars per million tokens, for a model litellm's cost map has no price for.
    `structured_output` says whether the server enforces a JSON schema given as `response_format`: None
    detects it (litellm's `supports_response_schema`; OpenAI-compatible servers are tried, and a server
    that refuses the parameter is asked again without it), True or False declares it; the environment
    variable TRECBENCH_STRUCTURED_OUTPUT (on, off, auto) declares it for every command.
    """

    model: str
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    params: Mapping[str, Any] = field(default_factory=lambda: {"temperature": 0})
    timeout: float = 60.0
    max_retries: int = 4
    deployments: Sequence[Mapping[str, Any]] | None = None
    concurrency: int = 8
    rpm: float | None = None
    backoff: float = 1.0
    max_backoff: float = 60.0
    transport: str = "auto"
    prices: tuple[float, float] | None = None
    structured_output: bool | None = None

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("ModelConfig needs a model name")
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.max_retries < 0 or self.timeout <= 0:
            raise ValueError("max_retries must be >= 0 and timeout > 0")
        if self.prices is not None and (len(self.prices) != 2 or min(self.prices) < 0):
            raise ValueError("prices must be (input, output) dollars per million tokens, both >= 0")
        if self.transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {self.transport!r}")


STRUCTURED_OUTPUT_VARIABLE = "TRECBENCH_STRUCTURED_OUTPUT"


def structured_output_setting() -> bool | None:
    """`TRECBENCH_STRUCTURED_OUTPUT`: `on`/`off` declare whether servers enforce a schema; unset or `auto` detects.

    Raises LLMError for any other value, naming the ones it takes.
    """
    value = os.environ.get(STRUCTURED_OUTPUT_VARIABLE, "").strip().lower()
    if value in ("", "auto"):
        return None
    if value in ("on", "1", "true", "yes"):
        return True
    if value in ("off", "0", "false", "no"):
        return False
    raise LLMError(f"{STRUCTURED_OUTPUT_VARIABLE}={value!r}: use on, off or auto")


def first_line(exc: BaseException, limit: int = 400) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


# Providers litellm resolves from a `provider/` prefix alone (tests/llm/test_tokens.py checks each against
# litellm): a name with one needs no import of litellm (seconds) to be checked. Any other name asks litellm.
KNOWN_PROVIDERS = frozenset({
    "openai", "hosted_vllm", "anthropic", "azure", "azure_ai", "gemini", "vertex_ai", "bedrock", "ollama",
    "ollama_chat", "openrouter", "together_ai", "groq", "mistral", "deepseek", "fireworks_ai", "cohere",
    "cohere_chat", "huggingface", "vllm", "lm_studio", "xai", "perplexity", "databricks", "watsonx", "sagemaker",
    "text-completion-openai", "deepinfra", "cerebras", "nvidia_nim", "llamafile", "litellm_proxy"})
# Bare names litellm knows by its cost map: those of these providers (its lists of their models).
_BARE_PROVIDERS = frozenset({"openai", "anthropic", "text-completion-openai", "cohere", "cohere_chat"})


def known_without_litellm(model: str) -> bool:
    """True when `model`'s provider is clear without asking litellm: a known `provider/` prefix, or a bare
    name litellm's cost map lists under a provider litellm knows bare names of."""
    from trecbench.llm.cost_map import cost_map

    provider, _, name = model.partition("/")
    if name:
        return provider in KNOWN_PROVIDERS
    entry = cost_map().get(model)
    return isinstance(entry, dict) and entry.get("litellm_provider") in _BARE_PROVIDERS


def check_model_name(model: str) -> None:
    """Raise LLMError unless litellm can tell which provider serves `model` (known providers' names need no
    look-up, see `known_without_litellm`)."""
    if known_without_litellm(model):
        return
    try:
        load().get_llm_provider(model=model)
    except Exception as exc:
        raise LLMError(
            f"model {model!r}: litellm cannot tell which provider serves it ({first_line(exc, 160)}); "
            "name it as provider/model, e.g. openai/gpt-4o-mini or hosted_vllm/<served name>") from None
