"""The judging tests' shared fixture: `bench`, the workspace of tests/support/judge_bench.py."""
from __future__ import annotations

import pytest
from judge_bench import make_judge_bench


@pytest.fixture
def bench(tmp_path, cli_run):
    return make_judge_bench(tmp_path, cli_run)
