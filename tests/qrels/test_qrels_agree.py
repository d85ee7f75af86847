"""`trecbench qrels agree`: kappa, confusion, grading bias, and agreement of system rankings."""
from __future__ import annotations

import json
from collections import Counter

import pytest


def _write(path, rows):
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    return path


def test_kappa_of_a_textbook_two_by_two_table(tmp_path, cli_run):
    # 20 both relevant, 15 both not, 5 and 10 disagreements: po = .7, pe = .5, kappa = .4
    rows_a, rows_b = [], []
    cells = [(1, 1, 20), (1, 0, 5), (0, 1, 10), (0, 0, 15)]
    i = 0
    for ga, gb, n in cells:
        for _ in range(n):
            rows_a.append(("q1", f"d{i}", ga))
            rows_b.append(("q1", f"d{i}", gb))
            i += 1
    a, b = _write(tmp_path / "a.txt", rows_a), _write(tmp_path / "b.txt", rows_b)
    r = cli_run("qrels", "agree", a, b, "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["kappa"] == pytest.approx(0.4)
    assert doc["kappa_binary"] == pytest.approx(0.4)
    assert doc["confusion"]["1"]["0"] == 5


def test_unjudged_and_one_sided_pairs_are_left_out(tmp_path, cli_run):
    a = _write(tmp_path / "a.txt", [("q1", "d1", 1), ("q1", "d2", -1), ("q1", "d3", 0), ("q1", "d4", 2)])
    b = _write(tmp_path / "b.txt", [("q1", "d1", 1), ("q1", "d2", 1), ("q1", "d3", 0)])
    doc = json.loads(cli_run("qrels", "agree", a, b, "--format", "json").stdout)
    assert doc["pairs"] == 2 and doc["only_a"] == 1 and doc["only_b"] == 1
    assert doc["kappa"] == pytest.approx(1.0)


def _hand_kappa(pairs, weight):
    n = len(pairs)
    grades = sorted({g for p in pairs for g in p})
    count = Counter(pairs)
    row = Counter(a for a, _ in pairs)
    col = Counter(b for _, b in pairs)
    observed = sum(weight(a, b) * count[(a, b)] for a in grades for b in grades) / n
    expected = sum(weight(a, b) * row[a] * col[b] for a in grades for b in grades) / (n * n)
    return 1 - observed / expected


def test_nist_and_umbrela_kappa_on_trec_rag_2025_match_a_hand_computation(shared, cli_run):
    nist = shared / "rag" / "qrels.rag25.test.txt"
    llm = shared / "rag" / "qrels.rag25.test-umbrela2.txt"
    r = cli_run("qrels", "agree", nist, llm, "--format", "json", "--threshold", "2")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)

    def grades(path):
        return {(q, d): int(g) for q, _, d, g in (line.split() for line in path.read_text().splitlines())}

    a, b = grades(nist), grades(llm)
    pairs = [(a[k], b[k]) for k in a if k in b]
    assert doc["pairs"] == len(pairs) == 10284
    assert doc["kappa"] == pytest.approx(_hand_kappa(pairs, lambda x, y: x != y), abs=1e-12)
    assert doc["kappa_linear"] == pytest.approx(_hand_kappa(pairs, lambda x, y: abs(x - y)), abs=1e-12)
    binary = [(int(x >= 2), int(y >= 2)) for x, y in pairs]
    assert doc["kappa_binary"] == pytest.approx(_hand_kappa(binary, lambda x, y: x != y), abs=1e-12)


def test_system_rankings_under_two_qrels_are_compared(shared, cli_run):
    real = shared / "real"
    qrels = real / "anserini-tools" / "qrels.dl19-passage.txt"
    runs = sorted((real / "rank_llm").glob("*dl19.txt"))
    r = cli_run("qrels", "agree", qrels, qrels, *[x for run in runs for x in ("--runs", run)], "-m", "nDCG@10",
                "--format", "json")
    doc = json.loads(r.stdout)
    ranking = doc["rankings"][0]
    assert ranking["kendall_tau"] == pytest.approx(1.0) and ranking["spearman_rho"] == pytest.approx(1.0)
    assert len(ranking["scores"]) == 4


def test_two_judges_sharing_no_pair_are_told_so_in_one_line(tmp_path, cli_run):
    # two people judging one pool without double assignment; a pair B left unjudged (-1) is not shared
    a = _write(tmp_path / "a.txt", [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d9", 2)])
    b = _write(tmp_path / "b.txt", [("q1", "d3", 1), ("q1", "d2", -1), ("q2", "d8", 0)])
    for fmt in ("table", "json"):
        r = cli_run("qrels", "agree", a, b, "--format", fmt)
        assert r.exit_code == 2, r.output
        assert r.stdout == ""
        assert r.stderr == f"{a}, {b}: no pair judged in both (A judged 3, B judged 2)\n"
