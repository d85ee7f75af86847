"""A command function parses its arguments, calls one library function and prints: it stays short."""
from __future__ import annotations

import ast
import inspect
import textwrap

import click
import pytest

from trecbench.cli import COMMANDS, cli

MOST_LINES = 40


def _commands():
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        subs = [(f"{name} {sub}", command.get_command(ctx, sub)) for sub in command.list_commands(ctx)] \
            if isinstance(command, click.Group) else [(name, command)]
        yield from subs


def body_lines(function) -> int:
    """Lines of a function's body, from its first statement after the docstring to its last."""
    function = inspect.unwrap(function)
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


def test_body_lines_counts_the_statements_only():
    def f(a):
        """A docstring
        of two lines."""
        b = a + 1

        return b

    assert body_lines(f) == 3


@pytest.mark.parametrize("name,command", list(_commands()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_command_function_is_short(name, command):
    lines = body_lines(command.callback)
    where = f"{inspect.getsourcefile(inspect.unwrap(command.callback))}"
    assert lines <= MOST_LINES, (f"`trecbench {name}` ({where}) has {lines} lines: move its logic into the library "
                                 f"(at most {MOST_LINES})")
