"""Documents looked up by id in a JSONL or TSV file (through a byte-offset index) or an ir_datasets docstore."""
from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple

from trecbench._lines import content_lines, looks_like_jsonl, read_line_at, record_id
from trecbench.errors import InputError, Problem

ID_KEYS = ("id", "docid", "_id", "doc_id")
TEXT_KEYS = ("contents", "text", "segment", "body")
INDEX_FORMAT = "trecbench-offsets/1"
# Layouts of a corpus file: JSONL, TSV `docid<TAB>text`, TSV `docid<TAB>title<TAB>text`.
JSONL, TSV, TSV_TITLE = "jsonl", "tsv", "tsv+title"


class Document(NamedTuple):
    """One document (or passage/segment): its id, its text and, if the corpus has one, its title."""

    docid: str
    text: str
    title: str | None = None


class Corpus(ABC):
    """Documents by id: `get`, `text`, `in`, `len` and iteration in corpus order."""

    source: str

    @abstractmethod
    def get(self, docid: str) -> Document | None:
        """The document with this id, or None if the corpus has none."""

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def __iter__(self) -> Iterator[Document]: ...

    def __contains__(self, docid: object) -> bool:
        return isinstance(docid, str) and self.get(docid) is not None

    def __getitem__(self, docid: str) -> Document:
        doc = self.get(docid)
        if doc is None:
            raise KeyError(docid)
        return doc

    def lookup(self, docids: Iterable[str]) -> tuple[list[tuple[str, Document]], list[str]]:
        """[(docid, document)] for the ids the corpus has, in the given order, and the docids it does not have."""
        found, missing = [], []
        for docid in docids:
            doc = self.get(docid)
            if doc is None:
                missing.append(docid)
            else:
                found.append((docid, doc))
        return found, missing

    def text(self, docid: str) -> str | None:
        """The text of the document with this id (title not included), or None if there is none."""
        doc = self.get(docid)
        return None if doc is None else doc.text


def open_corpus(source: str | Path, *, cache_index: bool = True) -> Corpus:
    """Open a corpus: a JSONL or TSV file (optionally `.gz`), or `irds:<dataset-id>`.

    JSONL records take the id from `id`/`docid`/`_id`/`doc_id`, the text from `contents`/`text`/`segment`/
    `body` and an optional `title` (pyserini, BEIR and MS MARCO v2.1 segment files read as they are).
    TSV lines are `docid<TAB>text`, or `docid<TAB>title<TAB>text` when the first line has three columns;
    every line must then have the same number of columns. A file is scanned once to validate it and to
    index the byte offset of each document (offsets only, never text); the index is kept in `<file>.idx`
    when the directory is writable and `cache_index` is true, and reused while the file is unchanged.
    Raises InputError listing every problem (bad JSON, missing id or text, duplicate docids, bad UTF-8).
    """
    if isinstance(source, str) and source.startswith("irds:"):
        return IrdsCorpus(source)
    return FileCorpus(Path(source), cache_index=cache_index)


class FileCorpus(Corpus):
    """A JSONL or TSV corpus file; `offsets` maps each docid to the byte offset of its line."""

    def __init__(self, path: Path, *, cache_index: bool = True):
        if not path.is_file():
            raise InputError(str(path), 0, "no such file")
        self.path = path
        self.source = str(path)
        cached = _load_index(path) if cache_index else None
        if cached is None:
            self.layout, self.offsets = _scan(path)
            if cache_index:
                _save_index(path, self.layout, self.offsets)
        else:
            self.layout, self.offsets = cached

    def get(self, docid: str) -> Document | None:
        offset = self.offsets.get(docid)
        if offset is None:
            return None
        doc, _ = _parse(self.layout, read_line_at(self.path, offset))
        return doc

    def __contains__(self, docid: object) -> bool:
        return docid in self.offsets

    def __len__(self) -> int:
        return len(self.offsets)

    def __iter__(self) -> Iterator[Document]:
        for line in content_lines(self.path):
            if line.text:
                doc, _ = _parse(self.layout, line.text)
                if doc is not None:
                    yield doc


def _parse(layout: str, text: str) -> tuple[Document | None, str]:
    """Parse one non-blank line of a corpus file into (document, "") or (None, what is wrong)."""
    if layout != JSONL:
        cells = text.split("\t")
        expected = 2 if layout == TSV else 3
        if len(cells) != expected:
            what = "docid, text" if layout == TSV else "docid, title, text"
            return None, f"expected {expected} tab-separated columns ({what}), found {len(cells)}"
        docid = cells[0].strip()
        if not docid:
            return None, "empty docid"
        return Document(docid, cells[-1], cells[1] if layout == TSV_TITLE else None), ""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        return None, f"invalid JSON: {e.msg} (column {e.colno})"
    if not isinstance(record, dict):
        return None, "expected a JSON object"
    return _from_record(record)


def _from_record(record: dict[str, Any]) -> tuple[Document | None, str]:
    _, docid, why = record_id(record, ID_KEYS)
    if docid is None:
        return None, why
    text_key = next((k for k in TEXT_KEYS if k in record), None)
    if text_key is None:
        return None, f"missing text field (one of {', '.join(TEXT_KEYS)}) for docid {docid!r}"
    if not isinstance(record[text_key], str):
        return None, f"field {text_key!r} of docid {docid!r} must be a string"
    title = record.get("title")
    return Document(docid, record[text_key], title if isinstance(title, str) else None), ""


def _scan(path: Path) -> tuple[str, dict[str, int]]:
    """Validate the whole file in one pass; return its layout and the offset of each docid."""
    where = str(path)
    layout = JSONL if looks_like_jsonl(path) else ""
    offsets: dict[str, int] = {}
    first_line: dict[str, int] = {}
    problems: list[Problem] = []
    for line in content_lines(path):
        if line.text is None:
            problems.append(Problem(where, line.number, line.error))
            continue
        if not layout:  # the first TSV line fixes the number of columns
            layout = TSV_TITLE if line.text.count("\t") == 2 else TSV
        doc, error = _parse(layout, line.text)
        if doc is None:
            problems.append(Problem(where, line.number, error))
        elif doc.docid in offsets:
            problems.append(Problem(where, line.number, f"duplicate docid {doc.docid!r} (first on line {first_line[doc.docid]})"))
        else:
            offsets[doc.docid] = line.offset
            first_line[doc.docid] = line.number
    if not offsets and not problems:
        problems.append(Problem(where, 0, "no documents found"))
    if problems:
        raise InputError.of(problems)
    return layout, offsets


def _index_path(path: Path) -> Path:
    return path.with_name(path.name + ".idx")


def _load_index(path: Path) -> tuple[str, dict[str, int]] | None:
    """The cached (layout, offsets) of `path`, or None if absent, unreadable or made for another version."""
    try:
        data = json.loads(_index_path(path).read_text(encoding="utf-8"))
        stat = path.stat()
        fresh = (data["format"], data["size"], data["mtime_ns"]) == (INDEX_FORMAT, stat.st_size, stat.st_mtime_ns)
        if fresh and data["layout"] in (JSONL, TSV, TSV_TITLE) and isinstance(data["offsets"], dict):
            return data["layout"], data["offsets"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _save_index(path: Path, layout: str, offsets: dict[str, int]) -> None:
    """Write the sidecar index atomically; a read-only directory just means no cache."""
    stat = path.stat()
    data = {"format": INDEX_FORMAT, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "layout": layout, "offsets": offsets}
    target = _index_path(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        tmp.unlink(missing_ok=True)


class IrdsCorpus(Corpus):
    """The documents of an ir_datasets dataset, looked up in its docstore; text is the doc's `default_text()`."""

    def __init__(self, source: str):
        from trecbench._irds import load_dataset

        self.source = source
        self.dataset = load_dataset(source)
        if not self.dataset.has_docs():
            raise InputError(source, 0, "this ir_datasets dataset has no documents")
        self._store: Any = None

    def _docstore(self) -> Any:
        if self._store is None:
            self._store = self.dataset.docs_store()
        return self._store

    def get(self, docid: str) -> Document | None:
        try:
            return _from_irds(self._docstore().get(docid))
        except KeyError:
            return None

    def __len__(self) -> int:
        count = self.dataset.docs_count()
        if count is None:
            store = self._docstore()
            count = store.count() if hasattr(store, "count") else sum(1 for _ in self.dataset.docs_iter())
        return count

    def __iter__(self) -> Iterator[Document]:
        for doc in self.dataset.docs_iter():
            yield _from_irds(doc)


def _from_irds(doc: Any) -> Document:
    text = doc.default_text() if hasattr(doc, "default_text") else getattr(doc, "text", "")
    title = getattr(doc, "title", None)
    return Document(str(doc.doc_id), text, title if isinstance(title, str) else None)
