"""litellm's bundled cost map (prices, modes, providers of models), read without importing litellm.

litellm ships its map as `model_prices_and_context_window_backup.json` inside its package and, with
`LITELLM_LOCAL_MODEL_COST_MAP=True` (trecbench.llm._litellm sets it), loads exactly that file. The
package is located with importlib's finder, which does not run litellm's `__init__` (seconds of CPU).
The map is served as litellm serves it: its `fallback_generalizations` block is not a model, a row
`{"alias_of": name}` is that model's entry, and a model's `aliases` are further names for its entry (an
alias never replaces a model's own row, and the first model to claim an alias keeps it).
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

FILE = "model_prices_and_context_window_backup.json"


@lru_cache(maxsize=1)
def cost_map() -> dict[str, Any]:
    """The map from model names to their entries (empty without litellm installed)."""
    spec = find_spec("litellm")  # finds the package without running it
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / FILE
        if path.is_file():
            return _served(json.loads(path.read_text(encoding="utf-8")))
    return {}


def _served(raw: dict[str, Any]) -> dict[str, Any]:
    raw.pop("fallback_generalizations", None)
    pointers = {name: entry["alias_of"] for name, entry in raw.items()
                if isinstance(entry, dict) and isinstance(entry.get("alias_of"), str)}
    owners: dict[str, str] = {}
    for name, entry in raw.items():
        aliases = entry.get("aliases") if isinstance(entry, dict) and name not in pointers else None
        for alias in aliases if isinstance(aliases, list) else ():
            if (alias not in raw or alias in pointers) and alias not in owners:
                owners[alias] = name
    for alias, target in pointers.items():
        if target in raw and target not in pointers and alias not in owners:
            owners[alias] = target
    served = {name: ({k: v for k, v in entry.items() if k != "aliases"} if isinstance(entry, dict) else entry)
              for name, entry in raw.items() if name not in pointers}
    served.update({alias: served[owner] for alias, owner in owners.items()})
    _OWNERS.clear()
    _OWNERS.update(owners)
    return served


_OWNERS: dict[str, str] = {}  # alias -> the model whose entry it is (filled when the map is read)


def canonical(name: str) -> str:
    """The model an alias of the map stands for (`name` itself when it is no alias)."""
    cost_map()
    return _OWNERS.get(name, name)
