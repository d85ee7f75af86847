"""Retrieval runs on another chunking (qrels projected by source span) and at source-document level.

The small case is test_evidence_chunkings' two chunkings: qrels on A (t1: a1 2, a2 1, a3 2, b1 0, b2 1), the
run on B ranking t1's c2, d1, c1, c3. Then the bundled sample with chunkings made here.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from chunkings import sample_chunkings, two_chunkings, write_lines
from paths import SAMPLE
from trecbench import evaluate
from trecbench.evaluation.retrieval.projection import read_projection
from trecbench.evaluation.retrieval.rankings import read_qrels_columns


def _grades(columns) -> dict[tuple[str, str], int]:
    return dict(zip(zip(columns.qid.strings(), columns.doc.strings()), columns.grade.tolist()))


def test_a_new_passage_gets_the_best_grade_of_the_judged_passages_it_covers(tmp_path):
    f = two_chunkings(tmp_path)
    notes: list[str] = []
    projected = read_projection(f["a"], f["b"]).qrels(read_qrels_columns(f["qrels"]), notes)
    # c1 holds a1 (2) and a2 (1); d1 holds b1 (0) and b2 (1); a3 is split over c2 and c3: neither gets it
    assert _grades(projected) == {("t1", "c1"): 2, ("t1", "d1"): 1}
    assert notes == ["1 judged (topic, passage) pair(s) split over several passages of " + str(f["b"]) +
                     ": no single passage covers them, so none gets their grade",
                     "2 (topic, passage) pair(s) of " + str(f["b"]) + " cover judged passages of different "
                     "grades: each gets the best of them"]  # c1 (2, 1) and d1 (0, 1)
    half = read_projection(f["a"], f["b"], cover=0.5).qrels(read_qrels_columns(f["qrels"]))
    assert _grades(half) == {("t1", "c1"): 2, ("t1", "c2"): 2, ("t1", "d1"): 1}  # c2 holds 18/27 of a3


def test_judged_passages_the_new_chunking_does_not_cover_are_counted(tmp_path):
    f = two_chunkings(tmp_path)
    short = write_lines(tmp_path / "short.jsonl", [json.loads(line) for line in f["b"].read_text().splitlines()][:2])
    notes: list[str] = []
    projected = read_projection(f["a"], short).qrels(read_qrels_columns(f["qrels"]), notes)
    assert _grades(projected) == {("t1", "c1"): 2}
    assert notes[0].startswith("3 judged (topic, passage) pair(s) not covered by")  # a3, b1, b2


def test_runs_on_another_chunking_are_scored_on_the_projected_qrels(tmp_path):
    f = two_chunkings(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = evaluate(f["qrels"], f["run"], ["P@2", "RR", "R@2", "AP"], projection=read_projection(f["a"], f["b"]))
    assert [str(w.message).split(" pair(s)")[0] for w in caught] == ["1 judged (topic, passage)", "2 (topic, passage)"]
    # relevant: c1 (2), d1 (1); ranking c2 d1 c1 c3
    assert frame.loc["sys"].tolist() == pytest.approx([0.5, 0.5, 0.5, (1 / 2 + 2 / 3) / 2])
    assert frame.attrs["level"] == "passage" and "projected by source span" in frame.attrs["projection"]


def test_document_level_grades_sources_by_their_best_passage_in_order_of_first_appearance(tmp_path):
    f = two_chunkings(tmp_path)
    projection = read_projection(f["a"], f["b"], level="document")
    assert _grades(projection.qrels(read_qrels_columns(f["qrels"]))) == {("t1", "S1"): 2, ("t1", "S2"): 1}
    frame = evaluate(f["qrels"], f["run"], ["P@1", "P@2", "RR", "nDCG@2"], projection=projection)
    assert frame.loc["sys"].tolist() == pytest.approx([1, 1, 1, 1])  # S1 (via c2), then S2 (via d1)
    assert frame.attrs["level"] == "document"


def test_the_document_run_keeps_trec_eval_order_and_ties(tmp_path):
    f = two_chunkings(tmp_path)
    tied = tmp_path / "tied.txt"
    tied.write_text("t1 Q0 c1 1 1 tie\nt1 Q0 d1 2 1 tie\n")  # a tie: docid descending puts d1 (S2) first
    frame = evaluate(f["qrels"], tied, ["RR(rel=2)"], projection=read_projection(f["a"], f["b"], level="document"))
    assert frame.loc["tie", "RR(rel=2)"] == 0.5  # S1 (grade 2) second


def test_eval_retrieval_cli_names_the_level_and_counts_split_pairs(tmp_path, cli_run):
    f = two_chunkings(tmp_path)
    result = cli_run("eval", "retrieval", "--qrels", f["qrels"], "--qrels-spans", f["a"], "--corpus-spans", f["b"],
                     f["run"], "-m", "P@2", "-m", "AP")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split() == ["sys", "0.5000", "0.5833"]
    assert result.stderr.splitlines()[0].startswith(f"scored at passage level on {f['b']}")
    assert "warning: 1 judged (topic, passage) pair(s) split over several passages" in result.stderr
    document = cli_run("eval", "retrieval", "--qrels", f["qrels"], "--qrels-spans", f["a"], "--level", "document",
                       "--corpus-spans", f["b"], f["run"], "-m", "P@2", "-f", "trec_eval")
    assert document.stdout == "P_2                   \tall\t1.0000\n"
    assert document.stderr.startswith("scored at source-document level")


def test_eval_retrieval_cli_takes_the_qrels_chunking_from_the_workspace_or_refuses(tmp_path, cli_run):
    f = two_chunkings(tmp_path)
    refused = cli_run("eval", "retrieval", "--qrels", f["qrels"], "--level", "document", f["run"])
    assert refused.exit_code == 2 and "--qrels-spans" in refused.stderr
    alone = cli_run("eval", "retrieval", "--qrels", f["qrels"], "--qrels-spans", f["a"], f["run"])
    assert alone.exit_code == 2
    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\tfirst\n")
    assert cli_run("init", tmp_path / "bench", "--corpus", f["a"], "--topics", topics).exit_code == 0
    bench = tmp_path / "bench"
    assert cli_run("qrels", "import", f["qrels"], "-w", bench, "--judge", "nist").exit_code == 0
    result = cli_run("eval", "retrieval", "-w", bench, "--corpus-spans", f["b"], f["run"], "-m", "P@2")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split() == ["sys", "0.5000"]


def test_without_the_new_options_eval_retrieval_prints_what_it_did(tmp_path, cli_run):
    result = cli_run("eval", "retrieval", "--qrels", SAMPLE / "qrels.txt", SAMPLE / "runs" / "bm25.txt",
                     "-m", "P@10", "-f", "trec_eval")
    assert result.exit_code == 0 and "scored at" not in result.output


# --- the bundled sample ----------------------------------------------------------------------------


def _sample_on(tmp_path: Path, halves) -> Path:
    """The sample's bm25 run on the split chunking: each passage's halves, the first at its score."""
    lines = []
    for line in (SAMPLE / "runs" / "bm25.txt").read_text().splitlines():
        qid, q0, docid, rank, score, tag = line.split()
        first, second = halves[docid]
        lines += [f"{qid} Q0 {first} {rank} {score} {tag}", f"{qid} Q0 {second} {rank} {float(score) - 1e-3} {tag}"]
    path = tmp_path / "bm25.split.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_sample_at_document_level_scores_the_same_on_either_chunking(tmp_path):
    a, b, halves = sample_chunkings(tmp_path)
    measures = ["nDCG@10", "AP", "R@100", "P@10"]
    own = evaluate(SAMPLE / "qrels.txt", SAMPLE / "runs" / "bm25.txt", measures,
                   projection=read_projection(a, level="document"))
    split = evaluate(SAMPLE / "qrels.txt", _sample_on(tmp_path, halves), measures,
                     projection=read_projection(a, b, level="document"))
    assert split.loc["bm25"].tolist() == pytest.approx(own.loc["bm25"].tolist())
    # each sample passage is its own source here: document level is passage level
    plain = evaluate(SAMPLE / "qrels.txt", SAMPLE / "runs" / "bm25.txt", measures)
    assert own.loc["bm25"].tolist() == pytest.approx(plain.loc["bm25"].tolist())


def test_the_sample_qrels_split_in_two_carry_no_grade_and_say_how_many(tmp_path):
    a, b, _ = sample_chunkings(tmp_path)
    notes: list[str] = []
    projected = read_projection(a, b).qrels(read_qrels_columns(SAMPLE / "qrels.txt"), notes)
    pairs = len((SAMPLE / "qrels.txt").read_text().splitlines())
    assert len(projected.grade) == 0 and notes[0].startswith(f"{pairs} judged (topic, passage) pair(s) split")


def test_the_sample_merged_in_pairs_grades_each_merged_passage_by_its_best_half(tmp_path):
    corpus = [json.loads(line) for line in (SAMPLE / "corpus.jsonl").read_text().splitlines()]
    # one source of two passages each: passages 2i and 2i+1 joined with a blank; chunking A keeps them apart
    a_lines, merged, members = [], [], {}
    for i in range(0, len(corpus) - 1, 2):
        first, second = corpus[i], corpus[i + 1]
        source = f"M{i // 2}"
        cut = len(first["contents"]) + 1
        text = first["contents"] + " " + second["contents"]
        a_lines += [{"id": first["id"], "contents": first["contents"], "source_id": source, "start_char": 0,
                     "end_char": cut - 1},
                    {"id": second["id"], "contents": second["contents"], "source_id": source, "start_char": cut,
                     "end_char": len(text)}]
        merged.append({"id": source, "contents": text, "source_id": source, "start_char": 0, "end_char": len(text)})
        members[first["id"]] = members[second["id"]] = source
    a, b = write_lines(tmp_path / "a.jsonl", a_lines), write_lines(tmp_path / "merged.jsonl", merged)
    projected = _grades(read_projection(a, b).qrels(read_qrels_columns(SAMPLE / "qrels.txt")))
    expected: dict[tuple[str, str], int] = {}
    for line in (SAMPLE / "qrels.txt").read_text().splitlines():
        qid, _, docid, grade = line.split()
        if docid in members:
            key = (qid, members[docid])
            expected[key] = max(expected.get(key, int(grade)), int(grade))
    assert projected == expected and len(expected) > 100
