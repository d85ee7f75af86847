"""A large run is read and scored holding little more than its columns: blocks of topics, not copies of the run."""
from __future__ import annotations

import tracemalloc

import numpy as np

from trecbench.evaluation.retrieval.engine import score_run
from trecbench.evaluation.retrieval.names import parse_measures
from trecbench.evaluation.retrieval.rankings import qrels_table, read_qrels_columns, read_run_columns

TOPICS, DOCS = 400, 500  # 200,000 lines


def _files(tmp_path):
    rng = np.random.default_rng(3)
    run, qrels = [], []
    for t in range(TOPICS):
        docs = rng.choice(100_000, size=DOCS, replace=False)
        scores = np.round(np.sort(rng.random(DOCS))[::-1], 2)  # ties, broken by docid
        run += [f"q{t} Q0 document-{d} {i + 1} {s} run" for i, (d, s) in enumerate(zip(docs, scores))]
        qrels += [f"q{t} 0 document-{d} {g}" for d, g in zip(docs[::5], rng.integers(0, 3, size=DOCS // 5))]
    (tmp_path / "run.txt").write_text("\n".join(run) + "\n")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    return tmp_path / "run.txt", tmp_path / "qrels.txt"


def _peak(call):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = call()
        return result, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def _column_bytes(run) -> int:
    return run.qid.words.nbytes + run.doc.words.nbytes + run.score.nbytes


def test_reading_a_run_holds_its_columns_and_one_stretch_of_topics(tmp_path, monkeypatch):
    import trecbench.files.columns as columns

    monkeypatch.setattr(columns, "_LINES", 20_000)  # the duplicate check takes 20,000 lines at a time
    monkeypatch.setattr(columns, "_CHUNK", 1 << 16)  # the file is split 64 KiB at a time
    run_path, _ = _files(tmp_path)
    run, peak = _peak(lambda: read_run_columns(run_path))
    assert len(run.score) == TOPICS * DOCS
    assert peak < 1.5 * _column_bytes(run)  # it was 1.75 while the check took all lines at once


def test_scoring_a_run_in_blocks_needs_a_small_share_of_its_columns(tmp_path):
    run_path, qrels_path = _files(tmp_path)
    run, qrels = read_run_columns(run_path), read_qrels_columns(qrels_path)
    table = qrels_table(qrels)
    requests = parse_measures(["nDCG@10", "R@100", "AP", "Judged@10"])
    whole = score_run(run, qrels, requests, tables={1: table})
    blocks, peak = _peak(lambda: score_run(run, qrels, requests, tables={1: table}, slice_lines=10_000))
    assert [s.summary for s in blocks.scores] == [s.summary for s in whole.scores]
    assert peak < 0.5 * _column_bytes(run)  # it was 1.03 while blocks copied docids as strings
