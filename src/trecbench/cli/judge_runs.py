"""What the judging commands (`judge llm`, `judge llm --audit`, `judge holes`) share: a judging run's progress bar and its
Ctrl-C and model-error rules, and the lines that summarise it."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

import click

from trecbench.cli.model_options import (ProgressBar, describe_estimate, describe_judging, dollars, finish, interruptible,
                                         model_errors)


@contextmanager
def judging(quiet: bool) -> Iterator[tuple[Callable, Callable]]:
    """A judging run's progress bar (none when `quiet`) and its Ctrl-C and model-error rules: yields the
    run's (on_start, on_progress)."""
    bar = ProgressBar(quiet, "doc")

    def start(plan) -> None:
        click.echo(describe_judging(plan), err=True)
        bar.start(plan.total)

    with interruptible("every finished judgment is saved; run the same command to continue"), model_errors():
        try:
            yield start, lambda report, n: bar.update(n, report.judged, len(report.failed), report)
        finally:
            bar.close()


def describe_run(run) -> str:
    """The summary line of a judging run (`trecbench.judging.pool.JudgeRun` with a report)."""
    report = run.report
    skipped = report.skipped if run.plan.adaptive else run.plan.skipped
    shared = f"; {report.shared} left to another run of this judge" if report.shared else ""
    return (f"judged {report.judged}, failed {len(report.failed)}, skipped {skipped} already judged; "
            f"{report.calls} calls ({report.cached} from cache), {report.prompt_tokens} input + "
            f"{report.completion_tokens} output tokens, {dollars(report.cost)}{shared}")


def finish_run(run) -> None:
    """List the run's failures and exit by the model commands' rule (1 failures, 3 a --max-cost stop)."""
    report = run.report
    failed = [f"{qid}\t{docid}\t{why}" for qid, docid, why in report.failed]
    finish(failed, f"{len(failed)} judgment(s) failed (recorded as failures, not grades; run again to retry them)",
           stopped=report.stopped, budget_stop=report.stopped is not None)


def print_run(run) -> None:
    """What `judge llm` and `judge holes` print of a run (`trecbench.judging.pool.JudgeRun`): the estimate of a
    dry run; else the summary line, the provider batches', the failures, and the exit by the model rule."""
    if run.report is None:
        click.echo(describe_estimate(run.estimate))
        return
    click.echo(describe_run(run))
    if run.batches is not None:
        click.echo(describe_batches(run.batches))
    finish_run(run)


def describe_batches(b) -> str:
    """What happened to the provider batches in this run (`trecbench.judging.batch.BatchReport`)."""
    lines = [f"batch {bid} collected: {n} replies read, {dollars(cost)} at the batch price" for bid, n, cost in b.collected]
    lines += [f"batch {bid} found again (its id had not been saved)" for bid in b.found_again]
    lines += [f"unreadable result line {where}" for where in b.unreadable]
    lines += [f"batch {bid} is {status} ({done} of {total} done)" for bid, status, done, total in b.waiting]
    lines += [f"batch {bid} submitted: {n} requests" for bid, n in b.submitted]
    if b.waiting_docs:
        lines.append(f"{b.waiting_docs} {b.unit} wait for a batch: run the same command again to collect it")
    return "\n".join(lines) if lines else "no provider batch to collect or submit"
