"""Two `judge llm` runs of one judge on one workspace at once share the work: a pair is leased before it is
asked about, so each pair is asked once and recorded once; a dead run's leases do not block the next run."""
from __future__ import annotations

from paths import ROOT

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

DOCS = 80
LIMIT = 60
CONCURRENCY = 4


def grade(body: dict) -> str:
    user = body["messages"][-1]["content"]
    return json.dumps([{"passage": f"P{label}", "grade": int(n) % 4, "reason": "r"}
                       for label, n in re.findall(r"\[P(\d+)\] passage (\d+)", user)])


def asked_about(body: dict) -> list[int]:
    return [int(n) for n in re.findall(r"\[P\d+\] passage (\d+)", body["messages"][-1]["content"])]


def make_bench(tmp_path, cli_run, *, pool: bool = True):
    """DOCS passages `passage N text` of one topic, pooled in the order d0, d1, ... (unless pool=False)."""
    from trecbench.store import Workspace
    from trecbench.store.workspace import save_pool

    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"id": f"d{i}", "contents": f"passage {i} text"}) + "\n"
                                                   for i in range(DOCS)))
    (tmp_path / "topics.tsv").write_text("t1\tone question\n")
    ws = tmp_path / "bench"
    assert cli_run("init", ws, "--corpus", tmp_path / "corpus.jsonl", "--topics", tmp_path / "topics.tsv").exit_code == 0
    if pool:
        frame = pd.DataFrame({"query_id": ["t1"] * DOCS, "doc_id": [f"d{i}" for i in range(DOCS)],
                              "priority": range(1, DOCS + 1), "group": [None] * DOCS, "representative": [True] * DOCS})
        save_pool(Workspace(ws), "p", "depth", {"depth": DOCS}, frame)
    return ws


def judge_command(ws, server, *options) -> list[str]:
    return [sys.executable, "-m", "trecbench.cli", "judge", "llm", "-w", str(ws), "--model", "openai/judge",
            "--api-key", "test", "--api-base", server.base_url, "--quiet", "--concurrency", str(CONCURRENCY), *options]


def stored(ws) -> list[tuple[str, str, int | None, str]]:
    with sqlite3.connect(ws / "bench.sqlite") as conn:
        return conn.execute("SELECT qid, docid, grade, status FROM judgments ORDER BY id").fetchall()


def gate_until_both_ask(llm_server, in_flight: int, *, wait: float = 90, workspace: Path | None = None,
                        settle: float = 1.5) -> threading.Event:
    """Hold every reply until `in_flight` requests wait at once (both runs are asking) or `wait` seconds have
    passed, then answer all. With `workspace`, also answer once two processes have held its database open for
    `settle` seconds (both runs are past their start and asking, or waiting for the other's reply). Returns the
    event that tells whether the two runs did meet there."""
    opened, met = threading.Event(), threading.Event()

    def handler(body):
        opened.wait(120)
        return grade(body)

    def watch():
        deadline = time.monotonic() + wait
        both_since = None
        while llm_server.in_flight < in_flight and time.monotonic() < deadline:
            if workspace is not None:
                if both_since is None and processes_holding(workspace / "bench.sqlite") >= 2:
                    both_since = time.monotonic()
                if both_since is not None and time.monotonic() - both_since >= settle:
                    break
            time.sleep(0.01 if workspace is None else 0.05)
        if llm_server.in_flight >= in_flight:
            met.set()
        opened.set()

    llm_server.script(handler)
    threading.Thread(target=watch, daemon=True).start()
    return met


def processes_holding(path: Path) -> int:
    """How many children of this process have `path` open (read from /proc)."""
    target, me, count = str(path.resolve()), str(os.getpid()), 0
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit() or proc.joinpath("stat").read_text().rpartition(")")[2].split()[1] != me:
                continue
            count += any(os.readlink(fd) == target for fd in proc.joinpath("fd").iterdir())
        except OSError:  # the process ended meanwhile
            continue
    return count


def run_both(commands: list[list[str]]) -> list[subprocess.CompletedProcess]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    procs = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in commands]
    done = []
    for proc, command in zip(procs, commands):
        out, err = proc.communicate(timeout=240)
        done.append(subprocess.CompletedProcess(command, proc.returncode, out, err))
    return done


def judged_count(result: subprocess.CompletedProcess) -> int:
    match = re.search(r"judged (\d+), failed 0,", result.stdout)
    assert match, result.stdout + result.stderr
    return int(match.group(1))


def test_two_runs_at_once_ask_each_prompt_once_and_store_one_row_per_pair(tmp_path, cli_run, llm_server):
    ws = make_bench(tmp_path, cli_run)
    met = gate_until_both_ask(llm_server, 2 * CONCURRENCY)
    command = judge_command(ws, llm_server, "--limit", str(LIMIT))
    results = run_both([command, command])
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    assert met.is_set(), "the two runs never asked at the same time"
    rows = stored(ws)
    assert sorted(d for _, d, _, _ in rows) == sorted(f"d{i}" for i in range(LIMIT))  # one row per pair
    assert all(s == "ok" and g == int(d[1:]) % 4 for _, d, g, s in rows)
    asked = [n for body in llm_server.requests for n in asked_about(body)]
    assert sorted(asked) == list(range(LIMIT))  # one call per prompt
    assert sum(judged_count(r) for r in results) == LIMIT
    with sqlite3.connect(ws / "bench.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0  # both gave their leases back


def test_two_runs_at_once_share_batches(tmp_path, cli_run, llm_server):
    ws = make_bench(tmp_path, cli_run)
    met = gate_until_both_ask(llm_server, 2 * CONCURRENCY)
    command = judge_command(ws, llm_server, "--limit", str(LIMIT), "--batch", "3")
    results = run_both([command, command])
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    assert met.is_set()
    assert sorted(d for _, d, _, _ in stored(ws)) == sorted(f"d{i}" for i in range(LIMIT))
    asked = [n for body in llm_server.requests for n in asked_about(body)]
    assert sorted(asked) == list(range(LIMIT))


def test_two_runs_of_an_adaptive_pool_at_once_ask_each_document_once(tmp_path, cli_run, llm_server):
    ws = make_bench(tmp_path, cli_run, pool=False)
    runs = []
    for name, order in [("up", range(DOCS)), ("down", reversed(range(DOCS)))]:
        runs.append(tmp_path / f"{name}.txt")
        runs[-1].write_text("".join(f"t1 Q0 d{i} {r} {DOCS - r} {name}\n" for r, i in enumerate(order, start=1)))
    made = cli_run("pool", *runs, "--depth", str(DOCS), "--strategy", "mtf", "--budget", "30", "-w", ws, "--name", "mtf")
    assert made.exit_code == 0, made.output
    # One topic, one document at a time: a run that shares waits for the other's reply and asks nothing
    # meanwhile, so two requests at once only come from runs that do not share. The first reply is held a
    # moment (far below the client's 60 s timeout): until both runs have had the workspace open for 1.5 s.
    gate_until_both_ask(llm_server, 2, wait=30, workspace=ws)
    command = judge_command(ws, llm_server)
    results = run_both([command, command])
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    assert sum(judged_count(r) for r in results) == 30
    docids = [d for _, d, _, _ in stored(ws)]
    assert len(docids) == len(set(docids)) == 30  # the budget, each document once
    asked = [n for body in llm_server.requests for n in asked_about(body)]
    assert sorted(asked) == sorted(int(d[1:]) for d in docids)


def test_a_dead_runs_leases_are_taken_over_and_a_live_runs_are_left_to_it(tmp_path, cli_run, llm_server):
    from trecbench.judging.llm import model_judge
    from trecbench.judging.prompts import load_prompt
    from trecbench.store import Workspace
    from trecbench.store.assessors import model_holder

    ws_path = make_bench(tmp_path, cli_run)
    judge = model_judge("openai/judge", load_prompt(None), batch=1, samples=1, params={"temperature": 0.0}).name
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    dead = subprocess.run([sys.executable, "-c", "import sys; from trecbench.store.assessors import model_holder; "
                           "print(model_holder(sys.argv[1]))", judge], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()  # a run whose process has ended (killed, say)
    alive = model_holder(judge)  # this process: a run still asking
    ws = Workspace(ws_path)
    now = time.time()
    for holder, docid, expires in [(dead, "d0", now + 3600), (alive, "d1", now + 3600), (alive, "d2", now - 1)]:
        assert ws.take_pairs(holder, "t1", [docid], since=0, expires_at=expires, at=now)[0].state == "taken"
    assert ws.live_leases("t1", now) == []  # the web app sees no model lease: people are never kept from a pair
    llm_server.script(grade)
    r = cli_run("judge", "llm", "-w", ws_path, "--model", "openai/judge", "--api-key", "test", "--api-base",
                llm_server.base_url, "--quiet", "--limit", "5")
    assert r.exit_code == 0, r.output
    assert sorted(d for _, d, _, _ in stored(ws_path)) == ["d0", "d2", "d3", "d4"]  # d1 is left to the live run
    assert sorted(n for body in llm_server.requests for n in asked_about(body)) == [0, 2, 3, 4]
    with sqlite3.connect(ws_path / "bench.sqlite") as conn:
        assert conn.execute("SELECT docid, assessor FROM leases").fetchall() == [("d1", alive)]
    assert ws.take_pairs(model_holder(judge), "t1", ["d0", "d1", "d5"], since=0, expires_at=now + 60, at=now) == [
        ("d0", "judged", 0), ("d1", "held", None), ("d5", "taken", None)]


@pytest.mark.parametrize("name", ["alice", "model-like:name@1"])
def test_a_persons_lease_is_not_a_model_runs(tmp_path, cli_run, name):
    from trecbench.store import Workspace
    from trecbench.store.assessors import model_holder

    ws = Workspace(make_bench(tmp_path, cli_run))
    now = time.time()
    with ws.transaction():
        ws.lease("t1", "d0", name, now + 600, at=now)
    assert ws.take_pairs(model_holder(name), "t1", ["d0"], since=0, expires_at=now + 60, at=now)[0].state == "taken"
    assert ws.live_leases("t1", now) == [("d0", name)]
