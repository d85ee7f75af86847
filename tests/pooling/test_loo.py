"""Leave-one-run-out: where a run counts as fairly scored without its own judgments (the boundaries)."""
from __future__ import annotations

import pandas as pd
import pytest

from trecbench.pooling.loo import SAFE_MAX_DROP, SAFE_TAU, _summary


def test_leave_one_out_is_not_safe_below_a_tau_of_0_9():
    # six runs, one adjacent pair swapped: Kendall tau = 1 - 2 * 1 / 15 = 0.867, between 0.8 and 0.9
    full = [0.60, 0.50, 0.40, 0.30, 0.20, 0.10]
    left = [0.60, 0.50, 0.30, 0.40, 0.20, 0.10]
    part = pd.DataFrame({"run": list("abcdef"), "full": full, "left_out": left,
                         "relative_drop": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]})
    row = _summary("AP", part)
    assert row["kendall_tau"] == pytest.approx(1 - 2 / 15)
    assert SAFE_TAU == 0.9 and row["safe"] is False
    unchanged = _summary("AP", part.assign(left_out=full))
    assert unchanged["kendall_tau"] == pytest.approx(1.0) and unchanged["safe"] is True


def test_leave_one_out_is_not_safe_at_a_drop_of_exactly_the_limit():
    part = pd.DataFrame({"run": ["a", "b"], "full": [0.5, 0.4], "left_out": [0.5, 0.4 * (1 - SAFE_MAX_DROP)],
                         "relative_drop": [0.0, SAFE_MAX_DROP]})
    assert _summary("AP", part)["safe"] is False
    assert _summary("AP", part.assign(relative_drop=[0.0, SAFE_MAX_DROP / 2]))["safe"] is True
