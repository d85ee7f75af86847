"""Context recall: how much of what a topic's reference needs is in the retrieved contexts (cut at k).

Three modes, one context set per (system, topic):

- `id` (`IDContextRecall@k`): |retrieved ids ∩ reference ids| / |reference ids|, both as sets
  (Ragas' IDBasedContextRecall). Reference ids come from the references file or from qrels. Ids match
  exactly (case kept) once the readers strip surrounding whitespace, as every reader strips ids: `" d1"`
  in JSONL is the `d1` of a TREC run, whose fields cannot hold whitespace (Ragas would not match them).
- `string` (`StringContextRecall@k`): for each reference context, its best normalised Levenshtein
  similarity to any retrieved context; a hit when strictly above `threshold` (default 0.5); score =
  hits / reference contexts (Ragas' NonLLMContextRecall). Whole strings are compared, so a short
  reference inside a long chunk is missed (20 characters in 200 score 0.1); `window="sentence"`
  compares against windows of 1-3 sentences of each retrieved context and finds it. An empty reference
  context is refused by the reader (it names nothing to recall; Ragas counts it found by an empty
  retrieved context and missed by any other). Levenshtein is
  blind to meaning: a sentence and its negation score about 0.94, a hit. That is a known risk.
- `llm` (`LLMContextRecall@k`): a model splits the reference answer into claims and says, for each,
  whether the contexts support it (with the ids of the supporting contexts and a reason);
  score = attributed claims / claims x `scale`.

Every mode scores the top k contexts of the last stage (`contexts.top_k_contexts`: the first k
positions as the system produced them; all when k is None), read by `contexts.read_contexts`. A run's
score is the mean over topics. A topic without a reference of the needed kind scores NaN with a reason
(left out of the mean), or 0 with `missing="zero"` (Mastra's convention). A topic with a reference and
no retrieved context scores 0 (in llm mode without calling the model). In llm mode, a reference answer
the model finds no claim in scores NaN (nothing to recall), and a topic whose call failed is
incomplete: NaN, listed, and the command exits 1. With duplicate groups (`duplicates`), id mode counts
the members of a group as one document.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Union

import pandas as pd

from trecbench.errors import InputError
from trecbench.evaluation.evidence.contexts import Context, StagedContexts, read_contexts
from trecbench.evaluation.evidence.duplicates import NONE, DuplicateGroups
from trecbench.evaluation.evidence.references import Reference, read_references, references_from_qrels  # noqa: F401
from trecbench.evaluation.topic_scores import scores_frame
from trecbench.llm.prompts import CLAIMS

PathLike = Union[str, Path]
MODES = ("id", "string", "llm")
_NAMES = {"id": "IDContextRecall", "string": "StringContextRecall", "llm": "LLMContextRecall"}


@dataclass(frozen=True)
class ContextSet:
    """One system's retrieved contexts per topic, in rank order (a one-stage `StagedContexts`)."""

    run: str
    contexts: dict[str, tuple[Context, ...]]

    def staged(self) -> StagedContexts:
        return StagedContexts(self.run, ("final",), {q: {"final": c} for q, c in self.contexts.items()})


def measure_name(mode: str, k: int | None) -> str:
    return _NAMES[mode] + (f"@{k}" if k else "")


# --- scoring ---------------------------------------------------------------------------------------


def id_recall(retrieved: Iterable[str | None], reference: Iterable[str]) -> float:
    """|set(retrieved) ∩ set(reference)| / |set(reference)|; NaN when there is no reference id."""
    ref = set(reference)
    if not ref:
        return math.nan
    return len({r for r in retrieved if r is not None} & ref) / len(ref)


def string_recall(retrieved: list[str], reference: list[str], *, threshold: float = 0.5,
                  window: str | None = None) -> tuple[float, list[float]]:
    """(share of reference contexts whose best similarity is above `threshold`, the best similarities)."""
    from trecbench.evaluation.textmatch import best_match, sentence_windows

    if not reference:
        return math.nan, []
    candidates = retrieved
    if window == "sentence":
        candidates = [w for text in retrieved for w in [text] + sentence_windows(text, 3)]
    best = [best_match(ref, candidates)[0] for ref in reference]
    return sum(b > threshold for b in best) / len(reference), best


@dataclass
class ContextRecallScores:
    """Context recall per topic (`frame`, with `all` rows) and why a topic has no score."""

    frame: pd.DataFrame
    mode: str
    reasons: dict[tuple[str, str], str] = field(default_factory=dict)  # (run, qid) -> why NaN / 0 / incomplete
    details: dict[tuple[str, str], Any] = field(default_factory=dict)  # (run, qid) -> similarities or claims
    incomplete: list[tuple[str, str, str]] = field(default_factory=list)  # llm: (run, qid, error)

    def messages(self) -> list[str]:
        """The topics without a score or with a set one, grouped by what the table holds and why (topics are
        named `run:qid` when there are several runs), and the model calls that failed."""
        from trecbench.helpers.messages import some

        several = len(set(self.frame.index.get_level_values("run"))) > 1
        grouped: dict[tuple[str, str], list[str]] = {}
        for (run, qid), why in self.reasons.items():
            value = self.frame.loc[(run, qid)].iloc[0]
            what = "no score" if value != value else f"scored {value:g}"  # what the table holds, NaN or not
            grouped.setdefault((what, why), []).append(f"{run}:{qid}" if several else qid)
        out = [f"{len(where)} topic(s), {what}: {why}: {some(where)}" for (what, why), where in grouped.items()]
        if self.incomplete:
            out.append(f"{len(self.incomplete)} (run, topic) model call(s) failed; run again to retry them")
        return out

    def notes(self) -> dict[str, dict[str, Any]]:
        runs = dict.fromkeys(self.frame.index.get_level_values("run"))
        return {run: {"mode": self.mode,
                      "reasons": {q: why for (r, q), why in self.reasons.items() if r == run},
                      "details": {q: d for (r, q), d in self.details.items() if r == run},
                      "incomplete_topics": [q for r, q, _ in self.incomplete if r == run]} for run in runs}


def evaluate_context_recall(
    contexts: PathLike | ContextSet | Iterable[PathLike | ContextSet],
    references: PathLike | dict[str, Reference],
    *,
    mode: str = "id",
    k: int | None = None,
    threshold: float = 0.5,
    window: str | None = None,
    missing: str = "nan",
    corpus: Any = None,
    judge: Any = None,
    scale: float = 1.0,
    duplicates: DuplicateGroups | None = None,
) -> ContextRecallScores:
    """Context recall of one or more systems' contexts against references (see the module docstring).

    contexts: contexts file(s), StagedContexts or ContextSet(s), one per system.
    references: a references file or {qid: Reference} (`references_from_qrels` for ids from qrels).
    k: use the top k contexts of each topic (None: all).
    corpus: a Corpus (or path) to look up texts of contexts and references given only by id.
    judge: for `llm` mode, an `LLMRecallJudge` (any object with `recall_many(jobs)` returning one
        ClaimsVerdict per (question, reference answer, [(context id, text)]) job).
    duplicates: duplicate groups (`duplicate_groups(workspace)`): in id mode a group's members are one id.

    Example:
        >>> evaluate_context_recall("contexts.jsonl", "references.jsonl", mode="string", k=5).frame
    """
    _check_options(mode, missing, k)
    refs = read_references(references) if isinstance(references, (str, Path)) else dict(references)
    systems = _read_systems(contexts)
    if isinstance(corpus, (str, Path)):
        from trecbench.corpus import open_corpus

        corpus = open_corpus(corpus)
    how = _Recall(mode, k, threshold, window, missing, corpus, duplicates or NONE, measure_name(mode, k))
    topics = [_score_topic(system, qid, refs.get(qid), how)
              for system in systems for qid in dict.fromkeys(list(system.contexts) + list(refs))]
    reasons = {t.row[:2]: t.reason for t in topics if t.reason}
    details = {t.row[:2]: t.detail for t in topics if t.detail is not None}
    rows = [t.row for t in topics]
    jobs = [t.job for t in topics if t.job is not None]
    incomplete: list[tuple[str, str, str]] = []
    if jobs:
        judged = _judge(jobs, judge, scale)
        reasons.update(judged.reasons)
        details.update(judged.details)
        incomplete = judged.incomplete
        rows = [(r, q, {how.name: judged.scores.get((r, q), v[how.name])}) for r, q, v in rows]
    return ContextRecallScores(scores_frame(rows, [how.name]), mode, reasons, details, incomplete)


class _Recall(NamedTuple):
    """The options every (system, topic) is scored with."""

    mode: str
    k: int | None
    threshold: float
    window: str | None
    missing: str
    corpus: Any
    groups: DuplicateGroups
    name: str  # the measure's name (`IDContextRecall@10`)


_Job = tuple[str, str, str | None, str | None, list[tuple[str, str]]]  # (run, qid, question, reference answer, contexts)


class _TopicRecall(NamedTuple):
    """One (system, topic): its row, why it has no score or a set one, its details, and its model job (llm)."""

    row: tuple[str, str, dict[str, float]]
    reason: str = ""
    detail: Any = None  # string mode: the best similarities
    job: _Job | None = None  # llm mode: judged with the others, its row filled in then


class _Judged(NamedTuple):
    """What the model made of the llm jobs."""

    scores: dict[tuple[str, str], float]
    reasons: dict[tuple[str, str], str]
    details: dict[tuple[str, str], Any]
    incomplete: list[tuple[str, str, str]]


def _check_options(mode: str, missing: str, k: int | None) -> None:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if missing not in ("nan", "zero"):
        raise ValueError(f"missing must be 'nan' or 'zero', not {missing!r}")
    if k is not None and k <= 0:
        raise ValueError(f"k must be positive, not {k}")


def _read_systems(contexts: PathLike | ContextSet | Iterable[PathLike | ContextSet]) -> list[StagedContexts]:
    if isinstance(contexts, (str, Path, ContextSet, StagedContexts)):
        contexts = [contexts]
    return [c.staged() if isinstance(c, ContextSet) else c if isinstance(c, StagedContexts) else read_contexts(c)
            for c in contexts]


def _score_topic(system: StagedContexts, qid: str, ref: Reference | None, how: _Recall) -> _TopicRecall:
    """One system's context recall on one topic (in llm mode, the job to ask the model)."""
    run, name = system.run, how.name
    retrieved = system.top_k(qid, how.k)
    why = _no_reference(how.mode, ref, how.corpus)
    if why:
        return _TopicRecall((run, qid, {name: 0.0 if how.missing == "zero" else math.nan}), why)
    assert ref is not None
    if how.mode == "id":
        ids = (how.groups.same(qid, c.id) if c.id is not None else None for c in retrieved)
        return _TopicRecall((run, qid, {name: id_recall(ids, how.groups.all_same(qid, ref.ids))}))
    if how.mode == "string":
        strings = [_text(c, how.corpus, run, qid) for c in retrieved]
        ref_texts = list(ref.contexts) or [_text(Context(d, None), how.corpus, "references", qid) for d in ref.ids]
        score, best = string_recall(strings, ref_texts, threshold=how.threshold, window=how.window)
        return _TopicRecall((run, qid, {name: score}), detail=[round(b, 4) for b in best])
    if not retrieved:  # nothing to attribute a claim to: 0, without asking a model
        return _TopicRecall((run, qid, {name: 0.0}), "no retrieved context")
    texts = [(c.id or str(i), _text(c, how.corpus, run, qid)) for i, c in enumerate(retrieved)]
    return _TopicRecall((run, qid, {name: math.nan}), job=(run, qid, ref.question, ref.answer, texts))


def _judge(jobs: list[_Job], judge: Any, scale: float) -> _Judged:
    """Ask the model about every job at once: each topic's attributed claims / claims x `scale`."""
    if judge is None:
        raise ValueError("llm mode needs a judge (a model)")
    verdicts = judge.recall_many([(question, answer, texts) for _, _, question, answer, texts in jobs])
    judged = _Judged({}, {}, {}, [])
    for (run, qid, _, _, _), verdict in zip(jobs, verdicts):
        if not verdict.ok:
            judged.incomplete.append((run, qid, verdict.error))
            judged.reasons[(run, qid)] = f"incomplete: {verdict.error}"
            continue
        judged.details[(run, qid)] = [c._asdict() for c in verdict.claims]
        if not verdict.claims:
            judged.reasons[(run, qid)] = "the reference answer has no claims"
            continue
        judged.scores[(run, qid)] = sum(c.attributed for c in verdict.claims) / len(verdict.claims) * scale
    return judged


def _no_reference(mode: str, ref: Reference | None, corpus: Any) -> str:
    if ref is None:
        return "no reference for this topic"
    if mode == "id" and not ref.ids:
        return "no reference ids for this topic"
    if mode == "string" and not ref.contexts and not (ref.ids and corpus is not None):
        return "no reference contexts for this topic"
    if mode == "llm" and not ref.answer:
        return "no reference answer for this topic"
    return ""


def _text(context: Context, corpus: Any, run: str, qid: str) -> str:
    if context.text is not None:
        return context.text
    if corpus is not None and context.id is not None:
        text = corpus.text(context.id)
        if text is not None:
            return text
        raise InputError(str(getattr(corpus, "source", "corpus")), 0,
                         f"document {context.id!r} ({run}, topic {qid}) is not in the corpus")
    raise InputError(run, 0, f"topic {qid}: context {context.id!r} has no text; give --corpus to look texts up")


# --- llm mode --------------------------------------------------------------------------------------


class Claim(NamedTuple):
    """One claim of a reference answer, whether the contexts support it, which ones, and why."""

    claim: str
    attributed: bool
    context_ids: tuple[str, ...]
    reason: str


class ClaimsVerdict(NamedTuple):
    """A model's reading of one reference answer against one context set; `ok` False: it failed."""

    ok: bool
    claims: tuple[Claim, ...] = ()
    error: str = ""


RECALL_PURPOSE = "context-recall"

RECALL_SYSTEM = CLAIMS.instructions

RECALL_USER = """Question: {question}

Reference answer:
{reference}

Passages:
{passages}

"""


def claims_bound(reference: str) -> int:
    """`max_tokens` for the claims of a reference answer: about one claim per ten of its words."""
    return CLAIMS.max_tokens(len(reference.split()) // 10 + 2)


def _claims_parser(ids: list[str]):
    from trecbench.llm import ParseError
    from trecbench.llm.parse import final_answer

    def read(value: Any) -> tuple[Claim, ...]:
        if not isinstance(value, dict) or "claims" not in value:
            raise ParseError('expected a JSON object with a "claims" list')
        items = value["claims"]
        if not isinstance(items, list):
            raise ParseError('"claims" must be a list')
        out = []
        for i, item in enumerate(items, start=1):
            if not isinstance(item, dict) or not isinstance(item.get("claim"), str) or not item["claim"].strip():
                raise ParseError(f'claim {i} must be an object with a non-empty "claim" string')
            attributed = item.get("attributed")
            if not isinstance(attributed, bool):
                raise ParseError(f'claim {i}: "attributed" must be true or false')
            numbers = item.get("passages", [])
            if not isinstance(numbers, list) or not all(isinstance(x, int) and not isinstance(x, bool) and
                                                        1 <= x <= len(ids) for x in numbers):
                raise ParseError(f'claim {i}: "passages" must list passage numbers from 1 to {len(ids)}')
            if attributed and not numbers:
                raise ParseError(f'claim {i} is attributed but lists no passage')
            out.append(Claim(item["claim"].strip(), attributed, tuple(dict.fromkeys(ids[x - 1] for x in numbers)),
                             str(item.get("reason", "")).strip()))
        return tuple(out)

    return lambda text: final_answer(text, read)


class LLMRecallJudge:
    """Claims of reference answers judged against contexts by a model (one call per system and topic)."""

    def __init__(self, model: Any, *, cache: Any = None, api_base: str | None = None, api_key: str | None = None,
                 concurrency: int = 8, max_retries: int = 4, backoff: float = 1.0):
        from trecbench.evaluation.answers.assign.llm import make_client

        self.client = make_client(model, api_base=api_base, api_key=api_key, cache=cache, concurrency=concurrency,
                                  max_retries=max_retries, backoff=backoff)

    def messages(self, question: str | None, reference: str, contexts: list[tuple[str, str]]) -> list[dict]:
        passages = "\n\n".join(f"[{i}] {text}" for i, (_, text) in enumerate(contexts, start=1)) or "(none)"
        user = RECALL_USER.format(question=question or "(not given)", reference=reference, passages=passages)
        return [{"role": "system", "content": RECALL_SYSTEM},
                {"role": "user", "content": user + CLAIMS.reply_format.format(n=len(contexts))}]

    def recall_many(self, jobs: list[tuple[str, str, list[tuple[str, str]]]]) -> list[ClaimsVerdict]:
        """One verdict per (question, reference answer, [(context id, text)]) job, in order."""
        from trecbench.evaluation.answers.assign.llm import run_all

        calls = [self.client.ask(self.messages(question, ref, ctx), parse=_claims_parser([i for i, _ in ctx]),
                                 schema=CLAIMS.response_schema(), max_tokens=claims_bound(ref),
                                 purpose=RECALL_PURPOSE) for question, ref, ctx in jobs]
        outcomes = run_all(calls, self.client) if calls else []
        return [ClaimsVerdict(True, o.value) if o.ok else ClaimsVerdict(False, (), o.error or "failed")
                for o in outcomes]

    def close(self) -> None:
        self.client.close()
