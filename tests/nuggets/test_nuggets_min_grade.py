"""`nuggets draft` drafts from documents graded 2 or more unless told otherwise (grade 1: related, no answer)."""
from __future__ import annotations

from nugget_bench import make_bench
from trecbench.nuggets.store import NuggetStore
from trecbench.store import Workspace

DOCS = {"p1": "Office plants are watered on Fridays by the facilities team.",
        "p2": "Cacti in the lobby are watered once a month by the facilities team."}
TOPICS = {"r2": "When are office plants watered?"}


def test_documents_graded_one_are_left_out_by_default_and_used_with_min_grade_1(tmp_path, cli_run):
    path = make_bench(tmp_path, DOCS, TOPICS, {("r2", "p1"): 1, ("r2", "p2"): 1})
    r = cli_run("nuggets", "draft", "-w", path, "--extractive")
    assert r.exit_code == 0, r.output
    assert "1 topic(s) have no judged-relevant document: r2" in r.stderr
    assert NuggetStore(Workspace(path)).topic("r2") == []
    r = cli_run("nuggets", "draft", "-w", path, "--extractive", "--min-grade", "1")
    assert r.exit_code == 0, r.output
    assert {d.docid for n in NuggetStore(Workspace(path)).topic("r2") for g in n.support for d in g} == {"p1", "p2"}


def test_the_library_drafts_from_the_same_grade_as_the_command():
    import click

    from trecbench.cli.nuggets import draft
    from trecbench.nuggets.drafting.extractive import ExtractiveSettings
    from trecbench.nuggets.drafting.llm import DraftSettings

    option = next(p for p in draft.params if isinstance(p, click.Option) and p.name == "min_grade")
    assert ExtractiveSettings().min_grade == DraftSettings().min_grade == option.default == 2
