"""Shared fixtures: the reference data beside the checkout, and a CLI runner."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from needs import missing
from paths import SHARED

# Fixtures defined in helper modules, available to every test without importing them by name.
pytest_plugins = ["llm_server", "web_support"]


# The modules that took longest (`--durations`, 2026-12-02, load ~10), most first. pytest-xdist hands tests out in
# collection order; handing out the long modules first lets the two workers finish together instead of one waiting
# for the other's last long file.
# Only the order changes: a module missing from this list (or renamed) runs after these, in collection order.
LONGEST_FIRST = [
    "tests/llm/test_model_commands_start.py",
    "tests/test_extras.py",
    "tests/runs/test_runs_validate_streaming.py",
    "tests/evaluation/retrieval/test_eval_trec_eval_oracle.py",
    "tests/test_api_types.py",
    "tests/test_demo.py",
    "tests/test_demo_model.py",
    "tests/qrels/test_qrels_select.py",
    "tests/report/test_report.py",
    "tests/web/test_web_support_browser.py",
    "tests/qrels/test_qrels_validate_bounded.py",
    "tests/evaluation/correction/test_corrected_cli.py",
    "tests/web/test_web_browser.py",
    "tests/judging/test_judge_llm.py",
    "tests/runs/test_bm25_pyserini.py",
    "tests/judging/test_judge_batch.py",
    "tests/docs/test_docs_examples.py",
    "tests/judging/test_judge_runs_at_once.py",
    "tests/docs/test_readme_commands.py",
    "tests/store/test_workspace_read_only.py",
    "tests/report/test_report_browser.py",
    "tests/judging/test_judge_batch_anthropic.py",
    "tests/architecture/test_architecture.py",
]


def pytest_collection_modifyitems(items):
    first = {module: rank for rank, module in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: first.get(item.nodeid.split("::")[0], len(first)))  # stable: each module stays whole


@pytest.fixture(autouse=True)
def _recursion_limit():
    """Each test starts with Python's own recursion limit: mypy's api.run (tests/test_api_types.py) raises it to
    2**14 for the rest of the process, and a later test of deeply nested JSON in the same worker then overflows
    the C stack (a crashed worker) instead of meeting the RecursionError the readers turn into one line."""
    limit = sys.getrecursionlimit()
    yield
    sys.setrecursionlimit(limit)


@pytest.fixture(autouse=True)
def _hermetic_home(tmp_path_factory, monkeypatch):
    """Libraries that write under HOME or IR_DATASETS_HOME write into a temporary folder."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("IR_DATASETS_HOME", str(home / "ir_datasets"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def shared() -> Path:
    """The reference data; CI sets TRECBENCH_REQUIRE_SHARED_DATA=1, so that without it the tests fail, not skip."""
    if not SHARED.is_dir():
        missing(f"reference data not found at {SHARED} (set TRECBENCH_SHARED_DATA)", "TRECBENCH_REQUIRE_SHARED_DATA")
    return SHARED


@pytest.fixture
def cli_run():
    """Invoke `trecbench ARGS...`; returns click's Result (exit_code, stdout, stderr)."""
    from cli_support import run_cli

    return run_cli
