"""Runs and qrels in the shapes the field's tools give (ir_measures, pytrec_eval, ranx, PyTerrier) score as their
files do, each checked against ir_measures' own numbers, wherever a run or qrels is taken; results go back in
the caller's shape.

ranx is not installed here (and is no dependency): `RanxStandIn` is a stand-in of our own with the interface
ranx documents for its Qrels and Run (`to_dict()`, `name`, and like them no Mapping).
"""
from __future__ import annotations

import gzip
import io
from collections.abc import Iterator

import ir_measures
import pandas as pd
import pytest
from ir_measures import AP, RR, P, R, nDCG

import trecbench
from paths import SAMPLE
from trecbench.errors import InputError
from trecbench.evaluation.retrieval.names import MeasureError
from trecbench.files.shapes import pyterrier_qrels, pyterrier_run, qrels_dict, run_dict

QRELS = SAMPLE / "qrels.txt"
RUN = SAMPLE / "runs" / "bm25.txt"
OTHER = SAMPLE / "runs" / "tfidf.txt"
MEASURES = [nDCG@10, P(rel=2)@5, AP, R@100, RR]
NAMES = [str(m) for m in MEASURES]


def reference(qrels=QRELS, run=RUN) -> dict[str, float]:
    """ir_measures' own numbers for the files."""
    found = ir_measures.calc_aggregate(MEASURES, ir_measures.read_trec_qrels(str(qrels)),
                                       ir_measures.read_trec_run(str(run)))
    return {str(m): v for m, v in found.items()}


def row(table: pd.DataFrame, run: str | None = None) -> dict[str, float]:
    """One run's row of evaluate's table (the only row when `run` is None)."""
    chosen = table.iloc[0] if run is None else table.loc[run]
    return {m: chosen[m] for m in NAMES}


def qrels_as_dict(path=QRELS) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for q in ir_measures.read_trec_qrels(str(path)):
        out.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    return out


def run_as_dict(path=RUN) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for d in ir_measures.read_trec_run(str(path)):
        out.setdefault(d.query_id, {})[d.doc_id] = d.score
    return out


class RanxStandIn:
    """ranx's Qrels and Run as ranx documents them: built from {qid: {docid: value}}, `to_dict()`, `name`,
    `keys()` and `[qid]`; not a Mapping."""

    def __init__(self, nested: dict, name: str | None = None):
        self._nested = nested
        self.name = name

    def to_dict(self) -> dict:
        return {q: dict(docs) for q, docs in self._nested.items()}

    def keys(self):
        return self._nested.keys()

    def __getitem__(self, qid: str) -> dict:
        return dict(self._nested[qid])

    def __len__(self) -> int:
        return len(self._nested)


def test_one_measure_name_is_one_measure_not_its_letters():
    table = trecbench.evaluate(QRELS, RUN, "nDCG@10")
    assert list(table.columns) == ["nDCG@10"]
    assert table.iloc[0]["nDCG@10"] == pytest.approx(reference()["nDCG@10"], rel=1e-12)
    assert list(trecbench.evaluate(QRELS, RUN, "P(rel=2)@5").columns) == ["P(rel=2)@5"]


def test_ir_measures_measure_objects_are_taken_alone_or_in_a_list():
    alone = trecbench.evaluate(QRELS, RUN, nDCG@10)
    assert list(alone.columns) == ["nDCG@10"]
    table = trecbench.evaluate(QRELS, RUN, MEASURES)
    assert list(table.columns) == NAMES
    assert row(table) == pytest.approx(reference(), rel=1e-12)
    assert trecbench.score_runs(QRELS, RUN, P(rel=2)@5)[0].scores[-1].label == "P(rel=2)@5"


def test_ir_measures_iterators_and_lists_of_qrels_and_scored_docs_score_as_their_files():
    qrels: Iterator = ir_measures.read_trec_qrels(str(QRELS))
    run: Iterator = ir_measures.read_trec_run(str(RUN))
    assert row(trecbench.evaluate(qrels, run, MEASURES)) == pytest.approx(reference(), rel=1e-12)
    listed = trecbench.evaluate(list(ir_measures.read_trec_qrels(str(QRELS))),
                                {"bm25": list(ir_measures.read_trec_run(str(RUN))),
                                 "tfidf": ir_measures.read_trec_run(str(OTHER))}, MEASURES)
    assert row(listed, "bm25") == pytest.approx(reference(), rel=1e-12)
    assert row(listed, "tfidf") == pytest.approx(reference(run=OTHER), rel=1e-12)


def test_pytrec_eval_and_ranx_dicts_of_dicts_score_as_their_files():
    qrels, run, other = qrels_as_dict(), run_as_dict(), run_as_dict(OTHER)
    assert row(trecbench.evaluate(qrels, run, MEASURES)) == pytest.approx(reference(), rel=1e-12)
    named = trecbench.evaluate(qrels, {"bm25": run, "tfidf": other}, MEASURES)
    assert list(named.index) == ["bm25", "tfidf"]
    assert row(named, "tfidf") == pytest.approx(reference(run=OTHER), rel=1e-12)
    listed = trecbench.evaluate(qrels, [run, other], MEASURES)
    assert len(listed) == 2 and {m: listed.iloc[1][m] for m in NAMES} == pytest.approx(reference(run=OTHER), rel=1e-12)


def test_integer_keys_of_a_dict_of_dicts_are_taken_as_text(tmp_path):
    qrels_file, run_file = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_file.write_text("1 0 10 1\n1 0 11 0\n2 0 12 2\n")
    run_file.write_text("1 Q0 11 1 3.0 r\n1 Q0 10 2 2.0 r\n2 Q0 12 1 1.0 r\n2 Q0 13 2 0.5 r\n")
    qrels = {1: {10: 1, 11: 0}, 2: {12: 2}}
    run = {1: {11: 3.0, 10: 2.0}, 2: {12: 1.0, 13: 0.5}}
    assert row(trecbench.evaluate(qrels, run, MEASURES)) == pytest.approx(reference(qrels_file, run_file), rel=1e-12)


def test_ranx_qrels_and_run_objects_are_read_by_to_dict_and_name():
    qrels = RanxStandIn(qrels_as_dict(), name="sample")
    run = RanxStandIn(run_as_dict(), name="bm25-ranx")
    table = trecbench.evaluate(qrels, run, MEASURES)
    assert list(table.index) == ["bm25-ranx"]
    assert row(table) == pytest.approx(reference(), rel=1e-12)
    two = trecbench.evaluate(qrels, [run, RanxStandIn(run_as_dict(OTHER), name="tfidf-ranx")], MEASURES)
    assert list(two.index) == ["bm25-ranx", "tfidf-ranx"]
    assert row(two, "tfidf-ranx") == pytest.approx(reference(run=OTHER), rel=1e-12)


def pyterrier_frames(path=RUN) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sample's qrels and a run as PyTerrier has them: qid, docno, label; qid, docid (its index's integer
    ids), docno, score, rank (0 at the top)."""
    qrels = trecbench.read_qrels(QRELS)
    run = trecbench.read_run(path)
    pt_qrels = pd.DataFrame({"qid": qrels["query_id"], "docno": qrels["doc_id"], "label": qrels["relevance"]})
    pt_run = pd.DataFrame({"qid": run["query_id"], "docid": range(len(run)), "docno": run["doc_id"],
                           "score": run["score"], "rank": run.groupby("query_id").cumcount()})
    return pt_qrels, pt_run


def test_pyterrier_frames_are_renamed_in():
    pt_qrels, pt_run = pyterrier_frames()
    assert row(trecbench.evaluate(pt_qrels, pt_run, MEASURES)) == pytest.approx(reference(), rel=1e-12)
    assert list(pt_run.columns) == ["qid", "docid", "docno", "score", "rank"]  # the caller's frame is untouched


def test_integer_id_columns_in_a_dataframe_are_taken_as_text_not_refused_row_by_row(tmp_path):
    qrels_file, run_file = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_file.write_text("101 0 7 1\n101 0 8 0\n101 0 9 2\n102 0 7 1\n")
    run_file.write_text("101 Q0 9 1 1.5 r\n101 Q0 7 2 1.5 r\n101 Q0 5 3 0.2 r\n102 Q0 8 1 2.0 r\n102 Q0 7 2 1.0 r\n")
    qrels = pd.DataFrame({"query_id": [101, 101, 101, 102], "doc_id": [7, 8, 9, 7], "relevance": [1, 0, 2, 1]})
    run = pd.DataFrame({"query_id": [101, 101, 101, 102, 102], "doc_id": [9, 7, 5, 8, 7],
                        "score": [1.5, 1.5, 0.2, 2.0, 1.0]})
    assert row(trecbench.evaluate(qrels, run, MEASURES)) == pytest.approx(reference(qrels_file, run_file), rel=1e-12)
    pt_run = run.rename(columns={"query_id": "qid", "doc_id": "docno"})
    assert row(trecbench.evaluate(qrels, pt_run, MEASURES)) == pytest.approx(reference(qrels_file, run_file), rel=1e-12)


def test_read_run_reads_binary_text_and_gzipped_streams():
    data = RUN.read_bytes()
    expected = trecbench.read_run(RUN)
    for stream in (io.BytesIO(data), io.StringIO(data.decode("utf-8")), io.BytesIO(gzip.compress(data))):
        got = trecbench.read_run(stream)
        assert got[["query_id", "doc_id", "score"]].equals(expected[["query_id", "doc_id", "score"]])
        assert got.attrs["runid"] == expected.attrs["runid"] and got.attrs["path"] == "<stream>"
    with open(RUN, "rb") as f:
        assert trecbench.read_run(f).attrs["path"] == str(RUN)
    with open(RUN, "rb") as f:
        assert row(trecbench.evaluate(QRELS, f, MEASURES)) == pytest.approx(reference(), rel=1e-12)


def test_a_bad_stream_is_reported_under_its_name():
    with pytest.raises(InputError, match=r"^<stream>:2: score 'x' is not a number$"):
        trecbench.read_run(io.StringIO("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 x r\n"))


def test_build_pool_takes_every_shape_and_pools_as_from_the_files():
    from_files = trecbench.build_pool({"bm25": RUN, "tfidf": OTHER}, depth=10).candidates
    _, pt_run = pyterrier_frames()
    with open(OTHER, "rb") as f:
        for shaped in ({"bm25": run_as_dict(), "tfidf": RanxStandIn(run_as_dict(OTHER))},
                       {"bm25": pt_run, "tfidf": list(ir_measures.read_trec_run(str(OTHER)))},
                       {"bm25": RUN, "tfidf": f}):
            assert trecbench.build_pool(shaped, depth=10).candidates.equals(from_files)


def test_build_pool_names_a_ranx_run_by_its_name_and_a_stream_by_its_tag():
    pool = trecbench.build_pool([RanxStandIn(run_as_dict(), name="ranx-bm25"), io.BytesIO(OTHER.read_bytes())],
                                depth=5)
    assert [r.name for r in pool.info.runs] == ["ranx-bm25", trecbench.read_run(OTHER).attrs["runid"]]


def test_leave_one_out_takes_runs_in_the_fields_shapes():
    from_files = trecbench.leave_one_out(QRELS, {"bm25": RUN, "tfidf": OTHER}, ["AP"], depth=5)
    shaped = trecbench.leave_one_out(QRELS, {"bm25": run_as_dict(), "tfidf": pyterrier_frames(OTHER)[1]}, ["AP"], depth=5)
    assert shaped.runs.equals(from_files.runs) and shaped.summary.equals(from_files.summary)


def test_agreement_takes_qrels_in_every_shape():
    second = SAMPLE / "qrels.second-assessor.txt"
    expected = trecbench.agreement(trecbench.read_qrels(QRELS), trecbench.read_qrels(second))
    pt_qrels, _ = pyterrier_frames()
    for a, b in ((qrels_as_dict(), RanxStandIn(qrels_as_dict(second))),
                 (pt_qrels, list(ir_measures.read_trec_qrels(str(second)))),
                 (QRELS, second)):
        got = trecbench.agreement(a, b)
        assert (got.pairs, got.only_a, got.only_b) == (expected.pairs, expected.only_a, expected.only_b)
        assert got.kappa == expected.kappa and got.confusion.equals(expected.confusion)


def rows(comparisons) -> list[dict]:
    return [c.row() for c in comparisons]


def same_rows(got: list[dict], expected: list[dict]) -> bool:
    """Comparison rows equal, numbers to 1e-12 (ir_measures' per-topic values may differ in the last bit)."""
    return len(got) == len(expected) and all(
        g.keys() == e.keys() and all(g[k] == pytest.approx(e[k], rel=1e-12, abs=1e-12) if isinstance(e[k], float)
                                     else g[k] == e[k] for k in e) for g, e in zip(got, expected))


def test_compare_runs_takes_per_topic_scores_in_the_fields_shapes():
    runs = {"bm25": RUN, "tfidf": OTHER}
    per_topic = trecbench.evaluate(QRELS, runs, NAMES, per_topic=True)
    expected = rows(trecbench.compare_runs(per_topic, "bm25", iterations=200))
    as_dict = trecbench.evaluate(QRELS, runs, NAMES, per_topic=True, shape="dict")
    as_pyterrier = trecbench.evaluate(QRELS, runs, NAMES, per_topic=True, shape="pyterrier")
    for scores in (as_dict, as_pyterrier):
        assert rows(trecbench.compare_runs(scores, "bm25", iterations=200)) == expected
    # ir_measures' own per-topic numbers (iter_calc's Metric records) compare as ours do
    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    theirs = {name: list(ir_measures.iter_calc(MEASURES, qrels, ir_measures.read_trec_run(str(path))))
              for name, path in runs.items()}
    assert same_rows(rows(trecbench.compare_runs(theirs, "bm25", iterations=200, measures=NAMES)), expected)


def test_results_come_back_as_dicts_for_one_run_or_many():
    single = trecbench.evaluate(QRELS, RUN, MEASURES, shape="dict")
    assert single == pytest.approx(reference(), rel=1e-12)
    many = trecbench.evaluate(QRELS, {"bm25": RUN, "tfidf": OTHER}, MEASURES, shape="dict")
    assert list(many) == ["bm25", "tfidf"] and many["tfidf"] == pytest.approx(reference(run=OTHER), rel=1e-12)
    per_topic = trecbench.evaluate(QRELS, RUN, MEASURES, shape="dict", per_topic=True)
    theirs: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(MEASURES, ir_measures.read_trec_qrels(str(QRELS)),
                                        ir_measures.read_trec_run(str(RUN))):
        theirs.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    assert per_topic.keys() == theirs.keys()
    for qid, values in theirs.items():
        assert per_topic[qid] == pytest.approx(values, rel=1e-12), qid


def test_results_come_back_as_pyterrier_experiment_tables():
    table = trecbench.evaluate(QRELS, {"bm25": RUN, "tfidf": OTHER}, MEASURES, shape="pyterrier")
    assert list(table.columns) == ["name", *NAMES] and table["name"].tolist() == ["bm25", "tfidf"]
    assert table.set_index("name").loc["tfidf"].to_dict() == pytest.approx(reference(run=OTHER), rel=1e-12)
    long = trecbench.evaluate(QRELS, {"bm25": RUN}, ["nDCG@10"], shape="pyterrier", per_topic=True)
    assert list(long.columns) == ["name", "qid", "measure", "value"]
    assert "all" not in set(long["qid"]) and set(long["measure"]) == {"nDCG@10"}
    found = ir_measures.calc_aggregate([nDCG@10], ir_measures.read_trec_qrels(str(QRELS)),
                                       ir_measures.read_trec_run(str(RUN)))[nDCG@10]
    assert long["value"].mean() == pytest.approx(found, rel=1e-12)


def test_an_unknown_result_shape_is_refused_before_scoring():
    with pytest.raises(MeasureError, match="shape must be one of frame, dict, pyterrier, not 'json'"):
        trecbench.evaluate(QRELS, RUN, MEASURES, shape="json")


def test_runs_and_qrels_go_back_as_pyterrier_frames_and_dicts():
    run = trecbench.read_run(RUN)
    pt_run = pyterrier_run(run)
    assert list(pt_run.columns) == ["qid", "docno", "score", "rank"]
    tops = pt_run[pt_run["rank"] == 0]
    assert (tops.set_index("qid")["score"] == pt_run.groupby("qid")["score"].max()).all()
    pt_qrels = pyterrier_qrels(trecbench.read_qrels(QRELS))
    assert list(pt_qrels.columns) == ["qid", "docno", "label"]
    assert row(trecbench.evaluate(pt_qrels, pt_run, MEASURES)) == pytest.approx(reference(), rel=1e-12)
    assert run_dict(run) == run_as_dict() and qrels_dict(trecbench.read_qrels(QRELS)) == qrels_as_dict()
    with pytest.raises(InputError, match="read the run first"):
        pyterrier_run(RUN)


def test_what_is_no_run_or_qrels_is_one_input_error():
    with pytest.raises(InputError, match=r"^<run>: a run is a run file's path or stream, .* not int$"):
        trecbench.evaluate(QRELS, [42], ["AP"])
    with pytest.raises(InputError, match=r"^<qrels>: qrels are a qrels file's path, .* not int$"):
        trecbench.evaluate(42, RUN, ["AP"])
    with pytest.raises(InputError, match=r"^<run dict>: topic 'q1': \{docid: score\} expected, not list$"):
        trecbench.evaluate(QRELS, {"bm25": {"q1": [("d1", 1.0)]}}, ["AP"])
