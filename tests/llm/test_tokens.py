"""Counting tokens, finding prices and checking model names without litellm give litellm's own answers.

trecbench.llm.tokens, trecbench.llm.cost_map and trecbench.llm.cost read litellm's bundled files and redo
its arithmetic so that a dry run never imports litellm; each rule is checked here against litellm itself,
over every model of its cost map where that is cheap, and over the judge's prompts of the sample."""
from __future__ import annotations

import importlib.util
import logging
from functools import lru_cache

import pytest

from paths import ROOT

# Looked up, not imported: importing litellm at collection costs every xdist worker seconds of CPU, and only the
# worker that runs these tests needs it (the `litellm` fixture imports it).
pytestmark = pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("litellm", "tiktoken")),
                                reason="needs litellm and tiktoken ('.[models]')")

SAMPLE = ROOT / "src" / "trecbench" / "sample"
MODELS = ["gpt-4o-mini", "openai/gpt-4o-mini", "gpt-4o", "gpt-4", "gpt-3.5-turbo", "gpt-3.5-turbo-0301", "openai/gpt-5",
          "o3-mini", "azure/gpt-4o", "anthropic/claude-sonnet-4-5", "claude-3-haiku-20240307", "hosted_vllm/llama-3-8b",
          "ollama/llama3.1", "openai/judge", "gemini/gemini-2.0-flash"]


@pytest.fixture(scope="module")
def litellm():
    from trecbench.llm._litellm import load

    logging.disable(logging.CRITICAL)  # litellm logs every name it does not know
    try:
        yield load()
    finally:
        logging.disable(logging.NOTSET)


@lru_cache(maxsize=None)
def sample_conversations(batch: int) -> tuple[list[dict], ...]:
    """The judge's messages for the candidates of the sample's runs (depth 5), `batch` passages a call."""
    from trecbench.corpus import open_corpus
    from trecbench.judging.llm import passage_text, plan_tasks
    from trecbench.judging.prompts import build_messages, load_prompt
    from trecbench.pooling import build_pool
    from trecbench.topics import read_topics

    corpus = open_corpus(SAMPLE / "corpus.jsonl", cache_index=False)
    topics = {t.qid: t for t in read_topics(SAMPLE / "topics.tsv")}
    tasks, _ = plan_tasks(build_pool(sorted((SAMPLE / "runs").glob("*.txt")), depth=5).to_judge(), set(), batch)
    return tuple(build_messages(load_prompt(None), topics[t.qid].text, [passage_text(corpus.get(d)) for d in t.docids],
                                narrative="what matters" if k % 3 == 0 else None) for k, t in enumerate(tasks))


def map_names(litellm) -> list[str]:
    """Every name of the cost map's file, bare and behind the prefixes users write (not the models other tests
    register with litellm in this process)."""
    from trecbench.llm.cost_map import cost_map

    names = set(cost_map())
    for name in list(names):
        last = name.rsplit("/", 1)[-1]
        names |= {last, f"openai/{last}", f"hosted_vllm/{last}", f"azure/{last}"}
    return sorted(names)


def test_the_cost_map_read_as_a_file_is_the_one_litellm_serves(litellm):
    from trecbench.llm.cost_map import cost_map

    table = cost_map()
    registered = set(litellm.model_cost) - set(table)  # by other tests of this process (litellm.register_model)
    assert set(table) <= set(litellm.model_cost) and len(table) > 1000 and len(registered) < 20
    assert all(dict(table[k]) == dict(litellm.model_cost[k]) for k in table)  # aliases resolved as litellm does


def test_the_encoding_of_every_model_of_the_cost_map_is_litellms(litellm):
    from litellm.litellm_core_utils.token_counter import openai_tokenizer_encoding_name

    from trecbench.llm.tokens import encoding_name

    names = map_names(litellm) + MODELS + ["gpt-6.2", "openai/gpt-5.9", "o9-mini", "foo"]
    wrong = [(m, encoding_name(m), openai_tokenizer_encoding_name(m)) for m in names
             if encoding_name(m) != openai_tokenizer_encoding_name(m)]
    assert len(names) > 10_000 and wrong == []
    assert {encoding_name(m) for m in names} >= {"o200k_base", "cl100k_base"}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("batch", [1, 10])
def test_a_conversation_counted_without_litellm_is_litellms_count(litellm, model, batch):
    from trecbench.llm.cost import PromptCounter
    from trecbench.llm.tokens import count_messages, text_counter

    conversations = sample_conversations(batch)
    assert text_counter(model).exact
    expected = [litellm.token_counter(model=model, messages=c) for c in conversations]
    assert [count_messages(model, c) for c in conversations] == expected
    offline = PromptCounter(model, None)
    offline.litellm = None  # as in a process where litellm was never imported
    offline.text = text_counter(model)
    assert [offline(c) for c in conversations] == expected
    named = [{"role": "system", "content": "be brief", "name": "judge"}, {"role": "user", "content": "x" * 3000}]
    assert count_messages(model, named) == litellm.token_counter(model=model, messages=named)


def test_without_tiktoken_a_text_counts_a_token_per_four_characters(monkeypatch):
    from trecbench.llm import tokens

    def missing(name):
        raise ImportError("No module named 'tiktoken'")

    monkeypatch.setattr(tokens, "offline_encoding", missing)
    tokens.text_counter.cache_clear()
    try:
        count = tokens.text_counter("openai/gpt-4o-mini")
        assert not count.exact and count("abcd" * 10) == 10 and count("abcde") == 2 and count("") == 0
    finally:
        tokens.text_counter.cache_clear()


def litellm_prices(litellm, model: str):
    """What litellm's model-info look-up prices `model` at: (input, output per token, its key), or None."""
    try:
        info = litellm.get_model_info(model)
    except Exception:
        return None
    if not info or info.get("key") not in litellm.model_cost or info.get("input_cost_per_token") is None:
        return None
    return float(info["input_cost_per_token"] or 0.0), float(info.get("output_cost_per_token") or 0.0), info["key"]


def test_prices_found_without_litellm_are_its_model_info_prices(litellm):
    from trecbench.llm.cost import UnknownModelError, model_prices

    chat = [m for m in map_names(litellm) if (litellm.model_cost.get(m.split("/", 1)[-1]) or
                                              litellm.model_cost.get(m) or {}).get("mode") == "chat"]
    names = sorted(set(chat[::15] + MODELS + ["gpt-5.5-2026-04-24", "DeepSeek-V4-Flash", "openai/gpt-luna-latest"]))
    differ = []
    for model in names:
        try:
            p = model_prices(model)
            ours = (p.input, p.output, p.source.removeprefix("litellm cost map (").removesuffix(")"))
        except UnknownModelError:
            ours = None
        theirs = litellm_prices(litellm, model)
        if ours != theirs:
            differ.append((model, ours, theirs))
    assert len(names) > 300
    # litellm refuses a few names its map prices (AI21's bare names, Azure's instruct models): priced here
    assert all(theirs is None for _, _, theirs in differ) and len(differ) <= len(names) // 50, differ


def test_a_model_name_accepted_without_litellm_is_one_litellm_resolves(litellm):
    from trecbench.llm.config import KNOWN_PROVIDERS, known_without_litellm

    for provider in KNOWN_PROVIDERS:
        litellm.get_llm_provider(model=f"{provider}/some-model")  # raises if litellm does not know the prefix
    bare = [m for m in litellm.model_cost if "/" not in m and known_without_litellm(m)]
    refused = []
    for model in bare:
        try:
            litellm.get_llm_provider(model=model)
        except Exception:
            refused.append(model)
    assert len(bare) > 100 and len(refused) <= 1, refused  # one listed OpenAI name litellm cannot place
    assert not known_without_litellm("nosuchprovider/x") and not known_without_litellm("no-such-model")


def test_whether_a_model_takes_a_response_schema_is_litellms_answer(litellm):
    from trecbench.llm.cost import supports_response_schema

    names = [m for m in map_names(litellm)[::20] if "/" in m or m in litellm.model_cost] + MODELS
    differ = [m for m in names if supports_response_schema(m) != bool(litellm.supports_response_schema(model=m))]
    # litellm's fallback rules place some unlisted names in a family (`openai/databricks-claude-...`): not here
    assert len(names) > 500 and len(differ) <= len(names) // 20, differ
    assert supports_response_schema("openai/gpt-4o-mini") and supports_response_schema("anthropic/claude-sonnet-4-5")


@pytest.mark.parametrize("batch", [1, 10])
def test_the_count_without_tiktoken_is_above_the_tokenizers_and_within_a_quarter_on_the_sample(batch):
    from trecbench.llm import tokens

    for model in ("openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5"):
        for c in sample_conversations(batch):
            exact = tokens.count_messages(model, c)
            rough = sum(tokens.message_tokens(model, m, tokens.approximate_tokens) for m in c) + tokens.REPLY_PRIMER
            assert exact <= rough <= 1.25 * exact  # the documented error: pays more, by 1% to 21% a call


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "p50k_base"])
def test_an_encodings_ranks_are_read_as_tiktoken_reads_them(name, monkeypatch):
    import tiktoken.load
    import tiktoken.registry

    from trecbench.llm import tokens

    if tokens.litellm_tokenizers() is None:
        pytest.skip("litellm's tiktoken files are not installed")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", tokens.litellm_tokenizers())
    url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
    assert tokens.read_ranks(url) == tiktoken.load.load_tiktoken_bpe(url)
    import tiktoken_ext.openai_public as public

    reference = tiktoken.Encoding(**getattr(public, name)())  # tiktoken's own reading of the file
    monkeypatch.delitem(tiktoken.registry.ENCODINGS, name, raising=False)  # loaded afresh, through read_ranks
    text = "Rollbacks of the payments API must start within 15 minutes <|endoftext|> of a failed release. " * 30
    assert tokens.offline_encoding(name).encode_ordinary(text) == reference.encode_ordinary(text)
    assert public.load_tiktoken_bpe is tiktoken.load.load_tiktoken_bpe  # tiktoken's reader is back in place
