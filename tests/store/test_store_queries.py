"""Judgments with their judges, nugget drafting runs and web-app leases are read and written through the store."""
from __future__ import annotations

from paths import ROOT

import ast
import re

import pandas as pd

from trecbench.nuggets.store import NuggetStore
from trecbench.store import Judge, Judgment, Workspace
from trecbench.store.model_calls import models_by_purpose
from trecbench.store.nuggets import nugget_counts
from trecbench.store.workspace import save_pool
from trecbench.topics import Topic

SRC = ROOT / "src" / "trecbench"
# Modules that still run SQL of their own while their queries move into store/ (issue 20): each is being
# moved by another change; empty this list once they have landed, and never add to it.
# SQL is written in upper case here: a statement's keyword, or FROM/JOIN/INTO followed by a table's name
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|PRAGMA)\b|\b(FROM|JOIN|INTO)\s+[A-Za-z_]\w*")
RUNS_SQL = {"execute", "executemany", "executescript"}
ALICE = Judge("human", "alice")
MODEL = Judge("model", "openai/m", model="openai/m", prompt_id="graded-0-3", prompt_hash="h", params=(("t", 0),))


def test_sql_on_judgments_judges_leases_and_drafts_is_only_in_the_store():
    pattern = re.compile(r"\b(FROM|JOIN|INTO|UPDATE)\s+(judgments|judges|leases|nugget_drafts)\b")  # SQL is upper case
    found = [f"{path.relative_to(SRC)}:{n}" for path in SRC.rglob("*.py") if path.parent.name != "store"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if pattern.search(line)]
    assert found == []


def sql_lines(source: str) -> list[int]:
    """The lines of a module with SQL in a string (an f-string's literal parts too) or an execute call."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
            lines.add(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RUNS_SQL:
            lines.add(node.lineno)
    return sorted(lines)


def test_sql_lines_finds_statements_table_clauses_and_execute_calls():
    source = ('x = "select the best"\ny = f"SELECT {a} FROM t"\nz = "rows " "JOIN judges g"\n'
              'conn.execute(sql)\nc.executemany(s, rows)\nw = "FROM 2 to 3"\n')
    assert sql_lines(source) == [2, 3, 4, 5]


def test_no_module_outside_the_store_runs_sql():
    modules = sorted(str(path.relative_to(SRC).as_posix()) for path in SRC.rglob("*.py"))
    assert "web/queries.py" in modules and "report/collect.py" in modules  # every module of the package
    found = [f"{module}:{n}" for module in modules if not module.startswith("store/")
             for n in sql_lines((SRC / module).read_text(encoding="utf-8"))]
    assert found == []


def _bench(tmp_path) -> Workspace:
    ws = Workspace.init(tmp_path / "bench")
    save_pool(ws, "p", "depth", {}, pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "c"],
                                                  "priority": [0, 1, 2], "group": [None, "g", "g"],
                                                  "representative": [True, True, False]}))
    ws.record_many([Judgment("1", "a", 1, ALICE, doc_hash="ha"), Judgment("1", "b", 2, MODEL, rationale="why"),
                    Judgment("1", "c", 2, MODEL, propagated_from="b"), Judgment("1", "a", 3, ALICE),
                    Judgment("2", "x", None, MODEL, status="failed", error="bad reply"),
                    Judgment("1", "b", 0, MODEL, rationale="second thoughts")])
    return ws


def test_judgment_rows_filter_by_status_kind_pair_pool_and_copies(tmp_path):
    ws = _bench(tmp_path)
    assert [(r.docid, r.grade, r.judge) for r in ws.judgment_rows(kind="human")] == [("a", 1, "alice"),
                                                                                       ("a", 3, "alice")]
    assert [r.docid for r in ws.judgment_rows(direct=True)] == ["a", "b", "a", "b"]
    assert [r.docid for r in ws.judgment_rows(pool=1)] == ["a", "b", "a", "b"]  # c is not a representative
    assert [r.error for r in ws.judgment_rows(status="failed")] == ["bad reply"]
    assert len(ws.judgment_rows(status=None)) == 6
    [latest] = ws.judgment_rows(qid="1", docid="b", kind="model", newest_first=True, limit=1)
    assert (latest.grade, latest.rationale, latest.judge_label) == (0, "second thoughts", "openai/m:graded-0-3")
    assert ws.judgment_rows(kind="human")[0].doc_hash == "ha"
    assert [r.grade for r in ws.judgment_rows(judge="openai/m")] == [2, 2, 0]
    assert ws.judgment_rows(judge="openai/m", kind="human") == [] and ws.judgment_rows(judge="bob") == []
    frame = ws.judgments()
    assert list(frame["query_id"]) == ["1"] * 5 and {"judge_id", "judge_kind", "judge", "doc_hash"} <= set(frame)


def test_pool_rows_are_the_rows_of_load_pool(tmp_path):
    from trecbench.store.pools import load_pool, pool_rows

    ws = _bench(tmp_path)
    chosen, rows = pool_rows(ws)
    frame = load_pool(ws)
    assert chosen.name == frame.attrs["name"] == "p" and len(rows) == len(frame) == 3
    assert list(zip(frame["query_id"], frame["doc_id"], frame["priority"], frame["representative"])) == [
        (q, d, p, bool(representative)) for q, d, p, *_, representative in rows]
    assert [None if g != g else g for g in frame["group"]] == [r[7] for r in rows] == [None, "g", "g"]
    assert [r[1] for r in rows if r[-1]] == ["a", "b"] and pool_rows(ws, qid="2")[1] == []
    assert pool_rows(Workspace.init(tmp_path / "empty")) is None


def test_has_replies_says_whether_the_cache_holds_any_reply(tmp_path):
    from trecbench.llm.cache import ResponseCache
    from trecbench.store.model_calls import has_replies, open_read_only

    ws = _bench(tmp_path)
    conn = open_read_only(ws.path / "bench.sqlite")
    assert not has_replies(conn)
    cache = ResponseCache(ws.path / "bench.sqlite")
    cache.put("k", "openai/m", {"messages": []}, "[]")
    cache.close()
    assert has_replies(conn)
    conn.close()


def test_judge_stats_count_each_judges_judgments(tmp_path):
    ws = _bench(tmp_path)
    stats = {s.judge.name: s for s in ws.judge_stats()}
    assert (stats["alice"].ok, stats["alice"].direct, stats["alice"].failed) == (2, 2, 0)
    model = stats["openai/m"]
    assert (model.ok, model.direct, model.failed) == (3, 2, 1)
    assert model.judge == MODEL and model.params == {"t": 0}


def test_drafting_runs_are_recorded_per_topic_and_drafter(tmp_path):
    ws = Workspace.init(tmp_path / "bench")
    ws.start_draft("t1", "extractive", {"keep": 5})
    ws.start_draft("t2", "extractive", {"keep": 5})
    ws.start_draft("t1", "llm:m", {})
    ws.finish_draft("t1", "extractive", [], 4)
    ws.finish_draft("t2", "extractive", ["d9 is not in the corpus"], 0)
    runs = ws.draft_runs(drafter="extractive")
    assert [(r.qid, r.status, r.problems, r.nuggets) for r in runs] == [
        ("t1", "complete", (), 4), ("t2", "incomplete", ("d9 is not in the corpus",), 0)]
    assert [(r.drafter, r.status) for r in ws.draft_runs(qid="t1")] == [("extractive", "complete"), ("llm:m", "running")]
    ws.start_draft("t2", "extractive", {"keep": 6})  # a rerun starts the topic again
    assert [(r.status, r.problems) for r in ws.draft_runs(qid="t2")] == [("running", ())]


def test_an_assessor_holds_one_lease_and_expired_leases_are_swept(tmp_path):
    ws = Workspace.init(tmp_path / "bench")
    with ws.transaction():
        ws.lease("1", "a", "bob", 100.0, at=0.0)
        ws.lease("1", "b", "carol", 50.0, at=0.0)
    assert sorted(ws.live_leases("1", at=10.0)) == [("a", "bob"), ("b", "carol")]
    with ws.transaction():
        ws.lease("1", "c", "bob", 200.0, at=60.0)  # bob's lease on a goes; carol's expired one is swept
    assert ws.live_leases("1", at=0.0) == [("c", "bob")]
    ws.drop_leases("bob", "1", "a")  # not that pair: nothing happens
    assert ws.live_leases("1", at=0.0) == [("c", "bob")]
    ws.drop_leases("bob")
    assert ws.live_leases("1", at=0.0) == []


def test_pool_representatives_are_read_in_judging_order(tmp_path):
    ws = _bench(tmp_path)
    assert ws.representatives(1, "1") == ["a", "b"]  # c is b's duplicate
    assert ws.representatives(1, "2") == [] and ws.representatives(2, "1") == []
    assert sorted(ws.representative_pairs(1)) == [("1", "a"), ("1", "b")]
    assert ws.is_representative(1, "1", "b") and not ws.is_representative(1, "1", "c")


def test_topics_are_known_from_the_store_or_a_pool(tmp_path):
    ws = _bench(tmp_path)  # made without topics: the pool's are known all the same
    assert ws.topic_texts() == {} and ws.topic_text("1") is None
    assert ws.known_topic("1") and not ws.known_topic("2")
    with ws.transaction():
        ws.add_topics([Topic("7", "solar panels", "about cost")])
    assert ws.topic_text("7") == ("solar panels", "about cost") and ws.topic_texts() == {"7": "solar panels"}
    assert ws.known_topic("7") and list(ws.topics()) == ["7"]


def test_a_meta_value_is_kept_once(tmp_path):
    ws = Workspace.init(tmp_path / "bench")
    assert ws.meta("created_at") is not None and ws.meta("nothing") is None
    assert ws.meta_or_set("key", "first") == "first"
    assert ws.meta_or_set("key", "second") == "first"
    assert ws.meta("key") == "first"


def test_nuggets_and_model_calls_are_counted_for_the_report_and_the_nugget_topic_list(tmp_path):
    ws = Workspace.init(tmp_path / "bench")
    conn = ws.connection()
    assert nugget_counts(conn) == (0, 0, 0) and ws.nugget_counts_by_topic() == []
    store = NuggetStore(ws)
    store.add("1", "panels cost less", "vital", author="alice")
    kept = store.add("1", "panels last long", author="alice")
    store.approve(kept.id, author="alice")
    store.add("2", "wind is cheap", "vital", author="alice")
    store.delete(store.add("2", "a nugget deleted", author="alice").id, author="alice")
    assert nugget_counts(conn) == (3, 2, 1)
    assert sorted(ws.nugget_counts_by_topic()) == [("1", 2, 1, 1), ("2", 1, 1, 0)]
    assert models_by_purpose(conn) == {}
    conn.executemany("INSERT INTO llm_calls (key, model, ok, created_at, purpose) VALUES ('k', ?, 1, 'now', ?)",
                     [("m1", "judge"), ("m2", "judge"), ("m1", "judge"), ("m3", "nuggets")])
    assert {p: sorted(m.split(",")) for p, m in models_by_purpose(conn).items()} == {"judge": ["m1", "m2"],
                                                                                    "nuggets": ["m3"]}
