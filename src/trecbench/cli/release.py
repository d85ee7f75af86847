"""`trecbench release`: freeze a workspace into a hashed release folder; `release verify` checks one later."""
from __future__ import annotations

import sys

import click

from trecbench.helpers.progress import progress_bar

from trecbench.cli.common import quiet_option, workspace_option


class ReleaseGroup(click.Group):
    """`trecbench release -w BENCH ...` is short for `trecbench release create -w BENCH ...`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["create", *args]
        return super().parse_args(ctx, args)


@click.group(cls=ReleaseGroup)
def release() -> None:
    """Freeze the benchmark into a release folder, and check a release later.

    `trecbench release -w BENCH ...` is short for `trecbench release create -w BENCH ...`.

    \b
    Example:
      trecbench release -w mybench --version v1 -o mybench-v1
      trecbench release verify mybench-v1 --corpus corpus.jsonl
    """


@release.command("create")
@workspace_option
@click.option("--version", "version", required=True, help="Release name, e.g. v1 or 2025.1.")
@click.option("-o", "--output", type=click.Path(file_okay=False), default=None,
              help="Release folder to write [BENCH/releases/VERSION].")
@click.option("--prefer", type=click.Choice(["human", "model", "latest"]), default="human", show_default=True,
              help="Which judgment of a pair makes the qrels (as `qrels export`).")
@click.option("--judge", help="Only this judge's judgments make the qrels.")
@click.option("--include-drafts", is_flag=True, help="Release nuggets still in draft too (default: approved only).")
@click.option("--allow-missing-nuggets", is_flag=True,
              help="Release even if some topics have no (approved) nugget; refused otherwise once the workspace has nuggets.")
@click.option("--include-corpus", is_flag=True,
              help="Release the judged documents' text too (corpus.jsonl); off, as a private corpus may not leave.")
@click.option("--license", "license_", default="other", show_default=True,
              help="The dataset card's licence: a Hugging Face identifier (cc-by-4.0, apache-2.0, ...).")
@click.option("--force", is_flag=True, help="Replace an existing release folder.")
@quiet_option()
def create(workspace, version, output, prefer, judge, include_drafts, allow_missing_nuggets, include_corpus, license_,
           force, quiet) -> None:
    """Write topics, qrels, nuggets, evidence and a manifest.json hashing every file and judged document.

    The qrels are the workspace's judgments, one grade per pair as `qrels export` chooses it (a person's
    first), with duplicates in the pool given their group's grade. Nuggets are the approved ones
    (--include-drafts: all; a release that would leave topics without nuggets is refused unless
    --allow-missing-nuggets), evidence the nuggets' support links in the format `eval evidence` reads.
    The manifest records each file's sha256 and size, the sha256 of every judged document's text, the
    judges (kind, name, model, prompt and its hash, parameters, judgments used) and counts. Pool
    candidates without any judgment are printed as a warning and listed in the manifest. An existing
    folder is refused unless --force. The manifest's own sha256 is printed: publish it with the release.
    Beside the TREC files, qrels.jsonl, topics.jsonl and a dataset card (README.md, --license) make the
    folder one that Hugging Face `datasets.load_dataset(DIR, "qrels")` loads; --include-corpus adds the
    judged documents (corpus.jsonl).

    \b
    Example:
      trecbench release -w mybench --version v1 -o mybench-v1
      trecbench release create -w mybench --version v2 --include-drafts --force --quiet
    """
    from trecbench.release import ReleaseError, make_release

    bar = progress_bar(not quiet, unit="doc", delay=1.0)
    try:
        summary = make_release(workspace, version, output, prefer=prefer, judge=judge, include_drafts=include_drafts,
                               force=force, progress=bar, include_corpus=include_corpus, license=license_,
                               allow_missing_nuggets=allow_missing_nuggets)
    except ReleaseError as e:
        raise click.BadParameter(str(e)) from None
    finally:
        bar.close()
    for warning in summary.warnings:
        click.echo(f"warning: {warning}", err=True)
    c = summary.manifest["counts"]
    grades = ", ".join(f"{n} graded {g}" for g, n in c["relevance"].items())
    click.echo(f"{summary.path}: release {version}: {c['topics']} topics, {c['judgments']} qrels ({grades}; "
               f"{c['propagated']} propagated), {c['nuggets']['vital']} vital and {c['nuggets']['okay']} okay "
               f"nuggets, {c['evidence']['items']} evidence items, {c['judged_documents']} documents hashed")
    click.echo(f"files: {', '.join(summary.manifest['files'])}, manifest.json (sha256 {summary.manifest_sha256})")


@release.command("verify")
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--corpus", help="The corpus now (JSONL, TSV or irds:): every judged document is hashed again.")
@quiet_option()
def verify(folder, corpus, quiet) -> None:
    """Check a release: re-hash every file and, with --corpus, every judged document's text.

    Prints one line per difference: `file NAME changed|missing|not in manifest`, `document DOCID
    changed|missing|added` and `corpus ...` when the corpus is not the corpus version the release names
    (its passages' docids and text hashes, fingerprinted), and exits with status 1 if there is any. Without
    --corpus only the files are checked.

    \b
    Example:
      trecbench release verify mybench-v1 --corpus corpus.jsonl
    """
    from trecbench.release import verify_release

    bar = progress_bar(not quiet, unit="item", delay=1.0)
    try:
        result = verify_release(folder, corpus, progress=bar)
    finally:
        bar.close()
    for p in result.files:
        click.echo(f"file\t{p.name}\t{p.problem}")
    for d in result.documents:
        click.echo(f"document\t{d.docid}\t{d.problem}")
    if result.corpus_differs:
        click.echo(f"corpus\t{result.corpus_differs}")
    docs = f"{result.documents_checked} judged documents" if corpus else "no documents (give --corpus)"
    summary = (f"{folder}: release {result.version}, manifest sha256 {result.manifest_sha256}: checked "
               f"{result.files_checked} files and {docs}")
    if result.ok:
        same = f" (the corpus is its corpus version {result.corpus_version})" if corpus and result.corpus_version else ""
        click.echo(summary + ": unchanged" + same)
        return
    corpus_line = ", and the corpus version" if result.corpus_differs else ""
    click.echo(f"{summary}: {len(result.files)} file(s) and {len(result.documents)} document(s) differ{corpus_line}",
               err=True)
    sys.exit(1)
