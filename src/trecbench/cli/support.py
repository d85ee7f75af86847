"""`trecbench support`: register answers' sentences for support judging; import and export support judgments."""
from __future__ import annotations

import click

from trecbench.cli.common import output_option, workspace_option


@click.group("support")
def support() -> None:
    """Support assessment: does the passage an answer cites back the sentence citing it?

    Register the answers' sentences (`add`), judge them by model (`judge support`) or in the web app
    (`serve`), bring judgments made elsewhere (`import`), and score them (`eval support`).

    \b
    Example:
      trecbench support add -w mybench answers/*.jsonl
      trecbench support import -w mybench support.jsonl
      trecbench eval support -w mybench
    """


@support.command("add")
@workspace_option
@click.argument("answer_files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def add(workspace, answer_files) -> None:
    """Register every sentence of ANSWER_FILES (TREC RAG 2024/2025 JSONL) with its citations for judging,
    and print what can and cannot be judged: answers without any citation, sentences citing nothing (they
    count as unsupported) and citations to docids not in the workspace's corpus, counted and listed.

    A sentence registered before with the same text is left as it is; one whose text or citations changed
    is replaced (its old judgments are kept but no longer scored).

    \b
    Example:
      trecbench support add -w mybench rag_good.jsonl rag_poor.jsonl
    """
    from trecbench.answers.support import register_answers

    for line in register_answers(workspace, answer_files).lines():
        click.echo(line)


@support.command("import")
@workspace_option
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--judge", default=None,
              help="The judge of rows that name none (default: the file's name). Recorded as kind import.")
def import_(workspace, file, judge) -> None:
    """Record FILE's support judgments: JSONL rows {"run_id", "topic_id", "sentence", "citation", "grade",
    "judge"}, `sentence` the sentence's index in the answer (from 0), `citation` the cited docid, `grade`
    full, partial, none or contradicts. The sentences must be registered (`support add`). A file with a
    bad row (unknown grade, a sentence not registered, a citation the sentence does not make) is refused
    whole, every bad row listed as path:line.

    \b
    Example:
      trecbench support import -w mybench assessors.jsonl --judge nist
    """
    from trecbench.evaluation.support.jsonl import import_support

    done = import_support(workspace, file, judge=judge)
    click.echo(f"imported {done.judgments} support judgments by {', '.join(done.judges)}", err=True)


@support.command("export")
@workspace_option
@output_option("Write the JSONL to this file (default: standard output).")
@click.option("--judge", default=None, help="Only this judge's grades (its newest of each pair).")
def export(workspace, output, judge) -> None:
    """Write the grade scored for each judged sentence-citation pair as JSONL rows {"run_id", "topic_id",
    "sentence", "citation", "grade", "judge", "judge_kind"}: a person's newest grade, else an import's, else
    a model's; with --judge, that judge's. `support import` reads the file back.

    \b
    Example:
      trecbench support export -w mybench -o support.jsonl
      trecbench support export -w mybench --judge gpt-4o-mini
    """
    from trecbench.evaluation.support.jsonl import export_support
    from trecbench.files.output import open_output

    try:
        with open_output(output) as stream:
            n = export_support(workspace, stream, judge=judge)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    click.echo(f"exported {n} support judgments" + (f" to {output}" if output else ""), err=True)
