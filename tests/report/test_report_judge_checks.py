"""The report shows what `judge validate` and `eval retrieval -w` print of a model judge: tau_AP beside tau, label
stability, the new-run bias check, and the holes of the scored runs a model filled (people only, filled, corrected)."""
from __future__ import annotations

import re

import pandas as pd
from judge_bench import JUDGE, grader, make_judge_bench
from sampled_bench import make_sampled_bench
from test_report import section, table_rows

from trecbench.store import Workspace
from trecbench.store.workspace import save_pool

def report_html(cli_run, ws, out, *args) -> str:
    r = cli_run("report", "-w", ws, "-o", out, "--iterations", "100", "--quiet", *args)
    assert r.exit_code == 0, r.output
    return out.read_text(encoding="utf-8")


def test_the_validation_block_shows_tau_ap_label_stability_and_the_new_run_bias(tmp_path, cli_run, llm_server):
    # the workspace of tests/support/sampled_bench.py: three pooled runs, people's grades of all four pairs,
    # a model asked three times per pair; the figures below are the ones `judge validate` prints of it
    ws, runs, pooled, r = make_sampled_bench(tmp_path, cli_run, llm_server)
    assert pooled.exit_code == 0
    assert r.exit_code == 0, r.output
    assert cli_run("judge", "validate", "-w", ws, "--sample", "--size", "4", "--from", "depth-2").exit_code == 0
    printed = cli_run("judge", "validate", "-w", ws).stdout  # ranked by nDCG@10, as the report ranks them
    assert "tau_AP" in printed.splitlines()[1] and "-1.000 [-1.00, -1.00]  -0.500 [-0.50, -0.50]" in printed  # tau, tau_AP
    assert "mean absolute rank shift 0.00 over 3 runs, mean shift +0.00" in printed
    assert "  B: rank 2 with people, 2 with its holes filled, 2 left unjudged (1 of 1 own pairs" in printed

    html = report_html(cli_run, ws, tmp_path / "report.html")
    fragment = section(html, "agreement")
    validation = re.search(r'<div class="scroll" id="validation">(.*?)</div>', fragment, re.S).group(1)
    assert '<th scope="col">tau_AP</th>' in validation
    (row,) = table_rows(validation)
    assert row[5].startswith("-0.500 [")  # judge, pairs, kappa, binarised, tau, tau_AP
    assert ("Label stability of " in fragment and "(3 samples): 4 pairs, grade flips in 50.0% (across the threshold "
            "in 25.0%), two samples agree 66.7%." in fragment)
    bias = re.search(r'<div class="scroll new-run-bias">(.*?)</div>', fragment, re.S).group(1)
    assert "depth-2 pool" in bias and "(nDCG@10); mean absolute rank shift 0.00 over 3 runs, mean shift +0.00" in bias
    # per run: rank with people, with its holes filled, left unjudged, shift, own pairs the model graded
    assert table_rows(bias) == [["A", "1", "1", "1", "+0", "1 of 1"], ["B", "2", "2", "2", "+0", "1 of 1"],
                                ["C", "2", "2", "2", "+0", "1 of 1"]]
    assert 'id="holes"' not in html  # people graded every pair of the runs' top 10: no hole, no holes table


def test_the_retrieval_section_shows_the_holes_a_model_filled_with_the_three_figures_and_the_warning(
        tmp_path, cli_run, llm_server):
    # the workspace of tests/judging/test_judge_holes.py: people graded four pairs, two new runs with holes
    bench = make_judge_bench(tmp_path, cli_run)
    (tmp_path / "people.txt").write_text("t1 0 d1 3\nt1 0 d2 0\nt2 0 d4 2\nt2 0 d5 0\n")
    assert cli_run("qrels", "import", tmp_path / "people.txt", "-w", bench, "--judge", "alice",
                   "--kind", "human").exit_code == 0
    new, close = tmp_path / "new.txt", tmp_path / "close.txt"
    new.write_text("t1 Q0 d3 1 9 new\nt1 Q0 d1 2 8 new\nt1 Q0 d2 3 7 new\n"
                   "t2 Q0 d6 1 9 new\nt2 Q0 d4 2 8 new\nt2 Q0 d5 3 7 new\n")
    close.write_text("t1 Q0 d1 1 9 close\nt1 Q0 d2 2 8 close\nt1 Q0 d3 3 7 close\n"
                     "t2 Q0 d4 1 9 close\nt2 Q0 d5 2 8 close\n")
    llm_server.script(grader)
    frame = pd.DataFrame({"query_id": ["t1", "t1", "t2", "t2"], "doc_id": ["d1", "d2", "d4", "d5"],
                          "priority": [1, 2, 1, 2], "group": [None] * 4, "representative": [True] * 4})
    save_pool(Workspace(bench), "judged", "depth", {"depth": 3}, frame)
    assert cli_run("judge", "validate", "-w", bench, "--sample", "--size", "4", "--from", "judged").exit_code == 0
    api = ["--api-base", llm_server.base_url, "--api-key", "test", "--quiet"]
    r = cli_run("judge", "llm", "-w", bench, "--pool", "validation", "--model", "openai/gpt-4o-mini", *api)
    assert r.exit_code == 0, r.output
    args = ("--runs", new, "--runs", close, "-m", "P@3")
    before = report_html(cli_run, bench, tmp_path / "before.html", *args)
    assert 'id="holes"' not in before  # no model filled a hole yet: the section is as it was

    r = cli_run("judge", "holes", "-w", bench, new, close, *api)  # the validated judge, top 10
    assert r.exit_code == 0, r.output
    html = report_html(cli_run, bench, tmp_path / "report.html", *args)
    holes = re.search(r'<div class="scroll" id="holes">(.*?)</div>', section(html, "retrieval"), re.S).group(1)
    assert "top 10" in holes
    shown = {row[0]: row for row in table_rows(holes)}
    # the figures `eval retrieval -w` prints of the same runs (tests/judging/test_judge_holes.py); a run is named by
    # its file, as in the corrected table
    assert shown["new.txt"][:7] == ["new.txt", "2 of 6 (33%)", f"2 by {JUDGE}", "P@3", "0.3333", "0.6667",
                                "0.6667 [0.6667, 0.6667]"]
    assert shown["close.txt"][:7] == ["close.txt", "1 of 5 (20%)", f"1 by {JUDGE}", "P@3", "0.3333", "0.5000",
                                  "0.5000 [0.5000, 0.5000]"]
    assert shown["new.txt"][7].startswith("strong warning: 33% of its top 10 unjudged by people")
    assert shown["close.txt"][7].startswith("warning: 20% of its top 10 unjudged by people")
    printed = cli_run("eval", "retrieval", "-w", bench, new, close, "-m", "P@3").stderr  # top 10 too
    assert "  P@3: people only 0.3333; holes filled 0.6667; corrected 0.6667 [0.6667, 0.6667]" in printed
    assert "  P@3: people only 0.3333; holes filled 0.5000; corrected 0.5000 [0.5000, 0.5000]" in printed
    assert before.count('class="missing"') == html.count('class="missing"')  # no missing box for it
