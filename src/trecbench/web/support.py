"""Support assessment in the assessor app: a person grades how far a cited passage backs one sentence of an
answer, one sentence-citation pair at a time, blind to any model's or other person's grade.

The grades are the TREC 2024 RAG Track's (Thakur et al., "Support Evaluation for the TREC 2024 RAG Track:
Comparing Human versus LLM Judges", SIGIR 2025): full, partial, none; `contradicts` too when trecbench.toml
says `[support] contradicts = true` (`trecbench.answers.support`). The pairs are those of the sentences
registered for judging (`trecbench support add`, `Workspace.register_sentences`): each docid a sentence
cites, once, by topic, run, sentence and citation order, after the pairs of a stored blind sample
(`judge support-agreement --sample N`), which come first so that people grade the sample before the rest.
A pair is *judged* when `per_pair` people (1, or 2 with `serve --double`) have graded it on the sentence's
current text (a grade of a sentence whose answer file changed since is kept but does not count). A lease
(`support_leases`, as long as the relevance page's) offers a pair to one person at a time; a person holds at
most one, the pair in front of them.

A grade is one `SupportJudgment` of `Judge("human", assessor)` with the hash of the sentence it was given
on, recorded the moment it is given; it is refused (nothing recorded, the page says what was not saved and
why) when the sentence's text changed since the page was shown, or when the pair was lost meanwhile (an
expired lease that another person took, or a pair others finished). A grade given after the lease expired
while nobody else took the pair is recorded. There is no skip: the store keeps skips of relevance pairs only
(`skips`: qid, docid), and a skip is never a judgment, so `n` passes a pair without keeping anything.
"""
from __future__ import annotations

import re
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field as dataclass_field
from typing import Callable, Iterator, NamedTuple

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from trecbench.answers.support import CONTRADICTS, DEFINITIONS, FULL, GRADES, GRADES_WITH_CONTRADICTS, NONE, PARTIAL
from trecbench.errors import InputError
from trecbench.store.assessors import MODEL_HOLDER
from trecbench.store.support import SupportJudgment, SupportKey, SupportSentence
from trecbench.store.workspace import Judge, Workspace
from trecbench.web.common import Bench, NotSaved, bench_of, checked_form, field, href, me, redirect, render
from trecbench.web.highlight import highlight, query_terms
from trecbench.web.queries import topic_order

KEYS = {FULL: "2", PARTIAL: "1", NONE: "0", CONTRADICTS: "c"}  # the key (and button) of each grade
FORM_BYTES = 16 * 1024  # a support form is a few ids and a grade: a larger body is refused before it is read
_INDEX = re.compile(r"[0-9]{1,9}")
Answer = tuple[str, str]  # (run_id, qid)


def support_grades(bench: Bench) -> tuple[str, ...]:
    """The grades people give on this workspace: the paper's three, with `contradicts` when asked for."""
    return GRADES_WITH_CONTRADICTS if bench.ws.settings.support_contradicts else GRADES


def routes() -> list[Route]:
    """`/support` (progress), `/support/overview`, `/support/judge` (GET: a pair; POST: its grade) and the
    posts that lease a pair, `/support/next` and `/support/open`."""
    return [
        Route("/support", progress_page, methods=["GET"]),
        Route("/support/overview", overview_page, methods=["GET"]),
        Route("/support/judge", judge_page, methods=["GET"]),
        Route("/support/judge", judge_post, methods=["POST"]),
        Route("/support/next", next_post, methods=["POST"]),
        Route("/support/open", open_post, methods=["POST"]),
    ]


# ---- the queue: every pair in judging order, people's grades on the current texts, the live leases ----

@dataclass
class Queue:
    """The registered sentences' pairs in judging order, each person's latest grade of a pair on the sentence's
    current text, and the live leases ({pair: holder})."""

    pairs: list[SupportKey]
    sentences: dict[tuple[str, str, int], SupportSentence]
    sample: frozenset[SupportKey] = frozenset()  # the blind sample's pairs (first in `pairs`)
    people: dict[SupportKey, dict[str, str]] = dataclass_field(default_factory=dict)
    leases: dict[SupportKey, str] = dataclass_field(default_factory=dict)
    _index: dict[SupportKey, int] | None = dataclass_field(default=None, init=False, repr=False)

    def sentence_of(self, key: SupportKey) -> SupportSentence | None:
        return self.sentences.get(key[:3])

    def is_pair(self, key: SupportKey) -> bool:
        """A registered sentence citing this docid."""
        found = self.sentence_of(key)
        return found is not None and key[3] in found.citations

    def grade_of(self, key: SupportKey, who: str) -> str | None:
        return self.people.get(key, {}).get(who)

    def is_open(self, key: SupportKey, who: str, per_pair: int) -> bool:
        """Not graded by `who`, graded by fewer than `per_pair` people, and leased to nobody else."""
        judged = self.people.get(key, {})
        holder = self.leases.get(key)
        return who not in judged and len(judged) < per_pair and holder in (None, who)

    def is_visible(self, key: SupportKey, who: str, per_pair: int) -> bool:
        """What n/p step through: pairs `who` graded (to grade again) and pairs open to them."""
        return self.grade_of(key, who) is not None or self.is_open(key, who, per_pair)

    def complete(self, key: SupportKey, per_pair: int) -> bool:
        return len(self.people.get(key, {})) >= per_pair

    def neighbour(self, key: SupportKey, who: str, per_pair: int, step: int) -> SupportKey | None:
        """The next (step=1) or previous (step=-1) visible pair from `key` in judging order."""
        if key not in self._positions:
            return None
        i = self._positions[key] + step
        while 0 <= i < len(self.pairs):
            if self.is_visible(self.pairs[i], who, per_pair):
                return self.pairs[i]
            i += step
        return None

    def open_from(self, who: str, per_pair: int, start: int) -> Iterator[SupportKey]:
        """The pairs open to `who` from position `start` on, wrapping round to those before it."""
        for key in self.pairs[start:] + self.pairs[:start]:
            if self.is_open(key, who, per_pair):
                yield key

    def start_after(self, key: SupportKey) -> int:
        return self._positions[key] + 1 if key in self._positions else 0

    def start_at(self, qid: str, run_id: str | None) -> int:
        """The position of the first pair of the topic (of that run's answer, when given)."""
        for i, key in enumerate(self.pairs):
            if key[1] == qid and run_id in (None, key[0]):
                return i
        return 0

    @property
    def _positions(self) -> dict[SupportKey, int]:
        if self._index is None:
            self._index = {key: i for i, key in enumerate(self.pairs)}
        return self._index


def _order(s: SupportSentence) -> tuple:
    return (topic_order(s.qid), s.run_id, s.sentence)


def load_queue(ws: Workspace, at: float) -> Queue:
    """The queue as the store has it now (inside a write transaction: as that transaction sees it). The pairs of
    a stored blind sample (`judge support-agreement --sample N`, `judging.support_agreement.sample_first`) come
    first, in the sample's judging order, then every other pair by topic, run, sentence and citation."""
    from trecbench.judging.support_agreement import sample_first

    sentences = sorted(ws.support_sentences(), key=_order)
    pairs = [(s.run_id, s.qid, s.sentence, d) for s in sentences for d in dict.fromkeys(s.citations)]
    registered = set(pairs)
    sample = [key for key in sample_first(ws) if key in registered]
    if sample:
        chosen = set(sample)
        pairs = sample + [key for key in pairs if key not in chosen]
    queue = Queue(pairs, {(s.run_id, s.qid, s.sentence): s for s in sentences}, frozenset(sample))
    for row in ws.support_rows(kind="human"):  # row order: the last grade of a person is theirs
        sentence = queue.sentences.get((row.run_id, row.qid, row.sentence))
        if sentence is not None and row.text_hash == sentence.text_hash and row.grade is not None:
            queue.people.setdefault(row.key, {})[row.judge] = row.grade
    queue.leases = {key: holder for key, holder in ws.support_leases(at).items()}
    return queue


def passage_check(bench: Bench) -> Callable[[str], bool]:
    """Whether the workspace's corpus has a docid (none has, when the corpus cannot be read)."""
    try:
        corpus = bench.corpus()
    except InputError:
        return lambda docid: False
    return lambda docid: docid in corpus


def take_next(bench: Bench, who: str, *, after: SupportKey | None = None, qid: str | None = None,
              run_id: str | None = None) -> SupportKey | None:
    """Lease `who` their next open pair whose passage the corpus has (after `after`, else from the topic and
    run given, else from the first), in one write transaction so that two people asking at once get different
    pairs; their other lease is dropped. None when nothing is left."""
    has_passage = passage_check(bench)
    ws = bench.ws
    with ws.transaction():
        now = time.time()
        queue = load_queue(ws, now)
        start = queue.start_after(after) if after else queue.start_at(qid, run_id) if qid else 0
        ws.drop_support_leases(who)
        for key in queue.open_from(who, bench.per_pair, start):
            if has_passage(key[3]) and ws.take_support_pairs(who, [key], expires_at=now + bench.lease_seconds, at=now):
                return key
        return None


def hold(bench: Bench, who: str, key: SupportKey) -> bool:
    """`who` goes to this pair: their other lease is dropped and this one leased to them when it is open to
    them or theirs to grade again. Returns whether they hold it."""
    ws = bench.ws
    with ws.transaction():
        now = time.time()
        queue = load_queue(ws, now)
        ws.drop_support_leases(who)
        if queue.is_pair(key) and queue.is_visible(key, who, bench.per_pair) and queue.leases.get(key) in (None, who):
            return bool(ws.take_support_pairs(who, [key], expires_at=now + bench.lease_seconds, at=now))
        return False


# ---- requests: what a form or an address names ----

def _pair(get: Callable[[str], str | None]) -> SupportKey:
    """The pair the fields run, qid, sentence and docid name; 400 when one is missing or not an index."""
    run, qid, sentence, docid = get("run"), get("qid"), get("sentence"), get("docid")
    if not run or not qid or not sentence or not docid:
        raise HTTPException(400, "a sentence-citation pair needs run, qid, sentence and docid")
    if not _INDEX.fullmatch(sentence):
        raise HTTPException(400, f"sentence must be a sentence's index (0, 1, 2, ...), not {sentence[:40]!r}")
    return (run, qid, int(sentence), docid)


def _query(request: Request) -> Callable[[str], str | None]:
    def get(name: str) -> str | None:
        values = request.query_params.getlist(name)
        if len(values) > 1:
            raise HTTPException(400, f"parameter {name!r} is given {len(values)} times")
        return values[0] if values else None

    return get


async def _form(request: Request) -> FormData:
    """The posted form after the app's checks (`checked_form`); a body over FORM_BYTES is refused (413)."""
    length = request.headers.get("content-length", "")
    if length and (not length.isdigit() or int(length) > FORM_BYTES):
        raise HTTPException(413, f"a support form is at most {FORM_BYTES} bytes")
    return await checked_form(request)


def pair_href(key: SupportKey) -> str:
    return href("/support/judge", run=key[0], qid=key[1], sentence=str(key[2]), docid=key[3])


def _words(key: SupportKey) -> str:
    """A pair in the assessor's words (the run is not named: it could sway the grade)."""
    return f"sentence {key[2] + 1} of an answer to topic {key[1]}, citing {key[3]}"


# ---- pages ----

class AnswerProgress(NamedTuple):
    """How far one run's answer to one topic is: its pairs, those judged, by this person, left, being judged
    now, whose passage the corpus lacks (never offered), and its sentences citing nothing (no pair)."""

    qid: str
    run_id: str
    topic: str
    pairs: int
    judged: int
    mine: int
    left: int
    held: int
    missing: int
    uncited: int


def progress(bench: Bench, queue: Queue, who: str) -> list[AnswerProgress]:
    """One row per answer (topic, run) in judging order."""
    has_passage = passage_check(bench)
    counts: dict[Answer, Counter[str]] = {}
    for s in queue.sentences.values():
        counts.setdefault((s.run_id, s.qid), Counter())["uncited"] += not s.citations
    for key in queue.pairs:
        count = counts[(key[0], key[1])]
        complete, missing = queue.complete(key, bench.per_pair), not has_passage(key[3])
        holder = queue.leases.get(key)
        count["pairs"] += 1
        count["judged"] += complete
        count["mine"] += queue.grade_of(key, who) is not None
        count["left"] += not complete and not missing
        count["held"] += holder is not None and not holder.startswith(MODEL_HOLDER) and not complete
        count["missing"] += missing
    texts = bench.ws.topic_texts()
    answers = sorted(counts, key=lambda a: (topic_order(a[1]), a[0]))
    return [AnswerProgress(q, r, texts.get(q, ""), *(counts[(r, q)][f] for f in AnswerProgress._fields[3:]))
            for r, q in answers]


class TopicSupport(NamedTuple):
    """A topic's answers together, as the assessor's page lists them (it does not name the runs)."""

    qid: str
    topic: str
    answers: int
    pairs: int
    judged: int
    mine: int
    left: int


def by_topic(rows: list[AnswerProgress]) -> list[TopicSupport]:
    """The answers' progress summed per topic, in topic order."""
    topics: dict[str, TopicSupport] = {}
    for r in rows:
        t = topics.get(r.qid, TopicSupport(r.qid, r.topic, 0, 0, 0, 0, 0))
        topics[r.qid] = t._replace(answers=t.answers + 1, pairs=t.pairs + r.pairs, judged=t.judged + r.judged,
                                   mine=t.mine + r.mine, left=t.left + r.left)
    return list(topics.values())


def progress_page(request: Request) -> Response:
    """The assessor's start: what is left per topic, and the buttons that take the next pair."""
    bench, who = bench_of(request), me(request)
    queue = load_queue(bench.ws, time.time())
    rows = progress(bench, queue, who)
    sample_left = sum(1 for key in queue.sample if not queue.complete(key, bench.per_pair))
    return render(request, "support.html", rows=rows, topics=by_topic(rows), left=sum(r.left for r in rows),
                  sample=len(queue.sample), sample_left=sample_left,
                  missing=sum(r.missing for r in rows),
                  finished=request.query_params.get("finished") == "1", bench_path=str(bench.ws.path))


class Person(NamedTuple):
    """One person's support grades on the current texts: pairs graded, and how many of each grade."""

    name: str
    pairs: int
    grades: dict[str, int]


def overview_page(request: Request) -> Response:
    """The organiser's view: who graded how much, who holds which pair now, what is left per topic and run, and
    the pairs that cannot be judged (the corpus lacks the passage)."""
    bench = bench_of(request)
    me(request)
    queue = load_queue(bench.ws, time.time())
    rows = progress(bench, queue, "")
    graded: dict[str, dict[str, int]] = {}
    for grades in queue.people.values():
        for name, grade in grades.items():
            counts = graded.setdefault(name, {})
            counts[grade] = counts.get(grade, 0) + 1
    people = [Person(n, sum(c.values()), c) for n, c in sorted(graded.items())]
    leases = sorted((holder, key) for key, holder in queue.leases.items() if not holder.startswith(MODEL_HOLDER))
    models = sum(1 for holder in queue.leases.values() if holder.startswith(MODEL_HOLDER))
    has_passage = passage_check(bench)
    missing = [key for key in queue.pairs if not has_passage(key[3])]
    uncited = [s for s in sorted(queue.sentences.values(), key=_order) if not s.citations]
    return render(request, "support_overview.html", rows=rows, people=people, leases=leases, models=models,
                  missing=missing, uncited=uncited, grades=support_grades(bench), pair_href=pair_href)


def judge_page(request: Request) -> Response:
    """One pair: the topic, the sentence between its neighbours (dimmed), the cited passage with the sentence's
    words marked, and the grade buttons when the pair is the assessor's to grade. No model's or other
    person's grade is shown."""
    bench, who = bench_of(request), me(request)
    key = _pair(_query(request))
    queue = load_queue(bench.ws, time.time())
    sentence = queue.sentence_of(key)
    if sentence is None or not queue.is_pair(key):
        raise HTTPException(404, f"no registered sentence {key[2]} of run {key[0]!r} for topic {key[1]!r} cites "
                                 f"{key[3]!r}")
    doc, missing = bench.document(key[3])
    terms = query_terms(sentence.text)
    neighbours = {n: queue.sentences.get((key[0], key[1], n)) for n in (key[2] - 1, key[2] + 1)}
    holder = queue.leases.get(key)
    mine = queue.grade_of(key, who)
    rows = progress(bench, queue, who)
    return render(
        request, "support_judge.html", key=key, sentence=sentence, topic=bench.ws.topic_text(key[1]),
        before=neighbours[key[2] - 1], after=neighbours[key[2] + 1], doc=doc, missing=missing,
        title=highlight(doc.title, terms) if doc and doc.title else None,
        text=highlight(doc.text, terms) if doc else None,
        my_grade=mine, held_by_other=holder not in (None, who),
        gradable=doc is not None and holder in (None, who) and (mine is not None or queue.is_open(key, who, bench.per_pair)),
        complete=queue.complete(key, bench.per_pair) and mine is None,
        prev_pair=queue.neighbour(key, who, bench.per_pair, -1), next_pair=queue.neighbour(key, who, bench.per_pair, 1),
        grades=support_grades(bench), keys=KEYS, meaning=DEFINITIONS, left=sum(r.left for r in rows),
        citations=len(dict.fromkeys(sentence.citations)), citation=list(dict.fromkeys(sentence.citations)).index(key[3]) + 1)


def _refusal(queue: Queue, key: SupportKey, text_hash: str, who: str, per_pair: int) -> str | None:
    """Why a grade of the pair, given on a page of the sentence with `text_hash`, cannot be recorded; None when
    it can."""
    sentence = queue.sentence_of(key)
    if sentence is None or not queue.is_pair(key):
        return "that sentence-citation pair is not registered for judging (any more)"
    if sentence.text_hash != text_hash:
        return "the sentence's text changed since the page was shown (its answer file was registered again)"
    holder = queue.leases.get(key)
    if holder is not None and holder != who:
        return "your hold on the pair ran out and another assessor has it now"
    if queue.grade_of(key, who) is None and queue.complete(key, per_pair):
        return "your hold on the pair ran out and it was graded by another assessor meanwhile"
    return None


def _record(bench: Bench, who: str, key: SupportKey, text_hash: str, grade: str) -> str | None:
    """Record the grade and end the lease in one transaction; returns why it was refused (nothing recorded)."""
    doc, missing = bench.document(key[3])
    ws = bench.ws
    with ws.transaction():
        queue = load_queue(ws, time.time())
        refused = _refusal(queue, key, text_hash, who, bench.per_pair) or (missing if doc is None else None)
        if refused is None:
            ws.record_support([SupportJudgment(*key, text_hash, grade, Judge("human", who))])
            ws.drop_support_leases(who, key)
        return refused


async def judge_post(request: Request) -> Response:
    """Record the grade, then lease and show the assessor's next open pair (the progress page when none is left);
    a grade that cannot be recorded gets a page saying so and why."""
    form = await _form(request)
    bench, who = bench_of(request), me(request)
    key = _pair(lambda name: field(form, name))
    text_hash, grade = field(form, "text_hash"), field(form, "grade")
    grades = support_grades(bench)
    if not text_hash or grade not in grades:
        raise HTTPException(400, f"a support grade needs text_hash and a grade: {', '.join(grades)}")
    try:
        refused = await run_in_threadpool(_record, bench, who, key, text_hash, grade)
    except sqlite3.Error as e:  # rolled back: the assessor must know that this grade is not recorded
        raise NotSaved(f"Your grade {grade} of {_words(key)} was NOT saved", e, back=pair_href(key)) from None
    if refused is not None:
        return render(request, "support_refused.html", status_code=409, key=key, grade=grade, why=refused,
                      what=_words(key), back=pair_href(key))
    try:
        following = await run_in_threadpool(take_next, bench, who, after=key)
    except sqlite3.Error as e:  # the grade is kept; leasing the next pair is what failed
        raise NotSaved(f"Your grade {grade} of {_words(key)} was saved, but the next pair could not be given to you",
                       e, back="/support", heading="Saved, but no next pair") from None
    return redirect(pair_href(following) if following else href("/support", finished="1"))


async def next_post(request: Request) -> Response:
    """Lease the assessor's next open pair and show it: after the pair the form names (run, qid, sentence,
    docid), else from the topic (qid, and run) it names, else from the first."""
    form = await _form(request)
    bench, who = bench_of(request), me(request)
    after = _pair(lambda name: field(form, name)) if field(form, "sentence") or field(form, "docid") else None
    qid, run_id = field(form, "qid") or None, field(form, "run") or None
    following = await run_in_threadpool(take_next, bench, who, after=after, qid=qid, run_id=run_id)
    return redirect(pair_href(following) if following else href("/support", finished="1"))


async def open_post(request: Request) -> Response:
    """The assessor goes to this pair (previous/next): lease it when it is open to them or theirs to grade
    again, drop the lease they held, and show it."""
    form = await _form(request)
    bench, who = bench_of(request), me(request)
    key = _pair(lambda name: field(form, name))
    await run_in_threadpool(hold, bench, who, key)
    return redirect(pair_href(key))

