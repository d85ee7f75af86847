"""Spending limits (`--max-cost`) and dry runs (`--dry-run`): what calls would cost, before they are made."""
from __future__ import annotations

import threading
from dataclasses import dataclass

from trecbench.llm.errors import BudgetExceeded
from trecbench.llm.records import Usage

__all__ = ["Budget", "BudgetExceeded", "Estimate", "Plan"]


@dataclass(frozen=True)
class Estimate:
    """What one call would use: prompt tokens counted, completion tokens expected, and their price.

    `cached` calls would be answered from the cache and cost nothing; `cost_known` is False when the
    model has no price in litellm's cost map.
    """

    key: str
    prompt_tokens: int
    completion_tokens: int
    cost: float
    cost_known: bool = True
    cached: bool = False


# A dry run's totals are the usage of calls not made yet: the same record as a run's (`Usage.add` adds an
# Estimate to it), under the name dry runs have always used.
Plan = Usage


class Budget:
    """A spending limit in USD shared by every call of a run (None: no limit, spending is still counted).

    Before a call, `reserve(estimate)` refuses with BudgetExceeded when what was spent, plus what calls in
    flight have reserved, plus this estimate, would pass the limit; afterwards `settle` swaps the estimate
    for the real cost (or `release` returns it when the call failed without a bill). Reservations keep many
    concurrent calls from all slipping under the limit at once.
    """

    def __init__(self, max_cost: float | None = None):
        if max_cost is not None and max_cost < 0:
            raise ValueError("max_cost must be >= 0")
        self.max_cost = max_cost
        self.spent = 0.0
        self.reserved = 0.0
        self.calls = 0
        self._lock = threading.Lock()

    @classmethod
    def of(cls, limit: "Budget | float | None") -> "Budget | None":
        """A Budget from a dollar limit (None: no limit); a Budget is returned as is, so several runs can share one."""
        if limit is None or isinstance(limit, Budget):
            return limit
        return cls(float(limit))

    @property
    def remaining(self) -> float | None:
        """USD left under the limit (None without a limit)."""
        return None if self.max_cost is None else max(0.0, self.max_cost - self.spent - self.reserved)

    def reserve(self, estimate: float) -> float:
        """Set `estimate` aside for a call about to start; returns it (pass it to settle or release)."""
        with self._lock:
            if self.max_cost is not None and self.spent + self.reserved + estimate > self.max_cost:
                raise BudgetExceeded(self.spent, self.reserved + estimate, self.max_cost)
            self.reserved += estimate
            return estimate

    def settle(self, reserved: float, actual: float) -> None:
        """A call finished and cost `actual`."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - reserved)
            self.spent += actual
            self.calls += 1

    def release(self, reserved: float) -> None:
        """A call ended without a bill: hand its reservation back."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - reserved)
