"""Helpers for CLI tests: a file written as given, a `trecbench` call that lets exceptions out, a refused validate."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner


def write(tmp_path: Path, content: str | bytes, name: str) -> Path:
    """`content` (text, or bytes as they are) written to `tmp_path / name`."""
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def run_cli(*args: object):
    """`trecbench ARGS...`; exceptions propagate: only a clean exit (status 0 or 2 with a message) passes."""
    from trecbench.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def assert_validate_refuses(group: str, path: Path, message: str) -> None:
    """`trecbench GROUP validate PATH` prints `PATH<message>` on stderr, nothing on stdout, and exits 2."""
    result = run_cli(group, "validate", path)
    assert result.exit_code == 2
    assert f"{path}{message}" in result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.output
