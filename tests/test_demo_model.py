"""`trecbench demo --model`: the shared model options, failures listed (never a traceback), Ctrl-C. The agreement
line's labels, offline and with a model, are checked in test_demo.py on the demos it runs anyway."""
from __future__ import annotations


def test_a_model_without_one_usable_judgment_ends_the_demo_with_the_failures_listed(tmp_path, llm_server, cli_run):
    llm_server.script(lambda body: "I would rather not say.")
    r = cli_run("demo", "--dir", tmp_path / "demo", "--model", "openai/gpt-4o-mini", "--api-base",
                llm_server.base_url, "--api-key", "test", "--quiet", "--concurrency", "4", "--max-retries", "0")
    assert r.exit_code == 1, r.output
    assert "gave no usable judgment" in r.stderr and "model failure(s), recorded as failures" in r.stderr
    assert "Traceback" not in r.output and "ValueError" not in r.output
    assert llm_server.max_in_flight <= 4  # --concurrency reaches the demo's calls


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
