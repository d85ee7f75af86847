"""The `trecbench pool` commands: build, stats, estimate, loo; bad input reported, never a traceback."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from trecbench.pooling import read_pool


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.fixture
def bench(tmp_path):
    """Two small runs, a corpus, topics and qrels."""
    a = write(tmp_path, "a.txt", "1 Q0 d1 1 3 A\n1 Q0 d2 2 2 A\n1 Q0 d3 3 1 A\n2 Q0 d4 1 5 A\n")
    b = write(tmp_path, "b.txt", "1 Q0 d2 1 9 B\n1 Q0 d5 2 8 B\n2 Q0 d4 1 5 B\n2 Q0 d6 2 1 B\n")
    corpus = write(tmp_path, "corpus.jsonl", "".join(
        json.dumps({"id": f"d{i}", "contents": f"passage number {i} about pooling " * i}) + "\n" for i in range(1, 7)))
    topics = write(tmp_path, "topics.tsv", "1\twhat is pooling\n2\thow are test collections built\n")
    qrels = write(tmp_path, "qrels.txt", "1 0 d1 1\n1 0 d2 0\n2 0 d4 2\n")
    return {"a": a, "b": b, "corpus": corpus, "topics": topics, "qrels": qrels, "dir": tmp_path}


def test_pool_runs_is_short_for_pool_build(bench, cli_run):
    one = cli_run("pool", bench["a"], bench["b"], "--depth", "2", "-o", bench["dir"] / "one.tsv")
    two = cli_run("pool", "build", bench["a"], bench["b"], "-k", "2", "-o", bench["dir"] / "two.tsv")
    assert one.exit_code == two.exit_code == 0, one.output
    assert (bench["dir"] / "one.tsv").read_text() == (bench["dir"] / "two.tsv").read_text()
    assert "pool: 5 candidates over 2 topics from 2 runs (depth, depth 2)" in one.stderr
    pool = read_pool(bench["dir"] / "one.tsv")
    # d2 and d1 are both someone's first; d2 is in two runs, so it comes first
    assert pool.candidates[["query_id", "doc_id", "priority", "runs", "ranks"]].values.tolist() == [
        ["1", "d2", 1, "B;A", "1;2"], ["1", "d1", 2, "A", "1"], ["1", "d5", 3, "B", "2"],
        ["2", "d4", 1, "A;B", "1;1"], ["2", "d6", 2, "B", "2"]]


def test_pool_writes_to_stdout_by_default(bench, cli_run):
    result = cli_run("pool", bench["a"], "--strategy", "rrf", "--budget", "1")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("#trecbench-pool/1 ") and '"strategy": "rrf"' in lines[0]
    assert [line.split("\t")[:3] for line in lines[2:]] == [["1", "d1", "1"], ["2", "d4", "1"]]


def test_run_topics_absent_from_the_topic_file_are_reported(bench, cli_run):
    topics = write(bench["dir"], "one-topic.tsv", "1\twhat is pooling\n")
    result = cli_run("pool", bench["a"], "--topics", topics, "-o", bench["dir"] / "p.tsv")
    assert result.exit_code == 0
    assert f"{bench['a']}: 1 topic(s) not in {topics}, not pooled: 2" in result.stderr


def test_bad_run_file_exits_2_with_path_and_line(bench, cli_run):
    bad = write(bench["dir"], "bad.txt", "1 Q0 d1 1 3 A\n1 Q0 d1 2 2 A\n")
    result = cli_run("pool", bench["a"], bad)
    assert result.exit_code == 2
    assert f"{bad}:2: docid 'd1' appears twice in topic '1' (first on line 1)" in result.stderr
    assert "Traceback" not in result.output


def test_missing_run_file_exits_2(bench, cli_run):
    result = cli_run("pool", bench["dir"] / "nope.txt")
    assert result.exit_code == 2 and "nope.txt: cannot read" in result.stderr


def test_stats_counts_per_topic_per_run_and_overlap(bench, cli_run):
    cli_run("pool", bench["a"], bench["b"], "-o", bench["dir"] / "pool.tsv")
    result = cli_run("pool", "stats", bench["dir"] / "pool.tsv", "--qrels", bench["qrels"], "--by", "run",
                     "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {r["run"]: r for r in json.loads(result.stdout)}
    assert rows["A"] == {"run": "A", "topics": 2, "contributed": 4, "unique": 2, "judged": 3, "unjudged": 1,
                         "relevant": 2, "unique_relevant": 1}
    assert rows["B"]["unique"] == 2 and rows["all"]["contributed"] == 6
    assert result.stderr == "relevant: grade >= 1\n"  # what the relevant columns count, named
    table = cli_run("pool", "stats", bench["dir"] / "pool.tsv")
    assert table.stderr == ""  # without qrels nothing is counted as relevant
    assert "per topic" in table.stdout and "per run" in table.stdout and "overlap" in table.stdout
    overlap = cli_run("pool", "stats", bench["dir"] / "pool.tsv", "--by", "overlap", "--format", "csv")
    assert overlap.stdout.splitlines() == ["run,A,B", "A,4,2", "B,2,4"]


def test_estimate_counts_calls_tokens_and_cost_from_litellms_map(bench, cli_run):
    cli_run("pool", bench["a"], bench["b"], "-o", bench["dir"] / "pool.tsv")
    result = cli_run("pool", "estimate", bench["dir"] / "pool.tsv", "--model", "gpt-4o-mini", "--batch", "2",
                     "--corpus", bench["corpus"], "--topics", bench["topics"], "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {r["query_id"]: r for r in json.loads(result.stdout)}
    assert rows["1"]["judgments"] == 4 and rows["1"]["calls"] == 2
    assert rows["2"]["judgments"] == 2 and rows["2"]["calls"] == 1
    assert rows["all"]["judgments"] == 6 and rows["all"]["calls"] == 3
    import litellm

    from trecbench.judging.estimate import typical_reply

    # three calls of two passages, each reply counted from the judge's reply format
    assert rows["all"]["output_tokens"] == 3 * litellm.token_counter(model="gpt-4o-mini", text=typical_reply(2))
    info = litellm.model_cost["gpt-4o-mini"]
    cost = (rows["all"]["input_tokens"] * info["input_cost_per_token"]
            + rows["all"]["output_tokens"] * info["output_cost_per_token"])
    assert math.isclose(rows["all"]["cost_usd"], cost)
    assert "6 judgments in 3 calls" in result.stderr and "litellm cost map (gpt-4o-mini)" in result.stderr


def test_estimate_input_tokens_are_those_of_the_judges_own_messages(bench):
    from trecbench.corpus import open_corpus
    from trecbench.pooling import build_pool, estimate_cost
    from trecbench.judging.llm import passage_text
    from trecbench.judging.prompts import build_messages, load_prompt
    from trecbench.topics import read_topics
    import litellm

    pool = build_pool([bench["a"]], depth=1)  # one document per topic: d1 and d4
    one = estimate_cost(pool, bench["corpus"], bench["topics"], "gpt-4o-mini", batch=1)
    corpus, topics = open_corpus(bench["corpus"]), {t.qid: t for t in read_topics(bench["topics"])}
    messages = build_messages(load_prompt(None), topics["1"].text, [passage_text(corpus.get("d1"))])
    assert one.table.loc["1", "input_tokens"] == litellm.token_counter(model="gpt-4o-mini", messages=messages)


def test_unknown_model_explains_how_to_give_prices(bench, cli_run):
    cli_run("pool", bench["a"], "-o", bench["dir"] / "pool.tsv")
    args = ["pool", "estimate", bench["dir"] / "pool.tsv", "--corpus", bench["corpus"], "--topics", bench["topics"]]
    result = cli_run(*args, "--model", "my-private-model")
    assert result.exit_code == 2
    assert "'my-private-model' has no price in litellm's cost map" in result.output
    assert "--input-price and --output-price" in result.output
    priced = cli_run(*args, "--model", "my-private-model", "--input-price", "1", "--output-price", "2",
                     "--format", "csv")
    assert priced.exit_code == 0, priced.output
    total = priced.stdout.splitlines()[-1].split(",")
    assert total[0] == "all" and float(total[-1]) == pytest.approx((int(total[4]) * 1 + int(total[5]) * 2) / 1e6)


def test_estimate_reports_documents_missing_from_the_corpus(bench, cli_run):
    run = write(bench["dir"], "ghost.txt", "1 Q0 d1 1 3 G\n1 Q0 ghost 2 2 G\n3 Q0 d2 1 1 G\n")
    cli_run("pool", run, "-o", bench["dir"] / "pool.tsv")
    result = cli_run("pool", "estimate", bench["dir"] / "pool.tsv", "--model", "gpt-4o-mini", "-c", bench["corpus"],
                     "-t", bench["topics"])
    assert result.exit_code == 0, result.output
    assert f"{bench['corpus']}: 1 pooled docid(s) not in the corpus, not counted: ghost" in result.stderr
    assert f"{bench['topics']}: 1 pooled topic(s) not in the topics, not estimated: 3" in result.stderr


def test_loo_reports_drops_rank_changes_and_a_verdict_on_dl19(shared, cli_run):
    runs = sorted((shared / "real" / "rank_llm").glob("*dl19*"))
    qrels = shared / "real" / "anserini-tools" / "qrels.dl19-passage.txt"
    result = cli_run("pool", "loo", "--qrels", qrels, *runs, "-m", "nDCG@10", "-m", "R@100", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {(r["run"], r["measure"]): r for r in json.loads(result.stdout)}
    bm25 = rows["BM25.trec_results_dl19", "R@100"]
    assert bm25["full"] == pytest.approx(0.4531, abs=1e-4) and bm25["left_out"] < bm25["full"]
    assert bm25["unique"] == 2448 and bm25["unique_relevant"] == 253
    assert "Kendall tau" in result.stderr and "verdict: NOT safe to reuse" in result.stderr


def test_loo_scores_match_evaluate_with_the_runs_own_documents_removed(tmp_path):
    from trecbench import evaluate
    from trecbench.pooling import leave_one_out

    a = write(tmp_path, "a.txt", "1 Q0 x 1 3 A\n1 Q0 s 2 2 A\n")
    b = write(tmp_path, "b.txt", "1 Q0 s 1 3 B\n1 Q0 y 2 2 B\n")
    qrels = write(tmp_path, "q.txt", "1 0 x 1\n1 0 s 1\n1 0 y 1\n")
    result = leave_one_out(qrels, [a, b], ["P@2"], depth=10)
    row = result.runs.set_index("run").loc["A"]
    reduced = write(tmp_path, "r.txt", "1 0 s 1\n1 0 y 1\n")
    assert row["full"] == 1.0 and row["left_out"] == evaluate(reduced, a, ["P@2"]).iloc[0, 0] == 0.5
    assert row["relative_drop"] == 0.5 and not result.safe


def test_loo_needs_two_runs(bench, cli_run):
    result = cli_run("pool", "loo", "--qrels", bench["qrels"], bench["a"])
    assert result.exit_code == 2 and "at least two RUN files" in result.output
    assert cli_run("pool", "loo", bench["a"], bench["b"]).exit_code == 2  # no qrels, no workspace


def test_loo_on_a_stored_pool_uses_its_runs_and_depth(tmp_path, cli_run):
    # at depth 1 each run contributes its first document alone; at depth 100 both runs hold both
    a = write(tmp_path, "a.txt", "1 Q0 x 1 3 A\n1 Q0 y 2 2 A\n")
    b = write(tmp_path, "b.txt", "1 Q0 y 1 3 B\n1 Q0 x 2 2 B\n")
    topics = write(tmp_path, "topics.tsv", "1\tq\n")
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--topics", topics).exit_code == 0
    assert cli_run("pool", a, b, "--depth", "1", "-w", bench, "--name", "d1").exit_code == 0
    write(tmp_path, "judged.txt", "1 0 x 1\n1 0 y 0\n")
    assert cli_run("qrels", "import", tmp_path / "judged.txt", "-w", bench, "--judge", "nist").exit_code == 0
    result = cli_run("pool", "loo", "-w", bench, "-m", "P@1", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {r["run"]: r for r in json.loads(result.stdout)}
    assert (rows["A"]["unique"], rows["B"]["unique"]) == (1, 1)
    assert rows["A"]["full"] == 1.0 and rows["A"]["left_out"] == 0.0  # x was A's own document at depth 1
    assert "is not the depth" not in result.stderr
    result = cli_run("pool", "loo", "-w", bench, "--pool", "d1", "-m", "P@1", "--depth", "100", "--format", "json")
    assert result.exit_code == 0, result.output
    assert f"{bench}: depth 100 is not the depth of pool 'd1' (1): unique documents are counted at 100" in result.stderr
    assert {r["unique"] for r in json.loads(result.stdout)} == {0}
    assert cli_run("pool", "loo", "-w", bench, a).exit_code == 2  # the pool's runs, not others


def test_loo_on_a_workspace_without_a_pool_says_so(tmp_path, cli_run):
    topics = write(tmp_path, "topics.tsv", "1\tq\n")
    assert cli_run("init", tmp_path / "bench", "--topics", topics).exit_code == 0
    result = cli_run("pool", "loo", "-w", tmp_path / "bench")
    assert result.exit_code == 2 and "no pool is stored" in result.output


@pytest.fixture
def worst_first():
    """A strategy registered from Python (worst rank first, with a parameter), and the CLI reloaded to see it."""
    import importlib
    from dataclasses import dataclass

    import numpy as np

    import trecbench.cli.pool
    from trecbench.pooling.strategies import STRATEGIES, register
    from trecbench.pooling.strategies.base import StaticStrategy

    @register
    @dataclass
    class WorstFirst(StaticStrategy):
        """Documents by their summed rank, times `weight`: the worst first."""

        weight: float = 1.0
        name = "worstfirst"
        summary = "worst rank first"
        param_help = {"weight": "Weight of each rank."}

        def fused(self, rank, row_candidate, n):
            return np.bincount(row_candidate, weights=rank * self.weight, minlength=n)

    importlib.reload(trecbench.cli.pool)
    yield
    del STRATEGIES["worstfirst"]
    importlib.reload(trecbench.cli.pool)


def test_a_strategy_registered_from_python_is_a_choice_with_its_parameters(bench, cli_run, worst_first):
    help_text = " ".join(cli_run("pool", "build", "--help").stdout.split())
    assert "worstfirst: worst rank first" in help_text and "--worstfirst-weight" in help_text
    result = cli_run("pool", bench["a"], "-s", "worstfirst", "--worstfirst-weight", "2")
    assert result.exit_code == 0, result.output
    assert '"params": {"weight": 2.0}' in result.stdout.splitlines()[0]
    order = [line.split("\t")[1] for line in result.stdout.splitlines()[2:] if line.startswith("1\t")]
    assert order == ["d3", "d2", "d1"]
    from trecbench.pooling.workspace import is_adaptive

    assert not is_adaptive("worstfirst") and is_adaptive("mtf") and is_adaptive("maxmean")
