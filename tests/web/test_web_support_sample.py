"""A blind human sample first, then the verdict, end to end: `judge support-agreement --sample N` keeps a sample,
the assessor page (TestClient) offers exactly its pairs first, and the agreement compares the model with exactly
the grades people gave there."""
from __future__ import annotations

import json
import re

from starlette.testclient import TestClient

from paths import SAMPLE
from support_bench import make_support_bench, people_rows
from test_web_support import grade, shown, take_next
from trecbench.store.workspace import Workspace
from trecbench.web.app import create_app

PEOPLE = ["full", "none", "full", "partial", "none", "full"]  # what alice gives the sample's pairs, in order


def logged_in(bench, name: str) -> TestClient:
    token = Workspace(bench).add_assessor(name)
    c = TestClient(create_app(bench, require_token=True), base_url="http://127.0.0.1")
    assert c.get("/support", params={"token": token}).status_code == 200
    return c


def test_the_page_offers_the_blind_sample_first_and_the_verdict_uses_exactly_those_grades(tmp_path, llm_server,
                                                                                           cli_run):
    from trecbench.judging.support_agreement import support_sample

    bench = make_support_bench(tmp_path)
    r = cli_run("judge", "support-agreement", "-w", bench, "--sample", str(len(PEOPLE)), "--seed", "3")
    assert r.exit_code == 0, r.output
    sample = support_sample(Workspace(bench)).pairs
    assert len(sample) == len(PEOPLE) and {k[0] for k in sample} == {"rag_good", "rag_partial"}  # every run with pairs
    alice = logged_in(bench, "alice")
    start = alice.get("/support").text
    assert re.search(r'A blind sample of 6 pairs comes first.*<strong id="sample-left">6</strong> left', start)
    page = take_next(alice)
    for key, given in zip(sample, PEOPLE):
        assert shown(page) == key  # the sample's pairs, in its judging order, before any other
        assert "gpt-4o" not in page.text  # blind
        page = grade(alice, key, given)
    assert shown(page) not in sample and shown(page) == ("rag_good", "T01", 0, "HB-ACC-04")  # then the rest
    assert re.search(r'<strong id="sample-left">0</strong> left', alice.get("/support").text)
    assert [(row[1:5], row[5]) for row in people_rows(bench)] == list(zip(sample, PEOPLE))

    llm_server.script(then='{"grade": "full", "reason": "scripted"}')
    answers = sorted((SAMPLE / "answers").glob("*.jsonl"))
    r = cli_run("judge", "support", "-w", bench, *answers, "--model", "openai/gpt-4o-mini", "--api-base",
                llm_server.base_url, "--api-key", "test", "--quiet")
    assert r.exit_code == 0, r.output
    r = cli_run("judge", "support-agreement", "-w", bench, "--format", "json")
    assert r.exit_code == 0, r.output
    (got,) = json.loads(r.stdout)
    # the model said full on every pair; people's grades are alice's six: 3 full, 1 partial, 2 none
    assert got["pairs"] == len(PEOPLE) and got["exact"] == 3 / 6
    assert {g: row["full"] for g, row in got["confusion"].items()} == {"full": 3, "partial": 1, "none": 2}
    # binarised: people 4 supported, 2 not; the model 6 supported -> p_o = p_e = 4/6, kappa 0: the verdict poor
    assert got["kappa_binary"] == 0 and got["verdict"] == "poor"
    assert set(got["scores"]) == {k[0] for k in sample}  # the runs scored are the sample's, on its pairs
