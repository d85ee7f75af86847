"""`trecbench judge validate`: draw a blind validation sample, then compare model judges with people on it."""
from __future__ import annotations

import json

import click

from trecbench.cli.common import format_option, workspace_option


@click.command("validate")
@workspace_option
@click.option("--sample", "draw", is_flag=True, help="Draw the sample (a pool of its own) instead of comparing.")
@click.option("--size", type=click.IntRange(1), default=None, help="With --sample: pairs to draw.")
@click.option("--width", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=None,
              help="With --sample: the widest 95%% interval of the agreement rate; pairs = ceil(1.96^2 / width^2).")
@click.option("--from", "source", default=None, help="With --sample: the pool to draw from (default: the newest).")
@click.option("--name", default="validation", show_default=True, help="With --sample: the new pool's name.")
@click.option("--strategy", type=click.Choice(["stratified", "uncertainty"]), default="stratified", show_default=True,
              help="With --sample: stratified (by rank band and model grade, proportional) or uncertainty (pairs "
                   "drawn with probability growing with the model's uncertainty and the runs' ranks: where people "
                   "shrink the corrected intervals most, docs/correction.md).")
@click.option("--pool", "pool_name", default=None, help="The validation pool to compare on (default: the newest).")
@click.option("--reference", default=None, help="Only this human or imported judge's grades (default: people, then imports).")
@click.option("--measure", default="nDCG@10", show_default=True, help="Measure that ranks the pooled runs for tau.")
@click.option("--threshold", default=None, type=click.IntRange(1),
              help="The grade from which a document is relevant (binarised kappa, the measure) [default: the "
                   "workspace's scale's `relevant`, 1 unless trecbench.toml's [scale] says otherwise].")
@click.option("--bootstrap", default=1000, show_default=True, type=click.IntRange(10, 100000),
              help="Bootstrap draws of topics for the intervals.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0), help="Seed of the sample and the bootstrap.")
@format_option("table", "json")
def validate(workspace, draw, size, width, source, name, strategy, pool_name, reference, measure, threshold, bootstrap,
             seed, fmt) -> None:
    """Check a model judge against people on a sample of the pool before judging the whole pool with it.

    First `--sample` stores a stratified sample (by the runs' rank bands and, when a model has judged, by
    its grade) as a pool; people judge it in the web app, blind to model grades (`serve --pool NAME`), or
    their grades are imported (`qrels import FILE --kind human`). Each judge configuration is then run
    on it (`judge llm --pool NAME`). Without `--sample` the command compares every model judge of the
    sample with the human grades: kappa (graded, binarised), tau of the pooled runs' ranking, 95%
    bootstrap intervals over topics, dollars per 1,000 judgments, a verdict (good: binarised kappa >= 0.4
    and tau >= 0.9; fair: >= 0.2 and >= 0.8).

    \b
    Example:
      trecbench judge validate -w mybench --sample --size 200
      trecbench judge validate -w mybench --sample --size 200 --strategy uncertainty --name people
      trecbench serve -w mybench --pool validation
      trecbench judge llm -w mybench --pool validation --model openai/gpt-4o-mini --prompt multi-criteria
      trecbench judge validate -w mybench --format json
    """
    from trecbench.judging.validate import draw_sample, format_table, validate as run_validate
    from trecbench.store import Workspace

    ws = Workspace(workspace)
    if draw:
        if (size is None) == (width is None):
            raise click.UsageError("--sample needs one of --size and --width")
        sample = draw_sample(ws, size=size, width=width, source=source, name=name, seed=seed, strategy=strategy)
        if fmt == "json":
            click.echo(json.dumps({"pool": sample.name, "source": sample.source, "pairs": sample.pairs,
                                   "topics": sample.topics, "strata": sample.strata}, indent=2))
            return
        click.echo(f"pool {sample.name!r}: {sample.pairs} pairs over {sample.topics} topics drawn from "
                   f"{sample.source!r}")
        for stratum, (k, n) in sample.strata.items():
            click.echo(f"  {stratum}\t{k} of {n}")
        click.echo(f"judge it blind: trecbench serve -w {workspace} --pool {sample.name}")
        return
    if size is not None or width is not None or source is not None or strategy != "stratified":
        raise click.UsageError("--size, --width, --from and --strategy go with --sample")
    result = run_validate(ws, pool_name, reference=reference, measure=measure, threshold=threshold,
                          bootstrap=bootstrap, seed=seed)
    click.echo(json.dumps(result.as_dict(), indent=2) if fmt == "json" else format_table(result))
