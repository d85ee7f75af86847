"""Support judging by a model: does each passage an answer sentence cites back the sentence (full, partial, none
and optionally contradicts), asked through `trecbench.llm` as relevance judging is.

    from trecbench import Workspace
    from trecbench.judging.support import judge_support
    from trecbench.llm import ModelConfig
    run = judge_support(Workspace("mybench"), ["answers/run1.jsonl"], ModelConfig("openai/gpt-4o-mini"), max_cost=2)
    run.report.judged, run.report.failed, run.judge.name

The grades and the unit judged, one (sentence, cited passage) pair per question, follow the TREC 2024 RAG
Track's support evaluation (Thakur et al., "Support Evaluation for the TREC 2024 RAG Track: Comparing Human
versus LLM Judges", SIGIR 2025); `contradicts` is BioGen 2025's extra grade. The answers' sentences are
registered in the workspace first (`answers.support.answer_sentences`, `Workspace.register_sentences`).

What relevance judging promises holds here, with its pieces (`judging.llm`): every judgment is recorded the
moment its reply is read; a reply that cannot be read after the client's re-asks is recorded with status
`failed` and its error, never as a grade; the judge's name is `MODEL:PROMPT@HASH` plus the settings that
differ from the defaults (`model_judge`); a second run asks nothing this judge already graded on the same
sentence text (and replies are cached in the workspace); pairs are leased while asked about, so two runs of
one judge share the work; `max_cost` stops before spending more. A dry run writes nothing and asks nothing:
it returns the client's estimate of the calls (`LLM(dry_run=True)`, replies counted at their bound).
"""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from trecbench.answers.support import GRADES, GRADES_WITH_CONTRADICTS, answer_sentences
from trecbench.answers.trec import Answer
from trecbench.errors import InputError
from trecbench.helpers.jobs import work_through
from trecbench.llm.errors import ParseError
from trecbench.llm.parse import final_answer
from trecbench.llm.prompts import TaskPrompt, clip
from trecbench.llm.records import Usage
from trecbench.llm.support_prompt import support_prompt
from trecbench.store import Judge, Workspace
from trecbench.store.support import SupportJudgment, SupportKey, SupportSentence

from .llm import LEASE_SECONDS, leased, model_judge, passage_text, stop_run, vote

PURPOSE = "support"
# Support strength, for the vote of several samples: the most common grade wins, a tie goes to the weaker.
STRENGTH = {"contradicts": 0, "none": 1, "partial": 2, "full": 3}
_SAID = {"full support": "full", "fully supported": "full", "full_support": "full", "partial support": "partial",
         "partially supported": "partial", "partial_support": "partial", "no support": "none",
         "not supported": "none", "no_support": "none", "contradicted": "contradicts", "contradiction": "contradicts"}


def grade_scale(spec: str | Sequence[str] | None) -> tuple[str, ...]:
    """The grades judged: `full,partial,none` (the paper's, the default) or `full,partial,none,contradicts`.

    ValueError for any other list."""
    if spec is None:
        return GRADES
    given = tuple(g.strip().lower() for g in (spec.split(",") if isinstance(spec, str) else spec) if g.strip())
    if given == GRADES or given == GRADES_WITH_CONTRADICTS:
        return given
    raise ValueError(f"the support grades are {','.join(GRADES)} or {','.join(GRADES_WITH_CONTRADICTS)}, "
                     f"not {','.join(given) or 'nothing'}")


class SupportPair(NamedTuple):
    """One question to the judge: a registered sentence and one docid it cites."""

    run_id: str
    qid: str
    sentence: int
    docid: str
    text: str
    text_hash: str

    @property
    def key(self) -> SupportKey:
        return (self.run_id, self.qid, self.sentence, self.docid)


class SupportFailure(NamedTuple):
    """A pair the run could not grade, and why (recorded as a failed judgment)."""

    key: SupportKey
    why: str


@dataclass(frozen=True)
class SupportPlan:
    """What a run will do: the judge, the answers' sentences, and the pairs still to grade."""

    judge: Judge
    prompt: TaskPrompt
    grades: tuple[str, ...]
    sentences: int  # sentences of the answers read
    uncited: int  # of them, sentences citing nothing (nothing to ask: they count as unsupported)
    added: int  # sentences newly registered in the workspace (0 in a dry run)
    changed: int  # sentences whose text or citations changed since they were registered
    total: int  # pairs to grade in this run
    calls: int  # questions to the model, samples included
    skipped: int  # pairs this judge already graded on the same sentence text


@dataclass
class SupportReport:
    """What a support-judging run did; the same counts as `judging.llm.Report`, with pairs for documents."""

    judged: int = 0
    failed: list[SupportFailure] = field(default_factory=list)
    skipped: int = 0
    shared: int = 0  # left to another run of this judge working at the same time
    stopped: str | None = None  # why the run stopped early (budget), if it did
    usage: Usage = field(default_factory=Usage)
    fatal: BaseException | None = None

    calls = property(lambda self: self.usage.calls)
    cached = property(lambda self: self.usage.cached)
    prompt_tokens = property(lambda self: self.usage.prompt_tokens)
    completion_tokens = property(lambda self: self.usage.completion_tokens)
    cost = property(lambda self: self.usage.cost)


@dataclass
class SupportRun:
    """The plan, and either what judging did (`report`) or, for a dry run, the calls' estimate (`estimate`, a
    `trecbench.llm.Plan`: calls, cached calls, tokens, dollars)."""

    plan: SupportPlan
    report: SupportReport | None = None
    estimate: Any = None
    batches: Any = None  # with provider_batch: the `judging.batch.BatchReport`

    @property
    def judge(self) -> Judge:
        return self.plan.judge


def support_judge(model: str, prompt: TaskPrompt, *, samples: int, params: dict) -> Judge:
    """The support judge's identity, named as relevance judges are (`model_judge`): `MODEL:support@HASH...`."""
    return model_judge(model, prompt, batch=1, samples=samples, params=params)  # type: ignore[arg-type]


def support_reader(grades: Sequence[str]) -> Callable[[Any], tuple[str, str]]:
    """Reads one JSON value of a reply into (grade, reason); ParseError when it holds no grade of `grades`."""

    def read(value: Any) -> tuple[str, str]:
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if not isinstance(value, dict) or "grade" not in value:
            raise ParseError('expected an object with a "grade"')
        said = value["grade"]
        grade = " ".join(said.lower().replace("-", " ").split()) if isinstance(said, str) else None
        grade = _SAID.get(grade or "", grade)
        if grade is None or grade not in grades:
            raise ParseError(f"grade {said!r} is not one of {', '.join(grades)}")
        return grade, str(value.get("reason", "")).strip()

    return read


def parse_support(text: str, grades: Sequence[str] = GRADES) -> tuple[str, str]:
    """The one reader of a support reply: (grade, reason) from its final answer (`llm.parse.final_answer`);
    ParseError when it has none of `grades`."""
    return final_answer(text, support_reader(grades))


def support_messages(prompt: TaskPrompt, sentence: str, passage: str, question: str | None = None) -> list[dict]:
    """The chat messages asking how far `passage` supports `sentence` (of an answer to `question`)."""
    parts = [f"Question: {question}"] if question else []
    parts += [f"Sentence: {' '.join(sentence.split())}", f"Passage: {clip(passage)}"]
    return [{"role": "system", "content": prompt.instructions + "\n\n" + prompt.reply_format},
            {"role": "user", "content": "\n\n".join(parts)}]


def vote_support(grades: list[str]) -> str:
    """The most common grade of several samples; a tie goes to the weaker support (`STRENGTH`)."""
    names = {v: k for k, v in STRENGTH.items()}
    return names[vote([STRENGTH[g] for g in grades])]


def read_answer_files(answers_or_paths: Iterable[Answer | str | Path] | str | Path) -> list[Answer]:
    """Answers as given, or read from answer files (`answers.read_answers`), in the order given."""
    from trecbench.answers import read_answers

    if isinstance(answers_or_paths, (str, Path)):
        answers_or_paths = [answers_or_paths]
    out: list[Answer] = []
    for item in answers_or_paths:
        out.extend([item] if isinstance(item, Answer) else read_answers(item))
    return out


def plan_pairs(sentences: Sequence[SupportSentence], done: set[tuple[SupportKey, str]],
               limit: int | None = None) -> tuple[list[SupportPair], int]:
    """(the pairs to grade, in run, topic, sentence and citation order; how many this judge graded already).

    `done` holds (pair, sentence text hash) of the judge's successful judgments: a sentence whose text changed
    is graded again. A citation listed twice in a sentence is one pair."""
    pairs: list[SupportPair] = []
    skipped = 0
    for s in sentences:
        for docid in dict.fromkeys(s.citations):
            pair = SupportPair(s.run_id, s.qid, s.sentence, docid, s.text, s.text_hash)
            if (pair.key, s.text_hash) in done:
                skipped += 1
            elif limit is None or len(pairs) < limit:
                pairs.append(pair)
    return pairs, skipped


def judged_by(ws: Workspace, judge: str) -> set[tuple[SupportKey, str]]:
    """(pair, sentence text hash) of every successful judgment of the judge named `judge` (read only)."""
    return {(r.key, r.text_hash) for r in ws.support_rows(judge=judge)}


class SupportLeases:
    """The pairs one support-judging run has taken (`Workspace.take_support_pairs`), so another run of the
    same judge skips them; kept alive and given back as `judging.llm.Leases` are (through `leased`).

    As with relevance, a lease keeps two runs of one judge apart and nothing else: the store keeps one holder
    per pair, so a pair a person (the assessor page) or another judge holds is asked about without a lease;
    the lease of a run that died on this machine is taken over at once by the store (`take_support_pairs`)."""

    def __init__(self, ws: Workspace, judge: str, *, seconds: float = LEASE_SECONDS):
        from trecbench.store.assessors import model_holder

        self.ws, self.judge, self.seconds = ws, judge, seconds
        self.holder = model_holder(judge)
        self.held: set[SupportKey] = set()

    def take(self, pair: SupportPair) -> bool:
        """True when the pair is this run's to ask about: no other live run of this judge holds it, and the
        judge has not graded its sentence since this run planned (another run finished it and let go)."""
        from trecbench.store.assessors import MODEL_HOLDER

        for _ in range(2):  # the store takes over a dead run's lease itself (`take_support_pairs`)
            now = time.time()
            if self.ws.take_support_pairs(self.holder, [pair.key], expires_at=now + self.seconds, at=now):
                self.held.add(pair.key)
                break
            other = self.ws.support_leases(now).get(pair.key)
            if other is None:
                continue  # let go between the two looks: take it again
            if not other.startswith(MODEL_HOLDER) or other.split(" ", 2)[2:] != [self.judge]:
                break  # a person's or another judge's: theirs to grade as well, asked without a lease
            return False
        graded = any(r.key == pair.key and r.text_hash == pair.text_hash
                     for r in self.ws.support_rows(judge=self.judge, run_id=pair.run_id, qid=pair.qid))
        if graded:
            self.release(pair.key)
        return not graded

    def release(self, key: SupportKey) -> None:
        """Give back the run's lease of this pair (inside the caller's transaction, if any)."""
        if key in self.held:
            self.held.discard(key)
            self.ws.drop_support_leases(self.holder, key)

    async def keep_alive(self) -> None:
        """Renew the run's leases until cancelled, well before they would expire."""
        while True:
            await asyncio.sleep(self.seconds / 4)
            if self.held:
                self.ws.renew_support_leases(self.holder, time.time() + self.seconds)

    def close(self) -> None:
        """Give back every lease the run still has."""
        if self.held:
            self.held.clear()
            self.ws.drop_support_leases(self.holder)


class _SupportJudger:
    """Asks the model about one pair, `samples` times, and records the judgment at once (not in a dry run)."""

    def __init__(self, ws: Workspace, llm: Any, prompt: TaskPrompt, judge: Judge, grades: Sequence[str], *,
                 samples: int, corpus: Any, questions: dict[str, str], report: SupportReport,
                 leases: SupportLeases | None, record: bool):
        self.ws, self.llm, self.prompt, self.judge, self.grades = ws, llm, prompt, judge, tuple(grades)
        self.samples, self.corpus, self.questions, self.report = samples, corpus, questions, report
        self.leases, self.record = leases, record

    def _judgment(self, pair: SupportPair, grade: str | None, **extra: Any) -> SupportJudgment:
        return SupportJudgment(pair.run_id, pair.qid, pair.sentence, pair.docid, pair.text_hash, grade, self.judge,
                               status="ok" if grade is not None else "failed", **extra)

    def _failed(self, pair: SupportPair, why: str, raw: str | None = None) -> SupportJudgment:
        self.report.failed.append(SupportFailure(pair.key, why))
        return self._judgment(pair, None, error=why, raw_reply=raw)

    def first_questions(self, pair: SupportPair) -> list[tuple[list[dict], dict]]:
        """Each sample's question about the pair: (messages, the rest of `llm.ask`'s arguments); none when the
        corpus lacks the passage (what a provider batch sends, `judging.batch`)."""
        doc = self.corpus.get(pair.docid)
        if doc is None:
            return []
        messages = support_messages(self.prompt, pair.text, passage_text(doc), self.questions.get(pair.qid))
        return [(messages, {"parse": partial(parse_support, grades=self.grades), "schema": self.prompt.response_schema(),
                            "purpose": PURPOSE, "max_tokens": self.prompt.max_tokens(),
                            **({"seed": seed} if self.samples > 1 else {})}) for seed in range(self.samples)]

    async def __call__(self, pair: SupportPair) -> None:
        questions = self.first_questions(pair)
        row = await self._ask(pair, questions) if questions else self._failed(pair, "cited passage not in the corpus")
        if row is None:  # a dry run: counted by the client, nothing to record
            return
        if self.record:
            with self.ws.transaction():
                self.ws.record_support([row])
                if self.leases is not None:
                    self.leases.release(pair.key)

    async def _ask(self, pair: SupportPair, questions: list[tuple[list[dict], dict]]) -> SupportJudgment | None:
        given: list[tuple[str, str]] = []
        raws: list[str | None] = []
        errors: list[str] = []
        for messages, ask in questions:
            outcome = await self.llm.ask(messages, **ask)
            self.report.usage += Usage.of(outcome.completions)
            if outcome.dry_run:
                continue
            raws.append(outcome.raw)
            if outcome.ok:
                given.append(outcome.value)
            else:
                errors.append(outcome.error or "no reply")
        if not raws:
            return None
        raw = raws[0] if self.samples == 1 else json.dumps(raws)
        if not given:
            return self._failed(pair, errors[0], raw)
        grade = vote_support([g for g, _ in given])
        reason = next(r for g, r in given if g == grade)
        note = f"{len(errors)} of {self.samples} samples failed: {errors[0]}" if errors else None
        self.report.judged += 1
        return self._judgment(pair, grade, raw_reply=raw, rationale=reason, error=note)


async def judge_pairs(ws: Workspace, llm: Any, prompt: TaskPrompt, pairs: Iterable[SupportPair], judge: Judge, *,
                      grades: Sequence[str] = GRADES, samples: int = 1, corpus: Any = None,
                      questions: dict[str, str] | None = None, leases: SupportLeases | None = None,
                      record: bool = True, on_progress: Callable[[SupportReport, int], None] | None = None
                      ) -> SupportReport:
    """Ask the model about every pair (`concurrency` at a time) and record each judgment at once.

    With `leases`, a pair another run of the judge holds, or graded since this run planned, is left to it
    (`SupportReport.shared`). A budget stop or a model error no call can pass lets no new question start."""
    from trecbench.llm import BudgetExceeded, ModelCallError

    report = SupportReport()
    one = _SupportJudger(ws, llm, prompt, judge, grades, samples=samples, corpus=corpus or ws.corpus(),
                         questions=questions or {}, report=report, leases=leases, record=record)
    stop = asyncio.Event()

    async def judge_pair(pair: SupportPair) -> None:
        try:
            if leases is not None and not leases.take(pair):
                report.shared += 1
                return
            await one(pair)
        except (BudgetExceeded, ModelCallError) as e:  # the pair stays unjudged and unrecorded
            stop_run(report, e, stop)
        finally:
            if leases is not None:
                leases.release(pair.key)
            if on_progress:
                on_progress(report, 1)

    await leased(leases, work_through(pairs, judge_pair, workers=getattr(llm.config, "concurrency", 8), stop=stop))
    if report.fatal is not None:
        raise report.fatal
    return report


async def judge_pairs_batched(ws: Workspace, llm: Any, prompt: TaskPrompt, pairs: Sequence[SupportPair],
                              judge: Judge, *, submit: bool = True, api: Any = None, **options: Any) -> Any:
    """`judge_pairs` through the provider's batch interface (`judging.batch.run_batched`): collect the judge's
    finished batches, grade what they answered as live replies, batch the pairs never asked (with `submit`).
    `options` are `judge_pairs`' (grades, samples, corpus, questions, on_progress)."""
    from .batch import BatchFlow, BatchReport, run_batched

    failures = SupportReport()  # the failures of requests a collected batch failed, put first in the report
    out = BatchReport(report=failures, unit="pairs")  # type: ignore[arg-type]
    one = _SupportJudger(ws, llm, prompt, judge, options.get("grades", GRADES), samples=options.get("samples", 1),
                         corpus=options["corpus"], questions=options.get("questions") or {}, report=failures,
                         leases=None, record=True)
    flow = BatchFlow(PURPOSE, one.first_questions, lambda pair, why: [one._failed(pair, why)], ws.record_support,
                     lambda live: judge_pairs(ws, llm, prompt, live, judge, **options), lambda pair: 1)
    return await run_batched(llm, flow, list(pairs), out, submit=submit, api=api)


def judge_support(ws: Workspace, answers_or_paths: Iterable[Answer | str | Path] | str | Path, config: Any, *,
                  grades: str | Sequence[str] | None = None, samples: int = 1, limit: int | None = None,
                  max_cost: Any = None, dry_run: bool = False, provider_batch: bool = False, collect: bool = False,
                  on_start: Callable[[SupportPlan], None] | None = None,
                  on_progress: Callable[[SupportReport, int], None] | None = None) -> SupportRun:
    """Grade every (sentence, cited passage) pair of the answers with `config`'s model (a `llm.ModelConfig`;
    its `params`, the temperature, are part of the judge's identity).

    The answers' sentences are registered in the workspace first (not in a dry run, which writes nothing).
    `grades`: `full,partial,none` (default) or with `contradicts`. `samples` > 1 asks each pair that many
    times (seeds 0, 1, ...) and keeps the most common grade. `limit`: at most this many pairs in this run.
    `max_cost` stops before spending more (0 spends nothing). `provider_batch` sends the requests through the
    provider's batch interface (`judge_pairs_batched`; `collect`: only collect, submit nothing), as `judge llm
    --provider-batch` does. Raises InputError for an unreadable answer file, ValueError for an unknown grade
    scale."""
    from trecbench.llm import LLM, Budget

    scale = grade_scale(grades)
    prompt = support_prompt(scale)
    identity = support_judge(config.model, prompt, samples=samples, params=dict(config.params))
    answers = read_answer_files(answers_or_paths)
    if not answers:
        given = [answers_or_paths] if isinstance(answers_or_paths, (str, Path)) else list(answers_or_paths)
        raise InputError(str(given[0]) if given else "answers", 0, "no answers to judge")
    sentences = answer_sentences(answers)
    added, changed = (0, 0) if dry_run else ws.register_sentences(sentences)
    pairs, skipped = plan_pairs(sentences, judged_by(ws, identity.name), limit)
    plan = SupportPlan(identity, prompt, scale, len(sentences), sum(1 for s in sentences if not s.citations),
                       added, changed, len(pairs), len(pairs) * samples, skipped)
    if on_start is not None:
        on_start(plan)
    topics = ws.topics()
    questions = {a.qid: a.topic for a in answers if a.topic}
    questions.update({qid: t.text for qid, t in topics.items()})
    client = LLM(config, cache=ws.path / "bench.sqlite", budget=Budget.of(max_cost), dry_run=dry_run)
    # a provider batch is not leased: its requests wait at the provider far longer than a lease (as relevance)
    leases = None if dry_run or provider_batch else SupportLeases(ws, identity.name)
    options = dict(grades=scale, samples=samples, corpus=ws.corpus(), questions=questions, on_progress=on_progress)
    batches = None
    try:
        if provider_batch and not dry_run:
            batches = client.run(judge_pairs_batched(ws, client, prompt, pairs, identity, submit=not collect,
                                                     **options))
            report = batches.report
        else:
            report = client.run(judge_pairs(ws, client, prompt, pairs, identity, leases=leases, record=not dry_run,
                                            **options))
    finally:
        client.close()
    if dry_run:
        return SupportRun(plan, estimate=client.plan)
    report.skipped = skipped
    return SupportRun(plan, report=report, batches=batches)
