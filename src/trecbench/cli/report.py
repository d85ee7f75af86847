"""`trecbench report`: one self-contained HTML page describing a bench workspace and the runs scored on it."""
from __future__ import annotations


import click

from trecbench.cli.common import quiet_option, several_after_one, workspace_option


@click.command("report", cls=several_after_one("--runs", "--answers", "--contexts"))
@workspace_option
@click.argument("run_args", metavar="[RUN]...", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--runs", "runs", multiple=True, type=click.Path(dir_okay=False),
              help="Run to score (several may follow one --runs, or come as arguments). The run files in "
                   "BENCH/runs/ are scored too.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="HTML file to write.")
@click.option("-m", "--measure", "measures", multiple=True, help="Measure (repeatable) [nDCG@10, R@100, AP].")
@click.option("--baseline", help="Run the others are compared with (default: the best by the first measure).")
@click.option("--answers", "answers", multiple=True, type=click.Path(dir_okay=False),
              help="RAG answer files (TREC RAG 2024/2025 JSONL) scored against the workspace's nuggets; several "
                   "may follow one --answers (answers/*.jsonl).")
@click.option("--contexts", "contexts", multiple=True, type=click.Path(dir_okay=False),
              help="Staged contexts JSONL {qid, stage, docids} or TREC runs, for the evidence funnel; several may "
                   "follow one --contexts.")
@click.option("--permissions", type=click.Path(dir_okay=False),
              help="Which documents each topic may see: sources it may not are dropped from the evidence required.")
@click.option("--evidence", type=click.Path(dir_okay=False),
              help="Evidence JSONL (default: the evidence links of the workspace's nuggets).")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True,
              help="Evidence measures look at the top k of the last stage.")
@click.option("--prefer", type=click.Choice(["human", "model", "latest"]), default="human", show_default=True,
              help="Which judgment of a pair makes the qrels (as `qrels export`).")
@click.option("--pool", "pool_name", help="Stored pool to describe and propagate duplicates' grades (default: newest).")
@click.option("--iterations", type=click.IntRange(min=100), default=10000, show_default=True,
              help="Bootstrap resamples and randomisation-test draws.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random draws.")
@click.option("--no-workspace-runs", is_flag=True, help="Score only the runs given, not those of the workspace.")
@quiet_option()
def report(workspace, run_args, runs, output, measures, baseline, answers, contexts, permissions, evidence, k, prefer,
           pool_name, iterations, seed, no_workspace_runs, quiet) -> None:
    """Write one self-contained HTML report of the workspace: it opens offline, from a file or a mail.

    It shows the runs x measures with 95% bootstrap intervals and marks for runs significantly better
    or worse than the baseline (paired randomisation test, Holm-corrected), a per-topic heatmap, answer
    scores (--answers), the evidence funnel (--contexts), the pool and each run's unique contribution,
    judge agreement (kappa for judges with at least 20 pairs in common) and model calls with their cost.
    Qrels come from the workspace's judgments as `qrels export` makes them. A section without data says
    what would fill it.

    \b
    Example:
      trecbench report -w mybench -o report.html
      trecbench report -w mybench --runs bm25.txt dense.txt -m nDCG@10 -m AP --baseline bm25 -o report.html
      trecbench report -w mybench --answers rag.jsonl --contexts stages.jsonl -o report.html --quiet
    """
    from trecbench.helpers.progress import progress_bar
    from trecbench.report import ReportOptionError, ReportOptions, write_report

    options = ReportOptions(runs=list(runs) + list(run_args), measures=list(measures) or ReportOptions.measures,
                            baseline=baseline, answers=list(answers), contexts=list(contexts), evidence=evidence,
                            permissions=permissions,
                            k=k, prefer=prefer, pool=pool_name, iterations=iterations, seed=seed,
                            workspace_runs=not no_workspace_runs)
    bar = progress_bar(not quiet, unit="step", delay=1.0)
    try:
        result = write_report(workspace, output, options, progress=bar)
    except ReportOptionError as e:
        raise click.BadParameter(str(e)) from None
    finally:
        bar.close()
    empty = [name for name, section in (("retrieval", result.retrieval), ("answers", result.answers),
                                        ("evidence", result.evidence), ("pool", result.pool),
                                        ("judge agreement", result.agreement), ("model calls", result.cost))
             if section.missing is not None]
    runs_scored = len(result.retrieval.table.runs) if result.retrieval.table else 0
    click.echo(f"{output}: {runs_scored} run(s) scored" + (f"; no data for {', '.join(empty)}" if empty else ""))
