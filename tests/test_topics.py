"""Topics from TSV, TREC RAG 2024/2025 files, generic JSONL and ir_datasets; the `trecbench topics` commands."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from irds_local import register_local_dataset
from trecbench.cli import cli
from trecbench.errors import InputError
from trecbench.topics import Topic, read_topics



@pytest.fixture
def rag(shared) -> Path:
    return shared / "rag"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_rag24_topics_file_has_301_topics_without_carriage_returns(rag):
    topics = read_topics(rag / "topics.rag24.test.txt")
    assert len(topics) == 301
    assert topics[0] == Topic("2024-145979", "what is vicarious trauma and how can it be coped with?")
    assert not any("\r" in t.text for t in topics)


def test_rag25_jsonl_has_105_narrative_topics_with_title_kept(rag):
    topics = read_topics(rag / "topics.rag25.test.jsonl")
    assert len(topics) == 105
    first = topics[0]
    assert first.qid == "464"
    assert first.text.startswith("I want a thorough understanding of what makes up a community")
    assert first.fields == {"title": first.text}


def test_rag25_dev_tsv_has_the_22_dev_topics_of_the_rag25_jsonl(rag):
    dev = read_topics(rag / "rag25-topics-dev.tsv")
    assert len(dev) == 22
    test = {t.qid: t.text for t in read_topics(rag / "topics.rag25.test.jsonl")}
    assert all(test[t.qid] == t.text for t in dev)


def test_tsv_topics_keep_file_order_and_skip_blank_lines(tmp_path):
    path = write(tmp_path / "t.tsv", "3\tthird query\n\n1\tfirst query\r\n")
    assert read_topics(path) == [Topic("3", "third query"), Topic("1", "first query")]


@pytest.mark.parametrize("id_key", ["qid", "query_id", "id", "topic_id"])
@pytest.mark.parametrize("text_key", ["text", "query"])
def test_jsonl_topics_accept_common_id_and_text_field_names(tmp_path, id_key, text_key):
    path = write(tmp_path / "t.jsonl", json.dumps({id_key: 7, text_key: "a query"}) + "\n")
    assert read_topics(path) == [Topic("7", "a query")]


def test_jsonl_topic_keeps_narrative_title_and_other_fields(tmp_path):
    record = {"id": "9", "title": "short", "description": "longer", "narrative": "what counts", "lang": "en"}
    topic = read_topics(write(tmp_path / "t.jsonl", json.dumps(record)))[0]
    assert topic == Topic("9", "short", "what counts", {"title": "short", "description": "longer", "lang": "en"})


def test_jsonl_is_recognised_by_content_whatever_the_extension(tmp_path):
    path = write(tmp_path / "topics.txt", '{"qid": "1", "text": "q"}\n')
    assert read_topics(path) == [Topic("1", "q")]


def test_gzipped_jsonl_topics_are_read(tmp_path):
    path = tmp_path / "t.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write('{"qid": "1", "text": "q"}\n')
    assert read_topics(path) == [Topic("1", "q")]


def test_bad_tsv_lists_every_problem_with_its_line(tmp_path):
    path = tmp_path / "t.tsv"
    path.write_bytes(b"1\tok\n2 no tab\n3\t  \n1\tagain\n4\t\xff\xfe\n")
    with pytest.raises(InputError) as e:
        read_topics(path)
    assert [(p.line, p.message.split(" ")[0]) for p in e.value.problems] == [
        (2, "missing"), (3, "empty"), (4, "duplicate"), (5, "invalid"),
    ]
    assert str(e.value).splitlines()[0] == f"{path}:2: missing tab between qid and text"
    assert "invalid UTF-8" in str(e.value)


def test_bad_jsonl_reports_invalid_json_and_missing_fields(tmp_path):
    path = write(tmp_path / "t.jsonl", '{"qid": "1"\n{"text": "no id"}\n{"qid": "2"}\n[1]\n{"qid": "3", "text": ""}\n')
    with pytest.raises(InputError) as e:
        read_topics(path)
    messages = [str(p) for p in e.value.problems]
    assert [p.line for p in e.value.problems] == [1, 2, 3, 4, 5]
    assert messages[0].startswith(f"{path}:1: invalid JSON")
    assert "missing id field" in messages[1] and "missing text field" in messages[2]


def test_missing_or_empty_file_is_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_topics(tmp_path / "absent.tsv")
    with pytest.raises(InputError, match="no topics found"):
        read_topics(write(tmp_path / "empty.tsv", "\n"))


def test_topic_is_frozen_and_hashable():
    topic = Topic("1", "q", fields={"title": "q"})
    assert hash(topic) == hash(Topic("1", "q"))
    with pytest.raises(AttributeError):
        topic.qid = "2"  # type: ignore[misc]


def test_irds_topics_come_from_the_dataset_queries(tmp_path, monkeypatch):
    source = register_local_dataset(tmp_path, "tiny-topics", queries=[("q1", "first"), ("q2", "second")],
                                    monkeypatch=monkeypatch)
    assert read_topics(source) == [Topic("q1", "first"), Topic("q2", "second")]


def test_irds_dataset_without_queries_or_unknown_is_input_error(tmp_path, monkeypatch):
    source = register_local_dataset(tmp_path, "tiny-docs-only", docs=[("d1", "x")], monkeypatch=monkeypatch)
    with pytest.raises(InputError, match="no queries"):
        read_topics(source)
    with pytest.raises(InputError, match="unknown ir_datasets dataset"):
        read_topics("irds:trecbench-no-such-dataset")


def test_cli_show_prints_qid_tab_text(tmp_path):
    path = write(tmp_path / "t.tsv", "1\tfirst query\n2\tsecond\n")
    result = CliRunner().invoke(cli, ["topics", "show", str(path)])
    assert result.exit_code == 0
    assert result.output == "1\tfirst query\n2\tsecond\n"


def test_cli_show_jsonl_reads_back_to_the_same_topics(tmp_path):
    record = {"id": "9", "title": "short", "narrative": "what counts"}
    path = write(tmp_path / "t.jsonl", json.dumps(record) + "\n")
    result = CliRunner().invoke(cli, ["topics", "show", str(path), "--format", "jsonl"])
    assert result.exit_code == 0
    assert read_topics(write(tmp_path / "again.jsonl", result.output)) == read_topics(path)


def test_cli_validate_counts_topics(tmp_path):
    path = write(tmp_path / "t.tsv", "1\tq\n")
    result = CliRunner().invoke(cli, ["topics", "validate", str(path)])
    assert result.exit_code == 0
    assert "1 topics" in result.output


def test_cli_validate_bad_file_exits_2_with_path_line_and_no_traceback(tmp_path):
    path = write(tmp_path / "t.tsv", "1\tq\nno tab here\n1\tdup\n")
    result = CliRunner().invoke(cli, ["topics", "validate", str(path)])
    assert result.exit_code == 2
    assert f"{path}:2: missing tab" in result.output
    assert f"{path}:3: duplicate qid" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", [["topics"], ["topics", "show"], ["topics", "validate"]])
def test_every_topics_command_help_has_an_example(command):
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0
    assert "trecbench topics" in result.output.split("Example:")[1]
