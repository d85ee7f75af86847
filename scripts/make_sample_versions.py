"""Produce the sample's corpus versions in src/trecbench/sample/versions/.

Usage (from the repository root):

    .venv/bin/python scripts/make_sample_versions.py

The sample handbook (corpus.jsonl, 170 passages HB-<SECTION>-NN) becomes 15 source documents and three
versions of its corpus:

    sources.jsonl     each handbook section (the HB-<SECTION> prefix) as one source document: its pages'
                      contents, in corpus order, joined by a blank line; the title is the section's name
    v1.jsonl          the 170 passages exactly as in corpus.jsonl, with source_id, start_char, end_char
    v2.jsonl          a second chunking of the same sources: the second page of every section is split in
                      two at the sentence boundary nearest its middle (docids HB-X-02a, HB-X-02b; the space
                      between the two sentences is in neither), and HB-REL-05 and HB-REL-06 are merged into
                      one passage (HB-REL-05+06, the blank line between them included); every other
                      passage is unchanged
    sources.v3.jsonl  the sources of v3: a sentence changed in three sections (EDITS) and two sections
                      removed (REMOVED)
    v3.jsonl          v2's chunking of the v3 sources: a passage holding an edited sentence gets a new docid
                      (its v2 docid + "-r3"), the passages after it keep theirs at their new offsets, and the
                      removed sections' passages are gone

Everything is deterministic: re-running the script rewrites the files byte for byte.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "trecbench" / "sample"
OUT = SAMPLE / "versions"
SEPARATOR = "\n\n"
MERGED = ("HB-REL-05", "HB-REL-06")
# (section, the sentence's old text, its new text): one sentence changed in each of three sections
EDITS = (
    ("HB-RB", "The target is to start the rollback within 15 minutes of the problem being detected.",
     "The target is to finish the rollback within 30 minutes of the problem being reported."),
    ("HB-ACC", "Access is valid for 2 hours; the security on-call can extend it once by another 2 hours.",
     "Access is valid for 1 hour; the security on-call can extend it twice by another hour."),
    ("HB-SEC", "Static third-party API keys are rotated every 90 days,",
     "Static third-party API keys are rotated every 60 days,"),
)
REMOVED = ("HB-VEN", "HB-ONB")
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"(])")


def section_of(docid: str) -> str:
    return docid.rsplit("-", 1)[0]


def read_corpus() -> list[dict]:
    with open(SAMPLE / "corpus.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def sources_of(pages: list[dict]) -> tuple[list[dict], list[dict]]:
    """The sections as source documents, and the pages with their spans in them (v1)."""
    sources: dict[str, dict] = {}
    v1 = []
    for page in pages:
        sid = section_of(page["id"])
        source = sources.setdefault(sid, {"id": sid, "title": page["title"].split(" / ")[0], "text": ""})
        if source["text"]:
            source["text"] += SEPARATOR
        start = len(source["text"])
        source["text"] += page["contents"]
        v1.append({**page, "source_id": sid, "start_char": start, "end_char": len(source["text"])})
    return list(sources.values()), v1


def split_point(text: str) -> tuple[int, int]:
    """(end of the first part, start of the second) at the sentence boundary nearest the middle."""
    cuts = [(m.start(), m.end()) for m in _BOUNDARY.finditer(text)]
    if not cuts:
        raise SystemExit(f"no sentence boundary in {text[:40]!r}")
    return min(cuts, key=lambda c: (abs(c[0] - len(text) / 2), c[0]))


def second_chunking(v1: list[dict], sources: dict[str, str]) -> list[dict]:
    """v2: every section's second page split in two, the MERGED pair made one passage."""
    out: list[dict] = []
    for p in v1:
        if p["id"].endswith("-02"):
            cut, resume = split_point(p["contents"])
            for suffix, a, b in (("a", p["start_char"], p["start_char"] + cut),
                                 ("b", p["start_char"] + resume, p["end_char"])):
                out.append(chunk(p, p["id"] + suffix, sources, a, b))
        elif p["id"] == MERGED[1]:
            first = out.pop()
            out.append(chunk(first, "+".join((MERGED[0], MERGED[1].rsplit("-", 1)[1])), sources,
                             first["start_char"], p["end_char"]))
        else:
            out.append(dict(p))
    return out


def chunk(like: dict, docid: str, sources: dict[str, str], start: int, end: int) -> dict:
    return {"id": docid, "title": like["title"], "contents": sources[like["source_id"]][start:end],
            "source_id": like["source_id"], "start_char": start, "end_char": end}


def third_version(v2: list[dict], sources: list[dict]) -> tuple[list[dict], list[dict]]:
    """v3: the EDITS made in the sources (the chunks around them moved), the REMOVED sections gone."""
    texts = {s["id"]: s["text"] for s in sources}
    edited: dict[str, tuple[int, int, int]] = {}  # section -> (where, old end, shift)
    for sid, old, new in EDITS:
        where = texts[sid].index(old)
        assert texts[sid].count(old) == 1, old
        texts[sid] = texts[sid][:where] + new + texts[sid][where + len(old):]
        edited[sid] = (where, where + len(old), len(new) - len(old))
    v3_sources = [{**s, "text": texts[s["id"]]} for s in sources if s["id"] not in REMOVED]
    out = []
    for p in v2:
        sid = p["source_id"]
        if sid in REMOVED:
            continue
        start, end, docid = p["start_char"], p["end_char"], p["id"]
        if sid in edited:
            where, old_end, shift = edited[sid]
            if start >= old_end:
                start, end = start + shift, end + shift
            elif end > where:  # the chunk holds the edited sentence
                end, docid = end + shift, docid + "-r3"
        out.append({"id": docid, "title": p["title"], "contents": texts[sid][start:end], "source_id": sid,
                    "start_char": start, "end_char": end})
    return v3_sources, out


def write_jsonl(path: Path, records: list[dict]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def main() -> None:
    pages = read_corpus()
    sources, v1 = sources_of(pages)
    texts = {s["id"]: s["text"] for s in sources}
    for p in v1:
        assert texts[p["source_id"]][p["start_char"]:p["end_char"]] == p["contents"], p["id"]
    v2 = second_chunking(v1, texts)
    v3_sources, v3 = third_version(v2, sources)
    OUT.mkdir(exist_ok=True)
    write_jsonl(OUT / "sources.jsonl", sources)
    write_jsonl(OUT / "v1.jsonl", v1)
    write_jsonl(OUT / "v2.jsonl", v2)
    write_jsonl(OUT / "sources.v3.jsonl", v3_sources)
    write_jsonl(OUT / "v3.jsonl", v3)
    print(f"{len(sources)} sources; v1 {len(v1)}, v2 {len(v2)}, v3 {len(v3)} passages; "
          f"v3 sources {len(v3_sources)}")


if __name__ == "__main__":
    main()
