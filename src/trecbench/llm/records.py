"""Small immutable records of model calls: one Completion per reply, one Outcome per question, Usage totals."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True, kw_only=True)
class Spend:
    """What one call used, as a reply and its log row both say it: tokens, cost in USD, whether the model has
    a price (`cost_known`, in litellm's cost map or given), and whether the cache answered it (then nothing
    was spent on it this time)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True
    cached: bool = False


@dataclass(frozen=True)
class Completion(Spend):
    """One reply from a model (or from the cache).

    `latency` is the wall time of the whole call in seconds, retries and back-off included; `attempts` is
    the number of HTTP requests it took (0 for a cache hit). A cached reply has `cost == 0.0`: nothing was
    spent on it this time. `cost_known` is False when the model has no price in litellm's cost map.
    """

    text: str
    model: str
    latency: float = 0.0
    attempts: int = 1
    finish_reason: str | None = None
    key: str = ""


@dataclass(frozen=True)
class Outcome:
    """The answer to one question: a parsed `value` when `ok`, else the `error` and the last `raw` reply.

    A failed outcome never carries a default value: callers record the failure, they do not invent a grade.
    `completions` lists every reply received on the way (re-asks included), for accounting.
    """

    ok: bool
    value: Any = None
    error: str | None = None
    raw: str | None = None
    completions: tuple[Completion, ...] = ()
    dry_run: bool = False
    key: str = ""

    @property
    def completion(self) -> Completion | None:
        """The last reply received, if any."""
        return self.completions[-1] if self.completions else None

    @property
    def cost(self) -> float:
        return sum(c.cost for c in self.completions)

    @property
    def attempts(self) -> int:
        return sum(c.attempts for c in self.completions)

    @property
    def cached(self) -> bool:
        return bool(self.completions) and all(c.cached for c in self.completions)


@dataclass(frozen=True)
class Usage:
    """Totals over logged calls: `calls` went to a model, `cached` were answered from the cache.

    `failed` counts calls whose reply was unusable or that errored; tokens and cost add up the calls that
    went to a model; `unpriced` counts those whose model has no price (their cost is counted as 0).
    """

    calls: int = 0
    cached: int = 0
    failed: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    unpriced: int = 0

    @classmethod
    def of(cls, completions: "Iterable[Completion]") -> "Usage":
        """The usage of these replies: tokens and cost of those that went to a model, hits counted apart."""
        total = cls()
        for c in completions:
            total += cls.call(c)
        return total

    @classmethod
    def call(cls, c: Any, *, failed: bool = False) -> "Usage":
        """One call (a Completion, CallRecord or planned `Estimate`) as a Usage increment: a cache hit counts
        as cached only; a call to a model brings its HTTP requests, tokens and cost, and is unpriced when its
        model has no price."""
        if c.cached:
            return cls(cached=1, failed=int(failed))
        return cls(calls=1, failed=int(failed), attempts=getattr(c, "attempts", 0), prompt_tokens=c.prompt_tokens,
                   completion_tokens=c.completion_tokens, cost=c.cost, unpriced=int(not c.cost_known))

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(*(a + b for a, b in zip(self._values(), other._values())))

    def add(self, e: Any) -> "Usage":
        """This usage with one more estimated call (`trecbench.llm.budget.Estimate`): what a dry run plans."""
        return self + Usage.call(e)

    def _values(self) -> tuple:
        return (self.calls, self.cached, self.failed, self.attempts, self.prompt_tokens,
                self.completion_tokens, self.cost, self.unpriced)


@dataclass(frozen=True)
class CallRecord(Spend):
    """One row of the `llm_calls` log."""

    key: str
    model: str
    ok: bool
    error: str | None = None
    latency_ms: float = 0.0
    attempts: int = 0
    purpose: str = ""
    raw: str | None = None

    def usage(self) -> Usage:
        """This call as a Usage increment."""
        return Usage.call(self, failed=not self.ok)
