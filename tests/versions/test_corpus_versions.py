"""Corpus versions through the CLI on the sample's three versions: init registers v1, `corpus update` accounts
for every judgment and nugget link (every count and the sums), the qrels follow the current version."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from trecbench.demo import sample_dir
from trecbench.nuggets.store import NuggetStore
from trecbench.sources import check_spans, read_spans
from paths import ROOT

from trecbench.errors import InputError
from trecbench.store import Judge, Judgment, Workspace, text_hash
from trecbench.versions import corpus_changes, corpus_versions, update_corpus, version_passages

SAMPLE = sample_dir()
VERSIONS = SAMPLE / "versions"
EDITED = {"HB-RB-01", "HB-ACC-04", "HB-SEC-03"}  # the v2 passages holding a sentence v3 changed
REMOVED = ("HB-VEN", "HB-ONB")
MERGED = {"HB-REL-05", "HB-REL-06"}


def qrels_docids() -> list[tuple[str, str]]:
    return [(line.split()[0], line.split()[2]) for line in (SAMPLE / "qrels.txt").read_text().splitlines()
            if line.strip()]


def table(output: str) -> dict[str, dict[str, int]]:
    """The account `corpus update` prints: {kind: {outcome or total/before: n}}."""
    lines = output.splitlines()
    head = lines[1].split("\t")
    assert head == ["kind", "carried", "mapped", "split", "changed", "retired", "total", "before"]
    rows = {}
    for line in lines[2:4]:
        cells = line.split("\t")
        rows[cells[0]] = dict(zip(head[1:], map(int, cells[1:])))
    return rows


def links_of(bench: Path) -> list[tuple[str, str, str]]:
    """(qid, nugget id, docid) of every link of every live nugget."""
    return [(qid, n.id, link.docid) for qid, topic in NuggetStore(Workspace(bench)).topics().items() for n in topic
            for group in n.support for link in group]


def expect(items, outcome_of) -> dict[str, int]:
    counts = {o: 0 for o in ("carried", "mapped", "split", "changed", "retired")}
    for item in items:
        counts[outcome_of(item)] += 1
    return {**counts, "total": len(items), "before": len(items)}


@pytest.fixture
def bench(tmp_path, cli_run) -> Path:
    """A workspace on the sample's v1 with the sample qrels and nuggets imported."""
    path = tmp_path / "bench"
    assert cli_run("init", path, "--corpus", VERSIONS / "v1.jsonl", "--topics", SAMPLE / "topics.tsv").exit_code == 0
    assert cli_run("qrels", "import", SAMPLE / "qrels.txt", "-w", path, "--judge", "nist").exit_code == 0
    assert cli_run("nuggets", "import", SAMPLE / "nuggets.jsonl", "-w", path).exit_code == 0
    return path


def update(cli_run, bench: Path, version: str, sources: str, *extra: str):
    result = cli_run("corpus", "update", "-w", bench, VERSIONS / version, "--sources", VERSIONS / sources, *extra)
    assert result.exit_code == 0, result.output
    assert "sums hold: carried + mapped + split + changed + retired = before" in result.stdout
    return result


def test_the_sample_versions_are_what_the_script_writes_and_their_spans_hold(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("make_sample_versions", ROOT / "scripts" / "make_sample_versions.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(script, "OUT", tmp_path)
    script.main()
    names = ["sources.jsonl", "sources.v3.jsonl", "v1.jsonl", "v2.jsonl", "v3.jsonl"]
    assert sorted(p.name for p in VERSIONS.iterdir() if p.suffix == ".jsonl") == names
    for name in names:
        assert (tmp_path / name).read_bytes() == (VERSIONS / name).read_bytes(), name
    v1 = [json.loads(line) for line in (VERSIONS / "v1.jsonl").read_text().splitlines()]
    corpus = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    assert [{k: r[k] for k in ("id", "title", "contents")} for r in v1] == corpus  # the 170 passages as they are
    for corpus_file, sources in (("v1.jsonl", "sources.jsonl"), ("v2.jsonl", "sources.jsonl"),
                                 ("v3.jsonl", "sources.v3.jsonl")):
        check_spans(VERSIONS / corpus_file, read_spans(VERSIONS / corpus_file), VERSIONS / sources)
    sources = [json.loads(line) for line in (VERSIONS / "sources.jsonl").read_text().splitlines()]
    assert len(sources) == 15 and sources[0]["id"] == "HB-REL"
    assert sources[0]["text"].startswith(corpus[0]["contents"] + "\n\n" + corpus[1]["contents"])
    v2 = [json.loads(line)["id"] for line in (VERSIONS / "v2.jsonl").read_text().splitlines()]
    assert "HB-REL-05+06" in v2 and "HB-REL-05" not in v2 and "HB-REL-02a" in v2 and "HB-REL-02b" in v2
    v3 = [json.loads(line)["id"] for line in (VERSIONS / "v3.jsonl").read_text().splitlines()]
    assert {d for d in v3 if d.endswith("-r3")} == {d + "-r3" for d in EDITED}
    assert not [d for d in v3 if d.startswith(REMOVED)]


def test_updating_the_sample_from_v1_to_v2_then_v3_accounts_for_every_judgment_and_link(bench, cli_run, caplog):
    judged = qrels_docids()
    links = links_of(bench)

    def v2_outcome(item):
        docid = item[-1]
        return "split" if docid.endswith("-02") else "mapped" if docid in MERGED else "carried"

    # a dry run prints the account and writes nothing
    toml = (bench / "trecbench.toml").read_bytes()
    dry = update(cli_run, bench, "v2.jsonl", "sources.jsonl", "--dry-run")
    assert "dry run: nothing was written" in dry.stdout
    assert (bench / "trecbench.toml").read_bytes() == toml and [v.name for v in corpus_versions(bench)] == ["v1"]
    done = update(cli_run, bench, "v2.jsonl", "sources.jsonl")
    assert table(done.stdout) == table(dry.stdout) == {
        "judgments": expect(judged, v2_outcome), "nugget links": expect(links, v2_outcome)}
    counts = table(done.stdout)
    assert counts["judgments"]["split"] == 32 and counts["judgments"]["mapped"] == 7
    assert counts["nugget links"]["split"] == 28 and counts["nugget links"]["carried"] == 64
    assert "review pool corpus-v2-review" in done.stdout

    # the copies say which judgment they copy; split ones are flagged; nothing stored was changed
    db = sqlite3.connect(bench / "bench.sqlite")
    rows = db.execute("SELECT j.docid, o.docid, j.flag, v.name FROM judgments j JOIN judgments o ON o.id = "
                      "j.copied_from JOIN corpus_versions v ON v.id = j.corpus_version").fetchall()
    assert len(rows) == 2 * 32 + 7 and {r[3] for r in rows} == {"v2"}
    assert all(new in (old + "a", old + "b") and flag == "may be cut" for new, old, flag, _ in rows
               if old.endswith("-02"))
    assert all(new == "HB-REL-05+06" and flag is None for new, old, flag, _ in rows if old in MERGED)
    assert db.execute("SELECT COUNT(*) FROM judgments WHERE copied_from IS NULL").fetchone()[0] == 498
    # a split link became a joint group of the two parts, as a new version of its nugget
    ws = Workspace(bench)
    store = NuggetStore(ws)
    split_nugget = next(nid for _, nid, docid in links if docid.endswith("-02"))
    history = store.history(split_nugget)
    assert history[-1].action == "corpus-update"
    group = next(g for g in store.get(split_nugget).support if any(x.docid.endswith("-02a") for x in g))
    assert sorted(x.docid for x in group)[1].endswith("-02b")

    # the qrels hold the v2 pairs only, and say what was left out
    with caplog.at_level("WARNING", logger="trecbench.qrels"):
        exported = cli_run("qrels", "export", "-w", bench, "-o", bench / "q2.txt")
    assert exported.exit_code == 0
    v2_docids = {json.loads(line)["id"] for line in (VERSIONS / "v2.jsonl").read_text().splitlines()}
    pairs = [line.split() for line in (bench / "q2.txt").read_text().splitlines()]
    assert {p[2] for p in pairs} <= v2_docids
    left = {(q, d) for q, d in judged if d.endswith("-02") or d in MERGED}
    assert f"note: {len(left)} judged pairs of older corpus versions left out of the qrels" in caplog.text

    # v2 -> v3: three sentences edited, two sources removed
    live = [(q, d) for q, d in judged if v2_outcome((q, d)) == "carried"]
    live += [(q, d + s) for q, d in judged if d.endswith("-02") for s in "ab"]
    live += [(q, "HB-REL-05+06") for q, d in judged if d in MERGED]
    links = links_of(bench)

    def v3_outcome(item):
        docid = item[-1]
        return "retired" if docid.startswith(REMOVED) else "changed" if docid in EDITED else "carried"

    done = update(cli_run, bench, "v3.jsonl", "sources.v3.jsonl")
    assert table(done.stdout) == {"judgments": expect(live, v3_outcome), "nugget links": expect(links, v3_outcome)}
    assert table(done.stdout)["judgments"]["before"] == 498 + 32
    listed = cli_run("corpus", "versions", "-w", bench).stdout.splitlines()
    assert [line.split("\t")[0] for line in listed[1:]] == ["v1", "v2", "v3*"]
    assert [line.split("\t")[4] for line in listed[1:]] == ["-", "v1", "v2"]

    # what needs people: the changed texts, with their word diff and the passages where they are now
    changes = corpus_changes(bench)
    assert {c.outcome for c in changes} == {"changed"} and len(changes) == sum(
        1 for item in live + links if v3_outcome(item) == "changed")
    rollback = next(c for c in changes if c.docid == "HB-RB-01")
    assert rollback.new_docids == ("HB-RB-01-r3",)
    assert "[-start-] {+finish+}" in rollback.diff and "[-15-] {+30+}" in rollback.diff
    printed = cli_run("corpus", "changes", "-w", bench).stdout
    assert "v3\tchanged\tjudgment\tT02\t" in printed and "[-90-] {+60+}" in printed
    pool = Workspace(bench).pool("corpus-v3-review")
    assert pool is not None and pool.strategy == "corpus-review"
    everything = cli_run("corpus", "changes", "-w", bench, "--version", "v3", "--all").stdout
    assert everything.count("\tretired\t") == sum(1 for item in live + links if v3_outcome(item) == "retired")


def test_the_qrels_of_an_updated_workspace_say_what_was_left_out_on_stderr(bench, cli_run):
    update(cli_run, bench, "v2.jsonl", "sources.jsonl")
    update(cli_run, bench, "v3.jsonl", "sources.v3.jsonl")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    r = subprocess.run([sys.executable, "-m", "trecbench.cli", "qrels", "export", "-w", str(bench), "-o",
                        str(bench / "q.txt")], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"note: \d+ judged pairs of older corpus versions left out of the qrels \(not in corpus "
                        r"version v3, or its text changed since\): `trecbench corpus changes` lists them\n", r.stderr)
    v3 = {json.loads(line)["id"] for line in (VERSIONS / "v3.jsonl").read_text().splitlines()}
    assert {line.split()[2] for line in (bench / "q.txt").read_text().splitlines()} <= v3
    scored = cli_run("eval", "retrieval", "-w", bench, SAMPLE / "runs" / "bm25.txt", "-m", "nDCG@10")
    assert scored.exit_code == 0 and "nDCG@10" in scored.stdout


def test_a_passage_whose_text_is_not_its_span_is_refused_at_init_and_at_update(tmp_path, bench, cli_run):
    lines = (VERSIONS / "v2.jsonl").read_text().splitlines()
    record = json.loads(lines[3])
    record["contents"] = record["contents"].upper()
    lines[3] = json.dumps(record)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    result = cli_run("corpus", "update", "-w", bench, bad, "--sources", VERSIONS / "sources.jsonl")
    assert result.exit_code == 2
    assert f"{bad}:4: docid {record['id']!r}: text is not characters" in result.stderr
    assert [v.name for v in corpus_versions(bench)] == ["v1"]
    record["end_char"] += 5  # without a sources file a span must at least hold as many characters as the text
    lines[3] = json.dumps(record)
    bad.write_text("\n".join(lines) + "\n")
    result = cli_run("init", tmp_path / "other", "--corpus", bad)
    assert result.exit_code == 2 and f"{bad}:4: docid {record['id']!r}: span" in result.stderr
    with pytest.raises(Exception, match="bad.jsonl:4"):
        Workspace.init(tmp_path / "third", corpus=str(bad), sources=str(VERSIONS / "sources.jsonl"))


def test_a_workspace_made_before_versions_registers_its_corpus_as_v1_on_first_use(tmp_path, cli_run):
    """A schema-5 workspace (no versions, judgments without one) upgrades, then `corpus versions` registers v1."""
    from trecbench.store.schema import MIGRATIONS, _statements

    corpus = tmp_path / "corpus.jsonl"
    shutil.copy(VERSIONS / "v1.jsonl", corpus)
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--corpus", corpus).exit_code == 0
    db = bench / "bench.sqlite"
    db.unlink()
    conn = sqlite3.connect(db, isolation_level=None)
    for number, sql in enumerate(MIGRATIONS[:5], start=1):
        for statement in _statements(sql):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number}")
    from trecbench.llm.cache import ensure_schema

    ensure_schema(conn)  # the model cache's tables, required from schema 4 on
    conn.execute("INSERT INTO judges (kind, name, created_at) VALUES ('import', 'nist', 'then')")
    conn.execute("INSERT INTO judgments (qid, docid, grade, status, judge_id, created_at) "
                 "VALUES ('T02', 'HB-RB-02', 2, 'ok', 1, 'then')")
    conn.close()
    dry = cli_run("corpus", "update", "-w", bench, VERSIONS / "v2.jsonl", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert table(dry.stdout)["judgments"]["split"] == 1 and "corpus v1 -> v2" in dry.stdout
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM corpus_versions").fetchone() == (0,)  # the dry run wrote nothing
    conn.close()
    listed = cli_run("corpus", "versions", "-w", bench)
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.splitlines()[1].split("\t")[:4] == ["v1*", listed.stdout.splitlines()[1].split("\t")[1],
                                                             "170", "170"]
    shutil.copy(VERSIONS / "v2.jsonl", corpus)  # overwritten in place: the judged text was kept at registration
    done = cli_run("corpus", "update", "-w", bench, corpus)
    assert done.exit_code == 0, done.output
    assert table(done.stdout)["judgments"] == {"carried": 0, "mapped": 0, "split": 1, "changed": 0, "retired": 0,
                                               "total": 1, "before": 1}


def test_judgments_record_their_corpus_version_and_keep_the_judged_text(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    shutil.copy(VERSIONS / "v1.jsonl", corpus)
    ws = Workspace.init(tmp_path / "bench", corpus=str(corpus), sources=str(VERSIONS / "sources.jsonl"))
    ws.record_many([Judgment("T01", "HB-ACC-04", 3, Judge("human", "alice")),
                    Judgment("T01", "HB-ACC-05", None, Judge("human", "alice"), status="failed")])
    db = sqlite3.connect(ws.path / "bench.sqlite")
    assert db.execute("SELECT docid, corpus_version FROM judgments").fetchall() == [("HB-ACC-04", 1),
                                                                                 ("HB-ACC-05", 1)]
    text = next(json.loads(line)["contents"] for line in corpus.read_text().splitlines() if "HB-ACC-04" in line)
    assert db.execute("SELECT text FROM corpus_texts").fetchall() == [(text,)]  # the failed one is not a judgment
    assert corpus_versions(ws)[0].sources == str(VERSIONS / "sources.jsonl")
    copy = corpus.with_name("v2.jsonl")
    shutil.copy(VERSIONS / "v2.jsonl", copy)
    report = update_corpus(ws, str(copy), sources=str(VERSIONS / "sources.jsonl"))
    assert report.balanced() and report.counts["judgment"]["carried"] == 1 and report.review_pool is None
    corpus.unlink()  # an older version stays readable without its file: spans, hashes, kept texts
    old = version_passages(ws, "v1", ["HB-ACC-04", "HB-ACC-02", "nope"])
    assert sorted(old) == ["HB-ACC-02", "HB-ACC-04"] and old["HB-ACC-04"].text == text
    assert old["HB-ACC-04"].text_hash == text_hash(text) and old["HB-ACC-02"].text is None
    assert old["HB-ACC-04"].span is not None and old["HB-ACC-04"].span.source_id == "HB-ACC"
    assert "HB-ACC-02" not in version_passages(ws, "v2", ["HB-ACC-02"])
    with pytest.raises(InputError, match="no corpus version 'v9' \\(there are v1, v2\\)"):
        version_passages(ws, "v9", [])


def test_an_update_that_carried_everything_has_nothing_to_review(tmp_path, cli_run):
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--corpus", VERSIONS / "v1.jsonl").exit_code == 0
    assert cli_run("qrels", "import", SAMPLE / "qrels.txt", "-w", bench, "--judge", "nist").exit_code == 0
    done = cli_run("corpus", "update", "-w", bench, VERSIONS / "v1.jsonl")
    assert table(done.stdout)["judgments"] == {"carried": 498, "mapped": 0, "split": 0, "changed": 0, "retired": 0,
                                               "total": 498, "before": 498}
    assert cli_run("corpus", "changes", "-w", bench).stdout == "nothing to review\n"
    assert cli_run("qrels", "export", "-w", bench, "-o", tmp_path / "q.txt").exit_code == 0
    assert len((tmp_path / "q.txt").read_text().splitlines()) == 498


def test_recording_a_batch_looks_its_version_up_once_and_reads_only_new_texts(tmp_path):
    ws = Workspace.init(tmp_path / "bench", corpus=str(VERSIONS / "v1.jsonl"))
    docids = [json.loads(line)["id"] for line in (VERSIONS / "v1.jsonl").read_text().splitlines()][:60]
    seen: list[str] = []
    ws.connection().set_trace_callback(seen.append)
    ws.record_many([Judgment("T01", d, 1, Judge("import", "file")) for d in docids])
    version_lookups = [s for s in seen if "corpus_versions" in s]
    assert len(version_lookups) == 1 and len([s for s in seen if "FROM corpus_passages" in s]) == 1
    assert len([s for s in seen if s.startswith("INSERT OR IGNORE INTO corpus_texts")]) == 60  # a row per text
    seen.clear()
    ws.record_many([Judgment("T02", d, 2, Judge("import", "file")) for d in docids])  # texts kept already
    assert [s for s in seen if "corpus_texts (hash" in s] == []
    ws.connection().set_trace_callback(None)
    assert len(version_passages(ws, "v1", docids)) == 60
    assert all(p.text is not None for p in version_passages(ws, "v1", docids).values())


def test_passages_without_spans_are_carried_changed_or_retired_by_docid(tmp_path, cli_run):
    lines = (SAMPLE / "corpus.jsonl").read_text().splitlines()  # the sample corpus has no spans
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--corpus", SAMPLE / "corpus.jsonl").exit_code == 0
    assert cli_run("qrels", "import", SAMPLE / "qrels.txt", "-w", bench, "--judge", "nist").exit_code == 0
    edited = json.loads(lines[0])
    edited["contents"] = edited["contents"].replace("every Tuesday", "every Monday")
    gone = json.loads(lines[1])["id"]
    new = tmp_path / "new.jsonl"
    new.write_text("\n".join([json.dumps(edited)] + lines[2:]) + "\n")
    done = cli_run("corpus", "update", "-w", bench, new)
    assert done.exit_code == 0, done.output
    judged = qrels_docids()
    assert table(done.stdout)["judgments"] == expect(judged, lambda item: "changed" if item[1] == edited["id"] else
                                                     "retired" if item[1] == gone else "carried")
    changes = corpus_changes(bench)
    assert {c.docid for c in changes} == {edited["id"]} and all(c.new_docids == (edited["id"],) for c in changes)
    assert "[-Tuesday-] {+Monday+}" in changes[0].diff
    retired = corpus_changes(bench, outcomes=("retired",))
    assert {c.docid for c in retired} == {gone} and retired[0].note == "no source span, and the docid is gone"


def test_text_is_found_nearest_its_old_place_and_edited_text_where_it_went():
    from trecbench.versions import find_edited, find_exact, word_diff

    source = "alpha beta. gamma delta. alpha beta. epsilon."
    assert find_exact(source, "alpha beta.", 20) == 25 and find_exact(source, "alpha beta.", 10) == 0
    assert find_exact(source, "zeta", 0) is None
    old = "The target is to start the rollback within 15 minutes of the problem being detected by anyone."
    new_source = ("Intro text that is not it. The target is to finish the rollback within 30 minutes of the problem "
                  "being detected by anyone. Then more.")
    found = find_edited(new_source, old, 27)
    assert found is not None and new_source[found.start:found.end].startswith("The target is to finish")
    assert new_source[found.start:found.end].endswith("by anyone.") and found.score > 60
    assert find_edited("completely unrelated words here", old, 0) is None
    assert word_diff("a b c d", "a x c d e") == "a [-b-] {+x+} c d {+e+}"
    long_old = " ".join(f"w{i}" for i in range(40))
    assert word_diff(long_old, long_old.replace("w20", "W20")).count("...") == 2


def test_a_release_names_its_corpus_version_and_verify_checks_the_corpus_against_it(bench, cli_run, tmp_path):
    update(cli_run, bench, "v2.jsonl", "sources.jsonl")
    out = tmp_path / "release"
    assert cli_run("release", "create", "-w", bench, "--version", "r1", "-o", out, "--quiet").exit_code == 0
    named = json.loads((out / "manifest.json").read_text())["corpus_version"]
    v2 = [json.loads(line) for line in (VERSIONS / "v2.jsonl").read_text().splitlines()]
    assert (named["name"], named["passages"]) == ("v2", len(v2))
    same = cli_run("release", "verify", out, "--corpus", VERSIONS / "v2.jsonl", "--quiet")
    assert same.exit_code == 0 and ": unchanged (the corpus is its corpus version v2)" in same.stdout
    other = cli_run("release", "verify", out, "--corpus", VERSIONS / "v1.jsonl", "--quiet")
    assert other.exit_code == 1
    assert (f"corpus\tthe corpus is not the release's corpus version v2 ({len(v2)} passages, fingerprint "
            f"{named['fingerprint'][:12]}): it has 170 passages") in other.stdout


def test_changed_permissions_list_the_evidence_a_topic_may_no_longer_see(bench, cli_run, tmp_path):
    # the new permissions move HB-ACC-04 out of the handbook every topic may read
    old = SAMPLE / "permissions.jsonl"
    records = [json.loads(line) for line in old.read_text().splitlines()]
    for r in records:
        if r.get("group") == "handbook":
            r["docids"] = [d for d in r["docids"] if d != "HB-ACC-04"]
    new = tmp_path / "permissions.new.jsonl"
    new.write_text("".join(json.dumps(r) + "\n" for r in records))
    nuggets = [json.loads(line) for line in (SAMPLE / "nuggets.jsonl").read_text().splitlines()]
    using = {(t["qid"], n["id"]): n["support"] for t in nuggets for n in t["nuggets"]
             if any("HB-ACC-04" in group for group in n["support"])}
    only = {key for key, support in using.items() if all("HB-ACC-04" in group for group in support)}
    assert using and only  # the sample's break-glass nuggets rest on HB-ACC-04 alone
    result = update(cli_run, bench, "v2.jsonl", "sources.jsonl", "--dry-run", "--permissions", old, new)
    lines = [line.split("\t") for line in result.stdout.splitlines() if line.startswith("permissions\t")]
    assert {(q, item) for _, q, item, _ in lines} == set(using)
    for _, q, item, what in lines:
        assert what.startswith("no longer visible: HB-ACC-04")
        assert ("no source left" in what) == ((q, item) in only)
    assert (f"permissions: {len(using)} evidence item(s) see other sources; {len(only)} no longer required, "
            f"{len(using)} lose a source") in result.stdout


def test_init_checks_the_passages_against_the_sources_file_it_is_given(tmp_path, cli_run):
    good = cli_run("init", tmp_path / "ok", "--corpus", VERSIONS / "v2.jsonl", "--sources", VERSIONS / "sources.jsonl")
    assert good.exit_code == 0, good.output
    assert [(v.name, v.sources is not None) for v in corpus_versions(tmp_path / "ok")] == [("v1", True)]
    # v3's passages are spans of v3's sources, not of the sources v1 and v2 were cut from
    bad = cli_run("init", tmp_path / "bad", "--corpus", VERSIONS / "v3.jsonl", "--sources", VERSIONS / "sources.jsonl")
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert re.search(rf"{re.escape(str(VERSIONS / 'v3.jsonl'))}:\d+: docid '[^']+': text is not characters", bad.stderr)
