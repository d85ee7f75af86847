"""Every score output names the relevance level it used, and lists runs best first by the first measure."""
from __future__ import annotations

import json

import pytest
from cli_support import run_cli, write

QRELS = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d4 2\nq2 0 d5 1\n"
# `weak` ranks the grade-1 documents first, `strong` the grade-2 ones: given weak first, strong is best
WEAK = "q1 Q0 d2 1 3.0 weak\nq1 Q0 d3 2 2.0 weak\nq1 Q0 d1 3 1.0 weak\nq2 Q0 d5 1 2.0 weak\nq2 Q0 d4 2 1.0 weak\n"
STRONG = "q1 Q0 d1 1 3.0 strong\nq1 Q0 d2 2 2.0 strong\nq2 Q0 d4 1 2.0 strong\nq2 Q0 d5 2 1.0 strong\n"


@pytest.fixture
def files(tmp_path):
    return write(tmp_path, QRELS, "qrels.txt"), write(tmp_path, WEAK, "weak.txt"), write(tmp_path, STRONG, "strong.txt")


def test_the_table_lists_runs_best_first_and_its_first_stderr_line_says_the_level_and_the_order(files):
    qrels, weak, strong = files
    result = run_cli("eval", "retrieval", "--qrels", qrels, weak, strong, "-m", "AP", "-m", "P@1", "-l", "2")
    assert result.exit_code == 0, result.output
    assert [line.split()[0] for line in result.stdout.splitlines()[1:]] == ["strong", "weak"]
    assert result.stderr.splitlines()[0] == "relevant: grade >= 2; runs best first by AP"


def test_the_level_changes_the_numbers_it_names(files):
    qrels, weak, _ = files
    at_1 = run_cli("eval", "retrieval", "--qrels", qrels, weak, "-m", "P@1")
    at_2 = run_cli("eval", "retrieval", "--qrels", qrels, weak, "-m", "P@1", "-l", "2")
    assert at_1.stdout.splitlines()[1].split() == ["weak", "1.0000"]
    assert at_2.stdout.splitlines()[1].split() == ["weak", "0.0000"]
    assert at_1.stderr.splitlines()[0] == "relevant: grade >= 1"  # one run: no order to state
    assert at_2.stderr.splitlines()[0] == "relevant: grade >= 2"


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_csv_and_json_list_runs_best_first_too(files, fmt):
    qrels, weak, strong = files
    result = run_cli("eval", "retrieval", "--qrels", qrels, weak, strong, "-m", "nDCG@10", "--format", fmt)
    assert result.exit_code == 0, result.output
    if fmt == "csv":
        runs = [line.split(",")[0] for line in result.stdout.splitlines()[1:]]
    else:
        runs = [entry["run"] for entry in json.loads(result.stdout)]
    assert runs == ["strong", "weak"]
    assert result.stderr.splitlines()[0] == "relevant: grade >= 1; runs best first by nDCG@10"


def test_trec_eval_output_stays_trec_eval_s_per_run_and_names_the_level_on_stderr_only(files):
    qrels, weak, strong = files
    both = run_cli("eval", "retrieval", "--qrels", qrels, weak, strong, "--format", "trec_eval", "-m", "map")
    alone = {name: run_cli("eval", "retrieval", "--qrels", qrels, path, "--format", "trec_eval", "-m", "map").stdout
             for name, path in (("weak", weak), ("strong", strong))}
    assert both.stdout == alone["strong"] + alone["weak"]  # map 1.0 before 0.5833: best first
    assert "relevant" not in both.stdout
    assert both.stderr.splitlines()[0] == "relevant: grade >= 1; runs best first by map"


def test_equal_means_keep_the_order_the_runs_were_given(tmp_path, files):
    qrels, weak, _ = files
    twin = write(tmp_path, WEAK.replace(" weak", " twin"), "twin.txt")
    result = run_cli("eval", "retrieval", "--qrels", qrels, twin, weak, "-m", "AP")
    assert [line.split()[0] for line in result.stdout.splitlines()[1:]] == ["twin", "weak"]


def test_eval_compare_with_qrels_names_the_level(files):
    qrels, weak, strong = files
    result = run_cli("eval", "compare", "--qrels", qrels, "--baseline", weak, strong, "-m", "AP",
                     "--iterations", "100")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[0] == "relevant: grade >= 1"


def test_qrels_stats_names_the_level_of_its_relevant_column(files):
    qrels, _, _ = files
    result = run_cli("qrels", "stats", qrels, "--format", "csv")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith("query_id,judged,relevant,")
    assert result.stderr.splitlines()[0].startswith("relevant: grade >= 1")
