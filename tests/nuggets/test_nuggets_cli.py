"""`trecbench nuggets list/export/import` and `trecbench check` through the CLI."""
from __future__ import annotations

import json

from nugget_bench import make_bench, rewrite_doc
from trecbench.nuggets import read_nuggets
from trecbench.nuggets.store import NuggetStore
from trecbench.store import Judge, Judgment, Workspace, text_hash


def seeded(tmp_path):
    bench = make_bench(tmp_path)
    store = NuggetStore(Workspace(bench))
    a = store.add("t1", "Rollbacks start within 15 minutes", "vital", author="alice", support=[["d1"], ["d2", "d3"]])
    store.add("t1", "No approval is needed", author="alice")
    store.add("t2", "The incident commander approves access", "vital", author="bob", support=[["d4"]])
    return bench, a


def test_list_prints_each_topic_in_order_with_support(tmp_path, cli_run):
    bench, a = seeded(tmp_path)
    r = cli_run("nuggets", "list", "-w", bench, "--topic", "t1")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "t1: 2 nuggets, 1 vital, 0 approved - How fast must a bad payments API release be rolled back?"
    assert lines[1] == f"  {a.id}\tvital\tdraft\thuman\tRollbacks start within 15 minutes\t[d1 | d2+d3]"
    assert "t2" not in r.stdout


def test_export_then_import_through_the_cli_is_a_no_op(tmp_path, cli_run):
    bench, _ = seeded(tmp_path)
    out = tmp_path / "nuggets.jsonl"
    r = cli_run("nuggets", "export", "-w", bench, "-o", out)
    assert r.exit_code == 0, r.output
    first = json.loads(out.read_text().splitlines()[0])
    assert first["qid"] == "t1" and first["query"].startswith("How fast")
    assert first["nuggets"][0] == {"id": "t1-n1", "text": "Rollbacks start within 15 minutes", "importance": "vital",
                                   "support": [["d1"], ["d2", "d3"]], "status": "draft", "origin": "human"}
    r = cli_run("nuggets", "import", out, "-w", bench)
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    assert "0 added, 0 changed, 0 removed, 3 unchanged" in r.stderr
    again = tmp_path / "again.jsonl"
    cli_run("nuggets", "export", "-w", bench, "-o", again)
    assert again.read_text() == out.read_text()


def test_import_shows_the_changes_and_dry_run_applies_none(tmp_path, cli_run):
    bench, a = seeded(tmp_path)
    path = tmp_path / "edited.jsonl"
    path.write_text(json.dumps({"qid": "t1", "query": "q", "nuggets": [
        {"text": "Rollbacks start within 15 minutes", "importance": "okay"},
        {"text": "Rollbacks are announced in the incident channel", "importance": "vital"}]}) + "\n")
    r = cli_run("nuggets", "import", path, "-w", bench, "--dry-run")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        "- t1-n2 [okay] No approval is needed",
        "~ t1-n1 (file id t1-1): importance vital -> okay; status draft -> approved; origin human -> import; "
        "support [d1 | d2+d3] -> []",
        "+ t1-2 [vital] Rollbacks are announced in the incident channel"]
    assert "1 added, 1 changed, 1 removed, 0 unchanged (dry run: nothing was changed)" in r.stderr
    assert len(NuggetStore(Workspace(bench)).topic("t1")) == 2
    r = cli_run("nuggets", "import", path, "-w", bench, "--author", "carol")
    assert r.exit_code == 0
    store = NuggetStore(Workspace(bench))
    assert [n.text for n in store.topic("t1")] == ["Rollbacks start within 15 minutes",
                                                   "Rollbacks are announced in the incident channel"]
    assert store.history(a.id)[-1].author == "carol"
    assert [n.id for n in store.topic("t2")] == ["t2-n1"]  # topics not in the file are left alone


def test_a_bad_nuggets_file_is_reported_with_its_line_and_exit_2(tmp_path, cli_run):
    bench, _ = seeded(tmp_path)
    path = tmp_path / "bad.jsonl"
    path.write_text('{"qid": "t1", "nuggets": [{"text": "x", "importance": "high"}]}\n')
    r = cli_run("nuggets", "import", path, "-w", bench)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"{path}:1: topic 't1', nugget 1: importance 'high' is not one of vital, okay"


def test_importing_the_trec_2025_dev_nuggets_keeps_every_nugget(tmp_path, cli_run, shared):
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--topics", shared / "rag" / "rag25-topics-dev.tsv").exit_code == 0
    source = shared / "rag" / "rag25-dev-nuggets.jsonl"
    r = cli_run("nuggets", "import", source, "-w", bench)
    assert r.exit_code == 0, r.output
    assert "22 topic(s); 1255 added, 0 changed, 0 removed, 0 unchanged" in r.stderr
    out = tmp_path / "out.jsonl"
    cli_run("nuggets", "export", "-w", bench, "-o", out)
    exported = read_nuggets(out)
    original = read_nuggets(source)
    assert sum(len(t.nuggets) for t in exported) == 1255
    assert sorted((t.qid, n.text, n.importance, n.extra["source"]) for t in exported for n in t.nuggets) == sorted(
        (t.qid, n.text, n.importance, n.extra["source"]) for t in original for n in t.nuggets)
    r = cli_run("nuggets", "import", out, "-w", bench)
    assert "0 added, 0 changed, 0 removed, 1255 unchanged" in r.stderr


def test_check_lists_changed_and_missing_links_and_judged_documents(tmp_path, cli_run):
    bench, a = seeded(tmp_path)
    r = cli_run("check", "-w", bench)
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    ws = Workspace(bench)
    ws.record(Judgment("t1", "d2", 2, Judge("human", "alice"), doc_hash=text_hash(
        "Release policy. A failed release of the payments API is rolled back quickly. The cafeteria menu "
        "changes every Monday.")))
    ws.record(Judgment("t2", "d4", 3, Judge("human", "alice"), doc_hash=text_hash("an older text of d4")))
    rewrite_doc(bench, "d1", "Rollbacks now start within 30 minutes.")
    rewrite_doc(bench, "d3", None)
    r = cli_run("check", "-w", bench)
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [f"nugget\tt1\t{a.id}\td1\tchanged", f"nugget\tt1\t{a.id}\td3\tmissing",
                                     "judgment\tt2\td4\tchanged\talice"]
    assert "2 of 4 evidence link(s) and 1 of 2 judged document(s)" in r.stderr
