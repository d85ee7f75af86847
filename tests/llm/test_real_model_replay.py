"""A real model's replies, recorded by `scripts/real-model-check --record`, replayed through the loopback server.

Each model command of the check runs again on the same workspace, and each request is answered with the
reply the real model gave to the same messages (or, when a prompt has changed since the recording, the
next unused reply of that command, so the parser still meets real outputs). Whatever the replies, no
command crashes, exit statuses follow the rule, and no grade comes from a reply cut by length or from a
prompt's format example.
"""
from __future__ import annotations

from paths import ROOT

import importlib.machinery
import importlib.util
import json

import pytest
from llm_server import Behaviour

FIXTURES = ROOT / "tests" / "fixtures" / "real-model"


def real_model_check():
    """The check script as a module (its workspace set-up, commands and audit are what is replayed)."""
    path = ROOT / "scripts" / "real-model-check"
    loader = importlib.machinery.SourceFileLoader("real_model_check", str(path))
    spec = importlib.util.spec_from_loader("real_model_check", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def recorded(name: str) -> list[dict]:
    path = FIXTURES / f"{name.replace(' ', '-')}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _key(messages: list[dict]) -> str:
    return json.dumps(messages, sort_keys=True, ensure_ascii=False)


class Replay:
    """Answers a request with the recorded reply to the same messages, else the next unused one."""

    def __init__(self, fixtures: list[dict]):
        self.fixtures = fixtures
        self.unused = list(range(len(fixtures)))
        self.exact = 0
        self.by_messages: dict[str, list[int]] = {}
        for i, f in enumerate(fixtures):
            self.by_messages.setdefault(_key(f["messages"]), []).append(i)

    def __call__(self, body: dict) -> Behaviour:
        same = self.by_messages.get(_key(body["messages"]), [])
        fresh = [i for i in same if i in self.unused]
        if fresh or same:
            self.exact += 1
            i = (fresh or same)[0]
        elif self.unused:
            i = self.unused[0]
        else:
            return Behaviour(code=500, text="no recorded reply left")
        if i in self.unused:
            self.unused.remove(i)
        f = self.fixtures[i]
        if f["status"] != 200 or f["reply"] is None:
            return Behaviour(code=500, text="the recorded request failed")
        usage = f.get("usage") or {}
        return Behaviour(text=f["reply"], finish_reason=f["finish_reason"] or "stop",
                         prompt_tokens=usage.get("prompt_tokens"), completion_tokens=usage.get("completion_tokens"))


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="no recorded replies (run scripts/real-model-check --record)")
def test_recorded_real_replies_replayed_never_become_grades_from_cut_or_example_replies(tmp_path, llm_server, cli_run,
                                                                                       monkeypatch):
    check = real_model_check()
    monkeypatch.chdir(tmp_path)
    ws = tmp_path / "bench"
    for setup in check.setup_commands(ws):
        assert cli_run(*setup).exit_code == 0
    model = ["--model", check.MODEL, "--api-base", llm_server.base_url, "--api-key", "local", "--concurrency", "1",
             "--max-retries", "0"]
    every: list[dict] = []
    exact = 0
    # the settings of the recording (tests/fixtures/real-model/README.md)
    for name, cmd, allowed in check.model_commands(ws, tmp_path, model, 10, demo=False, topics=2):
        fixtures = recorded(name)
        every += fixtures
        replay = Replay(fixtures)
        llm_server.script(replay)
        r = cli_run(*cmd)
        assert r.exit_code in allowed, (name, r.output)
        exact += replay.exact
    assert every, "the fixtures hold no request"
    audit = check.grade_audit(ws / "bench.sqlite", every)
    assert audit["from_truncated"] == 0 and audit["from_example"] == 0, audit
    assert audit["grades"] + audit["failed"] > 0
