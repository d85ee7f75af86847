"""`trecbench judge support --provider-batch` against the loopback server's files + batches endpoints: the pairs
are submitted once, collected on a later run and graded as live replies (the same grades), a request that fails
in a batch is recorded as a failure and goes into the next batch."""
from __future__ import annotations

import pytest
from llm_server import status
from test_judge_support import MODEL, make_bench, request_pair, scripted, support_args, support_rows


@pytest.fixture
def bench(tmp_path, cli_run):
    return make_bench(tmp_path, cli_run)


def live_chat_calls(server) -> int:
    return sum(1 for p in server.paths if p.rstrip("/").endswith("chat/completions"))


def test_the_pairs_are_batched_once_collected_later_and_graded_as_live_replies(bench, llm_server, cli_run):
    ws, files = bench
    llm_server.script(scripted(MODEL))
    llm_server.hold_batches = True
    r = cli_run(*support_args(ws, files, llm_server, "--provider-batch"))
    assert r.exit_code == 0, r.output
    assert "submitted: 8 requests" in r.output and "8 pairs wait for a batch" in r.output
    assert len(llm_server.batches) == 1 and live_chat_calls(llm_server) == 0 and support_rows(ws) == []
    r = cli_run(*support_args(ws, files, llm_server, "--provider-batch"))  # still running: nothing new
    assert r.exit_code == 0 and "is in_progress (0 of 8 done)" in r.output and len(llm_server.batches) == 1
    llm_server.hold_batches = False
    r = cli_run(*support_args(ws, files, llm_server, "--collect"))
    assert r.exit_code == 0, r.output
    assert "8 replies read" in r.output and "judged 8, failed 0" in r.output
    assert live_chat_calls(llm_server) == 0 and len(llm_server.batches) == 1
    got = {(run, n, d): g for run, n, d, g, status_, _, _ in support_rows(ws) if status_ == "ok"}
    assert got == MODEL  # what live judging records (test_every_cited_pair_is_graded_once_...)
    r = cli_run(*support_args(ws, files, llm_server, "--provider-batch"))
    assert r.exit_code == 0 and "no provider batch to collect or submit" in r.output
    assert "skipped 8 already judged" in r.output


def test_a_request_that_failed_in_a_batch_is_a_failure_then_goes_into_the_next_batch(bench, llm_server, cli_run):
    ws, files = bench
    failed_once: set = set()

    def answer(body):
        pair = request_pair(body)
        if pair == ("B", 0, "d1") and not failed_once:
            failed_once.add(pair)
            return status(500)
        return scripted(MODEL)(body)

    llm_server.script(answer)
    assert cli_run(*support_args(ws, files[1:2], llm_server, "--provider-batch")).exit_code == 0
    r = cli_run(*support_args(ws, files[1:2], llm_server, "--provider-batch"))
    assert r.exit_code == 1, r.output
    assert "batch request failed (status 500)" in r.output and "judged 1, failed 1" in r.output
    assert [row[:5] for row in support_rows(ws)] == [("B", 0, "d1", None, "failed"), ("B", 1, "d4", "partial", "ok")]
    assert "submitted" not in r.output and live_chat_calls(llm_server) == 0
    r = cli_run(*support_args(ws, files[1:2], llm_server, "--provider-batch"))  # asked again, in a new batch
    assert r.exit_code == 0 and "submitted: 1 requests" in r.output, r.output
    r = cli_run(*support_args(ws, files[1:2], llm_server, "--collect"))
    assert r.exit_code == 0 and support_rows(ws)[-1][:5] == ("B", 0, "d1", "full", "ok")
