"""OpenAI's batch interface (/v1/files + /v1/batches), or a server that copies it, through the openai SDK.

A batch carries the ledger's token as its metadata, so a batch whose id was never saved is found by
listing the server's batches.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Final, Iterator, Literal

from trecbench.llm.batch_records import BatchRefused, BatchRequest, BatchResult, BatchResults, BatchState, PendingBatch, \
    read_results
from trecbench.llm.errors import LLMError

__all__ = ["OpenAIBatches", "TERMINAL"]

TERMINAL = ("completed", "failed", "expired", "cancelled")  # the provider will not answer more of the batch
ENDPOINT: Final[Literal["/v1/chat/completions"]] = "/v1/chat/completions"


@contextmanager
def _answers(what: str) -> Iterator[None]:
    """The SDK's errors as one line each: a refusal (401, 403, any error status) or a server out of reach."""
    import openai

    try:
        yield
    except openai.APIStatusError as e:
        body: dict = e.body if isinstance(e.body, dict) else {}
        error: dict = body["error"] if isinstance(body.get("error"), dict) else body
        message = error.get("message") or str(e)
        raise BatchRefused(f"OpenAI batches: {what} refused ({e.status_code}): {message}") from None
    except openai.APIError as e:  # no answer (connection, timeout)
        raise LLMError(f"OpenAI batches: {what} got no answer: {e}") from None


class OpenAIBatches:
    """OpenAI's batch endpoints on one server."""

    max_requests = 50_000  # the input file's limits
    max_bytes = 200 * 2**20

    def __init__(self, api_base: str | None, api_key: str, model: str, timeout: float = 60.0):
        from openai import DefaultHttpxClient, OpenAI

        from trecbench.llm.transport import tls_context

        self.model = model  # the name the server knows the model by
        self.client = OpenAI(base_url=api_base, api_key=api_key, max_retries=2, timeout=timeout,
                             http_client=DefaultHttpxClient(verify=tls_context()))

    def submit(self, requests: list[BatchRequest], token: str) -> str:
        """Upload the requests as a JSONL file, create the batch; its id."""
        lines = [json.dumps({"custom_id": r.key, "method": "POST", "url": ENDPOINT,
                             "body": {"model": self.model, "messages": r.messages, **dict(r.params)}},
                            ensure_ascii=False) for r in requests]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        with _answers("uploading the batch file"):
            uploaded = self.client.files.create(file=(f"trecbench-{token}.jsonl", data), purpose="batch")
        with _answers("creating the batch"):
            batch = self.client.batches.create(input_file_id=uploaded.id, endpoint=ENDPOINT,
                                               completion_window="24h", metadata={"trecbench": token})
        return batch.id

    def find(self, pending: PendingBatch) -> str | None:
        """The batch whose metadata carries the pending batch's token."""
        with _answers("listing batches"):
            for batch in self.client.batches.list(limit=100):
                if (batch.metadata or {}).get("trecbench") == pending.token:
                    return batch.id
        return None

    def state(self, batch_id: str) -> BatchState:
        with _answers(f"looking up batch {batch_id}"):
            b = self.client.batches.retrieve(batch_id)
        counts = b.request_counts
        return BatchState(b.id, b.status, b.status in TERMINAL, getattr(counts, "completed", 0) or 0,
                          getattr(counts, "failed", 0) or 0, getattr(counts, "total", 0) or 0,
                          tuple(f for f in (b.output_file_id, b.error_file_id) if f))

    def results(self, state: BatchState) -> BatchResults:
        """Every line of the output file, then of the error file."""
        out = BatchResults([], [])
        for file_id in state.results:
            with _answers(f"downloading file {file_id}"):
                text = self.client.files.content(file_id).text
            read_results(text, f"batch {state.batch_id} file {file_id}", _result, out)
        return out


def _result(row: dict) -> BatchResult:
    key = row["custom_id"]
    response = row.get("response") or {}
    body = response.get("body") or {}
    if row.get("error") or response.get("status_code") != 200:
        error = row.get("error") or body.get("error") or {}
        message = error.get("message") if isinstance(error, dict) else str(error)
        return BatchResult(key, None, 0, 0, None, f"batch request failed (status {response.get('status_code')}): "
                                                  f"{message or 'no reason given'}")
    try:
        choice = body["choices"][0]
        text, finish = choice["message"]["content"], choice.get("finish_reason")
    except (KeyError, IndexError, TypeError):
        text, finish = None, None
    usage = body.get("usage") or {}
    if text is None:
        return BatchResult(key, None, 0, 0, None, "batch reply without a message")
    return BatchResult(key, text, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                       body.get("model"), None, finish)
