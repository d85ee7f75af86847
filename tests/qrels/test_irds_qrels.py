"""Qrels from `irds:<dataset-id>`: read_qrels, `qrels validate`, `qrels stats` and `eval retrieval --qrels`."""
from __future__ import annotations

import pytest

from irds_local import register_local_dataset
from trecbench.errors import InputError
from trecbench.qrels import read_qrels, validate_qrels

QRELS = [("q1", "d1", 2), ("q1", "d3", 0), ("q2", "d2", 1), ("q2", "d9", -1)]


@pytest.fixture
def dataset(tmp_path, monkeypatch):
    return register_local_dataset(
        tmp_path, "local/qrels", docs=[("d1", "cats sit"), ("d2", "dogs run"), ("d3", "birds")],
        queries=[("q1", "cats"), ("q2", "dogs")], qrels=QRELS, monkeypatch=monkeypatch)


def test_read_qrels_of_a_dataset_equals_reading_the_same_qrels_file(dataset, tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS))
    from_irds, from_file = read_qrels(dataset), read_qrels(path)
    assert from_irds.attrs["path"] == dataset
    assert from_irds.dtypes.to_dict() == from_file.dtypes.to_dict()
    assert from_irds.reset_index(drop=True).equals(from_file.reset_index(drop=True))


def test_dataset_without_qrels_is_an_input_error(tmp_path, monkeypatch):
    source = register_local_dataset(tmp_path, "local/noqrels", docs=[("d1", "x")], monkeypatch=monkeypatch)
    with pytest.raises(InputError, match="irds:local/noqrels: this ir_datasets dataset has no qrels"):
        read_qrels(source)
    assert [str(p) for p in validate_qrels(source)] == ["irds:local/noqrels: this ir_datasets dataset has no qrels"]


def test_pair_judged_twice_in_a_dataset_is_reported_with_its_record_number(tmp_path, monkeypatch):
    source = register_local_dataset(tmp_path, "local/twice", qrels=[("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d1", 2)],
                                    monkeypatch=monkeypatch)
    assert [str(p) for p in validate_qrels(source)] == [
        "irds:local/twice:3: docid 'd1' judged twice for topic 'q1' (first in qrels record 1)"]


def test_qrels_validate_and_stats_accept_irds(cli_run, dataset):
    result = cli_run("qrels", "validate", dataset)
    assert result.exit_code == 0
    assert result.stdout == f"{dataset}: ok, 2 topics, 4 judgments, 2 relevant\n"
    stats = cli_run("qrels", "stats", dataset, "--format", "csv")
    assert stats.exit_code == 0
    assert stats.stdout.splitlines()[-1] == "all,3,2,1,1,1,1"


def test_eval_retrieval_with_irds_qrels_gives_the_same_numbers_as_the_file(cli_run, dataset, tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS))
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d3 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq2 Q0 d2 1 1.0 r\n")
    from_irds = cli_run("eval", "retrieval", "--qrels", dataset, run, "-m", "all_trec", "-q", "--format", "trec_eval")
    from_file = cli_run("eval", "retrieval", "--qrels", qrels, run, "-m", "all_trec", "-q", "--format", "trec_eval")
    assert from_irds.exit_code == 0 and from_file.exit_code == 0
    assert from_irds.stdout == from_file.stdout


def test_unknown_dataset_in_qrels_stats_exits_2_without_traceback(cli_run):
    result = cli_run("qrels", "stats", "irds:no/such/dataset")
    assert result.exit_code == 2
    assert result.stderr == "irds:no/such/dataset: unknown ir_datasets dataset 'no/such/dataset'\n"
