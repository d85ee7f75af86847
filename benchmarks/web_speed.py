"""Assessor web app latency at scale: every page, 8 concurrent clients, 100k pool entries, 50k judgments.

Builds a workspace (100 topics x 1,000 pool candidates, a 20,000-passage corpus, 50,000 judgments by
12 assessors and a model, 10 nuggets per topic with supporting documents), starts `trecbench serve` on
it in its own process and drives it over HTTP with N clients at once (threads, one keep-alive
connection and one assessor each). Each client, round after round on a topic of its own, loads the
topic list, a topic page, takes the next pair (POST /next and the judging page it leads to), grades it
(POST /judge, which leases the next one), opens the previous pair (POST /open), and loads the nugget
pages (all topics, one topic, a nugget's history). First one client alone measures the server's CPU time
per page (what does not depend on how busy the machine is); then N clients at once, printing p50, p95
and max latency per page in milliseconds and the server's CPU seconds. Target: every page <= 200 ms p95
with 8 clients. The server is one process (one core at a time for Python): with 8 requests in flight a
request waits for the CPU time of the others, so p95 <= 200 ms needs the pages' CPU time well below
200 / 8 = 25 ms on average, and a core free for the server.

Where the time went, and what changed (measured with this script, cProfile of the page functions and
per-page thread CPU time; the tests that pin each change are in tests/web/test_web_speed.py):
- the topic list joined every judgment with the pool on each request (563 ms of CPU here); it keeps the
  counts and reads only the judgments added since the last look (`trecbench.web.queries.Tally`). That
  read then cost 14 ms: without statistics SQLite went through every human judge's judgments
  (`judgments_judge`) to find the few rows after an id; the store now reads judgments first, by row id
  or topic (a CROSS JOIN in `_judgment_sql`), 0.04 ms;
- a topic's nugget page read every judgment of the workspace, and then (through
  `workspace_qrels(qid=...)`) the whole pool, 100,000 rows, to propagate duplicates' grades that
  `relevant_by_topic` then drops (365 ms of CPU); it now chooses the grades of the topic's judgments only,
  keeps each document's view and HTML until its grade or the corpus changes, and opens one nugget's
  link form at a time; `load_pool(qid=...)` reads one topic's pool rows. Choosing them with pandas
  (`select_grades` over a frame of the topic's judgments) then cost 17-22 ms whenever the topic had a
  new judgment, the page's largest cost: the rule is now one function over plain rows (`choose_grades`,
  0.7 ms for a topic's ~550), and the app keeps the topic's rows and reads only those recorded since
  (0.3 ms, against 3 ms for all of them);
- the topic page read its 1,000 pool rows and every judgment of the topic and rendered 1,000 rows
  through Jinja (18 ms) on each request; it keeps the topic's order and grades (`queries.Topics`, which
  reads the judgments added since the last look) and each row's HTML until what the row shows changes;
  taking the next pair works on the same kept state; opening a pair reads that pair's judgments only;
- indexes: the per-topic queries use the primary keys and `judgments_pair` (checked with EXPLAIN QUERY
  PLAN); extra indexes (judgments by topic and status, leases by assessor, pool candidates in priority
  order) changed them by well under 1 ms and one of them made the planner choose a far slower plan for
  the topic list, so none was added;
- processes: `serve` is one process; its pages run in a thread pool, one at a time in Python (the GIL).
  Two uvicorn worker processes on the same workspace, driven like this on this machine at load average
  9-10, gave no better p95 (worst page 690 ms against 479 ms with one), since the cores were busy with
  other work; a second process would also need the wrong-token throttle in the workspace instead of in
  memory. So the pages' CPU time was cut instead, which helps on a busy machine too.

    python benchmarks/web_speed.py [--clients 8] [--rounds 25] [--topics 100] [--pool-per-topic 1000]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def build(folder: Path, *, topics: int, per_topic: int, judgments: int, docs: int, seed: int = 7) -> Path:
    import pandas as pd

    from trecbench.nuggets.store import NuggetStore
    from trecbench.store.workspace import Judge, Judgment, Workspace, save_pool

    rng = random.Random(seed)
    words = "solar wind power grid storage battery turbine panel energy heat pump cost price policy".split()
    corpus = folder / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as f:
        for i in range(docs):
            text = " ".join(rng.choice(words) for _ in range(80))
            f.write(json.dumps({"id": f"d{i}", "title": f"Passage {i}", "contents": text}) + "\n")
    tfile = folder / "topics.tsv"
    tfile.write_text("".join(f"{q}\t{' '.join(rng.sample(words, 3))}\n" for q in range(1, topics + 1)))
    ws = Workspace.init(folder / "bench", corpus=str(corpus), topics=str(tfile), name="web-speed")
    rows = []
    for q in range(1, topics + 1):
        for rank, d in enumerate(rng.sample(range(docs), per_topic)):
            rows.append((str(q), f"d{d}", rank, None, True))
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "priority", "group", "representative"])
    save_pool(ws, "big", "depth", {"depth": per_topic}, frame)
    people = [Judge("human", f"p{k}") for k in range(12)]
    model = Judge("model", "m:graded-0-3", model="m", prompt_id="graded-0-3", prompt_hash="h")
    chosen = rng.sample(rows, judgments)
    ws.record_many(Judgment(q, d, rng.randint(0, 3), model if i % 5 == 0 else people[i % 12])
                   for i, (q, d, *_rest) in enumerate(chosen))
    nuggets = NuggetStore(ws)
    for q in range(1, topics + 1):
        relevant = [d for qq, d, *_ in chosen[:4000] if qq == str(q)][:3]
        for k in range(10):
            n = nuggets.add(str(q), f"nugget {k} of topic {q}: {' '.join(rng.sample(words, 6))}", author="m",
                            origin="llm")
            if relevant and k < 3:
                nuggets.link(n.id, [relevant[k % len(relevant)]], author="m")
    ws.close()
    return folder / "bench"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(bench: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    log = (bench.parent / "serve.log").open("wb")  # a file, not a pipe: one access log line per request
    proc = subprocess.Popen([sys.executable, "-m", "trecbench.cli", "serve", "-w", str(bench), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=log, env=env)
    import httpx

    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/login", timeout=5)
            return proc
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("serve did not start: " + (bench.parent / "serve.log").read_text()[-2000:]) from None
            time.sleep(0.2)


def drive(url: str, name: str, qid: str, rounds: int, times: dict[str, list[float]], lock: threading.Lock,
          errors: list[str], start_gate: threading.Barrier, server_cpu=None) -> None:
    """One client's rounds; with `server_cpu` (a function reading the server's CPU seconds; one client
    only), `times` gets the server's CPU time of each request instead of its wall time."""
    import httpx

    mine: dict[str, list[float]] = {}
    with httpx.Client(base_url=url, timeout=60) as http:
        def hit(page: str, method: str, path: str, **kwargs):
            t = server_cpu() if server_cpu else time.perf_counter()
            response = http.request(method, path, **kwargs)
            mine.setdefault(page, []).append((server_cpu() if server_cpu else time.perf_counter()) - t)
            if response.status_code >= 400:
                errors.append(f"{method} {path}: {response.status_code}")
            return response

        login = http.get("/login")
        csrf = re.search(r'name="csrf" value="([^"]+)"', login.text).group(1)
        http.post("/login", data={"csrf": csrf, "name": name})
        start_gate.wait()
        for _ in range(rounds):
            page = hit("GET / (topics)", "GET", "/")
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
            hit("GET /topic", "GET", "/topic", params={"qid": qid})
            taken = hit("POST /next", "POST", "/next", data={"csrf": csrf, "qid": qid})
            docid = re.search(r"docid=([^&]+)", taken.headers.get("location", "")).group(1)
            hit("GET /judge", "GET", "/judge", params={"qid": qid, "docid": docid})
            hit("POST /judge", "POST", "/judge", data={"csrf": csrf, "qid": qid, "docid": docid, "grade": "2"})
            hit("POST /open", "POST", "/open", data={"csrf": csrf, "qid": qid, "docid": docid})
            hit("GET /nuggets", "GET", "/nuggets")
            topic = hit("GET /nuggets/QID", "GET", f"/nuggets/{quote(qid, safe='')}")
            nid = re.search(r'data-nid="([^"]+)"', topic.text).group(1)
            hit("GET /nuggets/QID/NID/history", "GET", f"/nuggets/{quote(qid, safe='')}/{quote(nid, safe='')}/history")
    with lock:
        for page, values in mine.items():
            times.setdefault(page, []).extend(values)


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU time, threads that ended included (in clock ticks, 10 ms each)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_seconds(pid: int) -> float:
    """The time the process's threads have run, to the nanosecond (schedstat; clock ticks where the kernel
    does not keep it). The thread pool's threads outlive a request, so the difference around one request
    is the CPU time it took."""
    if not Path("/proc/self/schedstat").exists():
        return cpu_seconds(pid)
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):  # a thread that ended meanwhile
            pass
    return total / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--pool-per-topic", type=int, default=1000)
    parser.add_argument("--judgments", type=int, default=50_000)
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="build the workspace in DIR (once) and reuse it on the next run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        t = time.perf_counter()
        if (folder / "bench").is_dir():
            bench = folder / "bench"
        else:
            folder.mkdir(parents=True, exist_ok=True)
            bench = build(folder, topics=args.topics, per_topic=args.pool_per_topic, judgments=args.judgments,
                          docs=args.docs)
        print(f"workspace: {args.topics} topics x {args.pool_per_topic} pool entries = "
              f"{args.topics * args.pool_per_topic:,}, {args.judgments:,} judgments, {args.docs:,} passages, "
              f"{args.topics * 10:,} nuggets (ready in {time.perf_counter() - t:.0f} s)")
        port = free_port()
        proc = start(bench, port)
        try:
            url = f"http://127.0.0.1:{port}"
            errors: list[str] = []
            lock = threading.Lock()
            # the server's CPU per page, one request at a time (after a round that warms it up)
            drive(url, "warm", str(args.topics), 1, {}, lock, errors, threading.Barrier(1))
            cpu_per_page: dict[str, list[float]] = {}
            drive(url, "solo", str(args.topics), args.rounds, cpu_per_page, lock, errors, threading.Barrier(1),
                  server_cpu=lambda: run_seconds(proc.pid))
            times: dict[str, list[float]] = {}
            gate = threading.Barrier(args.clients)
            load0 = os.getloadavg()[0]
            cpu0 = cpu_seconds(proc.pid)
            wall = time.perf_counter()
            threads = [threading.Thread(target=drive, args=(url, f"a{i}", str(i % args.topics + 1), args.rounds,
                                                            times, lock, errors, gate))
                       for i in range(args.clients)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            wall = time.perf_counter() - wall
            cpu = cpu_seconds(proc.pid) - cpu0
            load1 = os.getloadavg()[0]
        finally:
            proc.terminate()
            proc.wait(30)
    requests = sum(len(v) for v in times.values())
    print(f"{args.clients} clients x {args.rounds} rounds: {requests:,} requests in {wall:.1f} s wall, "
          f"server {cpu:.1f} s CPU ({cpu / requests * 1000:.1f} ms CPU per request), {os.cpu_count()} cores, "
          f"load average {load0:.1f} before, {load1:.1f} after")
    print(f"{'page':<32} {'n':>5} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'CPU ms':>8}")
    worst = 0.0
    for page, values in times.items():
        values = sorted(values)
        p95 = values[min(len(values) - 1, int(round(0.95 * (len(values) - 1))))]
        worst = max(worst, p95)
        cpu_ms = statistics.mean(cpu_per_page.get(page, [0.0])) * 1000
        print(f"{page:<32} {len(values):>5} {statistics.median(values) * 1000:>8.1f} {p95 * 1000:>8.1f} "
              f"{values[-1] * 1000:>8.1f} {cpu_ms:>8.1f}")
    print("CPU ms: the server's CPU time per request of the page, one client alone (mean of --rounds requests; "
          "from the threads' run time)")
    print(f"worst p95: {worst * 1000:.1f} ms (target <= 200 ms)")
    if errors:
        print(f"{len(errors)} errors, e.g. {errors[:3]}")
        raise SystemExit(1)


if __name__ == "__main__":
    main()
