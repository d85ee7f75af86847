"""The workspace's settings (`trecbench.toml`: name, corpus, topics) and its `meta` table of single values.

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

from .base import Connected


@dataclass
class Settings:
    """The contents of trecbench.toml."""

    name: str
    corpus: str | None = None
    topics: str | None = None

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
        )


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

    def meta_or_set(self, key: str, value: str) -> str:
        """The value kept under `key`, keeping `value` there first when there is none (one transaction, so
        every process gets the same value)."""
        with self.transaction() as c:
            c.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (key, value))
            return c.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0]
