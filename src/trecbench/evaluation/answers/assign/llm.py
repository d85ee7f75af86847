"""LLM assigner: a model labels each nugget of a topic against a run's answer, up to 10 nuggets a call.

Every call goes through `trecbench.llm` (cached by model, messages and parameters; retried on rate
limits and server errors; a reply that cannot be read is re-asked and then recorded as failed). A batch
whose reply never parses leaves its nuggets without a label: the topic is incomplete and reported,
never scored as "not supported".
"""
from __future__ import annotations

import asyncio
import json
from typing import Any, Awaitable, Sequence

from trecbench.evaluation.answers.assign import LABELS, NuggetAssignment, TopicAssignment, normalise_label
from trecbench.llm.prompts import ASSIGNMENT

BATCH = 10  # nuggets per call (at most)
PURPOSE = "nugget-assign"

SYSTEM = ASSIGNMENT.instructions

USER = """Question: {question}

Answer:
{answer}

Nuggets:
{nuggets}

"""


def make_client(model: Any, *, api_base: str | None = None, api_key: str | None = None,
                cache: Any = None, concurrency: int = 8, max_retries: int = 4, backoff: float = 1.0) -> Any:
    """An `trecbench.llm.LLM` for `model` (a name, a ModelConfig, or an LLM returned as is)."""
    from trecbench.llm import LLM, ModelConfig

    if isinstance(model, LLM):
        return model
    config = model if isinstance(model, ModelConfig) else ModelConfig(
        model, api_base=api_base, api_key=api_key, concurrency=concurrency, max_retries=max_retries, backoff=backoff)
    return LLM(config, cache=cache)


def run_all(coroutines: Sequence[Awaitable[Any]], client: Any = None) -> list[Any]:
    """Run coroutines concurrently (the client bounds how many calls are in flight) and keep their order.

    With `client`, its HTTP connections are closed before the event loop ends.
    """
    async def gather() -> list[Any]:
        return list(await asyncio.gather(*coroutines))

    return client.run(gather()) if client is not None and hasattr(client, "run") else asyncio.run(gather())


def labels_parser(n: int):
    """Parser of a reply holding exactly `n` labels; raises ParseError with a reason a model can act on."""
    from trecbench.llm import ParseError
    from trecbench.llm.parse import final_answer

    def read(value: Any) -> list[str]:
        if not isinstance(value, dict) or "labels" not in value:
            raise ParseError('expected a JSON object with a "labels" list')
        labels = value["labels"]
        if not isinstance(labels, list):
            raise ParseError('"labels" must be a list')
        if len(labels) != n:
            raise ParseError(f'"labels" has {len(labels)} entries; there are {n} nuggets, one label each')
        out = []
        for i, value in enumerate(labels, start=1):
            if isinstance(value, dict):  # {"nugget": 1, "label": "support"} is fine too
                value = value.get("label", value.get("assignment"))
            label, ok = normalise_label(value)
            if label is None or not ok:
                raise ParseError(f"label {i} is {json.dumps(value)}, not one of {', '.join(LABELS)}")
            out.append(label)
        return out

    return lambda text: final_answer(text, read)


def messages(question: str, answer: str, nuggets: Sequence[str]) -> list[dict]:
    listed = "\n".join(f"{i}. {text}" for i, text in enumerate(nuggets, start=1))
    user = USER.format(question=question or "(not given)", answer=answer or "(empty)", nuggets=listed)
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": user + ASSIGNMENT.reply_format.format(n=len(nuggets))}]


class LLMAssigner:
    """Labels nuggets with a model, in batches of up to 10 per (answer, topic)."""

    name = "llm"

    def __init__(self, model: Any, *, batch_size: int = BATCH, cache: Any = None, api_base: str | None = None,
                 api_key: str | None = None, concurrency: int = 8, max_retries: int = 4, backoff: float = 1.0):
        if not 1 <= batch_size <= BATCH:
            raise ValueError(f"batch_size must be between 1 and {BATCH}")
        self.batch_size = batch_size
        self.client = make_client(model, api_base=api_base, api_key=api_key, cache=cache, concurrency=concurrency,
                                  max_retries=max_retries, backoff=backoff)

    def assign(self, pairs) -> list[TopicAssignment]:
        jobs, where = [], []
        for p, (answer, topic) in enumerate(pairs):
            question = answer.topic or topic.query or ""
            nuggets = list(topic.nuggets)
            for start in range(0, len(nuggets), self.batch_size):
                batch = nuggets[start:start + self.batch_size]
                jobs.append(self.client.ask(messages(question, answer.text, [n.text for n in batch]),
                                            parse=labels_parser(len(batch)), schema=ASSIGNMENT.response_schema(),
                                            max_tokens=ASSIGNMENT.max_tokens(len(batch)), purpose=PURPOSE))
                where.append((p, batch))
        outcomes = run_all(jobs, self.client) if jobs else []
        labelled: list[list[NuggetAssignment]] = [[] for _ in pairs]
        errors: list[list[str]] = [[] for _ in pairs]
        for (p, batch), outcome in zip(where, outcomes):
            if outcome.ok:
                labelled[p].extend(NuggetAssignment(n.id, n.text, n.importance, label, f"by {self.client.config.model}")
                                   for n, label in zip(batch, outcome.value))
            else:
                first = batch[0].id
                errors[p].append(f"batch from nugget {first}: {outcome.error}")
                labelled[p].extend(NuggetAssignment(n.id, n.text, n.importance, None, "") for n in batch)
        return [TopicAssignment(answer.run_id, topic.qid, tuple(labelled[p]), "; ".join(errors[p]))
                for p, (answer, topic) in enumerate(pairs)]

    def close(self) -> None:
        self.client.close()
