"""Two chunkings of the same sources, for the tests that score on another chunking: tiny hand-made ones and
the bundled sample's pages split in two."""
from __future__ import annotations

import json
from pathlib import Path

from paths import SAMPLE

S1 = "Code review is required. Tests must pass. The rollback plan is ready."
S2 = "Ask the on-call lead. Page the owner."


def write_lines(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def passage(docid: str, source: str, start: int, end: int) -> dict:
    text = {"S1": S1, "S2": S2}[source]
    return {"id": docid, "contents": text[start:end], "source_id": source, "start_char": start, "end_char": end}


def two_chunkings(tmp_path: Path) -> dict[str, Path]:
    """The sources, chunking A (a1 a2 a3 | b1 b2), chunking B (c1 = a1+a2, c2 + c3 = a3 | d1 = b1+b2), evidence on
    A, a TREC run and staged contexts on B, qrels on A. Word counts: c1 7, c2 3, c3 2, d1 7."""
    files = {
        "sources": write_lines(tmp_path / "sources.jsonl", [{"id": "S1", "text": S1}, {"id": "S2", "text": S2}]),
        "a": write_lines(tmp_path / "a.jsonl", [passage("a1", "S1", 0, 24), passage("a2", "S1", 25, 41),
                                           passage("a3", "S1", 42, 69), passage("b1", "S2", 0, 21),
                                           passage("b2", "S2", 22, 37)]),
        # c2 holds 18 of a3's 27 characters, c3 the other 9
        "b": write_lines(tmp_path / "b.jsonl", [passage("c1", "S1", 0, 42), passage("c2", "S1", 42, 60),
                                           passage("c3", "S1", 60, 69), passage("d1", "S2", 0, 37)]),
        "evidence": write_lines(tmp_path / "evidence.jsonl", [
            {"qid": "t1", "evidence": [{"id": "E1", "any_of": [["a1"], ["b1"]]}, {"id": "E2", "any_of": [["a2"]]},
                                       {"id": "E3", "any_of": [["a3", "b2"]]}]},
            {"qid": "t2", "evidence": [{"id": "E4", "any_of": [["a2"]]}]}]),
        "staged": write_lines(tmp_path / "staged.jsonl", [
            {"run_id": "staged", "qid": "t1", "stage": "initial", "docids": ["c1", "c2", "d1", "c3"]},
            {"qid": "t1", "stage": "final", "docids": ["c2", "d1", "c1", "c3"]},
            {"qid": "t2", "stage": "initial", "docids": ["c1"]}, {"qid": "t2", "stage": "final", "docids": ["c1"]}]),
    }
    files["run"] = tmp_path / "run.txt"
    files["run"].write_text("t1 Q0 c2 1 4 sys\nt1 Q0 d1 2 3 sys\nt1 Q0 c1 3 2 sys\nt1 Q0 c3 4 1 sys\n"
                            "t2 Q0 c1 1 1 sys\n")
    files["qrels"] = tmp_path / "qrels.txt"
    files["qrels"].write_text("t1 0 a1 2\nt1 0 a2 1\nt1 0 a3 2\nt1 0 b1 0\nt1 0 b2 1\n")
    return files


def sample_chunkings(tmp_path: Path) -> tuple[Path, Path, dict[str, tuple[str, str]]]:
    """The sample's corpus as chunking A (each passage the whole of its own source) and chunking B (each passage
    cut in two at the sentence boundary nearest its middle: `<id>#1`, `<id>#2`); returns both files and the halves."""
    a_lines, b_lines, halves = [], [], {}
    for line in (SAMPLE / "corpus.jsonl").read_text().splitlines():
        doc = json.loads(line)
        text = doc["contents"]
        cuts = [i + 2 for i in range(len(text) - 2) if text[i:i + 2] == ". "]
        cut = min(cuts, key=lambda i: abs(i - len(text) / 2)) if cuts else len(text) // 2
        a_lines.append({"id": doc["id"], "contents": text, "source_id": doc["id"], "start_char": 0,
                        "end_char": len(text)})
        first, second = f"{doc['id']}#1", f"{doc['id']}#2"
        b_lines.append({"id": first, "contents": text[:cut], "source_id": doc["id"], "start_char": 0,
                        "end_char": cut})
        b_lines.append({"id": second, "contents": text[cut:], "source_id": doc["id"], "start_char": cut,
                        "end_char": len(text)})
        halves[doc["id"]] = (first, second)
    return write_lines(tmp_path / "a.jsonl", a_lines), write_lines(tmp_path / "b.jsonl", b_lines), halves
