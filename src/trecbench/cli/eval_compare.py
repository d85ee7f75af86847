"""`trecbench eval compare`: significance of differences from a baseline; a regression gate for CI."""
from __future__ import annotations

import math
import sys

import click

from trecbench.cli.common import format_option, output_option, per_topic_option


@click.command("compare")
@click.option("--baseline", required=True,
              help="The baseline: a run file (with --qrels) or a run name in the --scores files.")
@click.argument("runs", nargs=-1)
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False), default=None,
              help="Score --baseline and RUNS (run files) with retrieval measures first.")
@click.option("--scores", "score_paths", multiple=True, type=click.Path(dir_okay=False),
              help="Per-topic scores written by `trecbench eval ... -q` (CSV or JSON). Repeatable. "
                   "RUNS then names the runs to compare (default: all).")
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME",
              help="Measures to compare (default: those of --max-drop, else every measure of --scores, "
                   "or nDCG@10 with --qrels). Repeatable.")
@click.option("--test", type=click.Choice(["randomisation", "t"]), default="randomisation", show_default=True,
              help="Test whose Holm-adjusted p decides significance for --max-drop.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Significance level.")
@click.option("--iterations", type=click.IntRange(min=100), default=10000, show_default=True,
              help="Randomisation and bootstrap draws.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random draws.")
@click.option("--max-drop", "max_drops", multiple=True, metavar="MEASURE=DROP",
              help="Fail (exit 1) when a run's mean is below the baseline's by more than DROP and the "
                   "difference is significant. Repeatable.")
@per_topic_option("Also list the topics that got better and worse.")
@click.option("--judged-k", type=click.IntRange(min=1), default=10, show_default=True,
              help="With --qrels: depth of the Judged@k check of each run.")
@click.option("--judged-threshold", type=click.FloatRange(0, 1), default=0.9, show_default=True,
              help="With --qrels: warn when a run's mean Judged@k is below this (0 turns the check off).")
@format_option("table", "csv", "json")
@output_option()
def compare(baseline, runs, qrels_path, score_paths, measures, test, alpha, iterations, seed, max_drops, per_topic,
            judged_k, judged_threshold, fmt, output) -> None:
    """Compare RUNS with --baseline topic by topic: paired t-test, paired randomisation test, Holm
    correction across all comparisons, bootstrap 95% interval of the mean difference, and the
    topics that got better or worse.

    With --max-drop it is a regression gate: exit status 1 when a run is worse than the baseline
    by more than the allowed drop and the difference is significant.

    \b
    Example:
      trecbench eval compare --qrels qrels.txt --baseline bm25.txt dense.txt -m nDCG@10 -m R@100
      trecbench eval compare --qrels qrels.txt --baseline main.txt branch.txt --max-drop nDCG@10=0.01
      trecbench eval compare --scores answers.csv --baseline rag-v1 rag-v2 -m V_strict
    """
    from trecbench.evaluation.significance import compare_runs, write_comparisons

    drops = _parse_drops(max_drops)
    measures = list(measures) or list(drops)
    if bool(qrels_path) == bool(score_paths):
        raise click.UsageError("give --qrels (and run files) or --scores (per-topic score files)")
    if qrels_path:
        scores, base_name, names = _retrieval_scores(qrels_path, baseline, runs, measures or ["nDCG@10"],
                                                     judged_k, judged_threshold)
        measures = list(scores.columns)
    else:
        scores = _read_scores(score_paths)
        base_name, names = baseline, list(runs) or None
        present = list(dict.fromkeys(scores.index.get_level_values("run")))
        unknown = [r for r in [baseline] + list(runs) if r not in present]
        if unknown:
            raise click.UsageError(f"not in the score files: {', '.join(unknown)} (runs: {', '.join(present)})")
        missing = [m for m in measures if m not in scores.columns]
        if missing:
            raise click.UsageError(f"measures not in the score files: {', '.join(missing)} "
                                   f"(measures: {', '.join(scores.columns)})")
    unknown_drops = [m for m in drops if m not in measures]
    if unknown_drops:
        raise click.UsageError(f"--max-drop names measures not compared: {', '.join(unknown_drops)}")
    results = compare_runs(scores, base_name, runs=names, measures=measures or None, iterations=iterations,
                           seed=seed, alpha=alpha, test=test, max_drop=drops)
    from trecbench.files.output import open_output

    with open_output(output) as stream:
        write_comparisons(results, stream, fmt, per_topic=per_topic, baseline=base_name)
    failed = [c for c in results if c.regression]
    for c in failed:
        p = c.p_randomisation_holm if test == "randomisation" else c.p_t_holm
        click.echo(f"regression: {c.run} {c.measure} {c.run_mean:.4f} vs baseline {c.baseline_mean:.4f} "
                   f"({c.difference:+.4f}, allowed -{c.allowed_drop}), Holm-adjusted p {p:.4g} < {alpha}", err=True)
    if failed:
        sys.exit(1)


def _parse_drops(values: tuple[str, ...]) -> dict[str, float]:
    drops = {}
    for value in values:
        measure, eq, amount = value.rpartition("=")
        try:
            drop = float(amount)
        except ValueError:
            drop = math.nan
        if not eq or not measure or not math.isfinite(drop) or drop < 0:
            raise click.BadParameter(f"{value!r}: expected MEASURE=DROP, e.g. nDCG@10=0.01", param_hint="'--max-drop'")
        drops[measure] = drop
    return drops


def _retrieval_scores(qrels_path, baseline, runs, measures, judged_k, judged_threshold):
    from trecbench.evaluation.retrieval.names import MeasureError
    from trecbench.evaluation.retrieval.frames import low_judged, score_runs, to_frame

    notes: list[str] = []
    try:
        results = score_runs(qrels_path, [baseline, *runs], measures, notes=notes,
                             judged_k=judged_k if judged_threshold > 0 else None)
    except MeasureError as e:
        raise click.BadParameter(str(e), param_hint="'-m'") from None
    from trecbench.evaluation.retrieval.output import relevance_rule

    click.echo(relevance_rule(1), err=True)  # score_runs' default level, as `eval retrieval` without -l
    for note in notes:
        click.echo(f"warning: {note}", err=True)
    for warning in low_judged(results, judged_threshold):
        click.echo(f"warning: {warning}", err=True)
    frame = to_frame(results, per_topic=True)
    frame = frame.apply(lambda col: col.astype(float))
    names = list(dict.fromkeys(frame.index.get_level_values("run")))
    if len(names) < 2:
        raise click.UsageError("give at least one run besides --baseline")
    return frame, names[0], names[1:]


def _read_scores(paths):
    import pandas as pd

    from trecbench.evaluation.topic_scores import read_scores

    frames = [read_scores(p) for p in paths]
    return pd.concat(frames, axis=0) if len(frames) > 1 else frames[0]
