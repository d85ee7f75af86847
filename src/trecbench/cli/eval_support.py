"""`trecbench eval support`: weighted support precision and recall of RAG answers' citations."""
from __future__ import annotations

import click

from trecbench.cli.common import format_option, output_option, per_topic_option, workspace_option


@click.command("support")
@workspace_option
@click.option("--judge", default=None, help="Score this judge's grades only (default: a person's first).")
@click.option("--run", "runs", multiple=True, help="Score only this run (repeatable; default: every registered run).")
@click.option("--baseline", default=None,
              help="Also compare every run with this one topic by topic (paired tests, as `eval compare`).")
@per_topic_option()
@format_option("table", "csv", "json")
@output_option()
def support(workspace, judge, runs, baseline, per_topic, fmt, output) -> None:
    """Score the support of the answers registered with `support add`, per run (and topic with -q):

    \b
    SupportP     weighted support precision: the mean weight of the judged sentence-citation pairs
    SupportR     weighted support recall: the mean over sentences of each one's best citation's weight
                 (a sentence citing nothing: 0)
    Unsupported  the share of sentences with no support (weight 0)
    Contradicts  the share of judged citations graded contradicts (when a grade is contradicts)
    Judged       the share of sentence-citation pairs judged

    Weights: full 1, partial 0.5, none 0, contradicts 0 (Thakur et al., SIGIR 2025). A run's value is
    the mean over its topics (macro); the _micro columns pool all its pairs or sentences. A pair not
    judged is left out of SupportP (never scored 0), and a sentence with such a citation and none judged
    full is left out of SupportR and Unsupported; how many is printed on stderr.

    \b
    Example:
      trecbench eval support -w mybench
      trecbench eval support -w mybench --judge gpt-4o-mini -q --format csv -o support.csv
      trecbench eval support -w mybench --baseline rag_good
    """
    from trecbench.evaluation import topic_scores as ts
    from trecbench.evaluation.support import evaluate_support

    try:
        scores = evaluate_support(workspace, judge=judge, runs=runs or None)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    if not scores.answers:
        raise click.UsageError("no registered sentences: register answers with `trecbench support add` first")
    scored = list(dict.fromkeys(a.run_id for a in scores.answers))
    if baseline and baseline not in scored:
        raise click.BadParameter(f"{baseline!r} is not among the runs scored: {', '.join(scored)}",
                                 param_hint="'--baseline'")
    ts.emit(scores.frame, output, fmt, topics=per_topic, notes=scores.notes())
    for message in scores.messages():
        click.echo(message, err=True)
    if baseline:
        _compare(scores, baseline, fmt)


def _compare(scores, baseline: str, fmt: str) -> None:
    import sys

    from trecbench.evaluation.significance import compare_runs, write_comparisons
    from trecbench.evaluation.topic_scores import per_topic

    results = compare_runs(per_topic(scores.frame), baseline, measures=scores.measures)
    write_comparisons(results, sys.stdout, fmt, baseline=baseline)
