"""Prompt tokens counted once per distinct part (PromptCounter) are litellm.token_counter's numbers, exactly."""
from __future__ import annotations

from paths import ROOT

import json
from functools import lru_cache

import pytest

from trecbench.llm.cost import PromptCounter

SAMPLE = ROOT / "src" / "trecbench" / "sample"
MODELS = ["gpt-4o-mini", "openai/gpt-4o-mini", "gpt-3.5-turbo", "anthropic/claude-sonnet-4-5", "hosted_vllm/llama-3-8b"]


@lru_cache(maxsize=None)
def sample_conversations(batch: int) -> tuple[list[dict], ...]:
    """The judge's messages for every candidate of the sample's runs (depth 8), `batch` passages a call."""
    from trecbench.corpus import open_corpus
    from trecbench.pooling import build_pool
    from trecbench.judging.llm import passage_text, plan_tasks
    from trecbench.judging.prompts import Example, build_messages, load_prompt
    from trecbench.topics import read_topics

    pool = build_pool(sorted((SAMPLE / "runs").glob("*.txt")), depth=8)
    corpus, topics = open_corpus(SAMPLE / "corpus.jsonl", cache_index=False), read_topics(SAMPLE / "topics.tsv")
    by_id = {t.qid: t for t in topics}
    tasks, _ = plan_tasks(pool.to_judge(), set(), batch)
    shots = [Example("another question", passage_text(corpus.get("HB-REL-01")), 2)]
    out = []
    for k, task in enumerate(tasks):
        texts = [passage_text(corpus.get(d)) for d in task.docids]
        out.append(build_messages(load_prompt(None), by_id[task.qid].text, texts,
                                  narrative="what matters" if k % 3 == 0 else None, examples=shots if k % 2 else ()))
    return tuple(out)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("batch", [1, 10])
def test_counts_are_litellms_on_every_call_of_the_sample(model, batch):
    from trecbench.judging.estimate import _litellm, _offline_tokenizers

    litellm = _litellm()
    conversations = sample_conversations(batch)
    assert len(conversations) > 20 and max(len(c[1]["content"]) for c in conversations) > 1024  # counted in chunks
    with _offline_tokenizers():
        counter = PromptCounter(model, litellm)
        counted = [counter(c) for c in conversations]
        expected = [litellm.token_counter(model=model, messages=c) for c in conversations]
    assert counted == expected
    assert counter._fixed and None not in counter._fixed.values()  # the fast path was taken, not litellm's


def test_litellm_is_asked_once_per_shape_and_each_text_is_tokenized_once(monkeypatch):
    from trecbench.judging.estimate import _litellm

    litellm = _litellm()
    conversations = sample_conversations(5)
    counter = PromptCounter("gpt-4o-mini", litellm)
    seen: list[str] = []
    count = counter.text
    monkeypatch.setattr(counter, "text", lambda text: seen.append(text) or count(text))
    whole = []
    monkeypatch.setattr(litellm, "token_counter", lambda **kw: whole.append(kw) or 0)
    for c in conversations[1:]:
        counter._fixed[tuple(tuple(sorted((k, v) for k, v in m.items() if k != "content")) for m in c)] = 7
        counter(c)
    assert whole == []  # once its shape is known, a conversation is never handed to litellm whole
    instructions = conversations[1][0]["content"]
    assert seen.count(instructions) == 1  # the judge's instructions: once for every call
    assert len(seen) == 1 + len(conversations) - 1  # and each call's own text once


def test_a_shape_litellm_counts_otherwise_is_left_to_litellm():
    from trecbench.judging.estimate import _litellm

    litellm = _litellm()
    conversations = sample_conversations(10)
    counter = PromptCounter("gpt-4o-mini", litellm)
    count = counter.text
    counter.text = lambda text: count(text) + 1  # a count function that is not litellm's
    assert [counter(c) for c in conversations] == [litellm.token_counter(model="gpt-4o-mini", messages=c)
                                                    for c in conversations]
    assert set(counter._fixed.values()) == {None}


def test_dry_run_and_pool_estimate_print_litellms_totals(tmp_path, cli_run):
    from trecbench.judging.estimate import _litellm

    runs = sorted((SAMPLE / "runs").glob("*.txt"))
    pool = tmp_path / "pool.tsv"
    assert cli_run("pool", *runs, "--depth", "8", "-o", pool).exit_code == 0
    est = cli_run("pool", "estimate", pool, "--model", "gpt-4o-mini", "--batch", "10", "--corpus",
                  SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv", "--format", "json")
    assert est.exit_code == 0, est.output
    litellm = _litellm()
    from trecbench.corpus import open_corpus
    from trecbench.pooling import build_pool
    from trecbench.judging.llm import passage_text, plan_tasks
    from trecbench.judging.prompts import build_messages, load_prompt
    from trecbench.topics import read_topics

    corpus, topics = open_corpus(SAMPLE / "corpus.jsonl"), {t.qid: t for t in read_topics(SAMPLE / "topics.tsv")}
    tasks, _ = plan_tasks(build_pool(runs, depth=8).to_judge(), set(), 10)
    total = sum(litellm.token_counter(model="gpt-4o-mini", messages=build_messages(
        load_prompt(None), topics[t.qid].text, [passage_text(corpus.get(d)) for d in t.docids])) for t in tasks)
    rows = {r["query_id"]: r for r in json.loads(est.stdout)}
    assert rows["all"]["input_tokens"] == total and rows["all"]["calls"] == len(tasks) > 20
    ws = tmp_path / "bench"
    assert cli_run("init", ws, "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv").exit_code == 0
    assert cli_run("pool", *runs, "--depth", "8", "-w", ws, "-o", tmp_path / "p2.tsv").exit_code == 0
    dry = cli_run("judge", "llm", "-w", ws, "--model", "gpt-4o-mini", "--batch", "10", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert f"{len(tasks)} calls to the model" in dry.output and f"{total} input tokens" in dry.output


def test_the_total_a_dry_run_prints_is_the_estimates_all_row_to_the_bit():
    import math

    from trecbench.corpus import open_corpus
    from trecbench.judging.estimate import Estimate, estimate_cost, estimate_tasks
    from trecbench.judging.llm import plan_tasks
    from trecbench.pooling import build_pool
    from trecbench.topics import read_topics

    pool = build_pool(sorted((SAMPLE / "runs").glob("*.txt")), depth=8)
    corpus, topics = open_corpus(SAMPLE / "corpus.jsonl", cache_index=False), read_topics(SAMPLE / "topics.tsv")
    for model, batch, prices in [("openai/gpt-4o-mini", 1, (None, None)), ("anthropic/claude-sonnet-4-5", 5, (None, None)),
                                 ("my-model", 3, (0.123, 0.789))]:
        estimate = estimate_cost(pool, corpus, topics, model, batch=batch, input_price=prices[0], output_price=prices[1])
        row = estimate.table.loc["all"]
        assert estimate.total == {column: row[column] for column in estimate.table.columns}
        assert estimate.total["cost_usd"].hex() == float(row["cost_usd"]).hex() and estimate.total["cost_usd"] > 0
    tasks, _ = plan_tasks(pool.to_judge(), set(), 2)
    unpriced = estimate_tasks(tasks, corpus, {t.qid: t for t in topics}, "my-model", batch=2)
    assert unpriced.total["input_tokens"] == unpriced.table.loc["all", "input_tokens"] > 0
    assert math.isnan(unpriced.total["cost_usd"]) and math.isnan(unpriced.table.loc["all", "cost_usd"])
    nothing = Estimate(None, "my-model", 1, None)
    assert nothing.total is None and nothing.table.empty and list(nothing.table.columns)[0] == "judgments"
