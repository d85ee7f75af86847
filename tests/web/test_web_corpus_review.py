"""In a corpus update's review pool, the judging page shows what the update queued about the passage: the word
diff of a text that changed, or that a judged text was cut over several passages."""
from __future__ import annotations

from paths import SAMPLE
from starlette.testclient import TestClient

from trecbench.versions import corpus_changes
from trecbench.web.app import create_app

VERSIONS = SAMPLE / "versions"


def updated_bench(tmp_path, cli_run, version: str, sources: str):
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--corpus", VERSIONS / "v2.jsonl", "--topics", SAMPLE / "topics.tsv").exit_code == 0
    assert cli_run("qrels", "import", SAMPLE / "qrels.txt", "-w", bench, "--judge", "nist").exit_code == 0
    result = cli_run("corpus", "update", "-w", bench, VERSIONS / version, "--sources", VERSIONS / sources)
    assert result.exit_code == 0, result.output
    return bench


def test_a_changed_passage_in_the_review_pool_shows_the_word_diff_of_its_text(tmp_path, cli_run):
    bench = updated_bench(tmp_path, cli_run, "v3.jsonl", "sources.v3.jsonl")
    [change] = [c for c in corpus_changes(bench) if c.kind == "judgment" and c.outcome == "changed"][:1]
    client = TestClient(create_app(bench, require_token=False), base_url="http://127.0.0.1")
    page = client.get("/judge", params={"qid": change.qid, "docid": change.new_docids[0]})
    assert page.status_code == 200
    assert 'id="corpus-change"' in page.text and f"text changed in corpus version {change.version}" in page.text
    assert change.diff and change.diff.split("[-")[1].split("-]")[0] in page.text  # a removed word of the diff


def test_a_passage_outside_the_review_pool_shows_no_corpus_change(tmp_path, cli_run):
    bench = updated_bench(tmp_path, cli_run, "v3.jsonl", "sources.v3.jsonl")
    [change] = [c for c in corpus_changes(bench) if c.kind == "judgment" and c.outcome == "changed"][:1]
    assert cli_run("pool", SAMPLE / "runs" / "bm25.txt", "--depth", "5", "-w", bench, "--name", "again").exit_code == 0
    client = TestClient(create_app(bench, require_token=False), base_url="http://127.0.0.1")
    page = client.get("/judge", params={"qid": change.qid, "docid": change.new_docids[0]})
    assert 'id="corpus-change"' not in page.text


def test_a_passage_a_judged_text_was_cut_into_says_it_may_be_cut(tmp_path, cli_run):
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--corpus", VERSIONS / "v1.jsonl", "--topics", SAMPLE / "topics.tsv").exit_code == 0
    assert cli_run("qrels", "import", SAMPLE / "qrels.txt", "-w", bench, "--judge", "nist").exit_code == 0
    assert cli_run("corpus", "update", "-w", bench, VERSIONS / "v2.jsonl", "--sources",
                   VERSIONS / "sources.jsonl").exit_code == 0
    [split] = [c for c in corpus_changes(bench) if c.kind == "judgment" and c.outcome == "split"][:1]
    client = TestClient(create_app(bench, require_token=False), base_url="http://127.0.0.1")
    page = client.get("/judge", params={"qid": split.qid, "docid": split.new_docids[-1]})
    assert 'id="corpus-change"' in page.text and "may be cut" in page.text
    assert all(d in page.text for d in split.new_docids)
