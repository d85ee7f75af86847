"""Helpers for the support assessment tests of the web app: a workspace on the sample's corpus and topics with
the sample answers' sentences registered, and the people's support rows it holds."""
from __future__ import annotations

import json
from pathlib import Path

from paths import SAMPLE

ANSWERS = ("good.jsonl", "partial.jsonl", "poor.jsonl")
# An answer of our own: a sentence citing a passage the corpus lacks (never offered) beside one the corpus
# has, and a sentence citing nothing (no pair at all).
ODD_ANSWER = {"run_id": "rag_odd", "topic_id": "T01", "references": ["HB-NOT-THERE", "HB-ACC-04"],
              "answer": [{"text": "Break-glass access lasts two hours.", "citations": [0, 1]},
                         {"text": "Ask around if unsure.", "citations": []}]}


def make_support_bench(root: Path, *, answers=ANSWERS, odd: bool = False, contradicts: bool = False) -> Path:
    """A workspace under `root` on the sample corpus and topics with the sentences of the sample `answers`
    registered (and ODD_ANSWER's when `odd`); `contradicts` adds `[support] contradicts = true`."""
    from trecbench.answers.support import answer_sentences
    from trecbench.answers.trec import read_answers
    from trecbench.store.workspace import Workspace

    ws = Workspace.init(root / "bench", corpus=str(SAMPLE / "corpus.jsonl"), topics=str(SAMPLE / "topics.tsv"),
                        name="supporttest")
    files = [SAMPLE / "answers" / name for name in answers]
    if odd:
        files.append(root / "odd.jsonl")
        files[-1].write_text(json.dumps(ODD_ANSWER) + "\n", encoding="utf-8")
    for path in files:
        ws.register_sentences(answer_sentences(read_answers(path)))
    ws.close()
    if contradicts:
        with open(root / "bench" / "trecbench.toml", "a", encoding="utf-8") as f:
            f.write("\n[support]\ncontradicts = true\n")
    return root / "bench"


def people_rows(bench: Path) -> list[tuple[str, str, str, int, str, str, str]]:
    """(judge, run, qid, sentence, docid, grade, text_hash) of every person's support judgment, in row order."""
    from trecbench.store.workspace import Workspace

    ws = Workspace(bench)
    try:
        return [(r.judge, r.run_id, r.qid, r.sentence, r.docid, r.grade or "", r.text_hash)
                for r in ws.support_rows(kind="human")]
    finally:
        ws.close()


def registered_hash(bench: Path, run: str, qid: str, sentence: int) -> str:
    from trecbench.store.workspace import Workspace

    ws = Workspace(bench)
    try:
        return next(s.text_hash for s in ws.support_sentences(run_id=run, qid=qid) if s.sentence == sentence)
    finally:
        ws.close()
