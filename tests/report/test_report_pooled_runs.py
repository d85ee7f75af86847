"""The report scores every run the workspace's pools were built from, says where each came from, and warns when
a pooled run's file is gone or changed."""
from __future__ import annotations

import shutil

from paths import SAMPLE

RUNS = ("bm25", "tfidf", "title_only", "lexical_overlap")


def pooled_bench(tmp_path, cli_run):
    runs = tmp_path / "team-runs"
    runs.mkdir()
    for run in RUNS:
        shutil.copy(SAMPLE / "runs" / f"{run}.txt", runs / f"{run}.txt")
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv").exit_code == 0
    assert cli_run("pool", *(runs / f"{r}.txt" for r in RUNS), "--depth", "10", "-w", bench).exit_code == 0
    assert cli_run("qrels", "import", SAMPLE / "qrels.txt", "-w", bench, "--judge", "nist").exit_code == 0
    return bench, runs


def test_every_pooled_run_is_scored_though_none_is_in_the_runs_folder(tmp_path, cli_run):
    from trecbench.report import ReportOptions, build_report

    bench, runs = pooled_bench(tmp_path, cli_run)
    assert not any((bench / "runs").iterdir())  # before: only BENCH/runs/ was read, and it is empty
    report = build_report(bench, ReportOptions(iterations=100))
    assert sorted(s.path for s in report.retrieval.runs) == sorted(str(runs / f"{r}.txt") for r in RUNS)
    assert {s.origin for s in report.retrieval.runs} == {"pool depth-10"}
    html = tmp_path / "report.html"
    assert cli_run("report", "-w", bench, "-o", html, "--quiet").exit_code == 0
    assert all(str(runs / f"{r}.txt") in html.read_text() for r in RUNS)


def test_a_pooled_run_gone_or_changed_is_said_in_the_report(tmp_path, cli_run):
    from trecbench.report import ReportOptions, build_report

    bench, runs = pooled_bench(tmp_path, cli_run)
    (runs / "tfidf.txt").unlink()
    with open(runs / "bm25.txt", "a") as f:
        f.write("T01 Q0 HB-NEW-99 999 0.001 bm25\n")
    report = build_report(bench, ReportOptions(iterations=100))
    notes = report.retrieval.notes
    assert any(n.startswith("run 'tfidf' of pool 'depth-10' is no longer at ") and n.endswith(": not scored")
               for n in notes)
    assert "run 'bm25' of pool 'depth-10' changed since it was pooled (its sha256 differs): scored as it is now" \
        in notes
    assert sorted(s.path for s in report.retrieval.runs) == sorted(str(runs / f"{r}.txt") for r in RUNS
                                                                   if r != "tfidf")


def test_the_answers_section_says_which_nuggets_it_scored_against_as_eval_answers_does(tmp_path, cli_run):
    from trecbench.report import ReportOptions, build_report

    bench, _ = pooled_bench(tmp_path, cli_run)
    assert cli_run("nuggets", "import", SAMPLE / "nuggets.jsonl", "-w", bench).exit_code == 0
    answers = sorted((SAMPLE / "answers").glob("*.jsonl"))
    report = build_report(bench, ReportOptions(iterations=100, answers=tuple(str(a) for a in answers)))
    said = cli_run("eval", "answers", "-w", bench, answers[0], "--assigner", "citation").stderr.splitlines()[0]
    assert said == "nuggets: 77 from the workspace over 12 topics: 77 approved"
    assert said in report.answers.notes
