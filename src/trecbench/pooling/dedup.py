"""Duplicate groups within each topic's pool: identical normalised text (exact) or word-shingle near-duplicates.

What is compared is each document's text (what an assessor reads as the passage), not its title: two
passages with the same text under different titles are duplicates. The text is normalised before
comparing: Unicode NFKC, lowercased, punctuation and symbols removed, whitespace collapsed.
`exact` groups documents with the same normalised text.
`near` also joins documents whose sets of word 5-shingles (5 consecutive words; a shorter text is
one shingle) have Jaccard similarity >= the threshold (default 0.9): MinHash signatures (128
hashes) bucketed by locality-sensitive hashing (16 bands of 8) propose pairs, the exact Jaccard of
the two shingle sets confirms each, and confirmed pairs are joined by union-find within a topic.
Each group's representative is its member judged first (lowest priority); the others are marked
`representative = False` and `group` names the representative's docid.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from trecbench.errors import Problem

DEDUP_MODES = ("none", "exact", "near")
SHINGLE = 5
NUM_HASHES = 128
BANDS = 16  # x 8 rows: a pair with Jaccard 0.9 is proposed with probability > 0.999, one with 0.5 with 0.06
DEFAULT_THRESHOLD = 0.9
_PUNCT = re.compile(r"[^\w\s]+")
_SPACE = re.compile(r"\s+")
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def normalise(text: str) -> str:
    """Lowercase, punctuation removed (Unicode categories P and S), whitespace collapsed and stripped."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = _PUNCT.sub(" ", text).replace("_", " ")
    return _SPACE.sub(" ", text).strip()


def shingles(words: list[int]) -> np.ndarray:
    """The distinct hashed word 5-shingles of a text given as word ids (one shingle if shorter)."""
    w = np.asarray(words, dtype=np.uint64)
    if len(w) == 0:
        return np.empty(0, dtype=np.uint64)
    k = min(SHINGLE, len(w))
    h = np.zeros(len(w) - k + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            h = _mix(h * np.uint64(0x100000001B3) + w[j: len(w) - k + 1 + j])
    return np.unique(h)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a fast, well-spread 64-bit hash of 64-bit integers."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * np.uint64(0xBF58476D1CE4E5B9)
        x = x ^ (x >> np.uint64(27))
        x = x * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


_SEEDS = _mix(np.arange(1, NUM_HASHES + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))


def minhash(shingle_set: np.ndarray) -> np.ndarray:
    """The MinHash signature (NUM_HASHES uint64) of a set of hashed shingles."""
    if len(shingle_set) == 0:
        return np.full(NUM_HASHES, _M64, dtype=np.uint64)
    return _mix(shingle_set[:, None] ^ _SEEDS[None, :]).min(axis=0)


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard similarity of two sorted sets of shingle hashes."""
    if len(a) == 0 and len(b) == 0:
        return 1.0
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)


def dedup_pool(pool: Any, corpus: Any, *, mode: str = "exact", threshold: float = DEFAULT_THRESHOLD) -> Any:
    """The pool with `group` and `representative` set from the documents' text (see the module doc).

    Docids absent from the corpus stay on their own and are reported in `pool.problems`.
    """
    if mode not in ("exact", "near"):
        raise ValueError(f"dedup mode must be exact or near, not {mode!r}")
    if not 0 < threshold <= 1:
        raise ValueError(f"near-duplicate threshold must be in (0, 1], not {threshold}")
    if isinstance(corpus, str) or hasattr(corpus, "__fspath__"):
        from trecbench.corpus import open_corpus

        corpus = open_corpus(corpus)
    c = pool.candidates.reset_index(drop=True)
    uniq = pd.unique(c["doc_id"].to_numpy(dtype=object))
    found, missing = corpus.lookup(uniq)
    texts = {docid: normalise(doc.text) for docid, doc in found}
    # Exact: one key per distinct normalised text; a missing document is its own key.
    key_of = {d: hashlib.blake2b(t.encode("utf-8"), digest_size=16).hexdigest() for d, t in texts.items()}
    key = np.array([key_of.get(d, "missing:" + d) for d in c["doc_id"].to_numpy(dtype=object)], dtype=object)
    # rows are in judging order per topic, so the first row of a (topic, key) is the group's representative
    first = pd.DataFrame({"q": c["query_id"].to_numpy(dtype=object), "k": key}).groupby(["q", "k"], sort=False) \
        .ngroup().to_numpy()
    rep_row = _first_rows(first)
    if mode == "near":
        rep_row = _near(c, texts, rep_row, threshold)
    group = c["doc_id"].to_numpy(dtype=object)[rep_row]
    frame = c.copy()
    frame["group"] = group
    frame["representative"] = rep_row == np.arange(len(c))
    problems = list(pool.problems)
    if missing:
        where = getattr(corpus, "source", "corpus")
        problems.append(Problem(str(where), 0, f"{len(missing)} pooled docid(s) not in the corpus, not "
                                               f"de-duplicated: {' '.join(sorted(missing)[:10])}"
                                               f"{' ...' if len(missing) > 10 else ''}"))
    return replace(pool, candidates=frame, problems=problems)


def _first_rows(group_code: np.ndarray) -> np.ndarray:
    """For each row, the index of the first row with the same code."""
    if not len(group_code):
        return np.empty(0, dtype=np.int64)
    _, first = np.unique(group_code, return_index=True)
    return first[group_code].astype(np.int64)


def _near(c: pd.DataFrame, texts: dict[str, str], rep_row: np.ndarray, threshold: float) -> np.ndarray:
    """Join exact groups whose representatives are near-duplicates (MinHash LSH, confirmed by exact Jaccard)."""
    reps = np.flatnonzero(rep_row == np.arange(len(c)))
    docs = c["doc_id"].to_numpy(dtype=object)
    rep_docs = [d for d in pd.unique(docs[reps]) if d in texts]
    vocab: dict[str, int] = {}
    sets: dict[str, np.ndarray] = {}
    sigs = np.empty((len(rep_docs), NUM_HASHES), dtype=np.uint64)
    for i, d in enumerate(rep_docs):
        ids = [vocab.setdefault(w, len(vocab) + 1) for w in texts[d].split()]
        sets[d] = shingles(ids)
        sigs[i] = minhash(sets[d])
    row_of_doc = {d: i for i, d in enumerate(rep_docs)}
    # band keys of every representative row (topic-local): rows x BANDS
    sig_row = np.array([row_of_doc.get(d, -1) for d in docs[reps]], dtype=np.int64)
    have = sig_row >= 0
    reps, sig_row = reps[have], sig_row[have]
    if len(reps) < 2:
        return rep_row
    width = NUM_HASHES // BANDS
    band_keys = np.empty((len(reps), BANDS), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for b in range(BANDS):
            h = np.zeros(len(reps), dtype=np.uint64)
            for j in range(width):
                h = _mix(h * np.uint64(0x100000001B3) + sigs[sig_row, b * width + j])
            band_keys[:, b] = h
    topic = pd.factorize(c["query_id"].to_numpy(dtype=object)[reps])[0]
    table = pd.DataFrame({"t": np.repeat(topic, BANDS), "b": np.tile(np.arange(BANDS), len(reps)),
                          "k": band_keys.ravel(), "r": np.repeat(reps, BANDS)})
    bucket = table.groupby(["t", "b", "k"], sort=False)["r"]
    sizes = bucket.transform("size").to_numpy()
    crowded = table[sizes > 1]
    parent = {int(r): int(r) for r in reps}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    checked: set[tuple[int, int]] = set()
    for _, members in crowded.groupby(["t", "b", "k"], sort=False)["r"]:
        rows = sorted(int(r) for r in members)
        for i, a in enumerate(rows):
            for b_ in rows[i + 1:]:
                if (a, b_) in checked or find(a) == find(b_):
                    continue
                checked.add((a, b_))
                if jaccard(sets[docs[a]], sets[docs[b_]]) >= threshold:
                    ra, rb = find(a), find(b_)
                    parent[max(ra, rb)] = min(ra, rb)  # the row judged first stays the root
    root = rep_row.copy()
    for r in reps:
        root[r] = find(int(r))
    return root[rep_row]
