"""A command whose optional extra is not installed says which one in one line (`pip install 'trecbench[NAME]'`)
and exits 2; the extras table agrees with pyproject.toml, and every package src/ imports is declared there."""
from __future__ import annotations

import ast
import functools
import json
import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pandas as pd
import pytest
from paths import ROOT, SAMPLE, SRC
from trecbench.helpers.extras import EXTRAS, MissingExtra, install_command, missing_extra

# Runs `trecbench ARGS` with the packages named in argv[1] (comma separated) not found, as if not installed:
# every finder on sys.meta_path is wrapped so that it finds nothing under those names.
LAUNCHER = """
import sys

refused = set(sys.argv[1].split(","))


class Refusing:
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in refused:
            return None
        find = getattr(self.finder, "find_spec", None)
        return find(name, path, target) if find is not None else None

    def invalidate_caches(self):
        getattr(self.finder, "invalidate_caches", lambda: None)()


sys.meta_path[:] = [Refusing(finder) for finder in sys.meta_path]
sys.argv = ["trecbench", *sys.argv[2:]]
from trecbench.cli import main

main()
"""

MODELS = ("litellm", "openai", "httpx")
WEB = ("starlette", "uvicorn", "jinja2", "markupsafe", "itsdangerous", "multipart", "python_multipart")
REPORT = ("matplotlib", "jinja2", "markupsafe")


def without(refused: tuple[str, ...], *args: object) -> subprocess.CompletedProcess:
    """`trecbench ARGS` in a fresh interpreter where the `refused` packages cannot be imported."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC.parent), os.environ.get("PYTHONPATH", "")]),
               LITELLM_LOCAL_MODEL_COST_MAP="True")
    return subprocess.run([sys.executable, "-c", LAUNCHER, ",".join(refused), *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)


def assert_names_the_extra(result: subprocess.CompletedProcess, extra: str) -> None:
    """Exit 2 and one line naming the extra, the last thing said (a command may first say what it is about to do)."""
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "Error" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert [line for line in lines if "pip install" in line] == lines[-1:], result.stderr
    assert lines[-1].startswith("trecbench: ") and lines[-1].endswith(install_command(extra)), lines[-1]


@pytest.fixture
def bench(tmp_path, cli_run) -> Path:
    """A workspace on the sample's corpus and topics, with a depth pool of three candidates."""
    from trecbench.store import Workspace
    from trecbench.store.workspace import save_pool

    path = tmp_path / "bench"
    assert cli_run("init", path, "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv").exit_code == 0
    qid = next(iter(Workspace(path).topics()))
    docs = [json.loads(line)["id"] for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()[:3]]
    pool = pd.DataFrame({"query_id": [qid] * 3, "doc_id": docs, "priority": [1, 2, 3], "group": [None] * 3,
                         "representative": [True] * 3})
    save_pool(Workspace(path), "depth10", "depth", {"depth": 10}, pool)
    return path


@pytest.mark.parametrize("server, module", [((), "litellm"), (("--api-base", "http://127.0.0.1:9/v1"), "openai")])
def test_judge_llm_without_the_models_extra_names_it_before_any_call(bench, server, module):
    # With an api_base an openai/ model goes through the openai SDK, without litellm: either is the models extra.
    result = without(MODELS, "judge", "llm", "-w", bench, "--model", "openai/gpt-4o-mini", *server,
                     "--api-key", "test", "--quiet")
    assert_names_the_extra(result, "models")
    assert f"needs {module}," in result.stderr and "failed" not in result.stderr


def test_serve_without_the_web_extra_names_it(bench):
    assert_names_the_extra(without(WEB, "serve", "-w", bench, "--port", "9"), "web")


def test_report_without_the_report_extra_names_it(bench, tmp_path):
    result = without(REPORT, "report", "-w", bench, "-o", tmp_path / "report.html", "--quiet")
    assert_names_the_extra(result, "report")
    assert not (tmp_path / "report.html").exists()


@pytest.mark.parametrize("command, extra", [("report", "report"), ("serve", "web")])
def test_jinja2_missing_names_the_extra_of_the_command_that_imports_it(bench, tmp_path, command, extra):
    # jinja2 and markupsafe come with both `web` and `report`: the module importing them says which was needed.
    args = ["-o", tmp_path / "report.html", "--quiet"] if command == "report" else ["--port", "9"]
    result = without(("jinja2", "markupsafe"), command, "-w", bench, *args)
    assert_names_the_extra(result, extra)
    assert "needs jinja2," in result.stderr or "needs markupsafe," in result.stderr


def test_runs_bm25_without_the_bm25_extra_names_it(tmp_path):
    result = without(("bm25s", "Stemmer"), "runs", "bm25", "--corpus", SAMPLE / "corpus.jsonl",
                     "--topics", SAMPLE / "topics.tsv", "-o", tmp_path / "bm25.txt", "--quiet")
    assert_names_the_extra(result, "bm25")
    assert not (tmp_path / "bm25.txt").exists()


def test_an_irds_source_without_the_irds_extra_names_it():
    assert_names_the_extra(without(("ir_datasets",), "topics", "show", "irds:beir/scifact/test"), "irds")


def test_a_core_command_runs_with_every_extra_missing(tmp_path):
    everything = tuple(module for extra in EXTRAS for module in extra.modules)
    result = without(everything, "eval", "retrieval", "--qrels", SAMPLE / "qrels.txt",
                     *sorted((SAMPLE / "runs").iterdir())[:2], "-m", "nDCG@10")
    assert result.returncode == 0, result.stderr
    assert "nDCG@10" in result.stdout


def test_a_missing_module_that_no_extra_brings_is_not_called_an_extra():
    error = ModuleNotFoundError("No module named 'nonexistent_package'", name="nonexistent_package")
    assert missing_extra(error) is None


def test_a_missing_module_inside_an_installed_package_is_not_called_an_extra():
    error = ModuleNotFoundError("No module named 'click._nothing'", name="click._nothing")
    assert missing_extra(error) is None
    error = ModuleNotFoundError("No module named 'jinja2.nothing_here'", name="jinja2.nothing_here")
    assert missing_extra(error) is None  # jinja2 is installed here: a broken install, shown as it is


def test_a_backend_without_its_packages_is_a_missing_extra():
    from trecbench.runs.baselines import BackendUnavailable

    assert issubclass(BackendUnavailable, MissingExtra) and issubclass(BackendUnavailable, RuntimeError)


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def distribution(requirement: str) -> str:
    """The normalised distribution name of a requirement (`PyStemmer>=2.2` -> `pystemmer`)."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)).lower()


def declared(extra: str | None) -> set[str]:
    """The distributions the core (None) or an extra declares, the extras it includes followed."""
    project = pyproject()["project"]
    requirements = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    names: set[str] = set()
    for requirement in requirements:
        included = re.fullmatch(r"trecbench\[([a-z0-9,]+)\]", requirement.replace(" ", ""))
        if included:
            for name in included.group(1).split(","):
                names |= declared(name)
        else:
            names.add(distribution(requirement))
    return names


@functools.lru_cache(maxsize=None)
def installed_distributions() -> dict[str, list[str]]:
    """{top-level module: distributions}: read once (it reads every installed distribution's file list)."""
    return packages_distributions()


def distributions_of(module: str) -> set[str]:
    return {re.sub(r"[-_.]+", "-", name).lower() for name in installed_distributions().get(module, [])}


def test_every_extra_in_the_table_is_in_pyproject_and_declares_the_packages_of_its_modules():
    extras = pyproject()["project"]["optional-dependencies"]
    for extra in EXTRAS:
        assert extra.name in extras
        for module in extra.modules:
            found = distributions_of(module)
            if not found:
                pytest.skip(f"{module} is not installed here; install '.[dev]'")
            assert found & declared(extra.name), f"{module} ({found}) is not declared in [{extra.name}]"


def test_all_brings_every_extra_but_pyserini_and_dev_brings_all():
    extras = pyproject()["project"]["optional-dependencies"]
    for name in set(extras) - {"all", "dev", "pyserini"}:
        assert declared(name) <= declared("all"), name
    assert declared("all") <= declared("dev")


@functools.lru_cache(maxsize=None)
def imported_packages() -> dict[str, set[str]]:
    """Top-level third-party modules imported anywhere in src/ (inside functions too) -> the files importing them:
    parsed once, three tests read it (none changes it)."""
    found: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.partition(".")[0]
                if top not in sys.stdlib_module_names and top != "trecbench":
                    found.setdefault(top, set()).add(str(path.relative_to(SRC)))
    return found


def test_every_package_src_imports_is_declared_in_pyproject():
    every = declared(None) | {name for extra in pyproject()["project"]["optional-dependencies"]
                              for name in declared(extra)}
    undeclared = {}
    for module, files in imported_packages().items():
        if module in ("pyserini", "tomli"):  # pyserini: installed apart (--no-deps); tomli: Python 3.10 only
            continue
        found = distributions_of(module)
        if not found:
            pytest.skip(f"{module} is not installed here; install '.[dev,pyserini]'")
        if not found & every:
            undeclared[module] = sorted(files)
    assert undeclared == {}


def test_tomli_is_declared_for_the_pythons_without_tomllib():
    assert "tomli" in imported_packages()
    assert any(re.fullmatch(r"tomli>=[\d.]+;python_version<'3\.11'", r.replace(" ", "").replace('"', "'"))
               for r in pyproject()["project"]["dependencies"])


def test_pooling_and_reading_need_no_pyarrow_and_print_what_they_print_with_it(tmp_path, cli_run):
    runs = sorted((SAMPLE / "runs").iterdir())
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join(line + "\n" for line in (SAMPLE / "topics.tsv").read_text().splitlines()[:5])
                      + "T-none\tnot in any run\n")
    commands = {"pool.tsv": ("pool", *runs, "--depth", 7, "--topics", topics),
                "pool-rrf.tsv": ("pool", *runs, "--depth", 5, "--strategy", "rrf", "--budget", 4),
                "sorted.txt": ("runs", "sort", runs[0]),
                "eval.txt": ("eval", "retrieval", "--qrels", SAMPLE / "qrels.txt", *runs[:2], "-m", "nDCG@10")}
    for name, args in commands.items():
        without_arrow = without(("pyarrow",), *args, *(("-o", tmp_path / f"core-{name}") if name != "eval.txt" else ()))
        assert without_arrow.returncode == 0, without_arrow.stderr
        with_arrow = cli_run(*map(str, args), *(("-o", str(tmp_path / name)) if name != "eval.txt" else ()))
        assert with_arrow.exit_code == 0, with_arrow.output
        if name == "eval.txt":
            assert without_arrow.stdout == with_arrow.stdout
        else:
            assert (tmp_path / f"core-{name}").read_bytes() == (tmp_path / name).read_bytes(), name


def test_the_core_neither_declares_nor_imports_pyarrow():
    assert "pyarrow" not in declared(None)
    assert "pyarrow" not in imported_packages()


# Python 3.11+ constructs that vermin reports but that run on 3.10, each guarded where it is used:
# float.is_integer (vermin takes it for int.is_integer, new in 3.12), asyncio.timeout (under
# `sys.version_info >= (3, 11)`, wait_for otherwise) and tomllib (tomli on 3.10, declared for it).
VERMIN_GUARDED = ("int.is_integer", "asyncio.timeout", "tomllib")


def test_src_needs_no_python_newer_than_3_10():
    pytest.importorskip("vermin", reason="vermin checks the minimum Python version; install '.[dev]'")
    excludes = [arg for name in VERMIN_GUARDED for arg in ("--exclude", name)]
    launch = "import sys, vermin; sys.argv[0] = 'vermin'; sys.exit(vermin.main())"
    result = subprocess.run([sys.executable, "-c", launch, "--target=3.10-", "--no-tips", "--violations", *excludes,
                             str(SRC)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    project = pyproject()
    assert project["project"]["requires-python"] == ">=3.10"
    assert project["tool"]["ruff"]["target-version"] == "py310"
