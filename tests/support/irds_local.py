"""Register a tiny ir_datasets dataset built from files in a test's tmp_path, so `irds:` sources work offline.

    from irds_local import register_local_dataset

    def test_something(tmp_path, monkeypatch):
        source = register_local_dataset(tmp_path, "tiny", docs=[("d1", "text")], queries=[("q1", "query")],
                                        qrels=[("q1", "d1", 1)], monkeypatch=monkeypatch)
        # source == "irds:tiny"
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable


def register_local_dataset(
    tmp_path: Path,
    name: str,
    docs: Iterable[tuple[str, str]] | None = None,
    queries: Iterable[tuple[str, str]] | None = None,
    qrels: Iterable[tuple[str, str, int]] | None = None,
    monkeypatch: Any = None,
) -> str:
    """Write docs (TSV), queries (TSV) and qrels (TREC) under tmp_path, register them as `name`; return `irds:<name>`.

    IR_DATASETS_HOME is pointed at tmp_path before ir_datasets is used (it reads the variable on every
    call of `ir_datasets.util.home_path()`), and the docstore is built next to the docs file, so nothing
    outside tmp_path is touched. With pytest's `monkeypatch`, the variable and the registration are undone
    after the test; without it they stay for the rest of the session. A name already registered is replaced.
    """
    home = tmp_path / "ir_datasets_home"
    files = tmp_path / f"irds_{name.replace('/', '_')}"
    files.mkdir(parents=True, exist_ok=True)
    for var, value in (("IR_DATASETS_HOME", home), ("IR_DATASETS_TMP", tmp_path / "ir_datasets_tmp")):
        if monkeypatch is not None:
            monkeypatch.setenv(var, str(value))
        else:
            os.environ[var] = str(value)

    import ir_datasets
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload, MetadataComponent

    parts = []
    if docs is not None:
        parts.append(TsvDocs(LocalDownload(_write_tsv(files / "docs.tsv", docs))))
    if queries is not None:
        parts.append(TsvQueries(LocalDownload(_write_tsv(files / "queries.tsv", queries))))
    if qrels is not None:
        path = files / "qrels.txt"
        path.write_text("".join(f"{qid} 0 {docid} {rel}\n" for qid, docid, rel in qrels), encoding="utf-8")
        parts.append(TrecQrels(LocalDownload(path), {}))
    dataset = ir_datasets.Dataset(*parts)
    dataset = ir_datasets.Dataset(MetadataComponent(name, dataset), dataset)  # what registry.register() adds
    # registry.register() refuses a name twice; writing the table directly lets tests reuse names.
    if monkeypatch is not None:
        monkeypatch.setitem(ir_datasets.registry._registered, name, dataset)
    else:
        ir_datasets.registry._registered[name] = dataset
    return f"irds:{name}"


def _write_tsv(path: Path, rows: Iterable[tuple[str, str]]) -> Path:
    lines = []
    for row in rows:
        if any("\t" in cell or "\n" in cell for cell in row):
            raise ValueError(f"tabs and newlines cannot be stored in a TSV cell: {row!r}")
        lines.append("\t".join(row) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path
