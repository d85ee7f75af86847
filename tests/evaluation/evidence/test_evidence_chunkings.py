"""Evidence made on one chunking scores contexts retrieved from another chunking of the same sources.

The small case: two sources, chunking A (the benchmark's: a passage per sentence) and chunking B (the first
two sentences of S1 in one passage, its third sentence cut in two, S2 whole). Evidence on A, contexts on B,
every score computed by hand below. Then the bundled sample with a second chunking made here (each passage
cut in two at a sentence boundary).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunkings import passage, sample_chunkings, two_chunkings, write_lines
from paths import SAMPLE

from trecbench.evaluation.evidence.chunkings import read_chunking
from trecbench.evaluation.evidence.recall import evaluate_evidence, read_contexts, read_evidence
from trecbench.sources import Span, covered, held


def test_characters_held_together_are_counted_once_and_other_sources_hold_none():
    span = Span("S1", 10, 20)
    assert held(span, [Span("S1", 0, 14), Span("S1", 12, 16), Span("S2", 10, 20), Span("S1", 18, 30)]) == 8  # 10-16, 18-20
    assert covered(span, [Span("S1", 0, 30)]) and not covered(span, [Span("S1", 10, 19)])
    assert covered(span, [Span("S1", 10, 15), Span("S1", 15, 20)])
    assert covered(span, [Span("S1", 10, 19)], 0.9) and not covered(span, [Span("S1", 10, 18)], 0.9)
    with pytest.raises(ValueError):
        covered(span, [], 0)


def test_contexts_on_another_chunking_score_the_same_evidence_by_span(tmp_path):
    f = two_chunkings(tmp_path)
    scores = evaluate_evidence(f["evidence"], f["run"], k=2, chunking=read_chunking(f["a"], f["b"]))
    row = scores.frame.loc[("sys", "t1")]
    # top 2 = c2, d1: d1 holds b1 (E1) and b2, c2 only part of a3 (E3 needs c3 too), nothing holds a2 (E2)
    assert row["EvidenceRecall@2"] == pytest.approx(1 / 3) and row["CompleteEvidence@2"] == 0
    assert row["IDRecall@2"] == pytest.approx(2 / 5)  # b1 and b2 of a1 a2 a3 b1 b2
    assert scores.frame.loc[("sys", "t2"), "EvidenceRecall@2"] == 1  # c1 holds a2
    assert scores.frame.loc[("sys", "all"), "EvidenceRecall@2"] == pytest.approx((1 / 3 + 1) / 2)
    deeper = evaluate_evidence(f["evidence"], f["run"], k=4, chunking=read_chunking(f["a"], f["b"]))
    assert deeper.frame.loc[("sys", "t1"), "EvidenceRecall@4"] == 1  # c2 and c3 together hold a3


def test_a_lower_cover_lets_one_piece_of_a_split_passage_count(tmp_path):
    f = two_chunkings(tmp_path)
    half = evaluate_evidence(f["evidence"], f["run"], k=2, chunking=read_chunking(f["a"], f["b"], cover=0.5))
    assert half.frame.loc[("sys", "t1"), "EvidenceRecall@2"] == pytest.approx(2 / 3)  # c2 holds 18/27 of a3
    most = evaluate_evidence(f["evidence"], f["run"], k=2, chunking=read_chunking(f["a"], f["b"], cover=0.7))
    assert most.frame.loc[("sys", "t1"), "EvidenceRecall@2"] == pytest.approx(1 / 3)


def test_the_funnel_follows_items_through_the_stages_of_the_other_chunking(tmp_path):
    f = two_chunkings(tmp_path)
    scores = evaluate_evidence(f["evidence"], f["staged"], k=2, chunking=read_chunking(f["a"], f["b"]))
    lost = {(r.qid, r.item): r.lost_at for r in scores.funnel}
    assert lost == {("t1", "E1"): "", ("t1", "E2"): "cut@2", ("t1", "E3"): "cut@2", ("t2", "E4"): ""}
    summary = scores.stage_summary().set_index("stage")
    assert summary.loc["initial", "present"] == 4 and summary.loc["cut@2", "present"] == 2
    assert list(summary.columns) == ["run", "present", "required", "share", "lost_here"]  # no tokens asked for


def test_the_report_names_split_lost_and_unanchored_evidence_passages(tmp_path):
    f = two_chunkings(tmp_path)
    chunking = read_chunking(f["a"], f["b"])
    report = chunking.report(["a1", "a2", "a3", "b1", "b2", "nowhere"])
    assert (report.whole, report.joint, report.unanchored) == (["a1", "a2", "b1", "b2"], ["a3"], ["nowhere"])
    short = write_lines(tmp_path / "short.jsonl", [passage("c1", "S1", 0, 42), passage("c2", "S1", 42, 60)])
    assert read_chunking(f["a"], short).report(["a3", "b1"]).uncovered == ["a3", "b1"]
    assert chunking.unspanned(["c1", "zz", "zz"]) == ["zz"]


def test_eval_evidence_cli_prints_the_rule_and_the_split_passages(tmp_path, cli_run):
    f = two_chunkings(tmp_path)
    result = cli_run("eval", "evidence", "--evidence", f["evidence"], "--contexts", f["run"], "-k", "2",
                     "--evidence-spans", f["a"], "--corpus-spans", f["b"], "-q")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["run", "topic", "EvidenceRecall@2", "CompleteEvidence@2", "IDRecall@2"]
    assert lines[1].split() == ["sys", "t1", "0.3333", "0.0000", "0.4000"]
    assert lines[3].split() == ["sys", "all", "0.6667", "0.5000", "0.7000"]
    assert "hold every character of its span" in result.stderr
    assert "1 evidence passage(s) split over several passages" in result.stderr and ": a3" in result.stderr


def test_eval_evidence_cli_json_names_the_rule_and_lists_contexts_without_a_span(tmp_path, cli_run):
    f = two_chunkings(tmp_path)
    run = tmp_path / "odd.txt"
    run.write_text("t1 Q0 d1 1 2 odd\nt1 Q0 x9 2 1 odd\n")
    result = cli_run("eval", "evidence", "--evidence", f["evidence"], "--contexts", run, "-k", "2",
                     "--evidence-spans", f["a"], "--corpus-spans", f["b"], "--cover", "0.9", "-f", "json")
    assert result.exit_code == 0, result.output
    entry = json.loads(result.stdout)[0]
    assert entry["coverage"]["cover"] == 0.9 and "at least 90% of the characters" in entry["coverage"]["rule"]
    assert entry["coverage"]["joint"] == ["a3"] and entry["retrieved_without_span"] == ["x9"]
    assert "odd: 1 retrieved passage(s) have no span" in result.stderr


def test_eval_evidence_cli_takes_the_evidence_chunking_from_the_workspace(tmp_path, cli_run):
    f = two_chunkings(tmp_path)
    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\tfirst\nt2\tsecond\n")
    assert cli_run("init", tmp_path / "bench", "--corpus", f["a"], "--topics", topics).exit_code == 0
    result = cli_run("eval", "evidence", "--evidence", f["evidence"], "--contexts", f["run"], "-k", "2",
                     "-w", tmp_path / "bench", "--corpus-spans", f["b"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1].split() == ["sys", "0.6667", "0.5000", "0.7000"]


def test_eval_evidence_cli_refuses_spans_without_their_other_half(tmp_path, cli_run):
    f = two_chunkings(tmp_path)
    alone = cli_run("eval", "evidence", "--evidence", f["evidence"], "--contexts", f["run"], "--corpus-spans", f["b"])
    assert alone.exit_code == 2 and "--evidence-spans" in alone.stderr
    other = cli_run("eval", "evidence", "--evidence", f["evidence"], "--contexts", f["run"], "--evidence-spans", f["a"])
    assert other.exit_code == 2 and "--corpus-spans" in other.stderr


def test_without_the_new_options_the_output_is_unchanged(tmp_path, cli_run):
    f = two_chunkings(tmp_path)
    result = cli_run("eval", "evidence", "--evidence", f["evidence"], "--contexts", f["staged"], "-k", "2",
                     "--funnel", "-f", "table")
    assert result.exit_code == 0 and result.stderr == ""
    assert "tokens" not in result.stdout and "coverage" not in result.stdout
    data = cli_run("eval", "evidence", "--evidence", f["evidence"], "--contexts", f["staged"], "-f", "json")
    entry = json.loads(data.stdout)[0]
    assert not {"coverage", "tokenizer", "budgets", "tokens_per_stage"} & set(entry)


# --- the bundled sample, with a second chunking made here --------------------------------------------


def _split_contexts(tmp_path: Path, halves, keep=(0, 1)) -> Path:
    """The sample's staged contexts with each passage replaced by its halves (those in `keep`), in order."""
    out = []
    for line in (SAMPLE / "contexts.jsonl").read_text().splitlines():
        record = json.loads(line)
        record["docids"] = [halves[d][i] for d in record["docids"] for i in keep]
        out.append(record)
    return write_lines(tmp_path / "split.jsonl", out)


def test_the_sample_on_a_split_chunking_scores_as_on_its_own_when_both_halves_come_back(tmp_path):
    from trecbench.sources import check_spans

    a, b, halves = sample_chunkings(tmp_path)
    check_spans(b, read_chunking(a, b).retrieved)  # the halves are the characters they claim
    evidence = read_evidence(SAMPLE / "nuggets.jsonl")
    own = evaluate_evidence(evidence, SAMPLE / "contexts.jsonl", k=5)
    split = evaluate_evidence(evidence, _split_contexts(tmp_path, halves), k=10, chunking=read_chunking(a, b))
    mine, theirs = own.frame.to_numpy(), split.frame.to_numpy()
    assert mine.shape == theirs.shape and (abs(mine - theirs) < 1e-12).all()  # @5 passages = @10 halves
    assert [(r.qid, r.item, r.lost_at) for r in own.funnel] == [(r.qid, r.item, r.lost_at) for r in split.funnel]
    needed = {d for i in evidence for d in i.sources}
    assert sorted(split.chunking_report.joint) == sorted(needed)  # every evidence passage was cut in two


def test_the_sample_on_a_split_chunking_finds_nothing_from_first_halves_alone(tmp_path):
    a, b, halves = sample_chunkings(tmp_path)
    evidence = read_evidence(SAMPLE / "nuggets.jsonl")
    firsts = read_contexts(_split_contexts(tmp_path, halves, keep=(0,)))
    scores = evaluate_evidence(evidence, firsts, k=10, chunking=read_chunking(a, b))
    assert (scores.frame["EvidenceRecall@10"].fillna(0) == 0).all()
    # by hand, on T01: the evidence passages whose first half holds at least 40% of them, in the top 10 halves
    low = evaluate_evidence(evidence, firsts, k=10, chunking=read_chunking(a, b, cover=0.4))
    t01 = [i for i in evidence if i.qid == "T01" and i.any_of]
    top = {c.id.split("#")[0] for c in firsts.top_k("T01", 10)}
    chunks = {p["id"]: p for p in map(json.loads, b.read_text().splitlines())}
    enough = {d for d in top if len(chunks[halves[d][0]]["contents"]) >= 0.4 * (chunks[halves[d][1]]["end_char"])}
    expected = sum(any(all(d in enough for d in g) for g in i.any_of) for i in t01) / len(t01)
    assert 0 < expected < 1
    assert low.frame.loc[("sample_rag", "T01"), "EvidenceRecall@10"] == pytest.approx(expected)
