"""`trecbench runs`: validate run files and rewrite them in trec_eval order."""
from __future__ import annotations

import sys

import click

from trecbench.cli.common import exit_with, report_problems


@click.group()
def runs() -> None:
    """Read, validate and write TREC run files (qid Q0 docid rank score tag).

    \b
    Example:
      trecbench runs validate run1.txt run2.txt
      trecbench runs sort run1.txt -o run1.sorted.txt
    """


@runs.command()
@click.argument("files", nargs=-1, required=True, type=click.Path())
def validate(files: tuple[str, ...]) -> None:
    """Check run FILES, listing every problem with its line.

    Problems go to stderr as `path:line: what is wrong`, and the exit status is 2.
    A good file gets a one-line summary on stdout.
    Fields after the sixth (which trec_eval ignores) are reported too.

    \b
    Example:
      trecbench runs validate runs/*.txt
    """
    from trecbench.runs import check_run

    status = 0
    for path in files:
        frame, problems = check_run(path)
        if problems:
            status = report_problems(problems) or status
            continue
        assert frame is not None
        topics = frame["query_id"].nunique()
        click.echo(f"{path}: ok, {topics} topic{'s' * (topics != 1)}, {len(frame)} lines, runid {frame.attrs['runid']}")
    exit_with(status)


@runs.command(name="sort")
@click.argument("run", type=click.Path())
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="File to write ('-' for stdout).")
@click.option("--runid", help="Tag to write in the last column (default: the run's own).")
def sort_run(run: str, output: str, runid: str | None) -> None:
    """Rewrite RUN in trec_eval order with consistent ranks.

    Per topic, documents are ordered by score descending, ties by docid descending (as trec_eval
    ranks them), and numbered 1..n. Fields after the sixth are dropped.

    \b
    Example:
      trecbench runs sort bm25.txt -o bm25.sorted.txt --runid bm25
    """
    from trecbench.errors import InputError
    from trecbench.runs import read_run, write_run

    frame = read_run(run)
    try:
        write_run(frame, sys.stdout if output == "-" else output, runid=runid)
    except ValueError as e:  # e.g. a runid with a space in it
        raise click.UsageError(str(e)) from None
    except OSError as e:
        raise InputError(output, 0, f"cannot write: {e.strerror or e}") from None
