"""`trecbench judge llm`: grade the pool's candidates with a model."""
from __future__ import annotations

import click

from trecbench.cli.judge_audit import audit_options
from trecbench.cli.judge_runs import judging, print_run
from trecbench.cli.model_options import model_options


@click.group("judge")
def judge() -> None:
    """Judge the pool's candidates (people judge in the web app: `trecbench serve`).

    \b
    Example:
      trecbench judge llm -w mybench --model openai/gpt-4o-mini
    """


class PromptParam(click.ParamType):
    """`--prompt`: a built-in prompt's name or a UTF-8 text file of instructions (checked when parsed)."""

    name = "prompt"

    def convert(self, value, param, ctx):
        from trecbench.errors import InputError
        from trecbench.judging.prompts import Prompt, load_prompt

        if isinstance(value, Prompt):
            return value
        try:
            return load_prompt(value)
        except InputError as e:
            self.fail(str(e), param, ctx)


@judge.command("llm")
@click.option("-w", "--workspace", required=True, type=click.Path(file_okay=False), help="Bench workspace.")
@model_options(temperature_help="Sampling temperature (default 0; 0.7 when --samples > 1).")
@click.option("--prompt", default=None, type=PromptParam(),
              help="Built-in prompt name (graded-0-3, multi-criteria) or a UTF-8 text file of instructions.")
@click.option("--batch", default=1, show_default=True, type=click.IntRange(1, 50), help="Passages per call.")
@click.option("--samples", default=1, show_default=True, type=click.IntRange(1, 15),
              help="Calls per batch; the grade is their majority (a tie goes to the lower grade).")
@click.option("--examples", default=0, show_default=True, type=click.IntRange(0, 10),
              help="Few-shot examples drawn from people's judgments of other topics.")
@click.option("--limit", type=click.IntRange(1), default=None, help="Judge at most this many documents in this run.")
@click.option("--pool", "pool_name", default=None, help="Pool to judge (default: the newest).")
@click.option("--relevant-grade", default=1, show_default=True, type=click.IntRange(0, 3),
              help="Adaptive pools (mtf, maxmean), and --audit's binarised agreement: the grade from which a "
                   "document counts as relevant.")
@click.option("--dry-run", is_flag=True, help="Count the calls, tokens and dollars it would take; call and write nothing.")
@click.option("--only-unjudged", is_flag=True,
              help="Judge only the pairs nobody graded: leave out those people, imports or other model judges graded "
                   "(ranked pools; with --dry-run too).")
@click.option("--provider-batch", is_flag=True,
              help="Send the requests through the provider's batch interface (about half the price, within 24 h); "
                   "run the same command again to collect the results. See docs/judge-batch.md.")
@click.option("--collect", is_flag=True,
              help="Only collect finished provider batches and apply their results; submit nothing new.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@audit_options
def llm(workspace, model_opts, prompt, batch, samples, examples, limit, pool_name, relevant_grade, dry_run,
        only_unjudged, provider_batch, collect, quiet, audit) -> None:
    """Grade the pool's unjudged candidates 0-3 with MODEL; each judgment is saved as it arrives.

    Re-running judges only what is missing (replies are cached in the workspace, so nothing is paid
    twice). An adaptive pool (mtf, maxmean) chooses each next document from the grades so far and
    stops each topic at the pool's budget. A reply that cannot be read is re-asked, then recorded as a
    failure — never as a grade — and failures are listed at the end (exit 1); a --max-cost stop exits 3.
    The judge's name holds everything that changes its grades (model, prompt and its hash, batch,
    samples, temperature, examples). --dry-run prints the estimate of `pool estimate` and writes nothing.
    The first line counts the pairs left to judge that other judges (people, imports) already graded;
    --only-unjudged leaves those out.
    Ctrl-C keeps every finished judgment. --audit re-judges existing qrels instead of a pool and queues the
    pairs the model disagrees with for people (docs/audit.md).

    \b
    Example:
      trecbench judge llm -w mybench --model openai/gpt-4o-mini --batch 5 --max-cost 2
      trecbench judge llm -w mybench --model hosted_vllm/qwen2.5-7b --api-base http://gpu1:8000/v1 \\
          --api-base http://gpu2:8000/v1 --concurrency 32
      trecbench judge llm -w mybench --model openai/gpt-4o --dry-run
      trecbench judge llm -w mybench --model openai/gpt-4o-mini --only-unjudged --dry-run
      trecbench pool runs/*.txt --strategy mtf --budget 30 -w mybench --name mtf30
      trecbench judge llm -w mybench --pool mtf30 --model openai/gpt-4o-mini
      trecbench judge llm -w mybench --model openai/gpt-4o-mini --batch 5 --provider-batch   # submit
      trecbench judge llm -w mybench --model openai/gpt-4o-mini --batch 5 --provider-batch   # later: collect
      trecbench judge llm -w mybench --model openai/gpt-4o-mini --audit --reference nist --min-diff 2
    """
    from trecbench.judging.pool import judge_pool
    from trecbench.store import Workspace

    config = model_opts.config(temperature=0.7 if samples > 1 else 0.0)
    if audit.on or audit.given:
        from trecbench.cli.judge_audit import run_audit

        if only_unjudged:
            raise click.UsageError("--only-unjudged judges a pool; --audit re-judges pairs that were graded")

        return run_audit(workspace, config, model_opts, audit, prompt=prompt, batch=batch, samples=samples,
                         examples=examples, limit=limit, threshold=relevant_grade, dry_run=dry_run, quiet=quiet,
                         pool=pool_name, provider_batch=provider_batch, collect=collect)
    with judging(quiet or dry_run) as (start, progress):
        try:
            run = judge_pool(Workspace(workspace), config, prompt=prompt, batch=batch, samples=samples,
                             examples=examples, limit=limit, pool=pool_name, relevant_grade=relevant_grade,
                             max_cost=model_opts.max_cost, dry_run=dry_run, provider_batch=provider_batch or collect,
                             collect=collect, only_unjudged=only_unjudged, on_start=start, on_progress=progress)
        except ValueError as e:
            raise click.UsageError(str(e)) from None
    print_run(run)


from trecbench.cli.judge_audit import audit as _audit  # noqa: E402
from trecbench.cli.judge_validate import validate as _validate  # noqa: E402
from trecbench.cli.judge_holes import holes as _holes  # noqa: E402

judge.add_command(_validate)
judge.add_command(_audit)

from trecbench.cli.judge_support import support as _support, support_agreement as _support_agreement  # noqa: E402

judge.add_command(_support)
judge.add_command(_support_agreement)
judge.add_command(_holes)
