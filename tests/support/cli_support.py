"""Helpers for CLI tests: a file written as given, a `trecbench` call that lets exceptions out, a refused validate."""
from __future__ import annotations

import json
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


def bench_with_a_duplicate(tmp_path: Path, representative: str, duplicate: str, other: str) -> Path:
    """A workspace (`init`, one topic q1) whose pool p groups `duplicate` with `representative`; `other` is alone."""
    import pandas as pd

    from trecbench.store.workspace import Workspace, save_pool

    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tfirst question\n")
    path = tmp_path / "bench"
    assert run_cli("init", path, "--topics", topics).exit_code == 0
    pool = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": [representative, duplicate, other], "priority": [1, 2, 3],
                         "group": [representative, representative, other], "representative": [True, False, True]})
    save_pool(Workspace(path), "p", "depth", {}, pool)
    return path


def write_jsonl(tmp_path: Path, lines: list, name: str) -> Path:
    """A JSONL file of these records (a str is written as it is: a line that is not JSON, or not an object)."""
    path = tmp_path / name
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def cited_answer(tmp_path: Path, references: list[str], topic: str = "nuclear") -> Path:
    """r1.jsonl: run r1's TREC RAG 2024 answer to q1, one sentence citing the first of `references`."""
    text = "Nuclear power emits very little carbon dioxide."
    return write_jsonl(tmp_path, [{"run_id": "r1", "topic_id": "q1", "topic": topic, "references": references,
                                   "response_length": len(text.split()), "answer": [{"text": text, "citations": [0]}]}],
                       "r1.jsonl")
