"""LLM judging throughput against a loopback model server that takes 200 ms per call.

For concurrency 1, 8, 16, 32 and batch 1 and 5, judges a fresh workspace's pool with
`trecbench.qrels.judges.llm.judge` (the code `trecbench judge llm` runs: prompt, litellm call, parse,
SQLite write per judgment) and prints calls and judgments per second, and the share of the ideal
rate (concurrency / latency calls per second). Target: >= 80% of ideal at concurrency 16.

    python benchmarks/judge_throughput.py [--latency 0.2] [--calls 160]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def make_bench(folder: Path, docs: int, topics: int):
    import pandas as pd

    from trecbench.store import Workspace
    from trecbench.store.workspace import save_pool

    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"d{i}", "contents": f"passage {i} about release rule {i % 7}"}) + "\n"
                              for i in range(docs)))
    tfile = folder / "topics.tsv"
    tfile.write_text("".join(f"t{q}\twhat is release rule {q}?\n" for q in range(topics)))
    ws = Workspace.init(folder / "bench", corpus=str(corpus), topics=str(tfile))
    per = -(-docs // topics)  # ceiling: every document goes to one of the topics
    frame = pd.DataFrame({"query_id": [f"t{i // per}" for i in range(docs)], "doc_id": [f"d{i}" for i in range(docs)],
                          "priority": [i % per + 1 for i in range(docs)], "group": [None] * docs,
                          "representative": [True] * docs})
    save_pool(ws, "pool", "depth", {}, frame)
    return ws


def grader(latency: float):
    from llm_server import slow

    def answer(body):
        user = body["messages"][-1]["content"]
        labels = re.findall(r"\[P(\d+)\]", user)
        return slow(latency, json.dumps([{"passage": f"P{x}", "grade": 1, "reason": "r"} for x in labels]))

    return answer


def measure(server, latency: float, concurrency: int, batch: int, calls: int) -> tuple[float, float]:
    from trecbench.llm import LLM, ModelConfig
    from trecbench.qrels.judges.llm import candidates, judge, model_judge, plan_tasks
    from trecbench.qrels.judges.prompts import load_prompt

    with tempfile.TemporaryDirectory() as tmp:
        ws = make_bench(Path(tmp), docs=calls * batch, topics=8)
        prompt = load_prompt(None)
        identity = model_judge("openai/bench", prompt, batch=batch, samples=1, params={"temperature": 0})
        tasks, _ = plan_tasks(candidates(ws), set(), batch)
        config = ModelConfig("openai/bench", api_base=server.base_url, api_key="x", concurrency=concurrency)
        client = LLM(config, cache=ws.path / "bench.sqlite")
        start = time.perf_counter()
        report = asyncio.run(judge(ws, client, prompt, tasks, identity, corpus=ws.corpus()))
        wall = time.perf_counter() - start
        client.close()
        assert report.judged == calls * batch and not report.failed, report
    return len(tasks) / wall, report.judged / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--calls", type=int, default=160, help="model calls per measurement")
    args = ap.parse_args()
    from llm_server import LLMServer

    from trecbench.llm._litellm import load

    load()
    with LLMServer() as server:
        server.script(grader(args.latency))
        print(f"{'concurrency':>11} {'batch':>5} {'calls/s':>8} {'judgments/s':>12} {'of ideal':>9}")
        for batch in (1, 5):
            for concurrency in (1, 8, 16, 32):
                calls = max(args.calls, concurrency * 4) if concurrency > 1 else 20
                cps, jps = measure(server, args.latency, concurrency, batch, calls)
                ideal = concurrency / args.latency
                print(f"{concurrency:>11} {batch:>5} {cps:>8.1f} {jps:>12.1f} {cps / ideal:>8.0%}")


if __name__ == "__main__":
    main()
