"""Tokens of a text or a conversation as litellm's token_counter counts them, without importing litellm.

litellm takes seconds of CPU to import; a dry run or an estimate needs only its arithmetic. With its
Hugging Face tokenizer downloads off (trecbench.llm._litellm sets `disable_hf_tokenizer_download`),
litellm counts every model with a tiktoken encoding:

- the encoding: for a model that names an OpenAI model (listed under the `openai` or `azure` provider
  in the cost map, after any `provider/` prefix, or a name tiktoken maps to o200k_base, or a gpt-5+ /
  o-series name), the one tiktoken gives that name (o200k_base for every gpt-4o, and for a newer name
  tiktoken does not know yet; a listed non-chat model cl100k_base); for any other model, gpt-3.5-turbo's
  (cl100k_base);
- a text: the sum of the encoding's counts of its 1,024-character chunks (special tokens counted as text;
  litellm's defaults: its TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS is not read, and a text over its 4,000,000
  characters, which litellm extrapolates from samples, is counted whole here);
- a conversation: 3 tokens a message plus the count of each of its string fields (its role, its content;
  a `name` counts 1 more), plus 3 for the reply's primer (gpt-3.5-turbo-0301: 4 a message, -1 a name).

`tests/llm/test_tokens.py` checks this against litellm.token_counter for every model of litellm's cost map.

The encodings are read from files on this machine only (`offline_encoding`): TIKTOKEN_CACHE_DIR if set,
else the copies litellm ships (cl100k_base, o200k_base, p50k_base), found without importing litellm.
Without tiktoken or the file, a text counts one token per `CHARS_PER_TOKEN` characters (see that constant
for its measured error).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
from functools import lru_cache
from typing import Any, Callable, Iterator, Mapping, Sequence

from trecbench.llm.cost_map import cost_map

__all__ = ["encoding_name", "text_counter", "count_messages", "offline_encoding", "EncodingNotHere",
           "litellm_tokenizers", "CHARS_PER_TOKEN", "approximate_tokens", "read_ranks"]

CHUNK = 1024  # litellm counts a text in chunks of this many characters (TIKTOKEN_ENCODE_CHUNK_SIZE_CHARS)
PER_MESSAGE, PER_NAME, REPLY_PRIMER = 3, 1, 3  # litellm's fixed tokens of a chat conversation
LEGACY = "gpt-3.5-turbo-0301"  # counted 4 a message, -1 for a name (its role is left out)
# Measured on the judge's prompts of the sample benchmark (`python benchmarks/dry_run.py --chars`): its
# texts have 4.4 (one passage a call) to 4.7 (ten) characters a token under o200k_base and cl100k_base
# alike, so with 4 a dry run's input tokens come out 10% to 17% above the tokenizer's (1% to 21% for one
# call): an estimate without tiktoken errs on the side of paying more.
CHARS_PER_TOKEN = 4

_CHAT_MODES = {"chat", "responses"}
_NEWER_OPENAI = re.compile(r"(?:gpt-(?:[5-9]|[1-9]\d+)|o[1-9]\d*)(?:[.-]|$)")  # gpt-5..., o1, o3-mini...
_AZURE_ALIASES = {"gpt-35-turbo", "gpt-35-turbo-instruct", "azure/gpt-41", "azure/gpt-41-mini", "azure/gpt-41-nano"}


class EncodingNotHere(Exception):
    """A tiktoken encoding whose file is not on this machine (trecbench never downloads one)."""


def litellm_tokenizers() -> str | None:
    """The folder of tiktoken files litellm ships, found without importing litellm (slow to import)."""
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = os.path.join(list(spec.submodule_search_locations)[0], "litellm_core_utils", "tokenizers")
    return folder if os.path.isdir(folder) else None


@contextlib.contextmanager
def _local_files_only(name: str) -> Iterator[None]:
    """tiktoken reads the encoding from its cache (litellm's bundled copies unless TIKTOKEN_CACHE_DIR is set) and
    is stopped before it would download: tests and users' machines may have no network, and a count that
    fetches files is not reproducible."""
    import tiktoken.load as load

    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    bundled = litellm_tokenizers()
    if before is None and bundled is not None:
        os.environ["TIKTOKEN_CACHE_DIR"] = bundled
    fetch = load.read_file

    def local(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise EncodingNotHere(name)
        return fetch(blobpath)

    load.read_file = local
    public = _openai_public()
    parse = getattr(public, "load_tiktoken_bpe", None)
    if parse is not None:
        public.load_tiktoken_bpe = read_ranks
    try:
        yield
    finally:
        load.read_file = fetch
        if parse is not None:
            public.load_tiktoken_bpe = parse
        if before is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)


def _openai_public() -> Any:
    try:
        import tiktoken_ext.openai_public as public
    except ImportError:
        return None
    return public


def read_ranks(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """A `.tiktoken` file's ranks, read as tiktoken's `load_tiktoken_bpe` reads them (its cache, its hash check)
    and parsed in one pass over the split file: a third of the CPU (~0.1 s less for o200k_base)."""
    from binascii import a2b_base64
    from tiktoken.load import read_file_cached

    parts = read_file_cached(blobpath, expected_hash).split()
    return dict(zip(map(a2b_base64, parts[0::2]), map(int, parts[1::2])))


def offline_encoding(name: str) -> Any:
    """tiktoken's encoding `name`, read from a file on this machine.

    Raises ImportError without tiktoken, KeyError for a name tiktoken does not know (ValueError in older
    tiktoken), EncodingNotHere when its file is not here.
    """
    import tiktoken

    with _local_files_only(name):
        return tiktoken.get_encoding(name)


def _entry(name: str) -> Mapping[str, Any]:
    value = cost_map().get(name)
    return value if isinstance(value, dict) else {}


def _is_listed_openai(name: str) -> bool:
    """`name` is one of litellm's OpenAI models: its cost map lists it under openai (not a fine-tune's price
    key `ft:...`), or under azure as a text model with an OpenAI name."""
    entry = _entry(name)
    provider = entry.get("litellm_provider")
    if provider == "openai":
        return not (name.startswith("ft:") and name.count(":") <= 1)
    if provider == "azure" and entry.get("mode") in _CHAT_MODES | {"completion", "realtime"}:
        return _has_openai_name(name.rsplit("/", 1)[-1])
    return name in _AZURE_ALIASES


@lru_cache(maxsize=1)
def _openai_names() -> tuple[str, ...]:
    return tuple(k for k, v in cost_map().items() if isinstance(v, dict) and v.get("litellm_provider") == "openai"
                 and not (k.startswith("ft:") and k.count(":") <= 1))


def _has_openai_name(name: str) -> bool:
    if _entry(name).get("litellm_provider") == "openai" or _tiktoken_encoding(name) is not None:
        return True
    return any(name.startswith(f"{listed}-") or listed.startswith(f"{name}-") for listed in _openai_names())


def _tiktoken_encoding(name: str) -> str | None:
    import tiktoken

    try:
        return tiktoken.encoding_name_for_model(name)
    except KeyError:
        return None


def _openai_model(model: str) -> str | None:
    """The OpenAI model `model` names (its last segment), or None when it names another provider's model."""
    segments = model.split("/")
    name = segments[-1]
    suffixes = ["/".join(segments[i:]) for i in range(len(segments))]
    if any(_is_listed_openai(s) or _is_listed_openai(f"azure/{s}") for s in suffixes):
        return name
    if _tiktoken_encoding(name) == "o200k_base" or _NEWER_OPENAI.match(name):
        return name
    deployment = name.split(":")[1] if name.startswith("ft:") else name
    azure = _entry(f"azure/{deployment}")
    if (azure.get("litellm_provider") == "azure" and azure.get("mode") in _CHAT_MODES
            and (azure.get("supports_pdf_input") is True or deployment.startswith("gpt-"))):
        return deployment
    return None


@lru_cache(maxsize=256)
def encoding_name(model: str) -> str:
    """The tiktoken encoding litellm counts `model`'s tokens with (see the module's description)."""
    from tiktoken.model import MODEL_TO_ENCODING

    name = _openai_model(model)
    if name is None:  # litellm counts any other model as gpt-3.5-turbo
        return "cl100k_base"
    if "gpt-4o" in name:
        return "o200k_base"
    known = _tiktoken_encoding(name)
    if known is not None:
        return known
    variants = [listed for listed in MODEL_TO_ENCODING if name.startswith(f"{listed}-")]
    if variants:
        return MODEL_TO_ENCODING[max(variants, key=len)]
    listed_non_chat = any(_entry(n).get("mode") not in _CHAT_MODES | {None} for n in (name, f"azure/{name}"))
    return "cl100k_base" if listed_non_chat else "o200k_base"


def approximate_tokens(text: str) -> int:
    """One token per CHARS_PER_TOKEN characters, rounded up (a non-empty text is at least one token)."""
    return -(-len(text) // CHARS_PER_TOKEN)


@lru_cache(maxsize=16)
def text_counter(model: str) -> Callable[[str], int]:
    """A function counting a text's tokens for `model`: its tiktoken encoding in litellm's chunks, or, without
    tiktoken or the encoding's file, one token per CHARS_PER_TOKEN characters (`.exact` says which)."""
    try:
        encoding = offline_encoding(encoding_name(model))
    except (ImportError, KeyError, ValueError, EncodingNotHere):
        def estimate(text: str) -> int:
            return approximate_tokens(text)

        estimate.exact = False  # type: ignore[attr-defined]
        return estimate
    encode = encoding.encode_ordinary  # the text's special tokens counted as text, as litellm does

    def count_tokens(text: str) -> int:
        return sum(len(encode(text[i:i + CHUNK])) for i in range(0, len(text), CHUNK))

    count_tokens.exact = True  # type: ignore[attr-defined]
    return count_tokens


def message_tokens(model: str, message: Mapping[str, Any], count: Callable[[str], int]) -> int:
    """One message's tokens: its fixed part and its string fields (a non-string content counted as its JSON)."""
    legacy = model == LEGACY and _is_listed_openai(model)  # litellm: only the bare name listed
    total = 4 if legacy else PER_MESSAGE
    for key, value in message.items():
        if value is None:
            continue
        if isinstance(value, str):
            total += count(value) + ((-1 if legacy else PER_NAME) if key == "name" else 0)
        elif key == "content":
            total += count(json.dumps(value, ensure_ascii=False))
    return total


def count_messages(model: str, messages: Sequence[Mapping[str, Any]]) -> int:
    """Prompt tokens of a conversation for `model`, litellm's count without litellm (module description)."""
    count = text_counter(model)
    return sum(message_tokens(model, m, count) for m in messages) + REPLY_PRIMER
