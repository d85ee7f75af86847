"""`trecbench eval answers`: nugget scores of RAG answers (V_strict, V, A_strict, A, W_strict, W)."""
from __future__ import annotations

import click

from trecbench.cli.common import (RegistryChoice, assigner_names, duplicates_option, format_option, missing_topics_option,
                                  output_option, per_topic_option)
from trecbench.cli.model_options import model_errors, model_options


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
@model_options(required=False, what="for --assigner llm")
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False), default="trecbench-llm-cache.sqlite",
              show_default=True, help="llm: SQLite file caching model replies (a rerun makes no new calls).")
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
@per_topic_option()
@missing_topics_option("zero: a topic (of --nuggets, else of the assignments) that a run did not answer scores 0; "
                      "skip: leave it out.")
@click.option("--rules", type=click.Choice(["trecbench", "nuggetizer"]), default="trecbench", show_default=True,
              help="trecbench: topics without vital nuggets have no V score, failed assignments are not scored "
                   "(exit 1); nuggetizer: castorini/nuggetizer's calculate_nugget_scores (0 where there is no "
                   "vital nugget or no nugget, failed and non-exact labels 0).")
@format_option("table", "csv", "json")
@output_option()
def answers(answer_files, nuggets_path, workspace, duplicates, assigner, model_opts, cache_path, assignment_files,
            save_assignments, threshold, partial_threshold, batch_size, per_topic, missing_topics, rules, fmt,
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
    from trecbench.evaluation.answers.scoring import score_answers
    from trecbench.evaluation.answers.assign import write_assignments

    if assignment_files and answer_files:
        raise click.UsageError("give either ANSWER_FILES (to assign) or --assignments (already assigned)")
    if not assignment_files and not (nuggets_path or workspace):
        raise click.UsageError("--nuggets is required to assign (or give --assignments)")
    if not assignment_files and not answer_files:
        raise click.UsageError("give ANSWER_FILES to score (or --assignments)")
    options = {} if assignment_files else _assigner_options(assigner, model_opts.model, threshold, partial_threshold,
                                                             batch_size)
    with model_errors():
        if "model" in options:
            from trecbench.store import Workspace

            if workspace and cache_path == "trecbench-llm-cache.sqlite":
                cache_path = str(Workspace(workspace).cache_path)
            # said before the client is made: its transport may import litellm (seconds)
            click.echo(f"assigning nuggets with {model_opts.model}: {len(answer_files)} answer file(s)", err=True)
            options["model"] = model_opts.client(cache=cache_path)
        scores = score_answers(answer_files, nuggets=nuggets_path, workspace=workspace, assignments=assignment_files,
                               assigner=assigner, duplicates=duplicates, missing_topics=missing_topics, rules=rules,
                               **options)
    click.echo(scores.nuggets_used, err=True)
    if save_assignments:
        write_assignments(scores.assignments, save_assignments)
    ts.emit(scores.frame, output, fmt, topics=per_topic, notes=scores.notes())
    for message in scores.messages():
        click.echo(message, err=True)
    if scores.failed:  # the scored topics are printed; the exit status tells scripts that some could not be
        raise SystemExit(1)


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
