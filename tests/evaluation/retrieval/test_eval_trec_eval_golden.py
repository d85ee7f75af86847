"""Every value trec_eval prints, in its own tests and on real TREC runs, is printed identically."""
from __future__ import annotations

import pytest

TE = "trec_eval_tests"
# (expected output, qrels, run, extra args) -- the commands in trec_eval_tests/README.md
TREC_EVAL_CASES = [
    ("out.test", "qrels.test", "results.test", ["-m", "official"]),
    ("out.test", "qrels.test.with-comments", "results.test", ["-m", "official"]),
    ("out.test.a", "qrels.test", "results.test", ["-m", "all_trec"]),
    ("out.test.aq", "qrels.test", "results.test", ["-m", "all_trec", "-q"]),
    ("out.test.aqc", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "--missing-topics", "zero"]),
    ("out.test.aqcM", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-M", "100"]),
    ("out.test.aql", "qrels.rel_level", "results.test", ["-m", "all_trec", "-m", "relstring.20", "-q", "-l", "2",
                                                    "--missing-topics", "skip"]),  # made without -c
    ("out.test.meas_params", "qrels.test", "results.test",
     ["-q", "-m", "iprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
      "-m", "Rprec_mult.5.0,0.2,0.35", "-m", "utility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
      "-m", "ndcg.1=3,2=9,4=4.5", "-m", "ndcg_cut.10,20,23.4", "-m", "success.2,5,20"]),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", ["-m", "official"]),
]


def _cases():
    for expected, qrels, run, args in TREC_EVAL_CASES:
        yield pytest.param("10", expected, qrels, run, args, id=f"10-{expected}-{qrels}")
        if "comment" not in qrels and "with-comments" not in qrels and expected != "out.test.meas_params":
            yield pytest.param("9", f"v9.0.8/{expected}", qrels, run, args, id=f"9-{expected}")


@pytest.mark.parametrize("version,expected,qrels,run,args", list(_cases()))
def test_trec_eval_test_suite_outputs_are_byte_identical(shared, cli_run, version, expected, qrels, run, args):
    d = shared / TE
    result = cli_run("eval", "retrieval", "--qrels", d / qrels, d / run, "--format", "trec_eval",
                     "--trec-eval-version", version, *args)
    assert result.exit_code == 0, result.output
    assert result.stdout == (d / expected).read_text()


REAL = {
    "dl19.BM25": ("anserini-tools/qrels.dl19-passage.txt", "rank_llm/BM25.trec_results_dl19.txt"),
    "dl19.REP_LLAMA": ("anserini-tools/qrels.dl19-passage.txt", "rank_llm/REP_LLAMA.trec_results_dl19.txt"),
    "dl20.REP_LLAMA": ("anserini-tools/qrels.dl20-passage.txt", "rank_llm/REP_LLAMA.trec_results_dl20.txt"),
    "dl20.SPLADE": ("anserini-tools/qrels.dl20-passage.txt",
                    "rank_llm/SPLADE_P_P_ENSEMBLE_DISTIL.trec_results_dl20.txt"),
    "covid-r2.covidex_t5": ("anserini-tools/qrels.covid-round2-cumulative.txt", "pyserini/covidex.t5"),
    "covid-r2.covidex_sim": ("anserini-tools/qrels.covid-round2-cumulative.txt", "pyserini/covidex.sim"),
    "beir-trec-covid.BM25": ("anserini-tools/qrels.beir-v1.0.0-trec-covid.test.txt",
                             "rank_llm/BM25.trec_results_covid.txt"),
    "cacm.BM25": ("anserini/qrels.cacm.txt", "anserini/cacm-bm25.txt"),
}


@pytest.mark.parametrize("version,tag", [("10", "10.0"), ("9", "9.0.8")])
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_runs_match_trec_eval_on_every_all_trec_value(shared, cli_run, name, version, tag):
    qrels, run = REAL[name]
    real = shared / "real"
    expected = real / "outputs" / f"{name}.trec_eval-{tag}.all_trec.q.txt"
    # these outputs were made without -c: average over the run's topics
    result = cli_run("eval", "retrieval", "--qrels", real / qrels, real / run, "-m", "all_trec", "-q",
                     "--missing-topics", "skip", "--format", "trec_eval", "--trec-eval-version", version)
    assert result.exit_code == 0, result.output
    assert result.stdout == expected.read_text()


def test_rel_level_two_with_zero_fill_matches_dl_track_convention(shared, cli_run):
    real = shared / "real"
    result = cli_run("eval", "retrieval", "--qrels", real / REAL["dl19.BM25"][0], real / REAL["dl19.BM25"][1],
                     "-l", "2", "-q", "-m", "map", "-m", "recall.100,1000", "-m", "ndcg_cut.10",
                     "--format", "trec_eval", "--trec-eval-version", "10")
    expected = real / "outputs" / "dl19.BM25.trec_eval-10.0.c_l2.map_recall_ndcg10.q.txt"
    assert result.stdout == expected.read_text()


def test_against_reports_no_difference_for_the_matching_version(shared, cli_run):
    d = shared / TE
    result = cli_run("eval", "retrieval", "--qrels", d / "qrels.test", d / "results.trunc", "-m", "all_trec",
                     "--against", d / "v9.0.8" / "out.test.aqc")
    assert result.exit_code == 0, result.output
    assert "276 values identical, 0 different" in result.stderr


def test_against_lists_each_differing_value_and_exits_1(shared, cli_run):
    d = shared / TE
    # trec_eval 10 rounds IPrec cut-offs differently: compared with 9's numbers, those values differ
    result = cli_run("eval", "retrieval", "--qrels", d / "qrels.test", d / "results.test", "-m", "all_trec",
                     "--against", d / "out.test.aq", "--trec-eval-version", "9")
    assert result.exit_code == 1
    lines = result.stdout.strip().splitlines()
    assert lines, "differences must be listed"
    assert all(line.split("\t")[0].startswith(("iprec_at_recall", "11pt_avg")) for line in lines)
    assert "iprec_at_recall_0.10\t301\tours=0.2096\ttrec_eval=0.2098" in lines


def test_version_9_ties_scores_that_differ_only_as_doubles(shared, cli_run):
    real = shared / "real"
    qrels, run = REAL["covid-r2.covidex_sim"]
    out = {}
    for version in ("9", "10"):
        r = cli_run("eval", "retrieval", "--qrels", real / qrels, real / run, "-m", "ndcg", "-q",
                    "--format", "trec_eval", "--trec-eval-version", version)
        out[version] = [line for line in r.stdout.splitlines() if line.split("\t")[1] == "15"]
    assert out["9"] == ["ndcg                  \t15\t0.2336"]
    assert out["10"] == ["ndcg                  \t15\t0.2335"]
