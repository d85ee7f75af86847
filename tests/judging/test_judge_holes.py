"""`trecbench judge holes` and the three scores of `eval retrieval -w`: a new run's holes judged once and paid once by
the loopback model, people-only / filled / corrected figures, and the warning at each threshold."""
from __future__ import annotations

import pandas as pd
import pytest
from judge_bench import JUDGE, grader, rows

from trecbench.judging.holes import LARGE_HOLES, SMALL_HOLES, hole_warning
from trecbench.store import Workspace
from trecbench.store.workspace import save_pool

PEOPLE = {("t1", "d1"): 3, ("t1", "d2"): 0, ("t2", "d4"): 2, ("t2", "d5"): 0}  # d3 and d6: nobody's grade


@pytest.fixture
def holes_bench(bench, tmp_path, cli_run):
    """The judging bench with people's grades of four pairs, and two new runs: `new` (top 3: holes d3 and d6 of
    6 pairs) and `close` (top 3: hole d3 of 5 pairs)."""
    qrels = tmp_path / "people.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in PEOPLE.items()))
    r = cli_run("qrels", "import", qrels, "-w", bench, "--judge", "alice", "--kind", "human")
    assert r.exit_code == 0, r.output
    new = tmp_path / "new.txt"
    new.write_text("t1 Q0 d3 1 9 new\nt1 Q0 d1 2 8 new\nt1 Q0 d2 3 7 new\n"
                   "t2 Q0 d6 1 9 new\nt2 Q0 d4 2 8 new\nt2 Q0 d5 3 7 new\n")
    close = tmp_path / "close.txt"
    close.write_text("t1 Q0 d1 1 9 close\nt1 Q0 d2 2 8 close\nt1 Q0 d3 3 7 close\n"
                     "t2 Q0 d4 1 9 close\nt2 Q0 d5 2 8 close\n")
    return bench, new, close


def holes_args(bench, server, *extra):
    return ["judge", "holes", "-w", bench, *extra, "--api-base", server.base_url, "--api-key", "test", "--quiet"]


def validate_the_judge(bench, server, cli_run) -> None:
    """A validation sample of the four pairs people graded, judged by the model judge (JUDGE): binarised kappa 1."""
    frame = pd.DataFrame({"query_id": [q for q, _ in PEOPLE], "doc_id": [d for _, d in PEOPLE], "priority": [1, 2, 1, 2],
                          "group": [None] * 4, "representative": [True] * 4})
    save_pool(Workspace(bench), "judged", "depth", {"depth": 3}, frame)
    r = cli_run("judge", "validate", "-w", bench, "--sample", "--size", "4", "--from", "judged")
    assert r.exit_code == 0, r.output
    r = cli_run("judge", "llm", "-w", bench, "--pool", "validation", "--model", "openai/gpt-4o-mini", "--api-base",
                server.base_url, "--api-key", "test", "--quiet")
    assert r.exit_code == 0, r.output


def test_each_hole_is_judged_once_and_paid_once(holes_bench, llm_server, cli_run):
    bench, new, close = holes_bench
    llm_server.script(grader)
    dry = cli_run(*holes_args(bench, llm_server, new, close, "--depth", "3", "--model", "openai/gpt-4o-mini",
                              "--dry-run"))
    assert dry.exit_code == 0, dry.output
    assert dry.stdout.startswith("dry run: 2 calls to the model (0 answered by the cache) for 2 judgments")
    assert "$" in dry.stdout and llm_server.requests == []  # a cost, and nothing asked
    assert "new: 2 of 6 pairs of its top 3 (33%) unjudged by people" in dry.stderr
    assert "close: 1 of 5 pairs of its top 3 (20%) unjudged by people" in dry.stderr
    r = cli_run(*holes_args(bench, llm_server, new, close, "--depth", "3", "--model", "openai/gpt-4o-mini"))
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("judged 2, failed 0, skipped 0 already judged; 2 calls (0 from cache)")
    assert len(llm_server.requests) == 2  # d3 is a hole of both runs: asked once
    mine = [(q, d, g) for q, d, g, status, name in rows(bench) if name == JUDGE]
    assert sorted(mine) == [("t1", "d3", 1), ("t2", "d6", 1)]  # recorded as that model judge's judgments
    again = cli_run(*holes_args(bench, llm_server, new, close, "--depth", "3", "--model", "openai/gpt-4o-mini"))
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith("judged 0, failed 0, skipped 2 already judged; 0 calls")
    assert len(llm_server.requests) == 2  # a second run asks nothing


def test_a_budget_of_nothing_stops_before_any_call(holes_bench, llm_server, cli_run):
    bench, new, _ = holes_bench
    llm_server.script(grader)
    r = cli_run(*holes_args(bench, llm_server, new, "--depth", "3", "--model", "openai/gpt-4o-mini", "--max-cost", "0"))
    assert r.exit_code == 3, r.output
    assert llm_server.requests == [] and not [x for x in rows(bench) if x[4] == JUDGE]


def test_eval_prints_people_only_filled_and_corrected_with_a_warning_by_size_and_agreement(holes_bench, llm_server,
                                                                                          cli_run):
    bench, new, close = holes_bench
    llm_server.script(grader)
    before = cli_run("eval", "retrieval", "-w", bench, new, close, "-m", "P@3", "--judged-k", "3")
    assert before.exit_code == 0 and "holes of" not in before.stderr  # no model filled a hole: output as it was
    validate_the_judge(bench, llm_server, cli_run)
    r = cli_run(*holes_args(bench, llm_server, new, close, "--depth", "3"))  # no --model: the validated judge
    assert r.exit_code == 0, r.output
    assert f"the validated judge: {JUDGE} (binarised kappa 1.00" in r.stderr
    assert r.stdout.startswith("judged 2, failed 0")
    e = cli_run("eval", "retrieval", "-w", bench, new, close, "-m", "P@3", "--judged-k", "3")
    assert e.exit_code == 0, e.output
    err = e.stderr.splitlines()
    # new: P@3 of t1 (d3 d1 d2) and t2 (d6 d4 d5); people grade only d1 and d4 relevant; the model d3 and d6 (1)
    assert f"holes of new: 2 of 6 pairs of its top 3 (33%) unjudged by people; filled by {JUDGE}: 2" in err
    # corrected: the judge agrees with people on every pair both graded, so the prediction-powered rectifier
    # is 0 and the interval has no width: the corrected figure is the filled one
    assert "  P@3: people only 0.3333; holes filled 0.6667; corrected 0.6667 [0.6667, 0.6667]" in err
    strong = next(line for line in err if line.startswith("strong warning: new: "))
    assert "33% of its top 3 unjudged by people" in strong and "validated binarised kappa 1.00, good" in strong
    # close: 1 hole of 5 (20%): medium holes, a good judge: a warning, not a strong one
    assert f"holes of close: 1 of 5 pairs of its top 3 (20%) unjudged by people; filled by {JUDGE}: 1" in err
    assert "  P@3: people only 0.3333; holes filled 0.5000; corrected 0.5000 [0.5000, 0.5000]" in err
    assert any(line.startswith("warning: close: 20% of its top 3") for line in err)
    # the table scores on the workspace's qrels (a person's grade first, else a model's): the filled figures
    assert "0.6667" in e.stdout and "0.5000" in e.stdout and "0.6667" not in before.stdout


def test_without_model_or_validated_judge_the_command_says_what_to_do(holes_bench, llm_server, cli_run):
    bench, new, _ = holes_bench
    r = cli_run(*holes_args(bench, llm_server, new))
    assert r.exit_code == 2 and "no validated judge" in r.stderr and "give --model" in r.stderr
    r = cli_run(*holes_args(bench, llm_server, new, "--batch", "5"))
    assert r.exit_code == 2 and "--batch choose a judge: give --model too" in r.stderr


def test_a_bad_run_file_is_a_clear_error(holes_bench, llm_server, cli_run, tmp_path):
    bench, _, _ = holes_bench
    bad = tmp_path / "bad.txt"
    bad.write_text("t1 Q0 d1 1 not-a-score run\n")
    r = cli_run(*holes_args(bench, llm_server, bad, "--model", "openai/gpt-4o-mini"))
    assert r.exit_code == 2 and str(bad) in r.stderr and "Traceback" not in r.output


@pytest.mark.parametrize(("share", "kappa", "level"), [
    (0.0, 0.9, "none"),
    (SMALL_HOLES - 0.01, 0.4, "note"),  # small holes, good judge (kappa 0.4 is good: judge validate's GOOD)
    (SMALL_HOLES - 0.01, 0.39, "warning"),  # small, fair
    (SMALL_HOLES - 0.01, 0.19, "warning"),  # small, poor
    (SMALL_HOLES - 0.01, None, "warning"),  # small, not validated: counted poor
    (SMALL_HOLES, 0.9, "warning"),  # 10% is medium
    (SMALL_HOLES, 0.2, "strong"),  # medium, fair (0.2 is fair: judge validate's FAIR)
    (LARGE_HOLES - 0.01, 0.1, "strong"),
    (LARGE_HOLES, 1.0, "strong"),  # 30% is large: strong whatever the judge
])
def test_the_warning_follows_the_hole_share_and_the_judges_agreement(share, kappa, level):
    warning = hole_warning(share, kappa, judge="m")
    assert warning.level == level
    assert (warning.message == "") == (level == "none")


def test_unfilled_holes_are_said_to_count_as_not_relevant():
    warning = hole_warning(0.5, None, unfilled=3)
    assert warning.level == "strong" and "3 hole(s) have no grade and count as not relevant" in warning.message
