"""What judging a pool by a model will cost, before anything is judged: judgments, calls, tokens, dollars.

Offline: tokens are counted with litellm's token counter (the model's tokenizer when litellm has it
locally, else tiktoken's) and prices come from litellm's bundled cost map
(`LITELLM_LOCAL_MODEL_COST_MAP=True`, set before litellm is imported, so nothing is fetched).

A model call judges up to `batch` passages of one topic. Its prompt is JUDGE_SYSTEM + JUDGE_PROMPT
with the topic filled in and the passages listed as `[i] title text`; its reply is one line per
passage, counted as OUTPUT_TOKENS_PER_JUDGMENT tokens each (a line such as `[12] 2`, plus slack for
the model's formatting).
"""
from __future__ import annotations

import contextlib
import math
import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import pandas as pd

from trecbench.errors import Problem

OUTPUT_TOKENS_PER_JUDGMENT = 8

JUDGE_SYSTEM = "You are a careful relevance assessor for a search evaluation. You judge passages, you do not answer."

JUDGE_PROMPT = """Query: {query}
{narrative}
Below are {count} passage(s), each marked with a number in brackets. For each passage, grade how well
it answers the query:
3 = perfectly relevant: the passage is dedicated to the query and contains the exact answer.
2 = highly relevant: the passage has some answer, but it may be unclear or hidden among other text.
1 = related: the passage seems related to the query but does not answer it.
0 = irrelevant: the passage has nothing to do with the query.
Judge each passage on its own; do not let its length or position sway you.

{passages}

Reply with one line per passage and nothing else, in the form: [number] grade"""


class UnknownModelError(ValueError):
    """The model has no price in litellm's cost map: give prices per million tokens instead."""


@dataclass(frozen=True)
class Prices:
    """Dollars per token, and where they come from."""

    input: float
    output: float
    source: str


@dataclass(frozen=True)
class Estimate:
    """Per topic (and the `all` row): judgments, calls, input/output tokens, cost in dollars."""

    table: pd.DataFrame
    model: str
    batch: int
    prices: Prices
    problems: list[Problem] = field(default_factory=list)


def _litellm() -> Any:
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before the import: no network at import
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def model_prices(model: str, input_price: float | None = None, output_price: float | None = None) -> Prices:
    """Dollars per token for `model`: the given prices (per million tokens) or litellm's cost map.

    Raises UnknownModelError when the model is not in the map and no prices are given.
    """
    if input_price is not None and output_price is not None:
        return Prices(input_price / 1e6, output_price / 1e6, "given")
    litellm = _litellm()
    info = None
    try:
        info = litellm.get_model_info(model)
    except Exception:  # litellm raises several types for unmapped models
        info = None
    # get_model_info answers for some names that are not in the map (with zero prices): only trust mapped keys
    if not info or info.get("key") not in litellm.model_cost or info.get("input_cost_per_token") is None:
        raise UnknownModelError(
            f"model {model!r} has no price in litellm's cost map (litellm {_version(litellm)}); give prices in dollars "
            f"per million tokens with --input-price and --output-price (e.g. --input-price 0.15 --output-price 0.60), "
            f"or use a model name the map knows, such as gpt-4o-mini or anthropic/claude-sonnet-4-5")
    cin = float(info["input_cost_per_token"] or 0.0)
    cout = float(info.get("output_cost_per_token") or 0.0)
    if input_price is not None:
        cin = input_price / 1e6
    if output_price is not None:
        cout = output_price / 1e6
    return Prices(cin, cout, f"litellm cost map ({info['key']})")


def _version(litellm: Any) -> str:
    try:
        from importlib.metadata import version

        return version("litellm")
    except Exception:
        return "?"


def prompt_messages(query: str, narrative: str | None, passages: Sequence[str]) -> list[dict[str, str]]:
    """The judging messages for one call: the fixed instructions, the topic and the numbered passages."""
    listed = "\n\n".join(f"[{i}] {p}" for i, p in enumerate(passages, start=1))
    user = JUDGE_PROMPT.format(query=query, narrative=f"Description: {narrative}\n" if narrative else "",
                               count=len(passages), passages=listed)
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def estimate_cost(
    pool: Any,
    corpus: Any,
    topics: Any,
    model: str,
    *,
    batch: int = 1,
    input_price: float | None = None,
    output_price: float | None = None,
) -> Estimate:
    """Judgments (group representatives), model calls, tokens and dollars per topic to judge `pool` by `model`.

    corpus: a Corpus or its source; topics: a list of Topic or their source (for the query text).
    Documents or topics that cannot be found are left out of the counts and reported in `problems`.
    """
    if batch < 1:
        raise ValueError(f"batch must be at least 1, not {batch}")
    prices = model_prices(model, input_price, output_price)
    litellm = _litellm()
    if isinstance(corpus, str) or hasattr(corpus, "__fspath__"):
        from trecbench.corpus import open_corpus

        corpus = open_corpus(corpus)
    topic_source = str(topics) if isinstance(topics, str) or hasattr(topics, "__fspath__") else "topics"
    if isinstance(topics, str) or hasattr(topics, "__fspath__"):
        from trecbench.topics import read_topics

        topics = read_topics(topics)
    by_id = {t.qid: t for t in topics}
    with _offline_tokenizers():
        return _estimate(pool, corpus, by_id, topic_source, model, batch, prices, litellm)


@contextlib.contextmanager
def _offline_tokenizers():
    """A tokenizer litellm would download from the Hugging Face hub falls back to tiktoken at once (no retries)."""
    before = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = before


def _estimate(pool: Any, corpus: Any, by_id: dict, topic_source: str, model: str, batch: int, prices: Prices,
              litellm: Any) -> Estimate:
    todo = pool.to_judge()
    problems: list[Problem] = []
    missing_docs: list[str] = []
    missing_topics: list[str] = []
    rows = []
    for qid, docs in todo.groupby("query_id", sort=False)["doc_id"]:
        topic = by_id.get(qid)
        if topic is None:
            missing_topics.append(str(qid))
            continue
        overhead = litellm.token_counter(model=model, messages=prompt_messages(topic.text, topic.narrative, []))
        passage_tokens = 0
        n = 0
        for docid in docs:
            doc = corpus.get(docid)
            if doc is None:
                missing_docs.append(docid)
                continue
            text = f"{doc.title} {doc.text}" if doc.title else doc.text
            passage_tokens += litellm.token_counter(model=model, text=f"[{n + 1}] {text}\n\n")
            n += 1
        calls = math.ceil(n / batch)
        tokens_in = calls * overhead + passage_tokens
        tokens_out = n * OUTPUT_TOKENS_PER_JUDGMENT
        rows.append({"query_id": qid, "judgments": n, "calls": calls, "input_tokens": tokens_in,
                     "output_tokens": tokens_out, "cost_usd": tokens_in * prices.input + tokens_out * prices.output})
    table = pd.DataFrame(rows, columns=["query_id", "judgments", "calls", "input_tokens", "output_tokens", "cost_usd"])
    total = table.drop(columns="query_id").sum()
    table = table.set_index("query_id")
    table.loc["all"] = total
    for col in ("judgments", "calls", "input_tokens", "output_tokens"):
        table[col] = table[col].astype("int64")
    if missing_topics:
        problems.append(Problem(topic_source, 0, f"{len(missing_topics)} pooled topic(s) not in the topics, not "
                                                 f"estimated: {' '.join(missing_topics[:10])}"
                                                 f"{' ...' if len(missing_topics) > 10 else ''}"))
    if missing_docs:
        problems.append(Problem(str(getattr(corpus, "source", "corpus")), 0,
                                f"{len(missing_docs)} pooled docid(s) not in the corpus, not counted: "
                                f"{' '.join(sorted(missing_docs)[:10])}{' ...' if len(missing_docs) > 10 else ''}"))
    return Estimate(table, model, batch, prices, problems)
