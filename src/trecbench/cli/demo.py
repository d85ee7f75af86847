"""`trecbench demo`: the main job, end to end, on the bundled sample benchmark."""
from __future__ import annotations

import os

import click

from trecbench.cli.model_options import ModelOptions, finish, interruptible, model_errors, model_options


@click.command("demo")
@click.option("--dir", "folder", default="trecbench-demo", show_default=True, type=click.Path(file_okay=False),
              help="Folder for the demo's workspace, qrels and report (an earlier demo there is replaced).")
@model_options(required=False, what="to judge, draft nuggets and assign them with (default: offline)")
@click.option("--quiet", is_flag=True, help="Only the summary.")
def demo(folder: str, model_opts: ModelOptions, quiet: bool) -> None:
    """Build and score the sample benchmark end to end, offline, and write its HTML report.

    The sample ships with trecbench: the handbook of a fictional payments company (170 passages),
    12 questions, five submitted retrieval runs, two assessors' judgments, edited nuggets with their
    supporting passages, answers of three RAG systems, a pipeline's staged contexts and a
    permissions file. The demo creates a workspace, adds a BM25 baseline, pools the runs, records the
    judgments, drafts nuggets extractively and loads the edited ones, then scores retrieval,
    answers and evidence, checks reusability and judge agreement, and writes the report.

    \b
    Example:
      trecbench demo
      trecbench demo --dir /tmp/demo --model openai/gpt-4o-mini
    """
    from trecbench.demo import DemoStopped, run_demo

    def shown(path) -> str:
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else str(path)

    say = (lambda text: None) if quiet else (lambda text: click.echo(text, err=True))
    say(f"building the sample benchmark in {shown(folder)}/ ...")
    config = model_opts.config() if model_opts.model else None
    with interruptible("the demo folder is incomplete; run `trecbench demo` again to rebuild it"), model_errors():
        try:
            result = run_demo(folder, model=config, max_cost=model_opts.max_cost, say=say)
        except DemoStopped as e:
            finish(e.failures[:20], f"{len(e.failures)} model failure(s), recorded as failures", stopped=str(e))
            return
    fmt = {"float_format": lambda v: f"{v:.4f}"}
    total = sum(seconds for _, seconds in result.steps)
    click.echo(f"Sample benchmark: 12 topics, {len(result.retrieval)} runs, pool of {result.pool_size} candidates, "
               f"{result.judgments} judgments, {result.nuggets} nuggets ({total:.0f}s)")
    click.echo("\nRetrieval (trec_eval 9 numbers):")
    click.echo(result.retrieval.to_string(**fmt))
    click.echo("\nAnswers (nuggets assigned by " + ("the model" if config else "citation") + "):")
    click.echo(result.answers.to_string(**fmt))
    click.echo("\nEvidence in the pipeline's contexts (k = 5):")
    click.echo(result.evidence.to_string(**fmt))
    click.echo(result.funnel.to_string(index=False, **fmt))
    click.echo("\nReusability (leave one run out):\n  " + result.loo_verdict.replace("\n", "\n  "))
    click.echo(f"Judge agreement ({result.agreement}): Cohen's kappa {result.kappa:.4f} on "
               f"{result.agreement_pairs} pairs both judged")
    click.echo(f"\nReport: {shown(result.report)}")
    click.echo(f"Workspace: {shown(result.workspace)}  (try: trecbench serve -w {shown(result.workspace)})")
    finish(result.failures[:20], f"\n{len(result.failures)} model failure(s), recorded as failures")
