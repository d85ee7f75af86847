"""`runs validate` of a clean run keeps what its summary and its checks need, not the run (issue 21)."""
from __future__ import annotations

from pathlib import Path

import pytest

import trecbench.files.columns as columns
from peak_rss import run_measured
from trecbench.runs import check_run
from trecbench.runs.trec import RunSummary, summarize_run

# The interpreter with numpy and pandas imported is about 110 MB (109 MB validating a one-line run); a
# block of lines and its columns add a few MB. Kept as a DataFrame, the 64 MB run below peaked at 244 MB;
# split a block at a time, 114 MB. A bound of 150 MB holds for a run of any size whose topics fit.
GROWTH_BOUND_MB = 50  # what a ~60 MB file may add to the peak of validating a 10-line one (~250 before)
LINES = 1_150_000


def clean_run(path: Path, lines: int = LINES) -> Path:
    with open(path, "w") as f:
        for start in range(0, lines, 10_000):
            f.write("".join(f"{100_000 + i // 1000} Q0 doc_{i:09d}_passage {i % 1000 + 1} "
                            f"{1 - i % 1000 / 1000:.6f} my-run-tag\n" for i in range(start, min(lines, start + 10_000))))
    return path


def test_validating_a_big_clean_run_keeps_its_memory_bounded_by_the_topics(tmp_path):
    path = clean_run(tmp_path / "run.txt")
    assert path.stat().st_size > 55_000_000
    status, out, err, peak_mb = run_measured(["runs", "validate", str(path)])
    assert (status, out, err) == (0, f"{path}: ok, 1150 topics, 1150000 lines, runid my-run-tag\n", "")
    *_, baseline_mb = run_measured(["runs", "validate", str(clean_run(tmp_path / "small.txt", lines=10))])
    # the interpreter and its imports differ between machines: the file's own cost is what is bounded
    assert peak_mb - baseline_mb < GROWTH_BOUND_MB, f"peak RSS {peak_mb:.0f} MB, {baseline_mb:.0f} MB for 10 lines"


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of a few lines, so a topic's lines straddle blocks."""
    monkeypatch.setattr(columns, "LINE_BLOCK", 64)


def test_a_summary_counts_the_lines_topics_and_last_tag_of_a_run_split_into_blocks(tmp_path, small_blocks):
    path = clean_run(tmp_path / "run.txt", lines=2_500)
    assert summarize_run(path) == (RunSummary(3, 2_500, "my-run-tag"), [])


@pytest.mark.parametrize("text", [
    "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 1 t\nq1 Q0 d 4 0.5 t\nq1 Q0 a 5 0.1 t\n",  # a docid twice, blocks apart
    "q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 a 1 3 t\nq2 Q0 b 2 2 t\nq1 Q0 a 1 1 t\n",  # an earlier topic comes back
    "q1 Q0 a 1 3 t\nq2 Q0 a 1 2 t\nq3 Q0 a 1 1 t\nq4 Q0 a 1 3 t\nq1 Q0 b 2 1 t\n",  # the same docid in each topic
])
def test_a_run_split_into_blocks_gets_the_problems_and_summary_of_the_line_by_line_check(tmp_path, small_blocks, text):
    path = tmp_path / "run.txt"
    path.write_text(text)
    frame, problems = check_run(path)
    summary = None if frame is None else RunSummary(frame["query_id"].nunique(), len(frame), frame.attrs["runid"])
    assert summarize_run(path) == (summary, problems)
