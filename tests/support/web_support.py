"""Helpers for the web app tests: a small bench to judge, a live server in a thread, Debian's chromium."""
from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from needs import missing

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]

SCRIPT_DOC = "<script>window.pwned = 1; alert('pwned')</script>Wind turbines beside solar farms."
DOCS = {
    "d1": "Solar panels convert sunlight into electricity.\n\n    Indented second paragraph.",
    "d2": SCRIPT_DOC,
    "d3": '<img src=x onerror="window.pwned = 2"> <b>bold</b> & more about solar energy',
    "d4": "Energy storage for the grid.",
    "d5": "A duplicate of d4: energy storage for the grid.",
    "w1": "Wind power in the North Sea.",
    "w2": "Offshore wind farms and their power output.",
}
TOPICS = [
    {"qid": "1", "text": "solar energy", "narrative": "Documents about <em>solar</em> power are relevant."},
    {"qid": "2", "text": "wind power"},
]
# topic 1 in priority order d1, d3, d2, d4 (d5 is d4's duplicate); topic 2: w1, w2
POOL = [("1", "d1", 0, None, True), ("1", "d3", 1, None, True), ("1", "d2", 2, None, True),
        ("1", "d4", 3, "g1", True), ("1", "d5", 4, "g1", False), ("2", "w2", 0, None, True), ("2", "w1", 1, None, True)]


def make_bench(root: Path, *, pool: bool = True) -> Path:
    """A workspace under `root` with the documents, topics and (unless pool=False) pool above."""
    from trecbench.store.workspace import Workspace

    corpus, topics = root / "corpus.jsonl", root / "topics.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "contents": t}) + "\n" for d, t in DOCS.items()), encoding="utf-8")
    topics.write_text("".join(json.dumps(t) + "\n" for t in TOPICS), encoding="utf-8")
    ws = Workspace.init(root / "bench", corpus=str(corpus), topics=str(topics), name="webtest")
    if pool:
        add_pool(ws, "p1", POOL)
    ws.close()
    return root / "bench"


def make_nugget_bench(root: Path, grades, nuggets) -> Path:
    """`make_bench` with judy's grades [(qid, docid, grade)] recorded and topic 1's model-drafted
    nuggets [(text, importance)] in its store."""
    from trecbench.nuggets.store import NuggetStore
    from trecbench.store.workspace import Judge, Judgment, Workspace

    bench = make_bench(root)
    ws = Workspace(bench)
    ws.record_many(Judgment(q, d, g, Judge("human", "judy")) for q, d, g in grades)
    store = NuggetStore(ws)
    for text, importance in nuggets:
        store.add("1", text, importance, author="model", origin="llm")
    ws.close()
    return bench


def add_pool(ws, name: str, rows) -> None:
    import pandas as pd

    from trecbench.store.workspace import save_pool

    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "priority", "group", "representative"])
    save_pool(ws, name, "test", {}, frame)


def add_assessor(bench: Path, name: str) -> str:
    """Register an assessor in the workspace; returns their token."""
    from trecbench.store.workspace import Workspace

    ws = Workspace(bench)
    try:
        return ws.add_assessor(name)
    finally:
        ws.close()


def human_judgments(bench: Path) -> list[tuple[str, str, str, int]]:
    """(assessor, qid, docid, grade) of every human judgment row, in the order recorded."""
    from trecbench.store.workspace import Workspace

    ws = Workspace(bench)
    try:
        frame = ws.judgments()
        frame = frame[frame["judge_kind"] == "human"]
        rows = zip(frame["judge"], frame["query_id"], frame["doc_id"], frame["grade"])
        return [(j, q, d, int(g)) for j, q, d, g in rows]
    finally:
        ws.close()


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, "the page has no CSRF field"
    return match.group(1)


@contextmanager
def live_server(app, host: str = "127.0.0.1") -> Iterator[str]:
    """Run `app` with uvicorn in a thread on a free port of `host`; yields the URL to reach it on loopback."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


def need_browser() -> None:
    """Skip (or, with TRECBENCH_REQUIRE_BROWSER=1 as in CI, fail) when playwright or chromium is missing."""
    problem = None
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problem = "the playwright package is not installed (pip install -e '.[dev]')"
    if problem is None and not os.access(CHROMIUM, os.X_OK):
        problem = f"{CHROMIUM} is missing (apt-get install -y chromium)"
    if problem:
        missing(f"browser tests: {problem}", "TRECBENCH_REQUIRE_BROWSER")


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by playwright, one per test module (see `need_browser` when it is missing)."""
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def watch(page) -> list[str]:
    """Console errors, page errors and dialogs of `page`, collected as they happen (a dialog is dismissed)."""
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    return problems
