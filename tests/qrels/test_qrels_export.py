"""`trecbench qrels export` / `import`: one grade per pair from many judges, duplicates propagated."""
from __future__ import annotations

import pandas as pd
import pytest

from cli_support import bench_with_a_duplicate

from trecbench.store import Judge, Judgment, Workspace


@pytest.fixture
def bench(tmp_path):
    ws_path = bench_with_a_duplicate(tmp_path, "d1", "d2", "d3")  # d2 is a near-duplicate of d1
    return ws_path, Workspace(ws_path)


def lines(path):
    return path.read_text().splitlines()


def test_a_duplicate_gets_its_representatives_grade_marked_propagated(bench, cli_run, tmp_path):
    path, ws = bench
    ws.record_many([Judgment("q1", "d1", 3, Judge("human", "alice")), Judgment("q1", "d3", 0, Judge("human", "alice"))])
    out = tmp_path / "qrels.txt"
    r = cli_run("qrels", "export", "-w", path, "-o", out, "--provenance", tmp_path / "prov.tsv")
    assert r.exit_code == 0, r.output
    assert lines(out) == ["q1 0 d1 3", "q1 propagated d2 3", "q1 0 d3 0"]
    assert "(2 judged, 1 propagated from duplicates)" in r.stdout
    prov = pd.read_csv(tmp_path / "prov.tsv", sep="\t")
    assert prov.loc[prov["doc_id"] == "d2", "propagated_from"].item() == "d1"
    # trec_eval (and trecbench) read the propagated line as any other judgment
    assert cli_run("qrels", "validate", out).exit_code == 0


def test_people_win_over_models_unless_asked_otherwise(bench, cli_run, tmp_path):
    path, ws = bench
    model = Judge("model", "m:graded-0-3", "m", "graded-0-3", "h")
    ws.record_many([Judgment("q1", "d1", 1, Judge("human", "alice")), Judgment("q1", "d1", 3, model),
                    Judgment("q1", "d3", 2, model)])
    out = tmp_path / "q.txt"
    cli_run("qrels", "export", "-w", path, "-o", out)
    assert "q1 0 d1 1" in lines(out) and "q1 0 d3 2" in lines(out)
    cli_run("qrels", "export", "-w", path, "-o", out, "--prefer", "model")
    assert "q1 0 d1 3" in lines(out)
    cli_run("qrels", "export", "-w", path, "-o", out, "--judge", "alice")
    assert lines(out) == ["q1 0 d1 1", "q1 propagated d2 1"]


def test_majority_takes_the_most_common_grade_and_a_tie_goes_lower(bench, cli_run, tmp_path):
    path, ws = bench
    ws.record_many([Judgment("q1", "d1", 2, Judge("human", "a")), Judgment("q1", "d1", 2, Judge("human", "b")),
                    Judgment("q1", "d1", 0, Judge("human", "c")), Judgment("q1", "d3", 3, Judge("human", "a")),
                    Judgment("q1", "d3", 1, Judge("human", "b"))])
    out = tmp_path / "q.txt"
    assert cli_run("qrels", "export", "-w", path, "-o", out, "--majority").exit_code == 0
    assert "q1 0 d1 2" in lines(out) and "q1 0 d3 1" in lines(out)


def test_import_records_a_file_once_and_skips_unjudged_grades(bench, cli_run, tmp_path):
    path, ws = bench
    qrels = tmp_path / "nist.txt"
    qrels.write_text("q1 0 d1 2\nq1 0 d3 -1\n")
    r = cli_run("qrels", "import", qrels, "-w", path, "--judge", "nist")
    assert "recorded 1 judgments as nist (import); 0 already recorded, 1 negative grades skipped" in r.stdout
    r = cli_run("qrels", "import", qrels, "-w", path, "--judge", "nist")
    assert "recorded 0 judgments" in r.stdout
    assert len(ws.judgments()) == 1


def test_export_of_an_empty_workspace_says_so(bench, cli_run, tmp_path):
    path, _ = bench
    r = cli_run("qrels", "export", "-w", path, "-o", tmp_path / "q.txt")
    assert r.exit_code != 0 and "no judgments yet" in r.output


def test_pool_file_and_workspace_give_the_same_qrels_when_only_a_duplicate_was_judged(tmp_path, cli_run):
    """Pool of A, B (same text, A the representative) and C; only B and C judged: both exports agree."""
    topics = tmp_path / "topics.tsv"
    topics.write_text("q\tquestion\n")
    corpus = tmp_path / "corpus.jsonl"
    text = "the same passage of text, word for word, in two documents"
    corpus.write_text(f'{{"id": "A", "contents": "{text}"}}\n{{"id": "B", "contents": "{text}"}}\n'
                      '{"id": "C", "contents": "something else"}\n')
    run = tmp_path / "run.txt"
    run.write_text("q Q0 A 1 3 r\nq Q0 B 2 2 r\nq Q0 C 3 1 r\n")
    ws_path = tmp_path / "bench"
    assert cli_run("init", ws_path, "--topics", topics, "--corpus", corpus).exit_code == 0
    assert cli_run("pool", run, "--dedup", "exact", "-w", ws_path, "-o", tmp_path / "pool.tsv").exit_code == 0
    (tmp_path / "judged.txt").write_text("q 0 B 2\nq 0 C 0\n")
    assert cli_run("qrels", "import", tmp_path / "judged.txt", "-w", ws_path, "--judge", "alice").exit_code == 0
    r = cli_run("qrels", "export", "-w", ws_path, "-o", tmp_path / "ws.txt")
    assert r.exit_code == 0, r.output
    r = cli_run("pool", "export-qrels", tmp_path / "pool.tsv", "--qrels", tmp_path / "judged.txt",
                "-o", tmp_path / "file.txt")
    assert r.exit_code == 0, r.output
    assert lines(tmp_path / "ws.txt") == lines(tmp_path / "file.txt") == ["q propagated A 2", "q 0 B 2", "q 0 C 0"]
    # `qrels agree` counts only what both judges judged: the propagated A is not a pair
    r = cli_run("qrels", "agree", tmp_path / "ws.txt", tmp_path / "judged.txt")
    assert r.exit_code == 0, r.output
    assert "pairs judged by both: 2 (only A: 0, only B: 0)" in r.stdout


def test_workspace_qrels_is_the_library_function_behind_export(bench):
    import trecbench

    path, ws = bench
    ws.record_many([Judgment("q1", "d2", 1, Judge("human", "alice")), Judgment("q1", "d3", 0, Judge("human", "bob"))])
    made = trecbench.workspace_qrels(path)
    assert made.qrels[["doc_id", "iteration", "relevance", "propagated_from"]].values.tolist() == [
        ["d1", "propagated", 1, "d2"], ["d2", "0", 1, None], ["d3", "0", 0, None]]
    assert (made.judged, made.propagated, made.policy) == (2, 1, "prefer human")
    assert made.unjudged.empty
