"""The Python examples in docs/*.md run: each file's ```python blocks, in order, in one namespace.

They run in a temporary folder holding a copy of the bundled sample as `sample/`, so an example can read
`sample/qrels.txt` and write wherever it likes.
"""
from __future__ import annotations

from paths import ROOT

import re
import shutil
from pathlib import Path

import pytest

SAMPLE = ROOT / "src" / "trecbench" / "sample"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _documents() -> list[Path]:
    return [p for p in sorted((ROOT / "docs").glob("*.md")) if BLOCK.search(p.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("document", _documents(), ids=lambda p: p.name)
def test_the_python_examples_of_a_document_run(document, tmp_path, monkeypatch):
    shutil.copytree(SAMPLE, tmp_path / "sample")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for n, block in enumerate(BLOCK.findall(document.read_text(encoding="utf-8")), 1):
        try:
            exec(compile(block, f"{document.name} (python block {n})", "exec"), namespace)
        except Exception as e:  # noqa: BLE001 (the block and its error are what the failure must show)
            pytest.fail(f"{document.name}, python block {n} failed: {type(e).__name__}: {e}\n{block}")


def test_there_are_python_examples_to_run():
    assert _documents(), "no ```python examples in docs/*.md"
