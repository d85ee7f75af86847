"""`judge llm` over 1-4 loopback deployments (`--api-base` repeated), and with one dying mid-run.

Each deployment is a loopback OpenAI-compatible server (tests/support/llm_server.py) that serves at most
`--slots` requests at a time, 200 ms each, like a GPU server with a fixed batch: one deployment's
capacity is slots / latency calls per second. The judging runs the real command (`trecbench judge llm`,
in this process) at concurrency 8 per deployment over a fresh workspace, and prints calls per second,
the share of the fleet's capacity, and the attempts the call log recorded. The last two rows take one of
three deployments down after it has answered a quarter of the calls: "dies" stops its server (it refuses
connections, those it held are cut), "hangs" keeps it listening but it never answers again (its calls
wait for `--timeout`).

    python benchmarks/fleet.py [--calls 400 --latency 0.2 --slots 4 --timeout 10]
"""
from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def make_bench(folder: Path, docs: int) -> Path:
    import pandas as pd
    from click.testing import CliRunner

    from trecbench.cli import cli
    from trecbench.store import Workspace
    from trecbench.store.workspace import save_pool

    (folder / "corpus.jsonl").write_text("".join(json.dumps({"id": f"d{i}", "contents": f"passage {i} text"}) + "\n"
                                                 for i in range(docs)))
    (folder / "topics.tsv").write_text("t1\tone question\n")
    ws = folder / "bench"
    CliRunner().invoke(cli, ["init", str(ws), "--corpus", str(folder / "corpus.jsonl"), "--topics",
                             str(folder / "topics.tsv")], catch_exceptions=False)
    frame = pd.DataFrame({"query_id": ["t1"] * docs, "doc_id": [f"d{i}" for i in range(docs)],
                          "priority": range(1, docs + 1), "group": [None] * docs, "representative": [True] * docs})
    save_pool(Workspace(ws), "p", "depth", {"depth": docs}, frame)
    return ws


def server(latency: float, slots: int, answered: list, die_after: int | None = None, how: str = "dies"):
    from llm_server import LLMServer, hang

    srv = LLMServer()
    gate = threading.Semaphore(slots)
    lock = threading.Lock()

    def handler(body):
        with lock:
            if die_after is not None and answered[0] >= die_after:
                if answered[0] == die_after and how == "dies":
                    answered[0] += 1  # once
                    threading.Thread(target=srv.close, daemon=True).start()
                return hang(600)
        with gate:
            time.sleep(latency)
        with lock:
            answered[0] += 1
        user = body["messages"][-1]["content"]
        return json.dumps([{"passage": f"P{label}", "grade": int(n) % 4, "reason": "r"}
                           for label, n in re.findall(r"\[P(\d+)\] passage (\d+)", user)])

    srv.script(handler)
    return srv


def measure(n: int, calls: int, latency: float, slots: int, kill: str = "", timeout: float = 10.0) -> dict:
    from click.testing import CliRunner

    from trecbench.cli import cli

    with tempfile.TemporaryDirectory() as tmp:
        ws = make_bench(Path(tmp), calls)
        counts = [[0] for _ in range(n)]
        servers = [server(latency, slots, counts[i], calls // 4 if kill and i == 1 else None, kill) for i in range(n)]
        args = ["judge", "llm", "-w", str(ws), "--model", "openai/judge", "--api-key", "x", "--quiet",
                "--concurrency", str(8 * n), "--timeout", str(timeout)]
        for s in servers:
            args += ["--api-base", s.base_url]
        start = time.perf_counter()
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        seconds = time.perf_counter() - start
        for s in servers:
            s.close()
        with sqlite3.connect(Path(ws) / "bench.sqlite") as conn:
            ok = conn.execute("SELECT COUNT(*) FROM judgments WHERE status = 'ok'").fetchone()[0]
            attempts = conn.execute("SELECT SUM(attempts) FROM llm_calls").fetchone()[0]
            paid = conn.execute("SELECT COUNT(*) FROM llm_calls WHERE ok = 1 AND cached = 0").fetchone()[0]
        live = n - 1 if kill else n
        return {"deployments": n, "kill": kill, "exit": result.exit_code, "seconds": seconds, "judged": ok,
                "paid": paid, "attempts": attempts, "rate": calls / seconds,
                "capacity": live * slots / latency}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--slots", type=int, default=4)
    ap.add_argument("--timeout", type=float, default=10.0)
    a = ap.parse_args()
    print(f"{a.calls} calls of one passage; each deployment: {a.slots} at a time, {a.latency * 1000:.0f} ms each; "
          f"--timeout {a.timeout:g}")
    print(f"{'deployments':>11} {'concurrency':>11} {'calls/s':>8} {'of capacity':>11} {'judged':>7} {'paid':>5} "
          f"{'attempts':>8}")
    measure(2, 20, a.latency, a.slots)  # warm-up: imports and first connections are not timed below
    for n, kill in ((1, ""), (2, ""), (3, ""), (4, ""), (3, "dies"), (3, "hangs")):
        r = measure(n, a.calls, a.latency, a.slots, kill, a.timeout)
        label = f"{n}, 1 {kill}" if kill else str(n)
        print(f"{label:>11} {8 * n:>11} {r['rate']:>8.1f} {r['rate'] / r['capacity']:>10.0%} {r['judged']:>7} "
              f"{r['paid']:>5} {r['attempts']:>8}", flush=True)


if __name__ == "__main__":
    main()
