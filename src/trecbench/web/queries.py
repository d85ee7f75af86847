"""What an assessor judges next, who holds which pair, and how far each topic is, over the bench store.

The work is the served pool's (the newest, or `serve --pool`'s) duplicate-group representatives, topic by
topic in priority order. A pair
is *complete* when `per_pair` different people (1, or 2 with double judging) have judged it. A lease
(`leases` table, ~10 minutes, renewed on view, released on judge) offers a pair to one assessor at a
time: a pair is open to an assessor who has not judged it while judgments plus other assessors' live
leases number fewer than `per_pair`. An assessor holds at most one lease: the pair in front of them.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import NamedTuple

from trecbench.errors import InputError
from trecbench.store.workspace import Workspace

LEASE_SECONDS = 600.0

class Pool(NamedTuple):
    id: int
    name: str
    created_at: str  # with the id and name: a pool deleted and made again under that name is another pool
    since: int = 0  # people's judgments count for the pool from the row id after this (an audit queue's)


class TopicProgress(NamedTuple):
    qid: str
    text: str
    total: int  # representatives to judge
    complete: int  # judged by `per_pair` people
    mine: int  # judged by this assessor


class Person(NamedTuple):
    """How much one person did in the pool: pairs judged, pairs skipped (with a comment or none)."""

    name: str
    judged: int
    skipped: int


class Lease(NamedTuple):
    assessor: str
    qid: str
    docid: str


class PeopleAgreement(NamedTuple):
    """Two people on the pairs both judged: how many, how many with the same grade, and Cohen's kappa (None
    when it is not defined: both gave one and the same grade throughout)."""

    a: str
    b: str
    pairs: int
    same: int
    kappa: float | None


class TopicLeft(NamedTuple):
    qid: str
    text: str
    total: int
    complete: int
    held: int  # pairs someone holds a lease on now

    @property
    def left(self) -> int:
        return self.total - self.complete


class Overview(NamedTuple):
    """What the organiser's page shows of the pool being judged."""

    people: list[Person]
    leases: list[Lease]
    agreement: list[PeopleAgreement]
    topics: list[TopicLeft]
    skips: list  # trecbench.store.judgments.Skip, of the pool's pairs


class Suggestion(NamedTuple):
    """A model's latest successful judgment of a pair: shown on request, never recorded as the assessor's."""

    grade: int
    judge: str
    rationale: str | None


@dataclass
class TopicState:
    """One topic's pairs in judging order, each person's latest grade and the live leases."""

    qid: str
    docs: list[str]
    grades: dict[str, dict[str, int]] = field(default_factory=dict)  # docid -> {assessor: latest grade}
    leases: dict[str, set[str]] = field(default_factory=dict)  # docid -> assessors holding a live lease

    def grade_of(self, docid: str, assessor: str) -> int | None:
        return self.grades.get(docid, {}).get(assessor)

    def is_open(self, docid: str, assessor: str, per_pair: int) -> bool:
        """Not judged by `assessor`, and not yet taken by enough other people (judged or leased)."""
        judged = self.grades.get(docid, {})
        if assessor in judged:
            return False
        others = {a for a in self.leases.get(docid, ()) if a != assessor and a not in judged}
        return len(judged) + len(others) < per_pair

    def is_visible(self, docid: str, assessor: str, per_pair: int) -> bool:
        """What n/p step through: pairs the assessor judged (to revise) and pairs open to them."""
        return self.grade_of(docid, assessor) is not None or self.is_open(docid, assessor, per_pair)

    def neighbour(self, docid: str, assessor: str, per_pair: int, step: int) -> str | None:
        """The next (step=1) or previous (step=-1) visible pair from `docid` in judging order."""
        if docid not in self.docs:
            return None
        i = self.docs.index(docid) + step
        while 0 <= i < len(self.docs):
            if self.is_visible(self.docs[i], assessor, per_pair):
                return self.docs[i]
            i += step
        return None

    def first_open(self, assessor: str, per_pair: int, after: str | None = None) -> str | None:
        """The first open pair after `after` in judging order, wrapping round to pairs skipped earlier."""
        start = self.docs.index(after) + 1 if after in self.docs else 0
        for docid in self.docs[start:] + self.docs[:start]:
            if self.is_open(docid, assessor, per_pair):
                return docid
        return None

    def complete(self, per_pair: int) -> int:
        return sum(1 for d in self.docs if len(self.grades.get(d, {})) >= per_pair)

    def mine(self, assessor: str) -> int:
        return sum(1 for d in self.docs if assessor in self.grades.get(d, {}))


def serving_pool(ws: Workspace, name: str | None = None) -> Pool | None:
    """The pool being judged: `Workspace.pool(name)`, the newest when no name; None when there is none (or
    the pool named was deleted while the app runs)."""
    try:
        chosen = ws.pool(name)
    except InputError:
        return None
    return Pool(chosen.id, chosen.name, chosen.created_at, chosen.since) if chosen else None


def in_pool(ws: Workspace, pool: Pool, qid: str, docid: str) -> bool:
    """Whether the pair is one of the pool's representatives (what is offered for judging)."""
    return ws.is_representative(pool.id, qid, docid)


class Topics:
    """Each topic's pairs in judging order and each person's latest grade, kept from one look to the next:
    a pool's candidates never change, and judgment rows are only added (ids grow), so a look reads the
    topic's judgments added since the one before (none, mostly) and its live leases, not its whole pool
    and every judgment of it again. A topic with fewer rows than seen before (a restored backup) is read
    again from the start."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._docs: dict[tuple[Pool, str], list[str]] = {}
        # (qid, the pool's since) -> (last row id read, grades)
        self._grades: dict[tuple[str, int], tuple[int, dict[str, dict[str, int]]]] = {}

    def state(self, ws: Workspace, pool: Pool, qid: str, now: float | None = None) -> TopicState:
        """The topic's state now (inside a write transaction: as that transaction sees it). Its `grades` are
        shared with other looks: read them, never change them."""
        docs = self._docs.get((pool, qid))
        if docs is None:
            docs = ws.representatives(pool.id, qid)
            if docs:  # not a topic of the pool: nothing kept (any name can be asked for)
                self._docs[(pool, qid)] = docs
        return _with_leases(ws, TopicState(qid, docs, self._people(ws, qid, pool.since)), now)

    def _people(self, ws: Workspace, qid: str, since: int = 0) -> dict[str, dict[str, int]]:
        """People's grades of the topic recorded after row `since` (the pool's: an audit queue's old grades
        are not its judgments)."""
        with self._lock:
            seen, grades = self._grades.get((qid, since), (since, {}))
            if seen > since and ws.newest_judgment(qid) < seen:
                seen, grades = since, {}
            rows = ws.judgment_rows(qid=qid, kind="human", after=seen)
            if rows:  # a new dict: a state handed out never changes
                grades = _with_grades(grades, rows)
                self._grades[(qid, since)] = (rows[-1].id, grades)
            return grades


def _with_grades(grades: dict[str, dict[str, int]], rows: list) -> dict[str, dict[str, int]]:
    """`grades` ({docid: {assessor: grade}}) with the judgment rows (id order: the last is the current grade)
    added, as a new dict with new inner dicts where a grade changed: the one given is not changed."""
    grades = dict(grades)
    for row in rows:
        if row.grade is not None:  # always, for a successful judgment
            grades[row.docid] = {**grades.get(row.docid, {}), row.judge: row.grade}
    return grades


def _with_leases(ws: Workspace, state: TopicState, now: float | None = None) -> TopicState:
    """Fill in the topic's live leases."""
    now = time.time() if now is None else now
    for docid, assessor in ws.live_leases(state.qid, now):
        state.leases.setdefault(docid, set()).add(assessor)
    return state


class Tally:
    """How far each topic of a pool is, kept up to date from the judgments added since the last look.

    Judgment rows are only ever added (ids grow), so reading the rows with an id above the last one seen
    is enough to keep the counts: the topic list costs a query of the new rows and a pass over the topics,
    not a join of every judgment with the pool (50k judgments x 100k pool entries: 0.56 s of CPU per
    page). A new pool, or fewer rows than seen before (a restored backup), starts the count again.
    """

    def __init__(self, per_pair: int):
        self.per_pair = per_pair
        self._lock = threading.Lock()
        self._pool: Pool | None = None
        self._seen = 0  # the highest judgment id counted
        self._total: dict[str, int] = {}  # qid -> representatives
        self._judged: dict[tuple[str, str], set[str]] = {}  # representative pair -> the people who judged it
        self._complete: dict[str, int] = {}
        self._mine: dict[tuple[str, str], int] = {}  # (qid, assessor) -> pairs judged

    def progress(self, ws: Workspace, pool: Pool, assessor: str) -> list[TopicProgress]:
        """One row per topic of the pool, in topic order."""
        with self._lock:
            self._update(ws, pool)
            texts = ws.topic_texts()
            return [TopicProgress(q, texts.get(q, ""), n, self._complete.get(q, 0), self._mine.get((q, assessor), 0))
                    for q, n in sorted(self._total.items(), key=lambda item: topic_order(item[0]))]

    def _update(self, ws: Workspace, pool: Pool) -> None:
        with ws.snapshot():  # one snapshot for the newest id and the rows up to it
            newest = ws.newest_judgment()
            if pool != self._pool or newest < self._seen:
                self._restart(ws, pool)
            if newest > self._seen:
                for row in ws.judgment_rows(kind="human", after=self._seen):  # the same snapshot: up to `newest`
                    self._count(row.qid, row.docid, row.judge)
                self._seen = newest

    def _restart(self, ws: Workspace, pool: Pool) -> None:
        self._pool, self._seen = pool, pool.since
        self._judged, self._complete, self._mine = {}, {}, {}
        self._total = {}
        for qid, docid in ws.representative_pairs(pool.id):
            self._total[qid] = self._total.get(qid, 0) + 1
            self._judged[(qid, docid)] = set()

    def _count(self, qid: str, docid: str, name: str) -> None:
        people = self._judged.get((qid, docid))
        if people is None or name in people:  # not a representative of the pool, or judged again
            return
        people.add(name)
        self._mine[(qid, name)] = self._mine.get((qid, name), 0) + 1
        if len(people) == self.per_pair:
            self._complete[qid] = self._complete.get(qid, 0) + 1


def take_next(ws: Workspace, topics: Topics, pool: Pool, qid: str, assessor: str, per_pair: int, *,
              after: str | None = None, lease_seconds: float = LEASE_SECONDS) -> str | None:
    """Choose the assessor's next open pair of the topic and lease it to them, in one write transaction so
    that two assessors asking at the same moment (in one server process or several) get different pairs;
    None when nothing is left."""
    with ws.transaction():
        now = time.time()
        docid = topics.state(ws, pool, qid, now).first_open(assessor, per_pair, after)
        if docid is not None:
            ws.lease(qid, docid, assessor, now + lease_seconds, at=now)
        return docid


def hold(ws: Workspace, qid: str, docid: str | None, assessor: str, per_pair: int, *,
         lease_seconds: float = LEASE_SECONDS, since: int = 0) -> bool:
    """The assessor goes to this pair: drop their other leases and (re)lease this one if it is open to them
    (None: a pair that is not the pool's, which is never leased). Returns whether they hold it."""
    with ws.transaction():
        now = time.time()
        if docid is not None:  # the pair's judgments only, not the topic's
            grades = _with_grades({}, ws.judgment_rows(qid=qid, docid=docid, kind="human", after=since or None))
            if _with_leases(ws, TopicState(qid, [docid], grades), now).is_open(docid, assessor, per_pair):
                ws.lease(qid, docid, assessor, now + lease_seconds, at=now)
                return True
        ws.drop_leases(assessor)
        return False


def release(ws: Workspace, qid: str, docid: str, assessor: str) -> None:
    ws.drop_leases(assessor, qid, docid)


def model_suggestion(ws: Workspace, qid: str, docid: str) -> Suggestion | None:
    rows = ws.judgment_rows(qid=qid, docid=docid, kind="model", newest_first=True, limit=1)
    if not rows or rows[0].grade is None:
        return None
    return Suggestion(rows[0].grade, rows[0].judge_label, rows[0].rationale)


def overview(ws: Workspace, topics: Topics, progress: list[TopicProgress], pool: Pool, per_pair: int) -> Overview:
    """The organiser's overview of `pool` from each topic's state (`progress`: the topic list's rows)."""
    now = time.time()
    judged: dict[str, dict[str, dict[str, int]]] = {}  # assessor -> {qid: {docid: grade}}
    leases: list[Lease] = []
    left: list[TopicLeft] = []
    pairs: set[tuple[str, str]] = set()
    for row in progress:
        state = topics.state(ws, pool, row.qid, now)
        for docid in state.docs:
            pairs.add((row.qid, docid))
            for name, grade in state.grades.get(docid, {}).items():
                judged.setdefault(name, {}).setdefault(row.qid, {})[docid] = grade
        held = {(d, a) for d, names in state.leases.items() for a in names if a not in state.grades.get(d, {})}
        leases += [Lease(a, row.qid, d) for d, a in sorted(held)]
        left.append(TopicLeft(row.qid, row.text, row.total, row.complete, len({d for d, _ in held})))
    skips = [s for s in ws.skips() if (s.qid, s.docid) in pairs]
    names = sorted(judged.keys() | {s.assessor for s in skips})
    people = [Person(n, sum(len(d) for d in judged.get(n, {}).values()), sum(1 for s in skips if s.assessor == n))
              for n in names]
    return Overview(people, leases, _agreement(judged), left, skips)


def _agreement(judged: dict[str, dict[str, dict[str, int]]]) -> list[PeopleAgreement]:
    """Each two people who judged a pair in common, by `trecbench.qrels.agreement`."""
    found = []
    names = sorted(judged)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            shared = [(q, d) for q, docs in judged[a].items() for d in docs if d in judged[b].get(q, {})]
            if not shared:
                continue
            from trecbench.qrels.agreement import agreement

            kappa = agreement(judged[a], judged[b]).kappa
            same = sum(1 for q, d in shared if judged[a][q][d] == judged[b][q][d])
            found.append(PeopleAgreement(a, b, len(shared), same, None if kappa != kappa else kappa))
    return found


def topic_order(qid: str) -> tuple:
    """The sort key of a topic id on the assessor pages: numeric ids in numeric order (2 before 10), others
    after them as strings."""
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)
