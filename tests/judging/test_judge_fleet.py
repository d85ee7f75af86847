"""`judge llm` over several `--api-base` deployments: when one dies mid-run its calls move to the others."""
from __future__ import annotations

import json
import re
import sqlite3
import threading
import time

import pandas as pd
import pytest
from llm_server import LLMServer, hang, status

from trecbench.llm.transport import Breaker

DOCS = 60


def grade(body: dict) -> str:
    user = body["messages"][-1]["content"]
    return json.dumps([{"passage": f"P{label}", "grade": int(n) % 4, "reason": "r"}
                       for label, n in re.findall(r"\[P(\d+)\] passage (\d+)", user)])


def make_bench(tmp_path, cli_run):
    from trecbench.store import Workspace
    from trecbench.store.workspace import save_pool

    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"id": f"d{i}", "contents": f"passage {i} text"}) + "\n"
                                                   for i in range(DOCS)))
    (tmp_path / "topics.tsv").write_text("t1\tone question\n")
    ws = tmp_path / "bench"
    assert cli_run("init", ws, "--corpus", tmp_path / "corpus.jsonl", "--topics", tmp_path / "topics.tsv").exit_code == 0
    frame = pd.DataFrame({"query_id": ["t1"] * DOCS, "doc_id": [f"d{i}" for i in range(DOCS)],
                          "priority": range(1, DOCS + 1), "group": [None] * DOCS, "representative": [True] * DOCS})
    save_pool(Workspace(ws), "p", "depth", {"depth": DOCS}, frame)
    return ws


def judge(ws, cli_run, servers, *options):
    args = ["judge", "llm", "-w", ws, "--model", "openai/judge", "--api-key", "test", "--quiet", *options]
    for s in servers:
        args += ["--api-base", s.base_url]
    r = cli_run(*args)
    assert r.exit_code == 0, r.output
    assert f"judged {DOCS}, failed 0" in r.stdout
    with sqlite3.connect(ws / "bench.sqlite") as conn:
        rows = conn.execute("SELECT docid, grade, status FROM judgments").fetchall()
        paid = conn.execute("SELECT COUNT(*) FROM llm_calls WHERE ok = 1 AND cached = 0").fetchone()[0]
        attempts = conn.execute("SELECT SUM(attempts) FROM llm_calls").fetchone()[0]
    assert sorted(d for d, _, _ in rows) == sorted(f"d{i}" for i in range(DOCS))
    assert all(s == "ok" and g == int(d[1:]) % 4 for d, g, s in rows)
    assert paid == DOCS  # each judgment paid once
    return attempts


def counting(answered: list, i: int, lock: threading.Lock, latency: float = 0.0):
    def handler(body):
        time.sleep(latency)
        with lock:
            answered[i] += 1
        return grade(body)
    return handler


def test_a_deployment_that_hangs_leaves_the_rotation_at_its_first_timeout(tmp_path, cli_run, monkeypatch):
    monkeypatch.setattr(Breaker, "BACKOFF", 600.0)  # no probe during the run: what reaches it is what was sent before
    live, hung = LLMServer(), LLMServer()
    answered, lock = [0], threading.Lock()
    live.script(counting(answered, 0, lock, latency=0.08))
    hung.script(lambda body: hang(30))  # takes the request and never answers
    ws = make_bench(tmp_path, cli_run)
    try:
        attempts = judge(ws, cli_run, [live, hung], "--concurrency", "4", "--timeout", "0.5")
    finally:
        live.close()
        hung.close()
    # the two calls it held (its share of the first four) time out and are asked again on the live one at
    # once; nothing more is sent to it (before, each timeout freed it to take the next calls)
    assert len(hung.requests) == 2
    assert answered[0] == DOCS and attempts == DOCS + 2


def test_a_deployment_answering_5xx_leaves_after_three_in_a_row(tmp_path, cli_run, monkeypatch):
    monkeypatch.setattr(Breaker, "BACKOFF", 600.0)
    live, failing = LLMServer(), LLMServer()
    answered, lock = [0], threading.Lock()
    live.script(counting(answered, 0, lock, latency=0.02))
    failing.script(lambda body: status(503))
    ws = make_bench(tmp_path, cli_run)
    try:
        attempts = judge(ws, cli_run, [live, failing], "--concurrency", "4")
    finally:
        live.close()
        failing.close()
    # three 503s in a row take it out; calls already sent to it when the third came back may add a few
    assert 3 <= len(failing.requests) <= 3 + 3
    assert answered[0] == DOCS and attempts == DOCS + len(failing.requests)


def test_a_deployment_that_comes_back_takes_calls_again(tmp_path, cli_run, monkeypatch):
    monkeypatch.setattr(Breaker, "BACKOFF", 0.1)  # probes 0.1, 0.2, 0.4 ... s after it went away
    live, dying = LLMServer(), LLMServer()
    answered, lock = [0, 0, 0], threading.Lock()
    live.script(counting(answered, 0, lock, latency=0.1))
    back: list[LLMServer] = []

    def comes_back():
        server = LLMServer(dying.port)
        server.script(counting(answered, 2, lock))
        back.append(server)

    def dies(body):
        with lock:
            answered[1] += 1
            if answered[1] == 3:  # its third request: it goes away, and is back 0.3 s later on the same port
                threading.Thread(target=dying.close, daemon=True).start()
                threading.Timer(0.3, comes_back).start()
        return grade(body) if answered[1] < 3 else hang(30)

    dying.script(dies)
    ws = make_bench(tmp_path, cli_run)
    try:
        attempts = judge(ws, cli_run, [live, dying], "--concurrency", "2")
    finally:
        for s in [live, dying, *back]:
            s.close()
    assert back and answered[2] >= 1  # back in the rotation (it used to stay out for 30 s)
    assert answered[0] + answered[2] + 2 == DOCS  # two answered before it died, the rest once each
    assert attempts <= DOCS + 1 + 4  # the call it held when it died, and the failed probes


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_breaker_probes_after_a_doubling_back_off_and_one_probe_at_a_time():
    clock = Clock()
    b = Breaker(3, clock)
    i, probe = b.pick()
    assert (i, probe) == (0, False)
    assert b.failed(0, probe, connection=True)  # refused: out at once
    assert b.is_out(0) and b.another_up(0)
    assert {b.pick()[0] for _ in range(6)} == {1, 2}  # the others take the calls
    b.in_flight = [0, 0, 0]
    clock.now += Breaker.BACKOFF
    assert b.pick() == (0, True)  # back-off over: one call probes it
    assert all(b.pick()[0] != 0 for _ in range(4))  # the others meanwhile
    assert b.failed(0, True, connection=True)  # the probe failed: out again, for twice as long
    clock.now += Breaker.BACKOFF * 1.5
    assert b.is_out(0)
    clock.now += Breaker.BACKOFF * 0.5
    assert b.pick() == (0, True)
    b.succeeded(0, True)
    assert not b.is_out(0)
    b.in_flight = [0, 5, 5]
    assert b.pick() == (0, False)  # in the rotation again, the fewest in flight


def test_breaker_5xx_in_a_row_late_failures_and_a_fleet_all_out():
    clock = Clock()
    b = Breaker(2, clock)
    for _ in range(2):
        b.in_flight[0] += 1
        assert not b.failed(0, False, connection=False)  # one or two 500s may be the request's fault
    b.in_flight[0] += 1
    b.succeeded(0, False)  # an answer in between: the count starts again
    for _ in range(2):
        b.in_flight[0] += 1
        assert not b.failed(0, False, connection=False)
    b.in_flight[0] += 2
    assert b.failed(0, False, connection=False)  # the third in a row
    clock.now += Breaker.BACKOFF * 0.9
    assert b.failed(0, False, connection=True)  # a call sent before it left: its absence is not lengthened
    clock.now += Breaker.BACKOFF * 0.1
    assert not b.is_out(0)
    b.in_flight = [0, 0]
    b.in_flight[1] += 1
    assert b.failed(1, False, connection=True)
    assert b.pick() == (0, True)
    assert not b.another_up(0)  # 1 is out, 0 is probing
    assert b.pick() == (0, False)  # all out: the one due back first still takes calls (the client's back-off paces them)
    clock.now += 5 * Breaker.BACKOFF
    b.failed(0, True, connection=True)  # its probe failed: now 1 is due first
    assert b.pick() == (1, True)


@pytest.mark.parametrize("n", [1, 2])
def test_breaker_in_flight_returns_to_zero(n):
    b = Breaker(n, Clock())
    picks = [b.pick() for _ in range(5)]
    for k, (i, probe) in enumerate(picks):
        if k % 3 == 0:
            b.succeeded(i, probe)
        elif k % 3 == 1:
            b.released(i, probe)
        else:
            b.failed(i, probe, connection=k == 2)
    assert b.in_flight == [0] * n


def test_a_deployment_that_dies_mid_run_loses_nothing_and_nothing_is_paid_twice(tmp_path, cli_run):
    servers = [LLMServer() for _ in range(3)]
    answered = [0, 0, 0]
    lock = threading.Lock()

    def answering(i):
        def handler(body):
            with lock:
                answered[i] += 1
            return grade(body)
        return handler

    dying = servers[1]
    seen = []

    def dies(body):
        with lock:
            seen.append(1)
            if len(seen) <= 4:
                answered[1] += 1
                return grade(body)
        if len(seen) == 6:  # its sixth request: the server goes away, with the requests it holds
            threading.Thread(target=dying.close, daemon=True).start()
        return hang(30)

    servers[0].script(answering(0))
    dying.script(dies)
    servers[2].script(answering(2))
    ws = make_bench(tmp_path, cli_run)
    try:
        args = ["judge", "llm", "-w", ws, "--model", "openai/judge", "--api-key", "test", "--quiet",
                "--concurrency", "6", "--timeout", "20", "--max-retries", "4"]
        for s in servers:
            args += ["--api-base", s.base_url]
        r = cli_run(*args)
    finally:
        for s in servers:
            s.close()
    assert r.exit_code == 0, r.output
    assert "judged 60, failed 0" in r.stdout
    with sqlite3.connect(ws / "bench.sqlite") as conn:
        rows = conn.execute("SELECT docid, grade, status FROM judgments").fetchall()
        paid = conn.execute("SELECT COUNT(*) FROM llm_calls WHERE ok = 1 AND cached = 0").fetchone()[0]
        attempts = conn.execute("SELECT SUM(attempts) FROM llm_calls").fetchone()[0]
    assert len(rows) == 60 and {s for _, _, s in rows} == {"ok"}
    assert {d for d, _, _ in rows} == {f"d{i}" for i in range(DOCS)}
    assert all(g == int(d[1:]) % 4 for d, g, _ in rows)
    assert answered[1] == 4 and len(seen) >= 6  # the dying deployment took calls before it died
    assert sum(answered) == 60 == paid  # every call answered once: none lost, none paid twice
    # the calls it held when it died, and those sent before its first refusal was seen, are asked again
    # elsewhere; a refusing deployment is not chosen again while others are up
    assert attempts <= 60 + 2 + 6, attempts
