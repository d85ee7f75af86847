"""NuggetStore: versioned edits with author and time, undo, evidence links with text hashes, import/export."""
from __future__ import annotations

import sqlite3

import pytest

from nugget_bench import DOCS, TOPICS, make_bench, rewrite_doc

from trecbench.nuggets import Nugget, TopicNuggets, read_nuggets, write_nuggets
from trecbench.nuggets.relevant import relevant_documents
from trecbench.nuggets.store import Link, NuggetStore
from trecbench.store import Judge, Judgment, Workspace, text_hash


@pytest.fixture
def store(tmp_path) -> NuggetStore:
    return NuggetStore(Workspace(make_bench(tmp_path)))


def texts(store: NuggetStore, qid: str = "t1") -> list[str]:
    return [n.text for n in store.topic(qid)]


def test_ids_are_short_stable_and_unique_per_topic_counter(store):
    a = store.add("t1", "Rollbacks start within 15 minutes", "vital", author="alice")
    b = store.add("t1", "No approval is needed", author="alice")
    c = store.add("t2", "The incident commander approves access", author="bob")
    assert (a.id, b.id, c.id) == ("t1-n1", "t1-n2", "t2-n1")
    store.delete(b.id, author="alice")
    assert store.add("t1", "Another", author="alice").id == "t1-n3"  # a deleted id is never reused
    assert (a.version, a.importance, a.status, a.origin, a.updated_by) == (1, "vital", "draft", "human", "alice")


def test_every_edit_is_a_version_with_author_time_and_full_snapshot(store):
    n = store.add("t1", "Rollbacks start fast", author="alice")
    store.edit(n.id, text="Rollbacks start within 15 minutes", author="bob")
    store.edit(n.id, importance="vital", author="carol")
    store.approve(n.id, author="dave")
    history = store.history(n.id)
    assert [(v.version, v.action, v.author) for v in history] == [
        (1, "add", "alice"), (2, "edit", "bob"), (3, "edit", "carol"), (4, "approve", "dave")]
    assert all(v.created_at for v in history)
    assert history[1].snapshot["text"] == "Rollbacks start within 15 minutes"
    assert history[1].snapshot["importance"] == "okay" and history[2].snapshot["importance"] == "vital"
    assert store.get(n.id).status == "approved" and store.get(n.id).version == 4
    store.edit(n.id, text="Rollbacks start within 15 minutes", author="bob")  # no change: no version
    assert len(store.history(n.id)) == 4


def test_undo_walks_back_one_action_at_a_time_and_brings_deleted_nuggets_back(store):
    n = store.add("t1", "v1", author="alice")
    store.edit(n.id, text="v2", author="alice")
    store.edit(n.id, text="v3", author="alice")
    assert store.undo(n.id, author="bob").text == "v2"
    assert store.undo(n.id, author="bob").text == "v1"  # undoing again goes further back, not forward
    store.delete(n.id, author="alice")
    with pytest.raises(KeyError):
        store.get(n.id)
    assert store.undo(n.id, author="bob").text == "v1"
    assert store.get(n.id).text == "v1"
    assert [v.action for v in store.history(n.id)] == ["add", "edit", "edit", "undo", "undo", "delete", "undo"]
    store.undo(n.id, author="bob")  # undoing the creation deletes it
    assert store.topic("t1") == []
    with pytest.raises(ValueError, match="nothing to undo"):
        store.undo(n.id, author="bob")


def test_deleted_nuggets_keep_their_history(store):
    n = store.add("t1", "gone soon", author="alice")
    store.delete(n.id, author="bob")
    assert [(v.action, v.author, v.snapshot["deleted"]) for v in store.history(n.id)] == [
        ("add", "alice", False), ("delete", "bob", True)]


def test_add_at_a_position_and_reorder_keep_positions_dense(store):
    a = store.add("t1", "A", author="x")
    b = store.add("t1", "B", author="x")
    c = store.add("t1", "C", author="x", position=0)
    assert texts(store) == ["C", "A", "B"] and [n.position for n in store.topic("t1")] == [0, 1, 2]
    store.reorder("t1", [b.id, a.id, c.id], author="y")
    assert texts(store) == ["B", "A", "C"]
    assert store.history(b.id)[-1].action == "reorder" and store.history(b.id)[-1].author == "y"
    store.undo(b.id, author="y")  # B goes back to where it was (last); the others stay
    assert texts(store) == ["A", "C", "B"]
    with pytest.raises(ValueError, match="each of its nuggets once"):
        store.reorder("t1", [a.id, b.id], author="y")


def test_merge_joins_support_and_undo_restores_the_originals(store):
    a = store.add("t1", "Rollbacks start fast", "okay", author="x", support=[["d1"]])
    b = store.add("t1", "Within 15 minutes", "vital", author="x", support=[["d3"], ["d1"]])
    c = store.add("t1", "Last", author="x")
    m = store.merge([a.id, b.id], author="alice", text="Rollbacks start within 15 minutes")
    assert texts(store) == ["Rollbacks start within 15 minutes", "Last"]
    assert m.importance == "vital" and m.position == 0
    assert [tuple(x.docid for x in g) for g in m.support] == [("d1",), ("d3",)]
    assert store.history(a.id)[-1].action == "merged-into" and store.history(a.id)[-1].detail == {"into": m.id}
    assert store.history(m.id)[0].detail == {"from": [a.id, b.id]}
    store.undo(a.id, author="alice")  # from either side, the whole merge is undone
    assert texts(store) == ["Rollbacks start fast", "Within 15 minutes", "Last"]
    with pytest.raises(KeyError):
        store.get(m.id)
    assert store.get(c.id).position == 2


def test_split_keeps_importance_and_support_and_undo_joins_them_again(store):
    n = store.add("t1", "Rollbacks need no approval and start within 15 minutes", "vital", author="x",
                  support=[["d1"]])
    parts = store.split(n.id, ["Rollbacks need no approval", "Rollbacks start within 15 minutes"], author="bob")
    assert [(p.text, p.importance, p.position) for p in parts] == [
        ("Rollbacks need no approval", "vital", 0), ("Rollbacks start within 15 minutes", "vital", 1)]
    assert all(p.as_nugget().support == (("d1",),) for p in parts)
    store.edit(parts[0].id, text="No approval is needed", author="carol")
    with pytest.raises(ValueError, match="changed since"):
        store.undo(parts[1].id, author="bob")  # the split cannot be undone while a part differs
    store.undo(parts[0].id, author="bob")
    store.undo(parts[1].id, author="bob")
    assert texts(store) == ["Rollbacks need no approval and start within 15 minutes"]


def test_link_adds_one_joint_alternative_with_the_text_hash_and_unlink_removes_it(store):
    n = store.add("t1", "Rollbacks start within 15 minutes", author="x")
    n = store.link(n.id, ["d1"], author="alice")
    n = store.link(n.id, ["d2", "d3"], author="alice")  # d2 and d3 together
    assert n.support == ((Link("d1", text_hash(DOCS["d1"])),),
                         (Link("d2", text_hash(DOCS["d2"])), Link("d3", text_hash(DOCS["d3"]))))
    assert n.as_nugget().support == (("d1",), ("d2", "d3"))
    n = store.unlink(n.id, 0, author="bob")
    assert n.as_nugget().support == (("d2", "d3"),)
    with pytest.raises(IndexError):
        store.unlink(n.id, 5, author="bob")
    with pytest.raises(ValueError, match="no document"):
        store.link(n.id, ["nope"], author="bob")
    assert [v.action for v in store.history(n.id)] == ["add", "link", "link", "unlink"]


def test_check_lists_links_whose_document_changed_or_disappeared(tmp_path):
    bench = make_bench(tmp_path)
    store = NuggetStore(Workspace(bench))
    n = store.add("t1", "Rollbacks start within 15 minutes", author="x", support=[["d1"], ["d3"], ["d2"]])
    rewrite_doc(bench, "d1", "Rollbacks start within 30 minutes now.")
    rewrite_doc(bench, "d3", None)
    problems = NuggetStore(Workspace(bench)).check(Workspace(bench).corpus())
    assert sorted(problems) == [("t1", n.id, "d1", "changed"), ("t1", n.id, "d3", "missing")]
    store = NuggetStore(Workspace(bench))
    store.link(n.id, ["d1"], author="alice")  # linking again confirms the new text
    assert store.check(Workspace(bench).corpus()) == [("t1", n.id, "d3", "missing")]


def test_relevant_documents_come_from_the_selected_grades_best_first(store):
    assert relevant_documents(store.ws, "t1") == ["d1", "d2", "d3"]
    assert relevant_documents(store.ws, "t1", min_grade=2) == ["d1", "d2"]
    store.ws.record(Judgment("t1", "d3", 3, Judge("human", "alice")))  # a person's grade is preferred
    assert relevant_documents(store.ws, "t1") == ["d1", "d3", "d2"]


def test_export_then_import_changes_nothing(store, tmp_path):
    a = store.add("t1", "Rollbacks start within 15 minutes", "vital", author="x", support=[["d1"], ["d2", "d3"]])
    store.add("t1", "No approval is needed", author="x")
    store.approve(a.id, author="y")
    store.add("t2", "The incident commander approves", "vital", author="x", origin="llm")
    path = tmp_path / "out.jsonl"
    write_nuggets(store.export(), path)
    versions = store.ws.connection().execute("SELECT COUNT(*) FROM nugget_versions").fetchone()[0]
    report = store.import_topics(read_nuggets(path), author="again")
    assert (report.added, report.changed, report.removed, report.unchanged) == (0, 0, 0, 3)
    assert report.lines == []
    assert store.ws.connection().execute("SELECT COUNT(*) FROM nugget_versions").fetchone()[0] == versions
    assert store.export() == read_nuggets(path)
    assert read_nuggets(path)[0].query == TOPICS["t1"]


def test_import_shows_additions_changes_and_removals_and_dry_run_writes_nothing(store):
    a = store.add("t1", "Rollbacks start within 15 minutes", "okay", author="x", support=[["d1"]])
    b = store.add("t1", "The cafeteria menu changes", author="x")
    file = [TopicNuggets("t1", (
        Nugget(a.id, "t1", "Rollbacks start within 15 minutes", "vital", (("d1",), ("d3",))),
        Nugget("t1-7", "t1", "No approval is needed"),
    ))]
    dry = store.import_topics(file, author="imp", dry_run=True)
    assert (dry.added, dry.changed, dry.removed, dry.unchanged) == (1, 1, 1, 0)
    assert texts(store) == ["Rollbacks start within 15 minutes", "The cafeteria menu changes"]
    report = store.import_topics(file, author="imp")
    assert report.lines == dry.lines
    assert any(line.startswith(f"~ {a.id}: ") and "importance okay -> vital" in line and "status draft -> approved"
               in line and "support [d1] -> [d1 | d3]" in line for line in report.lines)
    assert f"- {b.id} [okay] The cafeteria menu changes" in report.lines
    assert "+ t1-7 [vital] No approval is needed" in report.lines
    assert texts(store) == ["Rollbacks start within 15 minutes", "No approval is needed"]
    got = store.get(a.id)
    assert got.support[0][0] == Link("d1", text_hash(DOCS["d1"])) and got.importance == "vital"
    assert store.history(a.id)[-1].action == "import" and store.history(a.id)[-1].author == "imp"
    assert store.undo(b.id, author="x").text == "The cafeteria menu changes"  # an import is undoable too


def test_importing_a_file_without_ids_again_matches_by_text(store):
    file = [TopicNuggets("t1", (Nugget("t1-1", "t1", "A fact"), Nugget("t1-2", "t1", "Another fact")))]
    store.import_topics(file, author="imp")
    reordered = [TopicNuggets("t1", (Nugget("t1-1", "t1", "another  FACT"), Nugget("t1-2", "t1", "A fact")))]
    report = store.import_topics(reordered, author="imp")
    assert (report.added, report.removed) == (0, 0)  # matched by text, not by the positional ids
    assert texts(store) == ["another  FACT", "A fact"]


def test_trec_2025_dev_nuggets_import_keeps_all_1255_nuggets_and_their_importance(tmp_path, shared):
    source = shared / "rag" / "rag25-dev-nuggets.jsonl"
    ws = Workspace.init(tmp_path / "bench", topics=str(shared / "rag" / "rag25-topics-dev.tsv"))
    store = NuggetStore(ws)
    report = store.import_topics(read_nuggets(source), author="nist")
    assert (report.added, report.changed, report.removed) == (1255, 0, 0) and report.warnings == []
    stored = [n for ns in store.topics().values() for n in ns]
    assert len(stored) == 1255 and len(store.topics()) == 22
    assert sum(n.importance == "vital" for n in stored) == 925
    assert sum(n.importance == "okay" for n in stored) == 330
    by_topic = {t.qid: t for t in read_nuggets(source)}
    for qid, nuggets in store.topics().items():
        assert [(n.text, n.importance) for n in nuggets] == [(n.text, n.importance) for n in by_topic[qid].nuggets]
    first = store.topic("58")[0]
    assert first.id == "58-1" and first.extra["mapped_sub_narrative"] == '"Key advantages of nuclear energy"'
    out = tmp_path / "out.jsonl"
    write_nuggets(store.export(), out)
    again = store.import_topics(read_nuggets(out), author="nist")
    assert (again.added, again.changed, again.removed, again.unchanged) == (0, 0, 0, 1255)
    again = store.import_topics(read_nuggets(source), author="nist")  # the original file: still nothing to do
    assert again.changes == 0


def test_concurrent_writers_each_get_their_own_version(tmp_path):
    import threading

    bench = make_bench(tmp_path)
    store = NuggetStore(Workspace(bench))
    n = store.add("t1", "start", author="x")
    errors = []

    def work(who: str) -> None:
        try:
            for i in range(10):
                store.edit(n.id, text=f"{who} {i}", author=who)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in ("alice", "bob", "carol")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    history = store.history(n.id)
    assert [v.version for v in history] == list(range(1, 32))
    assert store.get(n.id).text == history[-1].snapshot["text"]


def test_the_store_schema_is_a_new_migration(tmp_path):
    bench = make_bench(tmp_path)
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    assert {"nuggets", "nugget_versions", "nugget_drafts"} <= tables
    from trecbench.store.schema import MIGRATIONS

    assert version == len(MIGRATIONS) >= 2
