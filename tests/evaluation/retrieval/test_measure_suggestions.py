"""A measure name that is none is refused with the closest names (`-m ndcg@10`: did you mean nDCG@10?)."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize("asked,meant", [
    ("ndcg@10", "did you mean nDCG@10?"),
    ("map@10", "did you mean AP@10?"),
    ("recall@100", "did you mean R@100?"),
    ("NCDG@10", "did you mean nDCG@10?"),
    ("Judge@10", "did you mean Judged@10?"),
    ("precision@5", "did you mean P@5?"),
])
def test_a_misspelt_measure_is_refused_with_the_name_meant(tmp_path, cli_run, asked, meant):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    r = cli_run("eval", "retrieval", "--qrels", qrels, run, "-m", asked)
    assert r.exit_code == 2 and r.stdout == ""
    assert f"{asked}: not a measure name" in r.stderr and meant in r.stderr, r.stderr
    assert "Traceback" not in r.output


def test_a_name_close_to_none_gets_no_guess(tmp_path, cli_run):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    r = cli_run("eval", "retrieval", "--qrels", qrels, run, "-m", "zzyzx@10")
    assert r.exit_code == 2 and "not a measure name" in r.stderr and "did you mean" not in r.stderr


def test_the_guesses_keep_the_cutoff_and_offer_trec_eval_names_without_one():
    from trecbench.evaluation.retrieval.names import closest_names

    assert closest_names("ndcg@10") == ["nDCG@10"]
    assert closest_names("rpec") == ["Rprec"]
    assert closest_names("zzyzx") == []
