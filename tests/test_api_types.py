"""The public names are real to type checkers and lazy at run time: each lazy package's export table and its
`if TYPE_CHECKING:` imports name the same things, and mypy sees signatures, not `Any`."""
from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "trecbench"


def _lazy_packages() -> list[str]:
    """Every package of trecbench whose names come through a module `__getattr__`."""
    found = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__" for node in tree.body):
            found.append(".".join(init.parent.relative_to(PACKAGE.parent).parts))
    return found


def _tree(package: str) -> ast.Module:
    return ast.parse((PACKAGE.parent.joinpath(*package.split(".")) / "__init__.py").read_text(encoding="utf-8"))


def _table(tree: ast.Module) -> dict[str, list[str]]:
    """{module: names} of the `_EXPORTS = by_module({...})` table, as written."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["_EXPORTS"]:
            call = node.value
            assert isinstance(call, ast.Call) and getattr(call.func, "id", None) == "by_module", \
                "the export table is written `_EXPORTS = by_module({module: names})`"
            return {module: list(names) for module, names in ast.literal_eval(call.args[0]).items()}
    raise AssertionError("no `_EXPORTS = by_module({...})` table")


def _type_checking_imports(tree: ast.Module) -> dict[str, list[str]]:
    """{module: names} imported by the package's `if TYPE_CHECKING:` block, each as an explicit re-export."""
    imported: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.module, ast.unparse(statement)
                for alias in statement.names:
                    # `name as name` is what tells a type checker (mypy --strict, pyright) the name is public
                    assert alias.asname == alias.name, f"{statement.module}.{alias.name} is imported without `as`"
                    imported.setdefault(statement.module, []).append(alias.name)
    return imported


def test_the_lazy_packages_are_found():
    assert {"trecbench", "trecbench.llm", "trecbench.pooling"} <= set(_lazy_packages())


@pytest.mark.parametrize("package", _lazy_packages())
def test_the_type_checking_imports_and_the_export_table_name_the_same_things(package):
    tree = _tree(package)
    table, imported = _table(tree), _type_checking_imports(tree)
    assert {m: sorted(n) for m, n in imported.items()} == {m: sorted(n) for m, n in table.items()}
    names = [name for names in table.values() for name in names]
    assert len(names) == len(set(names)), "a name exported twice"


def _submodules(package: str) -> set[str]:
    import pkgutil

    return {info.name for info in pkgutil.iter_modules(importlib.import_module(package).__path__)}


@pytest.mark.parametrize("package", _lazy_packages())
def test_every_exported_name_resolves_at_run_time_to_its_module_s_object(package):
    module = importlib.import_module(package)
    assert set(module.__all__) - {"__version__"} == set(module._EXPORTS)
    for name, home in module._EXPORTS.items():
        if name not in _submodules(package):  # the next test
            assert getattr(module, name) is getattr(importlib.import_module(home), name), f"{package}.{name}"


# Importing a submodule binds it as an attribute of its package, hiding `__getattr__`: an export named like a
# submodule would be the export or the module depending on what was imported first.
@pytest.mark.parametrize("package", _lazy_packages())
def test_no_export_is_named_like_a_submodule_of_its_package(package):
    assert not set(importlib.import_module(package)._EXPORTS) & _submodules(package)


def test_importing_the_lazy_packages_imports_none_of_their_exports():
    import os
    import subprocess

    code = ("import sys\n" + "".join(f"import {package}\n" for package in _lazy_packages())
            + "print(sorted(m for m in ('pandas', 'numpy', 'litellm', 'trecbench.store', 'trecbench.pooling.pool')"
            " if m in sys.modules))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.stdout == "[]\n", done.stdout + done.stderr  # the TYPE_CHECKING imports never run


def test_trecbench_exports_the_pool():
    import trecbench
    from trecbench.pooling.pool import Pool

    assert trecbench.Pool is trecbench.pooling.Pool is Pool
    assert "Pool" in trecbench.__all__


# name shown to mypy -> parts its revealed type must hold. pandas ships no type hints (pandas-stubs is not a
# dependency), so a DataFrame is Any to mypy: evaluate and the readers are pinned by their parameters instead.
REVEALED = {
    "trecbench.evaluate": ("def (qrels: str | os.PathLike[str]", "measures: typing.Iterable[str] =",
                           "trec_eval_version: int =", "per_topic: bool ="),
    "trecbench.read_run": ("def (path: str | os.PathLike[str]",),
    "trecbench.read_qrels": ("def (path: str | os.PathLike[str])",),
    "trecbench.Workspace": ("-> trecbench.store.workspace.Workspace",),
    "trecbench.build_pool": ("strategy: str | trecbench.pooling.strategies.base.Strategy =", "-> trecbench.pooling.pool.Pool"),
    "trecbench.Pool": ("info: trecbench.pooling.pool.PoolInfo =", "-> trecbench.pooling.pool.Pool"),
    "trecbench.evaluate_answers": ("-> tuple[trecbench.evaluation.answers.scoring.AnswerScores, list[",),
    "trecbench.compare_runs": ("baseline: str", "-> list[trecbench.evaluation.significance.Comparison]"),
    "trecbench.judge_pool": ("-> trecbench.judging.pool.JudgeRun",),
    "trecbench.pooling.Pool": ("-> trecbench.pooling.pool.Pool",),
    "trecbench.llm.LLM": ("config: trecbench.llm.config.ModelConfig", "-> trecbench.llm.client.LLM"),
    "evaluate": ("def (qrels: str | os.PathLike[str]", "trec_eval_version: int ="),
}


def test_mypy_sees_the_public_names_typed_not_any(tmp_path, monkeypatch):
    from mypy import api

    monkeypatch.setenv("MYPYPATH", str(ROOT / "src"))  # this tree's package, whichever one is installed

    lines = ["import trecbench", "import trecbench.llm", "import trecbench.pooling", "from trecbench import evaluate"]
    first = len(lines) + 1
    lines += [f"reveal_type({name})" for name in REVEALED]
    script = tmp_path / "uses_trecbench.py"
    script.write_text("\n".join(lines) + "\n")
    # The project's settings, and a user's `--strict` habit: a name is public only if the package says so. A
    # cache of its own, so that this run and `make lint` (other options) do not each invalidate the other's.
    out, err, _ = api.run(["--config-file", str(ROOT / "pyproject.toml"), "--no-implicit-reexport",
                           "--cache-dir", str(ROOT / ".mypy_cache" / "public_names"),
                           "--python-executable", sys.executable, str(script)])
    # (line, kind, message) of this file only: errors inside trecbench are `make lint`'s to report, and a
    # user's mypy does not report them either (an installed package is not checked)
    mine = re.findall(rf"^(?:.*/)?{script.name}:(\d+): (\w+): (.*)$", out, re.M)
    assert mine and not [m for m in mine if m[1] == "error"], out + err
    revealed = {int(n): re.fullmatch(r'Revealed type is "(.*)"', message).group(1) for n, _, message in mine}
    assert len(revealed) == len(REVEALED), out + err
    for n, (name, wanted) in enumerate(REVEALED.items(), first):
        shown = revealed[n]
        assert shown != "Any", name
        for part in wanted:
            assert part in shown, f"{name}: {part!r} not in {shown}"
