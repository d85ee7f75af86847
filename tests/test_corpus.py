"""Documents by id from JSONL (pyserini, BEIR, MS MARCO v2.1), TSV, gzip and ir_datasets; `trecbench corpus`."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import trecbench.corpus
from irds_local import register_local_dataset
from trecbench.cli import cli
from trecbench.corpus import Document, open_corpus
from trecbench.errors import InputError


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


FLAVOURS = {
    "pyserini": [{"id": "d1", "contents": "first doc"}, {"id": "d2", "contents": "second doc"}],
    "beir": [{"_id": "d1", "title": "T1", "text": "first doc"}, {"_id": "d2", "title": "T2", "text": "second doc"}],
    "msmarco_v2.1_segmented": [
        {"docid": "d1", "url": "http://a", "title": "T1", "headings": "", "segment": "first doc", "start_char": 0},
        {"docid": "d2", "url": "http://b", "title": "T2", "headings": "", "segment": "second doc", "start_char": 0},
    ],
    "doc_id_body": [{"doc_id": "d1", "body": "first doc"}, {"doc_id": "d2", "body": "second doc"}],
}


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_jsonl_flavours_look_documents_up_by_id(tmp_path, flavour):
    corpus = open_corpus(write_jsonl(tmp_path / "c.jsonl", FLAVOURS[flavour]))
    doc = corpus.get("d2")
    assert (doc.docid, doc.text) == ("d2", "second doc")
    assert doc.title == ("T2" if "title" in FLAVOURS[flavour][1] else None)
    assert corpus.text("d1") == "first doc"
    assert len(corpus) == 2 and "d1" in corpus
    assert [d.docid for d in corpus] == ["d1", "d2"]


def test_missing_docid_returns_none_and_is_not_in_corpus(tmp_path):
    corpus = open_corpus(write_jsonl(tmp_path / "c.jsonl", FLAVOURS["pyserini"]))
    assert corpus.get("nope") is None and corpus.text("nope") is None
    assert "nope" not in corpus
    with pytest.raises(KeyError):
        corpus["nope"]


def test_tsv_with_two_columns_is_docid_and_text(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("d1\tfirst doc\nd2\tsecond doc\r\n", encoding="utf-8")
    corpus = open_corpus(path)
    assert corpus.get("d2") == Document("d2", "second doc")
    assert list(corpus) == [Document("d1", "first doc"), Document("d2", "second doc")]


def test_tsv_with_three_columns_is_docid_title_text(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("d1\tTitle one\tfirst doc\nd2\t\tsecond doc\n", encoding="utf-8")
    corpus = open_corpus(path)
    assert corpus.get("d1") == Document("d1", "first doc", "Title one")
    assert corpus.get("d2") == Document("d2", "second doc", "")


def test_tsv_lines_must_keep_the_column_count_of_the_first_line(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("d1\tT\tfirst\nd2\tsecond\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"c.tsv:2: expected 3 tab-separated columns"):
        open_corpus(path)


def test_gzipped_jsonl_is_read_and_looked_up(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in FLAVOURS["beir"])
    corpus = open_corpus(path)
    assert corpus.get("d2") == Document("d2", "second doc", "T2")


def test_offset_index_holds_byte_offsets_not_text(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": "d1", "contents": "é" * 10}, {"id": "d2", "contents": "x"}])
    corpus = open_corpus(path)
    second = len(path.read_bytes().split(b"\n")[0]) + 1
    assert corpus.index.candidates("d1") == [0] and corpus.index.candidates("d2") == [second]
    assert corpus.index.candidates("d3") == [] and corpus.get("d3") is None and "d3" not in corpus
    sidecar = tmp_path / "c.jsonl.idx"
    head, body = sidecar.read_bytes().split(b"\n", 1)
    assert json.loads(head)["count"] == 2 and len(body) == 2 * 16 + 8  # 16 bytes a document (id hash, offset), a fence
    assert "é".encode() not in body and b"d1" not in body
    reopened = open_corpus(path)
    assert reopened.get("d1") == Document("d1", "é" * 10) and len(reopened) == 2


def test_second_open_reuses_the_index_without_scanning(tmp_path, monkeypatch):
    path = write_jsonl(tmp_path / "c.jsonl", FLAVOURS["pyserini"])
    open_corpus(path)
    monkeypatch.setattr(trecbench.corpus, "_scan", lambda path: pytest.fail("scanned again"))
    assert open_corpus(path).get("d2") == Document("d2", "second doc")


def test_changed_file_rebuilds_a_stale_index(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", FLAVOURS["pyserini"])
    open_corpus(path)
    write_jsonl(path, [{"id": "new", "contents": "a longer replacement document"}])
    corpus = open_corpus(path)
    assert len(corpus) == 1 and corpus.get("new") is not None and corpus.get("d1") is None


def test_index_is_kept_in_memory_when_it_cannot_be_written_or_is_not_wanted(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", FLAVOURS["pyserini"])
    assert open_corpus(path, cache_index=False).get("d1") is not None
    assert not (tmp_path / "c.jsonl.idx").exists()
    (tmp_path / "c.jsonl.idx").mkdir()  # a directory where the index file would go
    assert open_corpus(path).get("d2") == Document("d2", "second doc")


def test_bad_corpus_lists_every_problem_with_its_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(
        b'{"id": "d1", "contents": "ok"}\n'
        b'{"id": "d1", "contents": "again"}\n'
        b'{"contents": "no id"}\n'
        b'{"id": "d3"}\n'
        b'{"id": "d4", "contents": \n'
        b'{"id": "d5", "contents": "\xff"}\n'
    )
    with pytest.raises(InputError) as e:
        open_corpus(path)
    lines = str(e.value).splitlines()
    assert lines[0] == f"{path}:2: duplicate docid 'd1' (first on line 1)"
    assert lines[1].startswith(f"{path}:3: missing id field")
    assert lines[2].startswith(f"{path}:4: missing text field")
    assert lines[3].startswith(f"{path}:5: invalid JSON")
    assert lines[4].startswith(f"{path}:6: invalid UTF-8")
    assert not (tmp_path / "c.jsonl.idx").exists()


def test_missing_or_empty_corpus_file_is_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        open_corpus(tmp_path / "absent.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(InputError, match="no documents found"):
        open_corpus(tmp_path / "empty.jsonl")


def test_irds_corpus_looks_documents_up_in_the_docstore(tmp_path, monkeypatch):
    source = register_local_dataset(tmp_path, "tiny-corpus", docs=[("d1", "first doc"), ("d2", "second doc")],
                                    monkeypatch=monkeypatch)
    corpus = open_corpus(source)
    assert corpus.get("d2") == Document("d2", "second doc")
    assert corpus.get("nope") is None and "nope" not in corpus and "d1" in corpus
    assert corpus.text("d1") == "first doc"
    assert len(corpus) == 2
    assert [d.docid for d in corpus] == ["d1", "d2"]


def test_irds_dataset_without_documents_or_unknown_is_input_error(tmp_path, monkeypatch):
    source = register_local_dataset(tmp_path, "tiny-queries-only", queries=[("q1", "x")], monkeypatch=monkeypatch)
    with pytest.raises(InputError, match="no documents"):
        open_corpus(source)
    with pytest.raises(InputError, match="unknown ir_datasets dataset"):
        open_corpus("irds:trecbench-no-such-dataset")


def test_cli_get_prints_documents_as_json_and_exits_1_listing_missing_ids(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", FLAVOURS["beir"])
    result = CliRunner().invoke(cli, ["corpus", "get", str(path), "d2", "x1", "d1", "x2"])
    assert result.exit_code == 1
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"docid": "d2", "text": "second doc", "title": "T2"},
        {"docid": "d1", "text": "first doc", "title": "T1"},
    ]
    assert "x1 x2" in result.stderr


def test_cli_get_from_irds_source(tmp_path, monkeypatch):
    source = register_local_dataset(tmp_path, "tiny-cli", docs=[("d1", "first doc")], monkeypatch=monkeypatch)
    result = CliRunner().invoke(cli, ["corpus", "get", source, "d1"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"docid": "d1", "text": "first doc", "title": None}


def test_cli_stats_counts_documents_and_mean_words(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("d1\tone two three\nd2\tfour\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["corpus", "stats", str(path)])
    assert result.exit_code == 0
    assert result.output == "documents\t2\nmean_words\t2.00\n"


def test_cli_bad_corpus_exits_2_with_path_line_and_no_traceback(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"id": "d1", "contents": "ok"}\n{"id": "d1", "contents": "dup"}\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["corpus", "stats", str(path)])
    assert result.exit_code == 2
    assert f"{path}:2: duplicate docid" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("command", [["corpus"], ["corpus", "get"], ["corpus", "stats"]])
def test_every_corpus_command_help_has_an_example(command):
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0
    assert "trecbench corpus" in result.output.split("Example:")[1]


def test_ids_that_share_a_hash_are_told_apart_and_duplicates_still_found(tmp_path, monkeypatch):
    monkeypatch.setattr(trecbench.corpus, "id_hash", lambda docid: 7 if docid != "d9" else 3)  # every id collides
    monkeypatch.setattr(trecbench.corpus, "BLOCK", 2)  # and the equal hashes fill several blocks of the file
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": f"d{i}", "contents": f"text {i}"} for i in range(9, 0, -1)])
    for kind in ("OffsetIndex", "StoredIndex"):  # scanned, then read back from the index file
        corpus = open_corpus(path)
        assert type(corpus.index).__name__ == kind
        assert [corpus.get(f"d{i}").text for i in range(1, 10)] == [f"text {i}" for i in range(1, 10)]
        assert corpus.get("d10") is None and "d0" not in corpus and len(corpus) == 9
    path.write_text(path.read_text() + '{"id": "d4", "contents": "again"}\n{"id": "d9", "contents": "again"}\n')
    with pytest.raises(InputError) as e:
        open_corpus(path)
    assert str(e.value).splitlines() == [f"{path}:10: duplicate docid 'd4' (first on line 6)",
                                         f"{path}:11: duplicate docid 'd9' (first on line 1)"]


def test_an_index_of_the_earlier_format_is_rebuilt(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", FLAVOURS["pyserini"])
    stat = path.stat()
    (tmp_path / "c.jsonl.idx").write_text(json.dumps({"format": "trecbench-offsets/1", "size": stat.st_size,
                                                      "mtime_ns": stat.st_mtime_ns, "layout": "jsonl",
                                                      "offsets": {"d1": 0}}))
    assert open_corpus(path).get("d2") == Document("d2", "second doc")
    assert json.loads((tmp_path / "c.jsonl.idx").read_bytes().split(b"\n", 1)[0])["format"] == "trecbench-offsets/2"


@pytest.mark.parametrize("block", [1, 3, 512])
def test_every_id_is_found_through_the_stored_index(tmp_path, monkeypatch, block):
    monkeypatch.setattr(trecbench.corpus, "BLOCK", block)
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": f"x{i}", "contents": f"text {i}"} for i in range(200)])
    open_corpus(path)
    corpus = open_corpus(path)
    assert type(corpus.index).__name__ == "StoredIndex"
    assert [corpus.get(f"x{i}").text for i in range(200)] == [f"text {i}" for i in range(200)]
    assert corpus.get("x200") is None and corpus.get("") is None
