"""Pools as first-class workspace objects: an empty pool is refused; pools are listed, chosen and deleted."""
from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from trecbench.errors import InputError
from trecbench.store import Judge, Judgment, Workspace
from trecbench.web.app import create_app
from web_support import add_pool, csrf_of, make_bench

# topic 2 only: w1 first, then a new document w3
SECOND = [("2", "w1", 0, None, True), ("2", "w3", 1, None, True)]


@pytest.fixture
def bench(tmp_path):
    """Pools p1 (web_support.POOL: topics 1 and 2) and p2 (SECOND, the newest)."""
    bench = make_bench(tmp_path)
    ws = Workspace(bench)
    add_pool(ws, "p2", SECOND)
    ws.close()
    return bench


def _judge(bench, qid: str, docid: str) -> None:
    ws = Workspace(bench)
    ws.record(Judgment(qid, docid, 2, Judge("human", "alice")))
    ws.close()


def test_pool_w_refuses_to_store_a_pool_of_runs_for_other_topics(tmp_path, cli_run):
    bench = make_bench(tmp_path, pool=False)
    run = tmp_path / "run.txt"
    run.write_text("77 Q0 d1 1 2.0 r\n78 Q0 d2 1 1.0 r\n")
    r = cli_run("pool", run, "-w", bench, "-o", tmp_path / "pool.tsv")
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    assert f"{bench}: pool 'depth-100' is empty (no run retrieved a document for any of the workspace's 2 topics): " \
           "not stored" in r.stderr
    assert "2 topic(s) not in topics, not pooled: 77 78" in r.stderr  # which topics, from the pooling problems
    assert Workspace(bench).pools() == []
    assert not (tmp_path / "pool.tsv").exists()


def test_pool_w_refuses_an_empty_run_file(tmp_path, cli_run):
    bench = make_bench(tmp_path, pool=False)
    run = tmp_path / "empty.txt"
    run.write_text("")
    r = cli_run("pool", run, "-w", bench)
    assert r.exit_code == 2, r.output
    assert Workspace(bench).pools() == []


def test_pool_list_shows_each_pool_with_its_size_and_progress(bench, cli_run):
    _judge(bench, "1", "d1")
    _judge(bench, "2", "w1")
    r = cli_run("pool", "list", "-w", bench, "--format", "json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    assert [(x["id"], x["name"], x["topics"], x["candidates"], x["to_judge"], x["judged"]) for x in rows] == [
        (1, "p1", 2, 7, 6, 2), (2, "p2", 1, 2, 2, 1)]
    table = cli_run("pool", "list", "-w", bench)
    assert table.exit_code == 0 and table.stdout.splitlines()[0].split()[:3] == ["id", "name", "strategy"]


def test_pool_list_of_a_workspace_without_pools_says_how_to_make_one(tmp_path, cli_run):
    bench = make_bench(tmp_path, pool=False)
    r = cli_run("pool", "list", "-w", bench)
    assert r.exit_code == 0 and r.stdout == ""
    assert "no pool in" in r.stderr and "trecbench pool RUN... -w" in r.stderr


def test_pool_delete_removes_an_unjudged_pool_by_name_or_id(bench, cli_run):
    r = cli_run("pool", "delete", "p2", "-w", bench)
    assert r.exit_code == 0, r.output
    assert "deleted pool 'p2' (id 2, 2 candidates)" in r.stderr
    ws = Workspace(bench)
    assert [p.name for p in ws.pools()] == ["p1"]
    assert ws.connection().execute("SELECT COUNT(*) FROM pool_candidates WHERE pool_id = 2").fetchone()[0] == 0
    r = cli_run("pool", "delete", "1", "-w", bench)
    assert r.exit_code == 0, r.output
    assert Workspace(bench).pools() == []


def test_pool_delete_keeps_a_pool_that_has_judgments_or_leases(bench, cli_run):
    _judge(bench, "2", "w3")
    r = cli_run("pool", "delete", "p2", "-w", bench)
    assert r.exit_code == 2, r.output
    assert r.stderr.strip() == f"{bench}: pool 'p2' is in use (1 judgment(s) of its candidates): not deleted"
    ws = Workspace(bench)
    ws.connection().execute("INSERT INTO leases VALUES ('1', 'd2', 'bob', 9e18)")
    with pytest.raises(InputError, match=r"pool 'p1' is in use \(1 web-app lease\(s\) of its candidates\)"):
        ws.delete_pool("p1")
    assert [p.name for p in ws.pools()] == ["p1", "p2"]


def test_an_unknown_pool_is_refused_with_the_pools_there_are(bench, cli_run):
    r = cli_run("pool", "delete", "nope", "-w", bench)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"{bench}: no pool 'nope' in this workspace (its pools: p1, p2)"
    r = cli_run("judge", "llm", "-w", bench, "--model", "openai/m", "--pool", "nope", "--dry-run")
    assert r.exit_code == 2 and "no pool 'nope' in this workspace (its pools: p1, p2)" in r.stderr
    r = cli_run("report", "-w", bench, "--pool", "nope", "-o", bench / "r.html", "--quiet")
    assert r.exit_code == 2 and "no pool 'nope' in this workspace (its pools: p1, p2)" in r.stderr


def test_serve_judges_the_pool_chosen_with_pool(bench, cli_run, monkeypatch):
    newest = TestClient(create_app(bench, require_token=False), base_url="http://127.0.0.1")
    chosen = TestClient(create_app(bench, require_token=False, pool="p1"), base_url="http://127.0.0.1")
    assert "solar energy" not in newest.get("/").text  # p2 has topic 2 only
    assert "solar energy" in chosen.get("/").text
    for client, qid, first in [(chosen, "1", "d1"), (newest, "2", "w1")]:
        taken = client.post("/next", data={"csrf": csrf_of(client.get("/").text), "qid": qid})
        assert taken.url.params["docid"] == first

    ws = Workspace(bench)
    add_pool(ws, "p3", [("1", "d4", 0, None, True)])
    third = TestClient(create_app(bench, require_token=False, pool="p3"), base_url="http://127.0.0.1")
    assert "solar energy" in third.get("/").text
    ws.delete_pool("p3")  # deleted while the app serves it: no pool to judge, not an error
    page = third.get("/")
    assert page.status_code == 200 and "solar energy" not in page.text

    import trecbench.web.app

    served = {}
    monkeypatch.setattr(trecbench.web.app, "serve", lambda ws, **options: served.update(options))
    r = cli_run("serve", "-w", bench, "--pool", "p1")
    assert r.exit_code == 0, r.output
    assert served["pool"] == "p1" and "(pool 'p1')" in r.stderr
    served.clear()
    r = cli_run("serve", "-w", bench, "--pool", "p9")
    assert r.exit_code == 2 and served == {}
    assert r.stderr.strip() == f"{bench}: no pool 'p9' in this workspace (its pools: p1, p2)"


def test_judge_llm_and_report_use_the_pool_chosen(bench, cli_run, tmp_path):
    r = cli_run("judge", "llm", "-w", bench, "--model", "openai/m", "--pool", "p1", "--dry-run")
    assert r.exit_code == 0, r.output
    assert "6 documents to judge" in r.stderr  # p1's six representatives, not p2's two
    r = cli_run("judge", "llm", "-w", bench, "--model", "openai/m", "--dry-run")
    assert r.exit_code == 0 and "2 documents to judge" in r.stderr
    _judge(bench, "1", "d1")
    out = tmp_path / "report.html"
    r = cli_run("report", "-w", bench, "--pool", "p1", "-o", out, "--quiet", "--no-workspace-runs")
    assert r.exit_code == 0, r.output
    assert "p1" in out.read_text() and "p2" not in out.read_text()
