"""Nuggets files: ours (support, status), AutoNuggetizer's and TREC RAG 2025's, read, written, read back."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import write_jsonl

from trecbench.errors import InputError
from trecbench.nuggets import Nugget, TopicNuggets, read_nuggets, write_nuggets
from trecbench.nuggets.model import normalise_support, satisfied_group


def write(tmp_path: Path, lines: list, name: str = "nuggets.jsonl") -> Path:
    return write_jsonl(tmp_path, lines, name)


def test_trec_2025_dev_nuggets_keep_all_1255_nuggets_and_their_importance(shared):
    topics = read_nuggets(shared / "rag" / "rag25-dev-nuggets.jsonl")
    nuggets = [n for t in topics for n in t.nuggets]
    assert len(topics) == 22
    assert len(nuggets) == 1255
    assert sum(n.importance == "vital" for n in nuggets) == 925
    assert sum(n.importance == "okay" for n in nuggets) == 330
    first = topics[0].nuggets[0]
    assert first.qid == "58" and first.id == "58-1"
    assert first.text == "nuclear energy produces very low greenhouse gas emissions"
    assert first.extra == {"mapped_sub_narrative": '"Key advantages of nuclear energy"', "source": "original"}
    assert (first.origin, first.status, first.support) == ("import", "approved", ())


def test_autonuggetizer_records_get_ids_and_defaults(tmp_path):
    path = write(tmp_path, [{"query": "What is Python?", "qid": "q1",
                             "nuggets": [{"text": "Python is a language", "importance": "vital"},
                                         {"text": "Python is used for data science", "importance": "okay"}]}])
    [topic] = read_nuggets(path)
    assert topic.query == "What is Python?"
    assert [(n.id, n.importance) for n in topic.nuggets] == [("q1-1", "vital"), ("q1-2", "okay")]
    assert [n.vital for n in topic.nuggets] == [True, False]


def test_our_format_round_trips_with_support_status_origin_and_extra_fields(tmp_path):
    topic = TopicNuggets("q1", (
        Nugget("n1", "q1", "A fact", "vital", (("d1",), ("d2", "d3")), "draft", "llm", {"note": "x"}),
        Nugget("n2", "q1", "Another", "okay", (), "approved", "human"),
    ), "the query")
    path = tmp_path / "out.jsonl"
    write_nuggets([topic], path)
    [back] = read_nuggets(path)
    assert back == topic
    assert back.nuggets[0].extra == {"note": "x"}
    assert json.loads(path.read_text())["nuggets"][0]["support"] == [["d1"], ["d2", "d3"]]


def test_every_problem_is_reported_with_its_line(tmp_path):
    path = write(tmp_path, [
        {"qid": "q1", "nuggets": [{"text": "ok", "importance": "vital"}, {"text": "", "importance": "vital"}]},
        "{not json",
        {"qid": "q2", "nuggets": [{"text": "x", "importance": "important"}]},
        {"qid": "q1", "nuggets": []},
        {"nuggets": []},
        {"qid": "q3", "nuggets": [{"text": "x", "support": ["d1"]}]},
    ])
    with pytest.raises(InputError) as e:
        read_nuggets(path)
    messages = [str(p) for p in e.value.problems]
    assert messages[0] == f"{path}:1: topic 'q1', nugget 2: missing or empty 'text'"
    assert messages[1].startswith(f"{path}:2: invalid JSON")
    assert messages[2] == f"{path}:3: topic 'q2', nugget 1: importance 'important' is not one of vital, okay"
    assert messages[3] == f"{path}:4: topic 'q1' appears twice (first on line 1)"
    assert messages[4] == f"{path}:5: missing or empty 'qid'"
    assert messages[5].startswith(f"{path}:6: topic 'q3', nugget 1: 'support' must be a list of lists")


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError) as e:
        read_nuggets(tmp_path / "nope.jsonl")
    assert str(e.value) == f"{tmp_path / 'nope.jsonl'}: no such file"


def test_support_alternatives_need_every_document_of_a_joint_group():
    support = normalise_support([["A"], ["B", "C"], ["A"], []])
    assert support == (("A",), ("B", "C"))
    assert satisfied_group(support, {"B"}) is None
    assert satisfied_group(support, {"B", "C"}) == ("B", "C")
    assert satisfied_group(support, ["A", "Z"]) == ("A",)
