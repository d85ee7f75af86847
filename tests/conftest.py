"""Shared fixtures: the reference data beside the checkout, and a CLI runner."""
from __future__ import annotations

from pathlib import Path

import pytest

from needs import missing
from paths import SHARED

# Fixtures defined in helper modules, available to every test without importing them by name.
pytest_plugins = ["llm_server", "web_support"]


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
