"""A model no call can reach (nothing listens, an unknown host, no API key) stops every model command at once:
one line naming the cause and what to set, exit 2, and no failure row for a pair that was never asked."""
from __future__ import annotations

import json
import sqlite3

import pytest
from judge_bench import make_judge_bench
from llm_server import status

DEAD = "http://127.0.0.1:9/v1"  # the discard port: nothing listens on it
UNKNOWN = "http://no-such-model-server.invalid/v1"  # `.invalid` never resolves (RFC 2606)


def failure_rows(database) -> tuple[int, int]:
    """(judgments recorded as failed, failed model calls logged) in a workspace database or a cache."""
    with sqlite3.connect(database) as conn:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        judged = conn.execute("SELECT COUNT(*) FROM judgments WHERE status = 'failed'").fetchone()[0] \
            if "judgments" in tables else 0
        calls = conn.execute("SELECT COUNT(*) FROM llm_calls WHERE ok = 0").fetchone()[0] if "llm_calls" in tables else 0
    return judged, calls


def error_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("Error:")]


def missing_credentials(server):
    server.script(then=status(401, message="Missing credentials. Please pass an `api_key`."))
    return server.base_url


@pytest.mark.parametrize("where,said", [
    ("dead", "nothing listens at http://127.0.0.1:9/v1 (connection refused)"),
    ("unknown", "no-such-model-server.invalid does not resolve (unknown host); check --api-base"),
    ("no key", "no API key reached the server: set OPENAI_API_KEY"),
])
def test_judging_with_a_model_nobody_can_reach_stops_with_one_line_and_exit_2(tmp_path, llm_server, cli_run,
                                                                               where, said):
    bench = make_judge_bench(tmp_path, cli_run)
    base = {"dead": DEAD, "unknown": UNKNOWN}.get(where) or missing_credentials(llm_server)
    r = cli_run("judge", "llm", "-w", bench, "--model", "openai/gpt-4o-mini", "--api-base", base, "--api-key", "k",
                "--quiet", "--max-retries", "4")
    assert r.exit_code == 2, r.output
    assert len(error_lines(r)) == 1 and said in error_lines(r)[0], r.stderr
    assert "Traceback" not in r.output and "judgment(s) failed" not in r.stderr
    judged, calls = failure_rows(bench / "bench.sqlite")
    assert judged == 0
    assert calls == (0 if where != "no key" else len(llm_server.requests))  # only a call a server answered


def test_a_dead_server_among_live_ones_does_not_stop_the_run(tmp_path, llm_server, cli_run):
    from judge_bench import grader, rows

    bench = make_judge_bench(tmp_path, cli_run)
    llm_server.script(grader)
    r = cli_run("judge", "llm", "-w", bench, "--model", "openai/gpt-4o-mini", "--api-base", DEAD, "--api-base",
                llm_server.base_url, "--api-key", "k", "--quiet", "--concurrency", "6")
    assert r.exit_code == 0, r.output
    assert [status for *_, status, _ in rows(bench)] == ["ok"] * 6


def test_every_deployment_down_stops_the_run_naming_them(tmp_path, cli_run):
    bench = make_judge_bench(tmp_path, cli_run)
    r = cli_run("judge", "llm", "-w", bench, "--model", "openai/gpt-4o-mini", "--api-base", DEAD, "--api-base",
                "http://127.0.0.1:7/v1", "--api-key", "k", "--quiet")
    assert r.exit_code == 2, r.output
    assert "nothing listens at http://127.0.0.1:9/v1, http://127.0.0.1:7/v1" in error_lines(r)[0]
    assert failure_rows(bench / "bench.sqlite") == (0, 0)


def test_drafting_nuggets_with_a_dead_server_stops_with_one_line_and_logs_no_failed_call(tmp_path, cli_run):
    from nugget_bench import MODEL, make_bench, stored

    bench = make_bench(tmp_path)
    r = cli_run("nuggets", "draft", "-w", bench, "--model", MODEL, "--api-base", DEAD, "--api-key", "k", "--quiet")
    assert r.exit_code == 2, r.output
    assert len(error_lines(r)) == 1 and "connection refused" in error_lines(r)[0]
    assert stored(bench, "t1") == []
    assert failure_rows(bench / "bench.sqlite") == (0, 0)


def _answers_files(tmp_path):
    nuggets = tmp_path / "nuggets.jsonl"
    nuggets.write_text(json.dumps({"qid": "q1", "nuggets": [{"text": "a"}]}) + "\n")
    answers = tmp_path / "r.jsonl"
    answers.write_text(json.dumps({"run_id": "r", "topic_id": "q1", "topic": "t", "references": [],
                                   "answer": [{"text": "x", "citations": []}]}) + "\n")
    return nuggets, answers


@pytest.mark.parametrize("where", ["dead", "unknown"])
def test_scoring_answers_with_an_unreachable_assigner_stops_with_one_line(tmp_path, cli_run, where):
    nuggets, answers = _answers_files(tmp_path)
    base = DEAD if where == "dead" else UNKNOWN
    r = cli_run("eval", "answers", "--nuggets", nuggets, answers, "--assigner", "llm", "--model", "openai/judge",
                "--api-base", base, "--api-key", "k", "--cache", tmp_path / "c.sqlite", "-q")
    assert r.exit_code == 2, r.output
    assert len(error_lines(r)) == 1 and ("connection refused" if where == "dead" else "unknown host") in r.stderr
    assert r.stdout == "" and "incomplete" not in r.stderr
    assert failure_rows(tmp_path / "c.sqlite") == (0, 0)


def test_context_recall_with_a_dead_server_stops_with_one_line(tmp_path, cli_run):
    contexts = tmp_path / "ctx.jsonl"
    contexts.write_text(json.dumps({"qid": "q1", "contexts": [{"id": "d7", "text": "Paris is the capital."}]}) + "\n")
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"qid": "q1", "reference": "Paris is France's capital."}) + "\n")
    r = cli_run("eval", "context-recall", "--mode", "llm", "--model", "openai/judge", "--api-base", DEAD,
                "--api-key", "k", "--cache", tmp_path / "c.sqlite", "--contexts", contexts, "--references", refs, "-q")
    assert r.exit_code == 2, r.output
    assert len(error_lines(r)) == 1 and "connection refused" in r.stderr
    assert r.stdout == ""
    assert failure_rows(tmp_path / "c.sqlite") == (0, 0)


@pytest.mark.parametrize("where", ["dead", "no key"])
def test_the_demo_with_a_model_nobody_can_reach_stops_with_one_line_and_exit_2(tmp_path, llm_server, cli_run,
                                                                                where):
    base = DEAD if where == "dead" else missing_credentials(llm_server)
    r = cli_run("demo", "--dir", tmp_path / "demo", "--model", "openai/gpt-4o-mini", "--api-base", base,
                "--quiet")
    assert r.exit_code == 2, r.output
    assert len(error_lines(r)) == 1, r.stderr
    assert ("connection refused" if where == "dead" else "set OPENAI_API_KEY") in error_lines(r)[0]
    assert "recorded as failures" not in r.stderr
    assert failure_rows(tmp_path / "demo" / "bench" / "bench.sqlite")[0] == 0


def test_a_missing_key_that_litellm_reports_as_a_500_is_not_retried(llm_server, monkeypatch):
    from trecbench.llm import LLM, ModelCallError, ModelConfig

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = LLM(ModelConfig("openai/m", api_base=llm_server.base_url, transport="litellm", max_retries=4))
    with pytest.raises(ModelCallError, match="set OPENAI_API_KEY") as caught:
        llm.run(llm.ask("q"))
    assert caught.value.fatal and caught.value.attempts == 1 and llm_server.requests == []
