"""`judge llm --audit` on TREC RAG 2024 NIST qrels (a few topics) with a scripted model: the listed pairs are checked.

The RAG corpus (MS MARCO v2.1 segments) is not shipped: each judged segment gets a stand-in text that
names it, which is all the scripted model reads.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import Counter


def flipped(qid: str, docid: str) -> bool:
    return int(hashlib.sha256(f"rag|{qid}|{docid}".encode()).hexdigest()[:8], 16) % 5 == 0


def model_grade(qid: str, docid: str, old: int) -> int:
    """Agrees with NIST except on about one pair in five, where it answers 3 - NIST's grade."""
    return 3 - old if flipped(qid, docid) else old


def test_auditing_nist_rag24_qrels_lists_the_pairs_the_model_disagrees_with(shared, tmp_path, cli_run, llm_server):
    rows = [line.split() for line in (shared / "rag" / "qrels.rag24.test.txt").read_text().splitlines() if line.strip()]
    sizes = Counter(r[0] for r in rows)
    topics = sorted(sizes, key=lambda q: (sizes[q], q))[:3]  # the three smallest topics
    chosen = [r for r in rows if r[0] in topics]
    assert len(chosen) == sum(sizes[q] for q in topics) and any("#" in r[2] for r in chosen)
    old = {(q, d): int(g) for q, _, d, g in chosen}
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"id": d, "contents": f"segment {d} of the corpus"}) + "\n"
                                                   for d in sorted({d for _, d in old})))
    (tmp_path / "nist.txt").write_text("".join(" ".join(r) + "\n" for r in chosen))
    # a second import of the same pairs, newer: --reference chooses NIST's
    (tmp_path / "other.txt").write_text("".join(f"{q} 0 {d} 0\n" for q, d in old))
    ws = tmp_path / "bench"
    r = cli_run("init", ws, "--corpus", tmp_path / "corpus.jsonl", "--topics", shared / "rag" / "topics.rag24.test.txt")
    assert r.exit_code == 0, r.output
    for path, name in (("nist.txt", "nist"), ("other.txt", "other")):
        assert cli_run("qrels", "import", tmp_path / path, "-w", ws, "--judge", name).exit_code == 0
    questions = dict(line.split("\t", 1) for line in (shared / "rag" / "topics.rag24.test.txt").read_text().splitlines())
    by_text = {text.strip(): qid for qid, text in questions.items()}

    def reply(body: dict) -> str:
        user = body["messages"][-1]["content"]
        qid = by_text[re.search(r"^Question: (.*)$", user, re.M).group(1).strip()]
        return json.dumps([{"passage": f"P{label}", "grade": model_grade(qid, docid, old[(qid, docid)]), "reason": "-"}
                           for label, docid in re.findall(r"\[P(\d+)\] segment (\S+) of the corpus", user)])

    llm_server.script(reply)
    r = cli_run("judge", "llm", "-w", ws, "--model", "openai/gpt-4o-mini", "--api-base", llm_server.base_url,
                "--api-key", "test", "--quiet", "--batch", "10", "--audit", "--reference", "nist", "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    expected = sorted(((q, d, g, model_grade(q, d, g)) for (q, d), g in old.items() if abs(model_grade(q, d, g) - g) >= 2),
                      key=lambda x: (-abs(x[3] - x[2]), x[0], x[1]))
    assert len(expected) >= 5
    assert [(p["query_id"], p["doc_id"], p["old"], p["model"]) for p in out["disagreements"]] == expected
    assert out["reference"] == "nist" and out["pairs"] == len(old) and out["left_out"] == 0
    same = sum(model_grade(q, d, g) == g for (q, d), g in old.items())
    assert out["agreement"]["exact"] == same / len(old)
    assert out["judging"]["judged"] == len(old)
    r = cli_run("judge", "audit", "-w", ws)
    assert r.exit_code == 0 and f"disagreements by 2 or more grades: {len(expected)}" in r.stdout
    assert f"queue: pool 'audit', {len(expected)} pairs, 0 re-judged by people" in r.stdout
    # the grades NIST gave come back unchanged in an export until people re-judge: the audit adds no grade
    r = cli_run("qrels", "export", "-w", ws, "-o", tmp_path / "q.txt", "--judge", "nist")
    assert r.exit_code == 0
    exported = {(a, c): int(g) for a, _, c, g in (x.split() for x in (tmp_path / "q.txt").read_text().splitlines())}
    assert exported == old


def test_old_grades_on_a_longer_scale_than_the_prompts_are_counted_in_a_note(shared, tmp_path, cli_run, llm_server):
    """TREC RAG 2025's NIST qrels grade 0-4; the prompt's scale is 0-3: the audit says how many old grades lie above."""
    rows = [line.split() for line in (shared / "rag" / "qrels.rag25.test.txt").read_text().splitlines() if line.strip()]
    with_four = Counter(r[0] for r in rows if r[3] == "4")
    sizes = Counter(r[0] for r in rows)
    qid = min(with_four, key=lambda q: (sizes[q], q))  # the smallest topic with a grade 4
    chosen = [r for r in rows if r[0] == qid]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"id": r[2], "contents": f"segment {r[2]} of the corpus"})
                                                   + "\n" for r in chosen))
    (tmp_path / "nist.txt").write_text("".join(" ".join(r) + "\n" for r in chosen))
    ws = tmp_path / "bench"
    r = cli_run("init", ws, "--corpus", tmp_path / "corpus.jsonl", "--topics", shared / "rag" / "topics.rag25.test.jsonl")
    assert r.exit_code == 0, r.output
    assert cli_run("qrels", "import", tmp_path / "nist.txt", "-w", ws, "--judge", "nist").exit_code == 0
    llm_server.script(lambda body: json.dumps([{"passage": f"P{i}", "grade": 1, "reason": "-"} for i in
                                               re.findall(r"\[P(\d+)\] ", body["messages"][-1]["content"])]))
    r = cli_run("judge", "llm", "-w", ws, "--model", "openai/gpt-4o-mini", "--api-base", llm_server.base_url,
                "--api-key", "test", "--quiet", "--batch", "10", "--audit", "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    fours = with_four[qid]
    note = (f"{fours} old grade(s) are above the prompt's top grade 3: the reference uses a longer scale, so "
            "differences there are partly the scales'")
    assert note in out["notes"] and out["pairs"] == len(chosen)
    far = sorted(((r[2], int(r[3])) for r in chosen if abs(int(r[3]) - 1) >= 2), key=lambda x: (-abs(x[1] - 1), x[0]))
    assert [(p["doc_id"], p["old"]) for p in out["disagreements"]] == far  # grade 4 vs 1 first, then 3 vs 1
    listed = json.loads(cli_run("judge", "audit", "-w", ws, "--format", "json").stdout)
    assert note in listed["notes"]
