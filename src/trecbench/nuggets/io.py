"""Nuggets files: ours (with support and status), AutoNuggetizer's and TREC RAG 2025's, read and written.

One JSON line per topic:

- ours: `{qid, query, nuggets: [{id, text, importance, support: [[docid, ...], ...], status, origin}]}`, and
  `spans` beside `support` when a supporting document is a span of its passage: the same lists, an entry per
  document, null for a whole passage, else `{start, end}` (characters of the passage's text) with, when
  known, `source_id`, `start_char`, `end_char` (the span in its source document) and `hash` (sha256 of the
  span's text); a file without `spans` reads as before
- AutoNuggetizer (create output): `{qid, query, nuggets: [{text, importance}]}`
- TREC RAG 2025: `{qid, nuggets: [{text, mapped_sub_narrative, importance, source}]}`

The three are one format with optional fields, so one reader takes them all: a nugget without `id`
gets `<qid>-<n>` (n counting from 1 in file order), without `status` "approved", without `origin`
"import"; unknown fields are kept in `Nugget.extra` and written back.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, TextIO, Union

from trecbench.files.lines import iter_json_objects, json_id
from trecbench.files.output import write_output
from trecbench.errors import Problem, checked
from trecbench.nuggets.model import (IMPORTANCE, ORIGIN, STATUS, Nugget, SourceSpan, SpanLink, TopicNuggets,
                                     normalise_support)

PathLike = Union[str, Path]
_KNOWN = {"id", "text", "importance", "support", "status", "origin", "spans"}
_SPANS_SHAPE = ("'spans' must be lists beside 'support' (one entry per document): null for a whole passage or "
                "{\"start\": S, \"end\": E} with 0 <= S < E")


def read_nuggets(path: PathLike) -> list[TopicNuggets]:
    """Every topic's nuggets in file order; raises InputError listing every problem (`path:line: ...`)."""
    where = str(path)
    topics: list[TopicNuggets] = []
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for number, record, error in iter_json_objects(path):
        if record is None:
            problems.append(Problem(where, number, error))
            continue
        topic, errors = _topic(record)
        problems.extend(Problem(where, number, e) for e in errors)
        if topic is None:
            continue
        if topic.qid in first_line:
            problems.append(Problem(where, number, f"topic {topic.qid!r} appears twice (first on line "
                                                   f"{first_line[topic.qid]})"))
            continue
        first_line[topic.qid] = number
        topics.append(topic)
    return checked(topics, problems, where, "topics")


def _topic(record: dict[str, Any]) -> tuple[TopicNuggets | None, list[str]]:
    qid = record.get("qid", record.get("query_id", record.get("topic_id")))
    qid = json_id(qid)
    if qid is None:
        return None, ["missing or empty 'qid'"]
    query = record.get("query")
    if isinstance(query, dict):  # AutoNuggetizer sometimes nests {qid, text}
        query = query.get("text")
    if query is not None and not isinstance(query, str):
        query = None
    items = record.get("nuggets")
    if not isinstance(items, list):
        return None, [f"topic {qid!r}: 'nuggets' must be a list"]
    nuggets: list[Nugget] = []
    errors: list[str] = []
    seen: dict[str, int] = {}
    for n, item in enumerate(items, start=1):
        nugget, why = _nugget(qid, n, item)
        if nugget is None:
            errors.append(f"topic {qid!r}, nugget {n}: {why}")
            continue
        if nugget.id in seen:
            errors.append(f"topic {qid!r}, nugget {n}: id {nugget.id!r} is used twice (first by nugget {seen[nugget.id]})")
            continue
        seen[nugget.id] = n
        nuggets.append(nugget)
    return TopicNuggets(qid, tuple(nuggets), query), errors


def _nugget(qid: str, n: int, item: Any) -> tuple[Nugget | None, str]:
    if isinstance(item, str):  # a bare list of nugget texts
        item = {"text": item}
    if not isinstance(item, dict):
        return None, "expected an object"
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        return None, "missing or empty 'text'"
    importance = str(item.get("importance", "vital")).strip().lower()
    if importance not in IMPORTANCE:
        return None, f"importance {item.get('importance')!r} is not one of {', '.join(IMPORTANCE)}"
    status = str(item.get("status", "approved")).strip().lower()
    if status not in STATUS:
        return None, f"status {item.get('status')!r} is not one of {', '.join(STATUS)}"
    origin = str(item.get("origin", "import")).strip().lower()
    if origin not in ORIGIN:
        return None, f"origin {item.get('origin')!r} is not one of {', '.join(ORIGIN)}"
    support = item.get("support", [])
    if support is None:
        support = []
    if not isinstance(support, list) or not all(
            isinstance(g, list) and all(isinstance(d, str) and d for d in g) for g in support):
        return None, "'support' must be a list of lists of docids, e.g. [[\"d1\"], [\"d2\", \"d3\"]]"
    support, why = _with_spans(support, item.get("spans"))
    if why:
        return None, why
    nid = item.get("id")
    if nid is None:
        nid = f"{qid}-{n}"
    elif json_id(nid) is None:
        return None, "'id' must be a non-empty string"
    extra = {k: v for k, v in item.items() if k not in _KNOWN}
    return Nugget(str(nid).strip(), qid, text.strip(), importance, normalise_support(support), status, origin,
                  extra), ""


def _with_spans(support: list, spans: Any) -> tuple[list, str]:
    """The support with each document that has a span entry as a `SpanLink`, or what is wrong with `spans`."""
    if spans is None:
        return support, ""
    if not isinstance(spans, list) or len(spans) != len(support) or not all(
            isinstance(m, list) and len(m) == len(g) for m, g in zip(spans, support)):
        return support, _SPANS_SHAPE
    out = []
    for group, marks in zip(support, spans):
        docs = []
        for docid, mark in zip(group, marks):
            if mark is None:
                docs.append(docid)
                continue
            link = _span_link(docid, mark)
            if link is None:
                return support, f"{_SPANS_SHAPE} (document {docid!r})"
            docs.append(link)
        out.append(docs)
    return out, ""


def _span_link(docid: str, mark: Any) -> SpanLink | None:
    if not isinstance(mark, dict):
        return None
    start, end = _integer(mark.get("start")), _integer(mark.get("end"))
    if start is None or end is None or not 0 <= start < end:
        return None
    source = None
    if mark.get("source_id") is not None:
        first, last = _integer(mark.get("start_char")), _integer(mark.get("end_char"))
        if not isinstance(mark["source_id"], str) or first is None or last is None:
            return None
        source = SourceSpan(mark["source_id"], first, last)
    digest = mark.get("hash")
    return SpanLink(docid, start, end, source, digest if isinstance(digest, str) else None)


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def write_nuggets(topics: Iterable[TopicNuggets], out: PathLike | TextIO) -> None:
    """Write topics in our nuggets format (one JSON line per topic); reads back with `read_nuggets`."""
    lines = []
    for topic in topics:
        record: dict[str, Any] = {"qid": topic.qid}
        if topic.query is not None:
            record["query"] = topic.query
        record["nuggets"] = [n.as_dict() for n in topic.nuggets]
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    if isinstance(out, (str, Path)):
        write_output(out, "".join(lines))
    else:
        out.write("".join(lines))
