"""Pooling strategies, one small registered object per module, found by name (`get_strategy("maxmean")`)."""
from __future__ import annotations

from typing import Any

from trecbench.pooling.strategies.base import STRATEGIES, StaticStrategy, Strategy, register


def get_strategy(name: str, **params: Any) -> Strategy:
    """A new strategy object by name, with its parameters (`get_strategy("rrf", k=60)`).

    Raises ValueError for an unknown name or a parameter the strategy does not take.
    """
    if name not in STRATEGIES:
        raise ValueError(f"unknown pooling strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    cls = STRATEGIES[name]
    accepted = set(getattr(cls, "__dataclass_fields__", {}))
    unknown = sorted(set(params) - accepted)
    if unknown:
        takes = ", ".join(sorted(accepted)) or "no parameters"
        raise ValueError(f"strategy {name!r} does not take {', '.join(unknown)} (it takes {takes})")
    return cls(**params)


def is_adaptive(strategy: str | None) -> bool:
    """Whether the registered strategy of this name chooses documents during judging (mtf, maxmean, ...)."""
    return strategy in STRATEGIES and STRATEGIES[strategy].adaptive


# Importing each module registers its strategy.
from trecbench.pooling.strategies import depth, rrf, rbp, mtf, maxmean  # noqa: E402,F401

__all__ = ["STRATEGIES", "StaticStrategy", "Strategy", "get_strategy", "is_adaptive", "register"]
