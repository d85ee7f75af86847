"""What a provider's batch interface and the batch ledger share: the requests, the provider's answers about a
batch and its result lines, and the interface (`BatchAPI`) each provider module implements.

The providers (`batch_openai`, `batch_anthropic`) import this module, never `trecbench.llm.batch`, which
reaches them only when it picks one (`batch_api`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple, Protocol

from trecbench.llm.errors import LLMError

__all__ = ["BatchAPI", "BatchRefused", "BatchRequest", "BatchResult", "BatchResults", "BatchState", "PendingBatch",
           "read_results"]


class BatchRefused(LLMError):
    """A request about batches that certainly changed nothing at the provider: it answered with an error,
    or the request could not be made (so a batch it was to create does not exist)."""


@dataclass(frozen=True)
class BatchRequest:
    """One chat request of a batch: the cache key it is stored under, and its model, messages and params."""

    key: str
    model: str
    messages: list[dict]
    params: Mapping[str, Any]

    def request(self) -> dict:
        return {"model": self.model, "messages": self.messages, "params": dict(self.params)}


@dataclass(frozen=True)
class BatchState:
    """What the provider says about a batch; `results` names where its result lines are (file ids, URLs)."""

    batch_id: str
    status: str
    finished: bool  # the provider will not answer more of the batch
    completed: int
    failed: int
    total: int
    results: tuple[str, ...] = ()


@dataclass(frozen=True)
class PendingBatch:
    """A batch written down whose provider id was never saved: what its provider may recognise it by."""

    token: str
    created_at: str  # ISO 8601 UTC, written before the provider was asked
    keys: frozenset[str]  # its requests' cache keys, sent as custom_id
    known: frozenset[str]  # provider ids of this workspace's other batches (never this one)


@dataclass(frozen=True)
class BatchResult:
    """One answered request: its key and either the reply (text, token counts) or why there is none."""

    key: str
    text: str | None
    prompt_tokens: int
    completion_tokens: int
    model: str | None
    error: str | None
    finish_reason: str | None = None


class BatchResults(NamedTuple):
    """A finished batch's result lines: those read, and `where: why` for each line that could not be."""

    results: list[BatchResult]
    unreadable: list[str]


class BatchAPI(Protocol):
    """A provider's batch endpoints. Requests are named by their cache key (`custom_id`); one batch holds at
    most `max_requests` requests and `max_bytes` of them."""

    max_requests: int
    max_bytes: int

    def submit(self, requests: list[BatchRequest], token: str) -> str:
        """Create a batch of `requests`; its id. Raises BatchRefused when the provider refuses it."""
        ...

    def find(self, pending: PendingBatch) -> str | None:
        """The id of the batch created for `pending`, or None when the provider never created it."""
        ...

    def state(self, batch_id: str) -> BatchState: ...

    def results(self, state: BatchState) -> BatchResults:
        """Every result line of a finished batch."""
        ...


def read_results(text: str, where: str, parse: Callable[[dict], BatchResult], out: BatchResults) -> None:
    """Each line of a JSONL results file into `out`: read by `parse` when it is a JSON object with a string
    `custom_id`, else as `where:N: why` among the unreadable lines."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            out.unreadable.append(f"{where}:{number}: not JSON")
            continue
        if isinstance(row, dict) and isinstance(row.get("custom_id"), str):
            out.results.append(parse(row))
        else:
            out.unreadable.append(f"{where}:{number}: a result line without a custom_id")
