"""A property of corpus updates, over seeded random cases: random documents, random chunkings of them, random
judged passages and nugget links. Every unchanged span is found again in every chunking (carried when the
passage is the same, mapped when one new passage holds it, split into the passages that cover it
otherwise), nothing is changed or retired, and the sums hold."""
from __future__ import annotations

import json
import random
from pathlib import Path

from trecbench.nuggets.store import NuggetStore
from trecbench.sources import Span
from trecbench.store import Judge, Judgment, Workspace
from trecbench.versions import update_corpus

WORDS = "rollback hotfix approval freeze canary deploy review ticket owner budget policy access".split()
SEEDS = range(12)


def documents(rng: random.Random) -> dict[str, str]:
    """2-4 documents of 3-9 sentences of random words."""
    docs = {}
    for d in range(rng.randint(2, 4)):
        sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))).capitalize() + "."
                     for _ in range(rng.randint(3, 9))]
        docs[f"D{d}"] = " ".join(sentences)
    return docs


def chunking(rng: random.Random, docs: dict[str, str], before: list[Span] = ()) -> list[Span]:
    """Each document cut at random places into contiguous spans (docid: source:start-end), about half the
    cuts of the chunking `before` kept (so that some passages stay the same)."""
    spans = []
    for source, text in docs.items():
        kept = {s.start for s in before if s.source_id == source and s.start and rng.random() < 0.5}
        cuts = sorted(kept | set(rng.sample(range(1, len(text)), rng.randint(1, min(4, len(text) - 1)))))
        for a, b in zip([0] + cuts, cuts + [len(text)]):
            spans.append(Span(source, a, b))
    return spans


def docid(span: Span) -> str:
    return f"{span.source_id}:{span.start}-{span.end}"


def write_corpus(path: Path, docs: dict[str, str], spans: list[Span]) -> Path:
    path.write_text("".join(json.dumps({"id": docid(s), "contents": docs[s.source_id][s.start:s.end],
                                        **s.as_dict()}) + "\n" for s in spans))
    return path


def expected(span: Span, chunks: list[Span]) -> tuple[str, tuple[str, ...]]:
    """(outcome, new docids) the rules give a judged passage of span `span` in chunking `chunks`."""
    if span in chunks:
        return "carried", ()
    holders = sorted((c for c in chunks if c.contains(span)), key=lambda c: (len(c), c.start))
    if holders:
        return "mapped", (docid(holders[0]),)
    return "split", tuple(docid(c) for c in sorted(chunks, key=lambda c: (c.start, c.end)) if c.overlap(span))


def test_unchanged_spans_are_found_again_in_every_chunking_and_nothing_is_lost(tmp_path):
    seen = {"carried": 0, "mapped": 0, "split": 0}
    for seed in SEEDS:
        rng = random.Random(seed)
        root = tmp_path / str(seed)
        root.mkdir()
        docs = documents(rng)
        sources = root / "sources.jsonl"
        sources.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in docs.items()))
        first = chunking(rng, docs)
        ws = Workspace.init(root / "bench", corpus=str(write_corpus(root / "c0.jsonl", docs, first)),
                            sources=str(sources))
        judged = rng.sample(first, rng.randint(1, len(first)))
        ws.record_many([Judgment("q1", docid(s), rng.randint(0, 3), Judge("import", "file")) for s in judged])
        nugget = NuggetStore(ws).add("q1", "A fact.", author="tester")
        linked = rng.sample(first, min(2, len(first)))
        NuggetStore(ws).link(nugget.id, [docid(s) for s in linked], author="tester")
        current = {docid(s): s for s in judged}  # the passages judgments hold in, by docid
        chunks = first
        for step in range(1, 4):
            chunks = chunking(rng, docs, chunks)
            report = update_corpus(ws, str(write_corpus(root / f"c{step}.jsonl", docs, chunks)), sources=str(sources))
            assert report.balanced(), seed
            items = {o.ref: o for o in report.items if o.kind == "judgment"}
            assert report.counts["judgment"]["changed"] == report.counts["judgment"]["retired"] == 0, seed
            assert report.counts["link"]["changed"] == report.counts["link"]["retired"] == 0, seed
            counted = {o: 0 for o in ("carried", "mapped", "split")}
            for judgment in ws.judgment_rows():
                span = current.get(judgment.docid)
                if span is None:  # a judgment of an older version's passage: not the current version's
                    continue
                outcome, targets = expected(span, chunks)
                counted[outcome] += 1
                if outcome != "carried":
                    assert (items[str(judgment.id)].outcome, items[str(judgment.id)].targets) == (outcome, targets)
            assert counted == {o: report.counts["judgment"][o] for o in counted}, seed
            seen = {o: seen[o] + counted[o] for o in seen}
            assert sum(counted.values()) == report.totals["judgment"]
            # the links now name passages of the new chunking that hold every character of the linked spans
            now = {docid(c): c for c in chunks}
            group = NuggetStore(ws).get(nugget.id).support[0]
            assert all(link.docid in now for link in group), seed
            for span in linked:
                held = [now[link.docid] for link in group if now[link.docid].overlap(span)]
                assert sum(c.overlap(span) for c in held) == len(span), seed
            linked = [now[link.docid] for link in group]
            current = {d: now[d] for d in (j.docid for j in ws.judgment_rows()) if d in now}
    assert min(seen.values()) >= 10, seen  # the cases hold every outcome many times
