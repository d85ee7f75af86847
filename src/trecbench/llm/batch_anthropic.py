"""Anthropic's message batches (POST /v1/messages/batches, GET /v1/messages/batches[/{id}], the results at a
batch's `results_url`), over httpx: litellm's batch support reads Anthropic batches but does not create them.

Each request's parameters are the ones litellm sends live for the same request (litellm builds them:
structured output, max_tokens, the beta header it needs), so a batch reply is the reply a live call would
get. Anthropic batches carry no metadata: a batch whose id was never saved is found by listing the
batches created since it was written down that have as many requests and are not this workspace's
others; a finished one is confirmed by its results (their custom_ids are the requests' cache keys).
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Mapping

from trecbench.llm.batch_records import BatchRefused, BatchRequest, BatchResult, BatchResults, BatchState, PendingBatch, \
    read_results
from trecbench.llm.cache import canonical_json
from trecbench.llm.errors import LLMError

__all__ = ["AnthropicBatches", "API_VERSION"]

API_VERSION = "2023-06-01"
DEFAULT_BASE = "https://api.anthropic.com"
ROUTE = "/v1/messages/batches"
FIND_MARGIN = timedelta(minutes=15)  # clock difference allowed between this machine and the provider
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "stop",
          "refusal": "content_filter"}  # Anthropic's stop_reason in the words the live path records


class AnthropicBatches:
    """Anthropic's message batches at `api_base` (default https://api.anthropic.com)."""

    max_requests = 100_000  # a message batch's limits
    max_bytes = 256 * 2**20

    def __init__(self, api_base: str | None, api_key: str, model: str, timeout: float = 60.0):
        import httpx

        from trecbench.llm.transport import tls_context

        self.model = model  # the litellm name (anthropic/...)
        self.base = _root(api_base)
        self.client = httpx.Client(base_url=self.base, timeout=timeout,
                                   transport=httpx.HTTPTransport(retries=2, verify=tls_context()),
                                   headers={"x-api-key": api_key, "anthropic-version": API_VERSION})
        self._shapes: dict[str, tuple[dict, str | None]] = {}

    # -- the requests ---------------------------------------------------------------------------------
    def body(self, request: BatchRequest) -> tuple[dict, str | None]:
        """The Messages API parameters of `request` as litellm sends them live, and the beta header they need."""
        shape = canonical_json(request.params)
        if shape not in self._shapes:
            self._shapes[shape] = self._shape(request.params)
        template, beta = self._shapes[shape]
        system = [str(m["content"]) for m in request.messages if m["role"] == "system"]
        body = {**template, "messages": [{"role": m["role"], "content": m["content"]}
                                         for m in request.messages if m["role"] != "system"]}
        if system:
            body["system"] = "\n\n".join(system)
        return body, beta

    def _shape(self, params: Mapping[str, Any]) -> tuple[dict, str | None]:
        """Everything but the messages of the request litellm would send live with `params`."""
        from litellm.types.utils import CallTypes

        from trecbench.llm._litellm import load

        raw = load().utils.return_raw_request(CallTypes.completion, {
            "model": self.model, "messages": [{"role": "user", "content": "-"}], **dict(params),
            "api_base": self.base})
        if raw.get("error") or not raw.get("raw_request_body"):
            why = " ".join(str(raw.get("error") or "litellm returned none").split())  # one line
            raise BatchRefused(f"model {self.model!r}: no Anthropic request can be made of these parameters: {why}")
        body = {k: v for k, v in dict(raw["raw_request_body"]).items() if k not in ("messages", "system", "stream")}
        return body, (raw.get("raw_request_headers") or {}).get("anthropic-beta")

    # -- the endpoints --------------------------------------------------------------------------------
    def _call(self, method: str, url: str, what: str, **kwargs: Any) -> Any:
        import httpx

        try:
            response = self.client.request(method, url, **kwargs)
        except httpx.HTTPError as e:
            raise LLMError(f"Anthropic batches: {what} got no answer: {e}") from None
        if response.status_code >= 400:
            try:
                error = response.json().get("error") or {}
            except (ValueError, AttributeError):
                error = {}
            kind = f" {error['type']}" if isinstance(error, dict) and error.get("type") else ""
            message = error.get("message") if isinstance(error, dict) else None
            raise BatchRefused(f"Anthropic batches: {what} refused ({response.status_code}{kind}): "
                               f"{message or response.text[:200] or 'no reason given'}")
        return response

    def _json(self, method: str, url: str, what: str, **kwargs: Any) -> dict:
        response = self._call(method, url, what, **kwargs)
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise LLMError(f"Anthropic batches: {what}: the answer is not a JSON object")
        return data

    def submit(self, requests: list[BatchRequest], token: str) -> str:
        """Create one batch of `requests`; its id. A request's custom_id is its cache key (64 hex digits: the
        most a custom_id may hold, of the letters, digits, `-` and `_` it may use)."""
        entries, betas = [], set[str]()
        for r in requests:
            body, beta = self.body(r)
            entries.append({"custom_id": r.key, "params": body})
            betas.update(b.strip() for b in (beta or "").split(",") if b.strip())
        headers = {"anthropic-beta": ",".join(sorted(betas))} if betas else {}
        batch = self._json("POST", ROUTE, "creating the batch", json={"requests": entries}, headers=headers)
        if not isinstance(batch.get("id"), str):
            raise LLMError("Anthropic batches: creating the batch: the answer has no batch id")
        return batch["id"]

    def find(self, pending: PendingBatch) -> str | None:
        """The batch created for `pending`: created since it was written down, with as many requests, not
        another batch of this workspace; a finished one must have results for its requests only."""
        since = datetime.fromisoformat(pending.created_at) - FIND_MARGIN
        unconfirmed: list[str] = []
        after: str | None = None
        while True:
            page = self._json("GET", ROUTE, "listing batches", params={"limit": 100, **({"after_id": after} if after
                                                                                          else {})})
            batches = [b for b in page.get("data") or [] if isinstance(b, dict) and isinstance(b.get("id"), str)]
            for b in batches:
                created = _time(b.get("created_at"))
                if created is not None and created < since:  # newest first: the rest are older still
                    return _one(unconfirmed, pending)
                if b["id"] in pending.known or _total(b) != len(pending.keys):
                    continue
                if b.get("processing_status") == "ended":
                    lines = self.results(self._state(b)).results
                    if lines and {r.key for r in lines} <= pending.keys:
                        return b["id"]
                    continue
                unconfirmed.append(b["id"])
            if not page.get("has_more") or not batches:
                return _one(unconfirmed, pending)
            after = page.get("last_id") or batches[-1]["id"]

    def state(self, batch_id: str) -> BatchState:
        return self._state(self._json("GET", f"{ROUTE}/{batch_id}", f"looking up batch {batch_id}"))

    def _state(self, b: dict) -> BatchState:
        counts = b.get("request_counts") or {}
        done = {k: int(counts.get(k) or 0) for k in ("processing", "succeeded", "errored", "canceled", "expired")}
        status = str(b.get("processing_status") or "unknown")
        return BatchState(b["id"], status, status == "ended", done["succeeded"],
                          done["errored"] + done["canceled"] + done["expired"], sum(done.values()),
                          (b["results_url"],) if b.get("results_url") else ())

    def results(self, state: BatchState) -> BatchResults:
        out = BatchResults([], [])
        for url in state.results:
            text = self._call("GET", url, f"downloading the results of batch {state.batch_id}").text
            read_results(text, f"batch {state.batch_id} results", _result, out)
        return out


def _result(row: dict) -> BatchResult:
    """One result line: `result.type` succeeded (a message), errored (an error), canceled or expired."""
    key = row["custom_id"]
    result = _obj(row.get("result"))
    kind = result.get("type")
    if kind == "succeeded":
        message = _obj(result.get("message"))
        text, finish = _reply(message)
        if text is None:
            return BatchResult(key, None, 0, 0, None, "batch reply without a message")
        usage = _obj(message.get("usage"))
        prompt = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                                      "cache_read_input_tokens"))
        return BatchResult(key, text, prompt, int(usage.get("output_tokens") or 0), message.get("model"), None, finish)
    if kind == "errored":
        error = _obj(result.get("error"))
        inner = _obj(error.get("error")) or error  # {type: error, error: {type, message}}
        return BatchResult(key, None, 0, 0, None, f"batch request errored ({inner.get('type') or 'error'}): "
                                                  f"{inner.get('message') or 'no reason given'}")
    if kind == "expired":
        return BatchResult(key, None, 0, 0, None, "batch request expired: the batch ended before it was processed")
    if kind == "canceled":
        return BatchResult(key, None, 0, 0, None, "batch request canceled before it was processed")
    return BatchResult(key, None, 0, 0, None, f"batch result of unknown type {kind!r}")


def _reply(message: dict) -> tuple[str | None, str | None]:
    """The reply text of a message, as litellm reads it live: its text blocks, or the input of the tool a
    JSON reply was forced through; and the finish reason."""
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
    stop = message.get("stop_reason")
    finish = FINISH.get(stop, stop) if isinstance(stop, str) else None
    texts = [b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)]
    if texts:
        return "".join(texts), finish
    tools = [b for b in blocks if b.get("type") == "tool_use"]
    if tools:
        return json.dumps(tools[0].get("input"), ensure_ascii=False), finish
    return None, None


def _obj(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _root(api_base: str | None) -> str:
    """The server's root URL: --api-base may name it, or its /v1 or /v1/messages."""
    base = (api_base or DEFAULT_BASE).rstrip("/")
    for suffix in ("/v1/messages", "/v1"):
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def _total(b: dict) -> int:
    counts = b.get("request_counts") or {}
    return sum(int(v or 0) for v in counts.values()) if isinstance(counts, dict) else 0


def _one(unconfirmed: list[str], pending: PendingBatch) -> str | None:
    if len(unconfirmed) > 1:
        raise LLMError(f"a batch written down at {pending.created_at} has no saved id, and {len(unconfirmed)} "
                       f"running batches of {len(pending.keys)} requests could be it ({', '.join(unconfirmed)}); "
                       "run the same command again once they have ended: their results tell them apart")
    return unconfirmed[0] if unconfirmed else None
