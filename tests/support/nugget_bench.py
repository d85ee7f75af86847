"""The nugget tests' workspace: a JSONL corpus, TSV topics and imported judgments, and a way to change a
document of its corpus."""
from __future__ import annotations

import json
from pathlib import Path

from trecbench.nuggets.store import NuggetStore
from trecbench.store import Judge, Judgment, Workspace

DOCS = {
    "d1": "Rollbacks of the payments API must start within 15 minutes of a failed release. No approval is needed "
          "for a payments API rollback. The on-call engineer announces the rollback in the incident channel.",
    "d2": "Release policy. A failed release of the payments API is rolled back quickly. The cafeteria menu "
          "changes every Monday.",
    "d3": "Rollback rules for the dashboard differ: the product owner approves dashboard rollbacks. Rollbacks of "
          "the payments API must start within 15 minutes after a failed release.",
    "d4": "Production access during an incident is approved by the incident commander for 4 hours.",
    "d5": "Office plants are watered on Fridays.",
    "d6": "Break-glass access expires after 4 hours and is reviewed the next day.",
}

TOPICS = {"t1": "How fast must a bad payments API release be rolled back?",
          "t2": "Who approves emergency production access?"}

GRADES = {("t1", "d1"): 3, ("t1", "d2"): 2, ("t1", "d3"): 1, ("t1", "d5"): 0,
          ("t2", "d4"): 3, ("t2", "d6"): 2, ("t2", "d5"): 0}

def make_bench(tmp_path: Path, docs: dict = DOCS, topics: dict = TOPICS, grades: dict = GRADES) -> Path:
    """A workspace with a JSONL corpus, TSV topics and imported judgments."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "contents": v}) + "\n" for k, v in docs.items()))
    topics_file = tmp_path / "topics.tsv"
    topics_file.write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    ws = Workspace.init(tmp_path / "bench", corpus=str(corpus), topics=str(topics_file))
    nist = Judge("import", "nist")
    ws.record_many([Judgment(q, d, g, nist) for (q, d), g in grades.items()])
    ws.close()
    return tmp_path / "bench"

def rewrite_doc(bench: Path, docid: str, text: str | None) -> None:
    """Change (or, with None, remove) a document of the bench's corpus."""
    corpus = bench.parent / "corpus.jsonl"
    lines = [json.loads(x) for x in corpus.read_text().splitlines()]
    lines = [({**r, "contents": text} if r["id"] == docid else r) for r in lines if r["id"] != docid or text]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in lines))


MODEL = "openai/gpt-4o-mini"  # the drafting tests' model (served by tests/support/llm_server.py)


def draft_args(bench, server, *extra):
    return ["nuggets", "draft", "-w", bench, "--model", MODEL, "--api-base", server.base_url, "--api-key", "test",
            "--quiet", *extra]


def labels(*values) -> str:
    return json.dumps([{"nugget": f"N{i}", "importance": v} for i, v in enumerate(values, 1)])


def stored(bench, qid):
    return NuggetStore(Workspace(bench)).topic(qid)
