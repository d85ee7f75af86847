"""`qrels validate` of clean qrels keeps what its summary and its checks need, not the qrels (issue 21)."""
from __future__ import annotations

from pathlib import Path

import pytest

import trecbench.files.columns as columns
from peak_rss import run_measured
from trecbench.qrels import check_qrels
from trecbench.qrels.trec import QrelsSummary, summarize_qrels

# As for runs (tests/runs/test_runs_validate_bounded.py): the interpreter is about 110 MB; kept as a
# DataFrame, the 61 MB qrels below peaked at 297 MB; split a block at a time, 116 MB.
GROWTH_BOUND_MB = 50  # what a ~60 MB file may add to the peak of validating a 10-line one (~250 before)
LINES = 1_850_000


def clean_qrels(path: Path, lines: int = LINES) -> Path:
    with open(path, "w") as f:
        for start in range(0, lines, 10_000):
            f.write("".join(f"{100_000 + i // 1000} 0 doc_{i:09d}_passage {i % 3}\n"
                            for i in range(start, min(lines, start + 10_000))))
    return path


def test_validating_big_clean_qrels_keeps_its_memory_bounded_by_the_topics(tmp_path):
    path = clean_qrels(tmp_path / "qrels.txt")
    assert path.stat().st_size > 55_000_000
    status, out, err, peak_mb = run_measured(["qrels", "validate", str(path)])
    assert (status, out, err) == (0, f"{path}: ok, 1850 topics, 1850000 judgments, 1233333 relevant\n", "")
    *_, baseline_mb = run_measured(["qrels", "validate", str(clean_qrels(tmp_path / "small.txt", lines=10))])
    # the interpreter and its imports differ between machines: the file's own cost is what is bounded
    assert peak_mb - baseline_mb < GROWTH_BOUND_MB, f"peak RSS {peak_mb:.0f} MB, {baseline_mb:.0f} MB for 10 lines"


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few lines, so a topic's lines straddle blocks."""
    monkeypatch.setattr(columns, "LINE_BLOCK", 48)


def test_a_summary_counts_the_judgments_topics_and_relevant_ones_of_qrels_split_into_blocks(tmp_path, small_blocks):
    path = clean_qrels(tmp_path / "qrels.txt", lines=2_500)
    assert summarize_qrels(path) == (QrelsSummary(3, 2_500, 1_666), [])


@pytest.mark.parametrize("text", [
    "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq1 0 d 1\nq1 0 e 0\nq1 0 a 1\n",  # a docid judged twice, blocks apart
    "q1 0 a 1\nq1 0 b 0\nq2 0 a 1\nq2 0 b 2\nq1 0 c 1\n",  # an earlier topic comes back
    "q1 0 a 1\nq2 0 a 0\nq3 0 a 2\nq4 0 a 1\nq1 0 b -1\n",  # the same docid in each topic
])
def test_qrels_split_into_blocks_get_the_problems_and_summary_of_the_line_by_line_check(tmp_path, small_blocks, text):
    path = tmp_path / "qrels.txt"
    path.write_text(text)
    frame, problems = check_qrels(path)
    summary = None if frame is None else QrelsSummary(frame["query_id"].nunique(), len(frame),
                                                      int((frame["relevance"] > 0).sum()))
    assert summarize_qrels(path) == (summary, problems)
