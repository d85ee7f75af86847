"""A release: the benchmark frozen into plain files, with a manifest that hashes each of them and every judged
document's text, says who judged, and counts what is inside.

A release folder holds:

- `topics.tsv` (`qid<TAB>text`), or `topics.jsonl` when a topic has a narrative or other fields;
- `qrels.txt`: one grade per (topic, document), `trecbench.workspace_qrels` (what `qrels export` writes),
  duplicates in the pool given their group's grade;
- `nuggets.jsonl`: the approved nuggets (drafts too with `include_drafts`), in trecbench's nuggets format;
- `evidence.jsonl`: the nuggets that have supporting documents, as `{qid, evidence: [{id, text, importance,
  any_of}]}`, the file `trecbench eval evidence --evidence` reads;
- `qrels.jsonl`, `topics.jsonl` (beside topics.tsv) and, with `include_corpus`, `corpus.jsonl` (the judged
  documents), and `README.md`, a dataset card: what Hugging Face `datasets` loads (release/ecosystem.py);
- `manifest.json`: format, version, time, trecbench version, the corpus (its path relative to the release
  folder), each file's sha256 and size, how the qrels were made (policy, pool, grades propagated, the pool
  candidates left without a judgment), every judged document's text hash (`trecbench.store.text_hash`),
  the judges with their provenance and the number of their judgments the qrels use, and counts. It hashes
  every file but the card, which names the manifest's sha256.

Files are written to a temporary folder beside the target and moved into place at the end, so a failed
release leaves nothing half-written, and a release replaced with `force` is replaced whole. A release that was
killed leaves its temporary folder (`.VERSION.partial-PID`): the next release to the same folder removes those of
processes that no longer exist. A failure to write (a full disk, a read-only file system, `-o` under a file) is
one InputError naming the release folder and the cause.
"""
from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator, TYPE_CHECKING

import pandas as pd

from trecbench.helpers.progress import SilentProgress
from trecbench.errors import InputError

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace, WorkspaceLike

FORMAT = "trecbench-release/1"
MANIFEST = "manifest.json"
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class ReleaseError(ValueError):
    """An option that does not fit the workspace (a bad version name, an unknown judge)."""


@dataclass
class ReleaseSummary:
    """What `make_release` wrote: the folder, its manifest (as written), the manifest's sha256, and warnings."""

    path: Path
    manifest: dict
    manifest_sha256: str
    warnings: list[str] = field(default_factory=list)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def make_release(workspace: WorkspaceLike, version: str, output: str | os.PathLike | None = None, *, prefer: str = "human",
                 judge: str | None = None, include_drafts: bool = False, force: bool = False,
                 progress: Any = None, include_corpus: bool = False, license: str = "other",
                 allow_missing_nuggets: bool = False) -> ReleaseSummary:
    """Write the release `version` of `workspace` (a path or a `Workspace`) to `output`.

    output: the release folder (default BENCH/releases/VERSION). An existing folder is refused unless
        `force`, and even then only a previous release (a folder with a manifest.json) or an empty folder
        is replaced.
    prefer, judge: which judgment of a pair makes the qrels, as `qrels export --prefer/--judge`.
    include_drafts: release nuggets still in draft too (default: approved ones only).
    allow_missing_nuggets: release even when some topics would have no nugget (ReleaseError otherwise, once
        the workspace has nuggets at all: a benchmark of retrieval alone releases without them).
    progress: a tqdm-like bar (total, update, set_description_str) advanced per document hashed.
    include_corpus: release the judged documents' text too (corpus.jsonl); off by default, since a private
        corpus may not leave.
    license: the dataset card's licence, a Hugging Face identifier (apache-2.0, cc-by-4.0; default other).
    """
    from trecbench.nuggets.store import workspace_nuggets
    from trecbench.qrels.select import workspace_qrels
    from trecbench.release.ecosystem import license_problem
    from trecbench.store import as_workspace

    bar = progress if progress is not None else SilentProgress()
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise ReleaseError(f"version {version!r}: use letters, digits, '.', '_' or '-' (for example v1 or 2025.1)")
    if problem := license_problem(license):
        raise ReleaseError(problem)
    ws = as_workspace(workspace)
    target = Path(output) if output is not None else ws.path / "releases" / version
    _check_target(target, force)

    topics = list(ws.topics().values())
    if not topics:
        raise InputError(str(ws.path), 0, "the workspace has no topics to release (give --topics to `trecbench init`)")
    try:
        made = workspace_qrels(ws, judge=judge, prefer=prefer)
    except ValueError as e:
        raise ReleaseError(str(e)) from None
    if made.empty:
        raise InputError(str(ws.path), 0, "the workspace has no judgments to release")
    qrels = made.qrels
    nuggets = workspace_nuggets(ws, approved_only=not include_drafts)
    _check_nuggets(ws, topics, nuggets, include_drafts=include_drafts, allow_missing=allow_missing_nuggets)
    evidence = evidence_lines(nuggets)

    docids = sorted(set(qrels["doc_id"].astype(str)) | {d for line in evidence for e in line["evidence"]
                                                        for g in e["any_of"] for d in g})
    bar.total = len(docids)
    bar.refresh()
    bar.set_description_str("hashing documents")
    documents, missing = hash_documents(ws.corpus(), docids, bar)
    warnings = []
    if len(made.unjudged):
        warnings.append(f"{len(made.unjudged)} pool candidate(s) have no judgment and are not in the qrels: "
                        f"{_some(made.unjudged)}")
    if missing:
        shown = " ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        warnings.append(f"{len(missing)} judged document(s) are not in the corpus, recorded without a hash: {shown}")

    staging = target.parent / f".{target.name}.partial-{os.getpid()}"
    with _writing(target, staging):
        remove_stale_partials(target)
        if staging.exists():
            shutil.rmtree(staging)
        staging.mkdir(parents=True)
    try:
        with _writing(target, staging):
            manifest, text = _write_files(ws, staging, target, version, topics, made, nuggets, evidence, documents,
                                          missing, judge=judge, prefer=prefer, include_drafts=include_drafts,
                                          warnings=warnings, docids=docids, include_corpus=include_corpus,
                                          license=license)
            _move_into_place(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ReleaseSummary(target, manifest, hashlib.sha256(text.encode("utf-8")).hexdigest(), warnings)


def _write_files(ws: Workspace, staging: Path, target: Path, version: str, topics: list, made: Any, nuggets: list,
                 evidence: list[dict], documents: dict, missing: list[str], *, judge: str | None, prefer: str,
                 include_drafts: bool, warnings: list[str], docids: list[str], include_corpus: bool,
                 license: str) -> tuple[dict, str]:
    """The release's files in `staging` (the loadable copies and the card too), the manifest before the card;
    returns the manifest and its text."""
    from trecbench import __version__
    from trecbench.nuggets.io import write_nuggets
    from trecbench.qrels import write_qrels
    from trecbench.release.ecosystem import write_card, write_loadable

    qrels, propagated, pool = made.qrels, made.propagated, made.pool
    files = [_write_topics(staging, topics)]
    write_qrels(qrels[["query_id", "iteration", "doc_id", "relevance"]], staging / "qrels.txt")
    files.append("qrels.txt")
    if nuggets:
        write_nuggets(nuggets, staging / "nuggets.jsonl")
        files.append("nuggets.jsonl")
    else:
        warnings.append("no nuggets released: approve nuggets in the web app, or give --include-drafts"
                        if not include_drafts else "no nuggets released: the workspace has none")
    if evidence:
        (staging / "evidence.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in evidence),
                                                encoding="utf-8")
        files.append("evidence.jsonl")
    elif nuggets:
        warnings.append("no evidence released: no released nugget is linked to supporting documents")
    files += write_loadable(staging, topics, qrels, ws.corpus(), docids, with_corpus=include_corpus)
    manifest = {
        "format": FORMAT,
        "name": ws.settings.name,
        "version": version,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "trecbench_version": __version__,
        "corpus": _relative_to(ws.corpus_source, target),
        "corpus_version": _corpus_version(ws),
        "files": {name: {"sha256": file_sha256(staging / name), "bytes": (staging / name).stat().st_size}
                  for name in files},
        "qrels": {"policy": f"judge {judge}" if judge else f"prefer {prefer}",
                  "pool": pool.attrs.get("name") if pool is not None else None,
                  "propagated_from_duplicates": propagated,
                  "pool_candidates_unjudged": len(made.unjudged),
                  "unjudged": [{"qid": q, "docid": d} for q, d in zip(made.unjudged["query_id"],
                                                                      made.unjudged["doc_id"])]},
        "judges": judge_provenance(ws, qrels),
        "counts": _counts(topics, qrels, propagated, nuggets, evidence, documents, missing),
        "judged_documents": documents,
    }
    text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
    (staging / MANIFEST).write_text(text, encoding="utf-8")
    write_card(staging, manifest, hashlib.sha256(text.encode("utf-8")).hexdigest(), license)
    return manifest, text


def _corpus_version(ws: Workspace) -> dict | None:
    """The corpus version the release was made on: its name, passages and fingerprint (`release verify --corpus`
    checks a corpus against it); None for a workspace without a corpus."""
    from trecbench.versions.passages import version_fingerprint
    from trecbench.versions.register import ensure_versions

    if not ws.corpus_source:
        return None
    current = ensure_versions(ws)[-1]
    return {"name": current.name, "passages": current.passages, "fingerprint": version_fingerprint(ws, current.id)}


@contextlib.contextmanager
def _writing(target: Path, staging: Path) -> Iterator[None]:
    """A failure to write the release (a full disk, a read-only file system, a folder that is a file, no
    permission) as one InputError naming the release folder and the cause."""
    try:
        yield
    except InputError as e:  # a file of the release, written through trecbench.files.output into the staging folder
        first = e.problems[0] if e.problems else None
        if first is None or not first.path.startswith(str(staging)):
            raise
        raise InputError(str(target / Path(first.path).name), 0, first.message) from None
    except OSError as e:
        raise InputError(str(target), 0, f"cannot write the release: {e.strerror or e}") from None


def remove_stale_partials(target: Path) -> list[Path]:
    """Remove the `.NAME.partial-PID` folders beside `target` that a killed `make_release` left: those of
    processes that no longer exist (never one of a live process, which may still be writing it). Returns
    the folders removed."""
    removed: list[Path] = []
    try:
        beside = list(target.parent.glob(f".{glob.escape(target.name)}.partial-*"))
    except OSError:
        return removed
    for folder in beside:
        pid = folder.name.rsplit("-", 1)[-1]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)) and folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    """Whether a process `pid` exists (one of another user's counts: it cannot be signalled, but it exists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:  # a pid out of range, say: no such process
        return False
    return True


def _check_nuggets(ws: Workspace, topics: list, nuggets: list, *, include_drafts: bool, allow_missing: bool) -> None:
    """Refuse (ReleaseError) a release that would ship some topics without a nugget while the workspace has
    nuggets: the people who use it would read "no nuggets, not scored" for those topics without a word."""
    from trecbench.nuggets.store import NuggetStore

    drafted = NuggetStore(ws).topics()
    if allow_missing or not drafted:
        return
    released = {t.qid for t in nuggets if t.nuggets}
    missing = [t.qid for t in topics if t.qid not in released]
    if not missing:
        return
    drafts_only = [q for q in missing if q in drafted]
    what = (f"{len(missing)} of {len(topics)} topics would be released without nuggets"
            + (f" ({len(drafts_only)} have only draft nuggets)" if drafts_only and not include_drafts else "")
            + f": {' '.join(missing[:10])}{' ...' if len(missing) > 10 else ''}")
    hint = ("approve them (`trecbench nuggets approve -w BENCH --topic T` or `--all`, or in the web app), "
            "give --include-drafts, or --allow-missing-nuggets to release them so")
    raise ReleaseError(f"{what}; {hint}")


def _some(pairs: pd.DataFrame, limit: int = 10) -> str:
    shown = [f"{q}/{d}" for q, d in zip(pairs["query_id"][:limit], pairs["doc_id"][:limit])]
    return " ".join(shown) + (" ..." if len(pairs) > limit else "")


def _relative_to(source: str | None, folder: Path) -> str | None:
    """The corpus as the release folder sees it: a path relative to the folder (absolute on another drive)."""
    if not source or source.startswith("irds:"):
        return source
    try:
        return os.path.relpath(Path(source).resolve(), folder.resolve())
    except ValueError:
        return str(Path(source).resolve())


def _check_target(target: Path, force: bool) -> None:
    for folder in target.parents:  # the first folder that exists must be one: `-o FILE/sub/v1` fails now
        if folder.exists() or folder.is_symlink():
            if not folder.is_dir():
                raise InputError(str(target), 0, f"cannot write the release: {str(folder)!r} is not a folder")
            break
    if not target.exists():
        return
    if not target.is_dir():
        raise InputError(str(target), 0, "exists and is not a folder")
    if not any(target.iterdir()):
        return
    if not force:
        raise InputError(str(target), 0, "already exists: give --force to replace the release")
    if not (target / MANIFEST).is_file():
        raise InputError(str(target), 0, f"is not a release folder (no {MANIFEST}): not replacing it, even with --force")


def _move_into_place(staging: Path, target: Path) -> None:
    old = None
    if target.exists():
        old = target.parent / f".{target.name}.replaced-{os.getpid()}"
        target.rename(old)
    staging.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _write_topics(folder: Path, topics: list) -> str:
    """topics.tsv, or topics.jsonl when a topic has more than a one-line text (narrative, other fields)."""
    rich = any(t.narrative or t.fields or "\t" in t.text or "\n" in t.text or "\r" in t.text for t in topics)
    if rich:
        (folder / "topics.jsonl").write_text("".join(json.dumps(t.as_dict(), ensure_ascii=False) + "\n"
                                                     for t in topics), encoding="utf-8")
        return "topics.jsonl"
    with open(folder / "topics.tsv", "w", encoding="utf-8", newline="\n") as f:
        f.writelines(f"{t.qid}\t{t.text}\n" for t in topics)
    return "topics.tsv"


def evidence_lines(topics: list) -> list[dict]:
    """`{qid, evidence: [{id, text, importance, any_of}]}` per topic, from the nuggets that have support."""
    out = []
    for t in topics:
        items = [{"id": n.id, "text": n.text, "importance": n.importance, "any_of": [list(g) for g in n.support]}
                 for n in t.nuggets if n.support]
        if items:
            out.append({"qid": t.qid, "evidence": items})
    return out


def hash_documents(corpus: Any, docids: list[str], bar: Any = None) -> tuple[dict[str, str | None], list[str]]:
    """{docid: sha256 of its text} (None for a document the corpus lacks), and the missing docids."""
    from trecbench.store import text_hash

    bar = bar if bar is not None else SilentProgress()
    out: dict[str, str | None] = {}
    missing = []
    for docid in docids:
        doc = corpus.get(docid)
        if doc is None:
            missing.append(docid)
            out[docid] = None
        else:
            out[docid] = text_hash(doc.text)
        bar.update()
    return out, missing


def judge_provenance(ws: Workspace, qrels: pd.DataFrame) -> list[dict]:
    """Every judge of the workspace with its provenance, its judgments, and how many of them the qrels use."""
    rows = ws.judgments(direct=True)[["id", "query_id", "doc_id", "grade", "judge_id", "judge"]]
    direct = qrels[qrels["propagated_from"].isna()][["query_id", "doc_id", "relevance", "judge"]]
    # the judgment a chosen grade came from: that judge's latest judgment of the pair with that grade
    chosen = direct.merge(rows, left_on=["query_id", "doc_id", "judge", "relevance"],
                          right_on=["query_id", "doc_id", "judge", "grade"])
    chosen = chosen.sort_values("id").groupby(["query_id", "doc_id"], sort=False).tail(1)
    used = chosen.groupby("judge_id").size()
    source = dict(zip(zip(chosen["query_id"], chosen["doc_id"]), chosen["judge_id"]))
    copies = qrels[qrels["propagated_from"].notna()]
    lent = pd.Series([source.get((q, d)) for q, d in zip(copies["query_id"], copies["propagated_from"])],
                     dtype="object").dropna().value_counts()
    judges = []
    for stats in ws.judge_stats():
        g = stats.judge
        judges.append({"kind": g.kind, "name": g.name, "model": g.model, "prompt_id": g.prompt_id,
                       "prompt_hash": g.prompt_hash, "params": stats.params, "first_seen": stats.created_at,
                       "judgments": stats.ok, "failed": stats.failed,
                       "used_in_qrels": int(used.get(stats.id, 0)), "propagated_in_qrels": int(lent.get(stats.id, 0))})
    return judges


def _counts(topics: list, qrels: pd.DataFrame, propagated: int, nuggets: list, evidence: list[dict],
            documents: dict, missing: list[str]) -> dict:
    grades = qrels["relevance"].astype(int).value_counts().sort_index()
    all_nuggets = [n for t in nuggets for n in t.nuggets]
    return {
        "topics": len(topics),
        "topics_judged": int(qrels["query_id"].nunique()),
        "judgments": len(qrels),
        "judged_directly": len(qrels) - propagated,
        "propagated": propagated,
        "relevance": {str(g): int(n) for g, n in grades.items()},
        "relevant": int((qrels["relevance"] > 0).sum()),
        "nuggets": {"topics": len(nuggets), "vital": sum(n.importance == "vital" for n in all_nuggets),
                    "okay": sum(n.importance == "okay" for n in all_nuggets),
                    "draft": sum(n.status == "draft" for n in all_nuggets)},
        "evidence": {"topics": len(evidence), "items": sum(len(x["evidence"]) for x in evidence)},
        "judged_documents": len(documents),
        "judged_documents_missing_from_corpus": len(missing),
    }
