"""Passages' source spans: read from corpus records, checked against the sources file or each other, looked up."""
from __future__ import annotations

import json

import pytest

from trecbench.errors import InputError
from trecbench.sources import Span, check_spans, read_spans, source_text

SOURCE = "Rollbacks need approval. Except for hotfixes, which need two reviewers."


def corpus(tmp_path, passages, name="corpus.jsonl"):
    path = tmp_path / name
    lines = []
    for docid, fields in passages:
        lines.append(json.dumps({"id": docid, **fields}))
    path.write_text("\n".join(lines) + "\n")
    return path


def chunk(docid, start, end, text=None, source="D1"):
    return docid, {"contents": SOURCE[start:end] if text is None else text, "source_id": source,
                   "start_char": start, "end_char": end}


def sources(tmp_path):
    path = tmp_path / "sources.jsonl"
    path.write_text(json.dumps({"id": "D1", "text": SOURCE}) + "\n")
    return path


def test_spans_are_read_looked_up_and_passages_without_one_have_none(tmp_path):
    path = corpus(tmp_path, [chunk("p1", 0, 25), chunk("p2", 25, len(SOURCE)), ("plain", {"contents": "x"})])
    spans = read_spans(path)
    assert len(spans) == 2 and "plain" not in spans
    assert spans.get("p2") == Span("D1", 25, len(SOURCE)) and spans.get("plain") is None
    assert spans.overlapping(Span("D1", 20, 30)) == [("p1", 5), ("p2", 5)]
    assert spans.containing(Span("D1", 26, 30)) == ["p2"] and spans.containing(Span("D1", 20, 30)) == []
    assert spans.line_of("p2") == 2


def test_a_passage_whose_text_is_not_its_span_is_refused_with_its_line(tmp_path):
    path = corpus(tmp_path, [chunk("p1", 0, 25), chunk("p2", 25, len(SOURCE), text=SOURCE[25:].upper())])
    with pytest.raises(InputError) as e:
        check_spans(path, read_spans(path), sources(tmp_path))
    assert str(e.value) == f"{path}:2: docid 'p2': text is not characters 25-{len(SOURCE)} of source 'D1'"


def test_without_sources_overlapping_passages_must_agree(tmp_path):
    good = corpus(tmp_path, [chunk("p1", 0, 30), chunk("p2", 20, len(SOURCE))])
    check_spans(good, read_spans(good))
    text, gaps = source_text(read_spans(good), __import__("trecbench").open_corpus(good), "D1")
    assert text == SOURCE and not gaps.any()
    bad = corpus(tmp_path, [chunk("p1", 0, 30), chunk("p2", 20, 40, text="X" * 20)], name="bad.jsonl")
    with pytest.raises(InputError, match=r"bad.jsonl:2: docid 'p2': characters 20-30 of source 'D1' differ"):
        check_spans(bad, read_spans(bad))


@pytest.mark.parametrize("fields, message", [
    ({"source_id": "D1", "start_char": 3}, "has source_id, start_char but not end_char"),
    ({"source_id": "D1", "start_char": 5, "end_char": 5}, "span 5-5 is not 0 <= start_char < end_char"),
    ({"source_id": "D1", "start_char": "0", "end_char": 5}, "start_char and end_char must be integers"),
    ({"source_id": "", "start_char": 0, "end_char": 5}, "'source_id' must be a non-empty string"),
])
def test_a_broken_span_is_an_input_error_naming_the_line(tmp_path, fields, message):
    path = corpus(tmp_path, [chunk("p1", 0, 5), ("p2", {"contents": "Rollb", **fields})])
    with pytest.raises(InputError) as e:
        read_spans(path)
    assert str(e.value).startswith(f"{path}:2: ") and message in str(e.value)
