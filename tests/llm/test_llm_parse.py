"""Reading model replies (JSON wherever it sits), the re-ask message, retry decisions and back-off."""
from __future__ import annotations

import random
import sqlite3

import pytest

from trecbench.llm import ParseError, extract_json, json_list, json_object, reask_messages, request_key
from trecbench.llm.budget import Budget, BudgetExceeded
from trecbench.llm.cache import ensure_schema
from trecbench.llm.retry import backoff_delay, classify, retry_after


@pytest.mark.parametrize("text", [
    '{"grade": 3}',
    '```json\n{"grade": 3}\n```',
    'Sure! Here is my judgment:\n```\n{"grade": 3}\n```\nLet me know if you need more.',
    '{"grade": 3}\n\nThe passage answers the question directly.',
    'My grade {as requested} is: {"grade": 3} (high confidence)',
    '<think>The passage {mentions} it... {"grade": 1}?</think>\n{"grade": 3}',
    '```JSON\n{"grade": 3}```',
])
def test_json_object_is_found_in_fences_prose_and_trailing_text(text):
    assert extract_json(text, expect=dict) == {"grade": 3}


def test_json_list_is_found_after_prose():
    assert json_list()('The nuggets are:\n[{"text": "a"}, {"text": "b"}]\nDone.') == [{"text": "a"}, {"text": "b"}]


def test_a_list_is_not_taken_for_an_object():
    with pytest.raises(ParseError, match="expected a JSON object, found a JSON list"):
        extract_json("[1, 2]", expect=dict)


@pytest.mark.parametrize("text", ['{"grade": 2, "reason": "the passage states the ans',
                                  '```json\n{"nuggets": [{"text": "a"}, {"te'])
def test_cut_off_json_is_reported_as_truncated(text):
    with pytest.raises(ParseError, match="cut off"):
        extract_json(text)


@pytest.mark.parametrize("text,reason", [("", "empty"), ("   \n", "empty"), (None, "empty"),
                                         ("It is relevant.", "no JSON"), ('"just a string"', "bare value")])
def test_unreadable_replies_say_why(text, reason):
    with pytest.raises(ParseError, match=reason):
        extract_json(text)


def test_json_object_parser_requires_its_keys():
    parse = json_object("grade", "reason")
    assert parse('{"grade": 1, "reason": "x", "extra": 2}')["grade"] == 1
    with pytest.raises(ParseError, match="'reason'"):
        parse('{"grade": 1}')


def test_reask_messages_replay_the_reply_and_name_the_problem():
    bad, correction = reask_messages("nope", "no JSON found in the reply")
    assert bad == {"role": "assistant", "content": "nope"}
    assert correction["role"] == "user" and "no JSON found in the reply" in correction["content"]


def test_request_key_is_canonical_and_covers_model_messages_params():
    messages = [{"role": "user", "content": "hi"}]
    key = request_key("openai/m", messages, {"temperature": 0, "seed": 1})
    assert key == request_key("openai/m", [{"content": "hi", "role": "user"}], {"seed": 1, "temperature": 0})
    assert len(key) == 64
    assert key != request_key("openai/other", messages, {"temperature": 0, "seed": 1})
    assert key != request_key("openai/m", messages, {"temperature": 0.7, "seed": 1})
    assert key != request_key("openai/m", [{"role": "user", "content": "hi!"}], {"temperature": 0, "seed": 1})


def test_ensure_schema_creates_both_tables_and_can_run_twice():
    conn = sqlite3.connect(":memory:")
    ensure_schema(conn)
    ensure_schema(conn)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"llm_cache", "llm_calls"} <= tables


class FakeStatusError(Exception):
    def __init__(self, status_code, headers=None, message="boom"):
        super().__init__(message)
        self.status_code = status_code
        self.response = type("R", (), {"headers": headers or {}, "status_code": status_code})()


class ContextWindowExceededError(Exception):
    status_code = 400


class Timeout(Exception):
    pass


@pytest.mark.parametrize("exc,verdict", [
    (FakeStatusError(429), "retry"), (FakeStatusError(500), "retry"), (FakeStatusError(503), "retry"),
    (FakeStatusError(408), "retry"), (Timeout("read timed out"), "retry"), (ConnectionResetError(), "retry"),
    (FakeStatusError(401), "fatal"), (FakeStatusError(403), "fatal"), (FakeStatusError(404), "fatal"),
    (FakeStatusError(429, message="You exceeded your current quota: insufficient_quota"), "fatal"),
    (FakeStatusError(400), "item"), (FakeStatusError(422), "item"), (ContextWindowExceededError(), "item"),
    (RuntimeError("unexpected"), "fatal"),
])
def test_errors_are_classified_for_retry(exc, verdict):
    assert classify(exc) == verdict


def test_retry_after_reads_seconds_milliseconds_and_dates():
    assert retry_after(FakeStatusError(429, {"retry-after": "2"})) == 2.0
    assert retry_after(FakeStatusError(429, {"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert 0 <= retry_after(FakeStatusError(429, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) <= 0.0
    assert retry_after(FakeStatusError(429)) is None


def test_backoff_grows_exponentially_with_jitter_and_a_cap():
    rng = random.Random(1)
    delays = [backoff_delay(n, 1.0, 8.0, rng=rng) for n in range(1, 7)]
    for n, d in enumerate(delays, start=1):
        ceiling = min(8.0, 2 ** (n - 1))
        assert ceiling / 2 <= d <= ceiling
    assert 3.0 <= backoff_delay(1, 0.5, 8.0, server_wait=3.0, rng=rng) <= 3.5


def test_budget_refuses_what_would_pass_the_limit_and_counts_reservations():
    budget = Budget(max_cost=1.0)
    first = budget.reserve(0.4)
    second = budget.reserve(0.4)
    with pytest.raises(BudgetExceeded, match="max-cost"):
        budget.reserve(0.3)  # 0.8 already reserved
    budget.settle(first, 0.1)
    budget.release(second)
    assert budget.spent == pytest.approx(0.1) and budget.reserved == 0
    assert budget.remaining == pytest.approx(0.9)
    budget.reserve(0.3)
    assert Budget().reserve(1e9) == 1e9  # no limit
