"""`trecbench corpus`: look documents up by id and summarise a corpus (JSONL, TSV, irds:)."""
from __future__ import annotations

import json
import sys

import click


@click.group()
def corpus() -> None:
    """Look up documents in a corpus (JSONL, TSV, irds:<dataset-id>).

    \b
    Example:
      trecbench corpus get corpus.jsonl doc1 doc7
    """


@corpus.command()
@click.argument("source")
@click.argument("docids", nargs=-1, required=True)
def get(source: str, docids: tuple[str, ...]) -> None:
    """Print each document of SOURCE with one of DOCIDS as a JSON line; exit 1 listing the ids not found.

    \b
    Example:
      trecbench corpus get msmarco_segments.jsonl.gz msmarco_v2.1_doc_00_0#1
      trecbench corpus get irds:beir/scifact 4983
    """
    from trecbench.corpus import open_corpus

    found, missing = open_corpus(source).lookup(docids)
    for _, doc in found:
        click.echo(json.dumps(doc._asdict(), ensure_ascii=False))
    if missing:
        click.echo(f"not found in {source}: {' '.join(missing)}", err=True)
        sys.exit(1)


@corpus.command()
@click.argument("source")
def stats(source: str) -> None:
    """Print the number of documents in SOURCE and their mean length in words (text only, not title).

    \b
    Example:
      trecbench corpus stats corpus.tsv
    """
    from trecbench.corpus import open_corpus

    count = words = 0
    for doc in open_corpus(source):
        count += 1
        words += len(doc.text.split())
    click.echo(f"documents\t{count}")
    click.echo(f"mean_words\t{words / count if count else 0:.2f}")
