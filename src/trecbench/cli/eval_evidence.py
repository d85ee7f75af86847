"""`trecbench eval evidence`: EvidenceRecall@k, CompleteEvidence@k and the funnel of staged contexts."""
from __future__ import annotations


import click

from trecbench.cli.common import (
    chunking_options,
    duplicates_option,
    format_option,
    missing_topics_option,
    output_option,
    per_topic_option,
)


@click.command("evidence")
@click.option("--evidence", "evidence_path", type=click.Path(dir_okay=False), default=None,
              help="Evidence JSONL {qid, evidence:[{id, text?, importance?, any_of:[[docid,...],...]}]}.")
@click.option("--nuggets", "nuggets_path", type=click.Path(dir_okay=False), default=None,
              help="Take the evidence from a nuggets file instead: nuggets with support become items.")
@click.option("-w", "--workspace", type=click.Path(file_okay=False), default=None,
              help="Take the duplicate groups of this workspace's pool, and the evidence from its nuggets unless "
                   "--evidence or --nuggets.")
@click.option("--contexts", "contexts_paths", multiple=True, required=True, type=click.Path(dir_okay=False),
              help="A TREC run, or JSONL {qid, stage, docids:[...]} with ordered stages. Repeatable: one per system.")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True,
              help="Cut the last stage at k documents for the measures.")
@click.option("--stages", default=None, metavar="S1,S2,...",
              help="Order of the stages (default: as first seen in the file).")
@click.option("--permissions", "permissions_path", type=click.Path(dir_okay=False), default=None,
              help="JSONL {qid, allow:[docid | \"group:NAME\", ...]} and {group, docids}: what each topic may see.")
@click.option("--permissions-default", type=click.Choice(["allow", "deny"]), default="allow", show_default=True,
              help="A topic without an entry in --permissions: allow (sees everything) or deny (sees nothing).")
@duplicates_option
@chunking_options("--evidence-spans (or -w's corpus)", "the retrieved passages (together)")
@click.option("--evidence-spans", type=click.Path(dir_okay=False), default=None,
              help="With --corpus-spans: the corpus the evidence was made on, with source spans (default: -w's corpus).")
@click.option("--budget", "budgets", multiple=True, type=click.IntRange(min=1), metavar="N",
              help="Also cut at N tokens: EvidenceRecall@Ntok[TOKENIZER], CompleteEvidence@Ntok[TOKENIZER] on the "
                   "last stage's contexts in rank order while they fit whole in N. Repeatable.")
@click.option("--tokenizer", default=None, metavar="NAME",
              help="How tokens are counted: whitespace (words; the default with --budget) or a tiktoken encoding "
                   "on this machine (cl100k_base, o200k_base; never downloaded). The funnel then shows tokens.")
@click.option("--corpus", "corpus_path", default=None,
              help="Texts of contexts given by id, for tokens (default: --corpus-spans, else -w's corpus).")
@click.option("--funnel", is_flag=True, help="Also print, per stage, the items present and lost (per item with -q).")
@per_topic_option()
@missing_topics_option("zero: an evidence topic absent from the contexts scores 0; skip: leave it out.")
@format_option("table", "csv", "json", help="Output format (json includes the funnel and what permissions dropped).")
@output_option()
def evidence(evidence_path, nuggets_path, workspace, contexts_paths, k, stages, permissions_path, permissions_default,
             duplicates, corpus_spans, cover, evidence_spans, budgets, tokenizer, corpus_path, funnel, per_topic,
             missing_topics, fmt, output) -> None:
    """Did retrieval bring back the evidence answers need, and which stage lost it?

    An evidence item is covered when all documents of one of its alternatives are among the top k
    contexts (the first k positions of the last stage, repeats included); it counts once however
    many of its sources come back. EvidenceRecall@k is covered / required items per topic,
    CompleteEvidence@k the share of topics with every item covered, IDRecall@k plain recall of the
    source documents, for contrast; a run's value is the macro mean over topics. The funnel's
    shares are micro: items present / items required, all topics pooled. With --permissions,
    sources a topic may not see are not required (and are reported); nuggets without supporting
    documents are not required either (and are listed). With -w, documents of one duplicate group
    of the pool count as one (--duplicates distinct to turn that off).

    With --corpus-spans, contexts retrieved from another chunking of the same sources are scored on
    the same evidence: they cover an evidence passage when together they hold --cover of its
    characters (the rule is printed). With --budget N, the measures are also taken on the contexts
    that fit whole within N tokens, and the funnel counts each stage's tokens.

    \b
    Example:
      trecbench eval evidence --evidence evidence.jsonl --contexts stages.jsonl -k 10 --funnel
      trecbench eval evidence --nuggets nuggets.jsonl --contexts bm25.txt --contexts dense.txt -q
      trecbench eval evidence -w mybench --contexts staged.jsonl -k 5 --funnel
      trecbench eval evidence --evidence evidence.jsonl --contexts stages.jsonl --permissions acl.jsonl
      trecbench eval evidence --evidence ev.jsonl --contexts s.jsonl --permissions acl.jsonl --permissions-default deny
      trecbench eval evidence --evidence ev.jsonl --evidence-spans corpus.jsonl --corpus-spans chunks.jsonl --contexts c.txt
      trecbench eval evidence --evidence ev.jsonl --contexts s.jsonl --budget 500 --tokenizer cl100k_base --funnel
    """
    from trecbench.evaluation import topic_scores as ts
    from trecbench.evaluation.evidence.duplicates import duplicate_groups
    from trecbench.evaluation.evidence.recall import evaluate_evidence, read_contexts, read_permissions

    items = _evidence_items(evidence_path, nuggets_path, workspace)
    chunking = _chunking(evidence_spans, corpus_spans, cover, workspace)
    order = [s.strip() for s in stages.split(",") if s.strip()] if stages else None
    systems = [read_contexts(p, stages=order) for p in contexts_paths]
    permissions = read_permissions(permissions_path, default=permissions_default) if permissions_path else None
    groups = duplicate_groups(workspace) if workspace and duplicates == "same" else None
    texts = corpus_path or corpus_spans or (_workspace_corpus(workspace) if workspace else None)
    try:
        scores = evaluate_evidence(items, systems, k=k, permissions=permissions, missing_topics=missing_topics,
                                   duplicates=groups, chunking=chunking, budgets=budgets, tokenizer=tokenizer,
                                   corpus=texts if (budgets or tokenizer) else None)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="'--tokenizer'") from None
    ts.emit(scores.frame, output, fmt, topics=per_topic, notes=scores.notes())
    if funnel and fmt == "table":
        from trecbench.files.output import open_output

        with open_output(output, append=True) as stream:
            _print_funnel(scores, stream, per_item=per_topic)
    for message in scores.messages(missing_topics):
        click.echo(message, err=True)


def _evidence_items(evidence_path, nuggets_path, workspace) -> list:
    """The evidence: the --evidence file, the --nuggets file's nuggets, or the workspace's nuggets."""
    from trecbench.evaluation.evidence.recall import evidence_from_nuggets, read_evidence

    if (evidence_path and nuggets_path) or not (evidence_path or nuggets_path or workspace):
        raise click.UsageError("give one of --evidence, --nuggets or -w/--workspace (whose nuggets are the evidence)")
    if evidence_path:
        return read_evidence(evidence_path)
    if not nuggets_path:
        from trecbench.nuggets.store import workspace_nuggets

        items = evidence_from_nuggets(workspace_nuggets(workspace))
        if not any(i.any_of for i in items):
            raise click.UsageError(f"{workspace}: no nugget has supporting documents yet")
        return items
    from trecbench.nuggets.io import read_nuggets

    items = evidence_from_nuggets(read_nuggets(nuggets_path))
    if not any(i.any_of for i in items):
        raise click.UsageError(f"{nuggets_path}: no nugget has supporting documents (support)")
    return items


def _chunking(evidence_spans, corpus_spans, cover, workspace):
    """The two chunkings when --corpus-spans is given: the evidence's (--evidence-spans, else -w's corpus) and it."""
    if corpus_spans is None:
        if evidence_spans is not None:
            raise click.UsageError("--evidence-spans links the evidence to --corpus-spans: give that too")
        return None
    evidence_spans = evidence_spans or (_workspace_corpus(workspace) if workspace else None)
    if evidence_spans is None:
        raise click.UsageError("--corpus-spans needs the chunking the evidence was made on: --evidence-spans "
                               "CORPUS (with spans) or -w BENCH (its corpus)")
    from trecbench.evaluation.evidence.chunkings import read_chunking

    return read_chunking(evidence_spans, corpus_spans, cover)


def _workspace_corpus(workspace) -> str | None:
    from trecbench.store import Workspace

    return Workspace(workspace).corpus_source


def _print_funnel(scores, stream, *, per_item: bool) -> None:
    summary = scores.stage_summary()
    stream.write(f"\nfunnel (items present at each stage, lost there; share is micro: all topics' items pooled, "
                 f"while EvidenceRecall@{scores.k} above is the macro mean over topics"
                 + (f"; tokens counted with {scores.tokenizer}, tokens_per_topic their mean over the scored topics"
                    if scores.tokenizer else "") + "):\n")
    summary = summary.assign(share=[("-" if s != s else f"{s:.4f}") for s in summary["share"]])
    if scores.tokenizer:
        summary = summary.assign(tokens=[("-" if t != t else str(int(t))) for t in summary["tokens"]],
                                 tokens_per_topic=[("-" if t != t else f"{t:.1f}") for t in summary["tokens_per_topic"]])
    stream.write(summary.to_string(index=False) + "\n")
    if per_item:
        import pandas as pd

        rows = [{"run": f.run, "topic": f.qid, "item": f.item, "last_stage": f.last_stage or "-",
                 "lost_at": f.lost_at or "-"} for f in scores.funnel]
        stream.write("\n" + pd.DataFrame(rows).to_string(index=False) + "\n")
