"""`trecbench release` and `release verify`: the frozen, hashed benchmark bundle and the check that it still holds."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from paths import SAMPLE
from test_report import sample_bench


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """The sample bench released once as v1 (by the command)."""
    from click.testing import CliRunner

    from trecbench.cli import cli

    root = tmp_path_factory.mktemp("release")
    bench = sample_bench(root)
    out = root / "bench-v1"
    # the sample bench has nuggets for 2 of its 12 topics: released so on purpose
    result = CliRunner().invoke(cli, ["release", "-w", str(bench), "--version", "v1", "-o", str(out), "--quiet",
                                      "--allow-missing-nuggets"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return {"root": root, "bench": bench, "out": out, "output": result.output,
            "manifest": json.loads((out / "manifest.json").read_text())}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_release_holds_the_files_and_a_manifest_hashing_each(released):
    out, manifest = released["out"], released["manifest"]
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "evidence.jsonl", "manifest.json", "nuggets.jsonl",
                                                     "qrels.jsonl", "qrels.txt", "topics.jsonl", "topics.tsv"]
    assert manifest["format"] == "trecbench-release/1" and manifest["version"] == "v1"
    assert manifest["name"] == "larkspur" and manifest["trecbench_version"]
    assert manifest["created_at"].endswith("+00:00")
    for name, entry in manifest["files"].items():
        assert entry == {"sha256": sha(out / name), "bytes": (out / name).stat().st_size}
    assert f"manifest.json (sha256 {sha(out / 'manifest.json')})" in released["output"]


def test_the_qrels_are_what_qrels_export_writes(released, tmp_path, cli_run):
    exported = tmp_path / "qrels.txt"
    assert cli_run("qrels", "export", "-w", released["bench"], "-o", exported).exit_code == 0
    assert (released["out"] / "qrels.txt").read_bytes() == exported.read_bytes()


def test_topics_are_written_as_tsv_and_read_back(released):
    from trecbench.topics import read_topics
    from trecbench.store import Workspace

    topics = read_topics(released["out"] / "topics.tsv")
    assert [(t.qid, t.text) for t in topics] == [(t.qid, t.text) for t in Workspace(released["bench"]).topics().values()]
    assert released["manifest"]["counts"]["topics"] == 12


def test_only_approved_nuggets_are_released_unless_drafts_are_asked_for(released, tmp_path):
    from trecbench.nuggets.io import read_nuggets
    from trecbench.release import make_release

    topics = read_nuggets(released["out"] / "nuggets.jsonl")
    assert [(t.qid, [n.status for n in t.nuggets]) for t in topics] == [("T01", ["approved"]), ("T02", ["approved"])]
    assert released["manifest"]["counts"]["nuggets"] == {"topics": 2, "vital": 2, "okay": 0, "draft": 0}
    summary = make_release(released["bench"], "v1-drafts", tmp_path / "drafts", include_drafts=True, allow_missing_nuggets=True)
    assert summary.manifest["counts"]["nuggets"] == {"topics": 2, "vital": 2, "okay": 1, "draft": 1}


def test_the_released_nuggets_are_the_workspaces_approved_ones(released):
    import trecbench
    from trecbench.nuggets.io import read_nuggets

    assert read_nuggets(released["out"] / "nuggets.jsonl") == trecbench.workspace_nuggets(released["bench"],
                                                                                          approved_only=True)
    assert trecbench.Workspace(released["bench"]).cache_path == released["bench"] / "bench.sqlite"


def test_evidence_round_trips_through_the_reader_of_eval_evidence(released, tmp_path, cli_run):
    from trecbench.evaluation.evidence.recall import read_evidence
    from trecbench.nuggets.io import read_nuggets

    items = read_evidence(released["out"] / "evidence.jsonl")
    nuggets = [n for t in read_nuggets(released["out"] / "nuggets.jsonl") for n in t.nuggets]
    assert [(i.qid, i.id, i.text, i.importance, i.any_of) for i in items] == \
        [(n.qid, n.id, n.text, n.importance, n.support) for n in nuggets]
    assert items[1].any_of == (("HB-RB-01",), ("HB-RB-03",))  # alternatives stay alternatives
    stages = tmp_path / "stages.jsonl"
    stages.write_text(json.dumps({"qid": "T01", "docids": ["HB-ACC-04"]}) + "\n"
                      + json.dumps({"qid": "T02", "docids": ["HB-RB-03"]}) + "\n")
    result = cli_run("eval", "evidence", "--evidence", released["out"] / "evidence.jsonl", "--contexts", stages)
    assert result.exit_code == 0 and "1.0000" in result.output
    assert released["manifest"]["counts"]["evidence"] == {"topics": 2, "items": 2}


def test_every_judged_document_is_hashed_as_the_store_hashes_text(released):
    from trecbench.corpus import open_corpus
    from trecbench.qrels import read_qrels
    from trecbench.store import text_hash

    documents = released["manifest"]["judged_documents"]
    qrels = read_qrels(released["out"] / "qrels.txt")
    assert set(documents) == set(qrels["doc_id"])
    corpus = open_corpus(released["root"] / "corpus.jsonl")
    assert all(documents[d] == text_hash(corpus.get(d).text) for d in documents)
    assert released["manifest"]["counts"]["judged_documents"] == len(documents) == qrels["doc_id"].nunique() == 168


def test_the_manifest_names_each_judge_and_how_many_of_its_judgments_the_qrels_use(released):
    judges = {j["name"]: j for j in released["manifest"]["judges"]}
    model = judges["gpt-test:graded-0-3"]
    assert (model["kind"], model["model"], model["prompt_id"], model["prompt_hash"], model["params"]) == \
        ("model", "openai/gpt-test", "graded-0-3", "abc123", {"batch": 1})
    assert model["failed"] == 1 and model["used_in_qrels"] == 0  # a person's (or nist's) grade is preferred
    assert judges["alice"]["kind"] == "human" and judges["alice"]["used_in_qrels"] == 30
    assert judges["nist"]["used_in_qrels"] == 498 - 30
    counts = released["manifest"]["counts"]
    assert sum(j["used_in_qrels"] for j in judges.values()) == counts["judged_directly"] == counts["judgments"] == 498
    from trecbench.qrels import read_qrels

    sample = read_qrels(released["root"] / "qrels.txt")["relevance"].value_counts()
    assert counts["relevance"] == {str(g): int(sample[g]) for g in sorted(sample.index)}
    assert counts["relevant"] == int(sample.drop(0).sum()) == 115
    assert released["manifest"]["qrels"] == {"policy": "prefer human", "pool": "depth20",
                                             "propagated_from_duplicates": 0, "pool_candidates_unjudged": 0,
                                             "unjudged": []}


def test_duplicates_get_their_groups_grade_and_narratives_make_topics_jsonl(tmp_path):
    from web_support import TOPICS, make_bench

    from trecbench.qrels import read_qrels
    from trecbench.release import make_release
    from trecbench.store import Judge, Judgment, Workspace
    from trecbench.topics import read_topics

    bench = make_bench(tmp_path)
    ws = Workspace(bench)
    ws.record_many([Judgment("1", "d4", 2, Judge("human", "alice")), Judgment("1", "d1", 3, Judge("human", "alice")),
                    Judgment("2", "w1", 0, Judge("model", "m:p", "m", "p", "h"))])
    summary = make_release(bench, "v1", allow_missing_nuggets=True)
    out = bench / "releases" / "v1"
    assert summary.path == out and (out / "topics.jsonl").is_file() and not (out / "topics.tsv").exists()
    assert [t.as_dict() for t in read_topics(out / "topics.jsonl")] == TOPICS
    qrels = read_qrels(out / "qrels.txt")
    assert list(zip(qrels["doc_id"], qrels["relevance"])) == [("d1", 3), ("d4", 2), ("d5", 2), ("w1", 0)]
    alice = next(j for j in summary.manifest["judges"] if j["name"] == "alice")
    assert (alice["used_in_qrels"], alice["propagated_in_qrels"]) == (2, 1)
    assert summary.manifest["counts"]["propagated"] == 1
    assert "no nuggets released" in " ".join(summary.warnings)
    assert not (out / "nuggets.jsonl").exists()


def test_pool_candidates_without_a_judgment_are_reported_and_recorded(tmp_path, cli_run):
    from web_support import make_bench

    from trecbench.store import Judge, Judgment, Workspace

    bench = make_bench(tmp_path)
    Workspace(bench).record_many([Judgment("1", "d4", 2, Judge("human", "alice")),
                                  Judgment("1", "d1", 3, Judge("human", "alice"))])
    result = cli_run("release", "-w", bench, "--version", "v1", "--quiet", "--allow-missing-nuggets")
    assert result.exit_code == 0, result.output
    assert "warning: 4 pool candidate(s) have no judgment and are not in the qrels: 1/d3 1/d2 2/w2 2/w1" in result.stderr
    manifest = json.loads((bench / "releases" / "v1" / "manifest.json").read_text())
    assert manifest["qrels"]["pool_candidates_unjudged"] == 4
    assert manifest["qrels"]["unjudged"] == [{"qid": "1", "docid": "d3"}, {"qid": "1", "docid": "d2"},
                                             {"qid": "2", "docid": "w2"}, {"qid": "2", "docid": "w1"}]
    # the corpus path is relative to the release folder: it opens from there
    assert manifest["corpus"] == "../../../corpus.jsonl"
    assert (bench / "releases" / "v1" / manifest["corpus"]).resolve() == (tmp_path / "corpus.jsonl").resolve()


def test_an_existing_release_is_not_overwritten_without_force(released, cli_run):
    out = released["out"]
    before = (out / "manifest.json").read_bytes()
    result = cli_run("release", "-w", released["bench"], "--version", "v1", "-o", out, "--quiet", "--allow-missing-nuggets")
    assert result.exit_code == 2
    assert f"{out}: already exists: give --force to replace the release" in result.output
    assert (out / "manifest.json").read_bytes() == before


def test_force_replaces_a_release_but_never_another_folder(tmp_path, cli_run):
    bench = sample_bench(tmp_path, extras=False)
    out = tmp_path / "rel"
    assert cli_run("release", "create", "-w", bench, "--version", "v1", "-o", out, "--quiet",
                   "--allow-missing-nuggets").exit_code == 0
    (out / "stray.txt").write_text("left over")
    result = cli_run("release", "-w", bench, "--version", "v2", "-o", out, "--force", "--quiet", "--allow-missing-nuggets")
    assert result.exit_code == 0, result.output
    assert json.loads((out / "manifest.json").read_text())["version"] == "v2"
    assert not (out / "stray.txt").exists()
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"meow")
    result = cli_run("release", "-w", bench, "--version", "v3", "-o", other, "--force", "--quiet", "--allow-missing-nuggets")
    assert result.exit_code == 2 and "is not a release folder" in result.output
    assert (other / "cat.jpg").read_bytes() == b"meow"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no staging left behind


def test_verify_finds_nothing_in_an_untouched_release(released, cli_run):
    result = cli_run("release", "verify", released["out"], "--corpus", released["root"] / "corpus.jsonl", "--quiet")
    assert result.exit_code == 0, result.output
    assert "checked 6 files and 168 judged documents: unchanged" in result.output
    assert sha(released["out"] / "manifest.json") in result.output


def copy_release(released, tmp_path) -> Path:
    import shutil

    out = tmp_path / "copy"
    shutil.copytree(released["out"], out)
    return out


def test_verify_reports_tampered_missing_and_unlisted_files(released, tmp_path, cli_run):
    out = copy_release(released, tmp_path)
    qrels = out / "qrels.txt"
    qrels.write_text(qrels.read_text().replace("T01 0 HB-ACC-01 0", "T01 0 HB-ACC-01 3"))
    (out / "nuggets.jsonl").unlink()
    (out / "qrels-extra.txt").write_text("T01 0 x 1\n")
    result = cli_run("release", "verify", out, "--quiet")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == ["file\tnuggets.jsonl\tmissing", "file\tqrels.txt\tchanged",
                                          "file\tqrels-extra.txt\tnot in manifest"]
    assert "3 file(s) and 0 document(s) differ" in result.stderr


def test_verify_reports_documents_that_changed_or_left_the_corpus(released, tmp_path, cli_run):
    corpus = tmp_path / "corpus.jsonl"
    lines = [json.loads(x) for x in (released["root"] / "corpus.jsonl").read_text().splitlines()]
    kept = []
    for record in lines:
        if record["id"] == "HB-ACC-04":
            record["contents"] += " Updated in 2026."
        elif record["id"] == "HB-RB-03":
            continue
        elif record["id"] == "HB-REL-01":
            record["title"] = "A new title (the text is unchanged)"
        kept.append(record)
    corpus.write_text("".join(json.dumps(r) + "\n" for r in kept))
    result = cli_run("release", "verify", released["out"], "--corpus", corpus, "--quiet")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert sorted(line for line in lines if line.startswith("document")) == ["document\tHB-ACC-04\tchanged",
                                                                            "document\tHB-RB-03\tmissing"]
    # the corpus is no longer the version the release names (one passage gone, one edited)
    [corpus_line] = [line for line in lines if not line.startswith("document")]
    assert corpus_line.startswith("corpus\tthe corpus is not the release's corpus version v1 (170 passages")
    assert "it has 169 passages" in corpus_line


def test_verify_of_a_folder_without_a_manifest_is_an_input_error(tmp_path, cli_run):
    result = cli_run("release", "verify", tmp_path)
    assert result.exit_code == 2
    assert f"{tmp_path / 'manifest.json'}: no such file: not a trecbench release folder" in result.output
    (tmp_path / "manifest.json").write_text('{"format": "trecbench-release/1",\n "files": [}')
    result = cli_run("release", "verify", tmp_path)
    assert result.exit_code == 2 and f"{tmp_path / 'manifest.json'}:2: invalid JSON" in result.output


def test_a_manifest_naming_files_outside_the_release_is_refused(released, tmp_path, cli_run):
    out = copy_release(released, tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["files"]["../secret"] = {"sha256": "0" * 64, "bytes": 1}
    (out / "manifest.json").write_text(json.dumps(manifest))
    result = cli_run("release", "verify", out)
    assert result.exit_code == 2 and "'../secret' does not name a file of the release folder" in result.output


def test_a_bad_version_name_or_an_empty_workspace_is_refused(tmp_path, cli_run):
    from trecbench.store import Workspace

    bench = sample_bench(tmp_path, extras=False)
    result = cli_run("release", "-w", bench, "--version", "../v1", "--quiet", "--allow-missing-nuggets")
    assert result.exit_code == 2 and "use letters, digits" in result.output
    empty = tmp_path / "empty"
    Workspace.init(empty, corpus=str(tmp_path / "corpus.jsonl"), topics=str(tmp_path / "topics.tsv")).close()
    result = cli_run("release", "-w", empty, "--version", "v1", "--quiet", "--allow-missing-nuggets")
    assert result.exit_code == 2 and "no judgments to release" in result.output
    assert not (empty / "releases" / "v1").exists()


def test_documents_missing_from_the_corpus_are_released_without_a_hash_and_named(tmp_path):
    from trecbench.release import make_release, verify_release
    from trecbench.store import Judge, Judgment, Workspace

    bench = sample_bench(tmp_path, extras=False)
    Workspace(bench).record(Judgment("T01", "NOT-IN-CORPUS", 1, Judge("import", "nist")))
    summary = make_release(bench, "v1", allow_missing_nuggets=True)
    assert summary.manifest["judged_documents"]["NOT-IN-CORPUS"] is None
    assert summary.manifest["counts"]["judged_documents_missing_from_corpus"] == 1
    assert "1 judged document(s) are not in the corpus" in summary.warnings[0]
    assert verify_release(summary.path, tmp_path / "corpus.jsonl").ok  # still missing: nothing changed


def test_progress_counts_each_document_hashed(tmp_path):
    from trecbench.release import make_release, verify_release

    class Bar:
        total, done = None, 0

        def update(self, n=1):
            self.done += n

        def set_description_str(self, text):
            pass

        def refresh(self):
            pass

    bench = sample_bench(tmp_path, extras=False)
    bar = Bar()
    summary = make_release(bench, "v1", progress=bar, allow_missing_nuggets=True)
    assert bar.total == bar.done == 168  # the distinct judged documents
    bar = Bar()
    verify_release(summary.path, tmp_path / "corpus.jsonl", progress=bar)
    assert bar.total == bar.done == 4 + 168  # topics.tsv, qrels.txt and their JSONL copies, then the documents


def test_a_release_that_would_leave_topics_without_nuggets_is_refused_until_they_are_approved(tmp_path, cli_run):
    from trecbench.nuggets.store import NuggetStore
    from trecbench.store import Workspace

    topics = tmp_path / "topics.tsv"
    topics.write_text("T01\tWho approves break-glass access?\nT02\tHow long is break-glass access valid?\n")
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--corpus", SAMPLE / "corpus.jsonl", "--topics", topics).exit_code == 0
    assert cli_run("qrels", "import", SAMPLE / "qrels.txt", "-w", bench, "--judge", "nist").exit_code == 0
    store = NuggetStore(Workspace(bench))
    for qid, text in (("T01", "The incident commander approves it."), ("T02", "It is valid for 2 hours."),
                      ("T02", "It can be extended once.")):
        store.add(qid, text, author="drafter", support=[["HB-ACC-04"]])  # drafts, as `nuggets draft` leaves them
    refused = cli_run("release", "-w", bench, "--version", "v1", "--quiet")
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "2 of 2 topics would be released without nuggets (2 have only draft nuggets): T01 T02" in refused.stderr
    assert "trecbench nuggets approve -w BENCH --topic T" in refused.stderr
    approved = cli_run("nuggets", "approve", "-w", bench, "--topic", "T02")
    assert approved.exit_code == 0 and approved.stdout == "approved 2 nugget(s) of 1 topic(s): T02\n"
    assert "1 of 2 topics would be released without nuggets (1 have only draft nuggets): T01" in \
        cli_run("release", "-w", bench, "--version", "v1", "--quiet").stderr
    assert cli_run("nuggets", "approve", "-w", bench, "--all").stdout == "approved 1 nugget(s) of 1 topic(s): T01\n"
    assert cli_run("nuggets", "approve", "-w", bench, "--all").stdout == "approved 0 nugget(s) of 0 topic(s) (none was a draft)\n"
    released = cli_run("release", "-w", bench, "--version", "v1", "--quiet")
    assert released.exit_code == 0, released.output
    [t02] = [n for n in NuggetStore(Workspace(bench)).topic("T02")][:1]
    assert [v.action for v in NuggetStore(Workspace(bench)).history(t02.id)][-1] == "approve"  # each one in the history


def test_a_release_of_a_benchmark_without_nuggets_needs_no_flag(tmp_path, cli_run):
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv").exit_code == 0
    assert cli_run("qrels", "import", SAMPLE / "qrels.txt", "-w", bench, "--judge", "nist").exit_code == 0
    assert cli_run("release", "-w", bench, "--version", "v1", "--quiet").exit_code == 0


def test_approve_takes_a_topic_or_all(tmp_path, cli_run):
    bench = tmp_path / "bench"
    assert cli_run("init", bench).exit_code == 0
    for args in ((), ("--topic", "T01", "--all")):
        result = cli_run("nuggets", "approve", "-w", bench, *args)
        assert result.exit_code == 2 and "give --topic T or --all (one of them)" in result.output
