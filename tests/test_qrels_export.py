"""`trecbench qrels export` / `import`: one grade per pair from many judges, duplicates propagated."""
from __future__ import annotations

import pandas as pd
import pytest

from trecbench.store import Judge, Judgment, Workspace
from trecbench.store.workspace import save_pool


@pytest.fixture
def bench(tmp_path, cli_run):
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tfirst question\n")
    ws_path = tmp_path / "bench"
    assert cli_run("init", ws_path, "--topics", topics).exit_code == 0
    ws = Workspace(ws_path)
    # d2 is a near-duplicate of d1 (its group's representative)
    pool = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["d1", "d2", "d3"], "priority": [1, 2, 3],
                         "group": ["d1", "d1", "d3"], "representative": [True, False, True]})
    save_pool(ws, "p", "depth", {}, pool)
    return ws_path, ws


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
