"""Rules that exist once: the modules that need them share one object instead of keeping copies."""
from __future__ import annotations

import pytest


def test_one_stopword_list_for_drafting_matching_and_highlighting():
    from trecbench.evaluation import textmatch
    from trecbench.nuggets.drafting import extractive as draft_extractive
    from trecbench.web import highlight

    assert draft_extractive.STOPWORDS is textmatch.STOPWORDS is highlight.STOPWORDS
    assert {"the", "explain", "please"} <= textmatch.STOPWORDS


@pytest.mark.parametrize("value, expected", [("d1", "d1"), (" d1 ", "d1"), (7, "7"), (True, None), ("", None),
                                             ("  ", None), (None, None), (1.5, None), (["d1"], None)])
def test_one_json_id_rule_for_every_reader(value, expected):
    from trecbench.files.lines import json_id

    assert json_id(value) == expected


def test_a_boolean_id_is_refused_by_the_topic_corpus_and_nugget_readers(tmp_path):
    from trecbench import InputError, read_nuggets, read_topics
    from trecbench.corpus import open_corpus

    (tmp_path / "t.jsonl").write_text('{"qid": true, "text": "q"}\n')
    (tmp_path / "c.jsonl").write_text('{"id": true, "contents": "x"}\n')
    (tmp_path / "n.jsonl").write_text('{"qid": true, "nuggets": [{"text": "a fact"}]}\n')
    for read in (lambda: read_topics(tmp_path / "t.jsonl"), lambda: open_corpus(tmp_path / "c.jsonl"),
                 lambda: read_nuggets(tmp_path / "n.jsonl")):
        with pytest.raises(InputError):
            read()


def test_propagation_has_one_home():
    import trecbench.pooling
    from trecbench.pooling.pool import Pool

    assert not hasattr(Pool, "propagate") and "propagate" not in trecbench.pooling.__all__


def test_run_scores_declare_their_name_and_path(tmp_path):
    from dataclasses import fields

    from trecbench import score_runs
    from trecbench.evaluation.retrieval.engine import RunScores

    assert {"name", "path"} <= {f.name for f in fields(RunScores)}
    (tmp_path / "q.txt").write_text("1 0 d1 1\n")
    (tmp_path / "a.txt").write_text("1 Q0 d1 1 2 same\n")
    (tmp_path / "b.txt").write_text("1 Q0 d1 1 2 same\n")
    a, b = score_runs(tmp_path / "q.txt", [tmp_path / "a.txt", tmp_path / "b.txt"], ["P@1"])
    assert (a.path, a.shown, b.shown) == (str(tmp_path / "a.txt"), str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))


def test_the_trec_eval_version_is_a_declared_attribute_of_derived_arrays():
    import inspect

    from trecbench.evaluation.retrieval.measures.base import Derived

    assert "version" in inspect.signature(Derived).parameters


def test_the_judging_session_does_not_import_the_pool_module():
    import ast
    import inspect

    import trecbench.pooling.session as session

    imported = {node.module for node in ast.walk(ast.parse(inspect.getsource(session)))
                if isinstance(node, ast.ImportFrom)}
    assert "trecbench.pooling.pool" not in imported


def test_the_nugget_store_keeps_editing_apart_from_undo_import_and_relevant_documents():
    from trecbench.nuggets import history, imports, relevant, store

    assert not hasattr(store, "relevant_by_topic") and hasattr(relevant, "relevant_by_topic")
    assert not hasattr(store.NuggetStore, "_import_topic") and hasattr(imports, "import_topic")
    assert not hasattr(store.NuggetStore, "_restore") and hasattr(history, "restore")


@pytest.mark.parametrize("package", ["trecbench", "trecbench.llm", "trecbench.pooling"])
def test_the_lazy_packages_share_one_loader(package):
    import importlib
    import inspect

    module = importlib.import_module(package)
    assert "attribute(__name__, _EXPORTS, name)" in inspect.getsource(module.__getattr__)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nothing_here'"):
        module.nothing_here  # noqa: B018
    if package != "trecbench":
        for name in module.__all__:
            assert getattr(module, name) is not None


def test_the_adaptive_strategies_share_the_runs_as_arms():
    from trecbench.pooling.strategies.base import RunArms
    from trecbench.pooling.strategies.maxmean import MaxMean
    from trecbench.pooling.strategies.mtf import MoveToFront

    for cls in (MaxMean, MoveToFront):
        assert issubclass(cls, RunArms) and cls.adaptive and "_front" not in vars(cls)


def test_one_lookup_of_many_documents_keeps_order_and_repeats_and_lists_the_missing(tmp_path):
    from trecbench.corpus import open_corpus

    (tmp_path / "c.jsonl").write_text('{"id": "a", "contents": "x"}\n{"id": "b", "contents": "y"}\n')
    found, missing = open_corpus(tmp_path / "c.jsonl").lookup(["b", "zz", "a", "b"])
    assert [(d, doc.text) for d, doc in found] == [("b", "y"), ("a", "x"), ("b", "y")] and missing == ["zz"]


def test_the_line_readers_share_one_pass_over_non_blank_lines(tmp_path):
    from trecbench.files.lines import content_lines

    (tmp_path / "f.txt").write_bytes(b"one\n\n  \n\xff\ntwo\n")
    lines = list(content_lines(tmp_path / "f.txt"))
    assert [(line.number, line.text) for line in lines] == [(1, "one"), (4, None), (5, "two")]
    assert lines[1].error


def test_both_drafters_start_from_one_plan():
    import inspect

    from trecbench.nuggets.drafting.extractive import draft_extractive
    from trecbench.nuggets.drafting.llm import draft_with_llm

    for drafter in (draft_extractive, draft_with_llm):
        source = inspect.getsource(drafter)
        assert "plan_drafting(" in source and "relevant_by_topic(" not in source, drafter.__name__


def test_jobs_are_worked_through_by_a_few_workers_and_none_starts_after_stop():
    import asyncio

    from trecbench.helpers.jobs import work_through

    started: list[int] = []
    running = most = 0

    async def handle(item: int) -> None:
        nonlocal running, most
        started.append(item)
        running += 1
        most = max(most, running)
        await asyncio.sleep(0)
        if item == 3:
            stop.set()
        running -= 1

    stop = asyncio.Event()
    asyncio.run(work_through(range(10), handle, workers=2, stop=stop))
    assert most == 2 and started == [0, 1, 2, 3, 4]  # 4 had started when 3 said stop


def test_the_model_loops_share_one_way_to_work_through_jobs():
    import inspect

    from trecbench.nuggets.drafting.llm import draft_with_llm
    from trecbench.judging.llm import judge, judge_adaptive

    for loop in (judge, judge_adaptive, draft_with_llm):
        source = inspect.getsource(loop)
        assert "work_through(" in source and "asyncio.Queue" not in source, loop.__name__


def test_a_call_counts_into_usage_by_one_rule_for_replies_log_rows_and_plans():
    from trecbench.llm.budget import Estimate
    from trecbench.llm.records import CallRecord, Completion, Spend, Usage

    spent = {"prompt_tokens": 3, "completion_tokens": 2, "cost": 0.5, "cost_known": False}
    reply = Completion(text="x", model="m", attempts=2, **spent)
    row = CallRecord("k", "m", False, attempts=2, **spent)
    one = Usage(calls=1, attempts=2, prompt_tokens=3, completion_tokens=2, cost=0.5, unpriced=1)
    assert Usage.of([reply]) == one and row.usage() == one + Usage(failed=1)
    assert Usage().add(Estimate("k", 3, 2, 0.5, False)) == one + Usage(attempts=-2)  # a plan makes no request yet
    assert Usage.of([Completion(text="x", model="m", cached=True, **spent)]) == Usage(cached=1)
    assert issubclass(Completion, Spend) and issubclass(CallRecord, Spend)


def test_one_progress_bar_for_the_commands_and_the_baselines():
    from pathlib import Path

    import trecbench

    root = Path(trecbench.__file__).parent
    made_here = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if "tqdm(" in p.read_text(encoding="utf-8"))
    assert made_here == ["helpers/progress.py"]


def test_one_layout_for_text_tables():
    from pathlib import Path

    import trecbench

    root = Path(trecbench.__file__).parent
    aligning = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if ".ljust(" in p.read_text(encoding="utf-8"))
    assert aligning == ["evaluation/retrieval/output.py"]  # evaluation.retrieval.output.aligned


# Two scores equal as C floats, different as doubles: trec_eval 9.0.8 ties them (docid descending: b
# first), trec_eval 10.0 does not (a first). Every ranking trecbench forms must agree for each version.
NEAR_TIE = "1 Q0 a 1 1.00000002 r\n1 Q0 b 2 1.00000001 r\n"


@pytest.mark.parametrize("version, first", [(9, "b"), (10, "a")])
def test_one_trec_eval_order_for_sort_write_evaluate_pool_and_contexts(tmp_path, version, first):
    from cli_support import run_cli

    import trecbench
    from trecbench.evaluation.evidence.contexts import read_contexts

    run = tmp_path / "run.txt"
    run.write_text(NEAR_TIE)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"1 0 {first} 1\n")
    sorted_lines = run_cli("runs", "sort", run, "-o", "-", "--trec-eval-version", version).stdout.splitlines()
    assert sorted_lines[0].split()[2] == first
    written = tmp_path / "written.txt"
    trecbench.write_run(trecbench.read_run(run), written, version=version)
    assert written.read_text().split()[2] == first
    assert trecbench.trec_order(trecbench.read_run(run), version=version)["doc_id"].iloc[0] == first
    scores = trecbench.evaluate(qrels, [run], ["RR"], trec_eval_version=version)
    assert scores["RR"].iloc[0] == 1.0  # the relevant document is ranked first
    if version == 9:  # pooling and contexts rank as trec_eval 9.0.8, the default of `eval retrieval`
        pool = trecbench.build_pool([run], depth=1)
        assert list(pool.candidates["doc_id"]) == [first]
        assert read_contexts(run).ids("1")[0] == first


def test_the_trec_eval_order_has_one_home():
    from pathlib import Path

    import trecbench

    root = Path(trecbench.__file__).parent
    texts = {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in root.rglob("*.py")}
    ties_by_docid = sorted(name for name, text in texts.items() if "order_within(" in text)
    assert ties_by_docid == ["files/columns.py", "ranking.py"]  # columns.py defines it, ranking.py uses it
