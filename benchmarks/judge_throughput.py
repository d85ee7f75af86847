"""LLM judging throughput against a loopback model server that takes 200 ms per call.

For concurrency 1, 8, 16, 32 and batch 1 and 5, judges a fresh workspace's pool with
`trecbench.judging.llm.judge` (the code `trecbench judge llm` runs: prompt, litellm call, parse,
SQLite write per judgment) and prints calls and judgments per second, and the share of the ideal
rate (concurrency / latency calls per second). Target: >= 80% of ideal at concurrency 16.

    python benchmarks/judge_throughput.py [--latency 0.2] [--calls 160]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

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


def serve(latency: float) -> None:
    """A minimal asyncio OpenAI-compatible server answering every chat request after exactly `latency` s.

    Runs in its own process (so it never competes with the client for the GIL), keeps connections
    alive and answers concurrently: what a real model server looks like to the client.
    """

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
                body = json.loads(await reader.readexactly(length))
                user = body["messages"][-1]["content"]
                labels = re.findall(r"\[P(\d+)\]", user)
                text = json.dumps([{"passage": f"P{x}", "grade": 1, "reason": "r"} for x in labels])
                await asyncio.sleep(latency)
                payload = json.dumps({
                    "id": "cmpl", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
                             b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
        port = server.sockets[0].getsockname()[1]
        print(f"http://127.0.0.1:{port}/v1", flush=True)
        await server.serve_forever()

    asyncio.run(main())


def bare(url: str, concurrency: int, calls: int) -> float:
    """Calls per second a bare async HTTP client (httpx, no parsing, no storage) gets from the same server."""
    import httpx

    body = {"model": "bench", "messages": [{"role": "user", "content": "[P1] passage"}]}

    async def run() -> float:
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency)) as client:
            queue = asyncio.Queue()
            for _ in range(calls):
                queue.put_nowait(1)

            async def worker():
                while not queue.empty():
                    queue.get_nowait()
                    (await client.post(f"{url}/chat/completions", json=body)).raise_for_status()

            start = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return calls / (time.perf_counter() - start)

    return asyncio.run(run())


def measure(server, latency: float, concurrency: int, batch: int, calls: int) -> tuple[float, float]:
    from trecbench.llm import LLM, ModelConfig
    from trecbench.judging.llm import candidates, judge, model_judge, plan_tasks
    from trecbench.judging.prompts import load_prompt

    with tempfile.TemporaryDirectory() as tmp:
        ws = make_bench(Path(tmp), docs=calls * batch, topics=8)
        prompt = load_prompt(None)
        identity = model_judge("openai/bench", prompt, batch=batch, samples=1, params={"temperature": 0})
        tasks, _ = plan_tasks(candidates(ws), set(), batch)
        config = ModelConfig("openai/bench", api_base=server.base_url, api_key="x", concurrency=concurrency)
        client = LLM(config, cache=ws.path / "bench.sqlite")

        async def run():
            try:
                return await judge(ws, client, prompt, tasks, identity, corpus=ws.corpus())
            finally:
                await client.aclose()

        start = time.perf_counter()
        report = asyncio.run(run())
        wall = time.perf_counter() - start
        assert report.judged == calls * batch and not report.failed, report
    return len(tasks) / wall, report.judged / wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--calls", type=int, default=160, help="model calls per measurement")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.latency)
        return
    from trecbench.llm._litellm import load

    load()
    # the server runs in its own process, as a real model server would
    proc = subprocess.Popen([sys.executable, __file__, "--serve", "--latency", str(args.latency)],
                            stdout=subprocess.PIPE, text=True)
    try:
        server = types.SimpleNamespace(base_url=proc.stdout.readline().strip())
        measure(server, args.latency, 8, 1, 16)  # warm up: imports, first connections
        print(f"{'concurrency':>11} {'batch':>5} {'calls/s':>8} {'judgments/s':>12} {'of ideal':>9} "
              f"{'bare client':>12} {'of bare':>8}")
        for batch in (1, 5):
            for concurrency in (1, 8, 16, 32):
                calls = max(args.calls, concurrency * 4) if concurrency > 1 else 20
                cps, jps = measure(server, args.latency, concurrency, batch, calls)
                raw = bare(server.base_url, concurrency, calls)
                ideal = concurrency / args.latency
                print(f"{concurrency:>11} {batch:>5} {cps:>8.1f} {jps:>12.1f} {cps / ideal:>8.0%} {raw:>12.1f} "
                      f"{cps / raw:>7.0%}", flush=True)
        print("ideal = concurrency / latency; bare client = plain httpx against the same server (what this "
              "machine's loopback and timers allow)")
    finally:
        proc.kill()


if __name__ == "__main__":
    main()
