"""With known truth: corrected 95% intervals cover the runs' true means where the biased judge's own qrels do not,
and the label-level correction of a full census is the truth itself."""
from __future__ import annotations

import numpy as np
import pytest

from trecbench.evaluation import evaluate
from trecbench.evaluation.correction import Design, correct
from trecbench.evaluation.correction.simulation import collection, pair_sample, topic_sample
from trecbench.evaluation.significance import bootstrap_interval


def design_of(sample):
    return Design(sample[["query_id", "doc_id", "pi", "stratum"]], True)


def test_a_census_of_people_gives_the_true_means_exactly_and_the_plain_figure_is_trec_evals():
    c = collection(0, topics=8, pool=30)
    census = pair_sample(c, len(c.truth), 0)
    got = correct(c.model, census, c.runs, ["P@10", "P(rel=2)@5"], design=design_of(census))
    truth = evaluate(c.truth, c.runs, ["P@10", "P(rel=2)@5"])
    plain = evaluate(c.model, c.runs, ["P@10", "P(rel=2)@5"])
    for s in got.scores:
        assert s.method == "label" and s.estimate.se == 0
        assert s.estimate.value == pytest.approx(truth.loc[s.run, s.measure], abs=1e-12)
        assert s.plain == plain.loc[s.run, s.measure]


def test_whole_topics_correct_any_measure_and_a_census_of_topics_is_the_truth():
    c = collection(1, topics=8, pool=30)
    got = correct(c.model, topic_sample(c, 8, 0), c.runs, ["nDCG@10", "AP"])
    truth = evaluate(c.truth, c.runs, ["nDCG@10", "AP"])
    for s in got.scores:
        assert s.method == "topic" and s.estimate.value == pytest.approx(truth.loc[s.run, s.measure], abs=1e-12)


def test_corrected_intervals_cover_the_truth_where_the_plain_bootstrap_does_not():
    covered, plain_covered, total = {"label": 0, "topic": 0}, 0, {"label": 0, "topic": 0}
    for seed in range(25):
        c = collection(100 + seed)
        truth = evaluate(c.truth, c.runs, ["P@10", "nDCG@10"])
        per = evaluate(c.model, c.runs, ["P@10"], per_topic=True)["P@10"]
        per = per[per.index.get_level_values("query_id") != "all"]
        pairs = pair_sample(c, 600, seed)
        label = correct(c.model, pairs, c.runs, ["P@10"], design=design_of(pairs))
        topic = correct(c.model, topic_sample(c, 12, seed), c.runs, ["nDCG@10"])
        for s in label.scores + topic.scores:
            t = truth.loc[s.run, s.measure]
            covered[s.method] += s.estimate.low <= t <= s.estimate.high
            total[s.method] += 1
        for run in c.runs:
            low, high = bootstrap_interval(per.loc[run].to_numpy(), iterations=500, seed=0)
            plain_covered += low <= truth.loc[run, "P@10"] <= high
    assert covered["label"] / total["label"] >= 0.88 and covered["topic"] / total["topic"] >= 0.85
    assert plain_covered / total["label"] <= 0.7  # the judge's bias is outside what topic resampling sees


def test_differences_between_runs_are_paired_and_known_to_be_right_in_sign():
    c = collection(3)
    truth = evaluate(c.truth, c.runs, ["P@10"])["P@10"]
    pairs = pair_sample(c, 900, 3)
    got = correct(c.model, pairs, c.runs, ["P@10"], design=design_of(pairs), baseline="run0")
    for d in got.differences:
        true = truth[d.run] - truth["run0"]
        assert d.baseline == "run0" and d.estimate.low <= true <= d.estimate.high
        assert np.sign(d.estimate.value) == np.sign(true)
