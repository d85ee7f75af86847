"""Pooling strategies: found by name, cited, adaptive judging loops, budgets, and replaying real qrels."""
from __future__ import annotations

import re

import pandas as pd
import pytest

from trecbench.pooling import STRATEGIES, build_pool, get_strategy
from trecbench.pooling.simulation import simulate


def run_frame(docids: str | list[str], runid: str, topic: str = "q") -> pd.DataFrame:
    docids = list(docids)
    frame = pd.DataFrame({"query_id": topic, "doc_id": docids, "score": [float(100 - i) for i in range(len(docids))]})
    frame.attrs["runid"] = runid
    return frame


def judge_all(strategy, runs: dict[str, str], relevant: set[str]) -> list[str]:
    """The order in which a strategy asks for one topic's documents, judged from `relevant`."""
    strategy.start({name: list(docs) for name, docs in runs.items()}, "q")
    order = []
    while (item := strategy.next()) is not None:
        order.append(item[1])
        strategy.record("q", item[1], item[1] in relevant)
    return order


def test_every_strategy_is_found_by_name_and_cites_its_paper():
    assert set(STRATEGIES) == {"depth", "rrf", "rbp", "mtf", "maxmean"}
    for name, cls in STRATEGIES.items():
        strategy = get_strategy(name)
        assert strategy.name == name
        assert re.search(r"(19|20)\d\d", cls.__doc__ or ""), f"{name}'s docstring cites no paper"
        assert cls.citation
    assert get_strategy("mtf").adaptive and get_strategy("maxmean").adaptive and not get_strategy("rrf").adaptive


def test_unknown_strategy_or_parameter_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown pooling strategy 'best'; choose one of depth, rrf, rbp, mtf, maxmean"):
        get_strategy("best")
    with pytest.raises(ValueError, match=r"strategy 'rrf' does not take p \(it takes k\)"):
        get_strategy("rrf", p=0.5)
    assert get_strategy("rbp", p=0.5).params() == {"p": 0.5}


def test_mtf_keeps_judging_a_run_while_it_finds_relevant_documents():
    runs = {"A": "a1 a2 a3".split(), "B": "b1 b2 b3".split()}
    # A: a1 relevant, a2 not -> B moves to the front; B's b1 not -> back to A (equal priority, given first)
    assert judge_all(get_strategy("mtf"), runs, {"a1", "b2"}) == ["a1", "a2", "b1", "a3", "b2", "b3"]


def test_mtf_skips_documents_already_judged_through_another_run():
    runs = {"A": ["x", "a"], "B": ["x", "b"]}
    # x (through A) is not relevant: B moves to the front and its own x is skipped, not judged twice
    assert judge_all(get_strategy("mtf"), runs, set()) == ["x", "b", "a"]


def test_maxmean_pulls_the_run_with_the_highest_mean_relevance():
    runs = {"A": "a1 a2 a3 a4".split(), "B": "b1 b2 b3 b4".split()}
    # after a1 (not relevant) A's mean is 1/3 < B's 1/2; b1 relevant: B's 2/3; B keeps going while its mean leads
    order = judge_all(get_strategy("maxmean"), runs, {"b1", "b2", "b3"})
    assert order[:5] == ["a1", "b1", "b2", "b3", "b4"]


def test_maxmean_counts_documents_judged_through_other_runs_for_every_run():
    runs = {"A": ["s", "a"], "B": ["b", "s"]}
    order = judge_all(get_strategy("maxmean"), runs, {"s"})
    assert order == ["s", "a", "b"]


def test_a_static_strategy_loop_follows_the_pool_priority():
    runs = {"A": run_frame("abc", "A"), "B": run_frame("cbx", "B")}
    pool = build_pool(runs, depth=3, strategy="rrf")
    assert [d for _, d in pool.session()] == pool.candidates["doc_id"].tolist()


def test_session_stops_each_topic_at_the_budget():
    runs = {"A": pd.concat([run_frame("abcd", "A", "1"), run_frame("efgh", "A", "2")])}
    runs["A"].attrs["runid"] = "A"
    session = build_pool(runs, strategy="mtf", budget=2).session()
    asked = []
    for qid, doc in session:
        asked.append((qid, doc))
        session.record(qid, doc, True)
    assert asked == [("1", "a"), ("1", "b"), ("2", "e"), ("2", "f")]
    assert session.spent == 4


def test_session_gives_duplicates_their_representatives_judgment_without_spending(tmp_path):
    import json

    text = "the same passage text about pooling and judging documents in test collections"
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "contents": text if d in "ab" else d}) + "\n" for d in "abcd"))
    pool = build_pool({"A": run_frame("ac", "A"), "B": run_frame("bd", "B")}, corpus=corpus, dedup="exact",
                      strategy="maxmean")
    session = pool.session()
    asked = []
    for qid, doc in session:
        asked.append(doc)
        session.record(qid, doc, doc == "a")
    assert "b" not in asked and sorted(asked) == ["a", "c", "d"]
    assert session.judgments[("q", "b")] is True and session.spent == 3


def test_adaptive_strategies_find_more_relevant_per_judgment_than_depth_order_on_dl19(shared):
    runs = sorted((shared / "real" / "rank_llm").glob("*dl19*"))
    qrels = shared / "real" / "anserini-tools" / "qrels.dl19-passage.txt"
    table, problems = simulate(qrels, runs, ["depth", "mtf", "maxmean"], depth=100, at=(0.1, 0.25, 0.5, 1.0))
    found = table.set_index(["strategy", "share"])["relevant"]
    for share in (0.1, 0.25, 0.5):
        assert found["mtf", share] > found["depth", share]
        assert found["maxmean", share] > found["depth", share]
    assert found["mtf", 1.0] == found["depth", 1.0] == found["maxmean", 1.0]  # the whole pool: the same documents
    assert table.set_index(["strategy", "share"])["judgments"]["depth", 1.0] == 9911
    assert any("not in the qrels; they count as not relevant" in str(p) for p in problems)


def test_simulate_cli_prints_relevant_found_at_shares_of_the_pool(shared, cli_run):
    runs = sorted((shared / "real" / "rank_llm").glob("*dl19*"))
    qrels = shared / "real" / "anserini-tools" / "qrels.dl19-passage.txt"
    result = cli_run("pool", "simulate", "--qrels", qrels, *runs, "--strategy", "mtf", "--strategy", "maxmean",
                     "--strategy", "depth")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["strategy", "10%", "25%", "50%", "100%"]
    assert [line.split()[0] for line in lines[1:]] == ["mtf", "maxmean", "depth"]
    assert "2365 / 9911" in lines[1]


def _first_of(a_ranks: tuple[int, int], b_ranks: tuple[int, int]) -> str:
    """Which of A and B an RRF pool of two runs (A and B at the given 1-based ranks) judges first."""
    runs = {}
    for n, (ra, rb) in enumerate(zip(a_ranks, b_ranks)):
        docs = [f"x{n}.{i}" for i in range(max(ra, rb))]
        docs[ra - 1], docs[rb - 1] = "A", "B"
        runs[f"run{n}"] = run_frame(docs, f"run{n}")
    order = build_pool(runs, strategy="rrf", depth=40).candidates.sort_values("priority")["doc_id"].tolist()
    return "A" if order.index("A") < order.index("B") else "B"


def test_rrf_ranks_start_at_one():
    # k = 60: 1/61 + 1/73 > 1/65 + 1/68 (by 1.6e-6), an order ranks counted from 2 would reverse;
    # 1/63 + 1/87 > 1/62 + 1/89 (by 2.3e-6), an order ranks counted from 0 would reverse
    assert _first_of((1, 13), (5, 8)) == "A"
    assert _first_of((3, 27), (2, 29)) == "A"
