"""`nuggets draft --extractive`: deterministic, no model, the key sentence first with every document stating it."""
from __future__ import annotations

import sqlite3

from rapidfuzz import fuzz

from nugget_bench import make_bench
from trecbench.nuggets.drafting.extractive import ExtractiveSettings, draft_topic, split_sentences, terms
from trecbench.nuggets.store import NuggetStore
from trecbench.store import Workspace

KEY = "Payments API rollbacks must start within 15 minutes of a failed release."
DOCS = {
    "e1": f"{KEY} The release manager tracks every deploy in the change calendar.",
    "e2": f"Our deployment handbook covers many services. {KEY} Dashboards follow a slower process.",
    "e3": "Payments API rollbacks must begin within 15 minutes of a failed release. Office hours are 9 to 5.",
    "e4": "No approval is needed to roll back a failed payments release. The on-call engineer decides alone.",
    "e5": "The cafeteria menu changes every Monday. Every payments rollback is logged in the incident channel.",
    "e6": "Office plants are watered on Fridays by the facilities team.",
}
TOPICS = {"r1": "How quickly must a failed payments release be rolled back, and who approves the rollback?",
          "r2": "Where are office plants watered?"}
GRADES = {("r1", "e1"): 3, ("r1", "e2"): 2, ("r1", "e3"): 2, ("r1", "e4"): 3, ("r1", "e5"): 1, ("r1", "e6"): 0}


def bench(tmp_path):
    return make_bench(tmp_path, DOCS, TOPICS, GRADES)


def test_the_key_sentence_comes_first_supported_by_every_document_that_states_it():
    docs = [(d, DOCS[d]) for d in ("e1", "e4", "e2", "e3", "e5")]
    nuggets = draft_topic(TOPICS["r1"], docs)
    first = nuggets[0]
    assert first.text == KEY
    assert first.support == (("e1",), ("e2",), ("e3",))  # e3 says "begin": a near-duplicate, merged
    assert first.importance == "vital" and first.origin == "extractive" and first.status == "draft"
    texts = [n.text for n in nuggets]
    assert "No approval is needed to roll back a failed payments release." in texts
    assert not any("cafeteria" in t or "Office hours" in t for t in texts)  # nothing about the topic
    for i, a in enumerate(texts):  # near-duplicates were merged, not listed twice
        assert all(fuzz.ratio(a.lower(), b.lower()) < 85 for b in texts[i + 1:])
    assert sum(n.importance == "vital" for n in nuggets) == -(-len(nuggets) // 3)  # the top third


def test_extractive_drafts_are_deterministic():
    docs = [(d, DOCS[d]) for d in ("e1", "e4", "e2", "e3", "e5")]
    assert draft_topic(TOPICS["r1"], docs) == draft_topic(TOPICS["r1"], docs)
    short = draft_topic(TOPICS["r1"], docs, ExtractiveSettings(keep=2))
    assert [n.text for n in short] == [n.text for n in draft_topic(TOPICS["r1"], docs)[:2]]


def test_sentences_and_terms():
    assert split_sentences("One is here. Two, e.g. this one! 3 more?\n\n- a bullet point") == [
        "One is here.", "Two, e.g. this one!", "3 more?", "a bullet point"]
    assert terms("Who approves the Rollbacks?") == ["approve", "rollback"]


def test_the_command_drafts_each_topic_without_a_model_and_a_rerun_skips_it(tmp_path, cli_run):
    path = bench(tmp_path)
    r = cli_run("nuggets", "draft", "-w", path, "--extractive", "--keep", "3")
    assert r.exit_code == 0, r.output
    assert "drafted 1 topic(s) with extractive: 3 nuggets; 1 complete, 0 incomplete" in r.stdout
    assert "1 topic(s) have no judged-relevant document: r2" in r.stderr
    store = NuggetStore(Workspace(path))
    nuggets = store.topic("r1")
    assert [n.text for n in nuggets][0] == KEY and len(nuggets) == 3
    assert {(n.origin, n.status, n.updated_by) for n in nuggets} == {("extractive", "draft", "extractive")}
    assert nuggets[0].support[0][0].doc_hash is not None
    with sqlite3.connect(path / "bench.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0] == 0
        assert conn.execute("SELECT qid, drafter, status FROM nugget_drafts").fetchall() == [
            ("r1", "extractive", "complete")]
    r = cli_run("nuggets", "draft", "-w", path, "--extractive")
    assert "1 skipped as already complete" in r.stdout
    assert [n.id for n in NuggetStore(Workspace(path)).topic("r1")] == [n.id for n in nuggets]


def test_a_redraft_replaces_untouched_drafts_and_keeps_peoples_edits(tmp_path, cli_run):
    path = bench(tmp_path)
    cli_run("nuggets", "draft", "-w", path, "--extractive", "--keep", "3")
    store = NuggetStore(Workspace(path))
    original = store.topic("r1")[1]
    edited = store.edit(original.id, text="Rollbacks need no approval", author="alice")
    r = cli_run("nuggets", "draft", "-w", path, "--extractive", "--keep", "3", "--redraft")
    assert r.exit_code == 0, r.output
    now = store.topic("r1")
    # the edited one stays; its machine version is not drafted again, and --keep 3 holds for the topic
    assert edited.id in [n.id for n in now] and len(now) == 3
    assert sum(n.text == KEY for n in now) == 1
    assert original.text not in [n.text for n in now]


def test_a_nugget_a_person_deleted_stays_deleted_after_a_redraft(tmp_path, cli_run):
    path = bench(tmp_path)
    cli_run("nuggets", "draft", "-w", path, "--extractive", "--keep", "3")
    store = NuggetStore(Workspace(path))
    gone = store.topic("r1")[0]
    store.delete(gone.id, author="alice")
    assert cli_run("nuggets", "draft", "-w", path, "--extractive", "--keep", "3", "--redraft").exit_code == 0
    texts = [n.text for n in store.topic("r1")]
    assert gone.text == KEY and KEY not in texts and len(texts) == 2


def test_merged_and_split_nuggets_are_not_drafted_again(tmp_path, cli_run):
    path = bench(tmp_path)
    cli_run("nuggets", "draft", "-w", path, "--extractive", "--min-grade", "1", "--keep", "4")
    store = NuggetStore(Workspace(path))
    first, second, third, _ = store.topic("r1")
    merged = store.merge([first.id, second.id], author="alice", text="Roll back within 15 minutes, no approval")
    parts = store.split(third.id, ["Part one of it", "Part two of it"], author="alice")
    assert cli_run("nuggets", "draft", "-w", path, "--extractive", "--min-grade", "1", "--keep", "4", "--redraft").exit_code == 0
    now = store.topic("r1")
    texts = [n.text for n in now]
    assert not {first.text, second.text, third.text} & set(texts)
    assert {merged.id, *(p.id for p in parts)} <= {n.id for n in now} and len(now) == 4


def test_a_second_drafter_replaces_the_first_ones_drafts_vital_first_within_keep(tmp_path, cli_run):
    from trecbench.nuggets.model import Nugget

    path = bench(tmp_path)
    store = NuggetStore(Workspace(path))
    model = [Nugget(f"m{i}", "r1", f"Model nugget number {i}", "vital" if i < 2 else "okay", (("e1",),), "draft",
                    "llm") for i in range(5)]
    store.replace_drafts("r1", model, author="model:m", keep=5)
    kept = store.edit(store.topic("r1")[4].id, text="An okay nugget a person rewrote", author="alice")
    r = cli_run("nuggets", "draft", "-w", path, "--extractive", "--keep", "3")
    assert r.exit_code == 0, r.output
    now = store.topic("r1")
    assert len(now) == 3 and kept.id in [n.id for n in now]  # the model's untouched drafts are gone
    assert not any(n.text.startswith("Model nugget") for n in now)
    assert now[0].text == KEY and now[0].importance == "vital"  # vital first, before the person's okay one
    importances = [n.importance for n in now]
    assert importances == sorted(importances, key=lambda i: i != "vital")
