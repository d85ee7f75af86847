"""Pools: the depth-k union in trec_eval order, candidates' runs and ranks, priorities, budgets, the pool file."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from trecbench.errors import InputError
from trecbench.pooling import Pool, build_pool, read_pool, top_k, write_pool


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run_frame(rows: list[tuple[str, str, float]], runid: str = "r") -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    frame.attrs["runid"] = runid
    return frame


def trec_eval_top(rows: list[tuple[str, str, float]], depth: int) -> set[tuple[str, str]]:
    """The reference: per topic, sort by score (as a C float) descending, then docid descending; keep `depth`."""
    by_topic: dict[str, list[tuple[str, float]]] = {}
    for q, d, s in rows:
        by_topic.setdefault(q, []).append((d, float(np.float32(s))))
    out = set()
    for q, docs in by_topic.items():
        docs.sort(key=lambda x: x[0].encode(), reverse=True)
        docs.sort(key=lambda x: -x[1])  # stable: ties keep docid descending
        out |= {(q, d) for d, _ in docs[:depth]}
    return out


def pairs(pool: Pool) -> set[tuple[str, str]]:
    return set(zip(pool.candidates["query_id"], pool.candidates["doc_id"]))


def test_ties_break_by_docid_descending_as_strings_so_9_beats_10(tmp_path):
    run = write(tmp_path, "run.txt", "q1 Q0 10 1 1.0 a\nq1 Q0 9 2 1.0 a\nq1 Q0 100 3 1.0 a\nq1 Q0 8 4 0.5 a\n")
    pool = build_pool([run], depth=1)
    assert pairs(pool) == {("q1", "9")}
    assert build_pool([run], depth=2).candidates["doc_id"].tolist() == ["9", "100"]


def test_depth_pool_equals_union_of_each_runs_top_k_in_trec_eval_order():
    rng = random.Random(3)
    runs, reference = {}, set()
    for r in range(5):
        rows = []
        for q in ("1", "2", "10", "q3"):
            docs = rng.sample([str(i) for i in range(60)] + [f"d{i}" for i in range(40)], 40)
            rows += [(q, d, float(rng.choice([1, 2, 2, 3, 3.5, 7]))) for d in docs]  # heavy ties
        rng.shuffle(rows)  # file order must not matter
        runs[f"run{r}"] = run_frame(rows, f"run{r}")
        reference |= trec_eval_top(rows, 7)
    assert pairs(build_pool(runs, depth=7)) == reference


def test_scores_equal_as_c_floats_tie_as_in_trec_eval_9():
    # 1.00000001 and 1.0 differ as doubles but not as floats: the tie goes to the greater docid
    cut = top_k(run_frame([("q", "a", 1.00000001), ("q", "b", 1.0)]), 1)
    assert cut.doc_id.strings() == ["b"]


def test_candidates_keep_their_runs_ranks_best_rank_and_run_count():
    a = run_frame([("q", "x", 3), ("q", "y", 2), ("q", "z", 1)], "A")
    b = run_frame([("q", "z", 9), ("q", "x", 8)], "B")
    c = build_pool({"A": a, "B": b}, depth=10).candidates.set_index("doc_id")
    assert c.loc["x", ["best_rank", "n_runs", "runs", "ranks"]].tolist() == [1, 2, "A;B", "1;2"]
    assert c.loc["z", ["best_rank", "n_runs", "runs", "ranks"]].tolist() == [1, 2, "B;A", "1;3"]
    assert c.loc["y", ["best_rank", "n_runs", "runs", "ranks"]].tolist() == [2, 1, "A", "2"]
    assert c["group"].tolist() == c.index.tolist() and c["representative"].all()


def test_depth_priority_is_best_rank_then_more_runs_then_run_order():
    a = run_frame([("q", "a1", 3), ("q", "a2", 2), ("q", "s", 1)], "A")
    b = run_frame([("q", "b1", 3), ("q", "s", 2), ("q", "b3", 1)], "B")
    c = build_pool({"A": a, "B": b}, depth=3).candidates
    assert c["doc_id"].tolist() == ["a1", "b1", "s", "a2", "b3"]
    assert c["priority"].tolist() == [1, 2, 3, 4, 5]


def test_topics_come_in_string_order_with_priorities_per_topic():
    run = run_frame([("2", "a", 1), ("10", "b", 1), ("10", "c", 0.5)])
    c = build_pool([run], depth=5).candidates
    assert c["query_id"].tolist() == ["10", "10", "2"]
    assert c["priority"].tolist() == [1, 2, 1]


def test_rrf_budget_keeps_the_top_n_by_fused_score():
    a = run_frame([("q", d, 10 - i) for i, d in enumerate("abcdef")], "A")
    b = run_frame([("q", d, 10 - i) for i, d in enumerate("fedcba")], "B")
    c_ = run_frame([("q", d, 10 - i) for i, d in enumerate("cxyz")], "C")
    pool = build_pool({"A": a, "B": b, "C": c_}, depth=6, strategy="rrf", budget=2)
    fused = {d: 0.0 for d in "abcdefxyz"}
    for ranking in ("abcdef", "fedcba", "cxyz"):
        for rank, d in enumerate(ranking, start=1):
            fused[d] += 1 / (60 + rank)
    best = sorted(fused, key=lambda d: -fused[d])[:2]
    assert pool.candidates["doc_id"].tolist() == best
    assert pool.info.params == {"k": 60.0} and pool.info.budget == 2


def test_rbp_orders_by_summed_rank_biased_weight():
    a = run_frame([("q", "a", 3), ("q", "b", 2), ("q", "c", 1)], "A")
    b = run_frame([("q", "c", 3), ("q", "b", 2)], "B")
    pool = build_pool({"A": a, "B": b}, depth=3, strategy="rbp")
    # b: 2 x 0.2*0.8 = 0.32; a, c: 0.2 + (0.2*0.64 for c) -> c 0.328 > b 0.32 > a 0.2
    assert pool.candidates["doc_id"].tolist() == ["c", "b", "a"]


def test_adaptive_strategies_keep_every_candidate_and_the_budget_in_metadata():
    a = run_frame([("q", d, 10 - i) for i, d in enumerate("abcd")], "A")
    pool = build_pool([a], depth=4, strategy="maxmean", budget=2)
    assert len(pool) == 4 and pool.info.strategy == "maxmean" and pool.info.budget == 2


def test_pool_file_round_trips(tmp_path):
    a = run_frame([("q1", "d#1", 2), ("q1", "d2", 1), ("q2", "d1", 5)], "A")
    b = run_frame([("q1", "d2", 9), ("q2", "x", 1)], "B")
    pool = build_pool({"A": a, "B": b}, depth=10, strategy="rbp")
    path = tmp_path / "pool.tsv"
    write_pool(pool, path)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("#trecbench-pool/1 {")
    assert lines[1] == "query_id\tdoc_id\tpriority\tbest_rank\tn_runs\truns\tranks\tgroup\trepresentative"
    back = read_pool(path)
    assert back.info == pool.info
    pd.testing.assert_frame_equal(back.candidates.astype(str), pool.candidates.astype(str))
    assert back.candidates["priority"].dtype == np.int64 and back.candidates["representative"].dtype == bool


def test_run_files_are_recorded_with_their_sha256(tmp_path):
    import hashlib

    path = write(tmp_path, "bm25.txt", "q Q0 d 1 1 bm25\n")
    info = build_pool([path]).info.runs[0]
    assert (info.name, info.sha256, info.lines, info.topics) == (
        "bm25", hashlib.sha256(path.read_bytes()).hexdigest(), 1, 1)


def test_runs_sharing_a_runid_are_named_by_file(tmp_path):
    one = write(tmp_path, "one.txt", "q Q0 a 1 1 same\n")
    two = write(tmp_path, "two.txt", "q Q0 b 1 1 same\n")
    assert [r.name for r in build_pool([one, two]).info.runs] == ["one", "two"]


def test_read_pool_reports_every_bad_line_with_its_number(tmp_path):
    a = run_frame([("q", "a", 1), ("q", "b", 0)], "A")
    path = tmp_path / "pool.tsv"
    build_pool([a]).write(path)
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace("\t1\tA", "\tone\tA", 1)
    lines[3] = "too\tfew"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as e:
        read_pool(path)
    assert [str(p) for p in e.value.problems] == [
        f"{path}:3: n_runs must be a positive integer",
        f"{path}:4: 2 fields, expected 9: query_id doc_id priority best_rank n_runs runs ranks group representative",
    ]


def test_read_pool_rejects_a_file_that_is_not_a_pool(tmp_path):
    path = write(tmp_path, "run.txt", "q Q0 d 1 1 r\n")
    with pytest.raises(InputError, match=r"run.txt:1: not a pool file"):
        read_pool(path)


def test_topics_filter_reports_run_topics_absent_from_the_topic_file():
    a = run_frame([("1", "a", 1), ("2", "b", 1), ("99", "c", 1)], "A")
    pool = build_pool([a], topics=["1", "2", "3"], topics_source="topics.tsv")
    assert set(pool.candidates["query_id"]) == {"1", "2"}
    messages = [str(p) for p in pool.problems]
    assert "A: 1 topic(s) not in topics.tsv, not pooled: 99" in messages
    assert "topics.tsv: 1 topic(s) retrieved by no run, nothing to pool: 3" in messages


@pytest.mark.parametrize("content", ["", " \t\r\n\x0b\x0c\n"], ids=["empty", "only whitespace"])
def test_an_empty_or_blank_run_file_is_reported_and_contributes_nothing(tmp_path, content):
    empty = write(tmp_path, "empty.txt", content)
    good = write(tmp_path, "good.txt", "q Q0 d 1 1 g\n")
    pool = build_pool([empty, good])
    assert pairs(pool) == {("q", "d")}
    assert [str(p) for p in pool.problems] == [f"{empty}: empty run: it contributes no documents"]
    assert build_pool([empty]).candidates.empty


def test_a_run_file_with_one_visible_byte_is_not_blank(tmp_path):
    with pytest.raises(InputError):  # not blank: read, and refused as a run line
        build_pool([write(tmp_path, "dot.txt", " \n.\n")])


def test_a_bad_run_file_raises_input_error_with_its_lines(tmp_path):
    bad = write(tmp_path, "bad.txt", "q Q0 d 1 x r\n")
    with pytest.raises(InputError, match=r"bad.txt:1: score 'x' is not a number"):
        build_pool([bad])


def test_dl19_runs_pool_is_the_union_of_their_top_100(shared):
    from trecbench.runs import read_run

    paths = sorted((shared / "real" / "rank_llm").glob("*dl19*"))
    reference = set()
    for p in paths:
        frame = read_run(p)
        reference |= trec_eval_top(list(zip(frame["query_id"], frame["doc_id"], frame["score"])), 100)
    pool = build_pool(paths, depth=100)
    assert pairs(pool) == reference and len(pool) == len(reference)


@pytest.mark.parametrize("depth", [1, 3, 7, None])
def test_a_run_file_read_for_its_top_documents_only_pools_as_the_whole_run(tmp_path, depth):
    from trecbench.evaluation.retrieval.rankings import read_run_columns
    from trecbench.pooling.rank import _read_top

    rnd = random.Random(29)
    lines = []
    for topic in ["10", "9", "t\u00e9", "2"]:
        docs = rnd.sample([f"msmarco_passage_{i:02d}_{rnd.randint(0, 99)}" for i in range(40)] + ["9", "10", "d"], 12)
        docs = list(dict.fromkeys(docs))
        lines += [f"{topic} Q0 {d} 0 {rnd.choice(['1', '2', '2.0', '3.5', '0.1'])} tag" for d in docs]  # many ties
    rnd.shuffle(lines)  # neither topics nor scores in order
    path = tmp_path / "run.txt"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    data = path.read_bytes()
    got, runid, n_lines = _read_top(str(path), data, depth)
    want = top_k(read_run_columns(path), depth)
    assert (runid, n_lines, got.topics) == ("tag", len(lines), want.topics)
    assert got.query_id.strings() == want.query_id.strings() and got.doc_id.strings() == want.doc_id.strings()
    assert got.rank.tolist() == want.rank.tolist()


def test_a_pool_reads_docids_only_down_to_its_depth(tmp_path, cli_run):
    # d1 twice in topic 1: an error when both lines can be pooled, nothing a depth-1 pool reads
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 3 A\n1 Q0 d2 2 2 A\n1 Q0 d1 3 1 A\n2 Q0 d4 1 5 A\n")
    shallow = cli_run("pool", run, "--depth", "1", "-o", tmp_path / "pool.tsv")
    assert shallow.exit_code == 0, shallow.output
    assert read_pool(tmp_path / "pool.tsv").candidates["doc_id"].tolist() == ["d1", "d4"]
    deep = cli_run("pool", run, "--depth", "3", "-o", tmp_path / "deep.tsv")
    assert deep.exit_code == 2 and f"{run}:3: docid 'd1' appears twice in topic '1' (first on line 1)" in deep.stderr
    assert "Traceback" not in deep.output


def test_run_files_are_read_by_as_many_threads_as_the_process_has_cores(tmp_path, monkeypatch, cli_run):
    import concurrent.futures
    import os

    paths = []
    for i in range(3):
        paths.append(tmp_path / f"run{i}.txt")
        paths[-1].write_text(f"1 Q0 d{i} 1 2.0 r{i}\n1 Q0 shared 2 1.0 r{i}\n")
    (tmp_path / "qrels.txt").write_text("1 0 shared 1\n")
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)  # pinned to one core (taskset)

    def no_pool(*args, **kwargs):
        raise AssertionError("a thread pool on one core")

    monkeypatch.setattr(concurrent.futures, "ThreadPoolExecutor", no_pool)
    assert len(build_pool(paths, depth=2)) == 4
    scored = cli_run("eval", "retrieval", "--qrels", tmp_path / "qrels.txt", *paths, "-m", "AP", "--quiet")
    assert scored.exit_code == 0, scored.output


def _random_runs(tmp_path: Path, n_runs: int, seed: int) -> list[Path]:
    """Runs over shared documents, long and short docids (one and several words of `Ids`), tied scores."""
    rnd = random.Random(seed)
    universe = {t: [f"msmarco_doc_{rnd.randint(0, 10**6)}_{i}" if i % 3 else f"d{i}" for i in range(60)]
                for t in ["1", "10", "2", "t\u00e9"]}
    paths = []
    for r in range(n_runs):
        lines = [f"{t} Q0 {d} 0 {rnd.choice(['1', '2', '2.5', '7'])} run{r}"
                 for t, docs in universe.items() for d in rnd.sample(docs, 25)]
        paths.append(write(tmp_path, f"run{r}.txt", "\n".join(lines) + "\n"))
    return paths


@pytest.mark.parametrize("strategy", ["depth", "rrf"])
def test_docids_whose_hashes_collide_pool_as_by_the_exact_sort(tmp_path, monkeypatch, strategy):
    import trecbench.pooling.pool as pool_module

    paths = _random_runs(tmp_path, 6, 31)
    hashed = build_pool(paths, depth=10, strategy=strategy).candidates
    monkeypatch.setattr(pool_module, "_MIX", np.uint64(0))  # every docid of a topic the same hash: all collide
    exact = build_pool(paths, depth=10, strategy=strategy).candidates
    pd.testing.assert_frame_equal(hashed, exact)
    reference: set[tuple[str, str]] = set()
    for p in paths:
        rows = [line.split() for line in p.read_text().splitlines()]
        reference |= trec_eval_top([(q, d, float(s)) for q, _, d, _, s, _ in rows], 10)
    assert pairs(Pool(exact)) == reference and len(exact) == len(reference)


def test_runs_and_ranks_are_joined_alike_in_one_part_and_in_many(tmp_path, monkeypatch):
    import trecbench.pooling.pool as pool_module

    paths = _random_runs(tmp_path, 9, 37)
    whole = build_pool(paths, depth=20).candidates
    monkeypatch.setattr(pool_module, "_JOIN_BYTES", 1)  # a part per table row: every candidate split from the next
    parts = build_pool(paths, depth=20).candidates
    pd.testing.assert_frame_equal(whole, parts)
    row = whole.iloc[0]
    assert len(row["runs"].split(";")) == len(row["ranks"].split(";")) == row["n_runs"]
    assert [int(r) for r in row["ranks"].split(";")] == sorted(int(r) for r in row["ranks"].split(";"))


def _reference_top(rows: list[tuple[str, str, float]], depth: int) -> list[tuple[str, str, int]]:
    """trec_eval's ranking cut at depth, topics in order of first appearance: (topic, docid, rank)."""
    topics = list(dict.fromkeys(q for q, _, _ in rows))
    out = []
    for q in topics:
        docs = [(d, float(np.float32(s))) for t, d, s in rows if t == q]
        docs.sort(key=lambda x: x[0].encode(), reverse=True)
        docs.sort(key=lambda x: -x[1])
        out += [(q, d, i + 1) for i, (d, _) in enumerate(docs[:depth])]
    return out


SORTED_RUN = [("1", "d1", 3.0), ("1", "d2", 2.0), ("1", "d3", 2.0), ("1", "d4", 1.0),
              ("2", "a", 1.0000000001), ("2", "b", 1.0), ("2", "c", 0.5),  # a and b tie as C floats
              ("10", "x", 5.0), ("3", "u", 5.0), ("3", "v", 5.0), ("3", "w", 5.0), ("3", "z", 4.0)]


@pytest.mark.parametrize("depth, in_order", [(1, False), (2, False), (3, True), (4, True)])
@pytest.mark.parametrize("lines", ["sorted", "a topic split in two", "a score rising inside a topic"])
def test_a_sorted_run_is_cut_per_topic_and_a_tie_across_the_cut_goes_to_the_docids(tmp_path, monkeypatch, depth,
                                                                                   in_order, lines):
    from trecbench.pooling import rank
    from trecbench.pooling.rank import _read_top

    rows = list(SORTED_RUN)
    if lines == "a topic split in two":
        rows.append(("1", "d0", 0.5))
    elif lines == "a score rising inside a topic":
        rows[2] = ("1", "d3", 2.5)
    calls = []
    fast = rank._top_in_order
    monkeypatch.setattr(rank, "_top_in_order", lambda *args: calls.append(fast(*args)) or calls[-1])
    path = write(tmp_path, "run.txt", "".join(f"{q} Q0 {d} 0 {s!r} tag\n" for q, d, s in rows))
    got, _, _ = _read_top(str(path), path.read_bytes(), depth)
    assert list(zip(got.query_id.strings(), got.doc_id.strings(), got.rank.tolist())) == _reference_top(rows, depth)
    # depth 1: "a" and "b" tie across the cut of topic 2 (as C floats); depth 2: "d2" and "d3" of topic 1
    expected = [in_order] if lines == "sorted" else [] if lines == "a topic split in two" else [False]
    assert [c is not None for c in calls] == expected  # the cut without the general sort: only where it may


@pytest.mark.parametrize("docid", ["d9", 'say "x"', ""])
def test_the_pool_file_is_written_byte_for_byte_as_pandas_to_csv_writes_it(tmp_path, monkeypatch, docid):
    import trecbench.pooling.pool as pool_module

    rows = [("1", "d1", 3.0), ("1", docid or "d2", 2.0), ("2", "d1", 1.0)]
    pools = [build_pool([run_frame(rows, "A"), run_frame(rows[:1], "B")], depth=5), build_pool([], depth=5)]
    if not docid:
        pools = pools[1:]  # a pool without candidates
    for i, pool in enumerate(pools):
        pool.write(tmp_path / f"direct{i}.tsv")
        monkeypatch.setattr(pool_module, "_plain_lines", lambda c: None)
        pool.write(tmp_path / f"pandas{i}.tsv")
        monkeypatch.undo()
        assert (tmp_path / f"direct{i}.tsv").read_bytes() == (tmp_path / f"pandas{i}.tsv").read_bytes()
    assert ('"say ""x"""' in (tmp_path / "direct0.tsv").read_text()) == (docid == 'say "x"')
