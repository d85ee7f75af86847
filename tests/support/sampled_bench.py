"""A workspace whose model judge was sampled three times per pair: one topic, four passages, three pooled runs
(A, B, C: each its own document above the shared `x`), people's grades of all four pairs, and a loopback model
whose grades per sample are SAMPLE_GRADES. What `judge validate`'s tau_AP, label stability and new-run bias
checks are tested on, and the report's validation block."""
from __future__ import annotations

import json
import re
from pathlib import Path

SAMPLE_GRADES = {"x": (1, 1, 0), "b1": (1, 2, 1), "a1": (0, 0, 0), "c1": (1, 1, 1)}  # by sample (seed 0, 1, 2)


def sampled_model(body: dict) -> str:
    """The loopback model's reply: each passage's grade of the request's sample (its seed)."""
    user = body["messages"][-1]["content"]
    seed = int(body.get("seed", 0))
    return json.dumps([{"passage": f"P{label}", "grade": SAMPLE_GRADES[doc][seed], "reason": "r"}
                       for label, doc in re.findall(r"\[P(\d+)\] passage (\S+)", user)])


def make_sampled_bench(tmp_path: Path, cli_run, llm_server):
    """The workspace (tmp_path/bench), its three run files, and the results of `pool` and of `judge llm
    --samples 3` (the callers check them)."""
    docs = ["a1", "b1", "c1", "x"]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"id": d, "contents": f"passage {d} text"}) + "\n"
                                                   for d in docs))
    (tmp_path / "topics.tsv").write_text("q1\tthe question\n")
    ws = tmp_path / "bench"
    assert cli_run("init", ws, "--corpus", tmp_path / "corpus.jsonl", "--topics", tmp_path / "topics.tsv").exit_code == 0
    runs = []
    for name, own in (("A", "a1"), ("B", "b1"), ("C", "c1")):
        path = tmp_path / f"{name}.txt"
        path.write_text(f"q1 Q0 {own} 1 2.0 {name}\nq1 Q0 x 2 1.0 {name}\n")
        runs.append(path)
    pooled = cli_run("pool", *runs, "--depth", "2", "-w", ws, "--name", "depth-2", "-o", tmp_path / "pool.tsv")
    (tmp_path / "people.txt").write_text("q1 0 x 1\nq1 0 a1 1\nq1 0 b1 0\nq1 0 c1 0\n")
    assert cli_run("qrels", "import", tmp_path / "people.txt", "-w", ws, "--judge", "alice",
                   "--kind", "human").exit_code == 0
    llm_server.script(sampled_model)
    judged = cli_run("judge", "llm", "-w", ws, "--pool", "depth-2", "--model", "openai/gpt-4o-mini", "--api-base",
                     llm_server.base_url, "--api-key", "test", "--quiet", "--samples", "3")
    return ws, runs, pooled, judged
