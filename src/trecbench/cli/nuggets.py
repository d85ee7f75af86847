"""`trecbench nuggets`: draft nuggets (model or extractive), list them, export and import nuggets files."""
from __future__ import annotations

import sys

import click

from trecbench.cli.common import describe_plan, quiet_option, workspace_option
from trecbench.cli.model_options import ProgressBar, dollars, finish, interruptible, model_errors, model_options


@click.group("nuggets")
def nuggets() -> None:
    """Nuggets of a workspace: drafted by a model or extractively, edited by people in `trecbench serve`.

    \b
    Example:
      trecbench nuggets draft -w mybench --model openai/gpt-4o-mini
      trecbench nuggets export -w mybench -o nuggets.jsonl
    """


@nuggets.command("draft")
@workspace_option
@model_options(required=False, timeout=120.0, what="(or --extractive)")
@click.option("--extractive", is_flag=True, help="Draft without a model: ranked sentences of the relevant documents.")
@click.option("--min-grade", default=2, show_default=True, type=click.IntRange(0, 3),
              help="Lowest grade of a relevant document (on the 0-3 scale 1 is \"related, does not answer\"; "
                   "nuggetizer's --min-judgment default is 2 too).")
@click.option("--window", default=10, show_default=True, type=click.IntRange(1, 100),
              help="Relevant documents per model call.")
@click.option("--max-nuggets", default=30, show_default=True, type=click.IntRange(1, 200),
              help="Longest running list the model keeps.")
@click.option("--keep", default=20, show_default=True, type=click.IntRange(1, 200),
              help="Nuggets kept per topic after ordering vital first.")
@click.option("--topic", "only", multiple=True, help="Draft only this topic (repeatable).")
@click.option("--redraft", is_flag=True, help="Draft complete topics again too (people's edits are kept).")
@click.option("--dry-run", is_flag=True, help="Count the calls, tokens and dollars it would take; call nothing.")
@quiet_option()
def draft(workspace, model_opts, extractive, min_grade, window, max_nuggets, keep, only, redraft, dry_run,
          quiet) -> None:
    """Draft nuggets for each topic from its judged-relevant documents, with their supporting documents.

    With --model, the AutoNuggetizer procedure: the relevant documents (grade >= --min-grade, best
    grade first) go to the model --window at a time, and it updates a running list of at most
    --max-nuggets atomic nuggets, saying which documents state each; the list is labelled vital or
    okay in batches of ten, ordered vital first, and cut to --keep. Replies are cached in the
    workspace, unreadable ones re-asked, and a window or batch that still fails makes its topic
    incomplete: its nuggets are kept as drafts, the failure is listed (exit 1), and the next run drafts
    the topic again; a --max-cost stop exits 3. Complete topics are skipped on the next run.

    With --extractive, no model: sentences of the relevant documents ranked by how well they cover the
    topic and how many relevant documents repeat them, near-duplicates merged (origin "extractive").

    \b
    Example:
      trecbench nuggets draft -w mybench --model openai/gpt-4o-mini --dry-run
      trecbench nuggets draft -w mybench --model openai/gpt-4o-mini --keep 20 --max-cost 5
      trecbench nuggets draft -w mybench --extractive --keep 15
    """
    from trecbench.nuggets.drafting import draft_nuggets
    from trecbench.store import Workspace

    if extractive == bool(model_opts.model):
        raise click.UsageError("give either --model MODEL or --extractive")
    bar = ProgressBar(quiet or dry_run, "topic")

    def start(run) -> None:
        click.echo(f"draft nuggets with {model_opts.model or 'the extractive drafter'}: {len(run.todo)} topic(s) to "
                   f"draft, {len(run.skipped)} already complete", err=True)
        bar.start(len(run.todo))

    with interruptible("finished topics are saved; run the same command to continue"), model_errors():
        try:
            run = draft_nuggets(Workspace(workspace), None if extractive else model_opts.config(), min_grade=min_grade,
                                window=window, max_nuggets=max_nuggets, keep=keep, only=only, redraft=redraft,
                                max_cost=model_opts.max_cost, dry_run=dry_run, on_start=start,
                                on_progress=lambda report, qid: bar.update(1, len(report.complete),
                                                                           len(report.incomplete), report))
        except ValueError as e:
            raise click.UsageError(str(e)) from None
        finally:
            bar.close()
    report = run.report
    if run.plan is not None:
        click.echo(describe_plan(run.plan, at_most=True, note=" (the running lists not counted)"))
        return
    _summary(report, model_opts.model or "extractive")
    if model_opts.model:
        click.echo(f"{report.calls} calls ({report.cached} from cache), {report.prompt_tokens} input + "
                   f"{report.completion_tokens} output tokens, {dollars(report.cost)}")
    problems = [f"{qid}\t{p}" for qid, ps in sorted(report.incomplete.items()) for p in ps]
    finish(problems, f"{len(report.incomplete)} topic(s) are incomplete: their nuggets so far are kept as drafts, "
           "not as the topic's final list; run again to draft them again", stopped=report.stopped,
           budget_stop=report.budget_stop)


def _summary(report, drafter: str) -> None:
    click.echo(f"drafted {len(report.complete) + len(report.incomplete)} topic(s) with {drafter}: "
               f"{report.nuggets} nuggets; {len(report.complete)} complete, {len(report.incomplete)} incomplete, "
               f"{len(report.skipped)} skipped as already complete")
    if report.no_documents:
        click.echo(f"{len(report.no_documents)} topic(s) have no judged-relevant document: "
                   + ", ".join(report.no_documents[:20]) + (" ..." if len(report.no_documents) > 20 else ""), err=True)
    if report.missing:
        click.echo(f"{len(report.missing)} relevant document(s) are not in the corpus and were left out:", err=True)
        for qid, docid in report.missing[:50]:
            click.echo(f"  {qid}\t{docid}", err=True)


@nuggets.command("list")
@workspace_option
@click.option("--topic", "only", multiple=True, help="Only this topic (repeatable).")
def list_(workspace, only) -> None:
    """Print each topic's nuggets in order: id, importance, status, origin, text and supporting documents.

    Support reads `[d1 | d2+d3]`: d1 alone, or d2 and d3 together; `d4[10:52]` is characters 10-52 of d4.

    \b
    Example:
      trecbench nuggets list -w mybench --topic t1
    """
    from trecbench.nuggets.model import support_label
    from trecbench.nuggets.store import NuggetStore
    from trecbench.store import Workspace

    store = NuggetStore(Workspace(workspace))
    topics = store.topics()
    wanted = list(only) or list(topics)
    for qid in wanted:
        items = topics.get(qid, [])
        vital = sum(n.importance == "vital" for n in items)
        approved = sum(n.status == "approved" for n in items)
        click.echo(f"{qid}: {len(items)} nuggets, {vital} vital, {approved} approved"
                   + (f" - {store.query(qid)}" if store.query(qid) else ""))
        for n in items:
            support = " | ".join("+".join(support_label(link.as_support()) for link in g) for g in n.support)
            click.echo(f"  {n.id}\t{n.importance}\t{n.status}\t{n.origin}\t{n.text}" + (f"\t[{support}]" if support else ""))
    if not wanted:
        click.echo("no nuggets yet: `trecbench nuggets draft` or `trecbench nuggets import`", err=True)


@nuggets.command("approve")
@workspace_option
@click.option("--topic", "qid", default=None, help="Approve this topic's draft nuggets.")
@click.option("--all", "every", is_flag=True, help="Approve the draft nuggets of every topic.")
@click.option("--author", default="cli", show_default=True, help="Who the approvals are recorded as.")
def approve(workspace, qid, every, author) -> None:
    """Approve a topic's draft nuggets (--topic T) or every topic's (--all) at once.

    Only approved nuggets are released and scored against by default; approving them one by one in the web
    app takes a click each. Each approval is a version in its nugget's history (`undo` takes one back).

    \b
    Example:
      trecbench nuggets approve -w mybench --topic T01
      trecbench nuggets approve -w mybench --all
    """
    from trecbench.nuggets.store import NuggetStore
    from trecbench.store import Workspace

    if (qid is None) == (not every) or (qid is not None and every):
        raise click.UsageError("give --topic T or --all (one of them)")
    approved = NuggetStore(Workspace(workspace)).approve_all(qid, author=author)
    topics = sorted({n.qid for n in approved})
    click.echo(f"approved {len(approved)} nugget(s) of {len(topics)} topic(s)"
               + (f": {' '.join(topics)}" if topics else " (none was a draft)"))


@nuggets.command("link")
@workspace_option
@click.option("--topic", "qid", required=True, help="The nugget's topic.")
@click.option("--nugget", "nugget_id", required=True, help="The nugget's id (`nuggets list` shows them).")
@click.argument("docid")
@click.option("--span", default=None, metavar="START:END",
              help="Only characters START to END of the passage's text are the evidence (a sentence, a table row).")
@click.option("--joint-with", default=None, metavar="DOCID",
              help="Add it to the nugget's alternative that has DOCID (both needed), not as a new alternative.")
@click.option("--author", default="cli", show_default=True, help="Who the link is recorded as.")
def link(workspace, qid, nugget_id, docid, span, joint_with, author) -> None:
    """Mark DOCID (or a span of it) as evidence of a nugget: a new alternative, or a joint source.

    No pool is needed: any passage of the workspace's corpus can be linked. A link records the hash of
    the passage's text; a span link its characters, their place in the source document (when the corpus
    has source spans) and the hash of the span's text, so `eval evidence` on another chunking and
    `corpus update` follow the span, not the whole passage. The change is a version in the nugget's history.

    \b
    Example:
      trecbench nuggets link -w mybench --topic t1 --nugget t1-n3 HB-SEC-03 --span 120:188
      trecbench nuggets link -w mybench --topic t1 --nugget t1-n3 HB-SEC-04 --joint-with HB-SEC-03
    """
    from trecbench.nuggets.model import support_label
    from trecbench.nuggets.store import NuggetStore
    from trecbench.store import Workspace

    store = NuggetStore(Workspace(workspace))
    marks = [_span_option(span)] if span is not None else None
    try:
        if store.get(nugget_id).qid != qid:
            raise click.UsageError(f"nugget {nugget_id} is not a nugget of topic {qid!r}")
        alternative = store.alternative_of(nugget_id, joint_with) if joint_with is not None else None
        nugget = store.link(nugget_id, [docid], author=author, spans=marks, alternative=alternative)
    except KeyError:
        raise click.UsageError(f"topic {qid!r} has no nugget {nugget_id!r}") from None
    except (ValueError, IndexError) as e:
        raise click.UsageError(str(e)) from None
    support = " | ".join("+".join(support_label(x.as_support()) for x in g) for g in nugget.support)
    click.echo(f"{nugget.id}\t[{support}]")


def _span_option(value: str) -> tuple[int, int]:
    start, sep, end = value.partition(":")
    if not sep or not start.strip().isdigit() or not end.strip().isdigit() or int(start) >= int(end):
        raise click.BadParameter(f"{value!r} is not START:END with START < END", param_hint="--span")
    return int(start), int(end)


@nuggets.command("export")
@workspace_option
@click.option("-o", "--output", default="-", type=click.Path(dir_okay=False, allow_dash=True),
              help="Nuggets file to write (default: stdout).")
@click.option("--approved-only", is_flag=True, help="Only nuggets a person approved.")
def export(workspace, output, approved_only) -> None:
    """Write the workspace's nuggets as JSONL, one line per topic.

    Each line is `{qid, query, nuggets: [{id, text, importance, support, status, origin, ...}]}`:
    AutoNuggetizer's `{qid, query, nuggets: [{text, importance}]}` plus trecbench's fields, where
    `support` lists alternatives, each a list of docids needed together. `nuggets import` reads it back.

    \b
    Example:
      trecbench nuggets export -w mybench -o nuggets.jsonl
    """
    from trecbench.nuggets.io import write_nuggets
    from trecbench.nuggets.store import NuggetStore
    from trecbench.store import Workspace

    topics = NuggetStore(Workspace(workspace)).export(approved_only=approved_only)
    if output == "-":
        write_nuggets(topics, sys.stdout)
    else:
        write_nuggets(topics, output)
    n = sum(len(t.nuggets) for t in topics)
    click.echo(f"exported {n} nuggets of {len(topics)} topic(s)" + ("" if output == "-" else f" to {output}"),
               err=True)


@nuggets.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@workspace_option
@click.option("--dry-run", is_flag=True, help="Show what would change; change nothing.")
@click.option("--author", default=None, help="Who the changes are recorded as (default: import:<file name>).")
def import_(file, workspace, dry_run, author) -> None:
    """Make the workspace's nuggets of each topic in FILE those of FILE, showing every change.

    Reads trecbench's nuggets files, AutoNuggetizer's output and TREC RAG 2025's nuggets. A nugget of
    FILE matches one of the workspace by id and text, else text, else id; the others are added, and
    the workspace's nuggets of those topics that FILE lacks are deleted (topics not in FILE are left
    alone). Every change is a version with its author, so `undo` in the web app takes it back.
    Lines start with + (added), ~ (changed) or - (removed). Importing what `nuggets export` wrote
    changes nothing.

    \b
    Example:
      trecbench nuggets import rag25-dev-nuggets.jsonl -w mybench --dry-run
      trecbench nuggets import nuggets.jsonl -w mybench
    """
    from pathlib import Path

    from trecbench.nuggets.io import read_nuggets
    from trecbench.nuggets.store import NuggetStore
    from trecbench.store import Workspace

    from trecbench.errors import InputError

    ws = Workspace(workspace)
    topics = read_nuggets(file)
    try:
        report = NuggetStore(ws).import_topics(topics, author=author or f"import:{Path(file).name}", dry_run=dry_run)
    except ValueError as e:  # a span link the corpus's passage cannot hold: nothing was imported
        raise InputError(str(file), 0, f"{e}; nothing was imported") from None
    for line in report.lines:
        click.echo(line)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(f"{file}: {len(topics)} topic(s); {report.added} added, {report.changed} changed, {report.removed} "
               f"removed, {report.unchanged} unchanged" + (" (dry run: nothing was changed)" if dry_run else ""),
               err=True)
