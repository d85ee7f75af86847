"""The columnar reader of clean TREC files and the engine on it agree with the general readers."""
from __future__ import annotations

import random
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import trecbench
from trecbench.files.columns import Ids, PairIndex, has_repeats, order_within, split_fields


def _numbers(rnd: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        kind = rnd.random()
        if kind < 0.4:
            out.append(f"{rnd.uniform(-50, 50):.{rnd.randint(0, 6)}f}")
        elif kind < 0.6:
            out.append(repr(rnd.uniform(-1e6, 1e6)))  # 17 significant digits
        elif kind < 0.75:
            out.append(f"{rnd.uniform(-1, 1):.3e}")
        elif kind < 0.85:
            out.append(rnd.choice(["0", "-0", "+1", ".5", "5.", "-.25", "007", "1E5", "123456789012345678"]))
        else:
            out.append(str(rnd.randint(-10**15, 10**15)))
    return out


def test_numbers_parse_exactly_as_strtod():
    rnd = random.Random(3)
    texts = _numbers(rnd, 5000)
    data = "".join(f"q{i % 7} {t}\n" for i, t in enumerate(texts)).encode()
    cols = split_fields(data, 2, ids=(0,), floats=(1,))
    assert cols is not None
    assert cols[1].tolist() == [float(t) for t in texts]


def test_integers_parse_exactly():
    texts = ["0", "-1", "+2", "15", "9223372036854775807", "-9223372036854775808", "0012"]
    data = "".join(f"q {t}\n" for t in texts).encode()
    cols = split_fields(data, 2, ids=(0,), ints=(1,))
    assert cols is not None and cols[1].tolist() == [int(t) for t in texts]


@pytest.mark.parametrize("text", [
    "q 1\n\nq 2\n",  # blank line
    "q  1\n",  # two spaces
    "q 1\nq\t2\n",  # a tab in a space-separated file
    "q 1 x\n",  # a third field
    "q nan\n", "q inf\n", "q 1e999\n", "q 1.2.3\n", "q 1-2\n", "q -\n", "q 0x10\n",
    "q 1\rq 2\n",  # a lone carriage return
    "q \x0b1\n",
])
def test_anything_unusual_goes_to_the_general_reader(text):
    assert split_fields(text.encode(), 2, ids=(0,), floats=(1,)) is None


def test_comment_lines_go_to_the_general_reader():
    assert split_fields(b"# c\nq 1\n", 2, ids=(0,), ints=(1,), comments=True) is None
    assert split_fields(b"q 1\n", 2, ids=(0,), ints=(1,), comments=True) is not None


def test_ids_keep_strcmp_order_and_round_trip():
    strings = ["a", "ab", "abcdefgh", "abcdefghi", "abcdefgh\u00e9", "\u00e9", "b", "B", "doc10", "doc9", "Z" * 30]
    ids = Ids.of(strings)
    assert ids.strings() == strings
    order = np.lexsort([ids.words[:, i] for i in range(ids.words.shape[1] - 1, -1, -1)])
    assert [strings[i] for i in order] == sorted(strings, key=lambda s: s.encode())
    # descending by docid within groups, by words beyond the first eight bytes too
    groups = np.zeros(len(strings), dtype=np.int64)
    assert [strings[i] for i in order_within(groups, ids)] == sorted(strings, key=lambda s: s.encode(), reverse=True)


def test_pair_lookup_finds_exactly_the_listed_pairs():
    rnd = random.Random(5)
    docs = [f"document-{rnd.randint(0, 400)}" for _ in range(600)]
    topics = np.array([rnd.randint(0, 9) for _ in range(600)], dtype=np.int64)
    index = PairIndex.build(topics, Ids.of(docs))
    first = {}
    for row, pair in enumerate(zip(topics.tolist(), docs)):
        first.setdefault(pair, row)
    probe_docs = docs + [f"document-{i}" for i in range(400, 450)]
    probe_topics = np.concatenate([topics, np.arange(50) % 10])
    got = index.find(probe_topics, Ids.of(probe_docs)).tolist()
    assert got == [first.get(p, -1) for p in zip(probe_topics.tolist(), probe_docs)]
    assert has_repeats(Ids.of([str(t) for t in topics]), Ids.of(docs))
    assert not has_repeats(Ids.of(["1", "1", "2"]), Ids.of(["a", "b", "a"]))


@pytest.mark.parametrize("lines", [1, 3, 1000])
def test_repeated_pairs_are_found_when_checked_a_stretch_of_topics_at_a_time(monkeypatch, lines):
    import trecbench.files.columns as columns

    monkeypatch.setattr(columns, "_LINES", lines)
    topics = ["1"] * 4 + ["2"] * 3 + ["10"] * 5
    docs = ["a", "b", "c", "d", "a", "b", "c", "a", "b", "c", "d", "e"]  # the same docids in other topics only
    assert not has_repeats(Ids.of(topics), Ids.of(docs))
    for row in range(1, len(docs)):  # a docid twice in one topic, wherever it is
        twice = docs.copy()
        twice[row] = docs[row - 1] if topics[row] == topics[row - 1] else docs[row]
        assert has_repeats(Ids.of(topics), Ids.of(twice)) == (topics[row] == topics[row - 1])
    # a topic that comes back later: its two stretches are checked together
    assert has_repeats(Ids.of(topics + ["1"]), Ids.of(docs + ["d"]))
    assert not has_repeats(Ids.of(topics + ["1"]), Ids.of(docs + ["z"]))


def _tricky_run(rnd: random.Random, topics: list[str]) -> tuple[str, str]:
    prefix = "msmarco_passage_00_"  # ids longer than one word, sharing their first words
    qrels, run = [], []
    for t in topics:
        docs = [f"{prefix}{rnd.randint(0, 300)}" for _ in range(60)] + ["d\u00e9j\u00e0", "x", "X"]
        docs = list(dict.fromkeys(docs))
        for d in rnd.sample(docs, 25):
            qrels.append(f"{t} 0 {d} {rnd.choice([-1, 0, 0, 1, 2, 3])}")
        for d in rnd.sample(docs, len(docs) - 3):
            score = rnd.choice([f"{rnd.randint(0, 20) / 4}", "3.0000000001", "3", f"{rnd.random():.3e}"])
            run.append(f"{t} Q0 {d} 0 {score} tricky")
    rnd.shuffle(run)  # neither topics nor scores in order
    return "\n".join(qrels) + "\n", "\r\n".join(run) + "\r\n"


@pytest.mark.parametrize("version", [9, 10])
def test_clean_files_score_as_the_general_readers_do(tmp_path, version):
    rnd = random.Random(11)
    qrels_text, run_text = _tricky_run(rnd, ["10", "9", "101", "t1", "t\u00e9"])
    (tmp_path / "qrels.txt").write_text(qrels_text, encoding="utf-8")
    (tmp_path / "run.txt").write_bytes(run_text.encode())
    assert split_fields(run_text.encode(), 6, ids=(0, 2), floats=(4,)) is not None  # the columnar path is taken
    from_files = trecbench.evaluate(tmp_path / "qrels.txt", tmp_path / "run.txt", ["all_trec"], per_topic=True,
                                    trec_eval_version=version)
    frames = trecbench.evaluate(trecbench.read_qrels(tmp_path / "qrels.txt"), trecbench.read_run(tmp_path / "run.txt"),
                                ["all_trec"], per_topic=True, trec_eval_version=version)
    pd.testing.assert_frame_equal(from_files.droplevel(0), frames.droplevel(0))
    assert from_files.index.get_level_values(0)[0] == "tricky"


def test_a_run_listing_a_docid_twice_is_still_an_error(tmp_path, cli_run):
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n")
    (tmp_path / "run.txt").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n1 Q0 a 3 0.5 r\n")
    result = cli_run("eval", "retrieval", "--qrels", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"))
    assert result.exit_code == 2
    assert "run.txt:3:" in result.output and "appears twice" in result.output


def test_scoring_one_run_from_the_cli_imports_neither_pandas_nor_ir_measures(tmp_path):
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    (tmp_path / "run.txt").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n2 Q0 c 1 1.5 r\n")
    code = ("import sys; from trecbench.cli import cli\n"
            "try:\n    cli(['eval', 'retrieval', '--qrels', sys.argv[1], sys.argv[2]])\n"
            "except SystemExit:\n    pass\n"
            "print([m for m in ('pandas', 'pyarrow', 'ir_measures') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")],
                         capture_output=True, text=True, check=True).stdout
    assert "0.7500" in out or "1.0000" in out
    assert out.strip().splitlines()[-1] == "[]"


# numpy.ma (which np.unique imports), json (--format json only), tempfile and pathlib (writing a file only);
# sqlite3, the model client's errors and the extras table (the CLI's error handling, looked up only once imported),
# gzip (a gzipped stream only), numpy.typing (annotations only)
NOT_FOR_SCORING = ("numpy.ma", "json", "tempfile", "pathlib", "sqlite3", "trecbench.llm", "trecbench.llm.errors",
                   "trecbench.helpers.extras", "gzip", "numpy.typing")


def test_scoring_in_blocks_of_topics_to_standard_output_imports_no_module_scoring_does_not_need(tmp_path):
    (tmp_path / "qrels.txt").write_text("".join(f"{t} 0 d{d} {d % 3}\n" for t in range(4) for d in range(6)))
    (tmp_path / "run.txt").write_text("".join(f"{t} Q0 d{d} {d + 1} {10 - d} r\n" for t in range(4) for d in range(8)))
    # what numpy itself imports does not count (numpy 1.24, the lowest supported, imports numpy.ma, json, pathlib)
    code = ("import sys\n"
            "import numpy\n"
            "numpy_own = set(sys.modules)\n"
            "from trecbench.evaluation.retrieval import engine\n"
            "engine.score_run.__kwdefaults__['slice_lines'] = 8  # a block per topic, as for a large run\n"
            "from trecbench.cli import cli\n"
            "try:\n    cli(['eval', 'retrieval', '--qrels', sys.argv[1], sys.argv[2], '-m', 'all_trec',"
            " '--format', 'trec_eval'])\n"
            "except SystemExit:\n    pass\n"
            f"print([m for m in {NOT_FOR_SCORING!r} if m in sys.modules and m not in numpy_own])")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")],
                         capture_output=True, text=True, check=True).stdout
    assert "num_q                 \tall\t4" in out
    assert out.strip().splitlines()[-1] == "[]"


def test_threads_option_gives_the_same_numbers(tmp_path, cli_run):
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    paths = []
    for i in range(3):
        p = tmp_path / f"run{i}.txt"
        p.write_text(f"1 Q0 a 1 {i}.5 r{i}\n1 Q0 b 2 1.0 r{i}\n2 Q0 c 1 1.5 r{i}\n")
        paths.append(str(p))
    one = cli_run("eval", "retrieval", "--qrels", str(tmp_path / "qrels.txt"), *paths, "--threads", "1")
    many = cli_run("eval", "retrieval", "--qrels", str(tmp_path / "qrels.txt"), *paths, "--threads", "3")
    assert one.exit_code == 0 and one.output == many.output
    bad = cli_run("eval", "retrieval", "--qrels", str(tmp_path / "qrels.txt"), *paths, "--threads", "0")
    assert bad.exit_code == 2 and "--threads" in bad.output


@pytest.mark.parametrize("slice_lines", [1, 7, 50])
def test_large_runs_scored_in_blocks_of_topics_give_the_same_numbers(tmp_path, slice_lines):
    from trecbench.evaluation.retrieval.engine import score_run
    from trecbench.evaluation.retrieval.names import parse_measures
    from trecbench.evaluation.retrieval.rankings import read_qrels_columns, read_run_columns

    rnd = random.Random(17)
    qrels_text, run_text = _tricky_run(rnd, ["10", "9", "101", "t1", "t\u00e9", "x"])
    run_text += "".join(f"unjudged{i} Q0 d{i} 1 1.0 tricky\r\n" for i in range(3))
    (tmp_path / "qrels.txt").write_text(qrels_text, encoding="utf-8")
    (tmp_path / "run.txt").write_bytes(run_text.encode())
    qrels = read_qrels_columns(tmp_path / "qrels.txt")
    run = read_run_columns(tmp_path / "run.txt")
    requests = parse_measures(["all_trec", "Judged@10", "P(rel=2)@5", "RR@3"])
    whole = score_run(run, qrels, requests)
    blocks = score_run(run, qrels, requests, slice_lines=slice_lines)
    assert blocks.topics == whole.topics and blocks.unjudged == whole.unjudged == ["unjudged0", "unjudged1", "unjudged2"]
    for a, b in zip(whole.scores, blocks.scores):
        assert (a.name, a.label, a.summary) == (b.name, b.label, b.summary)
        if a.values is not None:
            assert a.values.tolist() == b.values.tolist()


@pytest.mark.parametrize("missing_topics", ["zero", "skip"])
@pytest.mark.parametrize("slice_lines", [1, 30, 100])
def test_runs_listing_each_topic_together_are_scored_in_stretches_of_the_file(tmp_path, slice_lines, missing_topics):
    from trecbench.evaluation.retrieval.engine import score_run
    from trecbench.evaluation.retrieval.names import parse_measures
    from trecbench.evaluation.retrieval.rankings import qrels_table, read_qrels_columns, read_run_columns, topic_slices

    rnd = random.Random(23)
    qrels_text, run_text = _tricky_run(rnd, ["10", "9", "101", "t1", "t\u00e9", "x", "absent"])
    lines = run_text.split("\r\n")[:-1]
    by_topic: dict[str, list[str]] = {}
    for line in lines:
        if not line.startswith("absent "):
            by_topic.setdefault(line.split()[0], []).append(line)
    # topics together, in an order that is not trec_eval's, with an unjudged topic between two of them
    grouped = by_topic["t1"] + by_topic["10"] + ["unjudged Q0 d1 1 1.0 tricky"] + by_topic["x"] + by_topic["101"] \
        + by_topic["t\u00e9"] + by_topic["9"]
    (tmp_path / "qrels.txt").write_text(qrels_text, encoding="utf-8")
    (tmp_path / "run.txt").write_text("\n".join(grouped) + "\n", encoding="utf-8")
    shuffled = rnd.sample(grouped, len(grouped))
    (tmp_path / "shuffled.txt").write_text("\n".join(shuffled) + "\n", encoding="utf-8")
    qrels = read_qrels_columns(tmp_path / "qrels.txt")
    run = read_run_columns(tmp_path / "run.txt")
    requests = parse_measures(["all_trec", "Judged@10", "RR@3"])
    blocks, unjudged = topic_slices(run, qrels_table(qrels), slice_lines)
    assert all(isinstance(b, slice) for b in blocks) and len(blocks) > 1 and unjudged == ["unjudged"]
    whole = score_run(read_run_columns(tmp_path / "shuffled.txt"), qrels, requests, missing_topics=missing_topics)
    parts = score_run(run, qrels, requests, slice_lines=slice_lines, missing_topics=missing_topics)
    assert parts.topics == whole.topics == sorted(whole.topics) and parts.unjudged == ["unjudged"]
    assert parts.missing == whole.missing == (["absent"] if missing_topics == "zero" else [])
    for a, b in zip(whole.scores, parts.scores):
        assert (a.name, a.label, a.summary) == (b.name, b.label, b.summary)
        if a.values is not None:
            assert a.values.tolist() == b.values.tolist()


def test_ids_match_whatever_the_longest_id_of_each_file(tmp_path):
    # qrels ids fit in one word, the run has a longer topic id and longer docids: lookups must still match
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    (tmp_path / "run.txt").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n2 Q0 c 1 1.5 r\n"
                                      "a-long-topic-id Q0 a-long-document-id 1 1.0 r\n")
    scores = trecbench.evaluate(tmp_path / "qrels.txt", tmp_path / "run.txt", ["AP", "num_rel_ret"])
    assert scores.loc["r", "AP"] == 1.0 and scores.loc["r", "num_rel_ret"] == 2
    pairs = PairIndex.build(np.array([0, 1]), Ids.of(["short", "x" * 20]))
    assert pairs.find(np.array([0, 1, 0]), Ids.of(["short", "x" * 20, "x" * 20])).tolist() == [0, 1, -1]


def test_runid_is_the_last_lines_tag_and_comment_lines_are_skipped(tmp_path):
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n")
    (tmp_path / "run.txt").write_text("1 Q0 a 1 2.0 first\n1 Q0 b 2 1.0 last\n")
    (tmp_path / "commented.txt").write_text("# a comment\n1 Q0 a 1 2.0 r\n")
    scores = trecbench.evaluate(tmp_path / "qrels.txt", [tmp_path / "run.txt", tmp_path / "commented.txt"], ["AP"])
    assert list(scores.index) == ["last", "r"] and scores["AP"].tolist() == [1.0, 1.0]


def test_eval_retrieval_from_the_script_ends_without_teardown_once_everything_is_printed(tmp_path, cli_run):
    # `cli.main` ends the process with os._exit after flushing: atexit handlers (Python's teardown) do not run,
    # and the output piped to the caller is complete; a command that did not ask for it exits as usual.
    (tmp_path / "qrels.txt").write_text("".join(f"{t} 0 d{d} {d % 3}\n" for t in range(4) for d in range(6)))
    (tmp_path / "run.txt").write_text("".join(f"{t} Q0 d{d} {d + 1} {10 - d} r\n" for t in range(4) for d in range(8)))
    (tmp_path / "bad.txt").write_text("1 Q0 d1 1 x r\n")
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('teardown ran', file=sys.stderr))\n"
            "sys.argv = ['trecbench', *sys.argv[1:]]\n"
            "from trecbench.cli import main\n"
            "main()\n")
    args = ["eval", "retrieval", "--qrels", str(tmp_path / "qrels.txt"), "-m", "all_trec", "-q", "--format", "trec_eval"]

    def script(*more: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", code, *more], capture_output=True, text=True)

    done = script(*args, str(tmp_path / "run.txt"))
    assert (done.returncode, done.stdout) == (0, cli_run(*args, tmp_path / "run.txt").stdout)
    assert "teardown ran" not in done.stderr
    bad = script(*args, str(tmp_path / "bad.txt"))
    assert bad.returncode == 2 and "bad.txt:1:" in bad.stderr and "teardown ran" not in bad.stderr
    listed = script("runs", "--help")
    assert listed.returncode == 0 and "teardown ran" in listed.stderr
