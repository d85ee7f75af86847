"""A release loads in the field's tools, for real and offline: Hugging Face `datasets` (every configuration the
dataset card names) and ir_datasets (after `register_release`), counts and values checked against the release's
own files."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from test_report import sample_bench


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """The sample bench released once as v1 with its judged documents and a licence (by the command)."""
    from click.testing import CliRunner

    from trecbench.cli import cli

    root = tmp_path_factory.mktemp("release")
    bench = sample_bench(root)
    out = root / "bench-v1"
    result = CliRunner().invoke(cli, ["release", "-w", str(bench), "--version", "v1", "-o", str(out), "--quiet",
                                      "--allow-missing-nuggets", "--include-corpus", "--license", "cc-by-4.0"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return {"root": root, "bench": bench, "out": out, "manifest": json.loads((out / "manifest.json").read_text()),
            "manifest_sha256": hashlib.sha256((out / "manifest.json").read_bytes()).hexdigest()}


@pytest.fixture
def hub_offline(tmp_path, monkeypatch) -> Path:
    """`datasets` and huggingface_hub offline, their caches in tmp_path; returns the cache folder."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))
    return tmp_path / "hf" / "datasets"


@pytest.fixture
def irds_names():
    """Names registered with ir_datasets in a test are removed after it: `irds_names("x/v1")` returns "x/v1"."""
    import ir_datasets

    names: list[str] = []
    yield lambda name: names.append(name) or name
    for name in names:
        ir_datasets.registry._registered.pop(name, None)


def card_header(path: Path) -> dict:
    import yaml

    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_card_names_each_configuration_its_file_the_licence_and_the_manifests_hash(released):
    out = released["out"]
    header = card_header(out / "README.md")
    assert header["license"] == "cc-by-4.0" and header["pretty_name"] == "larkspur v1"
    assert header["task_categories"] == ["text-retrieval", "question-answering"]
    assert header["size_categories"] == ["n<1K"]  # 498 qrels, the largest configuration
    assert [(c["config_name"], c["data_files"], c.get("default", False)) for c in header["configs"]] == [
        ("qrels", [{"split": "test", "path": "qrels.jsonl"}], True),
        ("topics", [{"split": "test", "path": "topics.jsonl"}], False),
        ("nuggets", [{"split": "test", "path": "nuggets.jsonl"}], False),
        ("evidence", [{"split": "test", "path": "evidence.jsonl"}], False),
        ("corpus", [{"split": "test", "path": "corpus.jsonl"}], False)]
    body = (out / "README.md").read_text(encoding="utf-8").split("---\n", 2)[2]
    assert f"`manifest.json` has sha256 `{released['manifest_sha256']}`" in body
    assert "| `qrels` | `qrels.jsonl` | 498 |" in body and "| `corpus` | `corpus.jsonl` | 168 |" in body
    assert "498 qrels (383 graded 0, 73 graded 1, 28 graded 2, 14 graded 3), 115 relevant" in body
    assert "| model | gpt-test:graded-0-3 | openai/gpt-test | graded-0-3 | 116 | 0 | 0 |" in body
    assert "| human | alice |  |  | 30 | 30 | 0 |" in body
    assert "pool `depth20`" in body and "prefer human" in body and "Licence: `cc-by-4.0`" in body


def test_huggingface_hub_reads_the_cards_metadata(released, hub_offline):
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(released["out"] / "README.md")
    assert card.data.license == "cc-by-4.0" and card.data.pretty_name == "larkspur v1"
    assert [c["config_name"] for c in card.data.configs] == ["qrels", "topics", "nuggets", "evidence", "corpus"]


def test_the_manifest_hashes_the_loadable_files_and_verify_passes_with_the_card_beside_them(released, cli_run):
    out, manifest = released["out"], released["manifest"]
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "corpus.jsonl", "evidence.jsonl", "manifest.json",
                                                     "nuggets.jsonl", "qrels.jsonl", "qrels.txt", "topics.jsonl",
                                                     "topics.tsv"]
    assert list(manifest["files"]) == ["topics.tsv", "qrels.txt", "nuggets.jsonl", "evidence.jsonl", "topics.jsonl",
                                       "qrels.jsonl", "corpus.jsonl"]
    for name, entry in manifest["files"].items():
        assert entry["sha256"] == hashlib.sha256((out / name).read_bytes()).hexdigest()
    result = cli_run("release", "verify", out, "--corpus", released["root"] / "corpus.jsonl", "--quiet")
    assert result.exit_code == 0, result.output
    assert "checked 7 files and 168 judged documents: unchanged" in result.output


def test_datasets_loads_every_configuration_with_the_release_files_rows(released, hub_offline):
    import datasets

    from trecbench.nuggets.io import read_nuggets
    from trecbench.qrels import read_qrels
    from trecbench.store import text_hash
    from trecbench.topics import read_topics

    out = released["out"]

    def load(name: str):
        return datasets.load_dataset(str(out), name, split="test", cache_dir=str(hub_offline))

    qrels = load("qrels")
    trec = read_qrels(out / "qrels.txt")
    assert qrels.num_rows == len(trec) == released["manifest"]["counts"]["judgments"]
    assert list(zip(qrels["qid"], qrels["docid"], qrels["relevance"])) == \
        list(zip(trec["query_id"], trec["doc_id"], trec["relevance"].astype(int)))
    assert set(qrels["iteration"]) == {"0"}

    topics = load("topics")
    assert list(zip(topics["qid"], topics["text"])) == [(t.qid, t.text) for t in read_topics(out / "topics.tsv")]

    nuggets = load("nuggets")
    expected = read_nuggets(out / "nuggets.jsonl")
    assert nuggets["qid"] == [t.qid for t in expected] == ["T01", "T02"]
    assert [[n["text"] for n in row] for row in nuggets["nuggets"]] == [[n.text for n in t.nuggets] for t in expected]

    evidence = load("evidence")
    assert evidence.to_list() == jsonl(out / "evidence.jsonl")
    assert evidence["evidence"][1][0]["any_of"] == [["HB-RB-01"], ["HB-RB-03"]]

    corpus = load("corpus")
    documents = released["manifest"]["judged_documents"]
    assert sorted(corpus["docid"]) == sorted(documents) and corpus.num_rows == 168
    assert all(documents[d] == text_hash(t) for d, t in zip(corpus["docid"], corpus["text"]))
    assert corpus[0]["title"] == "Access requests and permissions / How access works"


def test_the_folder_alone_loads_as_its_qrels(released, hub_offline):
    import datasets

    loaded = datasets.load_dataset(str(released["out"]), cache_dir=str(hub_offline))
    assert list(loaded) == ["test"] and loaded["test"].num_rows == 498
    assert loaded["test"].column_names == ["qid", "iteration", "docid", "relevance"]


def test_the_judged_documents_stay_out_unless_asked_for_and_the_licence_defaults_to_other(released, tmp_path):
    from trecbench.release import make_release

    summary = make_release(released["bench"], "v2", tmp_path / "v2", allow_missing_nuggets=True)
    assert not (summary.path / "corpus.jsonl").exists() and "corpus.jsonl" not in summary.manifest["files"]
    header = card_header(summary.path / "README.md")
    assert header["license"] == "other"
    assert [c["config_name"] for c in header["configs"]] == ["qrels", "topics", "nuggets", "evidence"]
    assert "their text is in `corpus.jsonl`" not in (summary.path / "README.md").read_text()


def test_a_licence_that_is_not_an_identifier_is_refused(released, tmp_path, cli_run):
    result = cli_run("release", "-w", released["bench"], "--version", "v3", "-o", tmp_path / "v3",
                     "--license", "All rights reserved", "--quiet")
    assert result.exit_code == 2 and "license 'All rights reserved'" in result.output
    assert not (tmp_path / "v3").exists()


def test_topics_with_narratives_load_with_their_narrative(tmp_path, hub_offline):
    import datasets
    from web_support import TOPICS, make_bench

    from trecbench.release import make_release
    from trecbench.store import Judge, Judgment, Workspace

    bench = make_bench(tmp_path)
    Workspace(bench).record_many([Judgment("1", "d1", 3, Judge("human", "alice"))])
    summary = make_release(bench, "v1", allow_missing_nuggets=True)
    assert "topics.jsonl" in summary.manifest["files"] and "topics.tsv" not in summary.manifest["files"]
    topics = datasets.load_dataset(str(summary.path), "topics", split="test", cache_dir=str(hub_offline))
    assert topics.to_list() == [{"qid": "1", "text": "solar energy", "narrative": TOPICS[0]["narrative"]},
                                {"qid": "2", "text": "wind power", "narrative": None}]
    assert [c["config_name"] for c in card_header(summary.path / "README.md")["configs"]] == ["qrels", "topics"]


def test_ir_datasets_gives_the_registered_releases_queries_qrels_and_judged_documents(released, irds_names):
    import ir_datasets

    import trecbench
    from trecbench.corpus import open_corpus
    from trecbench.qrels import read_qrels
    from trecbench.topics import read_topics

    out = released["out"]
    before = sorted(p.name for p in out.iterdir())
    name = trecbench.register_release(out, irds_names("larkspur/v1"))
    dataset = ir_datasets.load(name)
    assert [(q.query_id, q.text) for q in dataset.queries_iter()] == \
        [(t.qid, t.text) for t in read_topics(out / "topics.tsv")]
    trec = read_qrels(out / "qrels.txt")
    assert [(q.query_id, q.doc_id, q.relevance, q.iteration) for q in dataset.qrels_iter()] == \
        list(zip(trec["query_id"], trec["doc_id"], trec["relevance"].astype(int), ["0"] * len(trec)))
    corpus = open_corpus(released["root"] / "corpus.jsonl")
    doc, expected = dataset.docs_store().get("HB-RB-03"), corpus.get("HB-RB-03")
    assert (doc.doc_id, doc.title, doc.text) == (expected.docid, expected.title, expected.text)
    assert dataset.docs_count() == 168 and sum(1 for _ in dataset.docs_iter()) == 168
    assert sorted(p.name for p in out.iterdir()) == before  # the docstore went under IR_DATASETS_HOME


def test_ir_measures_scores_a_registered_release_as_trecbench_scores_its_qrels(released, irds_names):
    import ir_datasets
    import ir_measures

    import trecbench
    from trecbench.runs import read_run

    dataset = ir_datasets.load(trecbench.register_release(released["out"], irds_names("larkspur/v1-scored")))
    run_path = sorted((released["bench"] / "runs").glob("*"))[0]
    run = read_run(run_path)
    scored = [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in zip(run["query_id"], run["doc_id"], run["score"])]
    theirs = ir_measures.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.AP], dataset.qrels_iter(), scored)
    ours = trecbench.evaluate(released["out"] / "qrels.txt", run_path, ["nDCG@10", "AP"])
    assert theirs[ir_measures.nDCG @ 10] == pytest.approx(float(ours["nDCG@10"].iloc[0]), abs=1e-12)
    assert theirs[ir_measures.AP] == pytest.approx(float(ours["AP"].iloc[0]), abs=1e-12)


def test_a_corpus_given_to_register_release_serves_every_document_jsonl_or_tsv(released, tmp_path, irds_names):
    import ir_datasets

    import trecbench
    from trecbench.corpus import open_corpus

    corpus = open_corpus(released["root"] / "corpus.jsonl")
    whole = ir_datasets.load(trecbench.register_release(released["out"], irds_names("larkspur/whole"),
                                                        corpus=released["root"] / "corpus.jsonl"))
    assert sum(1 for _ in whole.docs_iter()) == len(corpus) == 170
    titled = tmp_path / "titled.tsv"
    titled.write_text("".join(f"{d.docid}\t{d.title}\t{d.text}\n" for d in corpus), encoding="utf-8")
    plain = tmp_path / "plain.tsv"
    plain.write_text("".join(f"{d.docid}\t{d.text}\n" for d in corpus), encoding="utf-8")
    for path, name in ((titled, "larkspur/titled"), (plain, "larkspur/plain")):
        dataset = ir_datasets.load(trecbench.register_release(released["out"], irds_names(name), corpus=path))
        doc = dataset.docs_store().get("HB-ACC-02")
        assert doc.doc_id == "HB-ACC-02" and doc.text == corpus.get("HB-ACC-02").text
        assert getattr(doc, "title", None) == (corpus.get("HB-ACC-02").title if path == titled else None)
        assert not (tmp_path / f"{path.name}.pklz4").exists()  # not beside the file, as TsvDocs would put it


def test_a_release_registered_without_a_corpus_has_no_docs(released, tmp_path, irds_names):
    import shutil

    import ir_datasets

    import trecbench

    copy = tmp_path / "no-corpus"
    shutil.copytree(released["out"], copy)
    (copy / "corpus.jsonl").unlink()
    dataset = ir_datasets.load(trecbench.register_release(copy, irds_names("larkspur/no-docs")))
    assert not dataset.has_docs() and dataset.has_queries() and dataset.has_qrels()


def test_a_corpus_from_ir_datasets_gives_its_docs_alone(released, tmp_path, monkeypatch, irds_names):
    import ir_datasets
    from irds_local import register_local_dataset

    import trecbench

    source = register_local_dataset(tmp_path, "other-corpus", docs=[("HB-ACC-01", "another text")],
                                    queries=[("Q9", "another query")], qrels=[("Q9", "HB-ACC-01", 1)],
                                    monkeypatch=monkeypatch)
    dataset = ir_datasets.load(trecbench.register_release(released["out"], irds_names("larkspur/irds"), corpus=source))
    assert dataset.docs_store().get("HB-ACC-01").text == "another text"
    assert [q.query_id for q in dataset.queries_iter()][:2] == ["T01", "T02"]  # the release's, not the source's
    assert {q.query_id for q in dataset.qrels_iter()} == {f"T{i:02d}" for i in range(1, 13)}
    with pytest.raises(ValueError, match="'msmarco-passage' is a dataset of ir_datasets already"):
        trecbench.register_release(released["out"], "msmarco-passage")
    assert ir_datasets.registry._registered["msmarco-passage"] is not dataset


def test_register_release_refuses_a_folder_that_is_not_a_release_and_a_corpus_it_cannot_read(released, tmp_path):
    import trecbench
    from trecbench.errors import InputError

    with pytest.raises(InputError, match="not a release folder: no qrels.txt"):
        trecbench.register_release(tmp_path, "nothing/here")
    with pytest.raises(InputError, match="no such corpus file"):
        trecbench.register_release(released["out"], "larkspur/lost", corpus=tmp_path / "gone.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "no id or text"}\n')
    with pytest.raises(InputError, match="the first document has no id"):
        trecbench.register_release(released["out"], "larkspur/bad", corpus=bad)
