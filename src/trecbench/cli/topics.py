"""`trecbench topics`: show and validate topic files (TSV, JSONL, TREC RAG 2024/2025, irds:)."""
from __future__ import annotations

import json

import click

from trecbench.cli.common import format_option


@click.group()
def topics() -> None:
    """Read topics (TSV, TREC RAG 2024/2025 JSONL, irds:<dataset-id>).

    \b
    Example:
      trecbench topics show topics.rag24.test.txt
    """


@topics.command()
@click.argument("source")
@format_option("tsv", "jsonl", help="tsv: qid<TAB>text; jsonl: one object per topic with narrative and other fields.")
def show(source: str, fmt: str) -> None:
    """Print the topics of SOURCE (a file or irds:<dataset-id>).

    \b
    Example:
      trecbench topics show topics.rag25.test.jsonl --format jsonl
      trecbench topics show irds:msmarco-passage/trec-dl-2019/judged
    """
    from trecbench.topics import read_topics

    for topic in read_topics(source):
        if fmt == "jsonl":
            click.echo(json.dumps(topic.as_dict(), ensure_ascii=False))
        else:
            click.echo(f"{topic.qid}\t{' '.join(topic.text.split())}")


@topics.command()
@click.argument("source")
def validate(source: str) -> None:
    """Check SOURCE: list every problem as path:line: message and exit 2, or count its topics.

    \b
    Example:
      trecbench topics validate rag25-topics-dev.tsv
    """
    from trecbench.topics import read_topics

    click.echo(f"{source}: {len(read_topics(source))} topics, no problems")
