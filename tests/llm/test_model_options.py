"""Every command that calls a model shares one set of options, checked by click, and one exit rule."""
from __future__ import annotations

import json
import sqlite3

import pytest
from llm_server import ok
from judge_bench import grader, judge_args, make_judge_bench, rows

SHARED = {"model", "api_bases", "api_key", "concurrency", "timeout", "max_retries", "rpm", "max_cost", "temperature",
          "input_price", "output_price"}

# each model command with the arguments it needs besides the model options
COMMANDS = {
    "judge llm": ["judge", "llm", "-w", "ws"],
    "nuggets draft": ["nuggets", "draft", "-w", "ws"],
    "eval answers": ["eval", "answers", "--nuggets", "n.jsonl", "a.jsonl", "--assigner", "llm"],
    "eval context-recall": ["eval", "context-recall", "--mode", "llm", "--contexts", "c.jsonl",
                            "--references", "r.jsonl"],
    "demo": ["demo", "--dir", "demo"],
}

BAD = {
    "negative cost": ["--max-cost", "-1"],
    "nan cost": ["--max-cost", "nan"],
    "zero timeout": ["--timeout", "0"],
    "negative timeout": ["--timeout", "-3"],
    "negative retries": ["--max-retries", "-1"],
    "nan temperature": ["--temperature", "nan"],
    "infinite temperature": ["--temperature", "inf"],
    "negative rpm": ["--rpm", "-5"],
    "zero concurrency": ["--concurrency", "0"],
    "not a url": ["--api-base", "localhost:8000"],
}


@pytest.fixture
def bench(tmp_path, cli_run):
    return make_judge_bench(tmp_path, cli_run)


def command(name: str):
    from trecbench.cli import cli

    import click

    ctx = click.Context(cli)
    cmd = cli
    for part in name.split():
        cmd = cmd.get_command(ctx, part)
    return cmd


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_model_command_has_the_shared_options(name):
    params = {p.name for p in command(name).params}
    assert SHARED <= params, SHARED - params


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_bad_option_values_are_click_errors_with_exit_2(name, bad, cli_run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli_run(*COMMANDS[name], "--model", "openai/gpt-4o-mini", *BAD[bad])
    assert r.exit_code == 2, r.output
    assert "Invalid value" in r.stderr and "Traceback" not in r.output


@pytest.mark.parametrize("model", ["", " ", "openai/ gpt", "nosuchprovider/some-model"])
@pytest.mark.parametrize("name", ["judge llm", "eval answers", "demo"])
def test_a_model_name_no_provider_serves_is_a_click_error(name, model, cli_run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli_run(*COMMANDS[name], "--model", model)
    assert r.exit_code == 2, r.output
    assert "Invalid value for '--model'" in r.stderr and "Traceback" not in r.output


@pytest.mark.parametrize("content", [b"\x00\x01\x02binary\xff\xfe", "Grade the passages.".encode("utf-16"),
                                     b"x" * 200_000])
def test_a_prompt_file_that_is_not_sane_text_is_refused_before_anything_runs(content, cli_run, tmp_path, bench,
                                                                             llm_server):
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(content)
    r = cli_run(*judge_args(bench, llm_server, "--prompt", prompt, "--dry-run"))
    assert r.exit_code == 2, r.output
    assert "Invalid value for '--prompt'" in r.stderr and "Traceback" not in r.output
    assert llm_server.requests == [] and rows(bench) == []


def test_a_dry_run_writes_nothing_to_the_workspace(bench, llm_server, cli_run):
    def counts():
        with sqlite3.connect(bench / "bench.sqlite") as conn:
            tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}

    before = counts()
    r = cli_run(*judge_args(bench, llm_server, "--dry-run", "--batch", "2"))
    assert r.exit_code == 0, r.output
    assert "dry run: 4 calls to the model" in r.stdout and "nothing was written" in r.stdout
    assert llm_server.requests == []
    assert counts() == before  # no judgment, no judge row, no logged call


def test_the_dry_run_and_pool_estimate_give_the_same_numbers(bench, llm_server, cli_run):
    from trecbench.pooling import estimate_cost
    from trecbench.store import Workspace
    from trecbench.store.workspace import load_pool

    r = cli_run(*judge_args(bench, llm_server, "--dry-run", "--batch", "2"))
    ws = Workspace(bench)
    stored = load_pool(ws)

    class StoredPool:  # what estimate_cost reads of a Pool
        def to_judge(self):
            return stored[stored["representative"]].reset_index(drop=True)

    estimate = estimate_cost(StoredPool(), ws.corpus(), list(ws.topics().values()), "openai/gpt-4o-mini", batch=2)
    total = estimate.table.loc["all"].astype("int64")
    expected = (f"dry run: {total['calls']} calls to the model (0 answered by the cache) for {total['judgments']} "
                f"judgments, {total['input_tokens']} input tokens, ~{total['output_tokens']} output tokens")
    assert expected in r.stdout


def test_the_estimate_counts_output_from_the_judges_earlier_replies(bench, llm_server, cli_run):
    long_reason = "a reason that goes on " * 20
    llm_server.script(lambda body: json.dumps([{"passage": "P1", "grade": 1, "reason": long_reason}]))
    assert cli_run(*judge_args(bench, llm_server, "--limit", "1")).exit_code == 0
    r = cli_run(*judge_args(bench, llm_server, "--dry-run"))
    out = int(r.stdout.split("~")[1].split()[0])
    assert out > 5 * 100  # five passages left, each with a reply of ~100 tokens as this judge wrote them
    fresh = cli_run(*judge_args(bench, llm_server, "--dry-run", "--batch", "5"))
    assert int(fresh.stdout.split("~")[1].split()[0]) < 6 * 40  # a new judge: counted from the reply format


def test_dollars_never_print_a_nonzero_cost_as_zero():
    from trecbench.llm.cost import dollars

    assert dollars(0.0000123) == "$0.0000123"
    assert dollars(0.00449) == "$0.00449"
    assert dollars(2.5) == "$2.50"
    assert dollars(0) == "$0.00"


def test_max_cost_zero_spends_nothing_and_exits_3(bench, llm_server, cli_run):
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, "--max-cost", "0"))
    assert r.exit_code == 3, r.output
    assert llm_server.requests == [] and [x for x in rows(bench) if x[3] == "ok"] == []


def test_a_limit_on_a_model_without_a_price_needs_prices(bench, llm_server, cli_run):
    llm_server.script(grader)
    args = ["judge", "llm", "-w", bench, "--model", "openai/my-local-model", "--api-base", llm_server.base_url,
            "--api-key", "test", "--quiet", "--max-cost", "1"]
    r = cli_run(*args)
    assert r.exit_code == 2, r.output
    assert "--input-price and --output-price" in r.stderr and llm_server.requests == []
    r = cli_run(*args, "--input-price", "0.1", "--output-price", "0.2")
    assert r.exit_code == 0, r.output
    assert "judged 6" in r.stdout


def test_a_budget_stop_with_failures_exits_3(bench, llm_server, cli_run):
    replies = iter([ok("not json at all", completion_tokens=1000)] * 3 + [ok(
        '[{"passage": "P1", "grade": 1, "reason": "r"}]', completion_tokens=1000)] * 10)
    llm_server.script(lambda body: next(replies))
    r = cli_run(*judge_args(bench, llm_server, "--max-cost", "0.0025", "--concurrency", "1"))
    assert r.exit_code == 3, r.output
    assert "failed" in r.stderr and "budget reached" in r.stderr


def test_judges_with_different_settings_have_different_names(bench, llm_server, cli_run):
    llm_server.script(grader)
    names = []
    for extra in ([], ["--batch", "3"], ["--samples", "3"], ["--temperature", "0.5"]):
        r = cli_run(*judge_args(bench, llm_server, "--limit", "1", *extra))
        assert r.exit_code == 0, r.output
        names.append(r.stderr.split("judge ", 1)[1].split(": ")[0])
    assert len(set(names)) == 4, names
    assert names[1].endswith(":batch=3") and names[2].endswith(":samples=3:temperature=0.7")
    assert {name for *_, name in rows(bench)} == set(names)


def test_qrels_export_accepts_the_judge_names_the_report_and_judge_llm_show(bench, llm_server, cli_run, tmp_path):
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, "--batch", "2"))
    name = r.stderr.split("judge ", 1)[1].split(": ")[0]
    for given in (name, f"{name} (model)"):
        out = tmp_path / "qrels.txt"
        e = cli_run("qrels", "export", "-w", bench, "-o", out, "--judge", given)
        assert e.exit_code == 0, e.output
        assert len(out.read_text().splitlines()) == 6


def test_context_recall_with_incomplete_topics_exits_1(llm_server, cli_run, tmp_path):
    contexts = tmp_path / "c.jsonl"
    contexts.write_text(json.dumps({"qid": "q1", "contexts": ["Paris is the capital of France."]}) + "\n"
                        + json.dumps({"qid": "q2", "contexts": ["Nothing useful."]}) + "\n")
    refs = tmp_path / "r.jsonl"
    refs.write_text(json.dumps({"qid": "q1", "reference": "Paris is France's capital."}) + "\n"
                    + json.dumps({"qid": "q2", "reference": "Something."}) + "\n")
    claims = {"claims": [{"claim": "Paris is the capital of France.", "attributed": True, "passages": [1],
                          "reason": "passage 1"}]}
    llm_server.script(lambda body: "no idea" if "Something." in json.dumps(body) else json.dumps(claims))
    r = cli_run("eval", "context-recall", "--mode", "llm", "--model", "openai/judge", "--api-base",
                llm_server.base_url, "--api-key", "test", "--contexts", contexts, "--references", refs,
                "--cache", tmp_path / "cache.sqlite")
    assert r.exit_code == 1, r.output
    assert "incomplete" in r.stderr


def test_judge_pool_and_draft_nuggets_are_the_library_behind_the_commands(bench, llm_server):
    import trecbench
    from trecbench.llm import ModelConfig

    llm_server.script(grader)
    config = ModelConfig("openai/gpt-4o-mini", api_base=llm_server.base_url, api_key="test")
    run = trecbench.judge_pool(trecbench.Workspace(bench), config, batch=3)
    assert run.report.judged == 6 and run.plan.calls == 2 and run.judge.name.endswith(":batch=3")
    again = trecbench.judge_pool(trecbench.Workspace(bench), config, batch=3, dry_run=True)
    assert again.plan.total == 0 and again.plan.skipped == 6
    drafted = trecbench.draft_nuggets(trecbench.Workspace(bench), None, min_grade=1)
    assert drafted.drafter == "extractive" and sorted(drafted.report.complete) == ["t1", "t2"]
