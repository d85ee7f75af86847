"""`trecbench eval ...`: scoring commands."""
from __future__ import annotations

import sys

import click

from trecbench.cli import LazyGroup, no_teardown
from trecbench.cli.common import (
    chunking_options,
    format_option,
    missing_topics_option,
    output_option,
    per_topic_option,
    quiet_option,
    trec_eval_version_option,
)
from trecbench.helpers.process import lean_process

# eval subcommands kept in their own modules (imported only when used)
EVAL_COMMANDS: dict[str, tuple[str, str, str]] = {
    # name: (module under trecbench.cli, attribute, one-line help)
    "answers": ("eval_answers", "answers", "Score RAG answers against nuggets: V_strict, V, A_strict, A, W_strict, W."),
    "context-recall": ("eval_context", "context_recall", "Context recall by ids, string similarity or a model."),
    "evidence": ("eval_evidence", "evidence", "EvidenceRecall@k, CompleteEvidence@k and the funnel of staged contexts."),
    "support": ("eval_support", "support", "Weighted support precision and recall of answers' citations."),
    "compare": ("eval_compare", "compare", "Paired significance tests against a baseline; a regression gate for CI."),
}


@click.group("eval", cls=LazyGroup, lazy_commands=EVAL_COMMANDS)
def eval_group() -> None:
    """Score runs: retrieval measures identical to trec_eval.

    \b
    Example:
      trecbench eval retrieval --qrels qrels.txt run.txt -m nDCG@10 -m R@100
    """


@eval_group.command("retrieval")
@click.option("--qrels", "qrels_path", default=None, type=click.Path(dir_okay=False),
              help="Relevance judgments (TREC qrels). Give --qrels or -w.")
@click.option("-w", "--workspace", type=click.Path(file_okay=False), default=None,
              help="Score against this workspace's judgments instead of --qrels: the qrels `trecbench qrels "
                   "export -w BENCH` writes (a human judgment preferred, duplicate groups' grades propagated).")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME",
              help="ir-measures name (nDCG@10, R@100, AP, P(rel=2)@10, Judged@10) or trec_eval name "
                   "(ndcg_cut.10 or as trec_eval prints it, ndcg_cut_10; map, official, all_trec). Repeatable; "
                   "a trec_eval measure given twice keeps its first parameters. Default: AP nDCG@10 R@100 P@10 RR "
                   "(official with --format trec_eval).")
@click.option("-l", "--rel-level", default=None, type=int,
              help="Lowest grade counted as relevant (trec_eval -l) [default: 1; with -w, the workspace's scale's "
                   "`relevant` (trecbench.toml's [scale], 1 unless it says otherwise)].")
@click.option("-M", "--depth", type=click.IntRange(min=1), default=None,
              help="Evaluate only the top N documents of each topic (trec_eval -M).")
@per_topic_option("Also print per-topic values (trec_eval -q).")
@click.option("-n", "--no-summary", is_flag=True,
              help="No `all` rows: per-topic rows only, with -q (trec_eval -n; --format trec_eval only).")
@missing_topics_option("zero: qrels topics absent from a run score 0 and count in means (trec_eval -c); "
                       "skip: average over the topics the run has.")
@trec_eval_version_option(
              "9: numbers of trec_eval 9.0.8 / pytrec_eval / ir-measures (float scores); "
                   "10: trec_eval 10.0 (double scores, lround recall cut-offs, rbp/unj measures).")
@click.option("-J", "--judged-only", is_flag=True,
              help="Drop the documents the qrels do not grade before scoring: condensed lists (trec_eval -J).")
@click.option("--judged-k", type=click.IntRange(min=1), default=10, show_default=True,
              help="Depth of the Judged@k check (warn about runs the qrels judge little of).")
@click.option("--judged-threshold", type=click.FloatRange(0, 1), default=0.9, show_default=True,
              help="Warn when a run's mean Judged@k is below this (0 turns the check off).")
@format_option("table", "trec_eval", "csv", "json")
@output_option("Write to this file instead of standard output.", type=click.Path(dir_okay=False, writable=True))
@quiet_option()
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Runs scored at the same time. Default: one per core (at most 8).")
@click.option("--against", type=click.Path(dir_okay=False), default=None,
              help="A saved trec_eval -q output: list every (measure, topic) whose value differs; exit 1 if any.")
@chunking_options("--qrels-spans (or -w's corpus)", "one passage of the run's chunking")
@click.option("--qrels-spans", type=click.Path(dir_okay=False), default=None,
              help="The corpus the qrels were judged on, with source spans, for --corpus-spans or --level document "
                   "(default: -w's corpus).")
@click.option("--level", type=click.Choice(["passage", "document"]), default="passage", show_default=True,
              help="document: score source documents as TREC RAG does (a document's grade is its best passage's; a "
                   "run's documents are its passages' sources in order of first appearance).")
@click.option("--corrected", is_flag=True,
              help="With -w: also print each run's mean under the workspace's model judge's qrels corrected by the "
                   "pairs people graded (prediction-powered inference), with 95%% intervals and differences between "
                   "runs (docs/correction.md).")
@click.option("--corrected-judge", default=None, metavar="NAME",
              help="With --corrected: the model judge whose qrels are corrected (default: the one with most judgments).")
@click.option("--corrected-sample", default=None, metavar="POOL",
              help="With --corrected: the validation sample whose design weights people's grades (default: the newest).")
@click.option("--width", type=click.FloatRange(0, min_open=True), default=None,
              help="With --corrected: also print the human judgments needed for an interval this wide.")
def retrieval(qrels_path, workspace, runs, measures, rel_level, depth, per_topic, no_summary, missing_topics,
              trec_eval_version, judged_only, judged_k, judged_threshold, fmt, output, quiet, threads, against,
              corpus_spans, cover, qrels_spans, level, corrected, corrected_judge, corrected_sample, width) -> None:
    """Score RUN files against --qrels or -w BENCH with trec_eval's numbers.

    Several runs give one table, a row per run, best first by the first measure (ties in the order
    given); a first line on stderr names the relevance level and the order (`relevant: grade >= 1;
    runs best first by AP`). --format trec_eval prints, for each run, exactly
    what `trec_eval -c [-q] -m ...` prints (the chosen version). Files may be gzipped; `-` reads
    standard input (the qrels or one run). A run whose mean Judged@10 is below 0.9 is warned about,
    with its worst topics: its scores count unjudged documents as non-relevant.

    With --corpus-spans, runs made on another chunking of the same sources are scored against the
    qrels projected by source span (a passage gets the best grade of the judged passages it covers);
    with --level document, at source-document level. The level and rule are printed (stderr).

    \b
    Example:
      trecbench eval retrieval --qrels qrels.txt bm25.txt dense.txt -m nDCG@10 -m R@100 -m AP
      trecbench eval retrieval --qrels qrels.txt bm25.txt -m all_trec -q --format trec_eval
      trecbench eval retrieval --qrels qrels.txt bm25.txt -m all_trec --against bm25.trec_eval.txt
      trecbench eval retrieval -w mybench bm25.txt dense.txt -m nDCG@10
      trecbench eval retrieval --qrels qrels.txt --qrels-spans corpus.jsonl --corpus-spans chunks.jsonl run.txt
      trecbench eval retrieval --qrels qrels.txt --qrels-spans corpus.jsonl --level document run.txt
      trecbench eval retrieval -w mybench bm25.txt dense.txt -m P@10 -m nDCG@10 --corrected --width 0.05
    """
    _scoring_process(workspace)
    from trecbench.helpers.progress import progress_bar
    from trecbench.evaluation.retrieval import output as out
    from trecbench.evaluation.retrieval.names import MeasureError
    from trecbench.evaluation.retrieval.frames import DEFAULT_MEASURES, low_judged, score_runs
    from trecbench.files.output import check_writable

    check_writable(output)
    version = trec_eval_version
    if not measures:
        measures = ("official",) if fmt == "trec_eval" or against else DEFAULT_MEASURES
    _check_usage(qrels_path, workspace, runs, against)
    correction = _correction(workspace, runs, measures, rel_level, missing_topics, fmt, against, judged_only,
                             corrected, corrected_judge, corrected_sample, width)
    if no_summary and (fmt != "trec_eval" or against):
        raise click.UsageError("-n (no summary) is trec_eval's: give it with --format trec_eval, without --against")
    if rel_level is None:
        rel_level = _scale_level(workspace)
    projection = _projection(qrels_spans, corpus_spans, cover, level, workspace)
    notes: list[str] = [] if projection is None else [projection.rule]
    with progress_bar(not quiet and len(runs) > 1, total=len(runs), unit="run", delay=1.0, desc="scoring") as bar:
        try:
            results = score_runs(_qrels(qrels_path, workspace), list(runs), measures, rel_level=rel_level, depth=depth,
                                 missing_topics=missing_topics, trec_eval_version=version, judged_only=judged_only,
                                 on_run_done=lambda: bar.update(1), notes=notes,
                                 judged_k=judged_k if judged_threshold > 0 else None, threads=threads,
                                 projection=projection)
        except MeasureError as e:
            raise click.BadParameter(str(e), param_hint="'-m'") from None
    results = out.best_first(results)
    if projection is not None:
        click.echo(notes.pop(0), err=True)  # the level and rule: not a warning
    click.echo(out.level_and_order(results, rel_level), err=True)
    for warning in [*notes, *low_judged(results, judged_threshold)]:
        click.echo(f"warning: {warning}", err=True)
    if against:
        _against(results[0], against, version)
        return
    _write(results, output, fmt, per_topic, version, no_summary, correction,
           _holes(workspace, projection, results, judged_k, rel_level))


def _scoring_process(workspace: str | None) -> None:
    """`helpers.process.lean_process`, and no interpreter teardown once the scores are out (`cli.no_teardown`: the
    output file is closed by then) unless a workspace's database is open (its connections close at exit)."""
    lean_process()
    if workspace is None:
        no_teardown()


def _correction(workspace, runs, measures, rel_level, missing_topics, fmt, against, judged_only, corrected,
                judge, sample, width):
    """--corrected's figures (None without it): usage checked before anything is scored."""
    if not corrected:
        if judge is not None or sample is not None or width is not None:
            raise click.UsageError("--corrected-judge, --corrected-sample and --width go with --corrected")
        return None
    if workspace is None:
        raise click.UsageError("--corrected corrects a workspace's model qrels with its human grades: give -w BENCH")
    if fmt not in ("table", "json") or against or judged_only or "-" in runs:
        raise click.UsageError("--corrected prints a table or JSON (--format table|json), without --against, -J or "
                               "a run on standard input (it reads the runs again)")
    from trecbench.evaluation.correction.workspace import workspace_correction

    return workspace_correction(workspace, list(runs), [m for m in measures if m not in ("official", "all_trec")],
                                judge=judge, sample=sample, rel_level=rel_level, width=width,
                                missing_topics=missing_topics)


def _write(results, output, fmt, per_topic, version, no_summary, correction, notes: list[str]) -> None:
    """The scores (and the corrected ones, with --corrected) to the output, then the coverage notes and `notes`."""
    from trecbench.evaluation.retrieval import output as out
    from trecbench.files.output import open_output

    with open_output(output) as stream:
        if correction is None:
            out.write_results(results, stream, fmt, per_topic=per_topic, version=version, summary=not no_summary)
        elif fmt == "json":
            import io
            import json

            plain = io.StringIO()
            out.write_results(results, plain, fmt, per_topic=per_topic, version=version)
            json.dump({"scores": json.loads(plain.getvalue()), "corrected": {**correction[0].as_dict(),
                                                                             "used": correction[1]}}, stream, indent=2)
            stream.write("\n")
        else:
            from trecbench.evaluation.correction.output import correction_lines

            out.write_results(results, stream, fmt, per_topic=per_topic, version=version)
            stream.write("\n".join(correction_lines(correction[0], correction[1], order=[r.shown for r in results])) + "\n")
    for note in out.coverage_notes(results) + notes:
        click.echo(note, err=True)


def _holes(workspace: str | None, projection, results: list, depth: int, rel_level: int) -> list[str]:
    """With -w, the scores of runs whose holes (top --judged-k pairs people did not grade) a model judge filled:
    people only, filled, corrected, and the warning (`trecbench.judging.holes`); nothing when no model filled
    one, or when runs are projected onto another chunking (holes are pairs of the workspace's own)."""
    if workspace is None or projection is not None:
        return []
    from trecbench.evaluation.retrieval.output import first_mean
    from trecbench.judging.holes import format_hole_scores, has_filled_holes, hole_scores
    from trecbench.store import Workspace

    paths = {r.shown: r.path for r in results if r.path and r.path != "-"}
    measure = first_mean(results)
    if not paths or measure is None:
        return []
    ws = Workspace(workspace)
    if not has_filled_holes(ws, paths, depth=depth):
        return []
    return format_hole_scores(hole_scores(ws, paths, measure, depth=depth, rel_level=rel_level))


def _check_usage(qrels_path: str | None, workspace: str | None, runs: tuple[str, ...], against: str | None) -> None:
    if qrels_path is None and workspace is None:
        raise click.UsageError("give the judgments to score against: --qrels FILE, or -w BENCH (a workspace's)")
    if qrels_path is not None and workspace is not None:
        raise click.UsageError("give the judgments once: --qrels FILE or -w BENCH, not both")
    if against and len(runs) != 1:
        raise click.UsageError("--against compares one run; give exactly one RUN")
    if [qrels_path, *runs].count("-") > 1:
        raise click.UsageError("standard input (-) can be read once: give it for the qrels or for one run")


def _projection(qrels_spans: str | None, corpus_spans: str | None, cover: float, level: str, workspace: str | None):
    """The projection --corpus-spans or --level document asks for (None for neither): the qrels' chunking is
    --qrels-spans, else the workspace's corpus."""
    if corpus_spans is None and level == "passage":
        if qrels_spans is not None:
            raise click.UsageError("--qrels-spans links the qrels to --corpus-spans or --level document: give one")
        return None
    if qrels_spans is None and workspace is not None:
        from trecbench.store import Workspace

        qrels_spans = Workspace(workspace).corpus_source
    if qrels_spans is None:
        raise click.UsageError("give the chunking the qrels were judged on: --qrels-spans CORPUS (with source "
                               "spans), or -w BENCH (its corpus)")
    from trecbench.evaluation.retrieval.projection import read_projection

    return read_projection(qrels_spans, corpus_spans, cover=cover, level=level)


def _scale_level(workspace: str | None) -> int:
    """The lowest relevant grade of the workspace's scale (1 without a workspace, or without [scale])."""
    if workspace is None:
        return 1
    from trecbench.store.workspace import Workspace

    ws = Workspace(workspace)
    try:
        return ws.settings.scale.relevant
    finally:
        ws.close()


def _qrels(qrels_path: str | None, workspace: str | None):
    """The --qrels file, or the workspace's qrels as the report scores runs on them (`trecbench.workspace_qrels`)."""
    if workspace is None:
        return qrels_path
    from trecbench.errors import InputError
    from trecbench.qrels.select import workspace_qrels

    made = workspace_qrels(workspace)
    if made.empty:
        raise InputError(workspace, 0, "no judgments yet: nothing to score against (judge the pool, or "
                                       "`trecbench qrels import`)")
    return made.qrels[["query_id", "doc_id", "relevance"]]


def _against(res, path: str, version: int) -> None:
    from trecbench.errors import InputError
    from trecbench.evaluation.retrieval.against import compare_with, read_trec_eval_output

    theirs = read_trec_eval_output(path)
    comparison = compare_with(res, theirs, version=version)
    for d in comparison.differences:
        click.echo(str(d))
    if comparison.not_computed:
        click.echo(f"not compared, not computed here: {' '.join(comparison.not_computed)} (add them with -m)",
                   err=True)
    if not comparison.compared:
        raise InputError(path, 0, "nothing compared: no (measure, topic) of this file was computed "
                                  f"(its measures: {' '.join(comparison.measures_theirs)})")
    scope = "" if comparison.per_topic else "; the file has only the `all` rows (no -q), so only those"
    click.echo(f"{comparison.same} values identical, {len(comparison.differences)} different "
               f"(trec_eval {version} semantics, {path}{scope})", err=True)
    if comparison.differences:
        sys.exit(1)
