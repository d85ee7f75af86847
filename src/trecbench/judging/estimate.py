"""What judging a pool by a model will cost, before anything is judged: judgments, calls, tokens, dollars.

The one estimator of judging costs: `pool estimate` and `judge llm --dry-run` both use `estimate_tasks`.
Offline, and without importing litellm or a provider's SDK (seconds of CPU; a dry run takes a fraction
of one): tokens are counted as litellm's token counter counts them, with the tiktoken encoding litellm
would use, read from the copies litellm ships (trecbench.llm.tokens; PromptCounter counts the judge's
instructions once and each call's topic and passages once; without tiktoken, ~4 characters a token), and
prices come from litellm's bundled cost map read as a file (trecbench.llm.cost_map) or from prices given
per million tokens.

A call judges up to `batch` passages of one topic with the judge's own messages (its prompt, the topic,
the passages, few-shot examples). Its reply is counted from the reply format: `typical_reply(n)`, one
object per passage with a short reason; when the workspace holds replies of the same judge, their
average length per passage is used instead. Calls the workspace's cache would answer cost nothing.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping, Sequence, TYPE_CHECKING

from trecbench.errors import Problem
from trecbench.llm._litellm import load as _litellm  # noqa: F401  (the one loader: benchmarks/campaign.py and tests take it here)
from trecbench.llm.cost import Prices, UnknownModelError, dollars, model_prices  # noqa: F401  (callers take them here)

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace

TYPICAL_REASON = "the passage states part of the answer"


def typical_reply(n: int) -> str:
    """A reply of the judge's format for `n` passages, with a short reason each (what the output is counted from)."""
    return json.dumps([{"passage": f"P{i}", "grade": 2, "reason": TYPICAL_REASON} for i in range(1, n + 1)])


COLUMNS = ["query_id", "judgments", "calls", "cached_calls", "input_tokens", "output_tokens", "cost_usd"]


@dataclass(frozen=True)
class Estimate:
    """Per topic (and the `all` row): judgments, calls, cached calls, input/output tokens, cost in dollars.

    `topics` holds each topic's counts (a dict of COLUMNS but the cost), None when nothing was asked about
    (then `table` has no `all` row and `total` is None); `total` is the `all` row as a dict, read without
    pandas (what a dry run prints), and `table` all of it as a DataFrame, made when first read.
    """

    topics: tuple[dict[str, Any], ...] | None
    model: str
    batch: int
    prices: Prices | None
    problems: list[Problem] = field(default_factory=list)

    @property
    def total(self) -> dict[str, Any] | None:
        """The `all` row of `table`: every count summed, and the cost (NaN without prices or topics)."""
        if self.topics is None:
            return None
        out: dict[str, Any] = {c: sum(int(t[c]) for t in self.topics) for c in COLUMNS[1:-1]}
        out["cost_usd"] = math.nan
        prices = self.prices
        if prices is not None and self.topics:
            import numpy as np

            costs = [t["input_tokens"] * prices.input + t["output_tokens"] * prices.output for t in self.topics]
            out["cost_usd"] = float(np.asarray(costs, dtype=np.float64).sum())  # summed as pandas sums the column
        return out

    @cached_property
    def table(self) -> Any:
        """Per topic and `all`: the DataFrame (index query_id) of COLUMNS."""
        import pandas as pd

        if self.topics is None:
            return pd.DataFrame(columns=COLUMNS[1:], index=pd.Index([], name="query_id"))
        table = pd.DataFrame(list(self.topics), columns=COLUMNS[:-1])
        prices = self.prices
        table["cost_usd"] = (table["input_tokens"] * prices.input + table["output_tokens"] * prices.output
                             if prices is not None else math.nan)
        total = table.drop(columns="query_id").sum(min_count=1)
        table = table.set_index("query_id")
        table.loc["all"] = total
        for col in COLUMNS[1:-1]:
            table[col] = table[col].fillna(0).astype("int64")
        return table


def estimate_cost(
    pool: Any,
    corpus: Any,
    topics: Any,
    model: str,
    *,
    batch: int = 1,
    input_price: float | None = None,
    output_price: float | None = None,
    prompt: Any = None,
    samples: int = 1,
) -> Estimate:
    """Judgments (group representatives), model calls, tokens and dollars per topic to judge `pool` by `model`.

    corpus: a Corpus or its source; topics: a list of Topic or their source (for the query text); prompt:
    the judge's Prompt (default: the built-in one). Raises UnknownModelError when the model has no price
    and none is given. Documents or topics that cannot be found are left out and reported in `problems`.
    """
    from trecbench.judging.llm import plan_tasks

    if batch < 1:
        raise ValueError(f"batch must be at least 1, not {batch}")
    prices = model_prices(model, input_price, output_price)
    if isinstance(corpus, str) or hasattr(corpus, "__fspath__"):
        from trecbench.corpus import open_corpus

        corpus = open_corpus(corpus)
    topic_source = str(topics) if isinstance(topics, str) or hasattr(topics, "__fspath__") else "topics"
    if isinstance(topics, str) or hasattr(topics, "__fspath__"):
        from trecbench.topics import read_topics

        topics = read_topics(topics)
    tasks, _ = plan_tasks(pool.to_judge(), set(), batch)
    return estimate_tasks(tasks, corpus, {t.qid: t for t in topics}, model, prompt=prompt, batch=batch,
                          samples=samples, prices=prices, topic_source=topic_source)


def estimate_tasks(tasks: Sequence[Any], corpus: Any, topics: Mapping[str, Any], model: str, *, prompt: Any = None,
                   batch: int = 1, samples: int = 1, examples: Mapping[str, list] | None = None,
                   prices: Prices | None = None, reply_tokens_per_passage: float | None = None, cache: Any = None,
                   requests: Any = None, topic_source: str = "topics") -> Estimate:
    """The estimate of asking the judge about `tasks` (each a topic and its documents), `samples` times each.

    `prices` None: tokens are counted and the cost is NaN (unpriced). `reply_tokens_per_passage`: the
    observed reply length (else counted from `typical_reply`). With `cache` (anything with `get(key)`, a
    ResponseCache) and `requests` (the `trecbench.llm.request.RequestForm` of the run's model), a call is
    counted as cached when the cache holds its first request, keyed as the run's client keys it.
    """
    from trecbench.llm.cost import PromptCounter
    from trecbench.judging.llm import passage_text, question
    from trecbench.judging.prompts import load_prompt

    prompt = prompt or load_prompt(None)
    counter = PromptCounter(model)
    per_passage = reply_tokens_per_passage
    if per_passage is None:
        per_passage = counter.text(typical_reply(batch)) / batch
    problems: list[Problem] = []
    missing_docs: list[str] = []
    missing_topics: set[str] = set()
    rows: dict[str, dict[str, Any]] = {}
    for task in tasks:
        topic = topics.get(task.qid)
        if topic is None:
            missing_topics.add(str(task.qid))
            continue
        texts = []
        for docid in task.docids:
            doc = corpus.get(docid)
            if doc is None:
                missing_docs.append(docid)
            else:
                texts.append(passage_text(doc))
        if not texts:
            continue
        shots = (examples or {}).get(task.qid, [])
        messages, _ = question(prompt, topic, texts, shots)  # the same messages for every sample
        row = rows.setdefault(task.qid, {"query_id": task.qid, "judgments": 0, "calls": 0, "cached_calls": 0,
                                         "input_tokens": 0, "output_tokens": 0})
        row["judgments"] += len(texts)
        tokens_in = None
        for s in range(samples):
            if cache is not None and requests is not None and cache.get(
                    requests.first_key(*question(prompt, topic, texts, shots, seed=s, samples=samples))) is not None:
                row["cached_calls"] += 1
                continue
            if tokens_in is None:
                tokens_in = counter(messages)
            row["calls"] += 1
            row["input_tokens"] += tokens_in
            row["output_tokens"] += round(per_passage * len(texts))
    if missing_topics:
        shown = sorted(missing_topics)
        problems.append(Problem(topic_source, 0, f"{len(shown)} pooled topic(s) not in the topics, not "
                                                 f"estimated: {' '.join(shown[:10])}{' ...' if len(shown) > 10 else ''}"))
    if missing_docs:
        problems.append(Problem(str(getattr(corpus, "source", "corpus")), 0,
                                f"{len(missing_docs)} pooled docid(s) not in the corpus, not counted: "
                                f"{' '.join(sorted(missing_docs)[:10])}{' ...' if len(missing_docs) > 10 else ''}"))
    return Estimate(tuple(rows.values()), model, batch, prices, problems)


def observed_reply_tokens(ws: Workspace, judge_name: str, model: str, samples: int = 1) -> float | None:
    """Average reply tokens per passage (and sample) of this judge's replies stored in the workspace, if any."""
    rows = ws.judge_replies(judge_name)
    if not rows:
        return None
    from trecbench.llm.cost import PromptCounter

    count = PromptCounter(model).text
    tokens = sum(int(count(text)) for text, _ in rows)
    return tokens / sum(n for _, n in rows) / samples


@contextlib.contextmanager
def _offline_tokenizers():
    """A tokenizer litellm would download from the Hugging Face hub falls back to tiktoken at once (no retries):
    for callers that count with litellm itself (the estimate counts without it)."""
    before = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = before
