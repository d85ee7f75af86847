"""Produce the five sample runs shipped in src/trecbench/sample/runs/.

Usage (from the repository root):

    .venv/bin/python scripts/make_sample_runs.py

Five lexical retrieval systems of deliberately different quality are run over the sample
handbook corpus (corpus.jsonl) for the sample topics (topics.tsv):

    bm25_rm3         BM25 (k1=0.9, b=0.4) over title+contents, then RM3 pseudo-relevance feedback
                     (10 feedback passages, 10 expansion terms, original query weight 0.5)
    bm25             BM25 (k1=0.9, b=0.4) over title+contents, stopwords removed, light stemming
    tfidf            cosine similarity of log-tf * idf vectors over title+contents, no stemming
    title_only       BM25 (k1=0.9, b=0.4) over the page titles only
    lexical_overlap  number of distinct query words (stopwords included, no stemming) that occur
                     in the passage

Each run lists 100 passages per topic (zero-score passages fill the tail), ordered the way
trec_eval orders them: score descending, ties by docid descending. Everything is deterministic:
re-running the script rewrites the files byte for byte.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "trecbench" / "sample"
DEPTH = 100
K1, B = 0.9, 0.4

STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each either else even ever every
few for from further get gets got had has have having he her here hers him his how i if in into is
it its itself just may me might more most must my no nor not now of off on once only or other our
ours out over own per same shall she should so some such than that the their theirs them then there
these they this those through to too under until up upon us very was we were what when where which
while who whom why will with within without would you your yours
""".split())

_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def stem(word: str) -> str:
    """A small, deterministic suffix stripper (plural, -ing, -ed, -ly); enough for this corpus."""
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix, repl, min_len in (("ies", "y", 5), ("sses", "ss", 5), ("ing", "", 6), ("edly", "", 7),
                                  ("ed", "", 5), ("ly", "", 6), ("es", "e", 5), ("s", "", 4)):
        if word.endswith(suffix) and len(word) >= min_len and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + repl
    return word


def analyse(text: str, *, stop: bool = True, stemming: bool = True) -> list[str]:
    words = tokens(text)
    if stop:
        words = [w for w in words if w not in STOPWORDS]
    if stemming:
        words = [stem(w) for w in words]
    return words


def read_corpus() -> list[dict]:
    with open(SAMPLE / "corpus.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_topics() -> list[tuple[str, str]]:
    with open(SAMPLE / "topics.tsv", encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if line.strip()]


class BM25:
    """Okapi BM25 over pre-analysed documents, with the Lucene-style idf log(1 + (N - df + .5) / (df + .5))."""

    def __init__(self, docs: list[list[str]], k1: float = K1, b: float = B) -> None:
        self.tfs = [Counter(d) for d in docs]
        self.lengths = np.array([len(d) for d in docs], dtype=np.float64)
        self.avgdl = float(self.lengths.mean())
        n = len(docs)
        df = Counter(term for tf in self.tfs for term in tf)
        self.idf = {t: math.log(1.0 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.norm = k1 * (1.0 - b + b * self.lengths / self.avgdl)
        self.k1 = k1

    def score(self, query: dict[str, float]) -> np.ndarray:
        scores = np.zeros(len(self.tfs), dtype=np.float64)
        for term in sorted(query):  # fixed order: identical float sums on every run
            if term not in self.idf:
                continue
            tf = np.array([d.get(term, 0) for d in self.tfs], dtype=np.float64)
            scores += query[term] * self.idf[term] * tf * (self.k1 + 1.0) / (tf + self.norm)
        return scores


def query_weights(words: list[str]) -> dict[str, float]:
    return {t: float(c) for t, c in Counter(words).items()}


def top_indices(scores: np.ndarray, docids: list[str], k: int) -> list[int]:
    order = sorted(range(len(docids)), key=lambda i: (float(f"{scores[i]:.6f}"), docids[i]), reverse=True)
    return order[:k]


# --- the five systems: each maps (corpus, topics) -> {qid: scores array} -------------------------

def run_bm25(corpus, topics):
    index = BM25([analyse(d["title"] + " " + d["contents"]) for d in corpus])
    return {qid: index.score(query_weights(analyse(text))) for qid, text in topics}


def run_bm25_rm3(corpus, topics, fb_docs=10, fb_terms=10, orig_weight=0.5):
    docs = [analyse(d["title"] + " " + d["contents"]) for d in corpus]
    index = BM25(docs)
    docids = [d["id"] for d in corpus]
    out = {}
    for qid, text in topics:
        q = query_weights(analyse(text))
        first = index.score(q)
        feedback = top_indices(first, docids, fb_docs)
        # Relevance model: P(w|R) ~ sum_d P(q|d) P(w|d), with P(q|d) from exp-normalised BM25 scores.
        top = np.array([first[i] for i in feedback])
        weights = np.exp(top - top.max())
        weights /= weights.sum()
        rm: dict[str, float] = {}
        for w_d, i in zip(weights, feedback):
            length = len(docs[i])
            for term, c in sorted(index.tfs[i].items()):
                rm[term] = rm.get(term, 0.0) + float(w_d) * c / length
        expansion = sorted(rm.items(), key=lambda kv: (-kv[1], kv[0]))[:fb_terms]
        total = sum(v for _, v in expansion)
        q_total = sum(q.values())
        mixed: dict[str, float] = {}
        for term, v in q.items():
            mixed[term] = mixed.get(term, 0.0) + orig_weight * v / q_total
        for term, v in expansion:
            mixed[term] = mixed.get(term, 0.0) + (1.0 - orig_weight) * v / total
        out[qid] = index.score(mixed)
    return out


def run_tfidf(corpus, topics):
    docs = [analyse(d["title"] + " " + d["contents"], stemming=False) for d in corpus]
    n = len(docs)
    df = Counter(t for d in docs for t in set(d))
    vocab = {t: i for i, t in enumerate(sorted(df))}
    idf = np.zeros(len(vocab))
    for t, i in vocab.items():
        idf[i] = math.log(n / df[t])
    matrix = np.zeros((n, len(vocab)))
    for row, d in enumerate(docs):
        for t, c in Counter(d).items():
            matrix[row, vocab[t]] = (1.0 + math.log(c)) * idf[vocab[t]]
    norms = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = 1.0
    matrix /= norms[:, None]
    out = {}
    for qid, text in topics:
        qv = np.zeros(len(vocab))
        for t, c in Counter(analyse(text, stemming=False)).items():
            if t in vocab:
                qv[vocab[t]] = (1.0 + math.log(c)) * idf[vocab[t]]
        qn = np.linalg.norm(qv)
        out[qid] = matrix @ (qv / qn) if qn else np.zeros(n)
    return out


def run_title_only(corpus, topics):
    index = BM25([analyse(d["title"]) for d in corpus])
    return {qid: index.score(query_weights(analyse(text))) for qid, text in topics}


def run_lexical_overlap(corpus, topics):
    docs = [set(tokens(d["title"] + " " + d["contents"])) for d in corpus]
    out = {}
    for qid, text in topics:
        q = set(tokens(text))
        out[qid] = np.array([float(len(q & d)) for d in docs])
    return out


SYSTEMS = {
    "bm25_rm3": run_bm25_rm3,
    "bm25": run_bm25,
    "tfidf": run_tfidf,
    "title_only": run_title_only,
    "lexical_overlap": run_lexical_overlap,
}


def write_run(path: Path, tag: str, results: dict[str, np.ndarray], docids: list[str]) -> None:
    lines = []
    for qid in sorted(results):
        scores = results[qid]
        for rank, i in enumerate(top_indices(scores, docids, DEPTH), start=1):
            lines.append(f"{qid} Q0 {docids[i]} {rank} {scores[i]:.6f} {tag}\n")
    path.write_text("".join(lines), encoding="utf-8", newline="\n")


def main() -> None:
    corpus = read_corpus()
    topics = read_topics()
    docids = [d["id"] for d in corpus]
    out_dir = SAMPLE / "runs"
    out_dir.mkdir(exist_ok=True)
    for name, system in SYSTEMS.items():
        write_run(out_dir / f"{name}.txt", name, system(corpus, topics), docids)
        print(f"wrote {out_dir / (name + '.txt')}")


if __name__ == "__main__":
    main()
