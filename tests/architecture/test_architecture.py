"""Rules of the layout that a change cannot quietly undo: no import cycles, no function a reader cannot hold
in their head (radon grade E or F)."""
from __future__ import annotations

from pathlib import Path

import pytest
from paths import SRC

MODULES = sorted(SRC.rglob("*.py"))
assert len(MODULES) > 100, f"no package at {SRC}"  # a rule over no files would pass vacuously


def import_cycles() -> list[list[str]]:
    """The package's strongly connected groups of modules (Tarjan), counting imports inside functions too;
    `if TYPE_CHECKING:` imports are left out (they never run)."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("trecbench", include_external_packages=False, exclude_type_checking_imports=True,
                               cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            module, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.find_modules_directly_imported_by(target)))))
                elif target in on_stack:
                    low[module] = min(low[module], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[module])
            if low[module] == index[module]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == module:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_no_module_imports_itself_through_other_modules():
    assert import_cycles() == []


def test_the_cycle_check_finds_a_cycle(tmp_path, monkeypatch):
    pkg = tmp_path / "trecbench"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from trecbench import b\n")
    (pkg / "b.py").write_text("from trecbench import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in __import__("sys").modules if m == "trecbench" or m.startswith("trecbench.")]:
        monkeypatch.delitem(__import__("sys").modules, name)
    assert import_cycles() == [["trecbench.a", "trecbench.b"]]


def test_no_function_is_graded_e_or_f_by_radon():
    complexity = pytest.importorskip("radon.complexity")
    too_complex = []
    for path in MODULES:
        for block in complexity.cc_visit(path.read_text(encoding="utf-8")):
            if complexity.cc_rank(block.complexity) in "EF":
                too_complex.append(f"{path.relative_to(SRC)}:{block.lineno} {block.fullname} {block.complexity}")
    assert too_complex == []


def test_a_workspace_parameter_says_what_it_takes():
    """`ws` and `workspace` parameters are `Workspace` or `WorkspaceLike` (a Workspace or its folder), never Any."""
    import ast

    untyped = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in node.args.args + node.args.kwonlyargs:
                    if arg.arg in ("ws", "workspace") and arg.annotation is not None \
                            and "Any" in ast.unparse(arg.annotation):
                        untyped.append(f"{path.relative_to(SRC)}:{node.lineno} {node.name}({arg.arg})")
    assert untyped == []


def test_a_test_module_imports_shared_helpers_from_tests_support_not_from_another_folders_tests():
    """Each folder of tests runs on its own: what two folders share lives in tests/support/."""
    import ast

    tests = Path(__file__).resolve().parents[1]
    crossing = []
    for path in sorted(tests.rglob("test_*.py")):
        here = {p.stem for p in path.parent.glob("test_*.py")}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            crossing += [f"{path.relative_to(tests)}: {n}" for n in names if n.startswith("test_") and n not in here]
    assert crossing == []
