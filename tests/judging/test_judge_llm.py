"""`trecbench judge llm` against a loopback model server: judging, cache, failures, budget, resume."""
from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from judge_bench import DOCS, JUDGE, POOL, grader, judge_args, rows
from llm_server import garbled, ok, slow, status
from trecbench.judging.llm import vote


def test_every_candidate_is_judged_and_a_rerun_makes_no_calls(bench, llm_server, cli_run, tmp_path):
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server))
    assert r.exit_code == 0, r.output
    assert len(llm_server.requests) == 6
    got = {(q, d): (g, s) for q, d, g, s, _ in rows(bench)}
    assert got[("t1", "d1")] == (3, "ok") and got[("t2", "d5")] == (0, "ok") and got[("t1", "d3")] == (1, "ok")
    assert {name for *_, name in rows(bench)} == {JUDGE}
    assert "judged 6, failed 0" in r.stdout
    r = cli_run(*judge_args(bench, llm_server))
    assert r.exit_code == 0 and len(llm_server.requests) == 6  # everything already judged: no call
    assert "skipped 6 already judged" in r.stdout
    out = tmp_path / "qrels.txt"
    assert cli_run("qrels", "export", "-w", bench, "-o", out).exit_code == 0
    assert "t1 0 d1 3" in out.read_text().splitlines()


def test_the_cache_answers_a_new_judge_run_with_the_same_requests(bench, llm_server, cli_run):
    llm_server.script(grader)
    cli_run(*judge_args(bench, llm_server, "--limit", "3"))
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        conn.execute("DELETE FROM judgments")  # as if the judgments had never been made
    r = cli_run(*judge_args(bench, llm_server))
    assert r.exit_code == 0
    assert len(llm_server.requests) == 6  # 3 + the 3 the cache could not answer
    assert "(3 from cache)" in r.stdout


@pytest.mark.parametrize("extra, limit, cached, calls", [
    ((), 3, 3, 6),  # one passage a call
    (("--batch", "2"), 3, 2, 4),  # t1's d1+d2, d3; t2's d4+d5, d6: each call's bound is its passages'
    (("--samples", "3"), 1, 3, 18),  # three seeds a passage, each a request of its own
])
def test_a_dry_run_counts_the_calls_the_cache_would_answer(bench, llm_server, cli_run, extra, limit, cached, calls):
    # A run's requests carry more than the model's parameters (the reply bound, the schema the SDK's servers
    # take, the sample's seed): the dry run must key them as the run does, or no cached reply is ever found.
    llm_server.script(grader)
    assert cli_run(*judge_args(bench, llm_server, *extra, "--limit", str(limit))).exit_code == 0
    assert len(llm_server.requests) == cached
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        conn.execute("DELETE FROM judgments")  # as if the judgments had never been made; the replies stay cached
    dry = cli_run(*judge_args(bench, llm_server, *extra, "--dry-run"))
    assert dry.exit_code == 0, dry.output
    assert f"dry run: {calls - cached} calls to the model ({cached} answered by the cache) for 6 judgments" in dry.stdout
    assert len(llm_server.requests) == cached  # nothing sent
    real = cli_run(*judge_args(bench, llm_server, *extra))
    assert real.exit_code == 0, real.output
    assert len(llm_server.requests) == calls  # the run asked the model exactly what the dry run said it would
    assert f"{calls - cached} calls ({cached} from cache)" in real.stdout


def test_batches_put_several_passages_in_one_call(bench, llm_server, cli_run):
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, "--batch", "3"))
    assert r.exit_code == 0, r.output
    assert len(llm_server.requests) == 2  # one call per topic
    assert "[P3]" in llm_server.requests[0]["messages"][-1]["content"]
    assert len([x for x in rows(bench) if x[3] == "ok"]) == 6


def test_unreadable_replies_are_recorded_as_failures_never_as_grades(bench, llm_server, cli_run, tmp_path):
    llm_server.script(garbled(), garbled(), garbled(), then=garbled())
    r = cli_run(*judge_args(bench, llm_server, "--limit", "1"))
    assert r.exit_code == 1
    assert "1 judgment(s) failed" in r.stderr and "t1\td1\tunreadable reply" in r.stderr
    assert rows(bench) == [("t1", "d1", None, "failed", JUDGE)]
    assert len(llm_server.requests) == 3  # asked, then re-asked twice
    out = tmp_path / "q.txt"
    # a failure is not a judgment: nothing to export yet
    assert cli_run("qrels", "export", "-w", bench, "-o", out).exit_code != 0
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, "--limit", "1"))
    assert r.exit_code == 0 and rows(bench)[-1][:4] == ("t1", "d1", 3, "ok")  # retried on the next run


def test_rate_limits_and_server_errors_are_retried(bench, llm_server, cli_run):
    llm_server.script(status(429, retry_after=0), status(500), ok('[{"passage": "P1", "grade": 2, "reason": "x"}]'))
    r = cli_run(*judge_args(bench, llm_server, "--limit", "1"))
    assert r.exit_code == 0, r.output
    assert len(llm_server.requests) == 3
    assert rows(bench) == [("t1", "d1", 2, "ok", JUDGE)]


def test_samples_are_put_to_a_majority_vote(bench, llm_server, cli_run):
    one = '[{"passage": "P1", "grade": %d, "reason": "r"}]'
    llm_server.script(ok(one % 2), ok(one % 1), ok(one % 2))
    r = cli_run(*judge_args(bench, llm_server, "--limit", "1", "--samples", "3"))
    assert r.exit_code == 0, r.output
    assert rows(bench)[0][2] == 2
    seeds = [req.get("seed") for req in llm_server.requests]
    assert seeds == [0, 1, 2] and all(req["temperature"] == 0.7 for req in llm_server.requests)


def test_dry_run_counts_tokens_and_dollars_without_calling(bench, llm_server, cli_run):
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, "--dry-run"))
    assert r.exit_code == 0, r.output
    assert llm_server.requests == []
    m = re.search(r"dry run: (\d+) calls to the model .*?(\d+) input tokens.*\$(\d+\.\d+)", r.stdout)
    assert m and int(m.group(1)) == 6 and int(m.group(2)) > 100 and float(m.group(3)) > 0


def test_max_cost_stops_cleanly_keeping_what_was_judged(bench, llm_server, cli_run):
    # each reply bills 100 output tokens (within the request's bound) and ~230 input tokens, about
    # $0.0000945 for gpt-4o-mini; the next call is reserved at its bound: $0.00025 pays for two
    llm_server.script(lambda body: ok(grader(body), completion_tokens=100))
    r = cli_run(*judge_args(bench, llm_server, "--max-cost", "0.00025", "--concurrency", "1"))
    assert r.exit_code == 3, r.output
    assert "budget reached" in r.stderr
    judged = [x for x in rows(bench) if x[3] == "ok"]
    assert len(judged) == 2
    assert len(llm_server.requests) == len(judged)
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        spent = conn.execute("SELECT SUM(cost) FROM llm_calls").fetchone()[0]
    assert 0.00012 < spent <= 0.00025


def test_kill_9_loses_no_judgment_and_the_rerun_judges_only_what_is_missing(bench, llm_server, tmp_path):
    calls, killed = [], []

    def slow_grader(body):  # slow until the kill, so that the kill falls between replies; the rerun at full speed
        calls.append(1)
        return grader(body) if killed else slow(0.4, grader(body))

    llm_server.script(slow_grader)
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cmd = [sys.executable, "-m", "trecbench.cli", *map(str, judge_args(bench, llm_server, "--concurrency", "1"))]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline and len([x for x in rows(bench) if x[3] == "ok"]) < 2:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed.append(True)
    before = [x for x in rows(bench) if x[3] == "ok"]
    assert 2 <= len(before) < 6
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    after = [x for x in rows(bench) if x[3] == "ok"]
    assert sorted((q, d) for q, d, *_ in after) == sorted(POOL)  # each pair exactly once
    assert after[: len(before)] == before
    # every reply that arrived is in the call log; only the one request in flight at the kill can be paid twice
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        logged = conn.execute("SELECT COUNT(*) FROM llm_calls WHERE cached = 0").fetchone()[0]
    assert len(calls) <= len(POOL) + 1 and len(calls) - 1 <= logged <= len(calls)


def test_kill_9_read_from_a_process_holding_the_workspace_open_twice(bench, llm_server, tmp_path):
    """The same, read from a process that keeps the workspace open while it opens it again (as a notebook
    or the fixture's `init` handle, when not yet collected, does): its readers must not take the judging
    run's deleted WAL index for the live one ("database disk image is malformed")."""
    from trecbench.store import Workspace

    held = Workspace(bench)
    held.topics()
    Workspace(bench)
    try:
        test_kill_9_loses_no_judgment_and_the_rerun_judges_only_what_is_missing(bench, llm_server, tmp_path)
    finally:
        held.close()


def test_an_adaptive_pool_chooses_documents_from_the_grades_and_stops_at_the_budget(tmp_path, llm_server, cli_run):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "contents": v}) + "\n" for k, v in DOCS.items()))
    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\tHow fast must a bad API release be rolled back?\n")
    # run "good" ranks the relevant d1 first; run "bad" ranks irrelevant documents first
    good = tmp_path / "good.txt"
    good.write_text("t1 Q0 d1 1 9 good\nt1 Q0 d3 2 8 good\nt1 Q0 d4 3 7 good\n")
    bad = tmp_path / "bad.txt"
    bad.write_text("t1 Q0 d2 1 9 bad\nt1 Q0 d5 2 8 bad\nt1 Q0 d6 3 7 bad\n")
    ws = tmp_path / "bench"
    assert cli_run("init", ws, "--corpus", corpus, "--topics", topics).exit_code == 0
    r = cli_run("pool", good, bad, "--depth", "3", "--strategy", "mtf", "--budget", "3", "-w", ws, "--name", "mtf")
    assert r.exit_code == 0, r.output
    llm_server.script(grader)
    r = cli_run(*judge_args(ws, llm_server))
    assert r.exit_code == 0, r.output
    judged = [(q, d) for q, d, g, s, _ in rows(ws) if s == "ok"]
    assert len(judged) == 3  # the budget
    assert judged[0] == ("t1", "d1")  # the first run's top document...
    assert ("t1", "d3") in judged  # ...was relevant, so move-to-front keeps drawing from that run
    r = cli_run(*judge_args(ws, llm_server))
    assert r.exit_code == 0 and len(llm_server.requests) == 3  # resumed: nothing left within the budget


def test_a_vote_tie_goes_to_the_lower_grade():
    assert vote([2, 1]) == 1
    assert vote([3, 3, 0, 0, 2]) == 0
    assert vote([2, 2, 1]) == 2
