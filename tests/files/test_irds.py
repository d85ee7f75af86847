"""An `irds:` source whose files cannot be downloaded (the network absent) is one line saying what to download and
where to put it, from the topics, qrels and corpus readers and from the CLI; never ir_datasets' raw RuntimeError.

The datasets here are registered for the test (as tests/support/irds_local.py does) with download addresses on a
local port nothing listens on, so the download fails at once and offline.
"""
from __future__ import annotations

import socket
from pathlib import Path

import pytest

import trecbench
from trecbench.errors import InputError


def closed_port_url(name: str) -> str:
    """An address on this machine that refuses connections (a port just freed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/{name}"


def register(monkeypatch, name: str, **parts) -> str:
    import ir_datasets
    from ir_datasets.util import MetadataComponent

    dataset = ir_datasets.Dataset(*parts.values())
    monkeypatch.setitem(ir_datasets.registry._registered, name, ir_datasets.Dataset(MetadataComponent(name, dataset),
                                                                                   dataset))
    return f"irds:{name}"


@pytest.fixture(autouse=True)
def one_try(monkeypatch):
    monkeypatch.setenv("IR_DATASETS_DL_TRIES", "1")  # a refused connection is not retried


def unreachable(tmp_path: Path, monkeypatch, *, mirrors: int = 1):
    """A dataset with queries, qrels and docs, each a file at an unreachable address; (source, urls, places)."""
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util.download import Download, RequestsDownload

    urls, places, parts = {}, {}, {}
    for part, kind in (("queries", TsvQueries), ("qrels", TrecQrels), ("docs", TsvDocs)):
        urls[part] = [closed_port_url(f"{part}-{i}") for i in range(mirrors)]
        places[part] = tmp_path / "downloads" / f"{part}.txt"
        download = Download([RequestsDownload(u) for u in urls[part]], cache_path=str(places[part]))
        parts[part] = kind(download, {}) if kind is TrecQrels else kind(download)
    return register(monkeypatch, "local/unreachable", **parts), urls, places


def test_topics_that_cannot_be_downloaded_say_what_to_download_and_where(tmp_path, monkeypatch):
    source, urls, places = unreachable(tmp_path, monkeypatch)
    with pytest.raises(InputError) as e:
        trecbench.read_topics(source)
    assert str(e.value) == (f"irds:local/unreachable: cannot download {urls['queries'][0]} (offline?): "
                            f"download it and put it at {places['queries']}")
    places["queries"].write_text("q1\tcats\n")  # done as the line says, the topics read
    assert [t.qid for t in trecbench.read_topics(source)] == ["q1"]


def test_qrels_and_documents_that_cannot_be_downloaded_are_one_line_each(tmp_path, monkeypatch):
    source, urls, places = unreachable(tmp_path, monkeypatch)
    with pytest.raises(InputError, match=rf"^irds:local/unreachable: cannot download {urls['qrels'][0]} \(offline\?\): "
                                         rf"download it and put it at {places['qrels']}$"):
        trecbench.read_qrels(source)
    corpus = trecbench.open_corpus(source)
    docs = rf"^irds:local/unreachable: cannot download {urls['docs'][0]} \(offline\?\): download it and put it at "
    with pytest.raises(InputError, match=docs):
        corpus.get("d1")
    with pytest.raises(InputError, match=docs):
        list(corpus)


def test_every_mirror_failing_names_the_first_address(tmp_path, monkeypatch):
    source, urls, places = unreachable(tmp_path, monkeypatch, mirrors=2)  # ir_datasets: 'All download sources failed'
    with pytest.raises(InputError) as e:
        trecbench.read_topics(source)
    assert str(e.value) == (f"irds:local/unreachable: cannot download {urls['queries'][0]} (offline?): "
                            f"download it and put it at {places['queries']}")


def test_a_file_to_be_put_by_hand_is_named_by_its_place(tmp_path, monkeypatch):
    from ir_datasets.formats import TsvQueries
    from ir_datasets.util.download import Download, LocalDownload

    place = tmp_path / "by-hand" / "queries.tsv"
    source = register(monkeypatch, "local/by-hand",
                      queries=TsvQueries(Download([LocalDownload(place, "ask the organisers for the file")])))
    with pytest.raises(InputError) as e:
        trecbench.read_topics(source)
    assert str(e.value) == (f"irds:local/by-hand: ir_datasets needs a file it cannot download: put it at {place} "
                            "(see ir-datasets.com for this dataset)")


def test_an_unregistered_dataset_id_offline_is_one_line():
    with pytest.raises(InputError) as e:
        trecbench.read_qrels("irds:trecbench/no-such-dataset")
    assert str(e.value) == "irds:trecbench/no-such-dataset: unknown ir_datasets dataset 'trecbench/no-such-dataset'"


def test_the_cli_prints_the_one_line_and_exits_2(tmp_path, monkeypatch, cli_run):
    source, urls, places = unreachable(tmp_path, monkeypatch)
    result = cli_run("topics", "show", source)
    assert result.exit_code == 2
    assert result.stderr == (f"irds:local/unreachable: cannot download {urls['queries'][0]} (offline?): download it "
                             f"and put it at {places['queries']}\n")  # ir_datasets' failed tries are not logged
    assert "Traceback" not in result.output and "RuntimeError" not in result.output


def test_other_errors_of_a_dataset_are_not_taken_for_downloads(tmp_path, monkeypatch):
    from irds_local import register_local_dataset

    source = register_local_dataset(tmp_path, "local/fine", queries=[("q1", "cats")], monkeypatch=monkeypatch)
    from trecbench.files.irds import load_dataset

    dataset = load_dataset(source)
    assert dataset.has_queries() and [q.query_id for q in dataset.queries_iter()] == ["q1"]
    with pytest.raises(AttributeError):
        dataset.no_such_method()
