"""Every command has help with an example and is shown in the README, so the docs cannot drift."""
from __future__ import annotations

from paths import ROOT


import click
import pytest

from trecbench.cli import COMMANDS, cli

README = (ROOT / "README.md").read_text()
# the guides: README.md and docs/*.md, but not the generated reference, which lists every command anyway
GUIDES = README + "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "cli.md")


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
def test_every_command_has_an_example_and_is_shown_in_a_guide(name, command):
    assert "Example:" in (command.help or ""), f"`trecbench {name} --help` has no Example: block"
    assert f"trecbench {name}" in GUIDES, f"`trecbench {name}` is not shown in README.md or docs/*.md"


def test_the_readme_links_every_guide():
    for guide in sorted((ROOT / "docs").glob("*.md")):
        assert f"docs/{guide.name}" in README, f"README.md does not link docs/{guide.name}"


def test_help_lists_every_command_group(cli_run):
    result = cli_run("--help")
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.output


@pytest.mark.parametrize("module", ["trecbench", "trecbench.cli"])
def test_python_m_runs_the_command(module):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and "Usage: " in done.stdout, done.stderr


def test_the_cli_reference_is_current():
    from trecbench.cli.reference import reference

    current = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == reference(), "docs/cli.md is out of date: python -m trecbench.cli.reference > docs/cli.md"


def _short_flags():
    """{short flag: {(command, long name)}} over every command."""
    seen: dict[str, set[tuple[str, str]]] = {}
    for name, command in _commands():
        for p in command.params:
            if isinstance(p, click.Option):
                longs = [o for o in p.opts if o.startswith("--")]
                for o in p.opts + p.secondary_opts:
                    if len(o) == 2:
                        seen.setdefault(o, set()).add((name, longs[0] if longs else o))
    return seen


@pytest.mark.parametrize("flag,meaning", [("-m", "--measure"), ("-q", "--per-topic"), ("-w", "--workspace"),
                                          ("-o", "--output"), ("-f", "--format")])
def test_a_short_flag_means_one_thing_in_every_command(flag, meaning):
    other = sorted((name, long) for name, long in _short_flags().get(flag, set()) if long != meaning)
    assert not other, f"{flag} is {meaning} in some commands but not in: {other}"


def test_every_table_printing_scorer_takes_f_for_its_format():
    ctx = click.Context(cli)
    retrieval = cli.get_command(ctx, "eval").get_command(ctx, "retrieval")
    assert "-f" in next(p for p in retrieval.params if p.name == "fmt").opts


@pytest.mark.parametrize("long, short", [("--format", "-f"), ("--per-topic", "-q"), ("--output", "-o"),
                                         ("--workspace", "-w")])
def test_every_command_with_a_shared_option_takes_its_short_flag(long, short):
    lacking = sorted(name for name, command in _commands() for p in command.params
                     if isinstance(p, click.Option) and long in p.opts and short not in p.opts)
    assert not lacking, f"{long} without {short} in: {lacking}"


def test_the_validate_commands_share_one_loop():
    import inspect

    from trecbench.cli import answers, qrels, runs

    for command in (answers.validate, qrels.validate, runs.validate):
        assert "validate_files(" in inspect.getsource(command.callback), command.name


def test_scoring_one_small_run_imports_neither_pandas_nor_ir_measures_nor_tqdm(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\n")
    code = ("import sys\nfrom trecbench.cli import cli\n"
            "try:\n    cli(sys.argv[1:])\nexcept SystemExit as e:\n    status = e.code\n"
            "print('LOADED', sorted(m for m in ('pandas', 'ir_measures', 'tqdm', 'litellm') if m in sys.modules), status)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", code, "eval", "retrieval", "-m", "nDCG@10", "--qrels",
                           str(tmp_path / "q.txt"), str(tmp_path / "r.txt")], capture_output=True, text=True, env=env,
                          timeout=60)
    assert "LOADED [] 0" in done.stdout, done.stdout + done.stderr  # start-up: python, numpy, click only
