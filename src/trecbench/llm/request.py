"""What a request to a model is, before it is sent: its route (the openai SDK or litellm), its parameters
and its cache key. The one home of both, for the client and for what a dry run looks up in the cache.

    form = RequestForm.of(config)                       # config: a trecbench.llm.ModelConfig
    convo, sent, key = form.first(messages, schema=schema, max_tokens=64)

`LLM` (llm/client.py) sends `sent` and caches the reply under `key`; `judge llm --dry-run` counts a call
as answered by the cache when `key` is there, without making a client (no asyncio, no transport). A
request's parameters are the model's (`config.params`) and the call's; on top of them: a schema as
`response_format` where the server enforces one (see `uses_structured_output`), `additional_drop_params`
for a seed the provider does not take, and a higher temperature for a re-ask.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from trecbench.llm._litellm import load
from trecbench.llm.cache import request_key
from trecbench.llm.config import TRANSPORTS, ModelConfig, structured_output_setting

__all__ = ["RequestForm", "Endpoint", "sdk_endpoints", "deployments", "as_messages", "ASK_ONLY", "REASK_TEMPERATURE"]

Messages = Sequence[Mapping[str, Any]]
REASK_TEMPERATURE = 0.3  # a re-ask at temperature 0 would mostly get the same unusable text back
# Arguments of `LLM.ask` that say how to ask and read, not what is sent: never part of a request.
ASK_ONLY = ("parse", "reask", "purpose", "use_cache")
_OPENAI_COMPATIBLE = {"openai", "hosted_vllm"}
# Deployment keys only litellm's Router understands; their presence keeps a group on the Router.
_ROUTER_KEYS = {"rpm", "tpm", "weight", "order", "max_parallel_requests"}


def as_messages(messages: str | Messages) -> list[dict]:
    """Chat messages as sent: a string is one user message."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return [dict(m) for m in messages]


@dataclass(frozen=True)
class Endpoint:
    """One OpenAI-compatible server: the model name it serves, its base URL and key."""

    model: str
    api_base: str
    api_key: str


def _endpoint(load: Callable[[], Any], model: str, api_base: str | None, api_key: str | None) -> Endpoint | None:
    """The endpoint for `model` when it is served by an OpenAI-compatible server at an explicit api_base.

    A model named `openai/...` or `hosted_vllm/...` needs no litellm to know that; any other name asks
    litellm's provider resolution (`load` imports it).
    """
    if not api_base:
        return None
    provider, _, name = model.partition("/")
    if name and provider in _OPENAI_COMPATIBLE:
        env_key = os.environ.get(f"{provider.upper()}_API_KEY")
    else:
        try:
            name, provider, env_key, _ = load().get_llm_provider(model=model, api_base=api_base, api_key=api_key)
        except Exception:  # an unknown provider: the client says so in its own words
            return None
        if provider not in _OPENAI_COMPATIBLE:
            return None
    key = api_key or env_key or os.environ.get("OPENAI_API_KEY") or "none"  # local servers often take any key
    return Endpoint(name, api_base, key)


def sdk_endpoints(load: Callable[[], Any], kind: str, model: str, api_base: str | None, api_key: str | None,
                  deployments: Sequence[Mapping[str, Any]]) -> list[Endpoint] | None:
    """The endpoints the openai SDK would send to under transport `kind`, or None where litellm sends.

    `load` returns the litellm module; it is called only for a model whose name does not say that an
    OpenAI-compatible server serves it. Raises ValueError for a `kind` that cannot be used.
    """
    if kind not in TRANSPORTS:
        raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {kind!r}")
    if kind == "litellm":
        return None
    targets = deployments or [{"model": model, "api_base": api_base, "api_key": api_key}]
    endpoints = [None if set(d) & _ROUTER_KEYS else
                 _endpoint(load, d["model"], d.get("api_base"), d.get("api_key")) for d in targets]
    if all(e is not None for e in endpoints):
        return endpoints  # type: ignore[return-value]
    if kind == "openai":
        raise ValueError("transport 'openai' needs openai/ or hosted_vllm/ models with an api_base "
                         "(and no Router-only deployment keys such as rpm, tpm, weight)")
    return None


def deployments(config: ModelConfig) -> list[dict[str, Any]]:
    """The config's deployments as sent to: each with the group's model, key and api_base unless it names its own."""
    out = []
    for d in config.deployments or ():
        params = dict(d)
        params.setdefault("model", config.model)
        if config.api_key is not None:
            params.setdefault("api_key", config.api_key)
        if config.api_base is not None:
            params.setdefault("api_base", config.api_base)
        out.append(params)
    return out


class RequestForm:
    """How one client forms its requests: `sdk` says whether they go through the openai SDK (else litellm).

    With `dry_run` nothing will be sent, so litellm is not imported to learn whether the model takes a
    schema: its cost map answers (the same answer). Whether a provider litellm sends to takes `seed` is
    known to litellm only (`takes_seed`): a request with a seed imports it there, dry run or not.
    Raises LLMError for a bad TRECBENCH_STRUCTURED_OUTPUT.
    """

    def __init__(self, config: ModelConfig, *, sdk: bool, dry_run: bool = False):
        self.config, self.sdk, self.dry_run = config, sdk, dry_run
        self._structured = (config.structured_output if config.structured_output is not None
                            else structured_output_setting())
        # How a schema is sent: OpenAI's `json_schema` (OpenAI, vLLM, llama.cpp's own server), else the
        # `json_object` + `schema` form that llama-cpp-python's server takes; a refusal moves down the list.
        self.schema_style = "json_schema"
        self._takes_seed: bool | None = None  # whether the provider takes `seed` (Anthropic does not)

    @classmethod
    def of(cls, config: ModelConfig, *, dry_run: bool = True) -> "RequestForm":
        """The form of `config`'s requests, its route found as the client finds it (`sdk_endpoints`)."""
        sdk = sdk_endpoints(load, config.transport, config.model, config.api_base, config.api_key,
                            deployments(config)) is not None
        return cls(config, sdk=sdk, dry_run=dry_run)

    def uses_structured_output(self) -> bool:
        """Whether requests with a schema carry it as `response_format` (see ModelConfig.structured_output)."""
        if self._structured is None:
            if self.sdk:
                self._structured = True  # tried; a server that refuses it turns it off (`refused_schema_form`)
            elif self.dry_run and "litellm" not in sys.modules:  # litellm's answer, read from its cost map
                from trecbench.llm.cost import supports_response_schema

                self._structured = supports_response_schema(self.config.model)
            else:
                try:
                    self._structured = bool(load().supports_response_schema(model=self.config.model))
                except Exception:
                    self._structured = False
        return self._structured

    def refused_schema_form(self) -> None:
        """A server refused the schema as sent: the other form a server may take, then none (words only)."""
        if self.schema_style == "json_schema":
            self.schema_style = "json_object"
        else:
            self._structured = False

    def takes_seed(self) -> bool:
        """Whether requests may carry `seed` (litellm's list of the provider's parameters; OpenAI-compatible
        servers take it). Where it may not, litellm drops it: the seed stays in the cache key, so each of a
        judge's samples is still a call of its own."""
        if self._takes_seed is None:
            if self.sdk:
                self._takes_seed = True
            else:
                try:
                    litellm = load()
                    model, provider, *_ = litellm.get_llm_provider(self.config.model)
                    self._takes_seed = "seed" in (litellm.get_supported_openai_params(
                        model=model, custom_llm_provider=provider) or [])
                except Exception:
                    self._takes_seed = True  # unknown: sent, and a refusal says so
        return self._takes_seed

    def params(self, merged: Mapping[str, Any], schema: Mapping[str, Any] | None, turn: int) -> dict:
        """The parameters turn `turn` of a question sends (`merged`: the model's and the call's)."""
        params = dict(merged)
        if "seed" in params and not self.takes_seed():
            params["additional_drop_params"] = ["seed"]
        if turn > 0 and float(params.get("temperature") or 0.0) < REASK_TEMPERATURE:
            params["temperature"] = REASK_TEMPERATURE
        if schema is not None and self.uses_structured_output():
            if self.schema_style == "json_schema":
                params["response_format"] = {"type": "json_schema", "json_schema": dict(schema)}
            else:
                params["response_format"] = {"type": "json_object", "schema": dict(schema)["schema"]}
        return params

    def key(self, convo: Messages, sent: Mapping[str, Any]) -> str:
        """The cache key of a request (model, messages, parameters as sent)."""
        return request_key(self.config.model, convo, sent)

    def first(self, messages: str | Messages, *, schema: Mapping[str, Any] | None = None,
              **params: Any) -> tuple[list[dict], dict, str]:
        """(messages, parameters, cache key) of the first request `LLM.ask` sends for these arguments."""
        convo = as_messages(messages)
        sent = self.params({**self.config.params, **params}, schema, 0)
        return convo, sent, self.key(convo, sent)

    def first_key(self, messages: str | Messages, ask: Mapping[str, Any]) -> str:
        """The cache key of the first request of `LLM.ask(messages, **ask)` (its own arguments, `ASK_ONLY`, dropped)."""
        params = {k: v for k, v in ask.items() if k not in ASK_ONLY}
        return self.first(messages, **params)[2]
