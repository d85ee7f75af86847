"""`trecbench demo`: the main job on the bundled sample benchmark."""
from __future__ import annotations

import click


@click.command("demo")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
def demo(fmt: str) -> None:
    """Score the sample benchmark's runs and show the commands behind it.

    The sample (a fictional company handbook: passages, topics, graded judgments and runs of five
    retrieval systems) ships with trecbench; nothing is downloaded.

    \b
    Example:
      trecbench demo
    """
    from trecbench.demo import run_demo

    import os

    result = run_demo()

    def shown(path) -> str:
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else str(path)

    scores = result.scores
    if fmt == "csv":
        click.echo(scores.to_csv(float_format="%.4f"), nl=False)
        return
    if fmt == "json":
        click.echo(scores.to_json(orient="index", indent=2))
        return
    click.echo(f"Sample benchmark: {result.topics} topics, {result.judgments} judgments, {len(result.runs)} runs "
               f"({shown(result.qrels.parent)})")
    click.echo("")
    click.echo(scores.to_string(float_format=lambda v: f"{v:.4f}"))
    click.echo("")
    best, worst = scores.index[0], scores.index[-1]
    click.echo(f"Best by {scores.columns[0]}: {best}; weakest: {worst}.")
    click.echo("Same numbers as trec_eval (9.0.8), e.g. per topic in trec_eval's own format:")
    click.echo(f"  trecbench eval retrieval --qrels {shown(result.qrels)} {shown(result.runs[0])} -m all_trec -q "
               "--format trec_eval")
