"""`trecbench judge llm --provider-batch` with an `anthropic/...` model, against the loopback server's Anthropic
endpoints (the cycle every provider shares, and its prices, are in test_judge_batch.py): requests as litellm sends
them live, expired, errored and garbled result lines, a kill between creating the batch and saving its id beside
another account's batch, a batch never created looked for among running ones, a refused or missing key."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing

from llm_server import LLMServer, expired, result_line, status
from test_judge_batch import anthropic_args as judge_args, anthropic_live_calls as live_calls, calls, judgments, \
    kill_after_creating, live_copy
from judge_bench import grader, rows


BATCH = ("--batch", "3", "--provider-batch")


def batch_params(server) -> list[dict]:
    return [r["params"] for b in server.anthropic_batches.values() for r in b["requests"]]


def ledger(bench, *, own_process: bool = False) -> list[tuple]:
    """The workspace's batches; with `own_process`, as a process of its own sees them (after a killed process
    wrote them: connections earlier in-process runs left open can keep this process on an older snapshot)."""
    query = "SELECT batch_id, state, requests FROM llm_batches ORDER BY id"
    if not own_process:
        with closing(sqlite3.connect(bench / "bench.sqlite")) as conn:
            return conn.execute(query).fetchall()
    code = f"import json, sqlite3, sys; print(json.dumps(sqlite3.connect(sys.argv[1]).execute({query!r}).fetchall()))"
    out = subprocess.run([sys.executable, "-c", code, str(bench / "bench.sqlite")], capture_output=True, text=True,
                         check=True).stdout
    return [tuple(r) for r in json.loads(out)]


def t1(body) -> bool:
    return "rolled back" in str(body["messages"])


def test_every_batch_request_carries_the_parameters_litellm_sends_live(bench, llm_server, cli_run, tmp_path):
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0 and "submitted: 2 requests" in r.output, r.output
    assert [s for _, s, _ in ledger(bench)] == ["submitted"]
    r = cli_run(*judge_args(live_copy(bench, tmp_path), llm_server, "--batch", "3"))
    assert r.exit_code == 0 and live_calls(llm_server) == 2, r.output
    # The same messages, structured output, max_tokens and temperature (system and text given as strings).
    sent = sorted((LLMServer._as_chat(p) for p in batch_params(llm_server)), key=str)
    assert sent == sorted((LLMServer._as_chat(p) for p in llm_server.anthropic_bodies), key=str)
    assert all(p["max_tokens"] > 0 and p["system"] and p["temperature"] == 0 for p in batch_params(llm_server))


def test_expired_and_errored_lines_are_failures_asked_again_in_the_next_batch(bench, llm_server, cli_run):
    first: list[str] = []

    def answer(body):
        which = "t1" if t1(body) else "t2"
        if which not in first:
            first.append(which)
            return expired() if which == "t1" else status(500, message="overloaded, try later")
        return grader(body)

    llm_server.script(answer)
    assert cli_run(*judge_args(bench, llm_server, *BATCH)).exit_code == 0
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 1, r.output  # failures: listed, recorded as failures, never as grades
    assert "judged 0, failed 6" in r.output and "0 replies read" in r.output
    errors = sorted(c[4] for c in calls(bench))
    assert errors == ["batch request errored (api_error): overloaded, try later",
                      "batch request expired: the batch ended before it was processed"]
    assert {s for *_, s, _, _ in judgments(bench)} == {"failed"} and all(c[3] == 0 for c in calls(bench))
    assert len(llm_server.anthropic_batches) == 1 and live_calls(llm_server) == 0

    r = cli_run(*judge_args(bench, llm_server, *BATCH))  # the failed requests go into the next batch
    assert r.exit_code == 0 and "submitted: 2 requests" in r.output, r.output
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0 and "judged 6, failed 0" in r.output, r.output
    assert len(llm_server.anthropic_batches) == 2 and live_calls(llm_server) == 0
    assert sorted((q, d, g) for q, d, g, s, _ in rows(bench) if s == "ok") == [
        ("t1", "d1", 3), ("t1", "d2", 0), ("t1", "d3", 1), ("t2", "d4", 3), ("t2", "d5", 0), ("t2", "d6", 1)]


def test_a_garbled_result_line_is_reported_and_its_request_asked_again_in_the_next_batch(bench, llm_server, cli_run):
    first: list[str] = []

    def answer(body):
        if t1(body) and not first:
            first.append("t1")
            return result_line('{"custom_id": "msgbatch_res')
        return grader(body)

    llm_server.script(answer)
    assert cli_run(*judge_args(bench, llm_server, *BATCH)).exit_code == 0
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 1, r.output
    assert "unreadable result line batch msgbatch_" in r.output and ": not JSON" in r.output
    assert "judged 3, failed 3" in r.output and "1 replies read" in r.output
    assert sorted(c[4] or "" for c in calls(bench)) == ["", "no result for this request in the batch"]
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert "submitted: 1 requests" in r.output, r.output
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0 and "judged 3, failed 0" in r.output, r.output
    assert len([s for *_, s, _ in rows(bench) if s == "ok"]) == 6 and live_calls(llm_server) == 0


def test_a_kill_between_creating_the_batch_and_saving_its_id_submits_nothing_twice(bench, llm_server, cli_run):
    llm_server.script(grader)
    foreign = foreign_batch(llm_server)  # ended, of as many requests: its results show it is not this workspace's
    killed_at: list[list[tuple]] = []

    def created() -> bool:  # the ledger as the killed process left it, once the provider has its batch
        if len(llm_server.anthropic_batches) < 2:
            return False
        killed_at.append(ledger(bench, own_process=True))
        return True

    kill_after_creating(llm_server, judge_args(bench, llm_server, *BATCH), created)
    assert killed_at[0] == [(None, "submitting", 2)]  # written down before the provider was asked
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0, r.output
    ours = next(b for b in llm_server.anthropic_batches if b != foreign)
    assert f"batch {ours} found again" in r.output and "judged 6, failed 0" in r.output
    assert len(llm_server.anthropic_batches) == 2 and live_calls(llm_server) == 0
    assert ledger(bench, own_process=True) == [(ours, "collected", 2)]


def foreign_batch(server, hold: bool = False) -> str:
    """A batch of two requests another workspace of the account submitted (ended unless `hold`)."""
    batch = server._create_message_batch({"requests": [
        {"custom_id": c, "params": {"model": "claude-haiku-4-5", "max_tokens": 10,
                                    "messages": [{"role": "user", "content": "[P1] Rollback of x"}]}}
        for c in ("other-1", "other-2")]}, {})["id"]
    if not hold:
        server._message_batch(batch)
    return batch


def test_a_batch_the_provider_never_created_is_submitted_again_once_no_running_batch_could_be_it(bench, llm_server,
                                                                                                 cli_run):
    llm_server.script(grader)
    dead = judge_args(bench, llm_server, *BATCH)
    dead[dead.index(llm_server.anthropic_url)] = "http://127.0.0.1:9"  # nothing listens: no answer to the create
    r = cli_run(*dead)
    assert r.exit_code == 2 and "creating the batch got no answer" in r.output, r.output
    assert ledger(bench) == [(None, "submitting", 2)]  # it may exist: kept, to be looked for

    llm_server.hold_batches = True
    first, second = foreign_batch(llm_server, hold=True), foreign_batch(llm_server, hold=True)
    r = cli_run(*judge_args(bench, llm_server, *BATCH))  # two running batches of two requests: either could be it
    assert r.exit_code == 2 and f"could be it ({second}, {first})" in r.output, r.output
    assert len(llm_server.anthropic_batches) == 2 and ledger(bench) == [(None, "submitting", 2)]

    llm_server.hold_batches = False
    llm_server._message_batch(first), llm_server._message_batch(second)  # ended: their results are not ours
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0 and "submitted: 2 requests" in r.output and "found again" not in r.output, r.output
    ours = [b for b in llm_server.anthropic_batches if b not in (first, second)]
    assert len(ours) == 1 and ledger(bench) == [(ours[0], "submitted", 2)]
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0 and "judged 6, failed 0" in r.output, r.output


def test_requests_past_the_providers_limit_go_into_several_batches(bench, llm_server, cli_run, monkeypatch):
    from trecbench.llm.batch_anthropic import AnthropicBatches

    monkeypatch.setattr(AnthropicBatches, "max_requests", 1)
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0 and r.output.count(" submitted: 1 requests") == 2, r.output
    assert [n for _, _, n in ledger(bench)] == [1, 1] and len(llm_server.anthropic_batches) == 2
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0 and "judged 6, failed 0" in r.output and r.output.count("1 replies read") == 2, r.output


def test_a_refused_key_ends_the_run_on_one_line_with_status_2_and_leaves_no_batch(bench, llm_server, cli_run):
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, *BATCH, key="wrong"))
    assert r.exit_code == 2
    assert r.output.strip().splitlines()[-1] == ("Error: Anthropic batches: creating the batch refused "
                                                  "(401 authentication_error): invalid x-api-key")
    assert "Traceback" not in r.output and ledger(bench) == [] and not llm_server.anthropic_batches
    r = cli_run(*judge_args(bench, llm_server, *BATCH))  # the right key: submitted as if nothing happened
    assert r.exit_code == 0 and "submitted: 2 requests" in r.output, r.output


def test_samples_are_seeded_in_the_cache_key_but_no_seed_is_sent_to_anthropic(bench, llm_server, cli_run, tmp_path):
    llm_server.script(grader)
    live = live_copy(bench, tmp_path)
    r = cli_run(*judge_args(live, llm_server, "--samples", "3"))  # live: three calls per document
    assert r.exit_code == 0 and "judged 6, failed 0" in r.output, r.output
    assert live_calls(llm_server) == 18 and not any("seed" in b for b in llm_server.anthropic_bodies)
    assert cli_run(*judge_args(bench, llm_server, "--samples", "3", "--provider-batch")).exit_code == 0
    r = cli_run(*judge_args(bench, llm_server, "--samples", "3", "--provider-batch"))
    assert r.exit_code == 0 and "judged 6, failed 0" in r.output, r.output
    params = batch_params(llm_server)
    assert len(params) == 18 and not any("seed" in p for p in params)
    assert sorted((q, d, g) for q, d, g, s, _ in rows(bench)) == sorted((q, d, g) for q, d, g, s, _ in rows(live))


def test_a_missing_key_is_refused_before_anything_is_sent(bench, llm_server, cli_run, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    r = cli_run(*[a for a in judge_args(bench, llm_server, *BATCH) if a not in ("--api-key", "test")])
    assert r.exit_code == 2 and "need an API key: --api-key or ANTHROPIC_API_KEY" in r.output, r.output
    assert not llm_server.anthropic_batches and ledger(bench) == []
