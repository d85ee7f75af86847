"""`trecbench corpus`: look documents up by id, summarise a corpus (JSONL, TSV, irds:), and keep a workspace's
corpus versions (list them, update to a new one, review what an update did not carry)."""
from __future__ import annotations

import json
import sys

import click

from trecbench.cli.common import workspace_option


@click.group()
def corpus() -> None:
    """Look up documents in a corpus (JSONL, TSV, irds:<dataset-id>); a workspace's corpus versions.

    \b
    Example:
      trecbench corpus get corpus.jsonl doc1 doc7
      trecbench corpus update -w mybench corpus.v2.jsonl --sources sources.jsonl --dry-run
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


@corpus.command()
@workspace_option
def versions(workspace: str) -> None:
    """List the workspace's corpus versions, oldest first; the current one is marked with *.

    A workspace made before versions existed gets its corpus registered as v1 first.

    \b
    Example:
      trecbench corpus versions -w mybench
    """
    from trecbench.versions import corpus_versions

    click.echo("version\tcreated\tpassages\twith_span\tfrom\tcorpus\tsources")
    for v in corpus_versions(workspace):
        click.echo(f"{v.name}{'*' if v.current else ''}\t{v.created_at}\t{v.passages}\t{v.spans}\t"
                   f"{v.parent or '-'}\t{v.corpus}\t{v.sources or '-'}")


@corpus.command()
@workspace_option
@click.argument("new_corpus", metavar="NEW_CORPUS")
@click.option("--sources", type=click.Path(dir_okay=False), help="The new version's sources file (full documents).")
@click.option("--dry-run", is_flag=True, help="Print the account; write nothing.")
@click.option("--permissions", nargs=2, type=click.Path(dir_okay=False), metavar="OLD NEW", default=None,
              help="Permissions files before and after: list the evidence a topic may no longer see (or sees now).")
def update(workspace: str, new_corpus: str, sources: str | None, dry_run: bool,
           permissions: tuple[str, str] | None) -> None:
    """Move the workspace to NEW_CORPUS, a new version of its corpus, accounting for every judgment and every
    nugget's supporting-document link.

    Carried: same docid, same text. Mapped: the text found unchanged in ONE new passage (the judgment is
    copied there, the link moved). Split: the text now spread over several passages (copies flagged "may
    be cut"; a link becomes a joint group). Changed: the text was edited (queued for people in a review
    pool; `corpus changes` shows the word diff). Retired: the source is gone. Exits 1 if the sums do not
    hold. Judgments and nugget versions are never overwritten. --permissions OLD NEW compares two
    permissions files on the nuggets' evidence, as `eval evidence --permissions` would score it. See
    docs/corpus-versions.md.

    \b
    Example:
      trecbench corpus update -w mybench corpus.v2.jsonl --sources sources.v2.jsonl --dry-run
      trecbench corpus update -w mybench corpus.v2.jsonl --sources sources.v2.jsonl
      trecbench corpus update -w mybench corpus.v2.jsonl --permissions permissions.v1.jsonl permissions.v2.jsonl
    """
    from trecbench.versions import update_corpus
    from trecbench.versions.permissions import permission_changes, permission_lines
    from trecbench.versions.report import update_lines

    done = update_corpus(workspace, new_corpus, sources=sources, dry_run=dry_run)
    for line in update_lines(done) + (permission_lines(permission_changes(workspace, *permissions))
                                      if permissions else []):
        click.echo(line)
    if not done.balanced():
        sys.exit(1)


@corpus.command()
@workspace_option
@click.option("--version", "version", help="The update that made this version (default: the current one).")
@click.option("--all", "everything", is_flag=True, help="Also list what was mapped and retired.")
def changes(workspace: str, version: str | None, everything: bool) -> None:
    """List what a corpus update queued for people (split groups, changed text), with the word diff of each
    changed text: [-removed-] {+added+}.

    \b
    Example:
      trecbench corpus changes -w mybench
      trecbench corpus changes -w mybench --version v2 --all
    """
    from trecbench.versions import OUTCOMES, QUEUED, corpus_changes
    from trecbench.versions.report import change_lines

    found = corpus_changes(workspace, version, outcomes=OUTCOMES if everything else QUEUED)
    for line in change_lines(found):
        click.echo(line)
