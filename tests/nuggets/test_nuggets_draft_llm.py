"""`nuggets draft --model` against a loopback model server: windows, running list, labels, cut, support, failures."""
from __future__ import annotations

import json
import re
import sqlite3

import pytest
from llm_server import garbled, ok, status

from nugget_bench import DOCS, MODEL, draft_args, labels, make_bench, stored
from trecbench.nuggets.drafting.llm import UNLABELLED_NOTE
from trecbench.nuggets.prompts import parse_labels, parse_update
from trecbench.llm import ParseError
from trecbench.nuggets.store import NuggetStore
from trecbench.store import Workspace, text_hash


def update(*nuggets) -> str:
    """A reply to a window: nuggets as (text, from labels, support labels)."""
    return json.dumps({"nuggets": [{"from": list(f), "text": t, "support": list(s)} for t, f, s in nuggets]})


def is_label_request(body) -> bool:
    return "how important each nugget" in body["messages"][0]["content"]


def user_text(body) -> str:
    return body["messages"][1]["content"]


def fake_model(body) -> str:
    """A model that knows a few facts: keeps earlier nuggets, adds each fact a passage states, labels by keyword."""
    facts = {"15 minutes": "Payments API rollbacks start within 15 minutes",
             "No approval": "No approval is needed for a rollback",
             "incident commander": "The incident commander approves production access",
             "4 hours": "Emergency access lasts 4 hours"}
    text = user_text(body)
    if is_label_request(body):
        names = re.findall(r"^N\d+: (.*)$", text, re.M)
        return labels(*("vital" if ("15 minutes" in n or "commander" in n) else "okay" for n in names))
    earlier = re.findall(r"^N(\d+): (.*)$", text, re.M)
    passages = re.findall(r"^\[P(\d+)\] (.*)$", text, re.M)
    out = {t: ([f"N{k}"], []) for k, t in earlier}
    for label, passage in passages:
        for key, fact in facts.items():
            if key in passage:
                out.setdefault(fact, ([], []))[1].append(f"P{label}")
    return update(*((t, f, s) for t, (f, s) in out.items()))


@pytest.fixture
def bench(tmp_path):
    return make_bench(tmp_path)


def drafts(bench):
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        return dict(conn.execute("SELECT qid, status FROM nugget_drafts").fetchall())


def test_windows_carry_the_running_list_and_support_accumulates(bench, llm_server, cli_run):
    # t1's relevant documents (--min-grade 1) in grade order: d1 (3), d2 (2), d3 (1); with --window 2: [d1, d2], [d3]
    llm_server.script(
        ok(update(("Rollbacks start within 15 minutes", [], ["P1"]), ("No approval is needed", [], ["P1"]))),
        ok(update(("Payments API rollbacks start within 15 minutes", ["N1"], ["P1"]),
                  ("No approval is needed", ["N2"], []),
                  ("Dashboard rollbacks are approved by the product owner", [], ["P1"]))),
        ok(labels("vital", "okay", "okay")))
    r = cli_run(*draft_args(bench, llm_server, "--window", "2", "--min-grade", "1", "--topic", "t1"))
    assert r.exit_code == 0, r.output
    first, second, label = (user_text(b) for b in llm_server.requests)
    assert "[P1]" in first and "[P2]" in first and "[P3]" not in first and "none yet" in first
    assert DOCS["d1"][:40] in first and DOCS["d3"][:40] in second
    assert "N1: Rollbacks start within 15 minutes" in second and "N2: No approval is needed" in second
    assert "N3: Dashboard rollbacks are approved by the product owner" in label
    nuggets = stored(bench, "t1")
    assert [(n.text, n.importance) for n in nuggets] == [
        ("Payments API rollbacks start within 15 minutes", "vital"), ("No approval is needed", "okay"),
        ("Dashboard rollbacks are approved by the product owner", "okay")]
    # support: the first nugget was stated by d1 (window 1) and reworded from d3 (window 2)
    assert nuggets[0].as_nugget().support == (("d1",), ("d3",))
    assert nuggets[0].support[0][0].doc_hash == text_hash(DOCS["d1"])
    assert nuggets[1].as_nugget().support == (("d1",),)
    assert {(n.origin, n.status, n.updated_by) for n in nuggets} == {("llm", "draft", f"model:{MODEL}")}
    assert drafts(bench) == {"t1": "complete"}
    assert "1 complete, 0 incomplete" in r.stdout and "3 calls (0 from cache)" in r.stdout


def test_importance_is_labelled_in_batches_of_ten_then_vital_first_and_cut_to_keep(bench, llm_server, cli_run):
    many = [(f"Fact number {i}", [], ["P1"]) for i in range(1, 13)]

    def model(body):  # the two batches are asked at once: answer each by what it holds
        if not is_label_request(body):
            return update(*many)
        n = len(re.findall(r"^N\d+: ", user_text(body), re.M))
        return labels(*(["okay", "vital"] * 5)) if n == 10 else labels("vital", "okay")

    llm_server.script(model)
    r = cli_run(*draft_args(bench, llm_server, "--topic", "t1", "--keep", "7"))
    assert r.exit_code == 0, r.output
    batches = sorted((user_text(b) for b in llm_server.requests if is_label_request(b)), key=len, reverse=True)
    assert len(llm_server.requests) == 3 and len(batches) == 2
    assert "N10: Fact number 10" in batches[0] and "N11" not in batches[0]
    assert "N1: Fact number 11" in batches[1] and "N2: Fact number 12" in batches[1] and "N3" not in batches[1]
    nuggets = stored(bench, "t1")
    # vital: 2, 4, 6, 8, 10, 11 (in list order); then okay: 1, 3, ... cut to 7
    assert [n.text for n in nuggets] == [f"Fact number {i}" for i in (2, 4, 6, 8, 10, 11, 1)]
    assert [n.importance for n in nuggets] == ["vital"] * 6 + ["okay"]


def test_max_nuggets_bounds_the_running_list(bench, llm_server, cli_run):
    many = [(f"Fact number {i}", [], []) for i in range(1, 9)]
    llm_server.script(ok(update(*many)), ok(labels(*["okay"] * 5)))
    r = cli_run(*draft_args(bench, llm_server, "--topic", "t1", "--max-nuggets", "5"))
    assert r.exit_code == 0, r.output
    assert "at most 5 nuggets" in llm_server.requests[0]["messages"][0]["content"]
    assert len(stored(bench, "t1")) == 5


def test_a_failed_window_is_reported_the_topic_kept_as_incomplete_drafts_and_redrafted_next_run(
        bench, llm_server, cli_run):
    llm_server.script(
        ok(update(("Rollbacks start within 15 minutes", [], ["P1"]))),  # window 1: d1, d2
        garbled(), garbled(), garbled(),  # window 2: d3, asked and re-asked twice
        ok(labels("vital")))
    r = cli_run(*draft_args(bench, llm_server, "--window", "2", "--min-grade", "1", "--topic", "t1"))
    assert r.exit_code == 1, r.output
    assert "1 topic(s) are incomplete" in r.stderr
    assert re.search(r"t1\twindow 2 of 2 \(documents d3\) failed, the list was not updated from it: unreadable "
                     r"reply after 3 tries", r.stderr)
    assert drafts(bench) == {"t1": "incomplete"}
    [run] = NuggetStore(Workspace(bench)).draft_runs("t1")
    assert (run.drafter, run.status, run.nuggets) == (f"llm:{MODEL}", "incomplete", 1)
    assert run.problems[0].startswith("window 2 of 2")
    kept = stored(bench, "t1")
    assert [(n.text, n.status) for n in kept] == [("Rollbacks start within 15 minutes", "draft")]
    # the next run drafts t1 again: window 1 comes from the cache, the failed window is asked again
    llm_server.script(ok(update(("Rollbacks start within 15 minutes", ["N1"], ["P1"]),
                                ("Dashboards differ", [], ["P1"]))), ok(labels("vital", "okay")))
    before = len(llm_server.requests)
    r = cli_run(*draft_args(bench, llm_server, "--window", "2", "--min-grade", "1", "--topic", "t1"))
    assert r.exit_code == 0, r.output
    assert len(llm_server.requests) - before == 2
    assert drafts(bench) == {"t1": "complete"}
    nuggets = stored(bench, "t1")
    assert [n.text for n in nuggets] == ["Rollbacks start within 15 minutes", "Dashboards differ"]  # replaced
    assert nuggets[0].as_nugget().support == (("d1",), ("d3",))


def test_a_failed_labelling_batch_keeps_its_nuggets_with_a_placeholder_note_not_a_silent_label(
        bench, llm_server, cli_run):
    llm_server.script(ok(update(("A", [], []), ("B", [], []))), garbled(), garbled(), garbled())
    r = cli_run(*draft_args(bench, llm_server, "--topic", "t1"))
    assert r.exit_code == 1
    assert "importance of nuggets 1-2 failed" in r.stderr
    nuggets = stored(bench, "t1")
    assert [n.extra.get("note") for n in nuggets] == [UNLABELLED_NOTE] * 2
    assert drafts(bench) == {"t1": "incomplete"}


def test_a_call_error_fails_the_window_and_other_topics_still_complete(bench, llm_server, cli_run):
    def model(body):
        if "incident commander" in user_text(body) and not is_label_request(body):
            return status(400, message="this prompt is refused")
        return fake_model(body)

    llm_server.script(model)
    r = cli_run(*draft_args(bench, llm_server, "--max-retries", "0"))
    assert r.exit_code == 1, r.output
    assert drafts(bench) == {"t1": "complete", "t2": "incomplete"}
    assert re.search(r"t2\twindow 1 of 1 \(documents d4 \.\. d6\) failed", r.stderr)
    assert [n.text for n in stored(bench, "t1")][0] == "Payments API rollbacks start within 15 minutes"


def test_a_complete_run_is_not_repeated_and_dry_run_calls_nothing(bench, llm_server, cli_run):
    llm_server.script(fake_model)
    r = cli_run(*draft_args(bench, llm_server, "--dry-run"))
    assert r.exit_code == 0, r.output
    assert llm_server.requests == []
    assert re.search(r"dry run: at most \d+ calls to the model", r.stdout)
    r = cli_run(*draft_args(bench, llm_server))
    assert r.exit_code == 0, r.output
    assert drafts(bench) == {"t1": "complete", "t2": "complete"}
    assert [n.text for n in stored(bench, "t2")] == ["The incident commander approves production access",
                                                    "Emergency access lasts 4 hours"]
    assert stored(bench, "t2")[1].as_nugget().support == (("d4",), ("d6",))
    calls = len(llm_server.requests)
    r = cli_run(*draft_args(bench, llm_server))
    assert r.exit_code == 0 and len(llm_server.requests) == calls
    assert "2 skipped as already complete" in r.stdout


def test_a_dry_run_counts_the_calls_the_cache_would_answer(bench, llm_server, cli_run):
    llm_server.script(fake_model)
    assert cli_run(*draft_args(bench, llm_server, "--topic", "t1")).exit_code == 0
    asked = len(llm_server.requests)
    assert asked >= 2  # the running list and the labels
    with sqlite3.connect(bench / "bench.sqlite") as conn:  # as if t1 had never been drafted; its replies stay cached
        for table in ("nugget_versions", "nuggets", "nugget_drafts"):
            conn.execute(f"DELETE FROM {table}")
    r = cli_run(*draft_args(bench, llm_server, "--topic", "t1", "--dry-run"))
    assert r.exit_code == 0, r.output
    assert f"({asked} answered by the cache)" in r.stdout and len(llm_server.requests) == asked


def test_update_replies_are_checked_before_use():
    assert parse_update('{"nuggets": [{"from": ["N1"], "text": "a", "support": ["P2"]}]}', 1, 2, 30)[0].passages == (1,)
    with pytest.raises(ParseError, match="names P3, but there are P1 to P2"):
        parse_update('{"nuggets": [{"text": "a", "support": ["P3"]}]}', 0, 2, 30)
    with pytest.raises(ParseError, match="names N1, but there are no N labels"):
        parse_update('{"nuggets": [{"text": "a", "from": ["N1"]}]}', 0, 2, 30)
    with pytest.raises(ParseError, match='no "text"'):
        parse_update('{"nuggets": [{"text": ""}]}', 0, 2, 30)
    merged = parse_update('[{"text": "a", "support": ["P1"]}, {"text": "A", "support": ["P2"]}]', 0, 2, 30)
    assert [(u.text, u.passages) for u in merged] == [("a", (0, 1))]
    assert parse_labels('[{"nugget": "N2", "importance": "Okay"}, {"nugget": "N1", "importance": "vital"}]', 2) == [
        "vital", "okay"]
    with pytest.raises(ParseError, match="no label for N2"):
        parse_labels('[{"nugget": "N1", "importance": "vital"}]', 2)
    with pytest.raises(ParseError, match='"vital" or "okay"'):
        parse_labels('["important"]', 1)
