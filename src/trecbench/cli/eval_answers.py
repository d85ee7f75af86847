"""`trecbench eval answers`: nugget scores of RAG answers (V_strict, V, A_strict, A, W_strict, W)."""
from __future__ import annotations

from contextlib import contextmanager

import click

from trecbench.cli.common import RegistryChoice, assigner_names, duplicates_option


@click.command("answers")
@click.argument("answer_files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--nuggets", "nuggets_path", type=click.Path(dir_okay=False), default=None,
              help="Nuggets file (ours, AutoNuggetizer's or TREC 2025's). Required unless --assignments.")
@click.option("-w", "--workspace", type=click.Path(file_okay=False), default=None,
              help="Take the nuggets from this workspace (unless --nuggets), its pool's duplicate groups (citation "
                   "assigner) and keep model replies in its cache.")
@duplicates_option
@click.option("--assigner", type=RegistryChoice(assigner_names), default="citation", show_default=True,
              help="citation: cited documents vs nugget support, plus word overlap (offline); string: "
                   "Levenshtein similarity to sentence windows (offline); llm: a model labels each nugget.")
@click.option("--model", default=None, help="Model for --assigner llm (a litellm model name, e.g. openai/gpt-4o-mini).")
@click.option("--api-base", default=None, help="llm: base URL of an OpenAI-compatible server.")
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False), default="trecbench-llm-cache.sqlite",
              show_default=True, help="llm: SQLite file caching model replies (a rerun makes no new calls).")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True,
              help="llm: model calls in flight at once.")
@click.option("--assignments", "assignment_files", multiple=True, type=click.Path(dir_okay=False),
              help="Score assignments made elsewhere (AutoNuggetizer's assign output, NIST's "
                   "{qid, run_id, nuggets:[{text, importance, assignment}]}). Repeatable.")
@click.option("--save-assignments", type=click.Path(dir_okay=False), default=None,
              help="Write the assignments made (JSONL, AutoNuggetizer's shape plus id and reason).")
@click.option("--threshold", type=float, default=None,
              help="citation: share of a nugget's content words a sentence must have [0.6]; "
                   "string: similarity above which a nugget is supported [0.7].")
@click.option("--partial-threshold", type=float, default=0.5, show_default=True,
              help="string: similarity above which a nugget is partially supported.")
@click.option("--batch-size", type=click.IntRange(1, 10), default=10, show_default=True,
              help="llm: nuggets judged per call (at most 10).")
@click.option("-q", "--per-topic", is_flag=True, help="Also print per-topic scores.")
@click.option("--missing-topics", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
              help="zero: a topic (of --nuggets, else of the assignments) that a run did not answer scores 0; "
                   "skip: leave it out.")
@click.option("--rules", type=click.Choice(["trecbench", "nuggetizer"]), default="trecbench", show_default=True,
              help="trecbench: topics without vital nuggets have no V score, failed assignments are not scored "
                   "(exit 1); nuggetizer: castorini/nuggetizer's calculate_nugget_scores (0 where there is no "
                   "vital nugget or no nugget, failed and non-exact labels 0).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True,
              help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write to this file.")
def answers(answer_files, nuggets_path, workspace, duplicates, assigner, model, api_base, cache_path, concurrency,
            assignment_files, save_assignments, threshold, partial_threshold, batch_size, per_topic, missing_topics, rules, fmt,
            output) -> None:
    """Score ANSWER_FILES against --nuggets: V_strict (primary), V, A_strict, A, W_strict, W.

    Each nugget of a topic is labelled support / partial_support / not_support for each run's
    answer; V is over vital nuggets, A over all, W weights vital 1 and okay 0.5; the strict
    scores count support only, the others give partial support 0.5. A run's score is the mean over
    the same topics for every run (a topic it did not answer scores 0 unless --missing-topics skip).
    By the default rules a topic without vital nuggets has no V score and is listed, and a topic
    whose assignment failed is listed as incomplete and not scored (never counted as unsupported);
    --rules nuggetizer reproduces nuggetizer's numbers instead. --assignments are checked against
    --nuggets when both are given.

    \b
    Example:
      trecbench eval answers --nuggets nuggets.jsonl run1.jsonl run2.jsonl --assigner citation
      trecbench eval answers --nuggets nuggets.jsonl run1.jsonl --assigner llm --model gpt-4o-mini
      trecbench eval answers --assignments run1.assignments.jsonl -q --format csv -o scores.csv
      trecbench eval answers --assignments official.jsonl --rules nuggetizer
      trecbench eval answers -w mybench run1.jsonl --assigner llm --model openai/gpt-4o-mini
    """
    from trecbench.evaluation import topic_scores as ts
    from trecbench.evaluation.answers import evaluate_answers, score_assignments
    from trecbench.evaluation.assign import read_assignment_files, write_assignments

    nuggets = None
    if nuggets_path:
        from trecbench.nuggets.io import read_nuggets

        nuggets = {t.qid: t for t in read_nuggets(nuggets_path)}
    elif workspace:
        from trecbench.nuggets.store import workspace_nuggets

        nuggets = {t.qid: t for t in workspace_nuggets(workspace)}
    if workspace and cache_path == "trecbench-llm-cache.sqlite":
        from trecbench.store import Workspace

        cache_path = str(Workspace(workspace).cache_path)
    if assignment_files:
        if answer_files:
            raise click.UsageError("give either ANSWER_FILES (to assign) or --assignments (already assigned)")
        scores = score_assignments(read_assignment_files(assignment_files), nuggets=nuggets,
                                   missing_topics=missing_topics, rules=rules)
    else:
        if nuggets is None:
            raise click.UsageError("--nuggets is required to assign (or give --assignments)")
        if not answer_files:
            raise click.UsageError("give ANSWER_FILES to score (or --assignments)")
        options = _assigner_options(assigner, model, threshold, partial_threshold, batch_size)
        unsupported = sum(not n.support for t in nuggets.values() for n in t.nuggets)
        if assigner == "citation" and unsupported:
            click.echo(f"{unsupported} nugget(s) have no supporting documents: the citation assigner can give them "
                       "at most partial_support (by their wording)", err=True)
        if assigner == "llm":
            options.update(api_base=api_base, cache=cache_path, concurrency=concurrency)
        if assigner == "citation" and workspace and duplicates == "same":
            from trecbench.evaluation.duplicates import duplicate_groups

            options["duplicates"] = duplicate_groups(workspace)
        with model_errors():
            scores, _ = evaluate_answers(list(nuggets.values()), list(answer_files), assigner=assigner,
                                         missing_topics=missing_topics, rules=rules, **options)
    if save_assignments:
        write_assignments(scores.assignments, save_assignments)
    ts.emit(scores.frame, output, fmt, topics=per_topic, notes=scores.notes())
    _report(scores, missing_topics)


def _report(scores, missing_topics: str) -> None:
    from trecbench.evaluation import topic_scores as ts

    nuggetizer = scores.rules == "nuggetizer"
    if scores.no_vital:
        what = "scored 0 on V_strict and V" if nuggetizer else "left out of V_strict and V"
        click.echo(f"{len(scores.no_vital)} topic(s) have no vital nuggets, {what}: {ts.some(scores.no_vital)}",
                   err=True)
    if scores.no_nuggets:
        what = "scored 0" if nuggetizer else "no score"
        click.echo(f"{len(scores.no_nuggets)} topic(s) have no nuggets, {what}: {ts.some(scores.no_nuggets)}",
                   err=True)
    for run, qids in scores.missing.items():
        if qids:
            what = "scored 0" if missing_topics == "zero" else "left out"
            click.echo(f"{run}: {len(qids)} topic(s) with nuggets not answered, {what}: {ts.some(qids)}", err=True)
    for run, qids in scores.unjudged.items():
        if qids:
            click.echo(f"{run}: {len(qids)} answered topic(s) have no nuggets, not scored: {ts.some(qids)}", err=True)
    for run, qid, error in scores.incomplete:
        what = "its failed labels scored 0 (nuggetizer rules)" if nuggetizer else "not scored"
        click.echo(f"{run}: topic {qid} is incomplete and {what}: {error}", err=True)
    if scores.incomplete and not nuggetizer:
        # scored topics are printed above; the exit status tells scripts that some could not be
        click.echo(f"{len(scores.incomplete)} (run, topic) assignment(s) failed; run again to retry them", err=True)
        raise SystemExit(1)


@contextmanager
def model_errors():
    """A model call that can never succeed (bad key, unknown model, budget) ends the command with its message."""
    try:
        yield
    except Exception as e:
        from trecbench.llm import LLMError

        if isinstance(e, LLMError):
            raise click.ClickException(str(e)) from None
        raise


def _assigner_options(assigner: str, model: str | None, threshold: float | None, partial_threshold: float,
                      batch_size: int) -> dict:
    if assigner == "llm":
        if not model:
            raise click.UsageError("--assigner llm needs --model")
        return {"model": model, "batch_size": batch_size}
    if model:
        raise click.UsageError("--model is only for --assigner llm")
    if assigner == "string":
        options = {"partial_threshold": partial_threshold}
        if threshold is not None:
            options["threshold"] = threshold
        if not 0 <= options["partial_threshold"] <= options.get("threshold", 0.7) < 1:
            raise click.BadParameter("need 0 <= --partial-threshold <= --threshold < 1", param_hint="'--threshold'")
        return options
    if threshold is not None:
        if not 0 < threshold <= 1:
            raise click.BadParameter("must be in (0, 1]", param_hint="'--threshold'")
        return {"threshold": threshold}
    return {}
