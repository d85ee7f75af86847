"""Span links: a nugget's evidence marked as characters of a passage (a sentence), stored with its source span
and hash, kept in history, exported and imported, scored on the benchmark's chunking and another one, and
carried by `corpus update` by the span (mapped, split into a joint group, queued when its text changed)."""
from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from chunkings import S1, passage, two_chunkings, write_lines
from trecbench.evaluation.evidence.chunkings import read_chunking
from trecbench.evaluation.evidence.files import evidence_from_nuggets
from trecbench.evaluation.evidence.recall import evaluate_evidence
from trecbench.nuggets.io import read_nuggets, write_nuggets
from trecbench.nuggets.model import SourceSpan, SpanLink
from trecbench.nuggets.store import NuggetStore
from trecbench.store import Workspace
from trecbench.versions import corpus_changes, update_corpus


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    return two_chunkings(tmp_path)


@pytest.fixture
def bench(tmp_path, files, cli_run) -> Path:
    """A workspace on chunking A (a1 a2 a3 | b1 b2) with topic t1."""
    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\tWhat does a release need?\n")
    path = tmp_path / "bench"
    result = cli_run("init", path, "--corpus", files["a"], "--topics", topics)
    assert result.exit_code == 0, result.output
    return path


def add(bench: Path, text: str = "Tests must pass before release") -> tuple[NuggetStore, str]:
    store = NuggetStore(Workspace(bench))
    return store, store.add("t1", text, "vital", author="ann").id


def test_a_span_link_records_its_characters_their_source_span_and_both_hashes(bench):
    store, nid = add(bench)
    a3 = S1[42:69]  # "The rollback plan is ready."
    nugget = store.link(nid, ["a3"], spans=[(4, 17)], author="ann")
    (link,), = nugget.support
    assert (link.docid, link.start, link.end) == ("a3", 4, 17)
    assert link.doc_hash == sha(a3) and link.span_hash == sha(a3[4:17]) == sha("rollback plan")
    assert link.source == SourceSpan("S1", 46, 59) and S1[46:59] == "rollback plan"
    assert store.get(nid).support == nugget.support  # read back from the store as written
    last = store.history(nid)[-1]
    assert last.action == "link" and last.detail == {"docids": ["a3"], "spans": [[4, 17]]}
    assert last.snapshot["support"] == [[{"docid": "a3", "doc_hash": sha(a3), "start": 4, "end": 17,
                                          "span_hash": sha("rollback plan"), "source_id": "S1", "start_char": 46,
                                          "end_char": 59}]]


def test_a_whole_passage_link_is_stored_as_before_spans_existed(bench):
    store, nid = add(bench)
    store.link(nid, ["a1"], author="ann")
    conn = sqlite3.connect(Path(bench) / "bench.sqlite")
    (stored,), = conn.execute("SELECT support_json FROM nuggets WHERE id = ?", (nid,)).fetchall()
    assert json.loads(stored) == [[{"docid": "a1", "doc_hash": sha(S1[0:24])}]]


def test_two_spans_of_one_passage_are_two_links_and_a_joint_source_joins_an_alternative(bench):
    store, nid = add(bench)
    store.link(nid, ["a3"], spans=[(0, 12)], author="ann")
    store.link(nid, ["a3"], spans=[(13, 27)], author="ann")
    nugget = store.link(nid, ["a2"], alternative=0, author="bob")
    assert [[(x.docid, x.start, x.end) for x in g] for g in nugget.support] == [
        [("a3", 0, 12), ("a2", None, None)], [("a3", 13, 27)]]
    assert store.history(nid)[-1].detail == {"docids": ["a2"], "alternative": 0}
    assert store.alternative_of(nid, "a3") == 0
    with pytest.raises(ValueError, match="ends after the text"):
        store.link(nid, ["a3"], spans=[(3, 28)], author="ann")
    with pytest.raises(ValueError, match="0 <= start < end"):
        store.link(nid, ["a3"], spans=[(5, 5)], author="ann")
    with pytest.raises(IndexError, match="no number 7"):
        store.link(nid, ["a1"], alternative=7, author="ann")
    with pytest.raises(ValueError, match="no document"):
        store.link(nid, ["zz"], spans=[(0, 2)], author="ann")


def test_undo_takes_a_span_link_back(bench):
    store, nid = add(bench)
    store.link(nid, ["a1"], author="ann")
    store.link(nid, ["a3"], spans=[(0, 12)], author="ann")
    assert [[x.key for x in g] for g in store.undo(nid, author="ann").support] == [[("a1", None, None)]]


def test_a_nuggets_file_carries_spans_beside_support_and_reads_back_unchanged(bench, tmp_path):
    store, nid = add(bench)
    store.link(nid, ["a1"], author="ann")
    store.link(nid, ["a3"], spans=[(4, 17)], author="ann")
    out = tmp_path / "nuggets.jsonl"
    write_nuggets(store.export(), out)
    (record,) = json.loads(out.read_text())["nuggets"]
    assert record["support"] == [["a1"], ["a3"]]
    assert record["spans"] == [[None], [{"start": 4, "end": 17, "source_id": "S1", "start_char": 46,
                                         "end_char": 59, "hash": sha("rollback plan")}]]
    (topic,) = read_nuggets(out)
    (nugget,) = topic.nuggets
    span = nugget.support[1][0]
    assert isinstance(span, SpanLink) and (span.start, span.end) == (4, 17)
    report = store.import_topics([topic], author="import")
    assert report.changes == 0 and report.unchanged == 1
    # the span changed in the file: a change, shown with its characters
    record["spans"][1][0].update(start=0, end=12)
    out.write_text(json.dumps({"qid": "t1", "nuggets": [record]}) + "\n")
    report = store.import_topics(read_nuggets(out), author="import")
    assert report.changed == 1 and "a3[4:17]" in report.lines[0] and "a3[0:12]" in report.lines[0]


def test_a_nuggets_file_without_spans_reads_as_before_and_bad_spans_are_input_errors(tmp_path):
    from trecbench.errors import InputError

    plain = write_lines(tmp_path / "plain.jsonl", [{"qid": "t1", "nuggets": [{"text": "x", "support": [["d1"]]}]}])
    (topic,) = read_nuggets(plain)
    assert topic.nuggets[0].support == (("d1",),) and type(topic.nuggets[0].support[0][0]) is str
    assert "spans" not in topic.nuggets[0].as_dict()
    bad = write_lines(tmp_path / "bad.jsonl", [
        {"qid": "t1", "nuggets": [{"text": "x", "support": [["d1"]], "spans": [[{"start": 5, "end": 2}]]}]},
        {"qid": "t2", "nuggets": [{"text": "x", "support": [["d1", "d2"]], "spans": [[None]]}]}])
    with pytest.raises(InputError) as caught:
        read_nuggets(bad)
    assert f"{bad}:1: topic 't1', nugget 1: 'spans' must be lists beside 'support'" in str(caught.value)
    assert f"{bad}:2: topic 't2', nugget 1: 'spans' must be lists beside 'support'" in str(caught.value)


def test_the_cli_links_a_span_and_a_joint_source(bench, cli_run):
    store, nid = add(bench)
    result = cli_run("nuggets", "link", "-w", bench, "--topic", "t1", "--nugget", nid, "a3", "--span", "4:17")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{nid}\t[a3[4:17]]\n"
    result = cli_run("nuggets", "link", "-w", bench, "--topic", "t1", "--nugget", nid, "a2", "--joint-with", "a3",
                     "--author", "bob")
    assert result.stdout == f"{nid}\t[a3[4:17]+a2]\n"
    assert store.history(nid)[-1].author == "bob"
    listed = cli_run("nuggets", "list", "-w", bench).stdout
    assert "\t[a3[4:17]+a2]" in listed
    exported = json.loads(cli_run("nuggets", "export", "-w", bench).stdout)
    assert exported["nuggets"][0]["spans"][0][0]["start"] == 4
    for args, message in [(("--span", "9:3"), "is not START:END"), (("--span", "0:99"), "ends after the text"),
                          (("--joint-with", "b2"), "no support alternative with 'b2'")]:
        result = cli_run("nuggets", "link", "-w", bench, "--topic", "t1", "--nugget", nid, "a1", *args)
        assert result.exit_code == 2 and message in result.output, result.output
    result = cli_run("nuggets", "link", "-w", bench, "--topic", "t2", "--nugget", nid, "a1")
    assert result.exit_code == 2 and "is not a nugget of topic 't2'" in result.output
    result = cli_run("nuggets", "link", "-w", bench, "--topic", "t1", "--nugget", "t1-n99", "a1")
    assert result.exit_code == 2 and "has no nugget 't1-n99'" in result.output


# ---- scoring ----------------------------------------------------------------------------------------------

def span_evidence(bench: Path):
    """t1: N1 = the span 'rollback plan' of a3 (S1 46-59, inside c2); N2 = the whole of a3 (needs c2 and c3)."""
    store = NuggetStore(Workspace(bench))
    n1 = store.add("t1", "A rollback plan", "vital", author="ann").id
    n2 = store.add("t1", "The rollback plan is ready", "vital", author="ann").id
    store.link(n1, ["a3"], spans=[(4, 17)], author="ann")
    store.link(n2, ["a3"], author="ann")
    return evidence_from_nuggets(store.export())


def recall(items, run: Path, chunking=None) -> float:
    scores = evaluate_evidence(items, [run], k=10, chunking=chunking)
    return float(scores.frame.iloc[0]["EvidenceRecall@10"])


def test_a_span_link_is_covered_by_a_passage_of_another_chunking_that_holds_the_span(bench, files, tmp_path):
    items = span_evidence(bench)
    chunking = read_chunking(files["a"], files["b"])
    only_c2 = tmp_path / "c2.run"
    only_c2.write_text("t1 Q0 c2 1 1 sys\n")
    both = tmp_path / "both.run"
    both.write_text("t1 Q0 c2 1 2 sys\nt1 Q0 c3 2 1 sys\n")
    only_c3 = tmp_path / "c3.run"
    only_c3.write_text("t1 Q0 c3 1 1 sys\n")
    assert recall(items, only_c2, chunking) == 0.5  # the span, not the whole of a3
    assert recall(items, both, chunking) == 1.0
    assert recall(items, only_c3, chunking) == 0.0  # c3 holds part of a3, none of the span


def test_on_the_benchmarks_own_chunking_a_span_link_is_covered_by_its_passage(bench, tmp_path):
    items = span_evidence(bench)
    a3 = tmp_path / "a3.run"
    a3.write_text("t1 Q0 a3 1 1 sys\n")
    a2 = tmp_path / "a2.run"
    a2.write_text("t1 Q0 a2 1 1 sys\n")
    assert recall(items, a3) == 1.0
    assert recall(items, a2) == 0.0


def test_two_spans_of_one_passage_are_scored_apart_on_another_chunking(bench, files, tmp_path):
    store = NuggetStore(Workspace(bench))
    n1 = store.add("t1", "Code review", "vital", author="ann").id
    n2 = store.add("t1", "Tests pass", "vital", author="ann").id
    # a long passage of the evidence chunking, cut by chunking B: the first sentence in c1, the second in c2
    wide = write_lines(Path(tmp_path) / "wide.jsonl", [passage("w1", "S1", 0, 69)])
    store.link(n1, ["a1"], spans=[(0, 11)], author="ann")
    store.link(n2, ["a2"], spans=[(0, 5)], author="ann")
    items = [type(i)(i.qid, i.id, tuple(tuple(SpanLink("w1", d.start + {"a1": 0, "a2": 25}[d.docid],
                                                       d.end + {"a1": 0, "a2": 25}[d.docid]) for d in g)
                                         for g in i.any_of), i.text, i.importance)
             for i in evidence_from_nuggets(store.export())]
    chunking = read_chunking(wide, files["b"])
    c3 = tmp_path / "c3.run"
    c3.write_text("t1 Q0 c3 1 1 sys\n")
    c1 = tmp_path / "c1.run"
    c1.write_text("t1 Q0 c1 1 1 sys\n")
    assert recall(items, c1, chunking) == 1.0  # c1 = S1 0-42 holds both spans
    assert recall(items, c3, chunking) == 0.0
    only_first = [items[0], type(items[1])("t1", "N2", ((SpanLink("w1", 42, 50),),))]
    assert recall(only_first, c1, chunking) == 0.5  # w1's first span is in c1, the other (42-50) is not


# ---- corpus update ----------------------------------------------------------------------------------------

def test_corpus_update_carries_a_span_link_by_its_span_mapped_split_or_queued(bench, files, tmp_path):
    store = NuggetStore(Workspace(bench))
    nid = store.add("t1", "Release checks", "vital", author="ann").id
    store.link(nid, ["a3"], spans=[(4, 17)], author="ann")   # S1 46-59: inside c2
    store.link(nid, ["a3"], spans=[(10, 25)], author="ann")  # S1 52-67: cut between c2 and c3
    store.link(nid, ["b1"], spans=[(4, 11)], author="ann")   # S2 4-11 "the on-": inside d1
    store.link(nid, ["a1"], author="ann")                    # the whole of a1: now part of c1
    report = update_corpus(bench, str(files["b"]), sources=str(files["sources"]))
    assert report.balanced()
    assert report.counts["link"] == {"carried": 0, "mapped": 3, "split": 1, "changed": 0, "retired": 0}
    support = store.get(nid).support
    assert [[(x.docid, x.start, x.end) for x in g] for g in support] == [
        [("c2", 4, 17)], [("c2", 10, 18), ("c3", 0, 7)], [("d1", 4, 11)], [("c1", None, None)]]
    c2, c3 = support[1]
    assert c2.source == SourceSpan("S1", 52, 60) and c3.source == SourceSpan("S1", 60, 67)
    assert c2.span_hash == sha(S1[52:60]) and c3.span_hash == sha(S1[60:67])
    assert support[0][0].span_hash == sha("rollback plan")
    split = [o for o in report.items if o.outcome == "split"]
    assert [o.ref for o in split] == [f"{nid}#1@10:25"] and split[0].targets == ("c2", "c3")
    assert store.history(nid)[-1].action == "corpus-update"


def test_corpus_update_queues_a_span_link_whose_text_changed_and_carries_one_whose_passage_did_not(
        bench, files, tmp_path):
    store = NuggetStore(Workspace(bench))
    nid = store.add("t1", "Release checks", "vital", author="ann").id
    store.link(nid, ["a3"], spans=[(0, 26)], author="ann")  # "The rollback plan is ready": edited below
    store.link(nid, ["a1"], spans=[(0, 11)], author="ann")  # "Code review": its passage unchanged
    edited = S1.replace("rollback plan", "recovery plan")
    sources = write_lines(tmp_path / "sources2.jsonl", [{"id": "S1", "text": edited},
                                                        {"id": "S2", "text": json.loads(
                                                            files["sources"].read_text().splitlines()[1])["text"]}])
    corpus = write_lines(tmp_path / "a2.jsonl", [
        {"id": d, "contents": edited[s:e], "source_id": "S1", "start_char": s, "end_char": e}
        for d, s, e in (("a1", 0, 24), ("a2", 25, 41), ("a3", 42, 69))])
    report = update_corpus(bench, str(corpus), sources=str(sources))
    assert report.balanced()
    assert report.counts["link"] == {"carried": 1, "mapped": 0, "split": 0, "changed": 1, "retired": 0}
    (change,) = [c for c in corpus_changes(bench) if c.kind == "link"]
    assert change.ref == f"{nid}#0@0:26" and change.old_text == "The rollback plan is ready"
    assert change.new_text == "The recovery plan is ready" and change.diff == "The [-rollback-] {+recovery+} plan is ready"
    assert change.new_docids == ("a3",)
    assert [[x.key for x in g] for g in store.get(nid).support] == [[("a3", 0, 26)], [("a1", 0, 11)]]


def test_a_workspace_of_the_schema_before_spans_upgrades_and_keeps_its_links(bench):
    from trecbench.store.schema import MIGRATIONS, expected_tables

    store, nid = add(bench)
    store.link(nid, ["a1"], author="ann")
    db = Path(bench) / "bench.sqlite"
    before_spans = 6  # migration 7 is the span links'; 8 (skips) and later came after it
    conn = sqlite3.connect(db)
    for table in sorted(set(expected_tables(len(MIGRATIONS))) - set(expected_tables(before_spans))):
        conn.execute(f"DROP TABLE {table}")  # a database of schema 6 has none of the later tables either
    conn.execute(f"PRAGMA user_version = {before_spans}")
    conn.commit()
    conn.close()
    store = NuggetStore(Workspace(bench))
    assert [[x.key for x in g] for g in store.get(nid).support] == [[("a1", None, None)]]
    assert store.link(nid, ["a2"], spans=[(0, 5)], author="ann").support[1][0].span_hash == sha("Tests")
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert (db.parent / f"bench.sqlite.v{before_spans}.bak").is_file()


def test_importing_a_span_its_passage_cannot_hold_is_an_input_error_and_imports_nothing(bench, tmp_path, cli_run):
    store, nid = add(bench)
    bad = write_lines(tmp_path / "bad.jsonl", [{"qid": "t1", "nuggets": [
        {"text": "x", "support": [["a1"]]},
        {"text": "y", "support": [["a3"]], "spans": [[{"start": 5, "end": 999}]]}]}])
    result = cli_run("nuggets", "import", bad, "-w", bench)
    assert result.exit_code == 2
    assert f"{bad}: span 5:999 ends after the text of 'a3' (27 characters); nothing was imported" in result.stderr
    assert [n.id for n in store.topic("t1")] == [nid]


def test_eval_evidence_scores_a_workspaces_span_links_on_another_chunking_from_the_cli(bench, files, tmp_path,
                                                                                       cli_run):
    span_evidence(bench)
    run = tmp_path / "c2.run"
    run.write_text("t1 Q0 c2 1 1 sys\n")
    result = cli_run("eval", "evidence", "-w", bench, "--contexts", run, "--corpus-spans", files["b"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["run", "EvidenceRecall@10", "CompleteEvidence@10", "IDRecall@10"]
    assert lines[1].split()[:3] == ["sys", "0.5000", "0.0000"]  # the span is in c2, the whole of a3 is not
    exported = tmp_path / "nuggets.jsonl"
    assert cli_run("nuggets", "export", "-w", bench, "-o", exported).exit_code == 0
    result = cli_run("eval", "evidence", "--nuggets", exported, "--evidence-spans", files["a"], "--contexts", run,
                     "--corpus-spans", files["b"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split()[:3] == ["sys", "0.5000", "0.0000"]  # the file keeps the span
