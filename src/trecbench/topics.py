"""Topics (queries) from TSV, JSONL (TREC RAG 2024/2025 and generic) and ir_datasets (`irds:<id>`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from trecbench.files.lines import content_lines, iter_json_objects, looks_like_jsonl, record_id
from trecbench.errors import InputError, Problem, checked

ID_KEYS = ("qid", "query_id", "id", "topic_id")
TEXT_KEYS = ("text", "query", "title")
# Keys consumed into Topic attributes are dropped from `fields`, except `title`, a TREC topic field kept as is.
_KEEP_IN_FIELDS = ("title",)


@dataclass(frozen=True)
class Topic:
    """One topic: its id, the query text a system is given, an optional narrative, and any other fields."""

    qid: str
    text: str
    narrative: str | None = None
    fields: dict[str, Any] = field(default_factory=dict, hash=False)

    def as_dict(self) -> dict[str, Any]:
        """A flat JSON-ready record (`qid`, `text`, `narrative` if any, then the other fields) that reads back."""
        record: dict[str, Any] = {"qid": self.qid, "text": self.text}
        if self.narrative is not None:
            record["narrative"] = self.narrative
        for key, value in self.fields.items():
            record.setdefault(key, value)
        return record


def read_topics(source: str | Path) -> list[Topic]:
    """Read topics in file order from a TSV/JSONL file or `irds:<dataset-id>`.

    The format is told by extension (`.jsonl`, `.json`, `.tsv`, optionally `.gz`) or else by content
    (a line starting with `{` means JSONL). TSV lines are `qid<TAB>text` (TREC RAG 2024/2025 files);
    JSONL records take the id from `qid`/`query_id`/`id`/`topic_id`, the text from `text`/`query`/`title`,
    and keep `narrative` and every other field. Raises InputError listing every problem found.
    """
    if isinstance(source, str) and source.startswith("irds:"):
        return _read_irds(source)
    path = Path(source)
    if not path.is_file():
        raise InputError(str(path), 0, "no such file")
    parse = _parse_jsonl if looks_like_jsonl(path) else _parse_tsv
    return _collect(str(path), parse(path))


def _collect(where: str, parsed: Iterable[tuple[int, Topic | None, str]]) -> list[Topic]:
    """Keep the parsed topics, or raise InputError with every problem (bad lines, duplicate qids)."""
    topics: list[Topic] = []
    first_line: dict[str, int] = {}
    problems: list[Problem] = []
    for line, topic, error in parsed:
        if topic is None:
            problems.append(Problem(where, line, error))
        elif topic.qid in first_line:
            problems.append(Problem(where, line, f"duplicate qid {topic.qid!r} (first on line {first_line[topic.qid]})"))
        else:
            first_line[topic.qid] = line
            topics.append(topic)
    return checked(topics, problems, where, "topics")


def _parse_tsv(path: Path) -> Iterator[tuple[int, Topic | None, str]]:
    for line in content_lines(path):
        if line.text is None:
            yield line.number, None, line.error
            continue
        qid, tab, text = line.text.partition("\t")
        qid, text = qid.strip(), text.strip()
        if not tab:
            yield line.number, None, "missing tab between qid and text"
        elif not qid:
            yield line.number, None, "empty qid"
        elif not text:
            yield line.number, None, f"empty text for qid {qid!r}"
        else:
            yield line.number, Topic(qid, text), ""


def _parse_jsonl(path: Path) -> Iterator[tuple[int, Topic | None, str]]:
    for number, record, error in iter_json_objects(path):
        if record is None:
            yield number, None, error
            continue
        topic, error = _topic_from_record(record)
        yield number, topic, error


def _topic_from_record(record: dict[str, Any], text: str | None = None) -> tuple[Topic | None, str]:
    """Build a Topic from one record (JSON object or ir_datasets query); return (topic, "") or (None, why)."""
    id_key, qid, why = record_id(record, ID_KEYS)
    if qid is None:
        return None, why
    text_key = next((k for k in TEXT_KEYS if k in record), None)
    if text is None:
        if text_key is None:
            return None, f"missing text field (one of {', '.join(TEXT_KEYS)}) for qid {qid!r}"
        text = record[text_key]
    if not isinstance(text, str):
        return None, f"field {text_key!r} of qid {qid!r} must be a string"
    if not text.strip():
        return None, f"empty text for qid {qid!r}"
    narrative = record.get("narrative")
    if not isinstance(narrative, str):
        narrative = None
    dropped = {id_key, text_key if text_key not in _KEEP_IN_FIELDS else None}
    if narrative is not None:
        dropped.add("narrative")
    fields = {k: v for k, v in record.items() if k not in dropped}
    return Topic(qid, text.strip(), narrative, fields), ""


def _read_irds(source: str) -> list[Topic]:
    from trecbench.files.irds import load_dataset

    dataset = load_dataset(source)
    if not dataset.has_queries():
        raise InputError(source, 0, "this ir_datasets dataset has no queries")

    def parsed() -> Iterator[tuple[int, Topic | None, str]]:
        for n, query in enumerate(dataset.queries_iter(), start=1):
            text = query.default_text() if hasattr(query, "default_text") else None
            yield (n, *_topic_from_record(query._asdict(), text))

    return _collect(source, parsed())
