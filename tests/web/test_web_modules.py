"""The web app's modules import one another without cycles: shared helpers live in trecbench.web.common."""
from __future__ import annotations

import ast
from pathlib import Path

import trecbench.web

PACKAGE = Path(trecbench.web.__file__).resolve().parent


def _imports(path: Path) -> set[str]:
    """The trecbench.web modules a module imports, at the top or inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "trecbench.web":
                found |= {f"trecbench.web.{a.name}" for a in node.names}
            elif node.module.startswith("trecbench.web."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("trecbench.web.")}
    return found


def test_no_module_of_the_web_app_imports_one_that_imports_it_back():
    graph = {f"trecbench.web.{p.stem}": _imports(p) & {f"trecbench.web.{q.stem}" for q in PACKAGE.glob("*.py")}
             for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    def cycle_from(start: str, node: str, path: list[str]) -> list[str] | None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                return [*path, nxt]
            if nxt not in path:
                found = cycle_from(start, nxt, [*path, nxt])
                if found:
                    return found
        return None

    cycles = [c for c in (cycle_from(m, m, [m]) for m in sorted(graph)) if c]
    assert cycles == [], " -> ".join(cycles[0])
    assert {"trecbench.web.app", "trecbench.web.nuggets", "trecbench.web.common"} <= set(graph)
    assert "trecbench.web.app" not in graph["trecbench.web.nuggets"]
