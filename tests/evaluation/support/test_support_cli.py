"""`support add`, `support import`/`export` and `eval support` on real files, with hand-computed numbers.

The fixture: corpus d1 d2 d3; run r1 (TREC RAG 2024 file) answers q1 with s0 citing d1 and d2, s1 citing d3, s2
citing nothing, and q2 with s0 citing d1, s1 citing dX (not in the corpus); run r2 (2025 file) answers q1 with
s0 citing d1 and q2 with one sentence and no citation at all. Alice grades r1 q1 s0 d1 full, s0 d2 partial,
s1 d3 none, r1 q2 s0 d1 partial, r2 q1 s0 d1 contradicts; r1 q2 s1 dX is not judged.

By hand (weights full 1, partial 0.5, none 0, contradicts 0):
  r1 q1: SupportP (1 + 0.5 + 0) / 3 = 0.5; SupportR (1 + 0 + 0) / 3 = 0.3333; Unsupported 2/3; Contradicts 0/3;
         Judged 3/3
  r1 q2: SupportP 0.5 / 1 (dX not judged: left out) = 0.5; SupportR: s0 0.5, s1 not known (its one citation is
         not judged) -> 0.5 / 1 = 0.5; Unsupported 0/1; Contradicts 0/1; Judged 1/2
  r1 all (macro): SupportP 0.5, SupportR (0.3333 + 0.5) / 2 = 0.4167, Unsupported 0.3333, Contradicts 0,
         Judged 0.75; micro: SupportP (1.5 + 0.5) / 4 = 0.5, SupportR (1 + 0.5) / 4 = 0.375, Unsupported 2/4
  r2 q1: SupportP 0, SupportR 0, Unsupported 1, Contradicts 1, Judged 1
  r2 q2: no citation: SupportP, Contradicts and Judged not defined (-); SupportR 0, Unsupported 1
  r2 all: SupportP 0, SupportR 0, Unsupported 1, Contradicts 1, Judged 1 (micro the same)
"""
import json
from pathlib import Path

import pytest

from tests.support.cli_support import run_cli, write_jsonl

ALICE = [
    {"run_id": "r1", "topic_id": "q1", "sentence": 0, "citation": "d1", "grade": "full", "judge": "alice"},
    {"run_id": "r1", "topic_id": "q1", "sentence": 0, "citation": "d2", "grade": "partial", "judge": "alice"},
    {"run_id": "r1", "topic_id": "q1", "sentence": 1, "citation": "d3", "grade": "none", "judge": "alice"},
    {"run_id": "r1", "topic_id": "q2", "sentence": 0, "citation": "d1", "grade": "partial", "judge": "alice"},
    {"run_id": "r2", "topic_id": "q1", "sentence": 0, "citation": "d1", "grade": "contradicts", "judge": "alice"},
]


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """A workspace with the fixture's corpus and topics and both answer files registered (`support add`)."""
    corpus = write_jsonl(tmp_path, [{"id": d, "contents": f"passage {d}"} for d in ("d1", "d2", "d3")], "corpus.jsonl")
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tfirst question\nq2\tsecond question\n")
    path = tmp_path / "bench"
    assert run_cli("init", path, "--topics", topics, "--corpus", corpus).exit_code == 0
    result = run_cli("support", "add", "-w", path, *answer_files(tmp_path))
    assert result.exit_code == 0, result.output
    return path


def answer_files(tmp_path: Path) -> list[Path]:
    r1 = write_jsonl(tmp_path, [
        {"run_id": "r1", "topic_id": "q1", "topic": "first question", "references": ["d1", "d2", "d3"],
         "answer": [{"text": "One.", "citations": [0, 1]}, {"text": "Two.", "citations": [2]},
                    {"text": "Three.", "citations": []}]},
        {"run_id": "r1", "topic_id": "q2", "topic": "second question", "references": ["d1", "dX"],
         "answer": [{"text": "Four.", "citations": [0]}, {"text": "Five.", "citations": [1]}]}], "r1.jsonl")
    r2 = write_jsonl(tmp_path, [
        {"metadata": {"team_id": "t", "run_id": "r2", "type": "automatic", "narrative_id": "q1",
                      "narrative": "first question"}, "references": ["d1"],
         "answer": [{"text": "Six.", "citations": ["d1"]}]},
        {"metadata": {"team_id": "t", "run_id": "r2", "type": "automatic", "narrative_id": "q2",
                      "narrative": "second question"}, "references": [],
         "answer": [{"text": "Seven.", "citations": []}]}], "r2.jsonl")
    return [r1, r2]


def test_support_add_counts_and_lists_what_cannot_be_judged(tmp_path):
    corpus = write_jsonl(tmp_path, [{"id": d, "contents": f"passage {d}"} for d in ("d1", "d2", "d3")], "corpus.jsonl")
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tfirst question\nq2\tsecond question\n")
    run_cli("init", tmp_path / "bench", "--topics", topics, "--corpus", corpus)
    result = run_cli("support", "add", "-w", tmp_path / "bench", *answer_files(tmp_path))
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "4 answers, 7 sentences, 6 sentence-citation pairs",
        "answers without any citation: 1",
        "sentences citing nothing: 2",
        "citations to docids not in the corpus: 1",
        "registered: 7 new, 0 changed",
        "answer without any citation: run r2 topic q2",
        "sentence citing nothing: run r1 topic q1 sentence 2",
        "sentence citing nothing: run r2 topic q2 sentence 0",
        "citation not in the corpus: run r1 topic q2 sentence 1 docid dX",
    ]
    again = run_cli("support", "add", "-w", tmp_path / "bench", *answer_files(tmp_path))
    assert "registered: 0 new, 0 changed" in again.stdout


def test_support_add_refuses_a_bad_answer_file_with_its_line(tmp_path, bench):
    bad = write_jsonl(tmp_path, [{"run_id": "r3", "topic_id": "q1", "answer": "no list"}], "bad.jsonl")
    result = run_cli("support", "add", "-w", bench, bad)
    assert result.exit_code == 2
    assert f"{bad}:1: topic 'q1': 'answer' must be a list" in result.stderr
    assert "Traceback" not in result.output


def test_eval_support_gives_the_hand_computed_scores(tmp_path, bench):
    assert run_cli("support", "import", "-w", bench, write_jsonl(tmp_path, ALICE, "alice.jsonl")).exit_code == 0
    result = run_cli("eval", "support", "-w", bench, "-q")
    assert result.exit_code == 0, result.output
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in result.stdout.splitlines()[1:]}
    assert result.stdout.splitlines()[0].split() == [
        "run", "topic", "SupportP", "SupportR", "Unsupported", "Contradicts", "Judged", "SupportP_micro",
        "SupportR_micro", "Unsupported_micro", "Contradicts_micro"]
    assert rows[("r1", "q1")][:5] == ["0.5000", "0.3333", "0.6667", "0.0000", "1.0000"]
    assert rows[("r1", "q2")][:5] == ["0.5000", "0.5000", "0.0000", "0.0000", "0.5000"]
    assert rows[("r1", "all")] == ["0.5000", "0.4167", "0.3333", "0.0000", "0.7500", "0.5000", "0.3750", "0.5000",
                                   "0.0000"]
    assert rows[("r2", "q1")][:5] == ["0.0000", "0.0000", "1.0000", "1.0000", "1.0000"]
    assert rows[("r2", "q2")][:5] == ["-", "0.0000", "1.0000", "-", "-"]
    assert rows[("r2", "all")] == ["0.0000", "0.0000", "1.0000", "1.0000", "1.0000", "0.0000", "0.0000", "1.0000",
                                   "1.0000"]
    assert ("r1: 1 of 5 sentence-citation pairs not judged, left out of SupportP; 1 of 5 sentences left out of "
            "SupportR and Unsupported") in result.stderr


def test_eval_support_json_counts_the_unjudged_pairs(tmp_path, bench):
    run_cli("support", "import", "-w", bench, write_jsonl(tmp_path, ALICE, "alice.jsonl"))
    doc = json.loads(run_cli("eval", "support", "-w", bench, "--format", "json").stdout)
    r1 = next(d for d in doc if d["run"] == "r1")
    assert (r1["pairs"], r1["judged_pairs"], r1["unjudged_pairs"], r1["sentences"], r1["unscored_sentences"]) == \
        (5, 4, 1, 5, 1)
    assert r1["all"]["SupportR_micro"] == pytest.approx(0.375)


def test_without_contradicts_grades_the_contradicts_column_is_not_shown(tmp_path, bench):
    rows = [r for r in ALICE if r["grade"] != "contradicts"]
    run_cli("support", "import", "-w", bench, write_jsonl(tmp_path, rows, "alice.jsonl"))
    assert "Contradicts" not in run_cli("eval", "support", "-w", bench).stdout


def test_a_newer_judges_grade_counts_unless_another_judge_is_named(tmp_path, bench):
    run_cli("support", "import", "-w", bench, write_jsonl(tmp_path, ALICE, "alice.jsonl"))
    bob = [{"run_id": "r1", "topic_id": "q1", "sentence": 1, "citation": "d3", "grade": "full"}]
    result = run_cli("support", "import", "-w", bench, write_jsonl(tmp_path, bob, "second.jsonl"), "--judge", "bob")
    assert result.exit_code == 0 and "imported 1 support judgments by bob" in result.stderr

    def r1_q1(*options: str) -> list[str]:
        out = run_cli("eval", "support", "-w", bench, "-q", *options).stdout.splitlines()
        return next(line.split()[2:4] for line in out if line.split()[:2] == ["r1", "q1"])

    assert r1_q1() == ["0.8333", "0.6667"]  # (1 + 0.5 + 1) / 3; (1 + 1 + 0) / 3
    assert r1_q1("--judge", "alice") == ["0.5000", "0.3333"]
    # bob judged one pair: s0's citations are not judged (left out), s1 is 1, s2 cites nothing (0)
    assert r1_q1("--judge", "bob") == ["1.0000", "0.5000"]
    refused = run_cli("eval", "support", "-w", bench, "--judge", "carol")
    assert refused.exit_code == 2 and "no support judgments by 'carol'" in refused.stderr


def test_support_import_refuses_bad_rows_with_path_line_and_records_nothing(tmp_path, bench):
    bad = write_jsonl(tmp_path, [
        ALICE[0],
        {**ALICE[1], "grade": "mostly"},
        {**ALICE[1], "sentence": 7},
        {**ALICE[1], "citation": "d3"},
        "not json",
        {"run_id": "r1", "topic_id": "q1"},
    ], "bad.jsonl")
    result = run_cli("support", "import", "-w", bench, bad)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert lines[0] == f"{bad}:2: unknown grade 'mostly': one of full, partial, none, contradicts"
    assert lines[1] == (f"{bad}:3: sentence 7 of run 'r1''s answer to topic 'q1' is not registered (register the "
                        "answers with `trecbench support add`)")
    assert lines[2] == f"{bad}:4: sentence 0 of run 'r1''s answer to topic 'q1' does not cite 'd3' (it cites d1, d2)"
    assert lines[3].startswith(f"{bad}:5: ")
    assert lines[4] == f"{bad}:6: missing fields 'sentence', 'citation', 'grade'"
    assert run_cli("support", "export", "-w", bench).stdout == ""  # the good first row was not recorded either


def test_support_export_then_import_gives_the_same_judgments(tmp_path, bench):
    run_cli("support", "import", "-w", bench, write_jsonl(tmp_path, ALICE, "alice.jsonl"))
    exported = tmp_path / "support.jsonl"
    assert run_cli("support", "export", "-w", bench, "-o", exported).exit_code == 0
    rows = [json.loads(line) for line in exported.read_text().splitlines()]
    assert [(r["run_id"], r["topic_id"], r["sentence"], r["citation"], r["grade"]) for r in rows] == \
        sorted((r["run_id"], r["topic_id"], r["sentence"], r["citation"], r["grade"]) for r in ALICE)
    assert {(r["judge"], r["judge_kind"]) for r in rows} == {("alice", "import")}

    other = tmp_path / "other"
    other.mkdir()
    (other / "topics.tsv").write_text("q1\tfirst question\nq2\tsecond question\n")
    run_cli("init", other / "bench", "--topics", other / "topics.tsv")
    run_cli("support", "add", "-w", other / "bench", *answer_files(other))
    assert run_cli("support", "import", "-w", other / "bench", exported).exit_code == 0
    assert run_cli("support", "export", "-w", other / "bench").stdout == exported.read_text()
    assert run_cli("eval", "support", "-w", other / "bench").stdout == run_cli("eval", "support", "-w", bench).stdout


def test_a_changed_sentence_loses_the_grades_of_its_old_text(tmp_path, bench):
    run_cli("support", "import", "-w", bench, write_jsonl(tmp_path, ALICE, "alice.jsonl"))
    files = answer_files(tmp_path)
    lines = files[0].read_text().replace('"One."', '"One, rewritten."')
    files[0].write_text(lines)
    assert "registered: 0 new, 1 changed" in run_cli("support", "add", "-w", bench, *files).stdout
    exported = run_cli("support", "export", "-w", bench).stdout
    assert '"sentence": 0, "citation": "d1"' not in exported.split('"topic_id": "q2"')[0]


def test_eval_support_compares_runs_with_a_baseline(tmp_path, bench):
    run_cli("support", "import", "-w", bench, write_jsonl(tmp_path, ALICE, "alice.jsonl"))
    result = run_cli("eval", "support", "-w", bench, "--baseline", "r1")
    assert result.exit_code == 0
    assert "baseline: r1" in result.stdout
    compared = [line.split()[:3] for line in result.stdout.split("baseline: r1")[1].splitlines()
                if line.startswith("r2 ")]
    assert compared == [["r2", "SupportP", "1"], ["r2", "SupportR", "2"], ["r2", "Unsupported", "2"],
                        ["r2", "Contradicts", "1"]]  # topics where both have a value


def test_eval_support_without_registered_sentences_says_what_to_do(tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tfirst question\n")
    run_cli("init", tmp_path / "bench", "--topics", topics)
    result = run_cli("eval", "support", "-w", tmp_path / "bench")
    assert result.exit_code == 2
    assert "register answers with `trecbench support add`" in result.stderr


def test_unknown_names_are_refused_before_anything_is_printed(tmp_path, bench):
    run_cli("support", "import", "-w", bench, write_jsonl(tmp_path, ALICE, "alice.jsonl"))
    for args, message in ((("eval", "support", "-w", bench, "--baseline", "r9"), "'r9' is not among the runs scored"),
                          (("eval", "support", "-w", bench, "--run", "r9"), "no registered sentences of run 'r9'"),
                          (("support", "export", "-w", bench, "--judge", "carol"), "no support judgments by 'carol'"),
                          (("support", "add", "-w", tmp_path / "nobench", tmp_path / "r1.jsonl"),
                           "not a trecbench workspace")):
        result = run_cli(*args)
        assert result.exit_code == 2, args
        assert result.stdout == "" and message in result.stderr, args
