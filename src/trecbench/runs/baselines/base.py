"""What the BM25 backends share: settings, the Backend and Index interfaces, progress output."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Protocol, Sequence

from trecbench.helpers.extras import MissingExtra

if TYPE_CHECKING:
    import numpy as np

@dataclass(frozen=True)
class BM25Settings:
    """BM25's parameters (Anserini's defaults) and how many documents to keep per topic."""

    k1: float = 0.9
    b: float = 0.4
    hits: int = 1000


class BackendUnavailable(MissingExtra):
    """The backend's packages are not installed; the message says how to install them (the CLI prints it, exit 2)."""


class Index(Protocol):
    documents: int

    def search(self, queries: Sequence[tuple[str, str]], hits: int,
               progress: bool) -> Iterator[tuple[str, list[str], "np.ndarray"]]:
        """For each (qid, text): (qid, docids, float32 scores) of the top `hits` documents with a positive score."""

    def close(self) -> None: ...


class Backend(Protocol):
    name: str

    def missing(self) -> str | None:
        """Why the backend cannot run here (with the install command), or None if it can."""

    def fingerprint(self, settings: BM25Settings) -> dict:
        """Settings a saved index depends on (besides the corpus): an index made with others is rebuilt."""

    def build(self, docs: Iterator[tuple[str, str]], count: int | None, directory: Path | None,
              settings: BM25Settings, progress: bool) -> Index:
        """Index (docid, text) pairs, in `directory` if given (else in memory or a temporary directory)."""

    def load(self, directory: Path, settings: BM25Settings, progress: bool) -> Index:
        """Open an index this backend built in `directory`."""


def note(message: str, progress: bool) -> None:
    """A line on stderr that does not break a progress bar; only when progress is shown."""
    if progress:
        from tqdm import tqdm

        tqdm.write(message, file=sys.stderr)
