"""`trecbench judge support` (grade whether cited passages back answer sentences, by a model) and `trecbench judge
support-agreement` (a blind sample for people, then the model's agreement with them)."""
from __future__ import annotations

import json

import click

from trecbench.cli.common import describe_plan, format_option, quiet_option, workspace_option
from trecbench.cli.judge_runs import describe_batches
from trecbench.cli.model_options import ProgressBar, dollars, finish, interruptible, model_errors, model_options


@click.command("support")
@workspace_option
@click.argument("answers", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@model_options(temperature_help="Sampling temperature (default 0; 0.7 when --samples > 1).")
@click.option("--grades", default="full,partial,none", show_default=True,
              help="The grade scale: full,partial,none (TREC 2024 RAG) or full,partial,none,contradicts (BioGen 2025).")
@click.option("--samples", default=1, show_default=True, type=click.IntRange(1, 15),
              help="Calls per pair; the grade is their majority (a tie goes to the weaker support).")
@click.option("--limit", type=click.IntRange(1), default=None, help="Grade at most this many pairs in this run.")
@click.option("--dry-run", is_flag=True, help="Count the pairs, calls, tokens and dollars it would take; call and write nothing.")
@click.option("--provider-batch", is_flag=True,
              help="Send the requests through the provider's batch interface (about half the price, within 24 h); "
                   "run the same command again to collect the results. See docs/judge-batch.md.")
@click.option("--collect", is_flag=True, help="Only collect finished provider batches and apply their results.")
@quiet_option()
def support(workspace, answers, model_opts, grades, samples, limit, dry_run, provider_batch, collect, quiet) -> None:
    """Grade how far each passage an answer sentence cites supports it (full, partial, none) with MODEL.

    The answers' sentences are registered in the workspace, then each (sentence, cited passage) pair is
    asked about, one per call, through the same model path as `judge llm`: replies cached in the
    workspace, a re-run asks only what this judge has not graded, two runs at once share the pairs, and
    --max-cost stops before spending more (exit 3). A reply that cannot be read is re-asked, then
    recorded as a failure — never as "no support" — and failures are listed at the end (exit 1). The
    judge's name holds the model, the prompt and its hash, samples and temperature. See docs/support.md.

    \b
    Example:
      trecbench judge support -w mybench answers/*.jsonl --model openai/gpt-4o-mini --max-cost 2
      trecbench judge support -w mybench answers/run1.jsonl --model openai/gpt-4o --dry-run
      trecbench judge support -w mybench answers/run1.jsonl --model openai/gpt-4o-mini \\
          --grades full,partial,none,contradicts
      trecbench judge support -w mybench answers/*.jsonl --model openai/gpt-4o-mini --provider-batch
    """
    from trecbench.judging.support import judge_support
    from trecbench.store import Workspace

    config = model_opts.config(temperature=0.7 if samples > 1 else 0.0)
    bar = ProgressBar(quiet or dry_run, "pair")

    def start(plan) -> None:
        click.echo(describe_support_plan(plan), err=True)
        bar.start(plan.total)

    with interruptible("every finished judgment is saved; run the same command to continue"), model_errors():
        try:
            run = judge_support(Workspace(workspace), list(answers), config, grades=grades, samples=samples,
                                limit=limit, max_cost=model_opts.max_cost, dry_run=dry_run,
                                provider_batch=provider_batch or collect, collect=collect, on_start=start,
                                on_progress=lambda r, n: bar.update(n, r.judged, len(r.failed), r))
        except ValueError as e:
            raise click.UsageError(str(e)) from None
        finally:
            bar.close()
    if run.report is None:
        click.echo(describe_plan(run.estimate, at_most=True, note=f" for {run.plan.total} pairs"))
        click.echo("nothing was written")
        return
    if run.batches is not None:
        click.echo(describe_batches(run.batches))
    r = run.report
    shared = f"; {r.shared} left to another run of this judge" if r.shared else ""
    click.echo(f"judged {r.judged}, failed {len(r.failed)}, skipped {r.skipped} already judged; {r.calls} calls "
               f"({r.cached} from cache), {r.prompt_tokens} input + {r.completion_tokens} output tokens, "
               f"{dollars(r.cost)}{shared}")
    failed = ["\t".join([*map(str, f.key), f.why]) for f in r.failed]
    finish(failed, f"{len(failed)} support judgment(s) failed (recorded as failures, not grades; run again to retry)",
           stopped=r.stopped, budget_stop=r.stopped is not None)


def describe_support_plan(plan) -> str:
    """The first line of `judge support`: the judge and what is left to grade (`judging.support.SupportPlan`)."""
    registered = f"; {plan.added} sentences registered, {plan.changed} changed" if plan.added or plan.changed else ""
    return (f"judge {plan.judge.name}: {plan.total} sentence-citation pairs to grade in {plan.calls} calls "
            f"({plan.sentences} sentences, {plan.uncited} citing nothing); {plan.skipped} already judged{registered}")


@click.command("support-agreement")
@workspace_option
@click.option("--sample", "size", type=click.IntRange(1), default=None,
              help="Draw this many registered sentence-citation pairs no person graded, stratified by run, for "
                   "people to grade blind (instead of comparing).")
@click.option("--name", default="support-validation", show_default=True, help="With --sample: the sample's name.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0), help="With --sample: the draw's seed.")
@click.option("--reference", default=None,
              help="The grades to compare with: people's (default; the newest person's grade of each pair) or a "
                   "judge's name (an import, another model).")
@click.option("--judge", "judge_name", default=None, help="Only this model judge (default: every model judge).")
@format_option("table", "json")
def support_agreement(workspace, size, name, seed, reference, judge_name, fmt) -> None:
    """Check a support judge against people: kappa, the confusion matrix and Kendall tau of the runs.

    First `--sample N` keeps N pairs, stratified by run, that people grade blind in the web app (or
    import: `trecbench support import`). Without it, every model judge (or --judge) is compared with the
    reference on the pairs both graded: exact agreement, Cohen's kappa (graded, and binarised as
    supported = full or partial), the confusion matrix (rows: people), the runs' weighted support
    precision and recall on those pairs under each judge with Kendall's tau between the orderings, and
    the verdict of `judge validate`.

    \b
    Example:
      trecbench judge support-agreement -w mybench --sample 200
      trecbench judge support -w mybench answers/*.jsonl --model openai/gpt-4o-mini
      trecbench judge support-agreement -w mybench --format json
    """
    from trecbench.judging.support_agreement import draw_support_sample, format_agreement, support_agreement as agree
    from trecbench.store import Workspace

    ws = Workspace(workspace)
    if size is not None:
        sample = draw_support_sample(ws, size, seed=seed, name=name)
        click.echo(f"support sample {sample.name!r}: {len(sample.pairs)} sentence-citation pairs")
        for run, (k, n) in sample.strata.items():
            click.echo(f"  {run}\t{k} of {n}")
        click.echo(f"people grade it blind: trecbench serve -w {workspace}")
        return
    results = agree(ws, reference=reference, judge=judge_name)
    click.echo(json.dumps([a.as_dict() for a in results], indent=2) if fmt == "json" else format_agreement(results))
