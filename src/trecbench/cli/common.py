"""Option groups and helpers shared by the command modules."""
from __future__ import annotations

import sys
from typing import Iterable

import click

from trecbench.errors import Problem


def report_problems(problems: Iterable[Problem]) -> int:
    """Print every problem to stderr; return the exit status (2 if any, else 0)."""
    n = 0
    for p in problems:
        click.echo(str(p), err=True)
        n += 1
    return 2 if n else 0


def exit_with(status: int) -> None:
    if status:
        sys.exit(status)
