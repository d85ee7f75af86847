"""The grade selection over plain rows (`choose_grades`) gives exactly what the pandas selection it replaced
gave, on many seeded random judgment sets: judge precedence, majority votes and their ties, `--judge`,
failures and stored duplicate copies never a grade, and, through a workspace, propagation through
duplicate groups and `qrels export` on the command line."""
from __future__ import annotations

import random

import pandas as pd
import pytest

from trecbench.nuggets.relevant import relevant_by_topic
from trecbench.qrels.select import (
    KIND_ORDER,
    choose_grades,
    judge_reference,
    latest_per_judge,
    propagated_qrels,
    select_grades,
    workspace_qrels,
)
from trecbench.store.workspace import Judge, Judgment, Workspace, load_pool, save_pool
from trecbench.qrels.select import propagate

COLUMNS = ["id", "query_id", "doc_id", "grade", "status", "propagated_from", "judge_kind", "judge"]
NAMES = ["ann", "bob", "cy"]  # the same name under several kinds too
KINDS = ["human", "import", "model"]


def pandas_selection(judgments: pd.DataFrame, *, judge=None, prefer="human", majority=False) -> pd.DataFrame:
    """The reference: the selection as this package computed it with pandas before the row rule."""
    ok = judgments[judgments["status"] == "ok"]
    ok = ok[ok["propagated_from"].isna()]
    if judge is not None:
        name, kind = judge_reference(judge)
        ok = ok[(ok["judge"] == name) & ((ok["judge_kind"] == kind) if kind else True)]
        if ok.empty:
            raise ValueError(f"no judgments by {judge!r}")
    latest = ok.sort_values("id").groupby(["query_id", "doc_id", "judge_kind", "judge"], sort=False).tail(1)
    if majority and judge is None:
        counts = latest.groupby(["query_id", "doc_id", "grade"]).size().rename("votes").reset_index()
        counts = counts.sort_values(["query_id", "doc_id", "votes", "grade"], ascending=[True, True, False, True])
        out = counts.groupby(["query_id", "doc_id"], sort=False).head(1).rename(columns={"grade": "relevance"})
        out = out[["query_id", "doc_id", "relevance"]].assign(judge="majority")
        return out.reset_index(drop=True)
    ranked = latest.copy()
    ranked["order"] = ranked["judge_kind"].map({"human": KIND_ORDER, "model": {"model": 0, "import": 1, "human": 2},
                                                 "latest": {k: 0 for k in KIND_ORDER}}[prefer])
    ranked = ranked.sort_values(["query_id", "doc_id", "order", "id"], ascending=[True, True, True, False])
    best = ranked.groupby(["query_id", "doc_id"], sort=False).head(1)
    return best.rename(columns={"grade": "relevance"})[["query_id", "doc_id", "relevance", "judge"]]


def as_rows(frame: pd.DataFrame) -> list[tuple]:
    return [(q, d, int(g), j) for q, d, g, j in zip(frame["query_id"], frame["doc_id"], frame["relevance"],
                                                     frame["judge"])]


def random_judgments(rng: random.Random) -> list[tuple]:
    """Rows (id, qid, docid, grade, status, propagated_from, kind, name): few pairs, many judges per pair."""
    rows = []
    for i in range(1, rng.randint(1, 60) + 1):
        status = "failed" if rng.random() < 0.15 else "ok"
        grade = None if status == "failed" else rng.choice([-1, 0, 0, 1, 2, 3])
        source = f"d{rng.randint(0, 5)}" if rng.random() < 0.1 else None
        rows.append((i, f"q{rng.randint(1, 3)}", f"d{rng.randint(0, 5)}", grade, status, source,
                     rng.choice(KINDS), rng.choice(NAMES)))
    return rows


def options(rng: random.Random) -> dict:
    judge = rng.choice([None, None, None, "ann", "bob (model)", "cy (import)", "nobody"])
    return {"judge": judge, "prefer": rng.choice(["human", "model", "latest"]), "majority": rng.random() < 0.35}


def selected(selection, frame: pd.DataFrame, **kwargs) -> list[tuple]:
    return as_rows(selection(frame, **kwargs))


def outcome(f, *args, **kwargs):
    try:
        return f(*args, **kwargs)
    except ValueError as e:
        return ("ValueError", str(e))


def test_the_row_rule_is_the_pandas_selection_on_random_judgment_sets():
    rng = random.Random(20261201)
    for _ in range(300):
        rows = random_judgments(rng)
        kwargs = options(rng)
        frame = pd.DataFrame(rows, columns=COLUMNS)
        expected = outcome(selected, pandas_selection, frame, **kwargs)
        shuffled = rows[:]
        rng.shuffle(shuffled)  # the rule does not depend on the rows' order, only on their ids
        assert outcome(choose_grades, shuffled, **kwargs) == expected, (rows, kwargs)
        assert outcome(selected, select_grades, frame, **kwargs) == expected, (rows, kwargs)


def test_latest_per_judge_keeps_each_judges_newest_row_of_each_pair():
    rng = random.Random(7)
    for _ in range(200):
        frame = pd.DataFrame(random_judgments(rng), columns=COLUMNS).sample(frac=1, random_state=rng.randint(0, 99))
        expected = frame.sort_values("id").groupby(["query_id", "doc_id", "judge_kind", "judge"], sort=False).tail(1)
        assert latest_per_judge(frame)["id"].tolist() == expected["id"].tolist()


def test_failures_and_copies_from_a_duplicate_are_never_a_grade():
    rows = [(1, "q", "a", 3, "ok", None, "model", "m"), (2, "q", "a", None, "failed", None, "human", "ann"),
            (3, "q", "b", 2, "ok", "a", "human", "ann"), (4, "q", "c", None, "failed", None, "model", "m")]
    assert choose_grades(rows) == [("q", "a", 3, "m")]
    assert choose_grades(rows, majority=True) == [("q", "a", 3, "majority")]
    with pytest.raises(ValueError, match="no judgments by 'ann'"):
        choose_grades(rows, judge="ann")
    with pytest.raises(ValueError, match="prefer must be"):
        choose_grades(rows, prefer="newest")


def random_workspace(rng: random.Random, root) -> tuple[Workspace, pd.DataFrame]:
    """A workspace with random judgments and a pool with duplicate groups; returns it and its pool."""
    ws = Workspace.init(root, name="sel")
    pool = []
    for q in ("q1", "q2", "q3"):
        for n, d in enumerate(f"d{k}" for k in range(6)):
            group = rng.choice([None, "g1", "g2"])
            pool.append((q, d, n, group, group is None or rng.random() < 0.4))
    save_pool(ws, "p", "test", {}, pd.DataFrame(pool, columns=["query_id", "doc_id", "priority", "group",
                                                               "representative"]))
    judges = {(k, n): Judge(k, n, model="x" if k == "model" else None) for k in KINDS for n in NAMES}
    ws.record_many([Judgment(q, d, g, judges[(k, n)], status=s, propagated_from=src,
                             error="timeout" if s == "failed" else None)
                    for _, q, d, g, s, src, k, n in random_judgments(rng)])
    return ws, load_pool(ws)


def test_workspace_qrels_read_as_rows_are_the_pandas_selection_propagated(tmp_path):
    rng = random.Random(15)
    for n in range(25):
        ws, pool = random_workspace(rng, tmp_path / f"ws{n}")
        kwargs = options(rng)
        reference = outcome(pandas_selection, ws.judgments(), **kwargs)
        made = outcome(workspace_qrels, ws, **kwargs)
        if isinstance(reference, tuple):
            assert made == reference
            continue
        expected, propagated = propagated_qrels(reference.reset_index(drop=True), pool)
        assert made.qrels.astype(str).values.tolist() == expected.astype(str).values.tolist(), kwargs
        assert (made.judged, made.propagated) == (len(expected) - propagated, propagated)
        for qid in ("q1", "q2") if kwargs["judge"] is None else ():  # (a topic the judge did not judge: refused)
            one = workspace_qrels(ws, qid=qid, **kwargs).qrels
            assert one.astype(str).values.tolist() == made.qrels[made.qrels["query_id"] == qid].astype(str).values.tolist()
        if not kwargs["judge"] and not kwargs["majority"] and kwargs["prefer"] == "human":
            relevant = {}
            for q, d, g in zip(reference["query_id"], reference["doc_id"], reference["relevance"]):
                if g >= 1:
                    relevant.setdefault(q, []).append((d, int(g)))
            assert relevant_by_topic(ws) == {q: sorted(v, key=lambda e: (-e[1], e[0])) for q, v in relevant.items()}
        ws.close()


def test_qrels_export_writes_the_pandas_selection(tmp_path, cli_run):
    rng = random.Random(3)
    for n, (flags, kwargs) in enumerate([([], {}), (["--majority"], {"majority": True}),
                                         (["--prefer", "model"], {"prefer": "model"}),
                                         (["--prefer", "latest"], {"prefer": "latest"})]):
        ws, pool = random_workspace(rng, tmp_path / f"ws{n}")
        expected, _ = propagated_qrels(pandas_selection(ws.judgments(), **kwargs).reset_index(drop=True), pool)
        ws.close()
        out = tmp_path / f"q{n}.txt"
        r = cli_run("qrels", "export", "-w", tmp_path / f"ws{n}", "-o", out, *flags)
        assert r.exit_code == 0, r.output
        assert out.read_text().splitlines() == [f"{q} {i} {d} {g}" for q, i, d, g in zip(
            expected["query_id"], expected["iteration"], expected["doc_id"], expected["relevance"])]


def test_a_judge_without_judgments_is_refused_on_the_command_line(tmp_path, cli_run):
    ws, _ = random_workspace(random.Random(1), tmp_path / "ws")
    ws.close()
    r = cli_run("qrels", "export", "-w", tmp_path / "ws", "-o", tmp_path / "q.txt", "--judge", "nobody")
    assert r.exit_code == 2 and "no judgments by 'nobody'" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "q.txt").exists()


def test_a_group_lends_its_representatives_grade_when_several_members_were_judged():
    pool = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "group": ["a", "a", "a"],
                         "representative": [True, False, False]})
    grades = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["b", "a"], "relevance": [0, 2], "judge": ["j", "j"]})
    qrels, added = propagate(grades, pool)
    lent = qrels[qrels["doc_id"] == "c"]
    assert added == 1 and lent["relevance"].tolist() == [2] and lent["propagated_from"].tolist() == ["a"]
