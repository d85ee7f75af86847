"""The LLM assigner against a loopback OpenAI-compatible server: labels, batches, failures, retries, cache."""
from __future__ import annotations

from cli_support import write_jsonl as write

import json
import re

from llm_server import garbled, ok, status

from trecbench.answers import Answer, AnswerSentence
from trecbench.evaluation.answers.scoring import evaluate_answers
from trecbench.evaluation.answers.assign.llm import LLMAssigner
from trecbench.nuggets import Nugget, TopicNuggets


def config(server):
    from trecbench.llm import ModelConfig

    return ModelConfig("openai/judge", api_base=server.base_url, api_key="test", backoff=0.01, max_backoff=0.05)


def topic(qid: str, n: int) -> TopicNuggets:
    return TopicNuggets(qid, tuple(Nugget(f"{qid}-{i}", qid, f"fact {i} of {qid}", "vital" if i % 2 else "okay")
                                   for i in range(1, n + 1)), f"question {qid}")


def answer(qid: str, run: str = "run") -> Answer:
    return Answer(run, qid, (AnswerSentence(f"An answer about {qid}."),))


def all_supported(body: dict) -> str:
    n = int(re.search(r"holding exactly (\d+) labels", body["messages"][-1]["content"]).group(1))
    return json.dumps({"labels": ["support"] * (n - 1) + ["partial_support"]})


def test_llm_assigner_labels_nuggets_in_batches_of_ten(llm_server, tmp_path):
    llm_server.script(all_supported)
    assigner = LLMAssigner(config(llm_server), cache=tmp_path / "cache.sqlite")
    [result] = assigner.assign([(answer("q1"), topic("q1", 12))])
    assert len(llm_server.requests) == 2  # 10 nuggets, then 2
    assert [a.label for a in result.assignments] == ["support"] * 9 + ["partial_support", "support",
                                                                       "partial_support"]
    assert result.complete and result.error == ""
    prompt = next(r["messages"][-1]["content"] for r in llm_server.requests if "exactly 10 labels" in
                  r["messages"][-1]["content"])  # the two batches are asked at the same time
    assert "question q1" in prompt and "An answer about q1." in prompt and "10. fact 10 of q1" in prompt
    assigner.close()


def test_a_garbled_batch_marks_the_topic_incomplete_and_it_is_not_scored(llm_server, tmp_path):
    def reply(body: dict):
        if "fact 1 of q2" in body["messages"][1]["content"]:
            return garbled()
        return all_supported(body)

    llm_server.script(reply)
    scores, made = evaluate_answers([topic("q1", 3), topic("q2", 3)], [answer("q1"), answer("q2")], assigner="llm",
                                    model=config(llm_server), cache=tmp_path / "cache.sqlite")
    q2 = next(t for t in made if t.qid == "q2")
    assert not q2.complete and "unreadable reply after 3 tries" in q2.error
    assert [a.label for a in q2.assignments] == [None, None, None]  # never "not_support"
    assert scores.incomplete == [("run", "q2", q2.error)]
    assert ("run", "q2") not in scores.frame.index
    assert scores.frame.loc[("run", "all"), "V_strict"] == 0.5  # q1 only: vital nuggets 1 (support), 3 (partial)


def test_a_rate_limited_call_is_retried(llm_server, tmp_path):
    llm_server.script(status(429, retry_after=0), ok('{"labels": ["support", "not_support"]}'))
    assigner = LLMAssigner(config(llm_server), cache=tmp_path / "cache.sqlite")
    [result] = assigner.assign([(answer("q1"), topic("q1", 2))])
    assert [a.label for a in result.assignments] == ["support", "not_support"]
    assert len(llm_server.requests) == 2
    assigner.close()


def test_a_second_run_is_answered_from_the_cache_with_no_calls(llm_server, tmp_path):
    llm_server.script(all_supported)
    cache = tmp_path / "cache.sqlite"
    first, _ = evaluate_answers([topic("q1", 4)], [answer("q1")], assigner="llm", model=config(llm_server),
                                cache=cache)
    calls = len(llm_server.requests)
    assert calls == 1
    llm_server.reset()
    again, _ = evaluate_answers([topic("q1", 4)], [answer("q1")], assigner="llm", model=config(llm_server),
                                cache=cache)
    assert llm_server.requests == []
    assert again.frame.equals(first.frame)



def test_eval_answers_command_with_the_llm_assigner_reports_incomplete_topics(llm_server, tmp_path, cli_run,
                                                                              monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    nuggets = write(tmp_path, [{"qid": "q1", "query": "what?", "nuggets": [{"text": "a", "importance": "vital"}]},
                               {"qid": "q2", "query": "why?", "nuggets": [{"text": "b", "importance": "vital"}]}],
                    "nuggets.jsonl")
    answers = write(tmp_path, [{"run_id": "r", "topic_id": q, "topic": t, "references": [], "response_length": 1,
                                "answer": [{"text": "x", "citations": []}]} for q, t in (("q1", "what?"), ("q2", "why?"))],
                    "r.jsonl")

    def reply(body: dict):
        return garbled() if "why?" in body["messages"][1]["content"] else '{"labels": ["support"]}'

    llm_server.script(reply)
    cache = tmp_path / "cache.sqlite"
    args = ["eval", "answers", "--nuggets", nuggets, answers, "--assigner", "llm", "--model", "openai/judge",
            "--api-base", llm_server.base_url, "--cache", cache, "-q"]
    result = cli_run(*args)
    assert result.exit_code == 1, result.output  # scores of the complete topics, and a failing status
    assert result.stdout.splitlines()[1].split()[:3] == ["r", "q1", "1.0000"]
    assert "r: topic q2 is incomplete and not scored: batch from nugget q2-1: unreadable reply" in result.stderr
    calls = len(llm_server.requests)
    again = cli_run(*args)
    assert again.stdout == result.stdout
    assert len(llm_server.requests) == calls + 3  # only the failed batch is asked again (and fails again)


def test_a_model_that_cannot_be_reached_ends_the_command_with_its_message(llm_server, tmp_path, cli_run,
                                                                          monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    nuggets = write(tmp_path, [{"qid": "q1", "nuggets": [{"text": "a"}]}], "nuggets.jsonl")
    answers = write(tmp_path, [{"run_id": "r", "topic_id": "q1", "topic": "t", "references": [],
                                "answer": [{"text": "x", "citations": []}]}], "r.jsonl")
    llm_server.script(status(401, message="bad key"))
    result = cli_run("eval", "answers", "--nuggets", nuggets, answers, "--assigner", "llm", "--model", "openai/judge",
                     "--api-base", llm_server.base_url, "--cache", tmp_path / "c.sqlite")
    assert result.exit_code == 2  # a server that refuses the key: bad input
    assert "HTTP 401" in result.stderr and "Traceback" not in result.stderr
