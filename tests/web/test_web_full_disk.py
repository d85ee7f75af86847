"""The assessor app on a disk that fills up: the grade is not saved, and the assessor gets a page that says so
and why (never a bare 500 or a dropped connection); nothing else changes, and once there is room again the
same grade is saved.

The workspace lives on a real tmpfs that is filled up (root; see tests/support/mounts.py), its WAL emptied first so
that the write needs new space on the disk, as it does once SQLite's WAL has been checkpointed and truncated.
"""
from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from starlette.testclient import TestClient

from mounts import fill, small_tmpfs
from web_support import csrf_of, human_judgments, make_bench

from trecbench.web.app import create_app

BASE = "http://127.0.0.1"


def post_grade(client: TestClient, qid: str, docid: str, grade: int):
    page = client.get("/judge", params={"qid": qid, "docid": docid})
    assert page.status_code == 200, page.text
    return client.post("/judge", data={"csrf": csrf_of(page.text), "qid": qid, "docid": docid, "grade": str(grade)},
                       follow_redirects=False)


def empty_wal(bench: Path) -> None:
    """Move what the WAL holds into the database and cut the WAL to 0 bytes, so the next write needs new space."""
    conn = sqlite3.connect(bench / "bench.sqlite", isolation_level=None)
    try:
        assert conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
    finally:
        conn.close()
    assert (bench / "bench.sqlite-wal").stat().st_size == 0


def test_a_grade_on_a_full_disk_is_not_saved_and_the_page_says_so(tmp_path, caplog):
    with small_tmpfs(tmp_path / "disk", size="1m") as disk:
        bench = make_bench(disk)
        client = TestClient(create_app(bench, require_token=False), base_url=BASE, raise_server_exceptions=False)
        assert client.get("/").status_code == 200  # logged in (a session row written) while there was room
        empty_wal(bench)
        filler = fill(disk)
        with caplog.at_level(logging.ERROR, logger="trecbench.web"):
            r = post_grade(client, "1", "d1", 2)
        assert r.status_code == 507, r.text
        assert "Your grade 2 (highly relevant) of document d1 for topic 1 was NOT saved: the disk holding the " \
               "workspace is full (database or disk is full)." in r.text
        assert "to free some space on it" in r.text and 'href="/judge?qid=1&amp;docid=d1"' in r.text
        assert "Traceback" not in r.text and "Traceback" not in caplog.text
        assert [rec.getMessage() for rec in caplog.records] == [
            "POST /judge: Your grade 2 (highly relevant) of document d1 for topic 1 was NOT saved: the disk holding "
            "the workspace is full (database or disk is full)"]
        assert client.get("/topic", params={"qid": "1"}).status_code == 200  # reading goes on
        filler.unlink()
        assert human_judgments(bench) == []
        r = post_grade(client, "1", "d1", 2)
        assert r.status_code == 303, r.text
        assert human_judgments(bench) == [("local", "1", "d1", 2)]
        client.close()


def test_a_nugget_added_on_a_full_disk_is_not_saved_and_the_page_says_so(tmp_path):
    from trecbench.nuggets.store import NuggetStore
    from trecbench.store import Workspace

    with small_tmpfs(tmp_path / "disk", size="1m") as disk:
        bench = make_bench(disk)
        client = TestClient(create_app(bench, require_token=False), base_url=BASE, raise_server_exceptions=False)
        csrf = csrf_of(client.get("/nuggets/1").text)
        empty_wal(bench)
        filler = fill(disk)
        r = client.post("/nuggets/1/add", data={"csrf": csrf, "text": "Panels last 25 years", "importance": "vital"},
                        follow_redirects=False)
        assert r.status_code == 507, r.text
        assert "Your change was NOT saved: the disk holding the workspace is full (database or disk is full)." in r.text
        filler.unlink()
        ws = Workspace(bench)
        assert NuggetStore(ws).topic("1") == []
        ws.close()
        client.close()


def test_logging_in_on_a_full_disk_is_a_short_page_not_a_500(tmp_path):
    with small_tmpfs(tmp_path / "disk", size="1m") as disk:
        bench = make_bench(disk)
        app = create_app(bench, require_token=False)
        empty_wal(bench)
        filler = fill(disk)
        client = TestClient(app, base_url=BASE, raise_server_exceptions=False)
        r = client.get("/")  # the first request of a browser logs it in: a session row is written
        assert r.status_code == 507, r.text
        assert r.text == ("Nothing was saved (you may not be logged in): the disk holding the workspace is full "
                          "(database or disk is full). Ask the person who runs trecbench serve to free some space on "
                          "it, then try again.\n")
        filler.unlink()
        assert "judging as" in client.get("/").text
        client.close()
