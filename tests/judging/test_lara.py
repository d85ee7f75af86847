"""`judge validate --sample --strategy uncertainty`'s rule: probabilities proportional to rank-weighted uncertainty."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from trecbench.judging.lara import (
    calibrated,
    proportional,
    rank_weight,
    relevance_chance,
    systematic,
    threshold_probability,
)


def test_probabilities_sum_to_the_size_stay_at_most_one_and_are_never_zero():
    score = np.array([10.0, 5.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    pi = proportional(score, 3)
    assert pi.sum() == pytest.approx(3.0) and pi.max() <= 1.0 and pi.min() > 0
    assert pi[0] == 1.0  # its share would pass 1: taken for certain
    assert pi[1] > pi[2] > pi[3] == pi[7]  # the rest in the order of their scores, with the uniform floor
    assert proportional(score, 20).tolist() == [1.0] * 8


def test_systematic_sampling_draws_each_pair_with_its_probability():
    pi = proportional(np.array([4.0, 2.0, 1.0, 1.0, 0.5, 0.5, 0.0, 0.0]), 3)
    rng = np.random.default_rng(0)
    counts = np.zeros(len(pi))
    draws = 20000
    for _ in range(draws):
        chosen = systematic(pi, rng)
        assert len(chosen) == 3 and len(set(chosen.tolist())) == 3
        counts[chosen] += 1
    assert counts / draws == pytest.approx(pi, abs=0.015)


def test_uncertainty_comes_from_samples_then_people_then_the_threshold():
    frame = pd.DataFrame({"query_id": ["q"] * 4, "doc_id": ["a", "b", "c", "d"]})
    judged = pd.DataFrame({"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "c"], "judge_id": [1, 1, 1],
                           "relevance": [1, 2, 0]})
    samples = {("q", "a"): [0, 1, 1, 1]}  # four samples, three say relevant
    human = pd.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [0]})
    p = relevance_chance(frame, judged, human, samples, threshold=1)
    assert p[0] == 0.75  # the samples' share
    assert p[1] == pytest.approx((0 + 1) / (1 + 2))  # people said 0 of the one pair graded 2: Laplace's rule
    assert p[2] == pytest.approx(threshold_probability(0, 1)) == pytest.approx(1 / (1 + math.e))
    assert p[3] == 0.5  # no model graded it
    assert calibrated(judged[["query_id", "doc_id", "relevance"]], human, 1) == {2: pytest.approx(1 / 3)}


def test_a_pair_ranked_high_by_many_runs_weighs_more():
    assert rank_weight("1;1;2", 1) == pytest.approx(2 + 1 / math.log2(3))
    assert rank_weight(None, 3) == pytest.approx(0.5)
    assert rank_weight("1", 1) > rank_weight("10", 10)


def test_a_judge_sampled_several_times_gives_each_pair_its_samples_grades(tmp_path, cli_run, llm_server):
    import json
    import re

    from judge_bench import judge_args, make_judge_bench

    from trecbench.judging.lara import sampled_grades
    from trecbench.store import Workspace

    def unsure(body: dict) -> str:
        """Grade 1 or 0 by the request's seed for d2, always 3 for the others: d2 is the pair it is unsure of."""
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        out = []
        for label, text in re.findall(r"\[P(\d+)\] (.*)", user):
            grade = (body.get("seed", 0) % 2) if "cafeteria" in text else 3
            out.append({"passage": f"P{label}", "grade": grade, "reason": "r"})
        return json.dumps(out)

    bench = make_judge_bench(tmp_path, cli_run)
    llm_server.script(unsure)
    r = cli_run(*judge_args(bench, llm_server, "--samples", "3", "--batch", "1"))
    assert r.exit_code == 0, r.output
    grades = sampled_grades(Workspace(bench), 3)
    assert sorted(grades[("t1", "d2")]) == [0, 0, 1] or sorted(grades[("t1", "d2")]) == [0, 1, 1]
    assert grades[("t1", "d1")] == [3, 3, 3] and len(grades) == 6
