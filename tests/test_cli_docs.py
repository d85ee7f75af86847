"""Every command has help with an example and is shown in the README, so the docs cannot drift."""
from __future__ import annotations

from pathlib import Path

import click
import pytest

from trecbench.cli import COMMANDS, cli

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _commands():
    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                yield f"{name} {sub}", command.get_command(ctx, sub)
        else:
            yield name, command


@pytest.mark.parametrize("name,command", list(_commands()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_command_has_an_example_and_is_in_the_readme(name, command):
    assert "Example:" in (command.help or ""), f"`trecbench {name} --help` has no Example: block"
    assert f"trecbench {name}" in README, f"`trecbench {name}` is not shown in README.md"


def test_help_lists_every_command_group(cli_run):
    result = cli_run("--help")
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.output


def test_the_cli_reference_is_current():
    from trecbench.cli.reference import reference

    current = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == reference(), "docs/cli.md is out of date: python -m trecbench.cli.reference > docs/cli.md"
