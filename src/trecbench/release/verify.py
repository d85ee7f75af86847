"""Is a release still what it was? Every file re-hashed against the manifest, every judged document against the corpus."""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from trecbench.helpers.progress import SilentProgress
from trecbench.errors import InputError
from trecbench.release.bundle import FORMAT, MANIFEST, file_sha256
from trecbench.release.ecosystem import CARD


class FileProblem(NamedTuple):
    name: str
    problem: str  # "changed" | "missing" | "not in manifest"


class DocumentProblem(NamedTuple):
    docid: str
    problem: str  # "changed" | "missing" (from the corpus) | "added" (absent when released, present now)


@dataclass
class Verification:
    """What `verify_release` found; `ok` when nothing differs."""

    path: Path
    version: str
    manifest_sha256: str
    files_checked: int = 0
    documents_checked: int = 0  # 0 when no corpus was given
    files: list[FileProblem] = field(default_factory=list)
    documents: list[DocumentProblem] = field(default_factory=list)
    corpus_version: str = ""  # the corpus version the release names ("" for a release made before versions)
    corpus_differs: str = ""  # how the corpus given differs from that version ("" when it is that version)

    @property
    def ok(self) -> bool:
        return not self.files and not self.documents and not self.corpus_differs


def read_manifest(folder: str | os.PathLike) -> tuple[dict, str]:
    """The manifest of a release folder and its sha256; InputError when it is missing or not a release's."""
    path = Path(folder) / MANIFEST
    if not Path(folder).is_dir():
        raise InputError(str(folder), 0, "no such folder")
    if not path.is_file():
        raise InputError(str(path), 0, "no such file: not a trecbench release folder")
    data = path.read_bytes()
    try:
        manifest = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(str(path), 0, "not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise InputError(str(path), e.lineno, f"invalid JSON: {e.msg}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InputError(str(path), 0, f"not a trecbench release manifest (format {FORMAT!r} expected)")
    files = manifest.get("files")
    documents = manifest.get("judged_documents")
    if not isinstance(files, dict) or not all(isinstance(v, dict) and isinstance(v.get("sha256"), str)
                                              for v in files.values()):
        raise InputError(str(path), 0, "'files' must map each file name to {sha256, bytes}")
    for name in files:
        if not name or "/" in name or "\\" in name or name in (".", "..") or name == MANIFEST:
            raise InputError(str(path), 0, f"file name {name!r} does not name a file of the release folder")
    if not isinstance(documents, dict) or not all(v is None or isinstance(v, str) for v in documents.values()):
        raise InputError(str(path), 0, "'judged_documents' must map each docid to the sha256 of its text")
    return manifest, hashlib.sha256(data).hexdigest()


def verify_release(folder: str | os.PathLike, corpus: Any = None, *, progress: Any = None) -> Verification:
    """Re-hash every file of the release and, with `corpus` (a source or an opened corpus), every judged document.

    Files: `changed` (another sha256), `missing`, or `not in manifest` (a file the release did not have).
    Documents: `changed` (the text hashes differently), `missing` (the corpus no longer has it), or `added`
    (the corpus lacked it at release time and has it now). With a corpus and a release that names its corpus
    version, `corpus_differs` says how the corpus is not that version (its passages and fingerprint).
    """
    from trecbench.store import text_hash

    bar = progress if progress is not None else SilentProgress()
    root = Path(folder)
    manifest, digest = read_manifest(root)
    files: dict[str, dict] = manifest["files"]
    documents: dict[str, str | None] = manifest["judged_documents"]
    if corpus is not None and isinstance(corpus, (str, os.PathLike)):
        from trecbench.corpus import open_corpus

        corpus = open_corpus(os.fspath(corpus))
    result = Verification(root, str(manifest.get("version", "")), digest)
    bar.total = len(files) + (len(documents) if corpus is not None else 0)
    bar.refresh()
    bar.set_description_str("files")
    for name, entry in sorted(files.items()):
        path = root / name
        if not path.is_file():
            result.files.append(FileProblem(name, "missing"))
        elif file_sha256(path) != entry["sha256"]:
            result.files.append(FileProblem(name, "changed"))
        result.files_checked += 1
        bar.update()
    for path in sorted(root.iterdir()):
        if path.name not in (MANIFEST, CARD) and path.name not in files:  # the card names the manifest's hash
            result.files.append(FileProblem(path.name, "not in manifest"))
    if corpus is None:
        return result
    bar.set_description_str("documents")
    for docid, expected in documents.items():
        doc = corpus.get(docid)
        if doc is None:
            if expected is not None:
                result.documents.append(DocumentProblem(docid, "missing"))
        elif expected is None:
            result.documents.append(DocumentProblem(docid, "added"))
        elif text_hash(doc.text) != expected:
            result.documents.append(DocumentProblem(docid, "changed"))
        result.documents_checked += 1
        bar.update()
    named = manifest.get("corpus_version")
    if isinstance(named, dict) and isinstance(named.get("fingerprint"), str):
        result.corpus_version, result.corpus_differs = str(named.get("name", "")), _differs(corpus, named)
    return result


def _differs(corpus: Any, named: dict) -> str:
    """"" when `corpus` is the corpus version the release names, else how it differs."""
    from trecbench.versions.passages import corpus_fingerprint

    passages, fingerprint = corpus_fingerprint(corpus)
    if fingerprint == named["fingerprint"]:
        return ""
    return (f"the corpus is not the release's corpus version {named.get('name')} ({named.get('passages')} passages, "
            f"fingerprint {str(named['fingerprint'])[:12]}): it has {passages} passages, fingerprint {fingerprint[:12]}")
