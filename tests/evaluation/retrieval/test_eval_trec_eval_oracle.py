"""Generated adversarial qrels and runs give byte for byte the output of the real trec_eval 9.0.8 and 10.0."""
from __future__ import annotations

import subprocess

import pytest

from paths import SHARED
from needs import missing
from trec_eval_oracle import adversarial_case, build_trec_eval

MEASURES = ["all_trec", "set_F.0.5", "utility.2,-1,0.5,0.25", "relstring.5", "Rndcg.1=0,2=3", "binG.5",
            "11pt_avg.0.25,0.5", "P.3"]
MEASURES_10 = MEASURES + ["rbp_resid.p=0.8"]
MODES = [["-q"], ["-q", "-c"], ["-q", "-c", "-l", "2"], ["-c", "-M", "5", "-J"], ["-q", "-c", "-M", "5", "-l", "0"]]
CASES = 24


@pytest.fixture(scope="session")
def trec_eval(tmp_path_factory):
    binaries, why = build_trec_eval(SHARED.parent / "tools", tmp_path_factory.mktemp("trec_eval"))
    if not binaries:
        missing(f"trec_eval could not be built: {why}", "CI", "true")
    return binaries


def _ours(cli_run, qrels, run, version, mode, measures):
    args = ["eval", "retrieval", "--qrels", qrels, run, "--format", "trec_eval", "--trec-eval-version", version,
            "--missing-topics", "zero" if "-c" in mode else "skip"]
    args += ["-q"] * ("-q" in mode) + ["-J"] * ("-J" in mode) + ["-n"] * ("-n" in mode)
    for flag in ("-l", "-M"):
        if flag in mode:
            args += [flag, mode[mode.index(flag) + 1]]
    for m in measures:
        args += ["-m", m]
    return cli_run(*args)


@pytest.mark.parametrize("version", ["9", "10"])
def test_generated_cases_print_what_trec_eval_prints(trec_eval, cli_run, tmp_path, version):
    compared = 0
    for seed in range(CASES):
        qrels_text, run_text = adversarial_case(seed)
        qrels, run = tmp_path / f"qrels{seed}", tmp_path / f"run{seed}"
        qrels.write_text(qrels_text)
        run.write_text(run_text)
        measures = MEASURES_10 if version == "10" else MEASURES
        for mode in MODES:
            measure_args = [a for m in measures for a in ("-m", m)]
            te = subprocess.run([str(trec_eval[version]), *mode, *measure_args, str(qrels), str(run)],
                                capture_output=True, text=True)
            if te.returncode != 0:
                # trec_eval exits with an error here; trecbench prints numbers (see docs/retrieval.md)
                continue
            ours = _ours(cli_run, qrels, run, version, mode, measures)
            assert ours.exit_code == 0, ours.output
            assert ours.stdout == te.stdout, f"seed {seed}, trec_eval {version} {' '.join(mode)}"
            compared += 1
    assert compared >= CASES * len(MODES) // 2


def test_zero_over_zero_prints_as_trec_eval_prints_it(trec_eval, cli_run, tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 0\n1 0 b 0\n2 0 a 1\n")
    run.write_text("1 Q0 a 1 1 r\n2 Q0 a 1 1 r\n")
    for version in ("9", "10"):
        te = subprocess.run([str(trec_eval[version]), "-q", "-l", "0", "-m", "Rndcg", str(qrels), str(run)],
                            capture_output=True, text=True)
        ours = _ours(cli_run, qrels, run, version, ["-q", "-l", "0"], ["Rndcg"])
        assert ours.stdout == te.stdout == "Rndcg                 \t1\t  -nan\nRndcg                 \t2\t1.0000\n" \
                                         "Rndcg                 \tall\t  -nan\n"


@pytest.mark.parametrize("version", ["9", "10"])
def test_judged_only_gives_trec_eval_minus_j_output(trec_eval, cli_run, shared, version):
    d = shared / "trec_eval_tests"
    te = subprocess.run([str(trec_eval[version]), "-q", "-c", "-J", "-m", "all_trec", str(d / "qrels.test"),
                         str(d / "results.trunc")], capture_output=True, text=True)
    ours = _ours(cli_run, d / "qrels.test", d / "results.trunc", version, ["-q", "-c", "-J"], ["all_trec"])
    assert ours.exit_code == 0, ours.output
    assert ours.stdout == te.stdout
    assert "-nan" in te.stdout if version == "10" else "-nan" not in te.stdout  # 10's empty stand-in ranking


@pytest.mark.parametrize("version", ["9", "10"])
def test_judged_only_on_a_real_run_gives_trec_eval_minus_j_output(trec_eval, cli_run, shared, version):
    real = shared / "real"
    qrels, run = real / "anserini-tools/qrels.dl19-passage.txt", real / "rank_llm/BM25.trec_results_dl19.txt"
    te = subprocess.run([str(trec_eval[version]), "-q", "-J", "-l", "2", "-m", "all_trec", str(qrels), str(run)],
                        capture_output=True, text=True)
    ours = _ours(cli_run, qrels, run, version, ["-q", "-J", "-l", "2"], ["all_trec"])
    assert te.returncode == 0 and ours.stdout == te.stdout


@pytest.mark.parametrize("version", ["9", "10"])
@pytest.mark.parametrize("mode", [["-q", "-J"], ["-q", "-l", "0"], ["-J"]])
def test_against_a_trec_eval_output_with_nan_cells_finds_no_difference(trec_eval, cli_run, tmp_path, version, mode):
    # -J empties topic 1 (nothing it retrieved is judged); -l 0 meets topic 3, judged 0 throughout
    qrels, run, saved = tmp_path / "qrels", tmp_path / "run", tmp_path / "trec_eval.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n3 0 d 0\n3 0 e 0\n")
    run.write_text("1 Q0 x 1 2 r\n1 Q0 y 2 1 r\n2 Q0 c 1 1 r\n3 Q0 d 1 1 r\n")
    measures = ["all_trec", "Rndcg"]
    te = subprocess.run([str(trec_eval[version]), *mode, *[a for m in measures for a in ("-m", m)], str(qrels),
                         str(run)], capture_output=True, text=True)
    assert te.returncode == 0 and "-nan" in te.stdout
    saved.write_text(te.stdout)
    assert _ours(cli_run, qrels, run, version, mode, measures).stdout == te.stdout
    args = ["eval", "retrieval", "--qrels", qrels, run, "--against", saved, "--trec-eval-version", version,
            "--missing-topics", "skip", *mode, *[a for m in measures for a in ("-m", m)]]
    ours = cli_run(*args)
    assert ours.exit_code == 0, ours.output
    assert "0 different" in ours.stderr + ours.stdout and "ours=" not in ours.stdout


@pytest.mark.parametrize("version", ["9", "10"])
@pytest.mark.parametrize("mode", [["-q"], ["-q", "-c"], ["-q", "-c", "-J"], [], ["-c"]])
def test_no_summary_prints_what_trec_eval_minus_n_prints(trec_eval, cli_run, tmp_path, version, mode):
    # per-topic rows only (with -q), no runid; under -c, topic 4 of the qrels is missing from the run
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n3 0 d 0\n" + "4 0 e 2\n" * ("-c" in mode))
    run.write_text("1 Q0 a 1 2 r\n1 Q0 y 2 1 r\n2 Q0 c 1 1 r\n3 Q0 d 1 1 r\n")
    measures = ["all_trec", "utility.2,-1,0,0"]
    te = subprocess.run([str(trec_eval[version]), "-n", *mode, *[a for m in measures for a in ("-m", m)], str(qrels),
                         str(run)], capture_output=True, text=True)
    assert te.returncode == 0 and "\tall\t" not in te.stdout and ("\t1\t" in te.stdout) == ("-q" in mode)
    ours = _ours(cli_run, qrels, run, version, ["-n", *mode], measures)
    assert ours.exit_code == 0, ours.output
    assert ours.stdout == te.stdout


def test_no_summary_is_refused_outside_trec_eval_format(cli_run, tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1\n")
    run.write_text("1 Q0 a 1 2 r\n")
    ours = cli_run("eval", "retrieval", "--qrels", qrels, run, "-n", "-q")
    assert ours.exit_code == 2 and "-n (no summary) is trec_eval's" in ours.stderr


@pytest.mark.parametrize("version", ["9", "10"])
def test_scores_beyond_a_c_float_rank_as_trec_eval_ranks_them_without_a_warning(trec_eval, cli_run, tmp_path,
                                                                                 version):
    # 9.0.8 keeps scores in a C float: 1e39 and 2e39 both become inf there and tie (docid decides); 10 keeps them
    import warnings

    import trecbench

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n")
    run.write_text("1 Q0 a 1 1e39 r\n1 Q0 b 2 2e39 r\n1 Q0 c 3 -1e39 r\n1 Q0 d 4 3.5e38 r\n1 Q0 e 5 -3.5e38 r\n")
    te = subprocess.run([str(trec_eval[version]), "-q", "-m", "all_trec", str(qrels), str(run)], capture_output=True,
                        text=True)
    ours = _ours(cli_run, qrels, run, version, ["-q"], ["all_trec"])
    assert te.returncode == 0 and ours.exit_code == 0 and ours.stdout == te.stdout
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "overflow encountered in cast" would raise here
        frame = trecbench.evaluate(str(qrels), [str(run)], ["AP", "RR"], trec_eval_version=int(version))
    assert f"{frame.loc['r', 'RR']:.4f}" == ("0.3333" if version == "9" else "0.5000")


@pytest.mark.parametrize("score", ["inf", "-inf", "Infinity", "1e400"])
def test_a_score_trec_eval_would_read_as_infinite_is_refused_in_one_line(trec_eval, cli_run, tmp_path, score):
    # trec_eval's atof reads these as +-inf (docs/retrieval.md: differs on purpose, with the reason)
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1\n")
    run.write_text(f"1 Q0 a 1 {score} r\n1 Q0 b 2 1 r\n")
    assert subprocess.run([str(trec_eval["9"]), str(qrels), str(run)], capture_output=True).returncode == 0
    ours = cli_run("eval", "retrieval", "--qrels", qrels, run)
    assert ours.exit_code == 2 and ours.stderr == f"{run}:1: score {score!r} is not a finite number\n"


@pytest.mark.parametrize("version", ["9", "10"])
def test_a_negative_relevance_level_counts_what_trec_eval_counts(trec_eval, cli_run, tmp_path, version):
    # the case: u is not in the qrels; trec_eval's num_rel_ret, bpref, set_P count judged documents only
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run.write_text("1 Q0 u 1 2 r\n1 Q0 a 2 1 r\n")
    ours = _ours(cli_run, qrels, run, version, ["-l", "-1"], ["num_rel_ret", "bpref", "set_P"])
    assert ours.stdout == ("num_rel_ret           \tall\t1\nbpref                 \tall\t0.5000\n"
                           "set_P                 \tall\t0.5000\n")
    compared = 0
    measures = MEASURES_10 if version == "10" else MEASURES
    for seed in range(CASES):
        qrels_text, run_text = adversarial_case(seed)
        qrels.write_text(qrels_text)
        run.write_text(run_text)
        for mode in (["-q", "-l", "-1"], ["-q", "-c", "-l", "-2"], ["-q", "-l", "-3"], ["-c", "-M", "3", "-l", "-1"]):
            te = subprocess.run([str(trec_eval[version]), *mode, *[a for m in measures for a in ("-m", m)],
                                 str(qrels), str(run)], capture_output=True, text=True)
            if te.returncode != 0:
                continue  # trec_eval exits with an error here; trecbench prints numbers (see docs/retrieval.md)
            ours = _ours(cli_run, qrels, run, version, mode, measures)
            assert ours.exit_code == 0, ours.output
            assert ours.stdout == te.stdout, f"seed {seed}, trec_eval {version} {' '.join(mode)}"
            compared += 1
    assert compared >= CASES * 4 // 2
