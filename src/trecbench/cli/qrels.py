"""`trecbench qrels`: validate qrels files and summarise them per topic."""
from __future__ import annotations

import click

from trecbench.cli.common import format_option, print_table, validate_files, workspace_option


@click.group()
def qrels() -> None:
    """Read, validate and write TREC qrels files (qid iteration docid grade).

    \b
    Example:
      trecbench qrels validate qrels.txt
      trecbench qrels stats qrels.txt --format csv
    """


@qrels.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
def validate(files: tuple[str, ...]) -> None:
    """Check qrels FILES, listing every problem with its line.

    Problems go to stderr as `path:line: what is wrong`, and the exit status is 2.
    A good file gets a one-line summary on stdout.

    \b
    Example:
      trecbench qrels validate qrels.rag24.test.txt
    """
    from trecbench.qrels.trec import summarize_qrels

    def summary(found) -> str:  # a qrels.trec.QrelsSummary
        return f"{found.topics} topic{'s' * (found.topics != 1)}, {found.judgments} judgments, {found.relevant} relevant"

    validate_files(files, summarize_qrels, summary)


@qrels.command()
@click.argument("qrels_file", metavar="QRELS", type=click.Path())
@format_option("table", "csv", "json")
def stats(qrels_file: str, fmt: str) -> None:
    """Count, per topic of QRELS, the judged documents, the relevant ones and each grade.

    `judged` counts grades >= 0, `relevant` grades > 0; a negative grade (pooled, not judged) has
    its own column. The last row, `all`, sums each column.

    \b
    Example:
      trecbench qrels stats qrels.txt
      trecbench qrels stats qrels.txt --format json > qrels-stats.json
    """
    from trecbench.qrels import qrels_stats, read_qrels
    from trecbench.evaluation.retrieval.output import relevance_rule

    print_table(qrels_stats(read_qrels(qrels_file)), fmt)
    click.echo(f"{relevance_rule(1)} (the `relevant` column: every grade above 0)", err=True)


@qrels.command()
@click.argument("qrels_a", metavar="A", type=click.Path())
@click.argument("qrels_b", metavar="B", type=click.Path())
@click.option("--threshold", default=1, show_default=True, type=int,
              help="Grade from which a document counts as relevant for the binarised kappa.")
@click.option("--runs", "runs", multiple=True, type=click.Path(dir_okay=False),
              help="Runs to rank under A and under B (repeatable; or several after one --runs via shell globs).")
@click.option("-m", "--measure", "measures", multiple=True, default=("nDCG@10",), show_default=True,
              help="Measures for the system rankings (with --runs).")
@format_option("table", "json")
def agree(qrels_a: str, qrels_b: str, threshold: int, runs: tuple[str, ...], measures: tuple[str, ...], fmt: str) -> None:
    """How far the judges of qrels A and B agree, on the pairs both judged.

    Prints the confusion matrix (rows A, columns B), Cohen's kappa on all grades, binarised at
    --threshold, and linearly weighted; how often B grades lower, the same or higher than A for each
    grade of A. With --runs: Kendall's tau and Spearman's rho between the system rankings under A
    and under B, and the mean per-topic tau. Pairs with a negative grade (unjudged) and grades
    propagated from a duplicate (iteration `propagated`) are left out: they are not judgments.

    \b
    Example:
      trecbench qrels agree qrels.nist.txt qrels.umbrela.txt
      trecbench qrels agree nist.txt llm.txt --runs runs/*.txt -m nDCG@10 -m R@100 --format json
    """
    import json

    from trecbench.errors import InputError
    from trecbench.qrels import read_qrels
    from trecbench.qrels.agreement import agreement, ranking_agreement

    a, b = read_qrels(qrels_a), read_qrels(qrels_b)
    try:
        result = agreement(a, b, threshold=threshold)
    except ValueError as e:  # no pair judged in both
        raise InputError(f"{qrels_a}, {qrels_b}", 0, str(e)) from None
    if runs:
        result.rankings.extend(ranking_agreement(a, b, list(runs), list(measures)))
    if fmt == "json":
        click.echo(json.dumps(result.as_dict(), indent=2))
        return
    click.echo(f"pairs judged by both: {result.pairs} (only A: {result.only_a}, only B: {result.only_b})")
    click.echo(f"Cohen's kappa: {result.kappa:.4f}   linear-weighted: {result.kappa_linear:.4f}   "
               f"binarised at grade >= {threshold}: {result.kappa_binary:.4f}")
    click.echo("\nconfusion (rows A, columns B):")
    click.echo(result.confusion.to_string())
    click.echo("\nB relative to A, per grade of A:")
    click.echo(result.grading.to_string(float_format=lambda v: f"{v:.3f}"))
    for r in result.rankings:
        click.echo(f"\n{r.measure}: Kendall tau {r.kendall_tau:.4f}, Spearman rho {r.spearman_rho:.4f}, "
                   f"mean per-topic tau {r.mean_topic_tau:.4f} ({r.topics_compared} topics)")
        click.echo(r.scores.sort_values("A", ascending=False).to_string(float_format=lambda v: f"{v:.4f}"))



@qrels.command("export")
@workspace_option
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="qrels file to write.")
@click.option("--judge", help="Only this judge's judgments (assessor name, imported name, or model judge).")
@click.option("--prefer", type=click.Choice(["human", "model", "latest"]), default="human", show_default=True,
              help="Which judgment of a pair wins when several judges judged it.")
@click.option("--majority", is_flag=True, help="The most common grade among the judges (ties: the lower grade).")
@click.option("--pool", "pool_name", help="Pool whose duplicate groups propagate grades (default: the newest).")
@click.option("--provenance", type=click.Path(dir_okay=False),
              help="Also write a TSV saying which judge each grade came from and which were propagated.")
def export(workspace, output, judge, prefer, majority, pool_name, provenance) -> None:
    """Write the workspace's judgments as a TREC qrels file, one grade per (topic, document).

    Duplicate groups of the pool lend a judged member's grade (the representative's, else the first
    judged member's) to the members without one: counted, marked `propagated` in the iteration
    column and named in --provenance. The same qrels as `report`, `release` and `pool export-qrels`.

    \b
    Example:
      trecbench qrels export -w mybench -o qrels.txt
      trecbench qrels export -w mybench -o qrels.llm.txt --judge "gpt-4o:graded-0-3@1a2b3c4d (model)"
    """
    from trecbench.qrels import write_qrels
    from trecbench.qrels.select import workspace_qrels

    try:
        result = workspace_qrels(workspace, judge=judge, prefer=prefer, majority=majority, pool=pool_name)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    if result.empty:
        raise click.ClickException(f"{workspace}: no judgments yet")
    frame = result.qrels
    write_qrels(frame[["query_id", "iteration", "doc_id", "relevance"]], output)
    if provenance:
        from trecbench.files.output import write_output

        write_output(provenance, frame.to_csv(sep="\t", index=False, lineterminator="\n"))
    click.echo(f"{output}: {len(frame)} judgments over {frame['query_id'].nunique()} topics "
               f"({result.judged} judged, {result.propagated} propagated from duplicates)")
    taken = frame.loc[frame["propagated_from"].isna(), "judge"].value_counts()
    click.echo(f"grades by judge ({result.policy}): " + ", ".join(
        f"{j} {n}" for j, n in sorted(taken.items(), key=lambda jn: (-jn[1], str(jn[0])))))


@qrels.command("import")
@click.argument("qrels_file", metavar="QRELS", type=click.Path())
@workspace_option
@click.option("--judge", "judge_name", required=True, help="Name the imported judgments are recorded under.")
@click.option("--kind", type=click.Choice(["import", "human"]), default="import", show_default=True,
              help="human: the file holds an assessor's judgments (counted as human by --prefer human).")
def import_(qrels_file, workspace, judge_name, kind) -> None:
    """Record the judgments of a qrels file in the workspace under --judge.

    Negative grades (pooled, not judged) are not judgments and are skipped; a pair this judge already
    has with the same grade is not recorded twice.

    \b
    Example:
      trecbench qrels import nist-qrels.txt -w mybench --judge nist
      trecbench qrels import alice.txt -w mybench --judge alice --kind human
    """
    from trecbench.qrels.imports import import_qrels

    done = import_qrels(workspace, qrels_file, judge_name, kind=kind)
    click.echo(f"{qrels_file}: recorded {done.recorded} judgments as {judge_name} ({kind}); "
               f"{done.repeated} already recorded, {done.negative} negative grades skipped")
