"""Option groups and helpers shared by the command modules."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Callable, Iterable

import click

from trecbench.errors import Problem

if TYPE_CHECKING:
    import pandas as pd


def report_problems(problems: Iterable[Problem]) -> int:
    """Print every problem to stderr; return the exit status (2 if any, else 0)."""
    n = 0
    for p in problems:
        click.echo(str(p), err=True)
        n += 1
    return 2 if n else 0


def validate_files(files: Iterable[str], check: Callable[[str], tuple], summary: Callable[[object], str]) -> None:
    """The `validate` commands: `check(path)` gives (what was read, problems) for each file; a good file gets
    `path: ok, <summary>` on stdout, a bad one its problems on stderr, and the exit status is 2 if any was bad."""
    status = 0
    for path in files:
        found, problems = check(path)
        if problems:
            status = report_problems(problems)
            continue
        click.echo(f"{path}: ok, {summary(found)}")
    if status:
        sys.exit(status)


def format_option(*choices: str, help: str = "Output format.") -> Callable:
    """`--format` / `-f` choosing how a table is printed; the first choice is the default."""
    return click.option(
        "--format", "-f", "fmt", type=click.Choice(list(choices)), default=choices[0], show_default=True, help=help,
    )


def output_option(help: str = "Write to this file.", **kwargs) -> Callable:
    """`-o` / `--output`: the file a command writes (standard output without it), opened by `trecbench.files.output`."""
    kwargs.setdefault("type", click.Path(dir_okay=False))
    return click.option("-o", "--output", default=None, help=help, **kwargs)


def workspace_option(f: Callable) -> Callable:
    """`-w` / `--workspace` (required): the bench workspace a command works on."""
    return click.option("-w", "--workspace", "workspace", required=True, type=click.Path(file_okay=False),
                        help="The bench workspace folder (made by `trecbench init`).")(f)


def per_topic_option(help: str = "Also print per-topic scores.") -> Callable:
    """`-q` / `--per-topic`: a row per topic besides each run's mean (trec_eval's -q)."""
    return click.option("-q", "--per-topic", is_flag=True, help=help)


def missing_topics_option(help: str) -> Callable:
    """`--missing-topics zero|skip`: whether a topic a run lacks scores 0 or is left out (trec_eval -c or not)."""
    return click.option("--missing-topics", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
                        help=help)


def trec_eval_version_option(help: str) -> Callable:
    """`--trec-eval-version 9|10` (default 9), given to the command as an int: whose semantics to follow."""
    return click.option("--trec-eval-version", type=click.Choice(["9", "10"]), default="9", show_default=True,
                        callback=lambda _ctx, _param, value: int(value), help=help)


def quiet_option(help: str = "No progress bar.") -> Callable:
    """`--quiet`: no progress bar (and, where said, less)."""
    return click.option("--quiet", is_flag=True, help=help)


def print_table(frame: "pd.DataFrame", fmt: str = "table") -> None:
    """Print a pandas DataFrame (its index included) as an aligned text table, CSV or JSON records."""
    frame = frame.reset_index()
    if fmt == "csv":
        click.echo(frame.to_csv(index=False), nl=False)
    elif fmt == "json":
        click.echo(frame.to_json(orient="records", indent=2))
    else:
        click.echo(frame.to_string(index=False))


def describe_plan(plan, *, at_most: bool = False, note: str = "") -> str:
    """One line for a dry run: calls, tokens and dollars it would take (`trecbench.llm.Plan`)."""
    cost = f"${plan.cost:.4f}" + (f" ({plan.unpriced} calls unpriced)" if plan.unpriced else "")
    return (f"dry run: {'at most ' if at_most else ''}{plan.calls} calls to the model ({plan.cached} answered by "
            f"the cache), {plan.prompt_tokens} input tokens{note}, ~{plan.completion_tokens} output tokens, {cost}")


class SeveralAfterOne(click.Command):
    """A command whose options named in `several` take every value up to the next option, so that
    `--answers answers/*.jsonl` (a shell glob) gives them all, not the first one and stray arguments."""

    several: tuple[str, ...] = ()

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        out: list[str] = []
        flag = None
        for arg in args:
            if arg == "--":
                flag = None
            elif arg.startswith("-") and len(arg) > 1:
                flag = arg if arg in self.several else None
            elif flag is not None and out and out[-1] != flag:
                out.append(flag)  # a further value of the same option
            out.append(arg)
        return super().parse_args(ctx, out)


def several_after_one(*names: str) -> type[SeveralAfterOne]:
    """The command class for `@click.command(cls=...)` with these options taking several values."""
    return type("SeveralAfterOneCommand", (SeveralAfterOne,), {"several": names})


class RegistryChoice(click.Choice):
    """A choice among the names of a registry, read when first needed: the command module imports nothing
    heavy, and a name registered from Python before the command runs is a valid choice."""

    def __init__(self, names: Callable[[], Iterable[str]]):
        self._names = names
        super().__init__([])

    @property  # type: ignore[override]
    def choices(self) -> list[str]:
        return list(self._names())

    @choices.setter
    def choices(self, value) -> None:  # click sets it in __init__; the registry is the source
        pass


def assigner_names() -> list[str]:
    from trecbench.evaluation.answers.assign import ASSIGNERS

    return list(ASSIGNERS)


def duplicates_option(f: Callable) -> Callable:
    """`--duplicates same|distinct`: whether a workspace pool's duplicate groups are one document in scoring."""
    return click.option(
        "--duplicates", type=click.Choice(["same", "distinct"]), default="same", show_default=True,
        help="With -w: same: the members of a duplicate group of the workspace's (newest) pool are one document, "
             "as the qrels give them one grade; distinct: every docid counts on its own.",
    )(f)


def chunking_options(judged_on: str, holder: str) -> Callable:
    """`--corpus-spans CHUNKING` and `--cover SHARE`: score runs retrieved from another chunking of the same
    sources, linked by source span to the chunking `judged_on` names (`trecbench.sources.covered`); `holder`
    says what must hold the share of a judged passage's characters."""
    def decorate(f: Callable) -> Callable:
        f = click.option("--cover", type=click.FloatRange(0, 1, min_open=True), default=1.0, show_default=True,
                         help=f"With --corpus-spans: the share of a judged passage's characters {holder} must hold "
                              "to cover it; 1 asks for every character, so a condition cut into the neighbouring "
                              "chunk is not counted as found.")(f)
        return click.option("--corpus-spans", "corpus_spans", type=click.Path(dir_okay=False), default=None,
                            help="The corpus the runs were retrieved from, when it is another chunking of the same "
                                 f"sources: JSONL with source_id, start_char, end_char. Linked to {judged_on} by "
                                 "source span.")(f)
    return decorate
