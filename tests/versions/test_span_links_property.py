"""A property of span links across corpus updates, over seeded random cases: random documents, random
chunkings, random spans marked inside passages of the first. After every update each span is found again:
its links' pieces lie inside passages of the new chunking, hold the span's characters exactly once (one
piece when one passage holds it, a joint group of pieces when the chunking cuts it), each with the hash of
its own text; nothing is changed, retired or lost, and the sums hold."""
from __future__ import annotations

import hashlib
import json
import random

from test_corpus_versions_property import chunking, docid, documents, write_corpus

from trecbench.nuggets.store import NuggetStore
from trecbench.store import Workspace
from trecbench.versions import update_corpus

SEEDS = range(10)


def test_every_marked_span_is_found_again_in_every_chunking_and_none_is_lost(tmp_path):
    seen = {"carried": 0, "mapped": 0, "split": 0}
    for seed in SEEDS:
        rng = random.Random(1000 + seed)
        root = tmp_path / str(seed)
        root.mkdir()
        docs = documents(rng)
        sources = root / "sources.jsonl"
        sources.write_text("".join(json.dumps({"id": k, "text": v}) + "\n" for k, v in docs.items()))
        first = chunking(rng, docs)
        ws = Workspace.init(root / "bench", corpus=str(write_corpus(root / "c0.jsonl", docs, first)),
                            sources=str(sources))
        store = NuggetStore(ws)
        nid = store.add("q1", "A fact.", author="tester").id
        marked = {}  # alternative number -> (source, start, end) of the span it was marked as
        for passage in rng.sample(first, min(4, len(first))):
            a = rng.randrange(0, len(passage) - 1)
            b = rng.randrange(a + 1, len(passage) + 1)
            store.link(nid, [docid(passage)], spans=[(a, b)], author="tester")
            marked[len(marked)] = (passage.source_id, passage.start + a, passage.start + b)
        chunks = first
        for step in range(1, 4):
            chunks = chunking(rng, docs, chunks)
            report = update_corpus(ws, str(write_corpus(root / f"c{step}.jsonl", docs, chunks)), sources=str(sources))
            assert report.balanced(), seed
            links = report.counts["link"]
            assert links["changed"] == links["retired"] == 0, seed
            seen = {o: seen[o] + links[o] for o in seen}
            now = {docid(c): c for c in chunks}
            support = store.get(nid).support
            assert len(support) == len(marked), seed
            for alternative, (source, start, end) in marked.items():
                held = bytearray(end - start)
                for link in support[alternative]:
                    passage = now[link.docid]
                    assert link.start is not None and link.end is not None and link.source is not None, seed
                    assert link.source == (source, passage.start + link.start, passage.start + link.end), seed
                    piece = docs[source][link.source.start:link.source.end]
                    assert link.span_hash == hashlib.sha256(piece.encode("utf-8")).hexdigest(), seed
                    for i in range(link.source.start, link.source.end):
                        held[i - start] += 1
                assert set(held) == {1}, seed  # every character of the span, each once
                holders = [c for c in chunks if c.contains(type(c)(source, start, end))]
                if len(support[alternative]) == 1:
                    assert holders, seed  # one link: a passage holds the whole span
                if not holders:
                    assert len(support[alternative]) > 1, seed  # cut by the chunking: a joint group of pieces
    assert min(seen.values()) >= 5, seen  # the cases hold every outcome several times
