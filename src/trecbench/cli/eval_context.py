"""`trecbench eval context-recall`: context recall by ids, by string similarity, or by a model."""
from __future__ import annotations

import click

from trecbench.cli.model_options import model_errors, model_options
from trecbench.cli.common import duplicates_option, format_option, output_option, per_topic_option


@click.command("context-recall")
@click.option("--mode", type=click.Choice(["id", "string", "llm"]), default="id", show_default=True,
              help="id: reference ids vs retrieved ids (Ragas IDBasedContextRecall); string: Levenshtein "
                   "similarity of reference contexts (Ragas NonLLMContextRecall); llm: claims of a reference answer.")
@click.option("--contexts", "contexts_paths", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="A TREC run, or JSONL {qid, contexts:[text | {id, text}]} or {qid, docids}. Repeatable.")
@click.option("--references", "references_path", type=click.Path(dir_okay=False), default=None,
              help="JSONL {qid, reference_ids?, reference_contexts?, reference?}.")
@click.option("--qrels", "qrels_path", type=click.Path(dir_okay=False), default=None,
              help="Take reference ids from qrels (documents judged at --rel-level or above).")
@click.option("-l", "--rel-level", type=int, default=1, show_default=True, help="Lowest relevant grade (--qrels).")
@click.option("-k", "k", type=click.IntRange(min=1), default=None,
              help="Use the top k contexts of each topic: the first k positions of the last stage, repeats included.")
@click.option("-w", "--workspace", type=click.Path(file_okay=False), default=None,
              help="id: take duplicate groups from this workspace's pool (see --duplicates).")
@duplicates_option
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="string: a reference is found when its best similarity is strictly above this.")
@click.option("--window", type=click.Choice(["none", "sentence"]), default="none", show_default=True,
              help="string: also compare against windows of 1-3 sentences of each context.")
@click.option("--corpus", "corpus_path", default=None, help="Corpus to look up texts of contexts given by id.")
@model_options(required=False, what="for --mode llm")
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False), default="trecbench-llm-cache.sqlite",
              show_default=True, help="llm: SQLite file caching model replies (a rerun makes no new calls).")
@click.option("--scale", type=float, default=1.0, show_default=True, help="llm: multiply the score by this.")
@click.option("--missing", type=click.Choice(["nan", "zero"]), default="nan", show_default=True,
              help="A topic without a reference: nan (left out of the mean, with the reason) or zero (Mastra).")
@per_topic_option()
@format_option("table", "csv", "json", help="Output format (json includes reasons and per-reference details).")
@output_option()
def context_recall(mode, contexts_paths, references_path, qrels_path, rel_level, k, workspace, duplicates, threshold,
                   window, corpus_path, model_opts, cache_path, scale, missing, per_topic, fmt, output) -> None:
    """How much of each topic's reference the retrieved contexts contain (one context set per topic).

    A run's value is the mean over topics (macro). A topic without a reference of the mode's kind
    has no score (--missing zero: 0); a topic with a reference and no retrieved context scores 0
    (llm: without a model call). llm: a reference answer without claims has no score, and a topic
    whose model call failed is incomplete: listed, not scored, exit status 1.

    \b
    Example:
      trecbench eval context-recall --mode id --contexts run.txt --qrels qrels.txt -k 10
      trecbench eval context-recall --mode id --contexts run.txt --qrels qrels.txt -k 10 -w mybench
      trecbench eval context-recall --mode string --contexts contexts.jsonl --references refs.jsonl --window sentence
      trecbench eval context-recall --mode llm --model gpt-4o-mini --contexts contexts.jsonl --references refs.jsonl
    """
    from trecbench.evaluation import topic_scores as ts
    from trecbench.evaluation.evidence.context_recall import evaluate_context_recall, read_references, references_from_qrels
    from trecbench.evaluation.evidence.duplicates import duplicate_groups

    if bool(references_path) == bool(qrels_path):
        raise click.UsageError("give --references or --qrels (one of them)")
    if qrels_path and mode != "id":
        raise click.UsageError("--qrels gives reference ids: use it with --mode id")
    if mode == "llm" and not model_opts.model:
        raise click.UsageError("--mode llm needs --model")
    if workspace and mode != "id":
        raise click.UsageError("-w gives duplicate groups of documents: use it with --mode id")
    refs = read_references(references_path) if references_path else references_from_qrels(qrels_path, rel_level)
    groups = duplicate_groups(workspace) if workspace and duplicates == "same" else None
    judge = None
    if mode == "llm":
        from trecbench.evaluation.evidence.context_recall import LLMRecallJudge

        # said before the client is made: its transport may import litellm (seconds)
        click.echo(f"judging context recall with {model_opts.model}: {len(contexts_paths)} contexts file(s)", err=True)
        with model_errors():
            judge = LLMRecallJudge(model_opts.client(cache=cache_path))
    try:
        with model_errors():
            scores = evaluate_context_recall(list(contexts_paths), refs, mode=mode, k=k, threshold=threshold,
                                             window=None if window == "none" else window, missing=missing,
                                             corpus=corpus_path, judge=judge, scale=scale, duplicates=groups)
    finally:
        if judge is not None:
            judge.close()
    ts.emit(scores.frame, output, fmt, topics=per_topic, notes=scores.notes())
    for message in scores.messages():
        click.echo(message, err=True)
    if scores.incomplete:
        raise SystemExit(1)
