"""Every table in the README and docs/ has as many cells in each row as in its header (a row that does not is
shown wrongly by every Markdown renderer)."""
from __future__ import annotations

import re

import pytest
from paths import ROOT

DOCUMENTS = [ROOT / "README.md", ROOT / "DEVELOPERS.md", *sorted((ROOT / "docs").glob("*.md"))]


def cells(row: str) -> int:
    """The number of cells of a table row: `|` not escaped and not inside `code`."""
    row = re.sub(r"`[^`]*`", "", row.strip()).replace("\\|", "")
    return row.strip("|").count("|") + 1


def tables(text: str):
    """(first line number, rows) of each table outside fenced code blocks."""
    rows, start, fenced = [], 0, False
    for n, line in enumerate(text.splitlines() + [""], 1):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("|"):
            start = start or n
            rows.append(line)
            continue
        if rows:
            yield start, rows
        rows, start = [], 0


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_table_row_has_as_many_cells_as_its_header(document):
    wrong = [f"{document.name}:{start + i}" for start, rows in tables(document.read_text(encoding="utf-8"))
             for i, row in enumerate(rows) if cells(row) != cells(rows[0])]
    assert wrong == []
