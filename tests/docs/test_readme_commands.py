"""The README's path from the demo to one's own benchmark, run as written (shell globs expanded), offline."""
from __future__ import annotations

from paths import ROOT

import glob
import re
import shlex
import shutil

from trecbench.demo import sample_dir

README = ROOT / "README.md"
# the two steps that call a model are done offline: the sample's judgments imported, nuggets drafted extractively
OFFLINE = {"judge llm": "trecbench qrels import qrels.txt -w mybench --judge nist",
           "nuggets draft": "trecbench nuggets draft -w mybench --extractive"}


def readme_block(heading: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split(f"## {heading}\n", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.startswith("trecbench ")]


def test_the_readme_path_to_ones_own_benchmark_runs(tmp_path, monkeypatch, cli_run):
    sample = sample_dir()
    for name in ("corpus.jsonl", "topics.tsv", "qrels.txt"):
        shutil.copy(sample / name, tmp_path / name)
    shutil.copytree(sample / "runs", tmp_path / "team-runs")
    shutil.copytree(sample / "answers", tmp_path / "answers")
    shutil.copy(sample / "contexts.jsonl", tmp_path / "staged.jsonl")
    shutil.copy(sample / "runs" / "bm25_rm3.txt", tmp_path / "new-system.txt")
    monkeypatch.chdir(tmp_path)
    commands = readme_block("From the demo to your own benchmark")
    assert any("--answers answers/*.jsonl" in c for c in commands)
    done = set()
    for command in commands:
        for step, offline in OFFLINE.items():
            if command.startswith(f"trecbench {step} ") and "--model" in command:
                command = offline if step not in done else ""
                done.add(step)
        if not command:
            continue
        args = []
        for word in shlex.split(command)[1:]:
            args += sorted(glob.glob(word)) if "*" in word else [word]
        if "report" in args[:1]:
            args += ["--iterations", "200", "--quiet"]
        result = cli_run(*args)
        assert result.exit_code == 0, f"{command}\n{result.output}"
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    for run in ("rag_good", "rag_partial", "rag_poor"):  # every answer file of the glob is scored
        assert run in report
    assert (tmp_path / "mybench" / "releases" / "v1" / "manifest.json").is_file()
