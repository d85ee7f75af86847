"""LLM context recall against a loopback server: claims with supporting contexts, failures, retries, cache."""
from __future__ import annotations

import json
import math
from pathlib import Path

from llm_server import garbled, ok, status

from trecbench.evaluation.evidence.context_recall import (
    Context,
    ContextSet,
    LLMRecallJudge,
    Reference,
    evaluate_context_recall,
)

CONTEXTS = ContextSet("sys", {"q1": (Context("d7", "Paris is the capital of France."),
                                     Context("d9", "The Louvre is a museum.")),
                              "q2": (Context("d1", "Nothing useful."),)})
REFS = {"q1": Reference("q1", answer="Paris is France's capital. It has the Eiffel Tower.", question="About Paris?"),
        "q2": Reference("q2", answer="Something.")}
CLAIMS = {"claims": [
    {"claim": "Paris is the capital of France.", "attributed": True, "passages": [1], "reason": "passage 1 says so"},
    {"claim": "Paris has the Eiffel Tower.", "attributed": False, "passages": [], "reason": "not mentioned"}]}


def judge(server, tmp_path: Path) -> LLMRecallJudge:
    from trecbench.llm import ModelConfig

    config = ModelConfig("openai/judge", api_base=server.base_url, api_key="test", backoff=0.01, max_backoff=0.05)
    return LLMRecallJudge(config, cache=tmp_path / "cache.sqlite")


def by_topic(body: dict):
    content = body["messages"][-1]["content"]
    if "Something." in content:
        return json.dumps({"claims": [{"claim": "Something", "attributed": False, "passages": [], "reason": "-"}]})
    return json.dumps(CLAIMS)


def test_llm_context_recall_is_attributed_claims_over_claims_with_context_ids_and_reasons(llm_server, tmp_path):
    llm_server.script(by_topic)
    result = evaluate_context_recall(CONTEXTS, REFS, mode="llm", judge=judge(llm_server, tmp_path))
    assert result.frame.loc[("sys", "q1"), "LLMContextRecall"] == 0.5
    assert result.frame.loc[("sys", "q2"), "LLMContextRecall"] == 0.0
    assert result.details[("sys", "q1")][0] == {"claim": "Paris is the capital of France.", "attributed": True,
                                                "context_ids": ("d7",), "reason": "passage 1 says so"}
    prompt = next(r["messages"][-1]["content"] for r in llm_server.requests if "Eiffel" in r["messages"][-1]["content"])
    assert "About Paris?" in prompt and "[2] The Louvre is a museum." in prompt


def test_scale_multiplies_the_score(llm_server, tmp_path):
    llm_server.script(by_topic)
    result = evaluate_context_recall(CONTEXTS, REFS, mode="llm", judge=judge(llm_server, tmp_path), scale=10)
    assert result.frame.loc[("sys", "q1"), "LLMContextRecall"] == 5.0


def test_a_garbled_reply_leaves_the_topic_without_a_score_and_reports_it(llm_server, tmp_path):
    def reply(body):
        return garbled() if "Something." in body["messages"][1]["content"] else json.dumps(CLAIMS)

    llm_server.script(reply)
    result = evaluate_context_recall(CONTEXTS, REFS, mode="llm", judge=judge(llm_server, tmp_path))
    assert math.isnan(result.frame.loc[("sys", "q2"), "LLMContextRecall"])
    assert result.incomplete[0][:2] == ("sys", "q2")
    assert result.reasons[("sys", "q2")].startswith("incomplete: unreadable reply after 3 tries")
    assert result.frame.loc[("sys", "all"), "LLMContextRecall"] == 0.5


def test_a_reply_citing_a_passage_that_does_not_exist_is_asked_again(llm_server, tmp_path):
    bad = {"claims": [{"claim": "x", "attributed": True, "passages": [7], "reason": "-"}]}
    llm_server.script(ok(json.dumps(bad)), ok(json.dumps(CLAIMS)))
    one = ContextSet("sys", {"q1": CONTEXTS.contexts["q1"]})
    result = evaluate_context_recall(one, {"q1": REFS["q1"]}, mode="llm", judge=judge(llm_server, tmp_path))
    assert result.frame.loc[("sys", "q1"), "LLMContextRecall"] == 0.5
    assert "passage numbers from 1 to 2" in llm_server.messages(1)[-1]["content"]


def test_rate_limits_are_retried_and_a_rerun_makes_no_calls(llm_server, tmp_path):
    llm_server.script(status(429, retry_after=0), then=json.dumps(CLAIMS))
    one = ContextSet("sys", {"q1": CONTEXTS.contexts["q1"]})
    first = evaluate_context_recall(one, {"q1": REFS["q1"]}, mode="llm", judge=judge(llm_server, tmp_path))
    assert len(llm_server.requests) == 2
    llm_server.reset()
    again = evaluate_context_recall(one, {"q1": REFS["q1"]}, mode="llm", judge=judge(llm_server, tmp_path))
    assert llm_server.requests == []
    assert again.frame.equals(first.frame)


def test_eval_context_recall_command_in_llm_mode(llm_server, tmp_path, cli_run, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    contexts = tmp_path / "ctx.jsonl"
    contexts.write_text(json.dumps({"qid": "q1", "contexts": [{"id": "d7", "text": "Paris is the capital of France."},
                                                              {"id": "d9", "text": "The Louvre."}]}) + "\n")
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"qid": "q1", "reference": "Paris is France's capital. It has the Eiffel Tower."}) + "\n"
                    + json.dumps({"qid": "q3", "reference_ids": ["d1"]}) + "\n")
    llm_server.script(by_topic)
    result = cli_run("eval", "context-recall", "--mode", "llm", "--model", "openai/judge", "--api-base",
                     llm_server.base_url, "--cache", tmp_path / "cache.sqlite", "--contexts", contexts,
                     "--references", refs, "--format", "json", "-q")
    assert result.exit_code == 0, result.output
    [doc] = json.loads(result.stdout)
    assert doc["topics"] == {"q1": {"LLMContextRecall": 0.5}, "q3": {"LLMContextRecall": None}}
    assert doc["details"]["q1"][0]["context_ids"] == ["d7"]
    assert "1 topic(s), no score: no reference answer for this topic: q3" in result.stderr
