"""The workspace's settings (`trecbench.toml`: name, corpus, topics) and its `meta` table of single values.

`meta` holds what the workspace keeps once, by key: when it was made (`created_at`), the key that signs
the web app's session cookies.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from trecbench.errors import InputError

from .base import Connected


@dataclass
class Settings:
    """The contents of trecbench.toml."""

    name: str
    corpus: str | None = None
    topics: str | None = None

    def to_toml(self) -> str:
        def value(v: str) -> str:
            return json.dumps(str(v))  # a TOML basic string is a JSON string for our values

        lines = ["# trecbench workspace settings", "[bench]", f"name = {value(self.name)}", ""]
        lines += ["[corpus]", f"source = {value(self.corpus or '')}", ""]
        lines += ["[topics]", f"source = {value(self.topics or '')}"]
        return "\n".join(lines) + "\n"

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
