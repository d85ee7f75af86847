"""`trecbench init` and `trecbench assessors`: create a bench workspace and its assessors."""
from __future__ import annotations

import click

from trecbench.cli.common import workspace_option


@click.command("init")
@click.argument("bench", type=click.Path(file_okay=False))
@click.option("--corpus", help="Corpus: JSONL, TSV or irds:<dataset-id>.")
@click.option("--topics", help="Topics: TSV, TREC RAG JSONL or irds:<dataset-id>.")
@click.option("--name", help="Benchmark name (default: the folder's name).")
@click.option("--sources", type=click.Path(dir_okay=False),
              help="The corpus's sources file (full documents): passages' source spans are checked against it.")
def init(bench: str, corpus: str | None, topics: str | None, name: str | None, sources: str | None) -> None:
    """Create a bench workspace: BENCH/trecbench.toml and BENCH/bench.sqlite.

    The topics are copied into the store; the corpus is referenced (relative to BENCH when it
    lives beside it), checked to be readable and registered as corpus version v1. A passage with a
    source span (source_id, start_char, end_char) whose text is not that span of --sources (without
    it: of its overlapping neighbours) is refused with its line (docs/corpus-versions.md).

    \b
    Example:
      trecbench init mybench --corpus corpus.jsonl --topics topics.tsv
      trecbench init mybench --corpus passages.jsonl --sources documents.jsonl --topics topics.tsv
    """
    from trecbench.store import Workspace

    if sources and not corpus:
        raise click.UsageError("--sources goes with --corpus: the sources of the corpus's passages")
    ws = Workspace.init(bench, corpus=corpus, topics=topics, name=name, sources=sources)
    click.echo(f"created {ws.path}: {len(ws.topics())} topics, corpus {ws.settings.corpus or '(none)'}")


@click.group("assessors")
def assessors() -> None:
    """Assessors who judge in the web app; each logs in with a token.

    \b
    Example:
      trecbench assessors add alice -w mybench
      trecbench assessors list -w mybench
      trecbench assessors new-token alice -w mybench
      trecbench assessors remove alice -w mybench
    """


@assessors.command("add")
@click.argument("name")
@workspace_option
def add(name: str, workspace: str) -> None:
    """Register assessor NAME and print their login token (shown once; only its hash is kept).

    \b
    Example:
      trecbench assessors add alice -w mybench
    """
    from trecbench.store import Workspace

    try:
        token = Workspace(workspace).add_assessor(name)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="NAME") from None
    click.echo(token)


@assessors.command("list")
@workspace_option
def list_(workspace: str) -> None:
    """List the assessors of a workspace.

    \b
    Example:
      trecbench assessors list -w mybench
    """
    from trecbench.store import Workspace

    for name in Workspace(workspace).assessors():
        click.echo(name)


@assessors.command("remove")
@click.argument("name")
@workspace_option
def remove(name: str, workspace: str) -> None:
    """Remove assessor NAME: their token stops working and their sessions end at once (in a running
    `serve` too); the judgments they made stay.

    \b
    Example:
      trecbench assessors remove alice -w mybench
    """
    from trecbench.store import Workspace

    try:
        Workspace(workspace).remove_assessor(name)
    except KeyError:
        raise click.BadParameter(f"no assessor {name!r} in {workspace}", param_hint="NAME") from None
    click.echo(f"removed assessor {name}; their judgments stay", err=True)


@assessors.command("new-token")
@click.argument("name")
@workspace_option
def new_token(name: str, workspace: str) -> None:
    """Give assessor NAME a new login token and print it: the old token stops working and their sessions
    end (use it when a token may have leaked).

    \b
    Example:
      trecbench assessors new-token alice -w mybench
    """
    from trecbench.store import Workspace

    try:
        token = Workspace(workspace).new_token(name)
    except KeyError:
        raise click.BadParameter(f"no assessor {name!r} in {workspace}", param_hint="NAME") from None
    click.echo(token)
