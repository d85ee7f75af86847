"""The `trecbench` command: a thin click layer; command groups are imported only when used."""
from __future__ import annotations

import importlib
import os
import sys

import click

# command name -> (module under trecbench.cli, attribute, one-line help shown by --help)
COMMANDS = {
    "runs": ("runs", "runs", "Read, validate and write TREC run files."),
    "qrels": ("qrels", "qrels", "Read, validate and write TREC qrels files."),
    "topics": ("topics", "topics", "Read topics (TSV, TREC RAG 2024/2025, irds:)."),
    "corpus": ("corpus", "corpus", "Look up documents in a corpus (JSONL, TSV, irds:)."),
    "answers": ("answers", "answers", "Read and validate RAG answer files (TREC RAG 2024/2025 JSONL)."),
    "eval": ("evaluate", "eval_group", "Score runs, answers and contexts (retrieval identical to trec_eval)."),
    "demo": ("demo", "demo", "Run the main job on the bundled sample benchmark."),
    "pool": ("pool", "pool", "Pool runs for judging (depth-k, fused, adaptive), de-duplicated, with a budget."),
    "init": ("workspace", "init", "Create a bench workspace (settings and SQLite store)."),
    "judge": ("judge", "judge", "Judge the pool's candidates with a model (people use `serve`)."),
    "assessors": ("workspace", "assessors", "Register assessors for the web app and print their tokens."),
    "serve": ("serve", "serve", "Judge in the browser: the assessor web app."),
    "nuggets": ("nuggets", "nuggets", "Draft nuggets (model or extractive), list, export and import them."),
    "check": ("check", "check", "List evidence links and judgments whose document changed or disappeared."),
    "report": ("report", "report", "Write a self-contained HTML report of a workspace and the runs scored on it."),
    "release": ("release", "release", "Freeze a benchmark into a hashed release folder, and verify one."),
    "support": ("support", "support", "Support of answers' citations: register sentences, import and export judgments."),
}


class LazyGroup(click.Group):
    """Lists commands from a table without importing them, so `trecbench --help` is instant.

    `lazy_commands` maps a command name to (module under trecbench.cli, attribute, one-line help).
    """

    def __init__(self, *args, lazy_commands: dict[str, tuple[str, str, str]] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy_commands = COMMANDS if lazy_commands is None else lazy_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.lazy_commands) | set(self.commands))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.commands:
            return self.commands[name]
        if name not in self.lazy_commands:
            return None
        module, attr, _ = self.lazy_commands[name]
        return getattr(importlib.import_module(f"trecbench.cli.{module}"), attr)

    def invoke(self, ctx: click.Context):
        # Bad input is printed as `path:line: message` with exit status 2, never a traceback; so is a model
        # server's refusal that every call would meet (bad key, no such model, no credit left).
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, click.Abort):
            # Ctrl-C: one line and the shell's status for SIGINT; output files are written atomically, so an
            # interrupted command leaves the old file or none (trecbench.files.output).
            click.echo("\ninterrupted: nothing half-written was kept", err=True)
            ctx.exit(130)
        except Exception as e:
            message = _failure_message(e)
            if message is None:
                raise
            click.echo(message, err=True)
            ctx.exit(2)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy_commands:
                rows.append((name, self.lazy_commands[name][2]))
            else:
                rows.append((name, self.commands[name].get_short_help_str(limit=70)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _failure_message(error: Exception) -> str | None:
    """What the CLI prints (exit status 2) for a failure the user can act on; None for any other exception.

    A kind of failure is looked for only if the module of its class was imported: no exception of a class
    can be raised before its module has run, so a command that opened no workspace and called no model
    does not import sqlite3, the model client's errors or the extras table just to find out (3-5 ms of
    start-up; tests/evaluation/retrieval/test_eval_columns.py checks that scoring imports none of them).
    """
    if "trecbench.errors" in sys.modules:
        from trecbench.errors import InputError

        if isinstance(error, InputError):  # the first problems and a count of the rest: a wrong file is one screen
            return "\n".join(error.listing())
    if "trecbench.llm.errors" in sys.modules:
        from trecbench.llm.errors import LLMError, ModelCallError

        if isinstance(error, ModelCallError):
            return f"stopped: {error}; nothing was recorded for the request it refused"
        if isinstance(error, LLMError):  # a model setting that no call can work with
            return f"trecbench: {error}"
    if "sqlite3" in sys.modules:
        import sqlite3

        if isinstance(error, sqlite3.DatabaseError):  # damage found after the store's checks, a locked or read-only file
            return f"trecbench: {_database_failed(error)}"
    # An optional extra that the command needs is not installed: one line saying which, not a traceback.
    if "trecbench.helpers.extras" in sys.modules:
        from trecbench.helpers.extras import MissingExtra

        if isinstance(error, MissingExtra):
            return f"trecbench: {error}"
    if isinstance(error, ModuleNotFoundError):
        from trecbench.helpers.extras import missing_extra

        missing = missing_extra(error)
        return None if missing is None else f"trecbench: {missing}"
    return None


def _database_failed(error: Exception) -> str:
    """What a failure of the workspace's database means for the user, and what to do (`store_failure`)."""
    from trecbench.store.schema import store_failure

    failure = store_failure(error)
    if failure.todo is None:
        return f"{failure.what}; a change it was making, if any, was rolled back"
    if failure.full:
        return f"{failure.what}: {failure.todo} and run the command again; the change it was making was rolled back"
    return f"{failure.what}: this command changes it; {failure.todo}; nothing was changed"


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="trecbench")
def cli() -> None:
    """Build TREC-style benchmarks for private corpora and score systems against them.

    \b
    Example:
      trecbench eval retrieval --qrels qrels.txt run1.txt run2.txt -m nDCG@10 -m R@100
    """


_NO_TEARDOWN = [False]  # set by `no_teardown`, read by `main` only


def no_teardown() -> None:
    """Say that the process has nothing left to do once the command returns: `main` then ends it without
    Python's teardown, which frees every object of numpy, click and the rest one by one just before the
    system takes the memory back anyway (a fifth of the CPU of `eval retrieval` on a run of 50 topics).
    Only for commands that close what they write themselves and leave no thread or temporary file for
    an atexit handler; commands invoked in process (tests, `cli(...)`) are not affected."""
    _NO_TEARDOWN[0] = True


def main() -> None:
    """Entry point of the `trecbench` script."""
    try:
        cli()
    except SystemExit as e:
        if _NO_TEARDOWN[0] and (e.code is None or isinstance(e.code, int)):
            try:  # what is printed must get out first; if it cannot (a closed pipe), Python's own exit says so
                sys.stdout.flush()
                sys.stderr.flush()
            except (OSError, ValueError):
                raise e from None
            os._exit(e.code or 0)
        raise
