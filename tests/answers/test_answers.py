"""Answer files (TREC RAG 2024 and 2025 JSONL): reading, validation like the track's, `answers validate`."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import write_jsonl

from trecbench.answers import read_answers, validate_answers
from trecbench.errors import InputError

REFS = ["d0", "d1", "d2"]


def rag24(qid="q1", run="runA", topic="what is x", refs=REFS, answer=None, **extra):
    answer = answer if answer is not None else [{"text": "X is a thing.", "citations": [0, 2]},
                                                {"text": "It is blue.", "citations": []}]
    record = {"run_id": run, "topic_id": qid, "topic": topic, "references": refs,
              "response_length": sum(len(str(s.get("text", "")).split()) for s in answer), "answer": answer}
    record.update(extra)
    return record


def rag25(qid="1", run="runB", narrative="I want to know about x.", refs=REFS, answer=None):
    answer = answer if answer is not None else [{"text": "X is a thing.", "citations": ["d1", "d0"]}]
    return {"metadata": {"team_id": "team", "run_id": run, "type": "automatic", "narrative_id": qid,
                         "narrative": narrative}, "references": refs, "answer": answer}


def write(tmp_path: Path, lines: list, name: str = "answers.jsonl") -> Path:
    return write_jsonl(tmp_path, lines, name)


def test_rag24_answer_is_read_with_citations_resolved_to_docids(tmp_path):
    [a] = read_answers(write(tmp_path, [rag24()]))
    assert (a.run_id, a.qid, a.topic, a.format, a.line) == ("runA", "q1", "what is x", "rag24", 1)
    assert [s.citations for s in a.sentences] == [("d0", "d2"), ()]
    assert a.cited == ("d0", "d2")
    assert a.words == 7 and a.response_length == 7
    assert a.text == "X is a thing. It is blue."


def test_rag25_answer_takes_citations_as_indices_or_docids_and_integer_narrative_ids(tmp_path):
    record = rag25(qid=7, answer=[{"text": "One.", "citations": ["d1", 2]}])
    [a] = read_answers(write(tmp_path, [record]))
    assert (a.run_id, a.qid, a.team_id, a.type, a.format) == ("runB", "7", "team", "automatic", "rag25")
    assert a.sentences[0].citations == ("d1", "d2")


def test_a_clean_file_has_no_problems(tmp_path):
    path = write(tmp_path, [rag24("q1"), rag24("q2")])
    assert validate_answers(path, topics={"q1": "what is x", "q2": "what  is x"}) == []


def test_validation_lists_every_problem_with_its_line(tmp_path):
    long_answer = [{"text": "word " * 401, "citations": [0]}]
    path = write(tmp_path, [
        rag24("q1", answer=[{"text": "a", "citations": [3]}]),
        rag24("q2", refs=["d0", "d1", "d0"]),
        rag24("q3", answer=long_answer),
        rag24("q1"),
        "[1, 2]",
        rag24("q4", topic="something else"),
        {"run_id": "runA", "references": [], "answer": []},
    ])
    topics = {q: "what is x" for q in ("q1", "q2", "q3", "q4", "q5")}
    p = str(path)
    # line 1 cannot be read (bad citation), so q1's answer is the one on line 4, and q5 has none
    assert [str(x) for x in validate_answers(path, topics=topics)] == [
        f"{p}:1: topic 'q1': answer sentence 0: citation 3 is out of range: 3 references (indices 0 to 2)",
        f"{p}:2: topic 'q2': reference 'd0' is listed twice (positions 0 and 2)",
        f"{p}:3: answer to topic 'q3' has 401 words, more than the limit of 400",
        f"{p}:5: expected a JSON object",
        f"{p}:6: topic text of 'q4' differs from the topics file: 'something else' vs 'what is x'",
        f"{p}:7: missing field 'topic_id'",
        f"{p}:7: 'answer' is empty",
        f"{p}: run 'runA' has no answer for 1 of 5 topics: q5",
    ]


def test_second_answer_to_a_topic_is_reported(tmp_path):
    path = write(tmp_path, [rag24("q1"), rag24("q1")])
    assert [str(p) for p in validate_answers(path)] == [
        f"{path}:2: second answer of run 'runA' to topic 'q1' (first on line 1): one answer per topic"]


def test_word_limit_is_configurable_and_references_limit_depends_on_the_year(tmp_path):
    path = write(tmp_path, [rag24(answer=[{"text": "one two three", "citations": []}], refs=[f"d{i}" for i in range(21)])])
    assert [p.message for p in validate_answers(path, max_words=2)] == [
        "answer to topic 'q1' has 3 words, more than the limit of 2",
        "answer to topic 'q1' lists 21 references, more than the limit of 20"]
    assert validate_answers(path, max_words=None, max_references=100) == []
    path25 = write(tmp_path, [rag25(refs=[f"d{i}" for i in range(100)], answer=[{"text": "x", "citations": [0]}])],
                   "b.jsonl")
    assert validate_answers(path25) == []


def test_a_cited_docid_missing_from_references_is_reported_but_read(tmp_path):
    path = write(tmp_path, [rag25(answer=[{"text": "x", "citations": ["zz"]}])])
    assert [p.message for p in validate_answers(path)] == ["topic '1': answer sentence 0: cited docid 'zz' is not "
                                                           "in references"]
    assert read_answers(path)[0].cited == ("zz",)


def test_two_runs_in_one_file_are_reported(tmp_path):
    path = write(tmp_path, [rag24("q1", run="a"), rag24("q1", run="b")])
    assert [str(p) for p in validate_answers(path)] == [
        f"{path}: 2 run ids in one file: 'a' (line 1), 'b' (line 2); submit one run per file"]


def test_reading_stops_on_unreadable_lines_with_every_problem(tmp_path):
    path = write(tmp_path, ["{bad", rag24(answer=[{"text": 3}])])
    with pytest.raises(InputError) as e:
        read_answers(path)
    assert [p.line for p in e.value.problems] == [1, 2]


def test_answers_validate_command_prints_ok_or_problems_and_exits_2(tmp_path, cli_run):
    good = write(tmp_path, [rag24("q1")], "good.jsonl")
    bad = write(tmp_path, [rag24("q1", answer=[{"text": "a", "citations": [9]}])], "bad.jsonl")
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\twhat is x\n")
    result = cli_run("answers", "validate", good, "--topics", topics)
    assert result.exit_code == 0
    assert result.stdout == f"{good}: ok, 1 answer, run runA, format rag24\n"
    result = cli_run("answers", "validate", good, bad, "--topics", topics)
    assert result.exit_code == 2
    assert "citation 9 is out of range" in result.stderr
    assert "Traceback" not in result.stderr


def test_answers_validate_checks_2025_narratives_against_2025_topics(tmp_path, cli_run, shared):
    topics = shared / "rag" / "topics.rag25.test.jsonl"
    first = json.loads(topics.read_text().splitlines()[0])
    path = write(tmp_path, [rag25(qid=first["id"], narrative=first["title"])])
    result = cli_run("answers", "validate", path, "--topics", topics)
    assert result.exit_code == 2
    assert "has no answer for 104 of 105 topics" in result.stderr
    assert "differs" not in result.stderr


def test_an_answer_of_exactly_400_words_is_within_the_limit(tmp_path: Path):
    def record(words: int) -> str:
        text = " ".join(["word"] * words)
        return json.dumps({"run_id": "r", "topic_id": "q1", "topic": "t", "references": ["d0"],
                           "response_length": words, "answer": [{"text": text, "citations": [0]}]})

    at = tmp_path / "at.jsonl"
    at.write_text(record(400) + "\n")
    over = tmp_path / "over.jsonl"
    over.write_text(record(401) + "\n")
    assert validate_answers(at) == []
    assert [p.message for p in validate_answers(over)] == [
        "answer to topic 'q1' has 401 words, more than the limit of 400"]
