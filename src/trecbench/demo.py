"""The main job, end to end, on the bundled sample benchmark: what a team does with its own corpus.

Builds a workspace, runs a BM25 baseline, pools it with the sample's submitted runs, records the
sample's human judgments (and a second assessor's), drafts nuggets extractively and loads the
sample's edited nuggets, then scores retrieval, answers (citation assigner) and evidence (with the
funnel), checks reusability (leave one run out) and judge agreement, and writes the HTML report.
With a model, the model judges the pool, drafts the nuggets and assigns them instead.
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable

import pandas as pd

MEASURES = ("nDCG@10", "R@100", "AP", "P@10", "RR", "Judged@10")
DEMO_MARKER = ".trecbench-demo"
POOL_DEPTH = 20
# After the demo's numbers are in, the same runs are pooled this deep for people to go on judging (`serve`
# shows the new documents; the depth-20 pool, judged in full, is what the printed numbers come from).
PEOPLE_DEPTH = 25
EVIDENCE_K = 5


def sample_dir() -> Path:
    """The folder of the sample benchmark shipped in the package."""
    return Path(str(resources.files("trecbench") / "sample"))


@dataclass
class DemoResult:
    folder: Path
    workspace: Path
    report: Path
    retrieval: pd.DataFrame  # a row per run, best nDCG@10 first
    answers: pd.DataFrame  # a row per answer run: V_strict, V, A_strict, A, W_strict, W
    evidence: pd.DataFrame  # a row per context run: EvidenceRecall@k, CompleteEvidence@k, IDRecall@k
    funnel: pd.DataFrame  # per stage: items present and lost there
    loo_verdict: str
    kappa: float
    agreement_pairs: int
    pool_size: int
    judgments: int
    nuggets: int
    model: str | None = None
    failures: list[str] = field(default_factory=list)
    steps: list[tuple[str, float]] = field(default_factory=list)
    agreement: str = "assessor-1 vs assessor-2"  # the two judges the kappa compares


def _fresh(folder: Path) -> None:
    if folder.exists():
        if not (folder / DEMO_MARKER).exists() and any(folder.iterdir()):
            from trecbench import InputError

            raise InputError(str(folder), 0, "exists and is not a demo folder: choose another --dir")
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / DEMO_MARKER).write_text("made by `trecbench demo`; the next demo run replaces this folder\n")


class DemoStopped(Exception):
    """The model gave nothing the rest of the demo can score (no usable judgment); `failures` says why."""

    def __init__(self, message: str, failures: list[str]):
        super().__init__(message)
        self.failures = failures


def run_demo(folder: str | Path = "trecbench-demo", *, model: Any = None, api_base: str | None = None,
             api_key: str | None = None, max_cost: Any = None,
             say: Callable[[str], None] = lambda _: None) -> DemoResult:
    """Run the whole pipeline into `folder` (replaced if it holds an earlier demo); returns the numbers.

    model: None (offline: the sample's assessors and edited nuggets), a litellm model name (with
    `api_base`, `api_key`), or a `trecbench.llm.ModelConfig`; the model judges the pool (batch 5),
    drafts the nuggets and assigns them, within `max_cost` dollars. Raises DemoStopped when the model
    gives no usable judgment.
    """
    config = None
    if model is not None:
        from trecbench import Budget, ModelConfig

        config = model if isinstance(model, ModelConfig) else ModelConfig(model, api_base=api_base, api_key=api_key)
        model = config.model
        max_cost = Budget.of(max_cost)  # one limit for judging, drafting and assignment together
    from trecbench import (NuggetStore, ReportOptions, Workspace, agreement, bm25_run, draft_extractive, evaluate,
                           duplicate_groups, evaluate_answers, evaluate_evidence, evidence_from_nuggets, import_qrels,
                           pool_runs, read_nuggets, workspace_leave_one_out, workspace_qrels, write_qrels, write_report,
                           write_run)

    sample = sample_dir()
    folder = Path(folder)
    steps: list[tuple[str, float]] = []
    failures: list[str] = []
    clock = time.perf_counter()

    def step(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        steps.append((name, now - clock))
        clock = now
        say(f"  {name} ({steps[-1][1]:.1f}s)")

    _fresh(folder)
    bench = folder / "bench"
    ws = Workspace.init(bench, corpus=str(sample / "corpus.jsonl"), topics=str(sample / "topics.tsv"),
                        name="sample-handbook")
    corpus = ws.corpus()
    step("workspace created")

    # a baseline of our own beside the runs teams submitted
    runs_dir = bench / "runs"
    baseline = bm25_run(corpus, list(ws.topics().values()), backend="bm25s", runid="bm25s_baseline")
    write_run(baseline.run, runs_dir / "bm25s_baseline.txt", runid="bm25s_baseline")
    for run in sorted((sample / "runs").glob("*.txt")):
        shutil.copyfile(run, runs_dir / run.name)
    runs = sorted(runs_dir.glob("*.txt"))
    step(f"BM25 baseline run (bm25s) beside {len(runs) - 1} submitted runs")

    pool, _ = pool_runs([str(r) for r in runs], workspace=ws, name=f"depth-{POOL_DEPTH}", depth=POOL_DEPTH,
                        dedup="near")
    step(f"pooled the top {POOL_DEPTH} of {len(runs)} runs: {len(pool.candidates)} candidates")

    # judgments: the sample's assessors, recorded as people's judgments (the second one first, so the
    # official assessor's are the most recent and win `--prefer human`)
    import_qrels(ws, sample / "qrels.second-assessor.txt", "assessor-2", kind="human")
    official = "assessor-1"
    if config is not None:
        official, judge_failures = _judge_with_model(ws, config, max_cost)
        failures += judge_failures
        step(f"pool judged by {model}")
    else:
        import_qrels(ws, sample / "qrels.txt", "assessor-1", kind="human")
        step("judgments of two assessors recorded")

    judgments = ws.judgments()
    if config is not None and not (judgments["judge"] == official).any():
        raise DemoStopped(f"{model} gave no usable judgment ({len(failures)} failure(s)): nothing to score", failures)
    qrels = workspace_qrels(ws, judge=official).qrels
    qrels_path = folder / "qrels.txt"
    write_qrels(qrels[["query_id", "iteration", "doc_id", "relevance"]], qrels_path)

    # nuggets: drafted, then the edited version people made of them
    store = NuggetStore(ws)
    if config is not None:
        failures += _draft_with_model(ws, config, max_cost)
        step(f"nuggets drafted by {model}")
    else:
        draft_extractive(ws, corpus=corpus)
        step("nuggets drafted extractively")
        store.import_topics(read_nuggets(sample / "nuggets.jsonl"), author="assessor-1")
        step("edited nuggets loaded")
    topics_nuggets = [t for t in store.export() if t.nuggets]
    if config is not None and not topics_nuggets:
        raise DemoStopped(f"{model} drafted no nugget: no answer can be scored", failures)
    n_nuggets = sum(len(t.nuggets) for t in topics_nuggets)

    retrieval = evaluate(qrels_path, [str(r) for r in runs], list(MEASURES)).sort_values(MEASURES[0], kind="stable",
                                                                                           ascending=False)
    step("retrieval scored")
    answer_files = sorted(str(p) for p in (sample / "answers").glob("*.jsonl"))
    options: dict[str, Any] = {}
    if config is not None:
        from trecbench import LLM

        options = {"assigner": "llm", "model": LLM(config, cache=str(ws.cache_path), budget=Budget.of(max_cost))}
    else:
        options = {"assigner": "citation", "duplicates": duplicate_groups(ws)}
    answer_scores, _ = evaluate_answers(topics_nuggets, answer_files, **options)
    failures += [f"answers {run} {qid}: {error}" for run, qid, error in answer_scores.incomplete]
    answers = answer_scores.frame.xs("all", level="query_id") if "query_id" in answer_scores.frame.index.names \
        else answer_scores.frame
    answers = answers.sort_values(answers.columns[0], ascending=False, kind="stable")
    step("answers scored")
    evidence_scores = evaluate_evidence(evidence_from_nuggets(topics_nuggets), str(sample / "contexts.jsonl"),
                                        k=EVIDENCE_K, permissions=str(sample / "permissions.jsonl"),
                                        duplicates=duplicate_groups(ws))
    evidence = evidence_scores.frame.xs("all", level="query_id") \
        if "query_id" in evidence_scores.frame.index.names else evidence_scores.frame
    funnel = evidence_scores.stage_summary()
    step("evidence scored, with the funnel")
    loo = workspace_leave_one_out(ws, ["nDCG@10", "R@100"], qrels=qrels_path)  # the pool's runs and depth
    step("leave-one-run-out")
    second = workspace_qrels(ws, judge="assessor-2").qrels
    agree = agreement(qrels, second)
    step("judge agreement")
    report = folder / "report.html"
    write_report(ws, report, ReportOptions(answers=answer_files, contexts=[str(sample / "contexts.jsonl")],
                                           permissions=str(sample / "permissions.jsonl"), k=EVIDENCE_K,
                                           iterations=2000))
    step("report written")
    people, _ = pool_runs([str(r) for r in runs], workspace=ws, name=f"depth-{PEOPLE_DEPTH}", depth=PEOPLE_DEPTH,
                          dedup="near")
    step(f"pooled the top {PEOPLE_DEPTH} for people to go on judging: {len(people.candidates)} candidates")
    return DemoResult(folder, bench, report, retrieval, answers, evidence, funnel, loo.verdict(), agree.kappa,
                      agree.pairs, len(pool.candidates), len(judgments), n_nuggets, model, failures, steps,
                      agreement=f"{official} vs assessor-2")


def _judge_with_model(ws, config, max_cost: Any) -> tuple[str, list[str]]:
    """The model judges the pool (batch 5): (the judge's name, the failures)."""
    from trecbench import judge_pool

    run = judge_pool(ws, config, batch=5, max_cost=max_cost)
    report = run.report
    assert report is not None  # not a dry run: judge_pool judged
    return run.judge.name, ([f"judgment {q} {d}: {why}" for q, d, why in report.failed]
                            + ([report.stopped] if report.stopped else []))


def _draft_with_model(ws, config, max_cost: Any) -> list[str]:
    from trecbench import draft_nuggets

    report = draft_nuggets(ws, config, max_cost=max_cost).report
    return [f"nuggets {qid}: {'; '.join(problems)}" for qid, problems in report.incomplete.items()]
