"""Rules that sit on a boundary: each test pins the side of the boundary a value exactly on it falls."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from trecbench.answers import validate_answers
from trecbench.evaluation.answers.assign import PARTIAL, SUPPORT
from trecbench.evaluation.answers.assign.citation import CitationAssigner
from trecbench.pooling import build_pool
from trecbench.pooling.dedup import jaccard, normalise, shingles
from trecbench.pooling.loo import SAFE_MAX_DROP, SAFE_TAU, _summary
from trecbench.judging.llm import vote
from trecbench.qrels.select import propagate


def frame(topic: str, docids: list[str], runid: str) -> pd.DataFrame:
    out = pd.DataFrame({"query_id": topic, "doc_id": docids,
                        "score": [float(len(docids) - i) for i in range(len(docids))]})
    out.attrs["runid"] = runid
    return out


def test_a_vote_tie_goes_to_the_lower_grade():
    assert vote([2, 1]) == 1
    assert vote([3, 3, 0, 0, 2]) == 0
    assert vote([2, 2, 1]) == 2


def test_leave_one_out_is_not_safe_below_a_tau_of_0_9():
    # six runs, one adjacent pair swapped: Kendall tau = 1 - 2 * 1 / 15 = 0.867, between 0.8 and 0.9
    full = [0.60, 0.50, 0.40, 0.30, 0.20, 0.10]
    left = [0.60, 0.50, 0.30, 0.40, 0.20, 0.10]
    part = pd.DataFrame({"run": list("abcdef"), "full": full, "left_out": left,
                         "relative_drop": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]})
    row = _summary("AP", part)
    assert row["kendall_tau"] == pytest.approx(1 - 2 / 15)
    assert SAFE_TAU == 0.9 and row["safe"] is False
    unchanged = _summary("AP", part.assign(left_out=full))
    assert unchanged["kendall_tau"] == pytest.approx(1.0) and unchanged["safe"] is True


def test_leave_one_out_is_not_safe_at_a_drop_of_exactly_the_limit():
    part = pd.DataFrame({"run": ["a", "b"], "full": [0.5, 0.4], "left_out": [0.5, 0.4 * (1 - SAFE_MAX_DROP)],
                         "relative_drop": [0.0, SAFE_MAX_DROP]})
    assert _summary("AP", part)["safe"] is False
    assert _summary("AP", part.assign(relative_drop=[0.0, SAFE_MAX_DROP / 2]))["safe"] is True


def test_an_answer_of_exactly_400_words_is_within_the_limit(tmp_path: Path):
    def record(words: int) -> str:
        text = " ".join(["word"] * words)
        return json.dumps({"run_id": "r", "topic_id": "q1", "topic": "t", "references": ["d0"],
                           "response_length": words, "answer": [{"text": text, "citations": [0]}]})

    at = tmp_path / "at.jsonl"
    at.write_text(record(400) + "\n")
    over = tmp_path / "over.jsonl"
    over.write_text(record(401) + "\n")
    assert validate_answers(at) == []
    assert [p.message for p in validate_answers(over)] == [
        "answer to topic 'q1' has 401 words, more than the limit of 400"]


def _citing_answer(text: str):
    sentence = SimpleNamespace(text=text, citations=("d1",))
    return SimpleNamespace(run_id="r", sentences=[sentence], cited=("d1",))


def test_a_sentence_with_exactly_the_threshold_share_of_words_supports_the_nugget():
    nugget = SimpleNamespace(id="n1", text="zebra quartz violin mango turbine", importance="vital",
                             support=(("d1",),))
    topic = SimpleNamespace(qid="q1", nuggets=[nugget])
    at = CitationAssigner(threshold=0.6).assign_one(_citing_answer("zebra quartz violin"), topic)
    assert at.assignments[0].label == SUPPORT  # 3 of 5 content words = 0.6
    below = CitationAssigner(threshold=0.6).assign_one(_citing_answer("zebra quartz"), topic)
    assert below.assignments[0].label == PARTIAL


def test_near_duplicates_with_exactly_the_threshold_similarity_are_grouped(tmp_path: Path):
    base = " ".join(f"w{i}" for i in range(60))
    near = base.rsplit(" ", 1)[0] + " other"
    vocab: dict[str, int] = {}
    sa, sb = (shingles([vocab.setdefault(w, len(vocab)) for w in normalise(t).split()]) for t in (base, near))
    exact = jaccard(sa, sb)
    assert 0.9 < exact < 1.0
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "contents": v}) + "\n" for k, v in {"a": base, "b": near}.items()))
    pool = build_pool([frame("q", ["a", "b"], "r")], corpus=corpus, dedup="near", threshold=exact)
    assert dict(zip(pool.candidates["doc_id"], pool.candidates["group"])) == {"a": "a", "b": "a"}
    apart = build_pool([frame("q", ["a", "b"], "r")], corpus=corpus, dedup="near", threshold=float(np.nextafter(exact, 1)))
    assert dict(zip(apart.candidates["doc_id"], apart.candidates["group"])) == {"a": "a", "b": "b"}


def test_a_group_lends_its_representatives_grade_when_several_members_were_judged():
    pool = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "group": ["a", "a", "a"],
                         "representative": [True, False, False]})
    grades = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["b", "a"], "relevance": [0, 2], "judge": ["j", "j"]})
    qrels, added = propagate(grades, pool)
    lent = qrels[qrels["doc_id"] == "c"]
    assert added == 1 and lent["relevance"].tolist() == [2] and lent["propagated_from"].tolist() == ["a"]


def _first_of(a_ranks: tuple[int, int], b_ranks: tuple[int, int]) -> str:
    """Which of A and B an RRF pool of two runs (A and B at the given 1-based ranks) judges first."""
    runs = {}
    for n, (ra, rb) in enumerate(zip(a_ranks, b_ranks)):
        docs = [f"x{n}.{i}" for i in range(max(ra, rb))]
        docs[ra - 1], docs[rb - 1] = "A", "B"
        runs[f"run{n}"] = frame("q", docs, f"run{n}")
    order = build_pool(runs, strategy="rrf", depth=40).candidates.sort_values("priority")["doc_id"].tolist()
    return "A" if order.index("A") < order.index("B") else "B"


def test_rrf_ranks_start_at_one():
    # k = 60: 1/61 + 1/73 > 1/65 + 1/68 (by 1.6e-6), an order ranks counted from 2 would reverse;
    # 1/63 + 1/87 > 1/62 + 1/89 (by 2.3e-6), an order ranks counted from 0 would reverse
    assert _first_of((1, 13), (5, 8)) == "A"
    assert _first_of((3, 27), (2, 29)) == "A"
