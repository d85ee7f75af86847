"""`trecbench judge holes`: grade a new run's unjudged pairs in its top k with a model judge."""
from __future__ import annotations

import dataclasses

import click

from trecbench.cli.judge_runs import judging, print_run
from trecbench.cli.model_options import model_options


@click.command("holes")
@click.option("-w", "--workspace", required=True, type=click.Path(file_okay=False), help="Bench workspace.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--depth", default=10, show_default=True, type=click.IntRange(1),
              help="The top k of each run whose holes are judged.")
@model_options(required=False, what="(default: the judge `judge validate` ranks first)")
@click.option("--prompt", default=None, help="Built-in prompt name or a UTF-8 text file (default: the validated "
                                             "judge's, or graded-0-3 with --model).")
@click.option("--batch", default=None, type=click.IntRange(1, 50), help="Passages per call [default: 1].")
@click.option("--samples", default=None, type=click.IntRange(1, 15),
              help="Calls per batch; the grade is their majority [default: 1].")
@click.option("--examples", default=None, type=click.IntRange(0, 10),
              help="Few-shot examples from people's judgments of other topics [default: 0].")
@click.option("--limit", type=click.IntRange(1), default=None, help="Judge at most this many holes in this run.")
@click.option("--dry-run", is_flag=True, help="Count the calls, tokens and dollars it would take; call and write nothing.")
@click.option("--provider-batch", is_flag=True,
              help="Send the requests through the provider's batch interface; run the same command again to collect.")
@click.option("--collect", is_flag=True, help="Only collect finished provider batches; submit nothing new.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def holes(workspace, runs, depth, model_opts, prompt, batch, samples, examples, limit, dry_run, provider_batch,
          collect, quiet) -> None:
    """Judge the holes of new RUNs: the pairs of each run's top --depth that people did not grade.

    A hole is a pair no person or import graded (a model's grade does not close it; duplicate groups lend
    people's grades as in `qrels export`). The holes are judged as `judge llm` judges a pool: cached,
    budgeted (--max-cost), dry-run with their cost, batched, leased and resumed, and recorded as the model
    judge's judgments, so each hole is judged and paid once and a second run asks nothing. Without
    --model the judge `judge validate` ranks first is used, with its prompt, batch, samples and temperature.
    Then `trecbench eval retrieval -w BENCH RUN` prints the run's score with people's grades only, with
    the holes filled and corrected, and a warning that follows the hole share and the judge's agreement
    (docs/holes.md).

    \b
    Example:
      trecbench judge holes -w mybench runs/new.txt --depth 10 --model openai/gpt-4o-mini --dry-run
      trecbench judge holes -w mybench runs/new.txt --depth 10 --model openai/gpt-4o-mini --max-cost 1
      trecbench judge holes -w mybench runs/new.txt          # the validated judge
      trecbench eval retrieval -w mybench runs/new.txt -m nDCG@10
    """
    from trecbench.judging.holes import hole_table, judge_holes, run_holes
    from trecbench.judging.prompts import load_prompt
    from trecbench.store import Workspace

    ws = Workspace(workspace)
    settings = {"batch": batch, "samples": samples, "examples": examples}
    if model_opts.model is None:
        model_opts, prompt, settings = _validated(ws, model_opts, prompt, settings)
    else:
        prompt = load_prompt(prompt, ws.settings.scale)
        settings = {k: v if v is not None else (0 if k == "examples" else 1) for k, v in settings.items()}
    config = model_opts.config(temperature=0.7 if settings["samples"] > 1 else 0.0)
    found = run_holes(ws, list(runs), depth=depth)
    for line in hole_table(found):
        click.echo(line, err=True)
    with judging(quiet or dry_run) as (start, progress):
        try:
            filling = judge_holes(ws, list(runs), config, depth=depth, prompt=prompt, limit=limit,
                                  max_cost=model_opts.max_cost, dry_run=dry_run,
                                  provider_batch=provider_batch or collect, collect=collect, on_start=start,
                                  on_progress=progress, holes=found, **settings)
        except ValueError as e:
            raise click.UsageError(str(e)) from None
    run = filling.run
    print_run(run)


def _validated(ws, model_opts, prompt, settings):
    """The validated judge's model options, prompt and settings (none of them may be given without --model)."""
    from trecbench.judging.holes import validated_judge

    given = [f"--{k}" for k, v in settings.items() if v is not None]
    given += ["--prompt"] if prompt is not None else []
    given += ["--temperature"] if model_opts.temperature is not None else []
    if given:
        raise click.UsageError(f"{', '.join(given)} choose a judge: give --model too (without --model the validated "
                               "judge is used as it was validated)")
    chosen = validated_judge(ws)
    if chosen is None:
        raise click.UsageError("no --model, and the workspace has no validated judge: give --model, or validate "
                               "one with `trecbench judge validate` (docs/judge-validation.md)")
    click.echo(f"the validated judge: {chosen.name} (binarised kappa {chosen.kappa_binary:.2f}, {chosen.verdict}, "
               f"on pool {chosen.pool!r})", err=True)
    if chosen.verdict == "poor":
        click.echo("warning: judge validate's verdict on this judge is poor (its binarised kappa and tau must both "
                   "reach fair for more): its grades may be a weak stand-in for people's", err=True)
    opts = dataclasses.replace(model_opts, model=chosen.model, temperature=chosen.temperature)
    return opts, chosen.prompt(ws.settings.scale), {"batch": chosen.batch, "samples": chosen.samples,
                                                    "examples": chosen.examples}
