"""`trecbench judge llm --audit` (re-judge old qrels, queue the disagreements) and `trecbench judge audit` (list them)."""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Callable

import click

from trecbench.cli.common import format_option


@dataclass(frozen=True)
class AuditOptions:
    """The options of `judge llm` that only --audit reads."""

    on: bool
    reference: str | None
    min_diff: int | None
    name: str | None
    sample: int | None
    topics: tuple[str, ...]
    seed: int | None
    fmt: str

    @property
    def given(self) -> list[str]:
        """The audit-only options given (refused without --audit)."""
        values = {"--reference": self.reference, "--min-diff": self.min_diff, "--name": self.name,
                  "--sample": self.sample, "--topic": self.topics or None, "--seed": self.seed,
                  "--format": None if self.fmt == "table" else self.fmt}
        return [k for k, v in values.items() if v is not None]


def audit_options(f: Callable) -> Callable:
    """The --audit options of `judge llm`; the command receives them as one `audit: AuditOptions` argument."""
    options = [
        click.option("--audit", "on", is_flag=True,
                     help="Re-judge existing qrels (people's, else imported ones) instead of the pool, and queue the "
                          "pairs the model disagrees with as a pool for people (docs/audit.md)."),
        click.option("--reference", default=None,
                     help="With --audit: only this person's or import's grades (default: people, then imports)."),
        click.option("--min-diff", type=click.IntRange(1, 4), default=None,
                     help="With --audit: queue pairs whose grades differ by this many grades or more (default 2)."),
        click.option("--name", default=None, help="With --audit: the queue's pool name (default: audit)."),
        click.option("--sample", type=click.IntRange(1), default=None,
                     help="With --audit: re-judge only this many pairs, drawn at random (--seed)."),
        click.option("--topic", "topics", multiple=True, help="With --audit: only this topic (repeatable)."),
        click.option("--seed", type=click.IntRange(0), default=None, help="With --audit --sample: the seed (default 0)."),
        format_option("table", "json", help="With --audit: the result as a table or as JSON."),
    ]

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        kwargs["audit"] = AuditOptions(*(kwargs.pop(k) for k in ("on", "reference", "min_diff", "name", "sample",
                                                                 "topics", "seed", "fmt")))
        return f(*args, **kwargs)

    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def run_audit(workspace: str, config: Any, model_opts: Any, audit: AuditOptions, *, prompt: Any, batch: int,
              samples: int, examples: int, limit: int | None, threshold: int, dry_run: bool, quiet: bool,
              pool: str | None, provider_batch: bool, collect: bool) -> None:
    """`judge llm --audit`: re-judge, print the agreement, the disagreements and the queue."""
    from trecbench.cli.judge_runs import describe_batches, describe_run, finish_run, judging
    from trecbench.cli.model_options import describe_estimate
    from trecbench.judging.audit import audit_qrels, format_audit

    if not audit.on:
        raise click.UsageError(f"{', '.join(audit.given)} go(es) with --audit")
    if pool is not None:
        raise click.UsageError("--audit re-judges the qrels' pairs, not a pool's: not with --pool")
    with judging(quiet or dry_run) as (start, progress):
        result = audit_qrels(workspace, config, reference=audit.reference, min_diff=audit.min_diff or 2,
                             name=audit.name or "audit", topics=list(audit.topics) or None, sample=audit.sample,
                             seed=audit.seed or 0, threshold=threshold, prompt=prompt, batch=batch, samples=samples,
                             examples=examples, limit=limit, max_cost=model_opts.max_cost, dry_run=dry_run,
                             provider_batch=provider_batch or collect, collect=collect, on_start=start,
                             on_progress=progress)
    run = result.run
    if run is not None and run.report is None:
        click.echo(describe_estimate(run.estimate))
        return
    if run is None:
        click.echo(f"pool {result.name!r} holds this audit already: no model call", err=True)
    else:
        click.echo(describe_run(run), err=audit.fmt == "json")
        if run.batches is not None:
            click.echo(describe_batches(run.batches), err=audit.fmt == "json")
    click.echo(json.dumps(result.as_dict(), indent=2) if audit.fmt == "json" else format_audit(result, workspace))
    if run is not None:
        finish_run(run)


@click.command("audit")
@click.option("-w", "--workspace", required=True, type=click.Path(file_okay=False), help="Bench workspace.")
@click.option("--pool", "pool_name", default=None, help="The audit queue to list (default: the newest).")
@format_option("table", "json")
def audit(workspace: str, pool_name: str | None, fmt: str) -> None:
    """List an audit queue: each pair's old grade, the model's, and the grade people gave it since.

    `judge llm --audit` re-judges old qrels with a model and queues the pairs where the two grades differ
    by --min-diff or more; people judge them blind in the web app (`serve --pool audit`). This lists the
    queue, largest disagreements first, with the agreement measured when it was made; no model is called.
    `qrels export` then takes people's new grades (`--prefer human`, the default) over the old ones.

    \b
    Example:
      trecbench judge llm -w mybench --model openai/gpt-4o-mini --audit
      trecbench serve -w mybench --pool audit
      trecbench judge audit -w mybench
      trecbench judge audit -w mybench --pool audit --format json
    """
    from trecbench.judging.audit import format_audit, read_audit

    result = read_audit(workspace, pool_name)
    click.echo(json.dumps(result.as_dict(), indent=2) if fmt == "json" else format_audit(result, workspace))
