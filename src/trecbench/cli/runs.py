"""`trecbench runs`: validate run files, rewrite them in trec_eval order, and make BM25 baseline runs."""
from __future__ import annotations

import sys

import click

from trecbench.cli.common import trec_eval_version_option, validate_files


@click.group()
def runs() -> None:
    """Read, validate and write TREC run files (qid Q0 docid rank score tag).

    \b
    Example:
      trecbench runs validate run1.txt run2.txt
      trecbench runs sort run1.txt -o run1.sorted.txt
      trecbench runs bm25 --corpus corpus.jsonl --topics topics.tsv -o bm25.txt
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
    from trecbench.runs.trec import summarize_run

    def summary(found) -> str:  # a runs.trec.RunSummary
        return f"{found.topics} topic{'s' * (found.topics != 1)}, {found.lines} lines, runid {found.runid}"

    validate_files(files, summarize_run, summary)


@runs.command(name="sort")
@click.argument("run", type=click.Path())
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="File to write ('-' for stdout).")
@click.option("--runid", help="Tag to write in the last column (default: the run's own).")
@trec_eval_version_option("Rank as trec_eval 9.0.8 (scores compared as C floats) or 10.0 (doubles) does.")
def sort_run(run: str, output: str, runid: str | None, trec_eval_version: int) -> None:
    """Rewrite RUN in trec_eval order with consistent ranks.

    Per topic, documents are ordered by score descending, ties by docid descending (as trec_eval
    ranks them), and numbered 1..n. trec_eval 9.0.8 (the default, as in `eval retrieval`) compares
    scores as C floats, so scores equal as floats tie. Fields after the sixth are dropped.

    \b
    Example:
      trecbench runs sort bm25.txt -o bm25.sorted.txt --runid bm25
    """
    from trecbench.errors import InputError
    from trecbench.runs import read_run, write_run

    frame = read_run(run)
    try:
        write_run(frame, sys.stdout if output == "-" else output, runid=runid, version=trec_eval_version)
    except ValueError as e:  # e.g. a runid with a space in it
        raise click.UsageError(str(e)) from None
    except OSError as e:
        raise InputError(output, 0, f"cannot write: {e.strerror or e}") from None


@runs.command()
@click.option("--corpus", required=True, help="Documents: JSONL, TSV, or irds:<dataset-id>.")
@click.option("--topics", required=True, help="Topics: TSV, JSONL, or irds:<dataset-id>.")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="Run file to write ('-' for stdout).")
@click.option("--backend", type=click.Choice(["bm25s", "pyserini"]), default="bm25s", show_default=True,
              help="bm25s: numpy, no Java. pyserini: Lucene (pip install 'trecbench[pyserini]', see README).")
@click.option("--k1", type=click.FloatRange(min=0), default=0.9, show_default=True, help="BM25 k1.")
@click.option("--b", "b", type=click.FloatRange(0, 1), default=0.4, show_default=True, help="BM25 b.")
@click.option("--hits", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Documents kept per topic.")
@click.option("--index", "index_dir", type=click.Path(file_okay=False),
              help="Keep the index in this directory and reuse it next time (default: build it afresh).")
@click.option("--tag", default="bm25", show_default=True, help="Run tag written in the last column.")
@click.option("--quiet", is_flag=True, help="No progress bars and no summary; only warnings and errors.")
def bm25(corpus: str, topics: str, output: str, backend: str, k1: float, b: float, hits: int,
         index_dir: str | None, tag: str, quiet: bool) -> None:
    """Rank the --corpus for every topic with BM25 and write a TREC run.

    Each document is indexed as its title and text. Both backends analyse text as Anserini does
    (Lucene's tokenizer, lowercase, Lucene's English stopwords, Porter stemmer) and score with
    Lucene's BM25 (defaults k1=0.9, b=0.4, Anserini's), so they give the same rankings; only
    documents sharing a word with the topic are retrieved. Progress bars and a summary with the
    time taken go to stderr (--quiet for scripts).

    \b
    Example:
      trecbench runs bm25 --corpus corpus.jsonl --topics topics.tsv -o bm25.txt
      trecbench runs bm25 --corpus irds:beir/scifact/test --topics irds:beir/scifact/test -o scifact.bm25.txt
      trecbench runs bm25 --corpus corpus.jsonl --topics topics.tsv -o bm25.txt --backend pyserini --index idx/
    """
    from pathlib import Path

    from trecbench.files.trec import check_ids
    from trecbench.errors import InputError
    from trecbench.runs import write_run
    from trecbench.runs.baselines import BM25Settings, bm25_run

    try:
        check_ids([tag], "runid")
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--tag") from None
    if output != "-" and not Path(output).resolve().parent.is_dir():
        raise InputError(output, 0, "cannot write: no such directory")
    # A backend whose packages are missing raises BackendUnavailable: the CLI prints its install line (exit 2).
    result = bm25_run(corpus, topics, backend=backend, settings=BM25Settings(k1=k1, b=b, hits=hits),
                      index_dir=index_dir, runid=tag, progress=not quiet)
    try:
        write_run(result.run, sys.stdout if output == "-" else output, runid=tag)
    except OSError as e:
        raise InputError(output, 0, f"cannot write: {e.strerror or e}") from None
    if result.empty_topics:
        shown = ", ".join(result.empty_topics[:10]) + (" ..." if len(result.empty_topics) > 10 else "")
        click.echo(f"warning: {len(result.empty_topics)} topic(s) retrieved nothing "
                   f"(only stopwords, or no word found in the corpus): {shown}", err=True)
    if not quiet:
        index_how = "index reused" if result.index_reused else f"{result.documents} documents indexed"
        click.echo(f"{output}: {result.topics} topics, {len(result.run)} lines (BM25 k1={k1:g} b={b:g}, "
                   f"{result.backend}); {index_how} in {result.index_seconds:.2f}s, "
                   f"searched in {result.search_seconds:.2f}s", err=True)
