"""A test that needs more than pip installs is skipped with the reason, and failed where it is required."""
from __future__ import annotations

import pytest

from needs import missing


def test_a_missing_need_skips_with_the_reason_and_the_variable(monkeypatch):
    monkeypatch.delenv("TRECBENCH_REQUIRE_X", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"no x here \(set TRECBENCH_REQUIRE_X=1 to fail instead\)"):
        missing("no x here", "TRECBENCH_REQUIRE_X")


def test_a_missing_need_fails_where_the_environment_requires_it(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true requires this test, but no x here"):
        missing("no x here", "CI", "true")
