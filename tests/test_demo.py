"""`trecbench demo` scores the bundled sample benchmark offline, with the expected numbers."""
from __future__ import annotations


def test_demo_prints_the_sample_runs_best_first(cli_run):
    result = cli_run("demo")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Sample benchmark: 12 topics, 498 judgments, 5 runs")
    rows = [line.split() for line in lines if line.split() and line.split()[0] in
            {"bm25_rm3", "bm25", "tfidf", "lexical_overlap", "title_only"}]
    assert [r[0] for r in rows] == ["bm25_rm3", "bm25", "tfidf", "lexical_overlap", "title_only"]
    assert rows[0][1:4] == ["0.8941", "1.0000", "0.9146"]  # nDCG@10, R@100, AP of bm25_rm3
    assert rows[-1][1] == "0.5085"
    assert all(r[-1] == "1.0000" for r in rows)  # every run's top 10 is judged


def test_demo_numbers_equal_trec_eval_format_output(cli_run):
    from trecbench.demo import sample_dir

    root = sample_dir()
    result = cli_run("eval", "retrieval", "--qrels", root / "qrels.txt", root / "runs" / "bm25_rm3.txt",
                     "-m", "ndcg_cut.10", "--format", "trec_eval")
    assert result.stdout == "ndcg_cut_10           \tall\t0.8941\n"
