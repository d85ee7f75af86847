"""Token budgets: the contexts an agent reads within N tokens, and how many tokens each stage spends.

A top 10 of long chunks and a top 10 of short ones are not the same budget. The contexts within a budget
of N tokens are the last stage's contexts in rank order while their running total stays within N: the
context that would cross the budget is not counted, nor any after it. A context cut by the budget is
text the agent does not see whole, and the part cut off may be exactly the condition an answer needs,
so only whole contexts count; and an agent fills its window in rank order, so a shorter context further
down does not jump the queue. A context repeated in the list spends its tokens each time, as it takes a
position each time in the top k.

Tokenizers: `whitespace` (words: the text split on blanks, no download, the same everywhere) or a
tiktoken encoding (`cl100k_base`, `o200k_base`, ...) when tiktoken is installed (litellm brings it) and
the encoding's file is on this machine: in `TIKTOKEN_CACHE_DIR`, or else the copies litellm ships
(cl100k_base, p50k_base, o200k_base). trecbench never downloads one: an encoding whose file is not here
is refused. The tokenizer is part of every budget measure's name: `EvidenceRecall@500tok[whitespace]`.

A context's text is the contexts file's when it carries one, else the corpus's (its text, title not
included); a context with neither is an input error.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Sequence

from trecbench.errors import InputError
from trecbench.llm.tokens import litellm_tokenizers as _litellm_tokenizers  # noqa: F401  (tests ask for it)

WHITESPACE = "whitespace"


class Budget(NamedTuple):
    """N tokens counted by a named tokenizer."""

    tokens: int
    tokenizer: str = WHITESPACE

    @property
    def label(self) -> str:
        """How measure names spell the cut: `500tok[whitespace]`."""
        return f"{self.tokens}tok[{self.tokenizer}]"


def budget_measures(budget: Budget) -> list[str]:
    return [f"EvidenceRecall@{budget.label}", f"CompleteEvidence@{budget.label}"]


def tokenizer(name: str) -> Callable[[str], int]:
    """A function counting a text's tokens: `whitespace` words, or a tiktoken encoding available offline.

    Raises ValueError naming what is missing when tiktoken or the encoding's file is not here.
    """
    if name == WHITESPACE:
        return lambda text: len(text.split())
    try:
        import tiktoken
    except ImportError:
        from trecbench.helpers.extras import install_command

        raise ValueError(f"tokenizer {name!r} needs tiktoken ({install_command('models')}); or use {WHITESPACE!r}") from None
    if name not in tiktoken.list_encoding_names():
        raise ValueError(f"unknown tokenizer {name!r}: {WHITESPACE!r} or a tiktoken encoding "
                         f"({', '.join(tiktoken.list_encoding_names())})")
    from trecbench.llm.tokens import EncodingNotHere, offline_encoding  # the one offline loader of encodings

    try:
        encoding = offline_encoding(name)
    except EncodingNotHere:
        raise ValueError(f"tokenizer {name!r}: its encoding file is not on this machine and trecbench does not "
                         f"download it; put it in TIKTOKEN_CACHE_DIR, or use {WHITESPACE!r}") from None
    return lambda text: len(encoding.encode(text, disallowed_special=()))


@dataclass
class TokenCounter:
    """Tokens of contexts: the context's own text, else its corpus text; counts kept per docid."""

    name: str
    corpus: Any = None  # a trecbench Corpus (texts of contexts given by id)
    count: Callable[[str], int] = field(init=False, repr=False)
    _by_id: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.count = tokenizer(self.name)

    def __call__(self, context: Any, where: str = "") -> int:
        """The tokens of one Context (id, text)."""
        if context.text is not None:
            return self.count(context.text)
        cached = self._by_id.get(context.id)
        if cached is None:
            text = self.corpus.text(context.id) if self.corpus is not None and context.id is not None else None
            if text is None:
                source = str(getattr(self.corpus, "source", getattr(self.corpus, "path", "corpus")))
                raise InputError(where if self.corpus is None else source, 0,
                                 f"context {context.id!r} has no text" + (" and is not in the corpus" if
                                 self.corpus is not None else "; give --corpus to look texts up"))
            cached = self._by_id[context.id] = self.count(text)
        return cached

    def total(self, contexts: Sequence[Any], where: str = "") -> int:
        return sum(self(c, where) for c in contexts)


def within_budget(contexts: Sequence[Any], budget: int, tokens: Callable[[Any], int]) -> tuple[Any, ...]:
    """The contexts in rank order while their running total of tokens stays within `budget` (the first one
    that would cross it, and every one after, left out)."""
    if budget <= 0:
        raise ValueError(f"a token budget must be positive, not {budget}")
    spent, out = 0, []
    for context in contexts:
        spent += tokens(context)
        if spent > budget:
            break
        out.append(context)
    return tuple(out)
