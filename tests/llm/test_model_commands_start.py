"""How model commands start: a dry run imports no model library (litellm, a provider's SDK), nor pandas
where it only counts, and prints litellm's own numbers; a real run says what it will do before it imports one.

Each command runs in a fresh process (as a user runs it) under an audit hook that, at the first real import
of litellm, openai, anthropic or httpx (not a `find_spec` look-up), prints `IMPORT <name>` and ends the
process: the order of that line and the command's output is the order of events, with no clock involved.
A command that ends prints `EVENT LOOP True|False` (whether it imported asyncio) and `LOADED [...]`, which of
pandas and pyarrow it imported, before `ENDED <status>`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paths import ROOT

SAMPLE = ROOT / "src" / "trecbench" / "sample"
STACK = ("litellm", "openai", "anthropic", "httpx")
FRAMES = ("pandas", "pyarrow")  # a third of a second or more to import: what a dry run that only counts does without
WATCHED = f"""
import os, sys

def stop_at_model_stack(event, args):
    if event == "import" and args[0].partition(".")[0] in {STACK!r}:
        print("IMPORT", args[0].partition(".")[0], flush=True)
        os._exit(0)

sys.addaudithook(stop_at_model_stack)
from trecbench.cli import cli
try:
    cli(sys.argv[1:])
    status = 0
except SystemExit as e:
    status = e.code
print("EVENT LOOP", "asyncio" in sys.modules, flush=True)
print("LOADED", sorted(m for m in {FRAMES!r} if m in sys.modules), flush=True)
print("ENDED", status, flush=True)
"""
NOWHERE = "http://127.0.0.1:9/v1"  # nothing listens: every run here ends before a request is sent


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The sample benchmark's workspace, as `trecbench demo` leaves it (built once for this module)."""
    from click.testing import CliRunner

    from trecbench.cli import cli

    folder = tmp_path_factory.mktemp("demo") / "demo"  # built in this process: only the commands below need their own
    result = CliRunner().invoke(cli, ["demo", "--dir", str(folder), "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return folder / "bench"


def _env() -> dict:
    return {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def watched(*args: object, cwd: Path | None = None) -> list[str]:
    """The lines the command prints (stdout and stderr in the order written), its last one `IMPORT name`
    when it imported a model library, else `ENDED status`."""
    proc = subprocess.run([sys.executable, "-c", WATCHED, *map(str, args)], capture_output=False, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=_env(), cwd=cwd, timeout=300)
    return [line for line in proc.stdout.splitlines() if line.strip()]


DRY_RUNS = {
    "judge, an OpenAI model": ["judge", "llm", "--model", "openai/gpt-4o-mini", "--dry-run"],
    "judge, Anthropic, batches": ["judge", "llm", "--model", "anthropic/claude-sonnet-4-5", "--batch", "5",
                                  "--dry-run"],
    "judge, a local server": ["judge", "llm", "--model", "hosted_vllm/qwen2.5-7b", "--api-base", NOWHERE,
                              "--samples", "3", "--dry-run"],
    "judge, only unjudged": ["judge", "llm", "--model", "openai/gpt-4o-mini", "--only-unjudged", "--dry-run"],
    "audit": ["judge", "llm", "--model", "openai/gpt-4o-mini", "--audit", "--dry-run"],
    "nuggets, an OpenAI model": ["nuggets", "draft", "--model", "openai/gpt-4o-mini", "--dry-run"],
    "nuggets, Anthropic": ["nuggets", "draft", "--model", "anthropic/claude-sonnet-4-5", "--dry-run"],
    "nuggets, a local server": ["nuggets", "draft", "--model", "openai/judge", "--api-base", NOWHERE, "--dry-run"],
    "support": ["judge", "support", SAMPLE / "answers" / "partial.jsonl", "--model", "openai/gpt-4o-mini", "--dry-run"],
    "judge, few-shot, samples": ["judge", "llm", "--model", "openai/gpt-4o-mini", "--examples", "2", "--samples", "3",
                                 "--batch", "4", "--dry-run"],
}
# The audit chooses the pairs it re-judges from frames of the old qrels (as `judge validate` does): it needs pandas.
NEEDS_FRAMES = {"audit"}
# These ask through the client in its dry-run mode (an event loop, the cache answering what it holds); a dry
# run of `judge llm` counts without a client: neither the client nor asyncio (~0.1 s) is imported.
NEEDS_CLIENT = {"nuggets, an OpenAI model", "nuggets, Anthropic", "nuggets, a local server", "support"}


@pytest.mark.parametrize("name", DRY_RUNS)
def test_a_dry_run_imports_no_model_library_nor_pandas(demo, name):
    command = DRY_RUNS[name]
    lines = watched(*command[:2], "-w", demo, *command[2:])
    assert lines[-1] == "ENDED 0", lines  # not `IMPORT litellm`
    assert any(line.startswith("dry run: ") for line in lines), lines
    if name not in NEEDS_FRAMES:
        assert lines[-2] == "LOADED []", lines
    assert lines[-3] == f"EVENT LOOP {name in NEEDS_CLIENT}", lines


@pytest.mark.parametrize("name", ["judge, an OpenAI model", "judge, Anthropic, batches", "nuggets, Anthropic"])
def test_a_dry_run_without_litellm_prints_the_numbers_litellm_gives(demo, name, cli_run):
    from trecbench.llm._litellm import load
    from trecbench.llm.cost import prompt_counter

    command = DRY_RUNS[name]
    without = [line for line in watched(*command[:2], "-w", demo, *command[2:]) if line.startswith("dry run: ")]
    load()  # litellm imported: its token counter, cost map and schema support are used from here on
    prompt_counter.cache_clear()
    with_litellm = cli_run(*command[:2], "-w", demo, *command[2:])
    assert with_litellm.exit_code == 0, with_litellm.output
    assert without == [line for line in with_litellm.stdout.splitlines() if line.startswith("dry run: ")]
    assert len(without) == 1 and " 0 input tokens" not in without[0]


def model_commands(demo: Path, tmp: Path) -> dict[str, tuple[list, str]]:
    """Model commands on the demo workspace (or the sample's files), and the start of what each prints first."""
    refs = tmp / "refs.jsonl"
    refs.write_text(json.dumps({"qid": "T01", "reference": "Emergency access is approved by the incident "
                                                         "commander for four hours."}) + "\n")
    anthropic = ["--model", "anthropic/claude-sonnet-4-5"]
    served = ["--model", "openai/judge", "--api-base", NOWHERE, "--api-key", "x"]
    return {
        "judge llm, litellm": (["judge", "llm", "-w", demo, *anthropic, "--limit", "2", "--quiet"],
                               "judge anthropic/claude-sonnet-4-5:"),
        "judge llm, the openai SDK": (["judge", "llm", "-w", demo, *served, "--limit", "2", "--quiet"],
                                      "judge openai/judge:"),
        "judge llm, a provider batch": (["judge", "llm", "-w", demo, "--model", "openai/gpt-4o-mini", "--api-key",
                                         "x", "--provider-batch", "--limit", "2", "--quiet"],
                                        "judge openai/gpt-4o-mini:"),
        "nuggets draft": (["nuggets", "draft", "-w", demo, *anthropic, "--topic", "T01", "--quiet"],
                          "draft nuggets with anthropic/claude-sonnet-4-5: "),
        "eval answers": (["eval", "answers", "--nuggets", SAMPLE / "nuggets.jsonl", SAMPLE / "answers" / "good.jsonl",
                          "--assigner", "llm", *anthropic, "--cache", tmp / "cache.sqlite"],
                         "assigning nuggets with anthropic/claude-sonnet-4-5: 1 answer file(s)"),
        "eval context-recall": (["eval", "context-recall", "--mode", "llm", *anthropic, "--contexts",
                                 SAMPLE / "contexts.jsonl", "--references", refs, "--cache", tmp / "cache.sqlite"],
                                "judging context recall with anthropic/claude-sonnet-4-5: 1 contexts file(s)"),
        "demo": (["demo", "--dir", tmp / "demo", *anthropic], "building the sample benchmark in "),
    }


@pytest.mark.parametrize("name", ["judge llm, litellm", "judge llm, the openai SDK", "judge llm, a provider batch",
                                  "nuggets draft", "eval answers", "eval context-recall", "demo"])
def test_a_model_command_says_what_it_will_do_before_it_imports_a_model_library(demo, tmp_path, name):
    argv, first = model_commands(demo, tmp_path)[name]
    lines = watched(*argv, cwd=tmp_path)
    assert lines[0].startswith(first), lines
    assert lines[-1].startswith("IMPORT "), lines  # the command went on to the model library, after that line


def test_pool_estimate_imports_no_model_library(tmp_path, cli_run):
    pool = tmp_path / "pool.tsv"
    assert cli_run("pool", *sorted((SAMPLE / "runs").glob("*.txt")), "--depth", "8", "-o", pool).exit_code == 0
    lines = watched("pool", "estimate", pool, "--model", "anthropic/claude-sonnet-4-5", "--batch", "10", "--corpus",
                    SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv")
    assert lines[-1] == "ENDED 0", lines
    assert any("input + " in line and "(prices: litellm cost map (claude-sonnet-4-5))" in line for line in lines), lines
