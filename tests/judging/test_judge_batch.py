"""`trecbench judge llm --provider-batch` against the loopback server's files + batches endpoints: submit,
wait, collect, replies applied as live ones, batch prices (for OpenAI and Anthropic), unreadable replies asked
live, failed requests in the next batch, a kill mid-submit, a refused key."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable

import pytest
from llm_server import LLMServer, garbled, status
from judge_bench import grader, judge_args, rows


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


def live_copy(bench, tmp_path):
    """A copy of the workspace without its judgments and cached replies, to judge the same pool live."""
    import shutil

    live = tmp_path / "live"
    shutil.copytree(bench, live)
    with sqlite3.connect(live / "bench.sqlite") as conn:
        conn.execute("DELETE FROM judgments")
        conn.execute("DELETE FROM llm_cache")
    return live


@dataclass(frozen=True)
class Provider:
    """How a test drives one provider's batches on the loopback server."""

    args: Callable[..., list]  # judge_args(bench, server, *extra)
    batches: Callable[[LLMServer], dict]  # the batches the server holds
    live_calls: Callable[[LLMServer], int]  # live chat requests the server answered
    prices: tuple[float, float]  # litellm's batch prices (input, output) a token


def anthropic_args(bench, server, *extra, key: str = "test") -> list:
    return ["judge", "llm", "-w", bench, "--model", "anthropic/claude-haiku-4-5", "--api-base", server.anthropic_url,
            "--api-key", key, "--quiet", *extra]


def anthropic_live_calls(server) -> int:
    return sum(1 for p in server.paths if p.rstrip("/") == "/v1/messages")


PROVIDERS = {
    "openai": Provider(judge_args, lambda s: s.batches, live_chat_calls, (7.5e-08, 3e-07)),  # gpt-4o-mini
    "anthropic": Provider(anthropic_args, lambda s: s.anthropic_batches, anthropic_live_calls,
                          (5e-07, 2.5e-06)),  # claude-haiku-4-5
}


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.filterwarnings("ignore:.*`ReadOnly` qualifier:UserWarning")  # litellm's types, as trecbench's load() does
def test_a_batch_is_submitted_once_collected_on_a_rerun_and_judged_as_live_replies_at_half_price(
        name, bench, llm_server, cli_run, tmp_path):
    p = PROVIDERS[name]
    llm_server.script(grader)
    llm_server.hold_batches = True
    r = cli_run(*p.args(bench, llm_server, *BATCH))
    assert r.exit_code == 0, r.output
    assert "submitted: 2 requests" in r.output and "6 documents wait for a batch" in r.output
    assert len(p.batches(llm_server)) == 1 and p.live_calls(llm_server) == 0 and rows(bench) == []

    r = cli_run(*p.args(bench, llm_server, *BATCH))  # still running: nothing new is submitted
    assert r.exit_code == 0, r.output
    assert "is in_progress (0 of 2 done)" in r.output and len(p.batches(llm_server)) == 1 and rows(bench) == []

    llm_server.hold_batches = False
    r = cli_run(*p.args(bench, llm_server, "--batch", "3", "--collect"))
    assert r.exit_code == 0, r.output
    assert "judged 6, failed 0" in r.output and "2 replies read" in r.output
    assert len(p.batches(llm_server)) == 1 and p.live_calls(llm_server) == 0
    batched = judgments(bench)

    # The same pool judged live: the same grades, reasons and raw replies.
    live = live_copy(bench, tmp_path)
    r = cli_run(*p.args(live, llm_server, "--batch", "3"))
    assert r.exit_code == 0, r.output
    assert p.live_calls(llm_server) == 2
    assert judgments(live) == batched and len(batched) == 6

    # Priced at litellm's batch prices for the model: half the live price.
    batch_calls = calls(bench)
    assert len(batch_calls) == 2
    for ok_, prompt, completion, cost, _ in batch_calls:
        assert ok_ == 1 and prompt > 0 and cost == pytest.approx(prompt * p.prices[0] + completion * p.prices[1])
    live_calls = calls(live)[-2:]
    assert sum(c[3] for c in live_calls) == pytest.approx(2 * sum(c[3] for c in batch_calls))

    r = cli_run(*p.args(bench, llm_server, *BATCH))  # all judged: nothing to submit
    assert r.exit_code == 0 and "no provider batch to collect or submit" in r.output
    assert len(p.batches(llm_server)) == 1


def test_unreadable_replies_are_asked_live_and_failed_requests_fail_then_go_into_the_next_batch(bench, llm_server,
                                                                                                cli_run):
    # In the batch t1's reply cannot be read and t2's request fails; t1 is re-asked live and garbled again (three
    # tries, then failures); t2 is recorded as failed, and the next run asks it again in a new batch.
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
    assert got[("t1", "d1")] == (None, "failed") and got[("t2", "d4")] == (None, "failed")
    assert "unreadable reply after 4 tries" in r.output  # the batch reply, then three live asks
    assert "batch request failed (status 500)" in r.output
    assert live_chat_calls(llm_server) == 3  # t1 re-asked three times; t2 not asked live
    assert len(llm_server.batches) == 1 and "submitted" not in r.output

    r = cli_run(*judge_args(bench, llm_server, *BATCH))  # t2 again, in a new batch (t1's failure is live's)
    assert "batch batch_" in r.output and "submitted: 1 requests" in r.output, r.output
    assert len(llm_server.batches) == 2 and live_chat_calls(llm_server) == 3 + 3
    r = cli_run(*judge_args(bench, llm_server, "--batch", "3", "--collect"))
    got = {(q, d): (g, s) for q, d, g, s, *_ in judgments(bench)}
    assert got[("t2", "d4")] == (3, "ok") and "1 replies read" in r.output, r.output
    assert len(llm_server.batches) == 2


def kill_after_creating(server, args: list, created: Callable[[], bool]) -> None:
    """Run `trecbench ARGS` in a process of its own and kill it once the server created its batch (the server holds
    back its answer, so the id never reaches the workspace). The test then runs the same command again to the end
    (in this process: what matters is the workspace the killed one left)."""
    server.batch_delay = 60
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cmd = [sys.executable, "-m", "trecbench.cli", *map(str, args)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 240
    while time.time() < deadline and not created():
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert created(), "the batch was never created"
    server.batch_delay = 0


def test_a_kill_between_creating_the_batch_and_saving_its_id_submits_nothing_twice(bench, llm_server, cli_run):
    llm_server.script(grader)
    kill_after_creating(llm_server, judge_args(bench, llm_server, *BATCH), lambda: bool(llm_server.batches))
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0, r.output
    assert "found again" in r.output and "judged 6, failed 0" in r.output
    assert len(llm_server.batches) == 1 and live_chat_calls(llm_server) == 0
    assert sorted((q, d) for q, d, g, s, _ in rows(bench) if s == "ok") == sorted(
        (q, d) for q, d, *_ in judgments(bench))


def test_a_refused_key_ends_the_run_on_one_line_with_status_2_and_leaves_no_batch(bench, llm_server, cli_run):
    llm_server.script(grader)
    llm_server.batch_key = "test"
    r = cli_run(*[a if a != "test" else "wrong" for a in judge_args(bench, llm_server, *BATCH)])
    assert r.exit_code == 2
    assert r.output.strip().splitlines()[-1] == ("Error: OpenAI batches: uploading the batch file refused (401): "
                                                  "Incorrect API key provided.")
    assert "Traceback" not in r.output and not llm_server.batches
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM llm_batches").fetchone() == (0,)
    r = cli_run(*judge_args(bench, llm_server, *BATCH))
    assert r.exit_code == 0 and "submitted: 2 requests" in r.output, r.output


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


def test_requests_are_cut_into_batches_at_the_providers_request_and_size_limits():
    from trecbench.llm.batch import BatchRequest, split_batch
    from trecbench.llm.cache import canonical_json

    reqs = [BatchRequest(f"k{i}", "m", [{"role": "user", "content": "x" * 100}], {}) for i in range(5)]
    size = len(canonical_json(reqs[0].request()).encode()) + 256  # each request, with the provider's framing
    assert [len(p) for p in split_batch(reqs, 2, 10**9)] == [2, 2, 1]
    assert [len(p) for p in split_batch(reqs, 100, int(3 * size / 0.9) + 1)] == [3, 2]  # three fit in 9/10
    assert [len(p) for p in split_batch(reqs, 100, int(3 * size / 0.9) - 1)] == [2, 2, 1]
    assert [r.key for p in split_batch(reqs, 2, 10**9) for r in p] == [r.key for r in reqs]


def test_an_openai_batch_is_submitted_and_collected_without_importing_litellm(bench, llm_server):
    llm_server.script(grader)
    code = ("import sys\nfrom trecbench.cli import cli\n"
            "try:\n    cli(sys.argv[1:])\nexcept SystemExit as e:\n    status = e.code\n"
            "print('LITELLM', 'litellm' in sys.modules, status)\n")
    args = [str(a) for a in judge_args(bench, llm_server, *BATCH)]
    for step in ("submitted", "collected"):
        p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
        assert "LITELLM False 0" in p.stdout and step in p.stdout, p.stdout + p.stderr
    assert len(llm_server.batches) == 1
