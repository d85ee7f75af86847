"""The judging tests' workspace: two topics, six documents, a depth pool of all six, and a model server
grader that grades them by keyword; the rows a run stored."""
from __future__ import annotations

import json
import re
import sqlite3

import pandas as pd

DOCS = {
    "d1": "Rollbacks of the payments API must start within 15 minutes of a failed release; no approval is needed.",
    "d2": "The cafeteria menu changes every Monday.",
    "d3": "Rollback rules for the dashboard differ: the product owner approves them.",
    "d4": "Production access during an incident is approved by the incident commander for 4 hours.",
    "d5": "Office plants are watered on Fridays.",
    "d6": "Break-glass access expires after 4 hours and is reviewed the next day.",
}

TOPICS = {"t1": "How fast must a bad API release be rolled back?", "t2": "Who approves emergency production access?"}

JUDGE = "openai/gpt-4o-mini:graded-0-3@" + __import__("trecbench.judging.prompts", fromlist=["x"]).load_prompt(
    None).sha256[:8]

POOL = [("t1", "d1"), ("t1", "d2"), ("t1", "d3"), ("t2", "d4"), ("t2", "d5"), ("t2", "d6")]

def grader(body: dict):
    """Grade each passage by a keyword, as a model might; answers in the JSON list the prompt asks for."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")  # the request, not a re-ask
    passages = re.findall(r"\[P(\d+)\] (.*)", user)
    out = []
    for label, text in passages:
        grade = 3 if ("within 15 minutes" in text or "incident commander" in text) else (
            1 if ("Rollback" in text or "Break-glass" in text) else 0)
        out.append({"passage": f"P{label}", "grade": grade, "reason": "keyword"})
    return json.dumps(out)

def make_judge_bench(tmp_path, cli_run):
    """A workspace with two topics, six documents and a depth pool of all six."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "contents": v}) + "\n" for k, v in DOCS.items()))
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join(f"{q}\t{t}\n" for q, t in TOPICS.items()))
    ws_path = tmp_path / "bench"
    assert cli_run("init", ws_path, "--corpus", corpus, "--topics", topics).exit_code == 0
    from trecbench.store import Workspace
    from trecbench.store.workspace import save_pool

    frame = pd.DataFrame({"query_id": [q for q, _ in POOL], "doc_id": [d for _, d in POOL],
                          "priority": [1, 2, 3, 1, 2, 3], "group": [None] * 6, "representative": [True] * 6})
    save_pool(Workspace(ws_path), "depth10", "depth", {"depth": 10}, frame)
    return ws_path

def judge_args(bench, server, *extra):
    return ["judge", "llm", "-w", bench, "--model", "openai/gpt-4o-mini", "--api-base", server.base_url,
            "--api-key", "test", "--quiet", *extra]

def rows(bench) -> list[tuple]:
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        return conn.execute("SELECT j.qid, j.docid, j.grade, j.status, g.name FROM judgments j "
                            "JOIN judges g ON g.id = j.judge_id ORDER BY j.id").fetchall()
