"""What the report shows, gathered from a workspace and the files given: one small record per section.

A section without data is not dropped: it carries a `Missing` saying what would fill it and the
command that does, so a reader of the report knows what is absent and why.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

import pandas as pd

from trecbench.helpers.progress import SilentProgress
from trecbench.errors import InputError
from trecbench.report.checks import AuditSection, JudgePair, ReuseSection, audit_section, judge_pairs, reuse_section
from trecbench.report.missing import Missing
from trecbench.report.scores import ScoreTable, score_table

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace, WorkspaceLike

DEFAULT_MEASURES = ("nDCG@10", "R@100", "AP")


class ReportOptionError(ValueError):
    """An option that does not fit the workspace (an unknown baseline run or pool, a bad measure)."""


@dataclass
class ReportOptions:
    """Everything `trecbench report` can be told; the defaults are the command's."""

    runs: Sequence[str] = ()  # run files, beside those registered in the workspace
    measures: Sequence[str] = DEFAULT_MEASURES
    baseline: str | None = None  # run the others are compared with (default: the best by the first measure)
    answers: Sequence[str] = ()  # RAG answer files (TREC RAG 2024/2025 JSONL)
    contexts: Sequence[str] = ()  # staged contexts (JSONL) or TREC runs, for the evidence funnel
    evidence: str | None = None  # evidence JSONL (default: the nuggets' evidence links)
    permissions: str | None = None  # which documents each topic may see (see `eval evidence --permissions`)
    k: int = 10  # evidence cut
    prefer: str = "human"  # which judgment of a pair makes the qrels (as `qrels export --prefer`)
    pool: str | None = None  # stored pool (default: the newest)
    iterations: int = 10000  # bootstrap and randomisation draws
    seed: int = 0
    alpha: float = 0.05
    min_common: int = 20  # judges compared when they judged at least this many of the same pairs
    threshold: int = 1  # grade from which a document is relevant (binarised kappa)
    workspace_runs: bool = True  # also score the runs registered in the workspace


@dataclass(frozen=True)
class RunSource:
    path: str
    name: str | None  # None: the run's tag names it
    origin: str  # "--runs", "runs/ folder" or "pool NAME"


@dataclass
class Overview:
    name: str
    generated_at: str
    version: str
    created_at: str | None
    corpus: str | None
    topics: int
    judgments: int
    failed: int
    judges: int
    qrels_topics: int
    qrels_pairs: int
    relevant: int
    propagated: int
    prefer: str
    pool: str | None
    nuggets: int
    vital: int
    approved: int
    runs: int
    rel_level: int = 1  # lowest grade counted as relevant in `relevant` (and every binary measure)


@dataclass
class RetrievalSection:
    runs: list[RunSource] = field(default_factory=list)
    table: ScoreTable | None = None
    intervals_svg: str = ""
    heatmap_svg: str = ""
    heatmap_measure: str = ""
    differences_svg: str = ""  # per-topic difference of each run from the baseline, by the first measure
    scored: dict[str, str] = field(default_factory=dict)  # run file name: path, of the runs scored
    topics: int = 0
    notes: list[str] = field(default_factory=list)
    missing: Missing | None = None
    holes: list = field(default_factory=list)  # judging.holes.HoleScores of scored runs whose holes a model filled


@dataclass
class AnswersSection:
    files: list[str] = field(default_factory=list)
    table: ScoreTable | None = None
    nuggets: int = 0
    drafts: int = 0
    notes: list[str] = field(default_factory=list)
    missing: Missing | None = None


@dataclass
class EvidenceSection:
    source: str = ""
    k: int = 10
    table: ScoreTable | None = None
    funnel: pd.DataFrame | None = None
    funnel_svg: str = ""
    notes: list[str] = field(default_factory=list)
    missing: Missing | None = None


@dataclass
class PoolSection:
    name: str = ""
    strategy: str = ""
    params: dict = field(default_factory=dict)
    topics: pd.DataFrame | None = None  # per topic: candidates, to_judge, duplicates, judged, unjudged, relevant
    runs: pd.DataFrame | None = None  # per run: topics, contributed, unique, judged, relevant, unique_relevant
    svg: str = ""
    notes: list[str] = field(default_factory=list)
    missing: Missing | None = None


@dataclass(frozen=True)
class JudgeRow:
    kind: str
    name: str
    model: str | None
    prompt: str | None
    judgments: int
    failed: int
    pairs: int  # (topic, document) pairs it judged


@dataclass(frozen=True)
class AgreementRow:
    a: str
    b: str
    pairs: int
    kappa: float
    kappa_linear: float
    kappa_binary: float


@dataclass
class AgreementSection:
    judges: list[JudgeRow] = field(default_factory=list)
    pairs: list[AgreementRow] = field(default_factory=list)
    too_few: list[tuple[str, str, int]] = field(default_factory=list)
    min_common: int = 20
    threshold: int = 1
    missing: Missing | None = None
    validation: Any = None  # trecbench.judging.validate.Validation of the newest validation sample, if people judged it
    compared: list[JudgePair] = field(default_factory=list)  # confusion matrix and system-ordering correlation
    corrected: Any = None  # (Correction, sentence): the runs' model-qrels means corrected by people's grades


@dataclass
class CostSection:
    rows: list[dict] = field(default_factory=list)  # per purpose: models, calls, cached, failed, tokens, cost
    total: dict = field(default_factory=dict)
    unpriced: int = 0
    missing: Missing | None = None


@dataclass
class Report:
    overview: Overview
    retrieval: RetrievalSection
    answers: AnswersSection
    evidence: EvidenceSection
    pool: PoolSection
    agreement: AgreementSection
    cost: CostSection
    reuse: ReuseSection = field(default_factory=ReuseSection)
    audit: AuditSection = field(default_factory=AuditSection)
    support: Any = None  # trecbench.report.support.SupportSection


SECTIONS = 6  # progress steps besides two per run: qrels, answers, evidence, pool, agreement, model calls


def build_report(workspace: WorkspaceLike, options: ReportOptions | None = None, *, progress: Any = None) -> Report:
    """Gather every section of the report of `workspace` (a path or a `Workspace`).

    `progress` is a tqdm-like bar (total, update, set_description_str); the command passes one.
    """
    from trecbench.store import as_workspace

    options = options or ReportOptions()
    bar = progress if progress is not None else SilentProgress()
    ws = as_workspace(workspace)
    _check_measures(options.measures)
    stamp = generated_at()  # a bad SOURCE_DATE_EPOCH is refused before any work (matplotlib reads it too)
    found: list[str] = []
    sources = discover_runs(ws, options.runs, include_workspace=options.workspace_runs, notes=found)
    bar.total = SECTIONS + 2 * len(sources)
    bar.refresh()

    bar.set_description_str("qrels")
    made = report_qrels(ws, options)
    qrels, propagated, pool_frame = (None if made.empty else made.qrels), made.propagated, made.pool
    bar.update()
    retrieval = retrieval_section(qrels, sources, options, bar)
    retrieval.notes[:0] = found
    retrieval.holes = filled_holes(ws, retrieval.scored, options)
    bar.set_description_str("answers")
    answers = answers_section(ws, options)
    bar.update()
    bar.set_description_str("evidence")
    evidence = evidence_section(ws, options)
    bar.update()
    bar.set_description_str("pool")
    pool = pool_section(ws, pool_frame, qrels, options)
    reuse = reuse_section(ws, qrels, options)
    bar.update()
    bar.set_description_str("judge agreement")
    agreement = agreement_section(ws, options, retrieval.scored)
    from trecbench.judging.validate import report_validation

    agreement.validation = report_validation(ws, threshold=options.threshold)
    from trecbench.evaluation.correction.workspace import report_correction

    agreement.corrected = report_correction(ws, retrieval.scored, options.measures, threshold=options.threshold)
    audit = audit_section(ws)
    bar.update()
    bar.set_description_str("model calls")
    cost = cost_section(ws)
    bar.update()
    overview = _overview(ws, qrels, propagated, pool_frame, options, len(retrieval.table.runs) if retrieval.table
                         else 0, stamp)
    from trecbench.report.support import support_section

    return Report(overview, retrieval, answers, evidence, pool, agreement, cost, reuse, audit, support_section(ws, options))


def _check_measures(measures: Sequence[str]) -> None:
    from trecbench.evaluation.retrieval.names import MeasureError, parse_measures

    if not measures:
        raise ReportOptionError("give at least one measure")
    try:
        parse_measures(list(measures))
    except MeasureError as e:
        raise ReportOptionError(str(e)) from None


# ---- runs and qrels ---------------------------------------------------------------------------------


def discover_runs(ws: Workspace, given: Sequence[str], *, include_workspace: bool = True,
                  notes: list[str] | None = None) -> list[RunSource]:
    """The runs to score: those given, then the files in BENCH/runs/, then every run the workspace's pools of
    runs were built from (their stored paths and sha256s). A pooled run whose file is gone, or whose content
    changed since it was pooled, gets a sentence in `notes` (a changed one is still scored).

    A file is scored once however it was found (compared by resolved path; a pooled run also by content, so
    its copy in BENCH/runs/ is not scored twice).
    """
    out: list[RunSource] = []
    seen: set[str] = set()

    def add(path: str, name: str | None, origin: str) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.append(RunSource(path, name, origin))

    for path in given:
        add(str(path), None, "--runs")
    if not include_workspace:
        return out
    folder = ws.path / "runs"
    if folder.is_dir():
        for p in sorted(folder.iterdir()):
            if p.is_file() and not p.name.startswith(".") and not p.name.endswith(".idx"):
                add(str(p), None, "runs/ folder")
    pooled = _pooled_runs(ws)
    if pooled:  # a pooled run copied into BENCH/runs/ (or given) is the same run: compared by content
        from trecbench.release.bundle import file_sha256

        have = {file_sha256(Path(s.path)) for s in out if os.path.isfile(s.path)}
    for source, note in pooled:
        if source is not None and file_sha256(Path(source.path)) not in have:
            add(source.path, source.name, source.origin)
        if note and notes is not None:
            notes.append(note)
    return out


def _pooled_runs(ws: Workspace) -> list[tuple[RunSource | None, str]]:
    """The runs each pool of runs records (path, sha256), found as `pool loo` finds them, with a sentence when
    one is gone or changed since it was pooled."""
    from trecbench.judging.samples import is_pool_of_runs
    from trecbench.pooling.loo import pooled_run_file
    from trecbench.release.bundle import file_sha256

    out: list[tuple[RunSource | None, str]] = []
    for pool in ws.pools():
        if not is_pool_of_runs(pool.strategy):
            continue
        for record in pool.params.get("runs", []):
            if not isinstance(record, dict) or not record.get("path"):
                continue
            name, recorded = str(record.get("name") or ""), str(record["path"])
            path = pooled_run_file(ws, recorded)
            if path is None:
                out.append((None, f"run {name!r} of pool {pool.name!r} is no longer at {recorded}: not scored"))
                continue
            changed = record.get("sha256") and file_sha256(Path(path)) != record["sha256"]
            note = (f"run {name!r} of pool {pool.name!r} changed since it was pooled (its sha256 differs): "
                    "scored as it is now") if changed else ""
            out.append((RunSource(path, None, f"pool {pool.name}"), note))
    return out


def report_qrels(ws: Workspace, options: ReportOptions) -> Any:
    """The workspace's qrels as `qrels export --prefer --pool` makes them (`trecbench.workspace_qrels`)."""
    from trecbench.qrels.select import workspace_qrels

    try:
        return workspace_qrels(ws, prefer=options.prefer, pool=options.pool)
    except InputError as e:
        raise ReportOptionError(e.problems[0].message) from None


def _score_one(qrels: pd.DataFrame, source: RunSource, measures: Sequence[str]) -> tuple[pd.DataFrame, list]:
    """Per-topic scores of one run, and the Judged@10 warning if the qrels judge too little of it."""
    from trecbench.evaluation.retrieval.frames import low_judged, score_runs, to_frame

    runs = {source.name: source.path} if source.name else [source.path]
    results = score_runs(qrels[["query_id", "doc_id", "relevance"]], runs, list(measures), judged_k=10)
    return to_frame(results, per_topic=True), low_judged(results)


def retrieval_section(qrels: pd.DataFrame | None, sources: list[RunSource], options: ReportOptions,
                      bar: Any) -> RetrievalSection:
    from concurrent.futures import ThreadPoolExecutor

    from trecbench.report import plots

    section = RetrievalSection(runs=sources)
    if not sources:
        section.missing = Missing("No runs to score: none were given and the workspace has none registered "
                                  "(BENCH/runs/ is empty).",
                                  "trecbench report -w BENCH --runs bm25.txt dense.txt -o report.html")
        return section
    if qrels is None:
        bar.update(2 * len(sources))
        section.missing = Missing("No judgments in the workspace yet, so there are no qrels to score the runs "
                                  "against.", "trecbench qrels import qrels.txt -w BENCH --judge nist")
        return section
    frames: list[tuple[RunSource, pd.DataFrame]] = []
    bar.set_description_str("scoring runs")
    workers = max(1, min(len(sources), os.cpu_count() or 1, 4))
    with ThreadPoolExecutor(workers) as pool:
        futures = [(s, pool.submit(_score_one, qrels, s, options.measures)) for s in sources]
        for source, future in futures:
            try:
                frame, low = future.result()
                frames.append((source, frame))
                section.scored[Path(source.path).name] = source.path
                section.notes.extend(f"unjudged documents: {warning}" for warning in low)
            except InputError as e:
                if source.origin == "--runs":
                    raise
                section.notes.append(f"{source.path} ({source.origin}) not scored: {e.problems[0]}")
            bar.update()
    if not frames:
        bar.update(len(sources))
        section.missing = Missing("None of the workspace's run files could be read.",
                                  "trecbench runs validate BENCH/runs/*")
        return section
    per_topic = _named(frames, section.notes)
    text = [c for c in per_topic.columns if not pd.api.types.is_numeric_dtype(per_topic[c])]
    if text:  # e.g. relstring of all_trec: no mean, no interval
        section.notes.append(f"not shown (not numbers): {', '.join(map(str, text))}")
        per_topic = per_topic.drop(columns=text)
    bar.update(len(sources) - len(frames))  # runs that were not scored have no table rows either
    bar.set_description_str("intervals and tests")
    try:
        table = score_table(per_topic, baseline=options.baseline, iterations=options.iterations, seed=options.seed,
                            alpha=options.alpha, progress=lambda run: bar.update())
    except KeyError as e:
        raise ReportOptionError(str(e.args[0])) from None
    section.table = table
    section.topics = int(per_topic.index.get_level_values("query_id").nunique()) - 1
    first = table.measures[0]
    section.heatmap_measure = first
    cells = [table.cell(r, first) for r in table.runs]
    section.intervals_svg = plots.interval_plot(table.runs, [c.mean for c in cells], [c.low for c in cells],
                                                [c.high for c in cells], measure=first, baseline=table.baseline)
    grid = table.per_topic[first].unstack("query_id").reindex(table.runs)
    grid = grid[sorted(grid.columns, key=natural_key)]
    section.heatmap_svg = plots.heatmap(grid, measure=first)
    section.differences_svg = _differences_svg(table, first)
    return section


def _differences_svg(table: ScoreTable, measure: str) -> str:
    """Each run's per-topic difference from the baseline by `measure` (no figure without a baseline)."""
    from trecbench.report import plots

    if table.baseline is None:
        return ""
    scores = table.per_topic[measure].unstack("run")
    others = [r for r in table.runs if r != table.baseline]
    return plots.difference_plot(scores[others].sub(scores[table.baseline], axis=0), measure=measure,
                                 baseline=table.baseline)


def _named(frames: list[tuple[RunSource, pd.DataFrame]], notes: list[str]) -> pd.DataFrame:
    """One per-topic frame; runs that share a name are told apart by their file name."""
    names = [f.index.get_level_values("run")[0] for _, f in frames]
    parts = []
    for (source, frame), name in zip(frames, names):
        if names.count(name) > 1:
            same = [Path(s.path) for (s, _), n in zip(frames, names) if n == name]
            new = f"{name} ({_label(Path(source.path), same)})"
            notes.append(f"runs named {name!r} are told apart by file: {new}")
            frame = frame.rename(index={name: new}, level="run")
        parts.append(frame)
    return pd.concat(parts)


def _label(path: Path, same: list[Path]) -> str:
    """The first of a run file's name, its folder and name, and its whole path that no other of `same` has."""
    forms: list[Callable[[Path], str]] = [lambda p: p.name, lambda p: f"{p.parent.name}/{p.name}", str]
    for form in forms:
        if [form(p) for p in same].count(form(path)) == 1:
            return form(path)
    return str(path)


def natural_key(value: Any) -> tuple:
    """`T2` before `T10`; numbers compare as numbers."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", str(value)) if p)


def filled_holes(ws: Workspace, runs: dict[str, str], options: ReportOptions) -> list:
    """The scored runs' three figures and warning (`trecbench.judging.holes.hole_scores`, as `eval retrieval -w`
    prints them) by the first measure; none when no model judge filled a hole of their top 10."""
    from trecbench.judging.holes import DEFAULT_DEPTH, has_filled_holes, hole_scores

    if not runs or not has_filled_holes(ws, runs, depth=DEFAULT_DEPTH):
        return []
    return hole_scores(ws, runs, options.measures[0], depth=DEFAULT_DEPTH, rel_level=options.threshold)


# ---- answers and evidence ---------------------------------------------------------------------------


def answers_section(ws: Workspace, options: ReportOptions) -> AnswersSection:
    from trecbench.evaluation.answers.scoring import evaluate_answers
    from trecbench.evaluation.evidence.duplicates import duplicate_groups
    from trecbench.evaluation.answers.scoring import nuggets_used
    from trecbench.nuggets.store import workspace_nuggets

    section = AnswersSection(files=[str(a) for a in options.answers])
    topics = workspace_nuggets(ws)
    section.nuggets = sum(len(t.nuggets) for t in topics)
    section.drafts = sum(n.status == "draft" for t in topics for n in t.nuggets)
    if not options.answers:
        section.missing = Missing("No answer files given: RAG answers are scored against the workspace's nuggets "
                                  "(V_strict, V, A_strict, A, W_strict, W).",
                                  "trecbench report -w BENCH --answers rag-run.jsonl -o report.html")
        return section
    if not topics:
        section.missing = Missing("The workspace has no nuggets to score the answers against.",
                                  "trecbench nuggets draft -w BENCH --extractive")
        return section
    scores, _ = evaluate_answers(topics, list(options.answers), assigner="citation",
                                 duplicates=duplicate_groups(ws, options.pool))
    if scores.frame.empty or scores.frame.index.get_level_values("query_id").nunique() <= 1:
        section.missing = Missing("None of the answered topics has nuggets in the workspace.",
                                  "trecbench nuggets list -w BENCH")
        return section
    section.table = score_table(scores.frame, iterations=options.iterations, seed=options.seed, alpha=options.alpha)
    section.notes.append(nuggets_used(topics, "the workspace"))  # the first line of `eval answers -w`, same words
    section.notes.extend(scores.messages())  # what `eval answers` says about the same scores
    return section


def evidence_section(ws: Workspace, options: ReportOptions) -> EvidenceSection:
    from trecbench.evaluation.evidence.duplicates import duplicate_groups
    from trecbench.evaluation.evidence.recall import evaluate_evidence, evidence_from_nuggets, read_evidence
    from trecbench.nuggets.store import workspace_nuggets
    from trecbench.report import plots

    section = EvidenceSection(k=options.k)
    if options.evidence:
        items = read_evidence(options.evidence)
        section.source = f"evidence file {options.evidence}"
    else:
        items = evidence_from_nuggets(workspace_nuggets(ws))
        section.source = "the evidence links of the workspace's nuggets"
    if not options.contexts:
        section.missing = Missing("No contexts given: the funnel follows each evidence item through a system's "
                                  "stages (initial, reranked, final ...), from staged JSONL {qid, stage, docids} "
                                  "or TREC runs.",
                                  "trecbench report -w BENCH --contexts stages.jsonl --evidence evidence.jsonl "
                                  "-o report.html")
        return section
    if not any(i.any_of for i in items):  # nuggets without supporting documents are no evidence
        section.missing = Missing("No evidence: no --evidence file was given and no nugget of the workspace is "
                                  "linked to supporting documents.",
                                  "trecbench report -w BENCH --contexts stages.jsonl --evidence evidence.jsonl "
                                  "-o report.html")
        return section
    scores = evaluate_evidence(items, list(options.contexts), k=options.k, permissions=options.permissions,
                               duplicates=duplicate_groups(ws, options.pool))
    section.notes.extend(scores.messages())  # what `eval evidence` says about the same scores
    section.table = score_table(scores.frame, iterations=options.iterations, seed=options.seed, alpha=options.alpha)
    section.funnel = scores.stage_summary()
    section.funnel_svg = plots.funnel_plot(section.funnel)
    return section


# ---- pool, judges, model calls ----------------------------------------------------------------------


def pool_section(ws: Workspace, pool: pd.DataFrame | None, qrels: pd.DataFrame | None,
                 options: ReportOptions) -> PoolSection:
    from trecbench.report import plots

    section = PoolSection()
    if pool is None:
        section.missing = Missing("No pool is stored in the workspace: the pool is what was judged, and each "
                                  "run's unique contribution is measured against it.",
                                  "trecbench pool RUN... -w BENCH")
        return section
    section.name = str(pool.attrs.get("name", ""))
    if "strategy" in pool.attrs:
        section.strategy, params = pool.attrs["strategy"], dict(pool.attrs.get("info") or {})
        # a pool made by `trecbench pool -w` stores how it was made; show the knobs, name the runs
        runs = params.pop("runs", None)
        params = {k: v for k, v in params.items()
                  if k not in ("corpus", "topics", "strategy") and v not in (None, {}, "")}
        if runs:
            params["runs"] = ", ".join(r.get("name", "?") if isinstance(r, dict) else str(r) for r in runs)
        section.params = params
    grades = None
    if qrels is not None:
        direct = qrels[qrels["propagated_from"].isna()]
        grades = direct[["query_id", "iteration", "doc_id", "relevance"]].reset_index(drop=True)
    frame = pool.copy()
    frame["group"] = frame["group"].where(frame["group"].notna(), frame["doc_id"])
    if frame["runs"].notna().all() and frame["n_runs"].notna().all() and len(frame):
        from trecbench.pooling.pool import Pool
        from trecbench.pooling.stats import pool_stats

        frame["n_runs"] = frame["n_runs"].astype("int64")
        stats = pool_stats(Pool(frame), grades, rel_level=max(1, options.threshold))
        section.topics, section.runs = stats["topics"], stats["runs"]
    else:
        section.topics = _topic_counts(frame, qrels, max(1, options.threshold))
        section.notes.append("The stored pool does not record which runs retrieved each document, so runs' "
                             "contributions cannot be shown.")
    if section.topics is not None and len(section.topics) > 1:
        shown = section.topics.drop(index="all")
        shown = shown.loc[sorted(shown.index, key=natural_key)]
        section.topics = pd.concat([shown, section.topics.loc[["all"]]])
        section.svg = plots.pool_plot(shown)
    return section


def _topic_counts(frame: pd.DataFrame, qrels: pd.DataFrame | None, rel_level: int) -> pd.DataFrame:
    out = pd.DataFrame({"query_id": frame["query_id"], "candidates": 1,
                        "to_judge": frame["representative"].astype("int64"),
                        "duplicates": (~frame["representative"]).astype("int64")})
    if qrels is not None:
        grade = frame.merge(qrels[["query_id", "doc_id", "relevance"]], on=["query_id", "doc_id"],
                            how="left")["relevance"]
        judged = grade.notna() & (grade.fillna(-1) >= 0)
        out["judged"] = judged.astype("int64").to_numpy()
        out["unjudged"] = (~judged).astype("int64").to_numpy()
        out["relevant"] = (judged & (grade.fillna(-1) >= rel_level)).astype("int64").to_numpy()
    topics = out.groupby("query_id", sort=False).sum()
    topics.loc["all"] = topics.sum()
    return topics.astype("int64")


def agreement_section(ws: Workspace, options: ReportOptions, runs: dict[str, str] | None = None) -> AgreementSection:
    """Each judge's counts, Cohen's kappa of every two judges with `min_common` pairs in common, and for those
    the confusion matrix and how alike the orderings of `runs` (name: file) by the first measure are."""
    from trecbench.qrels.select import latest_per_judge

    section = AgreementSection(min_common=options.min_common, threshold=options.threshold)
    by_name: dict[tuple[str, str], list] = {}
    for stats in ws.judge_stats():
        by_name.setdefault((stats.judge.kind, stats.judge.name), []).append(stats)
    if not by_name:
        section.missing = Missing("No judgments in the workspace yet.",
                                  "trecbench judge llm -w BENCH --model openai/gpt-4o-mini --dry-run")
        return section
    judgments = ws.judgments()
    pairs = judgments.drop_duplicates(["judge_kind", "judge", "query_id", "doc_id"]).groupby(
        ["judge_kind", "judge"]).size().to_dict()
    section.judges = [JudgeRow(kind, name, _joined(s.judge.model for s in group),
                               _joined(s.judge.prompt_id for s in group), sum(s.direct for s in group),
                               sum(s.failed for s in group), int(pairs.get((kind, name), 0)))
                      for (kind, name), group in sorted(by_name.items())]
    judgments = judgments[judgments["propagated_from"].isna()]
    latest = latest_per_judge(judgments)
    by_judge = {}
    for (kind, name), group in latest.groupby(["judge_kind", "judge"], sort=True):
        by_judge[_judge_label(kind, name)] = group[["query_id", "doc_id", "grade"]].rename(
            columns={"grade": "relevance"}).astype({"relevance": "int64"})
    keys = {label: set(zip(f["query_id"], f["doc_id"])) for label, f in by_judge.items()}
    labels = sorted(by_judge, key=lambda x: (-len(keys[x]), x))
    _kappas(section, by_judge, keys, labels, options)
    section.compared = judge_pairs(by_judge, [(p.a, p.b) for p in section.pairs], runs or {}, options.measures[0],
                                   options.threshold)
    return section


def _kappas(section: AgreementSection, by_judge: dict[str, pd.DataFrame], keys: dict[str, set], labels: list[str],
            options: ReportOptions) -> None:
    from trecbench.qrels.agreement import agreement

    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            common = len(keys[a] & keys[b])
            if common < options.min_common:
                if common:
                    section.too_few.append((a, b, common))
                continue
            result = agreement(by_judge[a], by_judge[b], threshold=options.threshold)
            section.pairs.append(AgreementRow(a, b, result.pairs, result.kappa, result.kappa_linear,
                                              result.kappa_binary))


def _joined(values) -> str | None:
    """Distinct non-empty values, comma-separated in first-seen order (None when there are none)."""
    seen = list(dict.fromkeys(v for v in values if v))
    return ",".join(seen) if seen else None


def _judge_label(kind: str, name: str) -> str:
    return f"{name} ({kind})"


def cost_section(ws: Workspace) -> CostSection:
    from trecbench.llm.cache import ResponseCache
    from trecbench.store.model_calls import models_by_purpose

    section = CostSection()
    conn = ws.connection()
    usage = ResponseCache(conn).usage_by_purpose()
    if not usage:
        section.missing = Missing("No model calls are recorded in this workspace. Calls are recorded, with their "
                                  "tokens and cost, when a model judges the pool (`judge llm` without --dry-run: "
                                  "a dry run only estimates and records nothing), drafts nuggets (`nuggets draft "
                                  "--model`) or assigns nuggets to answers (`eval answers --assigner llm`).",
                                  "trecbench judge llm -w BENCH --model openai/gpt-4o-mini")
        return section
    models = models_by_purpose(conn)
    for purpose in sorted(usage):
        u = usage[purpose]
        section.rows.append({"purpose": purpose or "(none)", "models": ", ".join(sorted((models.get(purpose) or "")
                                                                                       .split(","))),
                             "calls": u.calls, "cached": u.cached, "failed": u.failed,
                             "tokens_in": u.prompt_tokens, "tokens_out": u.completion_tokens, "cost": u.cost})
        section.unpriced += u.unpriced
    section.total = {k: sum(r[k] for r in section.rows)
                     for k in ("calls", "cached", "failed", "tokens_in", "tokens_out", "cost")}
    return section


def generated_at() -> str:
    """When the report says it was made: now, to the minute, or `SOURCE_DATE_EPOCH` (seconds since 1970, UTC) when
    it is set, as reproducible builds ask (https://reproducible-builds.org/specs/source-date-epoch/): two renders of
    one workspace are then the same bytes (matplotlib's SVG figures take their date from it too). A value that is not
    a whole number of seconds is refused."""
    given = os.environ.get("SOURCE_DATE_EPOCH")
    if given is None:
        moment = datetime.now(timezone.utc)
    else:
        try:
            moment = datetime.fromtimestamp(int(given.strip()), timezone.utc)
        except (ValueError, OverflowError, OSError):
            raise InputError("SOURCE_DATE_EPOCH", 0, f"not a time in whole seconds since 1970: {given!r}") from None
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _overview(ws: Workspace, qrels: pd.DataFrame | None, propagated: int, pool: pd.DataFrame | None,
              options: ReportOptions, runs: int, stamp: str) -> Overview:
    from trecbench import __version__
    from trecbench.store.nuggets import nugget_counts

    created = ws.meta("created_at")
    stats = ws.judge_stats()
    ok, failed = sum(s.ok for s in stats), sum(s.failed for s in stats)
    judges = len({(s.judge.kind, s.judge.name) for s in stats})
    nuggets, vital, approved = nugget_counts(ws.connection())
    return Overview(
        name=ws.settings.name, generated_at=stamp,
        version=__version__, created_at=created, corpus=ws.settings.corpus,
        topics=len(ws.topics()), judgments=int(ok or 0), failed=int(failed or 0), judges=int(judges or 0),
        qrels_topics=int(qrels["query_id"].nunique()) if qrels is not None else 0,
        qrels_pairs=len(qrels) if qrels is not None else 0,
        relevant=int((qrels["relevance"] >= max(1, options.threshold)).sum()) if qrels is not None else 0,
        rel_level=max(1, options.threshold), propagated=propagated,
        prefer=options.prefer, pool=str(pool.attrs.get("name")) if pool is not None else None,
        nuggets=int(nuggets or 0), vital=int(vital or 0), approved=int(approved or 0), runs=runs)

