"""`trecbench judge llm --provider-batch` against the loopback server's files + batches endpoints: submit,
wait, collect, replies applied as live ones, batch prices, failures asked live, and a kill mid-submit."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from llm_server import garbled, status
import test_judge_llm
from test_judge_llm import grader, judge_args, rows

bench = test_judge_llm.bench  # the workspace fixture: two topics, six documents, a depth pool

BATCH = ("--batch", "3", "--provider-batch")


def calls(bench) -> list[tuple]:
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        return conn.execute("SELECT ok, prompt_tokens, completion_tokens, cost, error FROM llm_calls "
                            "WHERE cached = 0 ORDER BY id").fetchall()


def judgments(bench) -> list[tuple]:
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        return conn.execute("SELECT qid, docid, grade, status, raw_reply, rationale FROM judgments "
                            "ORDER BY qid, docid").fetchall()


def live_chat_calls(server) -> int:
    return sum(1 for p in server.paths if p.rstrip("/").endswith("chat/completions"))


def test_a_batch_is_submitted_once_collected_on_a_rerun_and_judged_as_live_replies_are(bench, llm_server, cli_run,
                                                                                      tmp_path):
    llm_server.script(grader)
    llm_server.hold_batches = True
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0, r.output
    assert "submitted: 2 requests" in r.output and "6 documents wait for a batch" in r.output
    assert len(llm_server.batches) == 1 and live_chat_calls(llm_server) == 0 and rows(bench) == []

    r = cli_run(*judge_args(bench, llm_server, *BATCH))  # still running: nothing new is submitted
    assert r.exit_code == 0, r.output
    assert "is in_progress (0 of 2 done)" in r.output and len(llm_server.batches) == 1 and rows(bench) == []

    llm_server.hold_batches = False
    r = cli_run(*judge_args(bench, llm_server, "--batch", "3", "--collect"))
    assert r.exit_code == 0, r.output
    assert "judged 6, failed 0" in r.output and "2 replies read" in r.output
    assert len(llm_server.batches) == 1 and live_chat_calls(llm_server) == 0
    batched = judgments(bench)

    # The same pool judged live: the same grades, reasons and raw replies.
    live = tmp_path / "live"
    import shutil

    shutil.copytree(bench, live)
    with sqlite3.connect(live / "bench.sqlite") as conn:
        conn.execute("DELETE FROM judgments")
        conn.execute("DELETE FROM llm_cache")
    r = cli_run(*judge_args(live, llm_server, "--batch", "3"))
    assert r.exit_code == 0, r.output
    assert live_chat_calls(llm_server) == 2
    assert judgments(live) == batched and len(batched) == 6

    # Priced at litellm's batch prices for gpt-4o-mini (input 7.5e-08, output 3e-07 a token): half the live price.
    batch_calls = calls(bench)
    assert len(batch_calls) == 2
    for ok_, prompt, completion, cost, _ in batch_calls:
        assert ok_ == 1 and cost == pytest.approx(prompt * 7.5e-08 + completion * 3e-07)
    live_calls = calls(live)[-2:]
    assert sum(c[3] for c in live_calls) == pytest.approx(2 * sum(c[3] for c in batch_calls))

    r = cli_run(*judge_args(bench, llm_server, *BATCH))  # all judged: nothing to submit
    assert r.exit_code == 0 and "no provider batch to collect or submit" in r.output
    assert len(llm_server.batches) == 1


def test_unreadable_and_failed_batch_replies_are_asked_live_under_the_live_rules(bench, llm_server, cli_run):
    # In the batch t1's reply cannot be read and t2's request fails; t1 is re-asked live and garbled again (three
    # tries, then failures), t2 is answered.
    seen: set[str] = set()

    def answer(body):
        t1 = "rolled back" in str(body["messages"])
        first = "t1" if t1 else "t2"
        if first not in seen:
            seen.add(first)
            return garbled() if t1 else status(500)
        return garbled() if t1 else grader(body)

    llm_server.script(answer)
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0 and "submitted: 2 requests" in r.output, r.output
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 1, r.output
    log = calls(bench)
    assert sorted((c[0], c[4].split(":")[0]) for c in log[:2]) == [(0, "batch request failed (status 500)"),
                                                                    (0, "unreadable reply")]
    got = {(q, d): (g, s) for q, d, g, s, *_ in judgments(bench)}
    assert got[("t1", "d1")] == (None, "failed") and got[("t2", "d4")] == (3, "ok")
    assert "unreadable reply after 4 tries" in r.output  # the batch reply, then three live asks
    assert live_chat_calls(llm_server) == 4  # t1 re-asked three times, t2 asked once
    assert len(llm_server.batches) == 1  # failures go live, not into another batch


def test_a_kill_between_creating_the_batch_and_saving_its_id_submits_nothing_twice(bench, llm_server, cli_run):
    llm_server.script(grader)
    llm_server.batch_delay = 60  # the batch exists at the provider; its id never reaches the workspace
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cmd = [sys.executable, "-m", "trecbench.cli", *map(str, judge_args(bench, llm_server, *BATCH))]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 240
    while time.time() < deadline and not llm_server.batches:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(llm_server.batches) == 1
    llm_server.batch_delay = 0
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    assert "found again" in r.stdout and "judged 6, failed 0" in r.stdout
    assert len(llm_server.batches) == 1 and live_chat_calls(llm_server) == 0
    assert sorted((q, d) for q, d, g, s, _ in rows(bench) if s == "ok") == sorted(
        (q, d) for q, d, *_ in judgments(bench))


def test_collect_alone_submits_nothing(bench, llm_server, cli_run):
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, "--collect"))
    assert r.exit_code == 0, r.output
    assert "no provider batch to collect or submit" in r.output and not llm_server.batches and rows(bench) == []


def test_a_provider_without_batches_and_bad_combinations_are_refused(bench, llm_server, cli_run):
    r = cli_run("judge", "llm", "-w", bench, "--model", "ollama/llama3.1", "--api-base", llm_server.base_url,
                "--quiet", "--provider-batch")
    assert r.exit_code == 2 and "provider batches are supported for OpenAI" in r.output  # bad input: exit 2
    r = cli_run(*judge_args(bench, llm_server, "--provider-batch", "--dry-run"))
    assert r.exit_code == 2 and "not with an adaptive pool" in r.output
    assert not llm_server.batches and not llm_server.requests
