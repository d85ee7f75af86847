"""`trecbench demo --model`: the shared model options, failures listed (never a traceback), Ctrl-C, labels."""
from __future__ import annotations

import json
import re


def test_a_model_without_one_usable_judgment_ends_the_demo_with_the_failures_listed(tmp_path, llm_server, cli_run):
    llm_server.script(lambda body: "I would rather not say.")
    r = cli_run("demo", "--dir", tmp_path / "demo", "--model", "openai/gpt-4o-mini", "--api-base",
                llm_server.base_url, "--api-key", "test", "--quiet", "--concurrency", "4", "--max-retries", "0")
    assert r.exit_code == 1, r.output
    assert "gave no usable judgment" in r.stderr and "model failure(s), recorded as failures" in r.stderr
    assert "Traceback" not in r.output and "ValueError" not in r.output
    assert llm_server.max_in_flight <= 4  # --concurrency reaches the demo's calls


def test_the_agreement_line_names_the_model_it_compares(tmp_path, llm_server, cli_run):
    def grades(body):  # grades every passage 1, drafts one nugget per window, labels and assigns them all
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if "assessing search results" in system:
            return json.dumps([{"passage": f"P{x}", "grade": 1, "reason": "r"} for x in re.findall(r"\[P(\d+)\]", user)])
        if "how important each nugget" in system:
            return json.dumps([{"nugget": f"N{k}", "importance": "vital"} for k in re.findall(r"^N(\d+): ", user, re.M)])
        m = re.search(r"holding exactly (\d+) labels", user)
        if m:
            return json.dumps({"labels": ["support"] * int(m.group(1))})
        earlier = [{"from": [f"N{k}"], "text": t, "support": []} for k, t in re.findall(r"^N(\d+): (.*)$", user, re.M)]
        return json.dumps({"nuggets": earlier or [{"from": [], "text": "a fact", "support": ["P1"]}]})

    llm_server.script(grades)
    r = cli_run("demo", "--dir", tmp_path / "demo", "--model", "openai/gpt-4o-mini", "--api-base",
                llm_server.base_url, "--api-key", "test", "--quiet", "--max-retries", "0")
    line = next(x for x in r.stdout.splitlines() if x.startswith("Judge agreement"))
    assert re.match(r"Judge agreement \(openai/gpt-4o-mini:graded-0-3@[0-9a-f]{8}:batch=5 vs assessor-2\)", line), line
    assert "assessor-1" not in line


def test_the_offline_agreement_line_still_compares_the_two_assessors(tmp_path, cli_run):
    r = cli_run("demo", "--dir", tmp_path / "demo", "--quiet")
    assert r.exit_code == 0, r.output
    assert "Judge agreement (assessor-1 vs assessor-2)" in r.stdout


def test_ctrl_c_in_the_demo_exits_130_with_one_line(tmp_path, cli_run, monkeypatch):
    import trecbench.demo

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(trecbench.demo, "run_demo", interrupted)
    r = cli_run("demo", "--dir", tmp_path / "demo", "--quiet")
    assert r.exit_code == 130
    assert [line for line in r.stderr.splitlines() if line.strip()] == [
        "interrupted: the demo folder is incomplete; run `trecbench demo` again to rebuild it"]
    assert "Aborted" not in r.output
