"""Duplicate groups: exact and near-duplicate text, representatives, and judgments propagated on export."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from trecbench.pooling import build_pool, read_pool
from trecbench.pooling.dedup import jaccard, normalise, shingles
import numpy as np

BASE = "the quick brown fox jumps over the lazy dog near the river bank on a sunny day in may"


def corpus(tmp_path: Path, docs: dict[str, str]) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": k, "contents": v}) + "\n" for k, v in docs.items()))
    return path


def run_frame(docids: list[str], runid: str = "r", topic: str = "q") -> pd.DataFrame:
    frame = pd.DataFrame({"query_id": topic, "doc_id": docids, "score": [float(len(docids) - i) for i in range(len(docids))]})
    frame.attrs["runid"] = runid
    return frame


def groups(pool) -> dict[str, str]:
    return dict(zip(pool.candidates["doc_id"], pool.candidates["group"]))


def test_normalise_lowercases_strips_punctuation_and_collapses_whitespace():
    assert normalise("  The QUICK,   brown\tfox -- jumps!\n") == "the quick brown fox jumps"


def test_exact_dedup_groups_identical_normalised_text(tmp_path):
    docs = corpus(tmp_path, {"a": BASE, "b": BASE.upper().replace(" ", "  ") + "!!", "c": BASE + " again", "d": "other"})
    pool = build_pool([run_frame(["a", "b", "c", "d"])], corpus=docs, dedup="exact")
    assert groups(pool) == {"a": "a", "b": "a", "c": "c", "d": "d"}
    assert pool.candidates["representative"].tolist() == [True, False, True, True]
    assert pool.judgments_saved == 1


def test_near_dedup_joins_documents_above_the_threshold_only(tmp_path):
    near = BASE.replace("may", "june")  # the last of 19 words changed: 14 of 16 distinct 5-shingles shared
    far = "completely different words about pooling test collections and relevance judgments by assessors"
    docs = corpus(tmp_path, {"a": BASE, "b": near, "c": far})
    vocab: dict[str, int] = {}
    sa, sb = (shingles([vocab.setdefault(w, len(vocab)) for w in normalise(t).split()]) for t in (BASE, near))
    assert jaccard(sa, sb) == pytest.approx(14 / 16)
    assert groups(build_pool([run_frame(["a", "b", "c"])], corpus=docs, dedup="near", threshold=0.85)) == \
        {"a": "a", "b": "a", "c": "c"}
    assert groups(build_pool([run_frame(["a", "b", "c"])], corpus=docs, dedup="near", threshold=0.9)) == \
        {"a": "a", "b": "b", "c": "c"}


def test_the_representative_is_the_member_judged_first(tmp_path):
    docs = corpus(tmp_path, {"a": BASE, "b": BASE, "c": BASE})
    pool = build_pool([run_frame(["c", "b", "a"])], corpus=docs, dedup="exact")
    assert groups(pool) == {"c": "c", "b": "c", "a": "c"}
    assert pool.to_judge()["doc_id"].tolist() == ["c"]


def test_groups_never_cross_topics(tmp_path):
    docs = corpus(tmp_path, {"a": BASE, "b": BASE})
    runs = {"r1": run_frame(["a"], topic="q1"), "r2": run_frame(["b"], topic="q2")}
    pool = build_pool(runs, corpus=docs, dedup="exact")
    assert pool.candidates["representative"].all()


def test_docids_absent_from_the_corpus_are_reported_and_kept_alone(tmp_path):
    docs = corpus(tmp_path, {"a": BASE, "b": BASE})
    pool = build_pool([run_frame(["a", "ghost", "b"])], corpus=docs, dedup="near")
    assert groups(pool) == {"a": "a", "ghost": "ghost", "b": "a"}
    assert [str(p) for p in pool.problems] == [f"{docs}: 1 pooled docid(s) not in the corpus, not de-duplicated: ghost"]


def test_budget_counts_representatives_and_keeps_their_duplicates(tmp_path):
    docs = corpus(tmp_path, {"a": BASE, "b": "unrelated text one", "c": BASE, "d": "unrelated text two"})
    pool = build_pool([run_frame(["a", "b", "c", "d"])], corpus=docs, dedup="exact", budget=2)
    assert pool.candidates["doc_id"].tolist() == ["a", "b", "c"]  # c is a's duplicate: no judgment of its own
    assert pool.candidates["priority"].tolist() == [1, 2, 3]


def test_a_budget_cut_between_a_representative_and_its_duplicate_renumbers_the_priorities(tmp_path):
    docs = corpus(tmp_path, {"a": BASE, "b": "unrelated text one", "d": "unrelated text two", "c": BASE})
    pool = build_pool([run_frame(["a", "b", "d", "c"])], corpus=docs, dedup="exact", budget=2)
    assert pool.candidates["doc_id"].tolist() == ["a", "b", "c"]  # d, the third representative, is cut
    assert pool.candidates["priority"].tolist() == [1, 2, 3]  # c moves up to 3: priorities stay 1..n


def test_a_grade_0_is_lent_to_the_duplicates_like_any_grade(tmp_path):
    from trecbench import propagated_qrels

    docs = corpus(tmp_path, {"a": BASE, "b": BASE, "c": "other text"})
    pool = build_pool([run_frame(["a", "b", "c"])], corpus=docs, dedup="exact")
    qrels = pd.DataFrame({"query_id": ["q"], "iteration": ["0"], "doc_id": ["a"], "relevance": [0]})
    out, propagated = propagated_qrels(qrels, pool)
    # b is judged non-relevant through a, not left unjudged (bpref, infAP and Judged@k count it as judged)
    assert out[["doc_id", "relevance", "propagated_from"]].values.tolist() == [["a", 0, None], ["b", 0, "a"]]
    assert propagated == 1


def test_propagate_copies_the_representatives_judgment_marked_propagated(tmp_path):
    docs = corpus(tmp_path, {"a": BASE, "b": BASE, "c": "other text", "d": BASE})
    pool = build_pool([run_frame(["a", "b", "c", "d"])], corpus=docs, dedup="exact")
    qrels = pd.DataFrame({"query_id": ["q", "q", "q"], "iteration": ["0", "0", "0"], "doc_id": ["a", "c", "d"],
                          "relevance": [2, 0, 1]})
    from trecbench import propagated_qrels

    out, propagated = propagated_qrels(qrels, pool)
    assert out[["query_id", "iteration", "doc_id", "relevance", "propagated_from"]].values.tolist() == [
        ["q", "0", "a", 2, None], ["q", "propagated", "b", 2, "a"], ["q", "0", "c", 0, None],
        ["q", "0", "d", 1, None],  # d judged itself: kept
    ]
    assert propagated == 1
    assert list(qrels.columns) == ["query_id", "iteration", "doc_id", "relevance"]  # input unchanged


def test_export_qrels_writes_propagated_judgments(tmp_path, cli_run):
    docs = corpus(tmp_path, {"a": BASE, "b": BASE, "c": "other"})
    run = tmp_path / "run.txt"
    run.write_text("q Q0 a 1 3 r\nq Q0 b 2 2 r\nq Q0 c 3 1 r\n")
    result = cli_run("pool", run, "--corpus", docs, "--dedup", "exact", "-o", tmp_path / "pool.tsv")
    assert result.exit_code == 0, result.output
    assert "judgments saved: 1 (33.3%)" in result.stderr
    (tmp_path / "judged.txt").write_text("q 0 a 1\nq 0 c 0\n")
    result = cli_run("pool", "export-qrels", tmp_path / "pool.tsv", "--qrels", tmp_path / "judged.txt",
                     "-o", tmp_path / "qrels.txt")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "qrels.txt").read_text() == "q 0 a 1\nq propagated b 1\nq 0 c 0\n"
    assert "3 judgments written, 1 propagated to duplicates" in result.stderr
    assert read_pool(tmp_path / "pool.tsv").info.dedup == "exact"


def test_dedup_without_a_corpus_is_a_usage_error(tmp_path, cli_run):
    run = tmp_path / "run.txt"
    run.write_text("q Q0 a 1 3 r\n")
    result = cli_run("pool", run, "--dedup", "near")
    assert result.exit_code == 2 and "--dedup near needs the documents' text: give --corpus" in result.output


def test_exact_compares_the_text_an_assessor_reads_not_the_title(tmp_path):
    path = tmp_path / "corpus.jsonl"
    docs = [{"id": "a", "title": "Licence, team A", "contents": BASE}, {"id": "b", "title": "Licence, team B",
                                                                           "contents": BASE},
            {"id": "c", "title": "Licence, team A", "contents": "another passage altogether"}]
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    pool = build_pool([run_frame(["a", "b", "c"])], corpus=path, dedup="exact")
    assert groups(pool) == {"a": "a", "b": "a", "c": "c"}


def test_a_judged_duplicate_lends_its_grade_when_the_representative_is_unjudged(tmp_path, cli_run):
    # A and B share their text (A is the representative); only B and C are judged
    docs = corpus(tmp_path, {"A": BASE, "B": BASE, "C": "other text"})
    run = tmp_path / "run.txt"
    run.write_text("q Q0 A 1 3 r\nq Q0 B 2 2 r\nq Q0 C 3 1 r\n")
    assert cli_run("pool", run, "--corpus", docs, "--dedup", "exact", "-o", tmp_path / "pool.tsv").exit_code == 0
    (tmp_path / "judged.txt").write_text("q 0 B 2\nq 0 C 0\n")
    result = cli_run("pool", "export-qrels", tmp_path / "pool.tsv", "--qrels", tmp_path / "judged.txt",
                     "-o", tmp_path / "qrels.txt")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "qrels.txt").read_text() == "q propagated A 2\nq 0 B 2\nq 0 C 0\n"


def test_near_duplicates_with_exactly_the_threshold_similarity_are_grouped(tmp_path: Path):
    base = " ".join(f"w{i}" for i in range(60))
    near = base.rsplit(" ", 1)[0] + " other"
    vocab: dict[str, int] = {}
    sa, sb = (shingles([vocab.setdefault(w, len(vocab)) for w in normalise(t).split()]) for t in (base, near))
    exact = jaccard(sa, sb)
    assert 0.9 < exact < 1.0
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "contents": v}) + "\n" for k, v in {"a": base, "b": near}.items()))
    pool = build_pool([run_frame(["a", "b"], "r", "q")], corpus=corpus, dedup="near", threshold=exact)
    assert dict(zip(pool.candidates["doc_id"], pool.candidates["group"])) == {"a": "a", "b": "a"}
    apart = build_pool([run_frame(["a", "b"], "r", "q")], corpus=corpus, dedup="near", threshold=float(np.nextafter(exact, 1)))
    assert dict(zip(apart.candidates["doc_id"], apart.candidates["group"])) == {"a": "a", "b": "b"}
