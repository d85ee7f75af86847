"""Names a package exports but imports only when first used, so importing the package stays instant.

A lazy package writes its exports twice, side by side: `_EXPORTS = by_module({module: names})` for run
time, and an `if TYPE_CHECKING:` block importing each name `as` itself from the same module, so that type
checkers and editors see the real objects (and know them public) where `__getattr__` alone gives `Any`.
tests/test_api_types.py holds the two in step.
"""
from __future__ import annotations

import importlib
from typing import Any, Mapping


def by_module(modules: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """{name: module} from {module: names}: a package's export table written a module a line."""
    return {name: module for module, names in modules.items() for name in names}


def attribute(package: str, exports: Mapping[str, str], name: str) -> Any:
    """`name` from the module `exports` says holds it (a package's `__getattr__`); AttributeError otherwise."""
    if name in exports:
        return getattr(importlib.import_module(exports[name]), name)
    raise AttributeError(f"module {package!r} has no attribute {name!r}")
