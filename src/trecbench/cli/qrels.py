"""`trecbench qrels`: validate qrels files and summarise them per topic."""
from __future__ import annotations

import click

from trecbench.cli.common import exit_with, format_option, print_table, report_problems


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
    from trecbench.qrels import check_qrels

    status = 0
    for path in files:
        frame, problems = check_qrels(path)
        if problems:
            status = report_problems(problems) or status
            continue
        assert frame is not None
        topics = frame["query_id"].nunique()
        relevant = int((frame["relevance"] > 0).sum())
        click.echo(f"{path}: ok, {topics} topic{'s' * (topics != 1)}, {len(frame)} judgments, {relevant} relevant")
    exit_with(status)


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

    print_table(qrels_stats(read_qrels(qrels_file)), fmt)
