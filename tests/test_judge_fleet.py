"""`judge llm` over several `--api-base` deployments: when one dies mid-run its calls move to the others."""
from __future__ import annotations

import json
import re
import sqlite3
import threading

import pandas as pd
from llm_server import LLMServer, hang

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
