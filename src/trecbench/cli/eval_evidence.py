"""`trecbench eval evidence`: EvidenceRecall@k, CompleteEvidence@k and the funnel of staged contexts."""
from __future__ import annotations


import click

from trecbench.cli.common import duplicates_option, format_option, missing_topics_option, output_option, per_topic_option


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
@click.option("--funnel", is_flag=True, help="Also print, per stage, the items present and lost (per item with -q).")
@per_topic_option()
@missing_topics_option("zero: an evidence topic absent from the contexts scores 0; skip: leave it out.")
@format_option("table", "csv", "json", help="Output format (json includes the funnel and what permissions dropped).")
@output_option()
def evidence(evidence_path, nuggets_path, workspace, contexts_paths, k, stages, permissions_path, permissions_default,
             duplicates, funnel, per_topic, missing_topics, fmt, output) -> None:
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

    \b
    Example:
      trecbench eval evidence --evidence evidence.jsonl --contexts stages.jsonl -k 10 --funnel
      trecbench eval evidence --nuggets nuggets.jsonl --contexts bm25.txt --contexts dense.txt -q
      trecbench eval evidence -w mybench --contexts staged.jsonl -k 5 --funnel
      trecbench eval evidence --evidence evidence.jsonl --contexts stages.jsonl --permissions acl.jsonl
      trecbench eval evidence --evidence ev.jsonl --contexts s.jsonl --permissions acl.jsonl --permissions-default deny
    """
    from trecbench.evaluation import topic_scores as ts
    from trecbench.evaluation.evidence.duplicates import duplicate_groups
    from trecbench.evaluation.evidence.recall import (evaluate_evidence, evidence_from_nuggets, read_contexts,
                                               read_evidence, read_permissions)

    if (evidence_path and nuggets_path) or not (evidence_path or nuggets_path or workspace):
        raise click.UsageError("give one of --evidence, --nuggets or -w/--workspace (whose nuggets are the evidence)")
    if evidence_path:
        items = read_evidence(evidence_path)
    elif not nuggets_path:
        from trecbench.nuggets.store import workspace_nuggets

        items = evidence_from_nuggets(workspace_nuggets(workspace))
        if not any(i.any_of for i in items):
            raise click.UsageError(f"{workspace}: no nugget has supporting documents yet")
    else:
        from trecbench.nuggets.io import read_nuggets

        items = evidence_from_nuggets(read_nuggets(nuggets_path))
        if not any(i.any_of for i in items):
            raise click.UsageError(f"{nuggets_path}: no nugget has supporting documents (support)")
    order = [s.strip() for s in stages.split(",") if s.strip()] if stages else None
    systems = [read_contexts(p, stages=order) for p in contexts_paths]
    permissions = read_permissions(permissions_path, default=permissions_default) if permissions_path else None
    groups = duplicate_groups(workspace) if workspace and duplicates == "same" else None
    scores = evaluate_evidence(items, systems, k=k, permissions=permissions, missing_topics=missing_topics,
                               duplicates=groups)
    ts.emit(scores.frame, output, fmt, topics=per_topic, notes=scores.notes())
    if funnel and fmt == "table":
        from trecbench.files.output import open_output

        with open_output(output, append=True) as stream:
            _print_funnel(scores, stream, per_item=per_topic)
    for message in scores.messages(missing_topics):
        click.echo(message, err=True)


def _print_funnel(scores, stream, *, per_item: bool) -> None:
    summary = scores.stage_summary()
    stream.write(f"\nfunnel (items present at each stage, lost there; share is micro: all topics' items pooled, "
                 f"while EvidenceRecall@{scores.k} above is the macro mean over topics):\n")
    summary = summary.assign(share=[("-" if s != s else f"{s:.4f}") for s in summary["share"]])
    stream.write(summary.to_string(index=False) + "\n")
    if per_item:
        import pandas as pd

        rows = [{"run": f.run, "topic": f.qid, "item": f.item, "last_stage": f.last_stage or "-",
                 "lost_at": f.lost_at or "-"} for f in scores.funnel]
        stream.write("\n" + pd.DataFrame(rows).to_string(index=False) + "\n")
