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


def _fresh(folder: Path) -> None:
    if folder.exists():
        if not (folder / DEMO_MARKER).exists() and any(folder.iterdir()):
            from trecbench import InputError

            raise InputError(str(folder), 0, "exists and is not a demo folder: choose another --dir")
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / DEMO_MARKER).write_text("made by `trecbench demo`; the next demo run replaces this folder\n")


def run_demo(folder: str | Path = "trecbench-demo", *, model: str | None = None, api_base: str | None = None,
             api_key: str | None = None, say: Callable[[str], None] = lambda _: None) -> DemoResult:
    """Run the whole pipeline into `folder` (replaced if it holds an earlier demo); returns the numbers."""
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
    if model:
        failures += _judge_with_model(ws, model, api_base, api_key)
        step(f"pool judged by {model}")
    else:
        import_qrels(ws, sample / "qrels.txt", "assessor-1", kind="human")
        step("judgments of two assessors recorded")

    judgments = ws.judgments()
    official = "assessor-1" if not model else f"{model}:graded-0-3"
    qrels = workspace_qrels(ws, judge=official).qrels
    qrels_path = folder / "qrels.txt"
    write_qrels(qrels[["query_id", "iteration", "doc_id", "relevance"]], qrels_path)

    # nuggets: drafted, then the edited version people made of them
    store = NuggetStore(ws)
    if model:
        failures += _draft_with_model(ws, model, api_base, api_key)
        step(f"nuggets drafted by {model}")
    else:
        draft_extractive(ws, corpus=corpus)
        step("nuggets drafted extractively")
        store.import_topics(read_nuggets(sample / "nuggets.jsonl"), author="assessor-1")
        step("edited nuggets loaded")
    topics_nuggets = [t for t in store.export() if t.nuggets]
    n_nuggets = sum(len(t.nuggets) for t in topics_nuggets)

    retrieval = evaluate(qrels_path, [str(r) for r in runs], list(MEASURES)).sort_values(MEASURES[0],
                                                                                           ascending=False)
    step("retrieval scored")
    answer_files = sorted(str(p) for p in (sample / "answers").glob("*.jsonl"))
    options: dict[str, Any] = {}
    if model:
        options = {"assigner": "llm", "model": model, "api_base": api_base, "cache": str(ws.cache_path)}
    else:
        options = {"assigner": "citation", "duplicates": duplicate_groups(ws)}
    answer_scores, _ = evaluate_answers(topics_nuggets, answer_files, **options)
    failures += [f"answers {run} {qid}: {error}" for run, qid, error in answer_scores.incomplete]
    answers = answer_scores.frame.xs("all", level="query_id") if "query_id" in answer_scores.frame.index.names \
        else answer_scores.frame
    answers = answers.sort_values(answers.columns[0], ascending=False)
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
    return DemoResult(folder, bench, report, retrieval, answers, evidence, funnel, loo.verdict(), agree.kappa,
                      agree.pairs, len(pool.candidates), len(judgments), n_nuggets, model, failures, steps)


def _model_client(ws, model: str, api_base: str | None, api_key: str | None):
    from trecbench.llm import LLM, ModelConfig

    config = ModelConfig(model, api_base=api_base, api_key=api_key, concurrency=8)
    return LLM(config, cache=ws.cache_path)


def _judge_with_model(ws, model: str, api_base: str | None, api_key: str | None) -> list[str]:
    from trecbench.qrels.judges.llm import candidates, judge, model_judge, plan_tasks
    from trecbench.qrels.judges.prompts import load_prompt

    prompt = load_prompt(None)
    identity = model_judge(model, prompt, batch=5, samples=1, params={"temperature": 0.0})
    tasks, _ = plan_tasks(candidates(ws), ws.judged_pairs(identity), 5)
    client = _model_client(ws, model, api_base, api_key)
    try:
        report = client.run(judge(ws, client, prompt, tasks, identity, corpus=ws.corpus()))
    finally:
        client.close()
    return [f"judgment {q} {d}: {why}" for q, d, why in report.failed] + ([report.stopped] if report.stopped else [])


def _draft_with_model(ws, model: str, api_base: str | None, api_key: str | None) -> list[str]:
    from trecbench.nuggets.draft_llm import DraftSettings, draft_with_llm

    client = _model_client(ws, model, api_base, api_key)
    try:
        report = client.run(draft_with_llm(ws, client, DraftSettings()))
    finally:
        client.close()
    return [f"nuggets {qid}: {'; '.join(problems)}" for qid, problems in report.incomplete.items()]
