"""Model replies as real servers send them, through every model task: reasoning, drafts before the final
answer, echoed format examples, replies cut by length, structured output, batches with a passage missing,
and server errors (refused keys, unknown models, broken 200s, no credit left)."""
from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys

import pytest
from llm_server import Behaviour, garbled, ok, out_of_quota, raw_body, reasoning, status
from judge_bench import grader, judge_args, make_judge_bench, rows

from trecbench.llm import ParseError
from trecbench.llm.parse import final_answer, json_values
from trecbench.llm.prompts import RELEVANCE, TASKS
from trecbench.nuggets.prompts import parse_labels, parse_update
from trecbench.judging.prompts import parse_grades


@pytest.fixture
def bench(tmp_path, cli_run):
    return make_judge_bench(tmp_path, cli_run)


def grades(*pairs, wrap=True) -> str:
    items = [{"passage": f"P{p}", "grade": g, "reason": "r"} for p, g in pairs]
    return json.dumps({"grades": items} if wrap else items)


# -- the one reader ---------------------------------------------------------------------------------

@pytest.mark.parametrize("reply", [
    "<think>First guess: " + grades((1, 0)) + " -- no, it states the answer.</think>\n" + grades((1, 3)),
    "Draft:\n" + grades((1, 1)) + "\nOn reflection the passage states it exactly. Final:\n" + grades((1, 3)),
    'The format is {"grades": [{"passage": "<passage label, e.g. P1>", "grade": <0, 1, 2 or 3>, "reason": "<why>"}]}'
    "\n```json\n" + grades((1, 3)) + "\n```",
    '{"grades": [{"passage": "P1", "grade": 0, "reason": "<why, in a few words>"}]}\n' + grades((1, 3)),
    "</think>" + grades((1, 3)),  # a server that sent the opening tag elsewhere
])
def test_the_final_answer_is_used_never_a_draft_or_an_example(reply):
    assert parse_grades(reply, 1) == [(3, "r")]


@pytest.mark.parametrize("reply,reason", [
    ("<think>" + grades((1, 3)) + " is what I will say", "reasoning only"),
    ('{"grades": [{"passage": "P1", "grade": 2, "reason": "<why, in a few words>"}]}', "format example"),
    (RELEVANCE.reply_format, "format example|no JSON"),
    (grades((1, 2), (1, 0)), "two different grades"),
])
def test_no_grade_is_taken_from_reasoning_an_echoed_example_or_a_contradiction(reply, reason):
    with pytest.raises(ParseError, match=reason):
        parse_grades(reply, 1)


def test_a_passage_graded_twice_alike_is_one_grade():
    assert parse_grades(grades((1, 2), (1, 2), (2, 0)), 2) == [(2, "r"), (0, "r")]


def test_a_fragment_inside_a_broken_value_is_never_an_answer():
    broken = '{"nuggets": [{"from": ["N2"] "text": "the rollback window", "support": ["P1"]}]}'
    assert json_values(broken) == ([], False)
    with pytest.raises(ParseError):
        parse_update(broken, 2, 1, 30)  # once, the inner ["N2"] became a nugget called "N2"
    assert parse_labels(broken + ' {"labels": [{"nugget": "N1", "importance": "okay"}]}', 1) == ["okay"]


def test_shape_is_checked_at_the_top_level_only():
    # a bare list of labels is not a nugget list, even though a nugget's "from" is a list of labels
    with pytest.raises(ParseError):
        parse_update('["N1", "N2"]', 2, 1, 30)
    assert final_answer('noise [1, 2] then {"a": 1}', lambda v: v if isinstance(v, dict) else
                        (_ for _ in ()).throw(ParseError("not an object"))) == {"a": 1}


def test_every_prompt_example_is_a_placeholder_not_an_answer():
    for task in TASKS.values():
        example = task.reply_format.replace("{{", "{").replace("}}", "}").replace("{n}", "3")
        values, _ = json_values(example)
        assert all(re.search(r'"<[^"]*>"', json.dumps(v)) for v in values), task.name
        assert task.schema["type"] == "object" and task.max_tokens(1) < task.max_tokens(10) <= 8192


# -- judging through the CLI --------------------------------------------------------------------------

def test_reasoning_content_and_think_blocks_are_ignored(bench, llm_server, cli_run):
    llm_server.script(reasoning("<think>" + grades((1, 0)) + "</think>" + grades((1, 3)), thoughts=grades((1, 1))))
    r = cli_run(*judge_args(bench, llm_server, "--limit", "1"))
    assert r.exit_code == 0, r.output
    assert [r[:4] for r in rows(bench)] == [("t1", "d1", 3, "ok")]


def test_a_reply_echoing_the_example_is_no_answer_and_is_asked_again(bench, llm_server, cli_run):
    echo = '{"grades": [{"passage": "P1", "grade": 2, "reason": "<why, in a few words>"}]}'
    llm_server.script(ok(echo), ok(echo), ok(echo))
    r = cli_run(*judge_args(bench, llm_server, "--limit", "1"))
    assert r.exit_code == 1 and "format example" in r.stderr
    assert [r[:4] for r in rows(bench)] == [("t1", "d1", None, "failed")]
    assert len(llm_server.requests) == 3


def test_two_grades_for_one_passage_are_asked_again_with_the_error_and_a_small_temperature(bench, llm_server,
                                                                                           cli_run):
    llm_server.script(ok(grades((1, 0), (1, 3))), ok(grades((1, 3))))
    r = cli_run(*judge_args(bench, llm_server, "--limit", "1"))
    assert r.exit_code == 0, r.output
    assert rows(bench)[0][:4] == ("t1", "d1", 3, "ok")
    first, second = llm_server.requests
    assert first["temperature"] == 0 and 0 < second["temperature"] <= 0.5
    assert "two different grades" in second["messages"][-1]["content"]


def test_every_request_is_bounded_and_asks_for_structured_output(bench, llm_server, cli_run):
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, "--batch", "3"))
    assert r.exit_code == 0, r.output
    for body in llm_server.requests:
        n = len(re.findall(r"\[P\d+\]", body["messages"][-1]["content"]))
        assert body["max_tokens"] == RELEVANCE.max_tokens(n)
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"] == RELEVANCE.schema


def test_a_server_refusing_both_schema_forms_is_asked_in_words_only(bench, llm_server, cli_run):
    refused = status(400, message="response_format json_schema is not supported")
    llm_server.script(refused, refused, then=grades((1, 3)))
    r = cli_run(*judge_args(bench, llm_server, "--limit", "2", "--concurrency", "1"))
    assert r.exit_code == 0, r.output
    assert [g for _, _, g, _, _ in rows(bench)] == [3, 3]
    assert llm_server.requests[0]["response_format"]["type"] == "json_schema"
    assert llm_server.requests[1]["response_format"]["type"] == "json_object"
    assert all("response_format" not in body for body in llm_server.requests[2:])
    assert len(llm_server.requests) == 4  # the two refused forms, then one per document


def test_a_server_taking_only_json_object_gets_the_schema_in_that_form(bench, llm_server, cli_run):
    # llama-cpp-python's server: HTTP 500 naming response_format for `json_schema`, takes `json_object` + schema
    refusal = status(500, message="1 validation error: ('body', 'response_format', 'type') Input should be "
                                  "'text' or 'json_object'")
    llm_server.script(lambda body: refusal if body["response_format"]["type"] == "json_schema" else ok(grades((1, 3))))
    r = cli_run(*judge_args(bench, llm_server, "--limit", "2", "--concurrency", "1"))
    assert r.exit_code == 0, r.output
    assert [g for _, _, g, _, _ in rows(bench)] == [3, 3]
    later = [body for body in llm_server.requests if body["response_format"]["type"] == "json_object"]
    assert len(later) == 2  # one per document, once the server refused the other form
    refused = [body for body in llm_server.requests if body["response_format"]["type"] == "json_schema"]
    assert len(refused) == 1  # a refusal of the form is not retried as if the server were failing
    assert all(body["response_format"]["schema"] == RELEVANCE.schema for body in later), later[0]["response_format"]


def test_a_reply_cut_by_length_is_asked_again_with_a_larger_bound_not_parsed(bench, llm_server, cli_run):
    # the cut reply happens to decode; it is still not an answer
    llm_server.script(Behaviour(text=grades((1, 0)), finish_reason="length"), ok(grades((1, 3))))
    r = cli_run(*judge_args(bench, llm_server, "--limit", "1"))
    assert r.exit_code == 0, r.output
    assert rows(bench)[0][:4] == ("t1", "d1", 3, "ok")
    first, second = llm_server.requests
    assert second["max_tokens"] == 2 * first["max_tokens"]
    assert "cut off" in second["messages"][-1]["content"]


def test_a_passage_missing_from_a_batch_keeps_the_others_and_only_it_is_asked_again(bench, llm_server, cli_run):
    llm_server.script(ok(grades((1, 3), (3, 1))), ok(grades((1, 0))))
    r = cli_run(*judge_args(bench, llm_server, "--batch", "3", "--limit", "3"))
    assert r.exit_code == 0, r.output
    assert [(d, g) for _, d, g, _, _ in rows(bench)] == [("d1", 3), ("d2", 0), ("d3", 1)]
    again = llm_server.requests[1]["messages"][-1]["content"]
    assert re.findall(r"\[P\d+\]", again) == ["[P1]"] and "cafeteria" in again


@pytest.mark.parametrize("code,words", [(401, "refused the API key"), (403, "no access to this model"),
                                        (404, "no such model at this server")])
def test_a_refused_key_or_unknown_model_is_one_line_exit_2_and_nothing_recorded(bench, llm_server, cli_run, code,
                                                                                words):
    llm_server.script(then=status(code))
    r = cli_run(*judge_args(bench, llm_server, "--concurrency", "1"))
    assert r.exit_code == 2
    assert words in r.stderr and "Traceback" not in r.output
    assert len([line for line in r.stderr.splitlines() if words in line]) == 1
    assert rows(bench) == []
    assert len(llm_server.requests) == 1


def test_out_of_quota_stops_the_run_at_the_first_one(bench, llm_server, cli_run):
    llm_server.script(then=out_of_quota())
    r = cli_run(*judge_args(bench, llm_server, "--concurrency", "1"))
    assert r.exit_code == 2 and "no credit left" in r.stderr and "Traceback" not in r.output
    assert len(llm_server.requests) == 1 and rows(bench) == []


def test_a_broken_200_body_is_retried_then_a_failure_and_the_run_goes_on(bench, llm_server, cli_run):
    def server(body):
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        if "cafeteria" in user:
            return raw_body("")  # every time for d2
        if "Rollback rules" in user and not getattr(server, "broke", False):
            server.broke = True
            return raw_body("<html>bad gateway</html>")  # once for d3
        return grader(body)

    llm_server.script(server)
    r = cli_run(*judge_args(bench, llm_server, "--max-retries", "2"))
    assert r.exit_code == 1
    got = {d: (g, s) for _, d, g, s, _ in rows(bench)}
    assert got["d2"] == (None, "failed") and got["d3"] == (1, "ok")
    assert sum(1 for s in got.values() if s[1] == "ok") == 5
    assert "t1\td2\t" in r.stderr and "Traceback" not in r.output


def test_a_resumed_run_replays_a_paid_unreadable_reply_instead_of_paying_again(bench, llm_server, cli_run):
    db = bench / "bench.sqlite"
    llm_server.script(garbled(), status(401))  # the re-ask is refused: the run stops after the first reply
    assert cli_run(*judge_args(bench, llm_server, "--limit", "1")).exit_code == 2
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0] == 1
        assert conn.execute("SELECT COUNT(*) FROM llm_calls WHERE raw IS NOT NULL").fetchone()[0] == 1
    llm_server.reset()
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, "--limit", "1"))
    assert r.exit_code == 0, r.output
    assert len(llm_server.requests) == 1  # only the re-ask: the garbled reply came from the cache
    assert llm_server.messages(0)[-2]["content"] == garbled().text


def test_a_judging_run_against_an_openai_compatible_server_never_imports_litellm(bench, llm_server):
    llm_server.script(lambda body: Behaviour(text=grader(body), usage=False))  # tokens counted by the client
    code = ("import sys\nfrom trecbench.cli import cli\n"
            "try:\n    cli(sys.argv[1:])\nexcept SystemExit as e:\n    status = e.code\n"
            "print('LITELLM', 'litellm' in sys.modules, status)\n")
    args = [str(a) for a in judge_args(bench, llm_server)]
    for _ in range(2):  # judging, then a run with nothing left to do
        p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
        assert "LITELLM False 0" in p.stdout, p.stdout + p.stderr
    assert len(llm_server.requests) == 6
    assert "0 documents to judge" in p.stderr


# -- the other tasks through their commands --------------------------------------------------------------

def test_a_fragment_of_a_broken_draft_reply_never_becomes_a_nugget(tmp_path, llm_server, cli_run):
    from nugget_bench import draft_args, labels, stored
    from nugget_bench import make_bench

    from trecbench.llm.prompts import DRAFTING, IMPORTANCE

    nuggets_bench = make_bench(tmp_path)
    broken = '{"nuggets": [{"from": ["N2"] "text": "Rollbacks start within 15 minutes", "support": ["P1"]}]}'
    final = {"nuggets": [{"from": [], "text": "Rollbacks start within 15 minutes", "support": ["P1"]}]}
    llm_server.script(ok(broken), ok("Draft: " + broken + "\nFixed:\n" + json.dumps(final)),
                      ok("<think>" + labels("okay") + "</think>" + labels("vital")))
    r = cli_run(*draft_args(nuggets_bench, llm_server, "--topic", "t1", "--window", "10"))
    assert r.exit_code == 0, r.output
    got = stored(nuggets_bench, "t1")
    assert [(n.text, n.importance) for n in got] == [("Rollbacks start within 15 minutes", "vital")]
    draft, _, label = llm_server.requests
    assert draft["max_tokens"] == DRAFTING.max_tokens(30) and label["max_tokens"] == IMPORTANCE.max_tokens(1)
    assert draft["response_format"]["json_schema"]["name"] == "drafting"
    assert label["response_format"]["json_schema"]["name"] == "importance"


def test_the_assigner_takes_the_final_answer_and_refuses_an_echoed_example(llm_server, tmp_path, cli_run,
                                                                            monkeypatch):
    from cli_support import write_jsonl as write

    from trecbench.llm.prompts import ASSIGNMENT

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    nuggets = write(tmp_path, [{"qid": q, "query": t, "nuggets": [{"text": "a", "importance": "vital"}]}
                               for q, t in (("q1", "what?"), ("q2", "why?"))], "nuggets.jsonl")
    answers = write(tmp_path, [{"run_id": "r", "topic_id": q, "topic": t, "references": [], "response_length": 1,
                                "answer": [{"text": "x", "citations": []}]} for q, t in (("q1", "what?"), ("q2", "why?"))],
                    "r.jsonl")

    def reply(body: dict):
        if "why?" in body["messages"][1]["content"]:
            return '{"labels": ["<support, partial_support or not_support>"]}'
        return '<think>{"labels": ["not_support"]}</think> Draft {"labels": ["partial_support"]}, final: ' \
               '{"labels": ["support"]}'

    llm_server.script(reply)
    result = cli_run("eval", "answers", "--nuggets", nuggets, answers, "--assigner", "llm", "--model", "openai/judge",
                     "--api-base", llm_server.base_url, "--cache", tmp_path / "cache.sqlite", "-q")
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[1].split()[:3] == ["r", "q1", "1.0000"]
    assert "topic q2 is incomplete" in result.stderr and "format example" in result.stderr
    assert all(b["max_tokens"] == ASSIGNMENT.max_tokens(1) for b in llm_server.requests)


def test_context_recall_claims_come_from_the_final_answer(llm_server, tmp_path, cli_run, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    contexts = tmp_path / "ctx.jsonl"
    contexts.write_text(json.dumps({"qid": "q1", "contexts": [{"id": "d7", "text": "Paris is the capital."}]}) + "\n")
    refs = tmp_path / "refs.jsonl"
    refs.write_text(json.dumps({"qid": "q1", "reference": "Paris is France's capital."}) + "\n")
    claim = {"claim": "Paris is the capital of France.", "attributed": True, "passages": [1], "reason": "p1"}
    draft = {"claims": [{**claim, "attributed": False, "passages": []}]}
    llm_server.script(ok("<think>" + json.dumps(draft) + "</think>" + json.dumps(draft) + " no, " +
                         json.dumps({"claims": [claim]})))
    result = cli_run("eval", "context-recall", "--mode", "llm", "--model", "openai/judge", "--api-base",
                     llm_server.base_url, "--cache", tmp_path / "cache.sqlite", "--contexts", contexts,
                     "--references", refs, "--format", "json", "-q")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["topics"] == {"q1": {"LLMContextRecall": 1.0}}
    assert llm_server.requests[0]["response_format"]["json_schema"]["name"] == "claims"


def test_a_refused_key_stops_drafting_with_one_line_and_exit_2(tmp_path, llm_server, cli_run):
    from nugget_bench import draft_args, stored
    from nugget_bench import make_bench

    nuggets_bench = make_bench(tmp_path)
    llm_server.script(then=status(401))
    r = cli_run(*draft_args(nuggets_bench, llm_server, "--concurrency", "1"))
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert [line for line in r.stderr.splitlines() if "refused the API key" in line] != []
    assert len(llm_server.requests) == 1 and stored(nuggets_bench, "t1") == []


@pytest.mark.parametrize("transport", ["openai", "litellm"])
def test_both_transports_retry_a_broken_200_and_stop_at_no_credit(llm_server, transport):
    import asyncio

    from trecbench.llm import LLM, ModelCallError, ModelConfig, json_object

    llm = LLM(ModelConfig("openai/m", api_base=llm_server.base_url, api_key="k", transport=transport,
                          backoff=0.01, max_backoff=0.02))
    llm_server.script(raw_body(""), raw_body("<html>bad gateway</html>"), ok('{"grade": 1}'))
    outcome = asyncio.run(llm.ask("q", parse=json_object("grade")))
    assert outcome.ok and outcome.value == {"grade": 1} and len(llm_server.requests) == 3
    llm_server.reset()
    llm_server.script(out_of_quota(), then=ok('{"grade": 1}'))
    with pytest.raises(ModelCallError, match="no credit left") as caught:
        asyncio.run(llm.ask("q2", parse=json_object("grade")))
    assert caught.value.fatal and len(llm_server.requests) == 1


@pytest.mark.parametrize("setting,sent", [("off", False), ("on", True), ("auto", True)])
def test_structured_output_can_be_declared_for_every_command(bench, llm_server, cli_run, monkeypatch, setting, sent):
    monkeypatch.setenv("TRECBENCH_STRUCTURED_OUTPUT", setting)
    llm_server.script(grader)
    r = cli_run(*judge_args(bench, llm_server, "--limit", "1"))
    assert r.exit_code == 0, r.output
    assert ("response_format" in llm_server.requests[0]) is sent


def test_a_bad_structured_output_setting_is_one_line_exit_2(bench, llm_server, cli_run, monkeypatch):
    monkeypatch.setenv("TRECBENCH_STRUCTURED_OUTPUT", "maybe")
    r = cli_run(*judge_args(bench, llm_server, "--limit", "1"))
    assert r.exit_code == 2 and "TRECBENCH_STRUCTURED_OUTPUT='maybe': use on, off or auto" in r.stderr
    assert llm_server.requests == []
