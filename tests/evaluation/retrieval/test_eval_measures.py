"""Measure names, the Python API, agreement with ir-measures, and bad input to `eval retrieval`."""
from __future__ import annotations

import json

import pandas as pd
import pytest

import trecbench

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d9 -1\nq2 0 d1 1\nq3 0 d5 1\n"
RUN = "q1 Q0 d2 1 3.0 sys\nq1 Q0 d1 2 2.0 sys\nq1 Q0 d3 3 2.0 sys\nq1 Q0 d4 4 1.0 sys\nq2 Q0 d7 1 5 sys\nq2 Q0 d1 2 4 sys\n"


@pytest.fixture
def files(tmp_path):
    q = tmp_path / "qrels.txt"
    q.write_text(QRELS)
    r = tmp_path / "run.txt"
    r.write_text(RUN)
    return q, r


def test_ties_break_by_docid_descending(files):
    q, r = files
    df = trecbench.evaluate(q, r, ["relstring"], per_topic=True)
    # d1 and d3 tie at 2.0: d3 ranks first (docid descending); d4 is not in the qrels ('-')
    assert df.loc[("sys", "q1"), "relstring"] == "012-"


def test_hand_computed_values_with_missing_topic_zero(files):
    q, r = files
    df = trecbench.evaluate(q, r, ["P@2", "R@3", "RR", "AP", "NumRel", "NumRelRet"], per_topic=True)
    q1 = df.loc[("sys", "q1")]
    assert q1["P@2"] == 0.5  # d2 (0), d3 (1)
    assert q1["R@3"] == 1.0  # d3 and d1 in the top 3; 2 relevant
    assert q1["RR"] == 0.5
    assert q1["AP"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert df.loc[("sys", "q3"), "AP"] == 0.0  # q3 is judged but not retrieved: scored 0 (-c)
    assert df.loc[("sys", "all"), "NumRel"] == 4
    assert df.loc[("sys", "all"), "AP"] == pytest.approx(((1 / 2 + 2 / 3) / 2 + 0.5 + 0) / 3)


def test_missing_topics_skip_averages_over_retrieved_topics(files):
    q, r = files
    df = trecbench.evaluate(q, r, ["AP"], missing_topics="skip")
    assert df.loc["sys", "AP"] == pytest.approx(((1 / 2 + 2 / 3) / 2 + 0.5) / 2)


def test_rel_level_in_name_overrides_the_run_level(files):
    q, r = files
    df = trecbench.evaluate(q, r, ["P(rel=2)@3", "P@3"], per_topic=True)
    assert df.loc[("sys", "q1"), "P(rel=2)@3"] == pytest.approx(1 / 3)
    assert df.loc[("sys", "q1"), "P@3"] == pytest.approx(2 / 3)


def test_judged_counts_documents_in_the_qrels(files):
    q, r = files
    df = trecbench.evaluate(q, r, ["Judged@4", "Judged@10"], per_topic=True)
    assert df.loc[("sys", "q1"), "Judged@4"] == 0.75
    assert df.loc[("sys", "q1"), "Judged@10"] == 0.75  # divided by the 4 retrieved
    assert df.loc[("sys", "q2"), "Judged@4"] == 0.5


def test_trec_eval_and_ir_measures_names_give_the_same_values(files):
    q, r = files
    df = trecbench.evaluate(q, r, ["nDCG@10", "ndcg_cut.10", "AP", "map", "R@100", "recall.100", "AP@2",
                                   "map_cut.2", "Success@1", "success.1", "IPrec@0.5", "iprec_at_recall.0.5"])
    row = df.loc["sys"]
    for a, b in [("nDCG@10", "ndcg_cut_10"), ("AP", "map"), ("R@100", "recall_100"), ("AP@2", "map_cut_2"),
                 ("Success@1", "success_1"), ("IPrec@0.5", "iprec_at_recall_0.50")]:
        assert row[a] == row[b]


def test_dataframes_are_accepted_as_runs_and_qrels():
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    df = trecbench.evaluate(qrels, {"mine": run}, ["P@1", "RR"])
    assert df.loc["mine", "P@1"] == 0.0 and df.loc["mine", "RR"] == 0.5


@pytest.mark.parametrize("measure", ["P@10", "nDCG@10", "AP", "R@100", "RR", "Rprec", "Bpref", "infAP",
                                     "Success@5", "IPrec@0.2", "NumRet", "NumRel", "NumRelRet", "AP@100",
                                     "P(rel=2)@10", "nDCG", "R(rel=2)@1000"])
def test_values_equal_ir_measures_on_a_real_run(shared, measure):
    import ir_measures

    real = shared / "real"
    qrels_path = real / "anserini-tools" / "qrels.dl19-passage.txt"
    run_path = real / "rank_llm" / "SPLADE_P_P_ENSEMBLE_DISTIL.trec_results_dl19.txt"
    ours = trecbench.evaluate(qrels_path, run_path, [measure], per_topic=True, missing_topics="skip")
    m = ir_measures.parse_measure(measure)
    theirs = {x.query_id: x.value for x in ir_measures.iter_calc(
        [m], ir_measures.read_trec_qrels(str(qrels_path)), ir_measures.read_trec_run(str(run_path)))}
    got = ours[measure].droplevel(0).drop("all")
    assert set(got.index) == set(theirs)
    for qid, value in theirs.items():
        assert got[qid] == pytest.approx(value, abs=1e-12), qid


def test_table_lists_runs_as_rows_in_the_order_measures_were_asked(shared, cli_run):
    d = shared / "trec_eval_tests"
    r = cli_run("eval", "retrieval", "--qrels", d / "qrels.test", d / "results.test", d / "results.trunc",
                "-m", "nDCG@10", "-m", "AP")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["run", "nDCG@10", "AP"]
    assert [line.split()[1:] for line in lines[1:]] == [["0.3016", "0.1785"], ["0.1717", "0.1016"]]
    assert "1 qrels topic(s) not in the run, scored 0: 302" in r.stderr


def test_csv_and_json_carry_per_topic_values(shared, cli_run, tmp_path):
    d = shared / "trec_eval_tests"
    out = tmp_path / "scores.json"
    r = cli_run("eval", "retrieval", "--qrels", d / "qrels.test", d / "results.test", "-m", "P@5", "-q",
                "--format", "json", "-o", out)
    assert r.exit_code == 0
    doc = json.loads(out.read_text())
    assert doc[0]["runid"] == "STANDARD" and doc[0]["all"]["P@5"] == pytest.approx(0.26666666666666666)
    assert doc[0]["topics"]["302"]["P@5"] == 0.8
    r = cli_run("eval", "retrieval", "--qrels", d / "qrels.test", d / "results.test", "-m", "P@5", "-q",
                "--format", "csv")
    lines = r.stdout.splitlines()
    assert lines[0] == "run,query_id,measure,value"
    assert "STANDARD,302,P@5,0.8" in lines and lines[-1].startswith("STANDARD,all,P@5,0.2666")


@pytest.mark.parametrize("measure,message", [
    ("nDCG@x", "not a measure name"),
    ("ERR@10", "ERR is not supported"),
    ("Success", "needs a cutoff"),
    ("rbp", "trec_eval 9 has no measure rbp"),
    ("nDCG(dcg='exp-log2')@10", "only trec_eval's nDCG"),
])
def test_unknown_or_unsupported_measures_exit_2_with_the_reason(files, cli_run, measure, message):
    q, r = files
    result = cli_run("eval", "retrieval", "--qrels", q, r, "-m", measure)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_bad_run_file_reports_path_line_and_exits_2(files, cli_run, tmp_path):
    q, _ = files
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 nan sys\nq1 Q0 d2 2\n")
    result = cli_run("eval", "retrieval", "--qrels", q, bad)
    assert result.exit_code == 2
    assert f"{bad}:1:" in result.stderr and f"{bad}:2:" in result.stderr
    assert "Traceback" not in result.output


def test_missing_qrels_file_exits_2_without_traceback(files, cli_run, tmp_path):
    _, r = files
    result = cli_run("eval", "retrieval", "--qrels", tmp_path / "nope.txt", r)
    assert result.exit_code == 2
    assert "nope.txt" in result.stderr and "Traceback" not in result.output


def test_line_order_of_a_run_does_not_change_any_value(shared, tmp_path):
    import random

    real = shared / "real"
    qrels = real / "anserini-tools" / "qrels.dl19-passage.txt"
    run = real / "rank_llm" / "REP_LLAMA.trec_results_dl19.txt"  # heavily tied scores
    lines = run.read_text().splitlines(keepends=True)
    random.Random(7).shuffle(lines)
    shuffled = tmp_path / "shuffled.txt"
    shuffled.write_text("".join(lines))
    a = trecbench.evaluate(qrels, run, ["all_trec"], per_topic=True)
    b = trecbench.evaluate(qrels, shuffled, ["all_trec"], per_topic=True)
    pd.testing.assert_frame_equal(a.droplevel(0), b.droplevel(0))


def test_cli_start_imports_no_heavy_library():
    import subprocess
    import sys

    code = ("import sys, trecbench.cli; from trecbench.cli import cli; "
            "heavy = [m for m in ('pandas', 'numpy', 'pyarrow', 'ir_measures', 'ir_datasets') if m in sys.modules]; "
            "print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""
