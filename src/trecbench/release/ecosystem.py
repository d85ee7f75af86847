"""A release in the shapes the field's tools load: JSONL files and a dataset card for Hugging Face `datasets`,
and a registration with ir_datasets (so PyTerrier and ir_measures take it as any collection).

`datasets.load_dataset(FOLDER, NAME)` reads the configurations the card's YAML header names (`qrels`, the
default, `topics`, `nuggets`, `evidence` and, when the release holds it, `corpus`), each one JSONL file of a
`test` split, with no option: the TREC files stay as trec_eval reads them and the JSONL copies sit beside them.

    >>> import trecbench, ir_datasets
    >>> trecbench.register_release("mybench-v1", "mybench/v1")
    >>> ir_datasets.load("mybench/v1").qrels_iter()
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Iterable, NamedTuple

from trecbench.errors import InputError

CARD = "README.md"  # names the manifest's sha256, so it is the one file the manifest cannot hash
# Hugging Face's licence field takes an identifier (apache-2.0, cc-by-4.0, other), never free text.
LICENSE = re.compile(r"[a-z0-9][a-z0-9.+-]{0,63}")
_CONFIGS = (("qrels", "qrels.jsonl", "one grade per (topic, document): qid, iteration, docid, relevance"),
            ("topics", "topics.jsonl", "the topics: qid, text (and narrative or other fields)"),
            ("nuggets", "nuggets.jsonl", "the nuggets of each topic, in trecbench's nuggets format"),
            ("evidence", "evidence.jsonl", "per topic, the nuggets with their supporting documents (any_of)"),
            ("corpus", "corpus.jsonl", "the judged documents: docid, title, text"))


def license_problem(license: object) -> str | None:
    """What is wrong with `license` as the card's licence field, or None when it is an identifier."""
    if isinstance(license, str) and LICENSE.fullmatch(license):
        return None
    return f"license {license!r}: give a Hugging Face licence identifier such as cc-by-4.0 or other"


def write_loadable(folder: Path, topics: list, qrels: Any, corpus: Any, docids: Iterable[str], *,
                   with_corpus: bool = False) -> list[str]:
    """Write the JSONL copies `datasets` loads without options; return their names.

    topics.jsonl (unless the release already writes its topics so), qrels.jsonl (`{qid, iteration, docid,
    relevance}` in qrels.txt's order) and, `with_corpus` (the judged documents may leave), corpus.jsonl:
    `{docid, title, text}` for each of `docids` that `corpus` holds.
    """
    names = []
    if not (folder / "topics.jsonl").exists():
        _write_jsonl(folder / "topics.jsonl", (t.as_dict() for t in topics))
        names.append("topics.jsonl")
    iterations = qrels["iteration"].astype(str) if "iteration" in qrels.columns else ["0"] * len(qrels)
    _write_jsonl(folder / "qrels.jsonl", ({"qid": q, "iteration": i, "docid": d, "relevance": int(r)}
                                          for q, i, d, r in zip(qrels["query_id"], iterations, qrels["doc_id"],
                                                                qrels["relevance"])))
    names.append("qrels.jsonl")
    if with_corpus:
        documents = [doc for doc in (corpus.get(d) for d in docids) if doc is not None]
        _write_jsonl(folder / "corpus.jsonl", ({"docid": doc.docid, "title": doc.title, "text": doc.text}
                                               for doc in documents))
        names.append("corpus.jsonl")
    return names


def _write_jsonl(path: Path, records: Iterable[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def write_card(folder: Path, manifest: dict, manifest_sha256: str, license: str = "other") -> str:
    """Write README.md, the dataset card: the YAML header Hugging Face reads (pretty_name, license,
    task_categories, size_categories, `configs` with each configuration's data file) and a body saying what
    the release is, what it counts, who judged, how it was built and the manifest's sha256. Returns its name."""
    configs = [(name, file, what) for name, file, what in _CONFIGS if file in manifest["files"]]
    rows = {file: _lines(folder / file) for _, file, _ in configs}
    # a JSON string is a YAML double-quoted scalar; ASCII escapes keep YAML's own line breaks (U+2028) out of it
    header = ["---", f"pretty_name: {json.dumps(_title(manifest))}", f"license: {license}",
              "task_categories:", "- text-retrieval", "- question-answering",
              "size_categories:", f"- {_size_category(max(rows.values(), default=0))}",
              "tags:", "- trecbench", "- trec", "- information-retrieval", "configs:"]
    for name, file, _ in configs:
        header += [f"- config_name: {name}", "  data_files:", "  - split: test", f"    path: {file}"]
        if name == "qrels":
            header.append("  default: true")
    header.append("---")
    body = _body(manifest, manifest_sha256, license, [(n, f, w, rows[f]) for n, f, w in configs])
    (folder / CARD).write_text("\n".join(header) + "\n\n" + "\n".join(body) + "\n", encoding="utf-8")
    return CARD


def _title(manifest: dict) -> str:
    return f"{manifest.get('name') or 'trecbench benchmark'} {manifest['version']}"


def _lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def _size_category(n: int) -> str:
    """Hugging Face's size bucket for n rows: n<1K, 1K<n<10K, ... 1B<n<10B, n>1T."""
    names = ["1K", "10K", "100K", "1M", "10M", "100M", "1B", "10B", "100B", "1T"]
    if n < 1000:
        return "n<1K"
    for low, high in zip(names, names[1:]):
        if n < 1000 * 10 ** names.index(high):
            return f"{low}<n<{high}"
    return "n>1T"


def _cell(value: Any) -> str:
    """A value as one Markdown table cell: no line breaks, pipes escaped."""
    return " ".join(str("" if value is None else value).split()).replace("|", "\\|")


def _body(manifest: dict, digest: str, license: str, configs: list[tuple[str, str, str, int]]) -> list[str]:
    c, q = manifest["counts"], manifest["qrels"]
    grades = ", ".join(f"{n} graded {g}" for g, n in c["relevance"].items())
    has_corpus = "corpus.jsonl" in manifest["files"]
    lines = [f"# {_title(manifest)}", "",
             f"A TREC-style test collection made with trecbench {manifest['trecbench_version']} (release "
             f"`{manifest['version']}`, {manifest['created_at']}): topics, relevance judgments (qrels), nuggets and "
             f"the evidence that supports them. Licence: `{license}`.", "",
             "## Configurations", "", "| configuration | file | rows | contents |", "|---|---|---|---|"]
    lines += [f"| `{name}` | `{file}` | {rows} | {what} |" for name, file, what, rows in configs]
    lines += ["", "```python", "from datasets import load_dataset", "",
              'qrels = load_dataset("PATH_OR_REPO", "qrels", split="test")', "```", "",
              "The same qrels are in `qrels.txt` for trec_eval, the topics in `topics.tsv` or `topics.jsonl`. For "
              "ir_datasets, PyTerrier and ir_measures:", "", "```python", "import ir_datasets, trecbench", "",
              f'trecbench.register_release("PATH", "{manifest.get("name") or "bench"}/{manifest["version"]}")',
              "```", "", "## Counts", "",
              f"- {c['topics']} topics, {c['topics_judged']} of them judged",
              f"- {c['judgments']} qrels ({grades}), {c['relevant']} relevant; {c['propagated']} given their "
              "duplicate group's grade",
              f"- {c['nuggets']['vital']} vital and {c['nuggets']['okay']} okay nuggets over {c['nuggets']['topics']} "
              f"topics ({c['nuggets']['draft']} still drafts)",
              f"- {c['evidence']['items']} evidence items over {c['evidence']['topics']} topics",
              f"- {c['judged_documents']} judged documents hashed ({c['judged_documents_missing_from_corpus']} "
              "missing from the corpus)" + ("; their text is in `corpus.jsonl`" if has_corpus else ""),
              "", "## Judges", "", "| kind | name | model | prompt | judgments | used in qrels | propagated |",
              "|---|---|---|---|---|---|---|"]
    lines += [f"| {_cell(j['kind'])} | {_cell(j['name'])} | {_cell(j['model'])} | {_cell(j['prompt_id'])} | "
              f"{j['judgments']} | {j['used_in_qrels']} | {j['propagated_in_qrels']} |" for j in manifest["judges"]]
    pooled = (f"Documents were pooled from the runs (pool `{_cell(q['pool'])}`) and judged by the judges above"
              if q["pool"] else "The judgments were made or imported without a stored pool")
    lines += ["", "## How it was built", "",
              f"{pooled}; the qrels take one grade per pair ({_cell(q['policy'])}), and a duplicate in the pool "
              f"takes its group's grade. {q['pool_candidates_unjudged']} pool candidates had no judgment and are "
              "left out (listed in the manifest). The nuggets are those approved in trecbench"
              + (" and its drafts" if c["nuggets"]["draft"] else "") + ", with links to the documents that support "
              "them (the evidence). The corpus is not part of the release"
              + (" beyond the judged documents" if has_corpus else "") + f" (it was `{_cell(manifest['corpus'])}`); "
              "the manifest holds the sha256 of every judged document's text.", "",
              "## Integrity", "",
              f"`manifest.json` has sha256 `{digest}`. It hashes every file here but this card, and "
              "`trecbench release verify PATH --corpus CORPUS` checks the files and the judged documents again."]
    return lines


_REGISTERED: set[str] = set()  # the names register_release gave, which it may give again


class TitledDoc(NamedTuple):
    """A document with a title, as ir_datasets' GenericDoc is without one."""

    doc_id: str
    title: str
    text: str

    def default_text(self) -> str:
        return f"{self.title} {self.text}" if self.title else self.text


def register_release(folder: str | os.PathLike, name: str, corpus: str | os.PathLike | None = None) -> str:
    """Register the release in `folder` with ir_datasets as `name`; return the name, for `ir_datasets.load`.

    Queries come from topics.jsonl (or, in an older release, topics.tsv), qrels from qrels.txt. Docs come
    from `corpus` (a JSONL or `docid<TAB>text` TSV file, or `irds:<id>`) or else from the release's own
    corpus.jsonl; without either the dataset has no docs. A name already registered is replaced. The
    docstore ir_datasets builds for lookups goes under its home folder, never into the release. Raises
    InputError for a folder that is not a release or a corpus it cannot read, ValueError for a name
    ir_datasets already has for a dataset of its own.
    """
    import ir_datasets
    from ir_datasets.formats import JsonlQueries, TrecQrels, TsvQueries
    from ir_datasets.util import LocalDownload, MetadataComponent

    root = Path(folder)
    if not (root / "qrels.txt").is_file():
        raise InputError(str(root), 0, "not a release folder: no qrels.txt")
    if name in ir_datasets.registry._registered and name not in _REGISTERED:
        raise ValueError(f"{name!r} is a dataset of ir_datasets already: register the release under another name")
    parts: list[Any] = []
    source = corpus if corpus is not None else (root / "corpus.jsonl" if (root / "corpus.jsonl").is_file() else None)
    if source is not None:
        parts.append(_docs(source, name))
    if (root / "topics.jsonl").is_file():
        parts.append(JsonlQueries(LocalDownload(root / "topics.jsonl"), mapping={"query_id": "qid", "text": "text"}))
    elif (root / "topics.tsv").is_file():
        parts.append(TsvQueries(LocalDownload(root / "topics.tsv")))
    parts.append(TrecQrels(LocalDownload(root / "qrels.txt"), {}))
    dataset = ir_datasets.Dataset(*parts)
    dataset = ir_datasets.Dataset(MetadataComponent(name, dataset), dataset)  # what registry.register() adds
    # registry.register() refuses a name twice; a release made again under the same name replaces the old one.
    ir_datasets.registry._registered[name] = dataset
    _REGISTERED.add(name)
    return name


def _irds_docs(source: str) -> Any:
    """The docs of another ir_datasets dataset, alone: its queries and qrels must not stand in for the release's."""
    import ir_datasets

    try:
        other = ir_datasets.load(source[len("irds:"):])
    except KeyError:
        raise InputError(source, 0, "no such ir_datasets dataset") from None
    if not other.has_docs():
        raise InputError(source, 0, "this ir_datasets dataset has no documents")
    return other.docs_handler()


def _docs(source: str | os.PathLike, name: str) -> Any:
    """ir_datasets' docs component for a corpus file (JSONL or TSV) or another ir_datasets dataset."""
    import ir_datasets
    from ir_datasets.formats import GenericDoc, JsonlDocs, TsvDocs
    from ir_datasets.indices import PickleLz4FullStore
    from ir_datasets.util import LocalDownload

    from trecbench.corpus import ID_KEYS, TEXT_KEYS
    from trecbench.files.lines import looks_like_jsonl

    if isinstance(source, str) and source.startswith("irds:"):
        return _irds_docs(source)
    path = Path(source)
    if not path.is_file():
        raise InputError(str(path), 0, "no such corpus file")
    if path.name.lower().endswith(".gz"):
        raise InputError(str(path), 0, "ir_datasets reads this corpus uncompressed: give the file without .gz")
    stat = path.stat()
    # one docstore per corpus file as it is now, so a corpus edited or swapped is never served from an old store
    key = hashlib.sha256(f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    folder = ir_datasets.util.home_path() / "trecbench" / re.sub(r"[^A-Za-z0-9._-]", "_", name)
    folder.mkdir(parents=True, exist_ok=True)
    store = str(folder / f"docs-{key}.pklz4")
    with open(path, encoding="utf-8") as f:
        first_line = next((line for line in f if line.strip()), "")
    if not looks_like_jsonl(path):
        class StoredTsvDocs(TsvDocs):  # TsvDocs puts its docstore beside the file; this one goes under home
            def docs_store(self, field: str = "doc_id", options: Any = None) -> Any:
                return PickleLz4FullStore(path=store, init_iter_fn=self.docs_iter, data_cls=self.docs_cls(),
                                          lookup_field=field, index_fields=["doc_id"])

        titled = first_line.rstrip("\r\n").count("\t") == 2  # docid<TAB>title<TAB>text, as trecbench reads it
        return StoredTsvDocs(LocalDownload(path), TitledDoc if titled else GenericDoc)
    try:
        first = json.loads(first_line or "{}")
    except json.JSONDecodeError as e:
        raise InputError(str(path), 1, f"invalid JSON: {e.msg}") from None
    id_key = next((k for k in ID_KEYS if k in first), None)
    text_key = next((k for k in TEXT_KEYS if k in first), None)
    if id_key is None or text_key is None:
        raise InputError(str(path), 1, f"the first document has no id ({', '.join(ID_KEYS)}) or no text "
                                       f"({', '.join(TEXT_KEYS)})")
    if "title" in first:
        return JsonlDocs(LocalDownload(path), TitledDoc, {"doc_id": id_key, "title": "title", "text": text_key},
                         docstore_path=store)
    return JsonlDocs(LocalDownload(path), GenericDoc, {"doc_id": id_key, "text": text_key},
                     docstore_path=store)
