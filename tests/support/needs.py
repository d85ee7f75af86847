"""Tests that need more than pip installs: skipped here with the reason, failed where the environment requires
them (CI sets the variables, see DEVELOPERS.md)."""
from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(problem: str, variable: str, value: str = "1") -> NoReturn:
    """Skip the test because of `problem`; fail it instead when `variable` is `value` in the environment."""
    if os.environ.get(variable) == value:
        pytest.fail(f"{variable}={value} requires this test, but {problem}")
    pytest.skip(f"{problem} (set {variable}={value} to fail instead)")
