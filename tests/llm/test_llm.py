"""Model calls through trecbench.llm against a loopback OpenAI-compatible server: cache, retries, re-asks,
timeouts, concurrency, cost, budget and dry runs. Nothing leaves the machine (a socket guard checks)."""
from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
import time
import warnings

import pytest

from llm_server import LLMServer, garbled, hang, ok, slow, status, truncated
from trecbench.llm import (LLM, Budget, BudgetExceeded, LLMError, ModelCallError, ModelConfig, ResponseCache,
                           json_object)
from trecbench.llm._litellm import load

TRANSPORTS = ("openai", "litellm")  # the openai SDK straight to the server, and litellm.acompletion / Router
both = pytest.mark.parametrize("transport", TRANSPORTS)
GRADE = '{"grade": 2, "reason": "states the answer"}'
QUESTION = [{"role": "system", "content": "You grade passages."},
            {"role": "user", "content": "Query: q1. Passage: p1. Reply with JSON {grade, reason}."}]


@pytest.fixture(scope="module", autouse=True)
def _loopback_only():
    """Any connection to a non-loopback address fails the module (litellm must not phone home)."""
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo
    attempts: list = []

    def loopback(host) -> bool:
        return host is None or str(host).startswith("127.") or host in ("::1", "localhost")

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not loopback(address[0]):
            attempts.append(address)
            raise OSError(f"test guard: no network beyond loopback (tried {address})")
        return real_connect(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if not loopback(host):
            attempts.append(host)
            raise OSError(f"test guard: no name lookups beyond loopback (tried {host})")
        return real_getaddrinfo(host, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", connect)
        patch.setattr(socket, "getaddrinfo", getaddrinfo)
        yield attempts
    assert not attempts, f"something tried to reach the network: {attempts}"


@pytest.fixture(scope="module", autouse=True)
def _warm_litellm(_loopback_only):
    """Import litellm and make one call before any test times anything (first use costs seconds)."""
    with LLMServer() as server, warnings.catch_warnings():
        # pydantic notes litellm's `ReadOnly` TypedDict items as they are first used (noise, not ours)
        warnings.filterwarnings("ignore", message=".*`ReadOnly` qualifier", category=UserWarning)
        server.script(then=ok(GRADE))
        for transport in TRANSPORTS:
            asyncio.run(LLM(config(server, transport=transport)).ask("warm up"))


def config(server: LLMServer, model: str = "openai/test-model", **kw) -> ModelConfig:
    settings = dict(api_base=server.base_url, api_key="test", timeout=5, backoff=0.01, max_backoff=0.05)
    settings.update(kw)
    return ModelConfig(model, **settings)


def calls(db) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM llm_calls ORDER BY id").fetchall()
    finally:
        conn.close()


def cached_rows(db) -> int:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0]
    finally:
        conn.close()


def ask(llm: LLM, messages=QUESTION, **kw):
    kw.setdefault("parse", json_object("grade"))
    return asyncio.run(llm.ask(messages, **kw))


# -- replies, cache ---------------------------------------------------------------------------------

@both
def test_reply_is_parsed_into_value_with_usage(llm_server, transport):
    llm_server.script(ok("Here you go:\n```json\n" + GRADE + "\n```", prompt_tokens=30, completion_tokens=12))
    outcome = ask(LLM(config(llm_server, transport=transport)))
    assert outcome.ok and outcome.value == {"grade": 2, "reason": "states the answer"}
    c = outcome.completion
    assert (c.prompt_tokens, c.completion_tokens, c.attempts, c.cached, c.finish_reason) == (30, 12, 1, False, "stop")
    assert llm_server.requests[0]["model"] == "test-model"
    assert llm_server.messages(0) == QUESTION
    assert llm_server.requests[0]["temperature"] == 0


def test_second_identical_run_is_served_from_cache_without_http(llm_server, tmp_path):
    db = tmp_path / "bench.sqlite"
    llm_server.script(ok(GRADE, prompt_tokens=30, completion_tokens=12))
    with LLM(config(llm_server), cache=db) as llm:
        first = ask(llm)
    with LLM(config(llm_server), cache=db) as llm:  # a new run, same store
        second = ask(llm)
        assert llm.usage.calls == 0 and llm.usage.cached == 1
    assert len(llm_server.requests) == 1
    assert first.ok and not first.cached
    assert second.ok and second.cached and second.value == first.value
    assert second.completion.attempts == 0 and second.cost == 0.0
    assert [(r["ok"], r["cached"]) for r in calls(db)] == [(1, 0), (1, 1)]


def test_different_params_or_messages_miss_the_cache(llm_server, tmp_path):
    llm_server.script(ok(GRADE), ok(GRADE), ok(GRADE))
    with LLM(config(llm_server), cache=tmp_path / "c.sqlite") as llm:
        ask(llm)
        ask(llm, temperature=0.5)
        ask(llm, QUESTION[:1] + [{"role": "user", "content": "another passage"}])
        ask(llm)
    assert len(llm_server.requests) == 3


def test_cache_accepts_an_open_connection_and_its_schema_is_idempotent(llm_server):
    conn = sqlite3.connect(":memory:")
    ResponseCache(conn)
    cache = ResponseCache(conn)  # second time: tables already there
    llm_server.script(ok(GRADE))
    assert ask(LLM(config(llm_server), cache=cache)).ok
    assert conn.execute("SELECT COUNT(*) FROM llm_cache").fetchone()[0] == 1
    assert conn.execute("SELECT ok, purpose FROM llm_calls").fetchall() == [(1, "")]


# -- retries ----------------------------------------------------------------------------------------

@both
def test_rate_limited_call_is_retried_until_it_succeeds(llm_server, tmp_path, transport):
    llm_server.script(status(429, retry_after=0), status(429, retry_after=0), ok(GRADE))
    outcome = ask(LLM(config(llm_server, transport=transport), cache=tmp_path / "c.sqlite"))
    assert outcome.ok and outcome.completion.attempts == 3
    assert len(llm_server.requests) == 3
    assert [r["attempts"] for r in calls(tmp_path / "c.sqlite")] == [3]


@both
def test_retry_after_header_is_honoured(llm_server, transport):
    llm_server.script(status(429, retry_after_ms=200), ok(GRADE))
    llm = LLM(config(llm_server, transport=transport))
    started = time.monotonic()
    outcome = ask(llm)
    assert outcome.ok and outcome.completion.attempts == 2
    assert time.monotonic() - started >= 0.2


@both
def test_server_error_is_retried(llm_server, transport):
    llm_server.script(status(500), status(503), ok(GRADE))
    outcome = ask(LLM(config(llm_server, transport=transport)))
    assert outcome.ok and outcome.completion.attempts == 3


@both
def test_persistent_server_error_fails_after_max_retries(llm_server, tmp_path, transport):
    llm_server.script(then=status(500))
    outcome = ask(LLM(config(llm_server, transport=transport, max_retries=2), cache=tmp_path / "c.sqlite"))
    assert not outcome.ok and outcome.value is None
    assert "500" in outcome.error and "attempt 3" in outcome.error
    assert len(llm_server.requests) == 3
    row, = calls(tmp_path / "c.sqlite")
    assert (row["ok"], row["attempts"]) == (0, 3) and "500" in row["error"]


@both
@pytest.mark.parametrize("code, message, said", [(401, "Incorrect API key provided", "API key"),
                                                 (404, "The model `nope` does not exist", "model name")],
                         ids=["bad API key", "unknown model"])
def test_a_refusal_no_call_can_get_past_raises_at_once_without_retry(llm_server, transport, code, message, said):
    llm_server.script(then=status(code, message=message))
    with pytest.raises(ModelCallError) as err:
        ask(LLM(config(llm_server, transport=transport)))
    assert err.value.fatal and err.value.status == code and said in str(err.value)
    assert len(llm_server.requests) == 1


@both
def test_bad_request_fails_this_item_without_retry(llm_server, transport):
    llm_server.script(status(400, message="this passage is too long"))
    outcome = ask(LLM(config(llm_server, transport=transport)))
    assert not outcome.ok and "too long" in outcome.error
    assert len(llm_server.requests) == 1


def test_model_without_provider_is_refused_before_any_call(llm_server):
    with pytest.raises(LLMError, match="provider"):
        LLM(config(llm_server, model="no-such-provider-model-xyz"))


# -- unreadable replies -----------------------------------------------------------------------------

@both
def test_garbled_reply_is_reasked_then_parsed(llm_server, tmp_path, transport):
    db = tmp_path / "c.sqlite"
    llm_server.script(garbled(), ok(GRADE))
    outcome = ask(LLM(config(llm_server, transport=transport), cache=db))
    assert outcome.ok and outcome.value["grade"] == 2
    assert len(outcome.completions) == 2
    second = llm_server.messages(1)
    assert second[:2] == QUESTION
    assert second[2] == {"role": "assistant", "content": garbled().text}
    assert second[3]["role"] == "user" and "no JSON" in second[3]["content"]
    assert [r["ok"] for r in calls(db)] == [0, 1]
    # the re-asked answer also resumes the first question: a rerun sends nothing
    assert ask(LLM(config(llm_server, transport=transport), cache=db)).cached
    assert len(llm_server.requests) == 2


def test_reply_unreadable_every_time_fails_with_raw_reply_logged_and_not_cached(llm_server, tmp_path):
    db = tmp_path / "c.sqlite"
    llm_server.script(then=garbled("I think it is relevant."))
    outcome = ask(LLM(config(llm_server), cache=db), reask=2, purpose="judge")
    assert not outcome.ok and outcome.value is None
    assert outcome.raw == "I think it is relevant."
    assert "3 tries" in outcome.error and "no JSON" in outcome.error
    assert len(llm_server.requests) == 3
    rows = calls(db)
    assert [r["ok"] for r in rows] == [0, 0, 0]
    assert all(r["raw"] == "I think it is relevant." and r["purpose"] == "judge" for r in rows)
    assert cached_rows(db) == 3  # paid for, so kept: a rerun replays them instead of paying again
    llm_server.script(ok(GRADE))  # ... and then asks again: the garbled replies did not poison the cache
    assert ask(LLM(config(llm_server), cache=db)).ok
    assert len(llm_server.requests) == 4


def test_truncated_json_is_reasked_and_reported_as_cut_off(llm_server, tmp_path):
    db = tmp_path / "c.sqlite"
    llm_server.script(then=truncated())
    outcome = ask(LLM(config(llm_server), cache=db), reask=1, max_tokens=40)
    assert not outcome.ok and "cut off" in outcome.error
    assert outcome.completion.finish_reason == "length"
    assert len(llm_server.requests) == 2 and cached_rows(db) == 2
    assert llm_server.requests[1]["max_tokens"] == 2 * llm_server.requests[0]["max_tokens"]
    llm_server.reset()
    llm_server.script(truncated(), ok(GRADE))
    assert ask(LLM(config(llm_server), cache=db), reask=1).ok


def test_missing_key_in_json_object_is_reasked(llm_server):
    llm_server.script(ok('{"reason": "no grade here"}'), ok(GRADE))
    outcome = ask(LLM(config(llm_server)))
    assert outcome.ok and len(llm_server.requests) == 2
    assert "'grade'" in llm_server.messages(1)[-1]["content"]


def test_empty_reply_to_plain_completion_is_an_error(llm_server):
    llm_server.script(then=ok(""))
    with pytest.raises(ModelCallError, match="empty"):
        asyncio.run(LLM(config(llm_server)).complete("hello"))


# -- timeouts and concurrency -----------------------------------------------------------------------

def test_slow_reply_within_timeout_succeeds(llm_server):
    llm_server.script(slow(0.2, GRADE))
    outcome = ask(LLM(config(llm_server, timeout=1)))
    assert outcome.ok and outcome.completion.attempts == 1 and outcome.completion.latency >= 0.2


@both
def test_hang_beyond_timeout_is_retried_then_fails(llm_server, tmp_path, transport):
    llm_server.script(then=hang)
    llm = LLM(config(llm_server, transport=transport, timeout=0.25, max_retries=1), cache=tmp_path / "c.sqlite")
    outcome = ask(llm)
    assert not outcome.ok and "gave up after attempt 2" in outcome.error
    assert "time" in outcome.error.lower()
    # the client's count decides: on a loaded machine a connection that times out may never reach the server
    assert 1 <= len(llm_server.requests) <= 2
    assert calls(tmp_path / "c.sqlite")[0]["attempts"] == 2


@both
def test_hang_then_reply_recovers(llm_server, transport):
    llm_server.script(hang, ok(GRADE))
    outcome = ask(LLM(config(llm_server, transport=transport, timeout=0.25)))
    assert outcome.ok and outcome.completion.attempts == 2


@both
def test_concurrency_bounds_requests_in_flight(llm_server, transport):  # 12 asks, at most 4 at once
    llm_server.script(lambda body: slow(0.1, GRADE))
    llm = LLM(config(llm_server, transport=transport, concurrency=4))

    async def main():
        questions = [[{"role": "user", "content": f"passage {i}"}] for i in range(12)]
        return await asyncio.gather(*(llm.ask(q, parse=json_object("grade")) for q in questions))

    outcomes = asyncio.run(main())
    assert all(o.ok for o in outcomes)
    assert len(llm_server.requests) == 12
    assert llm_server.max_in_flight == 4


def test_rpm_limit_spaces_request_starts(llm_server):
    llm_server.script(then=ok(GRADE))
    llm = LLM(config(llm_server, rpm=600, concurrency=8))  # one start every 0.1 s

    async def main():
        await asyncio.gather(*(llm.ask(f"passage {i}") for i in range(4)))

    started = time.monotonic()
    asyncio.run(main())
    assert time.monotonic() - started >= 0.29


def test_client_survives_successive_event_loops(llm_server):
    llm_server.script(then=ok(GRADE))
    llm = LLM(config(llm_server, concurrency=2))
    for i in range(3):
        assert ask(llm, f"passage {i}").ok


def test_every_client_of_a_process_shares_one_tls_context(llm_server, monkeypatch):
    """httpx makes TLS settings per client by reading the CA bundle (~25 ms): here they are made once a process,
    for the openai SDK's clients (two deployments, three event loops) and both batch clients alike."""
    import httpx

    from trecbench.llm.batch_anthropic import AnthropicBatches
    from trecbench.llm.batch_openai import OpenAIBatches
    from trecbench.llm.transport import tls_context

    made = []
    make = httpx.create_ssl_context
    monkeypatch.setattr(httpx, "create_ssl_context", lambda *a, **k: made.append(1) or make(*a, **k))
    tls_context.cache_clear()
    try:
        llm_server.script(then=ok(GRADE))
        with LLMServer() as other:
            other.script(then=ok(GRADE))
            llm = LLM(ModelConfig("judge", transport="openai", api_key="test", timeout=5, deployments=[
                {"model": "openai/test-model", "api_base": llm_server.base_url},
                {"model": "openai/test-model", "api_base": other.base_url}]))
            for i in range(3):
                assert ask(llm, f"passage {i}").ok
        OpenAIBatches(llm_server.base_url, "test", "test-model")
        AnthropicBatches(llm_server.base_url, "test", "anthropic/claude-sonnet-4-5")
        assert made == [1]
    finally:
        tls_context.cache_clear()


@both
def test_router_spreads_calls_over_deployments(llm_server, transport):
    with LLMServer() as other:
        llm_server.script(then=ok(GRADE))
        other.script(then=ok(GRADE))
        cfg = ModelConfig("judge", transport=transport, api_key="test", backoff=0.01, timeout=5, deployments=[
            {"model": "openai/test-model", "api_base": llm_server.base_url},
            {"model": "openai/test-model", "api_base": other.base_url}])
        llm = LLM(cfg)

        async def main():
            return await asyncio.gather(*(llm.ask(f"passage {i}", parse=json_object("grade")) for i in range(30)))

        assert all(o.ok for o in asyncio.run(main()))
        assert len(llm_server.requests) + len(other.requests) == 30
        assert llm_server.requests and other.requests


@both
def test_router_retries_a_failing_deployment_call(llm_server, transport):
    llm_server.script(status(500), then=ok(GRADE))
    cfg = ModelConfig("judge", transport=transport, api_key="test", backoff=0.01, timeout=5,
                      deployments=[{"model": "openai/test-model", "api_base": llm_server.base_url}])
    outcome = ask(LLM(cfg))
    assert outcome.ok and outcome.completion.attempts == 2 and len(llm_server.requests) == 2


# -- cost, budget, dry run --------------------------------------------------------------------------

@pytest.fixture
def priced_model() -> tuple[str, float, float]:
    """A model name with a price registered in litellm's (in-memory) cost map."""
    litellm = load()
    name, price_in, price_out = "openai/trecbench-priced-model", 2e-6, 8e-6
    litellm.register_model({name: {"input_cost_per_token": price_in, "output_cost_per_token": price_out,
                                   "litellm_provider": "openai", "mode": "chat"}})
    return name, price_in, price_out


def test_cost_is_tokens_times_price_and_totals_add_up(llm_server, tmp_path, priced_model):
    model, price_in, price_out = priced_model
    db = tmp_path / "c.sqlite"
    llm_server.script(ok(GRADE, prompt_tokens=1000, completion_tokens=50),
                      ok(GRADE, prompt_tokens=2000, completion_tokens=10),
                      garbled(), ok(GRADE, prompt_tokens=400, completion_tokens=40))
    with LLM(config(llm_server, model=model), cache=db) as llm:
        a = ask(llm, "first", purpose="judge")
        b = ask(llm, "second", purpose="judge")
        c = ask(llm, "third", purpose="nuggets")
        d = ask(llm, "first", purpose="judge")  # cached: free
        usage, by_purpose = llm.usage, llm.usage_by_purpose
    assert a.cost == pytest.approx(1000 * price_in + 50 * price_out)
    assert b.cost == pytest.approx(2000 * price_in + 10 * price_out)
    assert a.completion.cost_known and d.cached and d.cost == 0.0
    garbled_tokens = c.completions[0]
    assert c.cost == pytest.approx((garbled_tokens.prompt_tokens + 400) * price_in
                                   + (garbled_tokens.completion_tokens + 40) * price_out)
    assert usage.calls == 4 and usage.cached == 1 and usage.failed == 1
    assert usage.cost == pytest.approx(a.cost + b.cost + c.cost)
    assert usage.prompt_tokens == 3400 + garbled_tokens.prompt_tokens
    assert by_purpose["judge"].cost == pytest.approx(a.cost + b.cost)
    stored = ResponseCache(db)
    assert stored.usage() == usage  # the log on disk says the same
    assert stored.usage("nuggets").cost == pytest.approx(c.cost)
    assert sum(r["cost"] for r in calls(db)) == pytest.approx(usage.cost)


def test_unpriced_model_costs_zero_and_is_flagged(llm_server):
    llm_server.script(ok(GRADE, prompt_tokens=100, completion_tokens=10))
    llm = LLM(config(llm_server, model="openai/no-price-for-this-model"))
    outcome = ask(llm)
    assert outcome.ok and outcome.cost == 0.0 and not outcome.completion.cost_known
    assert llm.usage.unpriced == 1


def test_budget_stops_new_calls_once_the_limit_would_be_passed(llm_server, priced_model):
    model, price_in, price_out = priced_model
    llm_server.script(then=ok(GRADE, prompt_tokens=1000, completion_tokens=100))
    per_call = 1000 * price_in + 100 * price_out  # 0.0028
    budget = Budget(max_cost=2.5 * per_call)
    llm = LLM(config(llm_server, model=model), budget=budget)
    done = []
    with pytest.raises(BudgetExceeded):
        for i in range(10):
            done.append(ask(llm, "x " * 900 + str(i), max_tokens=100))
    assert len(done) == 2 and len(llm_server.requests) == 2
    assert budget.spent == pytest.approx(2 * per_call) and budget.spent <= budget.max_cost
    assert budget.reserved == 0


def test_budget_reservations_hold_back_concurrent_calls(llm_server, priced_model):
    model, *_ = priced_model
    llm_server.script(lambda body: slow(0.05, GRADE))
    llm = LLM(config(llm_server, model=model, concurrency=8), budget=Budget(max_cost=1e-9))

    async def main():
        return await asyncio.gather(*(llm.ask(f"p{i}") for i in range(8)), return_exceptions=True)

    results = asyncio.run(main())
    assert all(isinstance(r, BudgetExceeded) for r in results)
    assert llm_server.requests == []


def test_estimate_and_the_request_form_key_a_request_as_ask_sends_it(llm_server, tmp_path):
    from trecbench.llm.request import RequestForm

    db = tmp_path / "c.sqlite"
    llm_server.script(ok(GRADE))
    schema = {"name": "grade", "schema": {"type": "object", "properties": {"grade": {"type": "integer"}}}}
    with LLM(config(llm_server), cache=db) as llm:
        outcome = ask(llm, "q", schema=schema, max_tokens=50, seed=1)
        assert "response_format" in llm_server.requests[0]  # the SDK's servers are sent the schema
        assert llm.estimate("q", schema=schema, max_tokens=50, seed=1).cached
        assert not llm.estimate("q", max_tokens=50, seed=1).cached  # without the schema: another request
    form = RequestForm.of(config(llm_server))  # no client: what a dry run of `judge llm` keys with
    assert form.first_key("q", {"parse": None, "purpose": "judge", "schema": schema, "max_tokens": 50,
                                "seed": 1}) == outcome.key


def test_dry_run_makes_no_calls_and_counts_tokens_and_cost(llm_server, tmp_path, priced_model):
    model, price_in, price_out = priced_model
    db = tmp_path / "c.sqlite"
    llm_server.script(ok(GRADE))
    with LLM(config(llm_server, model=model), cache=db) as llm:
        ask(llm, "already asked", max_tokens=50)
    with LLM(config(llm_server, model=model), cache=db, dry_run=True) as llm:
        outcomes = [ask(llm, q, max_tokens=50) for q in ("already asked", "new one", "another new one")]
        expected = llm.estimate("new one", max_tokens=50)
        plan = llm.plan
    assert len(llm_server.requests) == 1  # only the real call before the dry run
    assert outcomes[0].ok and outcomes[0].cached
    assert [o.dry_run for o in outcomes] == [False, True, True] and not outcomes[1].ok
    assert plan.calls == 2 and plan.cached == 1 and plan.completion_tokens == 100
    assert expected.prompt_tokens > 0 and not expected.cached
    assert expected.cost == pytest.approx(expected.prompt_tokens * price_in + 50 * price_out)
    assert plan.cost > expected.cost
    assert len(calls(db)) == 1  # a dry run logs nothing


def test_importing_the_llm_package_does_not_import_litellm():
    import subprocess
    import sys

    code = ("import sys, trecbench.llm, trecbench.cli; from trecbench.llm import LLM, ModelConfig, json_object;"
            "assert 'litellm' not in sys.modules, 'litellm imported eagerly'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_litellm_is_told_to_stay_offline_unless_the_user_says_otherwise(monkeypatch):
    from trecbench.llm._litellm import offline_environment

    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    monkeypatch.setenv("LITELLM_OFFLINE_MODE", "false")
    offline_environment()
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert os.environ["LITELLM_OFFLINE_MODE"] == "false"


def test_prices_and_token_counts_make_no_network_call(_loopback_only):
    from trecbench.llm.cost import count_tokens, is_priced

    # litellm's model-info lookup downloads a config from huggingface.co for huggingface/ models
    for model in ("gpt-4o-mini", "huggingface/meta-llama/Meta-Llama-3-8B-Instruct", "hosted_vllm/some/model"):
        assert count_tokens(model, [{"role": "user", "content": "hello there"}]) > 0
        is_priced(model)
    assert _loopback_only == []
