"""`trecbench check`: evidence links and judgments whose document changed or left the corpus."""
from __future__ import annotations

import sys

import click

from trecbench.cli.common import workspace_option


@click.command("check")
@workspace_option
def check(workspace: str) -> None:
    """List nugget evidence links and judgments made against a document text the corpus no longer has.

    Every link of a nugget to a document keeps the sha256 of the document's text when it was linked,
    and every judgment the text it judged. A link is `changed` when the corpus now holds another text
    for the document and `missing` when the corpus has no such document; the same for each (topic,
    document) pair's latest judgment that recorded a hash. Exit status 1 when anything is listed.
    Linking the document again in the web app records the current text and clears the line.

    \b
    Example:
      trecbench check -w mybench
    """
    from trecbench.nuggets.check import check_judgments
    from trecbench.nuggets.store import NuggetStore
    from trecbench.store import Workspace

    ws = Workspace(workspace)
    corpus = ws.corpus()
    store = NuggetStore(ws)
    links = store.check(corpus)
    judged = check_judgments(ws, corpus)
    for p in links:
        click.echo(f"nugget\t{p.qid}\t{p.nugget_id}\t{p.docid}\t{p.problem}")
    for q in judged:
        click.echo(f"judgment\t{q.qid}\t{q.docid}\t{q.problem}\t{q.judge}")
    n_links = sum(len({link.docid for g in n.support for link in g}) for ns in store.topics().values() for n in ns)
    click.echo(f"{len(links)} of {n_links} evidence link(s) and {len(judged.problems)} of {judged.checked} judged "
               f"document(s) need a look", err=True)
    if links or judged:
        sys.exit(1)
