"""The workspace's settings (`trecbench.toml`: name, corpus, topics, relevance scale) and its `meta` table of
single values.

A workspace may declare its relevance scale (default: 0-3, `trecbench.llm.prompts.DEFAULT_SCALE`):

    [scale]
    relevant = 2                  # the lowest grade that counts as relevant (default 1)
    narrative = "..."             # said before the levels, to people and to the model (optional)
    [[scale.level]]               # one per grade, 0, 1, 2, ... in order
    grade = 0
    name = "irrelevant"           # the judging page's button
    definition = "the passage has nothing to do with the question."

and whether people grading support (`trecbench.answers.support`) may say a cited passage contradicts its
sentence (default: the paper's three grades full, partial, none):

    [support]
    contradicts = true

`meta` holds what the workspace keeps once, by key: when it was made (`created_at`), the key that signs
the web app's session cookies.

trecbench.toml is written by tomli-w (the TOML library made for it) and read by tomllib (tomli on 3.10);
ASCII values come out as the hand-written writer gave them, byte for byte (tests/store/test_settings_toml.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import tomli_w

from trecbench.errors import InputError
from trecbench.llm.prompts import DEFAULT_SCALE, Level, Scale

from .base import Connected


@dataclass
class Settings:
    """The contents of trecbench.toml."""

    name: str
    corpus: str | None = None
    topics: str | None = None
    scale: Scale = DEFAULT_SCALE  # trecbench.toml's [scale] (read, never written: a person declares it)
    support_contradicts: bool = False  # [support] contradicts: the support scale has `contradicts` (read only)

    def to_toml(self) -> str:
        """The text of trecbench.toml: a comment line, then the [bench], [corpus] and [topics] tables (an
        unset source is the empty string, which `read` takes as none)."""
        doc = {"bench": {"name": str(self.name)}, "corpus": {"source": str(self.corpus or "")},
               "topics": {"source": str(self.topics or "")}}
        return "# trecbench workspace settings\n" + tomli_w.dumps(doc)

    @classmethod
    def read(cls, path: Path) -> "Settings":
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as e:
            raise InputError(str(path), 0, f"cannot read: {e.strerror or e}") from None
        except tomllib.TOMLDecodeError as e:
            line = getattr(e, "lineno", 0) or 0
            raise InputError(str(path), line, f"invalid TOML: {e}") from None
        return cls(
            name=doc.get("bench", {}).get("name", path.parent.name),
            corpus=doc.get("corpus", {}).get("source") or None,
            topics=doc.get("topics", {}).get("source") or None,
            scale=read_scale(doc["scale"], str(path)) if "scale" in doc else DEFAULT_SCALE,
            support_contradicts=read_support(doc.get("support", {}), str(path)),
        )


def read_support(table: object, where: str) -> bool:
    """Whether trecbench.toml's `[support]` table asks for the `contradicts` grade; InputError naming what is
    wrong."""
    if not isinstance(table, dict) or set(table) - {"contradicts"}:
        raise InputError(where, 0, "[support]: a table with one key, contradicts = true or false")
    value = table.get("contradicts", False)
    if not isinstance(value, bool):
        raise InputError(where, 0, f"[support]: contradicts = {value!r}: true or false")
    return value


def read_scale(table: object, where: str) -> Scale:
    """The `[scale]` table of trecbench.toml as a Scale; InputError naming what is wrong."""

    def refuse(message: str) -> InputError:
        return InputError(where, 0, f"[scale]: {message}")

    if not isinstance(table, dict):
        raise refuse("must be a table")
    unknown = sorted(set(table) - {"relevant", "narrative", "level"})
    if unknown:
        raise refuse(f"unknown key {unknown[0]!r} (keys: relevant, narrative, level)")
    rows = table.get("level")
    if not isinstance(rows, list) or not 2 <= len(rows) <= 10:  # grades 0-9: one key each on the judging page
        raise refuse("needs 2 to 10 [[scale.level]] entries (grades 0 to 9), each with grade, name and definition")
    levels = [_level(row, position, refuse) for position, row in enumerate(rows)]
    relevant = table.get("relevant", 1)
    if not isinstance(relevant, int) or isinstance(relevant, bool) or not 1 <= relevant <= levels[-1].grade:
        raise refuse(f"relevant = {relevant!r}: the lowest grade counted as relevant, 1 to {levels[-1].grade}")
    narrative = table.get("narrative", "")
    if not isinstance(narrative, str):
        raise refuse("narrative must be text")
    return Scale(tuple(levels), relevant, narrative.strip())


def _level(row: object, position: int, refuse) -> Level:
    """The `position`-th [[scale.level]] (grade `position`), or `refuse(message)` raised."""
    if not isinstance(row, dict) or set(row) != {"grade", "name", "definition"}:
        raise refuse(f"level {position + 1} must have exactly grade, name and definition")
    grade, name, definition = row["grade"], row["name"], row["definition"]
    if not isinstance(grade, int) or isinstance(grade, bool) or grade != position:
        raise refuse(f"level {position + 1} has grade {grade!r}: the levels are grades 0, 1, 2, ... in order")
    if not isinstance(name, str) or not name.strip() or not isinstance(definition, str) or not definition.strip():
        raise refuse(f"level {grade} needs a name and a definition (non-empty text)")
    return Level(grade, name.strip(), " ".join(definition.split()))


class MetaStore(Connected):
    """The workspace's `meta` values (part of `Workspace`)."""

    def meta(self, key: str) -> str | None:
        """The value kept under `key`, None when there is none."""
        row = self.connection().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Keep `value` under a new `key` (a key is written once)."""
        with self.transaction() as c:
            c.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (key, value))

    def metas(self, prefix: str) -> dict[str, str]:
        """{key: value} of every value kept under a key starting with `prefix`, in key order."""
        rows = self.connection().execute("SELECT key, value FROM meta WHERE substr(key, 1, ?) = ? ORDER BY key",
                                         (len(prefix), prefix))
        return {k: v for k, v in rows}

    def meta_or_set(self, key: str, value: str) -> str:
        """The value kept under `key`, keeping `value` there first when there is none (one transaction, so
        every process gets the same value)."""
        with self.transaction() as c:
            c.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value))
            return c.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0]
