"""Releasing a benchmark: topics, qrels, nuggets and evidence frozen into files with a hashed manifest,
and checking later that neither the files nor the judged documents changed.

    >>> from trecbench.release import make_release, verify_release
    >>> make_release("mybench", "v1", "mybench/releases/v1")
    >>> verify_release("mybench/releases/v1", "corpus.jsonl").ok
    >>> register_release("mybench/releases/v1", "mybench/v1")      # then ir_datasets.load("mybench/v1")
"""
from trecbench.release.bundle import FORMAT, MANIFEST, ReleaseError, ReleaseSummary, make_release
from trecbench.release.ecosystem import CARD, register_release
from trecbench.release.verify import DocumentProblem, FileProblem, Verification, read_manifest, verify_release

__all__ = ["FORMAT", "MANIFEST", "ReleaseError", "ReleaseSummary", "make_release", "DocumentProblem", "FileProblem",
           "Verification", "read_manifest", "verify_release", "CARD", "register_release"]
