"""`eval retrieval` as trec_eval users use it: measure names, repeated measures, readers, --against, Judged@k."""
from __future__ import annotations

from paths import ROOT

import gzip
import warnings

import pandas as pd
import pytest
from click.testing import CliRunner

import trecbench
from cli_support import bench_with_a_duplicate
from trecbench.cli import cli
from trecbench.errors import InputError

QRELS = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d9 -1\nq2 0 d1 1\nq3 0 d5 1\n"
RUN = ("q1 Q0 d2 1 3.0 first\nq1 Q0 d1 2 2.0 first\nq1 Q0 d3 3 2.0 first\nq1 Q0 d4 4 1.0 first\n"
       "q2 Q0 d7 1 5 first\nq2 Q0 d1 2 4 last\n")


@pytest.fixture
def files(tmp_path):
    paths = tmp_path / "qrels.txt", tmp_path / "run.txt"
    for path, text in zip(paths, (QRELS, RUN)):
        path.write_text(text)
    return paths


def run_cli(*args, stdin=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=stdin, catch_exceptions=False)


def trec(files, *args):
    q, r = files
    return run_cli("eval", "retrieval", "--qrels", q, r, "--format", "trec_eval", "--judged-threshold", "0", *args)


def test_runid_is_the_tag_of_the_last_line(files):
    assert trec(files, "-m", "runid").stdout == "runid                 \tall\tlast\n"


def test_set_f_parameter_is_trec_eval_beta_and_prints_as_written(files):
    # q1: 2 relevant of 4 retrieved, R = 2: P = 0.5, R = 1; x = 0.5: 1.5 * 0.5 / (0.25 + 1) = 0.6
    out = trec(files, "-m", "set_F.0.5", "-q", "--missing-topics", "skip").stdout.splitlines()
    assert out[0] == "set_F_0.5             \tq1\t0.6000"


def test_repeated_measure_keeps_the_first_parameters_and_warns(files):
    result = trec(files, "-m", "P.5", "-m", "P.10")
    assert result.stdout == "P_5                   \tall\t0.2000\n"
    assert "-m P.10 ignored" in result.stderr and "P.5,10" in result.stderr
    result = trec(files, "-m", "P.10", "-m", "official")
    assert "P_10  " in result.stdout and "P_5  " not in result.stdout


def test_printed_names_are_accepted_as_measure_names(files):
    assert trec(files, "-m", "ndcg_cut_10").stdout.startswith("ndcg_cut_10           \tall\t")
    assert trec(files, "-m", "iprec_at_recall_0.50").stdout.startswith("iprec_at_recall_0.50  \tall\t")


@pytest.mark.parametrize("name,message", [
    ("nDCG(rel=2)@10", "nDCG has no parameter 'rel'"),
    ("AP(foo=1)", "AP has no parameter 'foo'"),
    ("Judged(rel=2)@10", "Judged has no parameter 'rel'"),
    ("P.5,5", "duplicate cutoffs"),
    ("P.3,,5", "'' is not an integer"),
    ("recall.1e2", "'1e2' is not an integer"),
])
def test_bad_measure_parameters_are_one_clear_error(files, name, message):
    result = trec(files, "-m", name)
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.output


def test_trec_eval_parameters_read_as_trec_eval_reads_them(files):
    result = trec(files, "-m", "binG.5", "-m", "ndcg_cut.10,20,23.4", "--trec-eval-version", "10",
                  "-m", "rbp_resid.p=0.8")
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert names == ["binG", "ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_23", "rbp_resid_p=0.8"]
    assert "binG takes no parameters" in result.stderr


def test_ir_measures_names_keep_their_spelling_and_values(files):
    q, r = files
    df = trecbench.evaluate(q, r, ["nDCG(gains={0:0,1:1,2:3})", "SetRelP", "NumQ"], per_topic=True)
    assert list(df.columns) == ["nDCG(gains={0:0,1:1,2:3})", "SetRelP", "NumQ"]
    assert df.loc[("last", "q1"), "NumQ"] == 1 and df.loc[("last", "all"), "NumQ"] == 3
    assert df.loc[("last", "q1"), "SetRelP"] == 1.0  # 2 relevant retrieved / min(4 retrieved, R = 2)


@pytest.mark.parametrize("frame,message", [
    (pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d1"], "score": [1.0, 2.0]}),
     "<run DataFrame>:2: docid 'd1' appears twice in topic 'q1' (first in row 1)"),
    (pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [float("nan")]}),
     "<run DataFrame>:1: score nan is not a finite number"),
    (pd.DataFrame({"query_id": ["q1"], "docid": ["d1"], "score": [1.0]}),
     "<run DataFrame>: missing column(s) doc_id"),
    (pd.DataFrame({"query_id": ["q1", 7], "doc_id": ["d1", "d 2"], "score": [1.0, 1.0]}),
     "<run DataFrame>:2: query_id 7 is not a str (ids are text: .astype(str))\n"
     "<run DataFrame>:2: doc_id 'd 2' is empty or contains whitespace"),
])
def test_dataframe_runs_are_validated_like_files(files, frame, message):
    with pytest.raises(InputError) as e:
        trecbench.evaluate(files[0], frame, ["AP"])
    assert message in str(e.value)


def test_dataframe_qrels_judged_twice_is_an_error(files):
    qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d1"], "relevance": [1, 2]})
    with pytest.raises(InputError, match=r"<qrels DataFrame>:2: docid 'd1' judged twice in topic 'q1'"):
        trecbench.evaluate(qrels, files[1], ["NumRel"])


def test_python_api_warns_about_ignored_parameters(files):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = trecbench.evaluate(files[0], files[1], ["P.5", "P.10"])
    assert list(df.columns) == ["P_5"]
    assert any("P.10 ignored" in str(w.message) for w in caught)


def test_gzipped_files_and_standard_input_are_read(files, tmp_path):
    q, r = files
    qz, rz = tmp_path / "qrels.txt.gz", tmp_path / "run.gz"
    qz.write_bytes(gzip.compress(q.read_bytes()))
    rz.write_bytes(gzip.compress(r.read_bytes()))
    plain = trec(files, "-m", "map").stdout
    assert run_cli("eval", "retrieval", "--qrels", qz, rz, "--format", "trec_eval", "-m", "map").stdout == plain
    piped = run_cli("eval", "retrieval", "--qrels", q, "-", "--format", "trec_eval", "-m", "map", stdin=RUN)
    assert piped.stdout == plain
    both = run_cli("eval", "retrieval", "--qrels", "-", "-", "-m", "map", stdin=RUN)
    assert both.exit_code == 2 and "can be read once" in both.stderr


def test_a_binary_file_is_one_clear_message(files, tmp_path):
    binary = tmp_path / "run.bin"
    binary.write_bytes(b"\x00\x01\xff\xfe" * 5000 + b"\n" * 100)
    result = run_cli("eval", "retrieval", "--qrels", files[0], binary, "-m", "map")
    assert result.exit_code == 2
    assert result.stderr.strip() == f"{binary}: binary file (NUL bytes), not text"


def test_against_summary_only_output_compares_the_all_rows(files, tmp_path):
    saved = tmp_path / "saved.txt"
    saved.write_text(trec(files, "-m", "official").stdout)  # no -q: summary rows only
    result = run_cli("eval", "retrieval", "--qrels", files[0], files[1], "-m", "official", "--against", saved)
    assert result.exit_code == 0, result.output
    assert "0 different" in result.stderr and "only the `all` rows" in result.stderr


def test_against_with_nothing_compared_is_an_error_naming_what_was_not_computed(files, tmp_path):
    saved = tmp_path / "saved.txt"
    saved.write_text("ndcg_cut_10           \tall\t0.5000\nbpref                 \tall\t0.2000\n")
    result = run_cli("eval", "retrieval", "--qrels", files[0], files[1], "-m", "map", "--against", saved)
    assert result.exit_code == 2
    assert "not computed here: ndcg_cut_10 bpref" in result.stderr
    assert "nothing compared" in result.stderr


def test_runs_the_qrels_judge_little_of_are_warned_about(files):
    q, r = files
    result = run_cli("eval", "retrieval", "--qrels", q, r, "-m", "map")
    # q1: 3 of 4 judged (0.75), q2: 1 of 2 (0.5): mean 0.625 < 0.9
    assert "last: mean Judged@10 0.625 < 0.9" in result.stderr and "q2 0.50, q1 0.75" in result.stderr
    quiet = run_cli("eval", "retrieval", "--qrels", q, r, "-m", "map", "--judged-k", "1", "--judged-threshold", "0.5")
    assert "Judged" not in quiet.stderr  # q1 1.0, q2 0.0 at k = 1: mean 0.5 is not below 0.5
    compared = run_cli("eval", "compare", "--qrels", q, "--baseline", r, r, "-m", "AP", "--iterations", "100")
    assert "mean Judged@10 0.625" in compared.stderr


def test_deliberate_differences_from_trec_eval(tmp_path, files):
    q, r = files
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbf" + q.read_bytes().replace(b"q2 0", b"\n# a comment\n\nq2 0"))
    # a byte order mark is stripped, blank and # lines in qrels are skipped: the same numbers
    assert run_cli("eval", "retrieval", "--qrels", bom, r, "--format", "trec_eval", "-m", "map").stdout == \
        trec(files, "-m", "map").stdout
    other = tmp_path / "other.txt"
    other.write_text("z9 Q0 d1 1 1.0 x\n")
    # no topic in common: trec_eval exits with an error, trecbench prints the zero-filled numbers
    result = run_cli("eval", "retrieval", "--qrels", q, other, "--format", "trec_eval", "-m", "num_q", "-m", "map")
    assert result.exit_code == 0 and result.stdout == "num_q                 \tall\t3\nmap                   \tall\t0.0000\n"
    # trec_eval 10 without -c and a qrels topic missing from the run exits with an error; here it is left out
    result = trec(files, "-m", "num_q", "--missing-topics", "skip", "--trec-eval-version", "10")
    assert result.stdout == "num_q                 \tall\t2\n"
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 abc x\n")
    assert "score 'abc' is not a number" in run_cli("eval", "retrieval", "--qrels", q, bad).stderr


def test_a_topic_without_grades_of_zero_or_more_is_scored_where_trec_eval_stops(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("1 0 a -1\n2 0 a 1\n")
    run.write_text("1 Q0 a 1 1 r\n2 Q0 a 1 1 r\n")
    # trec_eval 9.0.8 and 10.0: "Can't calculate measure 'map'", exit 4
    result = run_cli("eval", "retrieval", "--qrels", qrels, run, "--format", "trec_eval", "-q", "-m", "map",
                     "--missing-topics", "skip")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["map                   \t1\t0.0000", "map                   \t2\t1.0000",
                                          "map                   \tall\t0.5000"]


@pytest.mark.parametrize("measure", ["P@0", "P.0", "ndcg_cut.0", "recall.-5"])
def test_a_measure_parameter_out_of_range_is_exit_2_without_a_traceback(cli_run, measure):
    sample = ROOT / "src" / "trecbench" / "sample"
    r = cli_run("eval", "retrieval", "--qrels", str(sample / "qrels.txt"), str(sample / "runs" / "bm25.txt"),
                "-m", measure)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "Invalid value for '-m'" in r.output


SAMPLE = ROOT / "src" / "trecbench" / "sample"


def test_runs_scored_against_a_workspace_score_as_against_its_exported_qrels(tmp_path):
    bench = tmp_path / "bench"
    assert run_cli("init", bench, "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv").exit_code == 0
    assert run_cli("qrels", "import", SAMPLE / "qrels.txt", "-w", bench, "--judge", "nist").exit_code == 0
    exported = tmp_path / "exported.txt"
    assert run_cli("qrels", "export", "-w", bench, "-o", exported).exit_code == 0
    runs = sorted((SAMPLE / "runs").glob("*.txt"))
    asked = ["-m", "all_trec", "-m", "nDCG@10", "-m", "Judged@10", "-q", "--format", "trec_eval"]
    with_workspace = run_cli("eval", "retrieval", "-w", bench, *runs, *asked)
    with_file = run_cli("eval", "retrieval", "--qrels", exported, *runs, *asked)
    assert with_workspace.exit_code == 0, with_workspace.output
    assert with_workspace.stdout == with_file.stdout
    assert "ndcg_cut_10           \tall\t" in with_workspace.stdout and len(with_workspace.stdout.splitlines()) > 1000


def test_a_workspace_lends_a_duplicate_its_groups_grade_as_qrels_export_does(tmp_path):
    bench = bench_with_a_duplicate(tmp_path, "a", "b", "c")
    judged = tmp_path / "judged.txt"
    judged.write_text("q1 0 a 1\nq1 0 c 0\n")
    assert run_cli("qrels", "import", judged, "-w", bench, "--judge", "nist").exit_code == 0
    exported = tmp_path / "exported.txt"
    assert run_cli("qrels", "export", "-w", bench, "-o", exported).exit_code == 0
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 b 1 2.0 r\nq1 Q0 c 2 1.0 r\n")
    args = [run, "-m", "RR", "-m", "NumRel", "--format", "csv", "--judged-threshold", "0"]
    with_workspace = run_cli("eval", "retrieval", "-w", bench, *args)
    assert with_workspace.stdout == run_cli("eval", "retrieval", "--qrels", exported, *args).stdout
    # b is a's duplicate: relevant through the pool's group, though only a was judged
    assert "r,all,RR,1.0\nr,all,NumRel,2\n" in with_workspace.stdout
    assert "r,all,RR,0.0\n" in run_cli("eval", "retrieval", "--qrels", judged, *args).stdout


@pytest.mark.parametrize("judgments,message", [
    ([], "give the judgments to score against: --qrels FILE, or -w BENCH (a workspace's)"),
    (["--qrels", "QRELS", "-w", "BENCH"], "give the judgments once: --qrels FILE or -w BENCH, not both"),
])
def test_qrels_come_from_exactly_one_of_a_file_or_a_workspace(files, tmp_path, judgments, message):
    bench = tmp_path / "bench"
    assert run_cli("init", bench).exit_code == 0
    given = [str(files[0]) if a == "QRELS" else str(bench) if a == "BENCH" else a for a in judgments]
    result = run_cli("eval", "retrieval", *given, files[1])
    assert result.exit_code == 2 and result.stdout == ""
    assert f"Error: {message}\n" in result.stderr and "Traceback" not in result.output


def test_a_workspace_without_judgments_or_no_workspace_is_one_line_exit_2(files, tmp_path):
    empty = tmp_path / "empty"
    assert run_cli("init", empty).exit_code == 0
    result = run_cli("eval", "retrieval", "-w", empty, files[1])
    assert result.exit_code == 2
    assert result.stderr == f"{empty}: no judgments yet: nothing to score against (judge the pool, or " \
                            "`trecbench qrels import`)\n"
    nowhere = run_cli("eval", "retrieval", "-w", tmp_path / "nowhere", files[1])
    assert nowhere.exit_code == 2 and "not a trecbench workspace" in nowhere.stderr
