"""`trecbench judge support` and `judge support-agreement` against the loopback model server: grading each
sentence-citation pair, failures, resume, dry run, budget, leases, and agreement with people by hand."""
from __future__ import annotations

import json
import re
import sqlite3

import pytest

from llm_server import garbled
from paths import SAMPLE

DOCS = {
    "d1": "The payments API is rolled back within 15 minutes of a failed release.",
    "d2": "Rollbacks need no approval from the release captain.",
    "d3": "Break-glass access is approved by the incident commander.",
    "d4": "Break-glass access lasts 2 hours and can be extended once.",
}
# run -> its sentences, each (text, cited docids); one topic, t1
ANSWERS = {
    "A": [("Alpha zero says a rollback starts within 15 minutes.", ["d1", "d2"]),
          ("Alpha one says the incident commander approves.", ["d3"])],
    "B": [("Bravo zero says rollbacks take a day.", ["d1"]), ("Bravo one says access lasts 2 hours.", ["d4"])],
    "C": [("Charlie zero says the CTO approves rollbacks.", ["d2", "d3"]),
          ("Charlie one says access lasts 2 hours, extendable once.", ["d4"])],
}
# people's grades (alice) and the model's: the model is wrong on 2 of the 8 pairs (A's first sentence with d2,
# B's first sentence with d1), a known error rate of 25%
PEOPLE = {("A", 0, "d1"): "full", ("A", 0, "d2"): "partial", ("A", 1, "d3"): "full",
          ("B", 0, "d1"): "none", ("B", 1, "d4"): "partial",
          ("C", 0, "d2"): "none", ("C", 0, "d3"): "none", ("C", 1, "d4"): "full"}
MODEL = {**PEOPLE, ("A", 0, "d2"): "full", ("B", 0, "d1"): "full"}
MODEL_NAME = "openai/gpt-4o-mini"


def make_bench(tmp_path, cli_run):
    """A workspace with the four passages and topic t1; the answer files of runs A, B and C (TREC RAG 2024)."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": k, "contents": v}) + "\n" for k, v in DOCS.items()))
    topics = tmp_path / "topics.tsv"
    topics.write_text("t1\tHow are releases rolled back and who approves access?\n")
    assert cli_run("init", tmp_path / "bench", "--corpus", corpus, "--topics", topics).exit_code == 0
    files = []
    for run, sentences in ANSWERS.items():
        refs = sorted({d for _, cited in sentences for d in cited})
        line = {"run_id": run, "topic_id": "t1", "topic": "How are releases rolled back and who approves access?",
                "references": refs, "response_length": 20,
                "answer": [{"text": t, "citations": [refs.index(d) for d in cited]} for t, cited in sentences]}
        path = tmp_path / f"{run}.jsonl"
        path.write_text(json.dumps(line) + "\n")
        files.append(path)
    return tmp_path / "bench", files


def request_pair(body: dict) -> tuple[str, int, str]:
    """(run, sentence index, docid) of the pair a request asks about (its first user message)."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    sentence = re.search(r"Sentence: (.*)", user).group(1)
    passage = re.search(r"Passage: (.*)", user).group(1)
    docid = next(d for d, text in DOCS.items() if text == passage)
    run, n = next((r, i) for r, ss in ANSWERS.items() for i, (t, _) in enumerate(ss) if t == sentence)
    return run, n, docid


def scripted(grades: dict):
    def grade(body: dict) -> str:
        return json.dumps({"grade": grades[request_pair(body)], "reason": "scripted"})

    return grade


def support_args(bench, files, server, *extra):
    return ["judge", "support", "-w", bench, *files, "--model", MODEL_NAME, "--api-base", server.base_url,
            "--api-key", "test", "--quiet", *extra]


def support_rows(bench) -> list[tuple]:
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        return conn.execute("SELECT s.run_id, s.sentence, s.docid, s.grade, s.status, s.error, g.name FROM "
                            "support_judgments s JOIN judges g ON g.id = s.judge_id ORDER BY s.id").fetchall()


def record_people(bench):
    from trecbench.answers.support import sentence_hash
    from trecbench.store import Judge, Workspace
    from trecbench.store.support import SupportJudgment

    alice = Judge("human", "alice")
    ws = Workspace(bench)
    ws.record_support([SupportJudgment(run, "t1", n, d, sentence_hash(ANSWERS[run][n][0]), g, alice)
                       for (run, n, d), g in PEOPLE.items()])
    ws.close()


@pytest.fixture
def bench(tmp_path, cli_run):
    return make_bench(tmp_path, cli_run)


def test_every_cited_pair_is_graded_once_and_a_rerun_asks_nothing(bench, llm_server, cli_run):
    ws, files = bench
    llm_server.script(scripted(MODEL))
    r = cli_run(*support_args(ws, files, llm_server))
    assert r.exit_code == 0, r.output
    assert len(llm_server.requests) == 8
    assert "8 sentence-citation pairs to grade in 8 calls (6 sentences, 0 citing nothing)" in r.stderr
    got = {(run, n, d): g for run, n, d, g, status, _, _ in support_rows(ws) if status == "ok"}
    assert got == MODEL
    names = {name for *_, name in support_rows(ws)}
    assert len(names) == 1 and re.fullmatch(r"openai/gpt-4o-mini:support@[0-9a-f]{8}", names.pop())
    r = cli_run(*support_args(ws, files, llm_server))
    assert r.exit_code == 0, r.output
    assert len(llm_server.requests) == 8  # nothing asked twice
    assert "judged 0, failed 0, skipped 8 already judged" in r.stdout
    assert len(support_rows(ws)) == 8


def test_the_request_asks_for_the_grade_with_a_schema_and_shows_sentence_passage_and_question(bench, llm_server,
                                                                                                cli_run):
    ws, files = bench
    llm_server.script(scripted(MODEL))
    assert cli_run(*support_args(ws, files[:1], llm_server, "--limit", "1")).exit_code == 0
    body = llm_server.requests[0]
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["grade"]["enum"] == ["full", "partial", "none"]
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert "full - every claim" in system and "contradicts -" not in system
    assert user.startswith("Question: How are releases rolled back") and f"Passage: {DOCS['d1']}" in user


def test_a_reply_that_cannot_be_read_is_recorded_as_failed_never_as_no_support(bench, llm_server, cli_run):
    ws, files = bench
    llm_server.script(then=garbled())
    r = cli_run(*support_args(ws, files[:1], llm_server, "--limit", "1"))
    assert r.exit_code == 1
    assert len(llm_server.requests) == 3  # asked, then re-asked twice
    assert "1 support judgment(s) failed" in r.stderr and "A\tt1\t0\td1\tunreadable reply" in r.stderr
    (row,) = support_rows(ws)
    assert row[:5] == ("A", 0, "d1", None, "failed") and row[5].startswith("unreadable reply after 3 tries")
    llm_server.script(scripted(MODEL))  # the next run asks the failed pair again
    r = cli_run(*support_args(ws, files[:1], llm_server, "--limit", "1"))
    assert r.exit_code == 0, r.output
    assert support_rows(ws)[-1][:5] == ("A", 0, "d1", "full", "ok")


def test_a_grade_outside_the_scale_is_a_failure(bench, llm_server, cli_run):
    ws, files = bench
    llm_server.script(then='{"grade": "contradicts", "reason": "x"}')  # not on the default scale
    r = cli_run(*support_args(ws, files[:1], llm_server, "--limit", "1"))
    assert r.exit_code == 1
    assert support_rows(ws)[0][3:5] == (None, "failed") and "'contradicts' is not one of" in support_rows(ws)[0][5]


def test_a_bad_answer_file_is_reported_by_line_and_nothing_is_registered(bench, llm_server, cli_run, tmp_path):
    ws, files = bench
    broken = tmp_path / "broken.jsonl"
    broken.write_text(files[0].read_text() + "{not json\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    r = cli_run(*support_args(ws, [broken], llm_server))
    assert r.exit_code == 2 and f"{broken}:2:" in r.stderr and "Traceback" not in r.output
    r = cli_run(*support_args(ws, [empty], llm_server))
    assert r.exit_code == 2 and f"{empty}: empty file: no answers" in r.stderr  # the reader says so
    assert llm_server.requests == [] and support_rows(ws) == []
    with sqlite3.connect(ws / "bench.sqlite") as conn:
        assert conn.execute("SELECT count(*) FROM support_sentences").fetchone() == (0,)


def test_a_dry_run_prints_counts_and_cost_and_calls_and_writes_nothing(bench, llm_server, cli_run):
    ws, files = bench
    llm_server.script(scripted(MODEL))
    r = cli_run(*support_args(ws, files, llm_server, "--dry-run"))
    assert r.exit_code == 0, r.output
    assert llm_server.requests == []
    assert "8 sentence-citation pairs to grade in 8 calls" in r.stderr
    assert re.search(r"dry run: at most 8 calls to the model \(0 answered by the cache\), \d+ input tokens for 8 "
                     r"pairs, ~\d+ output tokens, \$0\.\d{4}", r.stdout), r.stdout
    with sqlite3.connect(ws / "bench.sqlite") as conn:
        assert conn.execute("SELECT (SELECT count(*) FROM support_sentences) + (SELECT count(*) FROM judges) + "
                            "(SELECT count(*) FROM support_judgments)").fetchone() == (0,)


def test_a_dry_run_counts_the_pairs_the_cache_would_answer(bench, llm_server, cli_run):
    ws, files = bench
    llm_server.script(scripted(MODEL))
    assert cli_run(*support_args(ws, files, llm_server, "--limit", "3")).exit_code == 0
    assert len(llm_server.requests) == 3
    with sqlite3.connect(ws / "bench.sqlite") as conn:
        conn.execute("DELETE FROM support_judgments")  # the grades gone, the replies still cached
    r = cli_run(*support_args(ws, files, llm_server, "--dry-run"))
    assert r.exit_code == 0, r.output
    assert "dry run: at most 5 calls to the model (3 answered by the cache)" in r.stdout
    r = cli_run(*support_args(ws, files, llm_server))
    assert r.exit_code == 0, r.output
    assert len(llm_server.requests) == 8 and "5 calls (3 from cache)" in r.stdout


def test_max_cost_stops_before_spending(bench, llm_server, cli_run):
    ws, files = bench
    llm_server.script(scripted(MODEL))
    r = cli_run(*support_args(ws, files, llm_server, "--max-cost", "0"))
    assert r.exit_code == 3, r.output
    assert llm_server.requests == [] and support_rows(ws) == []
    assert "stopped early" in r.stderr


def lease_then_judge(bench, server, holder_of):
    """Register run A's sentences, lease its pair (sentence 0, d2) to `holder_of(judge name)`, judge every file
    through Python; (the run, the pairs asked about, the live leases after it)."""
    import time

    from trecbench.answers import read_answers
    from trecbench.answers.support import answer_sentences
    from trecbench.judging.support import judge_support
    from trecbench.llm import ModelConfig
    from trecbench.store import Workspace

    ws_path, files = bench
    ws = Workspace(ws_path)
    config = ModelConfig(MODEL_NAME, api_base=server.base_url, api_key="test")
    name = judge_support(ws, files, config, dry_run=True).judge.name
    ws.register_sentences(answer_sentences(read_answers(files[0])))
    ws.take_support_pairs(holder_of(name), [("A", "t1", 0, "d2")], expires_at=time.time() + 600, at=time.time())
    server.script(scripted(MODEL))
    run = judge_support(ws, files, config)
    return run, [request_pair(b) for b in server.requests], ws.support_leases(time.time())


def test_a_pair_another_live_run_of_the_judge_holds_is_left_to_it(bench, llm_server):
    from trecbench.store.assessors import model_holder

    holders = {}
    run, asked, leases = lease_then_judge(bench, llm_server, lambda name: holders.setdefault("h", model_holder(name)))
    assert (run.report.judged, run.report.shared, len(asked)) == (7, 1, 7) and ("A", 0, "d2") not in asked
    assert leases == {("A", "t1", 0, "d2"): holders["h"]}  # ours were all given back, the other run's kept


def test_a_lease_of_a_person_or_another_judge_does_not_keep_the_model_from_a_pair(bench, llm_server):
    run, asked, leases = lease_then_judge(bench, llm_server, lambda name: "alice")
    assert (run.report.judged, run.report.shared, len(asked)) == (8, 0, 8) and ("A", 0, "d2") in asked
    assert leases == {("A", "t1", 0, "d2"): "alice"}  # asked without a lease: the person's is untouched


def test_the_lease_of_a_run_of_the_judge_that_died_is_taken_over_at_once(bench, llm_server):
    import subprocess
    import sys

    from trecbench.store.assessors import MODEL_HOLDER, machine_id

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(gone.stdout)
    run, asked, leases = lease_then_judge(bench, llm_server,
                                          lambda name: f"{MODEL_HOLDER}{machine_id()}{dead:08x}beef {name}")
    assert (run.report.judged, run.report.shared, len(asked)) == (8, 0, 8) and leases == {}


def test_the_contradicts_scale_is_a_judge_of_its_own_and_a_bad_scale_is_refused(bench, llm_server, cli_run):
    ws, files = bench
    llm_server.script(then='{"grade": "contradicts", "reason": "says the opposite"}')
    r = cli_run(*support_args(ws, files[:1], llm_server, "--limit", "1", "--grades", "full,partial,none,contradicts"))
    assert r.exit_code == 0, r.output
    row = support_rows(ws)[0]
    assert row[3:5] == ("contradicts", "ok") and ":support-contradicts@" in row[6]
    assert "contradicts - " in llm_server.requests[0]["messages"][0]["content"]
    r = cli_run(*support_args(ws, files[:1], llm_server, "--grades", "yes,no"))
    assert r.exit_code == 2 and "the support grades are full,partial,none or" in r.output


def test_agreement_with_people_equals_the_hand_computation(bench, llm_server, cli_run):
    ws, files = bench
    llm_server.script(scripted(MODEL))
    assert cli_run(*support_args(ws, files, llm_server)).exit_code == 0
    record_people(ws)
    r = cli_run("judge", "support-agreement", "-w", ws, "--format", "json")
    assert r.exit_code == 0, r.output
    (got,) = json.loads(r.stdout)
    # Confusion (rows people, columns the model; full, partial, none):
    #   full    3 0 0      people full: A0d1, A1d3, C1d4, all full for the model
    #   partial 1 1 0      A0d2 the model calls full; B1d4 partial
    #   none    1 0 2      B0d1 the model calls full; C0d2, C0d3 none
    assert got["confusion"] == {"full": {"full": 3, "partial": 0, "none": 0},
                                "partial": {"full": 1, "partial": 1, "none": 0},
                                "none": {"full": 1, "partial": 0, "none": 2}}
    assert got["pairs"] == 8 and got["exact"] == pytest.approx(6 / 8)
    # kappa: p_o = 6/8; marginals rows 3,2,3 and columns 5,1,2 -> p_e = (15 + 2 + 6) / 64 = 23/64;
    # (48/64 - 23/64) / (41/64) = 25/41
    assert got["kappa"] == pytest.approx(25 / 41)
    # binarised (supported = full or partial): [[2, 1], [0, 5]] -> p_o = 7/8, p_e = (3*2 + 5*6)/64 = 36/64;
    # (56 - 36) / (64 - 36) = 5/7
    assert got["kappa_binary"] == pytest.approx(5 / 7)
    # runs (one topic): people A P = (1 + .5 + 1)/3, R = (1 + 1)/2; B P = (0 + .5)/2, R = (0 + .5)/2;
    # C P = (0 + 0 + 1)/3, R = (0 + 1)/2.  The model: A P 1, R 1; B P = (1 + .5)/2, R = .75; C as people.
    scores = got["scores"]
    assert scores["A"] == pytest.approx({"precision_reference": 2.5 / 3, "precision_judge": 1.0,
                                         "recall_reference": 1.0, "recall_judge": 1.0})
    assert scores["B"] == pytest.approx({"precision_reference": 0.25, "precision_judge": 0.75,
                                         "recall_reference": 0.25, "recall_judge": 0.75})
    assert scores["C"] == pytest.approx({"precision_reference": 1 / 3, "precision_judge": 1 / 3,
                                         "recall_reference": 0.5, "recall_judge": 0.5})
    # orderings: people A > C > B, the model A > B > C on both measures: 2 concordant pairs, 1 discordant,
    # no ties -> tau = (2 - 1) / 3
    assert got["tau_precision"] == pytest.approx(1 / 3) and got["tau_recall"] == pytest.approx(1 / 3)
    assert got["verdict"] == "poor" and got["reference"] == "people"
    r = cli_run("judge", "support-agreement", "-w", ws)
    assert r.exit_code == 0 and "8 pairs, exact agreement 0.750, kappa 0.610, binarised" in r.stdout
    assert "verdict: good = " in r.stdout


def test_agreement_without_people_grades_is_a_clear_error(bench, cli_run):
    ws, _ = bench
    r = cli_run("judge", "support-agreement", "-w", ws)
    assert r.exit_code == 2 and "no person has graded support in this workspace" in r.stderr


def test_the_blind_sample_is_stratified_by_run_and_kept_in_the_workspace(bench, llm_server, cli_run):
    ws, files = bench
    llm_server.script(scripted(MODEL))
    assert cli_run(*support_args(ws, files, llm_server, "--dry-run")).exit_code == 0  # a dry run registers nothing
    r = cli_run("judge", "support-agreement", "-w", ws, "--sample", "3")
    assert r.exit_code == 2 and "no sentence-citation pair to sample" in r.stderr
    assert cli_run(*support_args(ws, files, llm_server, "--limit", "1")).exit_code == 0
    r = cli_run("judge", "support-agreement", "-w", ws, "--sample", "3", "--seed", "7")
    assert r.exit_code == 0, r.output
    assert "3 sentence-citation pairs" in r.stdout and "A\t1 of 3" in r.stdout and "C\t1 of 3" in r.stdout
    from trecbench.judging.support_agreement import support_sample
    from trecbench.store import Workspace

    sample = support_sample(Workspace(ws))
    assert sorted(k[0] for k in sample.pairs) == ["A", "B", "C"]
    assert all(k[1] == "t1" and k[3] in DOCS for k in sample.pairs)
    r = cli_run("judge", "support-agreement", "-w", ws, "--sample", "3")
    assert r.exit_code == 2 and "a support sample named 'support-validation' exists" in r.stderr


def test_people_graded_pairs_are_left_out_of_the_sample(bench, llm_server, cli_run):
    ws, files = bench
    llm_server.script(scripted(MODEL))
    assert cli_run(*support_args(ws, files, llm_server)).exit_code == 0
    record_people(ws)
    r = cli_run("judge", "support-agreement", "-w", ws, "--sample", "3")
    assert r.exit_code == 2 and "people graded them all" in r.stderr


def test_the_reply_reader_takes_the_final_answer_and_refuses_an_echo():
    from trecbench.judging.support import parse_support, vote_support
    from trecbench.llm.errors import ParseError

    assert parse_support('draft {"grade": "none"} final {"grade": "Partial support", "reason": "r"}') == ("partial", "r")
    assert parse_support('{"grade": "FULL"}') == ("full", "")
    with pytest.raises(ParseError, match="format example"):
        parse_support('{"grade": "<full, partial or none>", "reason": "<why, in a few words>"}')
    with pytest.raises(ParseError, match="is not one of"):
        parse_support('{"grade": "contradicts"}')
    assert vote_support(["full", "partial", "partial"]) == "partial"
    assert vote_support(["full", "none"]) == "none"  # a tie goes to the weaker support


def test_kendall_tau_and_run_scores_by_hand():
    from trecbench.judging.support_agreement import kendall_tau, run_scores

    assert kendall_tau({"a": 3, "b": 2, "c": 1}, {"a": 1, "b": 2, "c": 3}) == pytest.approx(-1.0)
    assert kendall_tau({"a": 1, "b": 2}, {"a": 1, "b": 2, "c": 9}) == pytest.approx(1.0)  # runs both score
    assert kendall_tau({"a": 1}, {"a": 2}) != kendall_tau({"a": 1}, {"a": 2})  # nan: one run orders nothing
    # two topics: on t1 P 1, R 1; on t2 P = (.5 + 0 + 0)/3 = 1/6 and R = (max(.5, 0) + 0)/2 = .25 (contradicts
    # weighs 0) -> the means P = (1 + 1/6)/2 = 7/12, R = (1 + .25)/2 = .625 (SupportP and SupportR, macro)
    grades = {("r", "t1", 0, "d1"): "full", ("r", "t2", 0, "d1"): "partial",
              ("r", "t2", 0, "d2"): "none", ("r", "t2", 1, "d3"): "contradicts"}
    scores = run_scores(grades)
    assert scores == {"r": pytest.approx((7 / 12, 0.625))}
    # the numbers are evaluation.support's scorer's on the same pairs (its one home), not a second formula
    from trecbench.evaluation.support import score_support
    from trecbench.store.support import SupportSentence

    sentences = [SupportSentence("r", "t1", 0, "", "", ("d1",)), SupportSentence("r", "t2", 0, "", "", ("d1", "d2")),
                 SupportSentence("r", "t2", 1, "", "", ("d3",))]
    run = score_support(sentences, grades).frame.loc[("r", "all")]
    assert scores["r"] == pytest.approx((run["SupportP"], run["SupportR"]))


def test_the_people_s_grade_of_a_pair_is_the_newest_person_s_as_eval_support_chooses(bench, llm_server, cli_run):
    from trecbench.answers.support import sentence_hash
    from trecbench.evaluation.support import chosen_grades
    from trecbench.store import Judge, Workspace
    from trecbench.store.support import SupportJudgment

    ws, files = bench
    llm_server.script(scripted(MODEL))
    assert cli_run(*support_args(ws, files, llm_server)).exit_code == 0
    record_people(ws)
    workspace = Workspace(ws)  # bob regrades A0d2 after alice, as the model does: the people's grade is now full
    workspace.record_support([SupportJudgment("A", "t1", 0, "d2", sentence_hash(ANSWERS["A"][0][0]), "full",
                                              Judge("human", "bob"))])
    assert chosen_grades(workspace.support_rows(kind="human"))[("A", "t1", 0, "d2")] == "full"
    r = cli_run("judge", "support-agreement", "-w", ws, "--format", "json")
    (got,) = json.loads(r.stdout)
    assert got["pairs"] == 8 and got["exact"] == pytest.approx(7 / 8)  # only B0d1 differs now
    assert got["confusion"]["full"] == {"full": 4, "partial": 0, "none": 0}
    # people's A: P = (1 + 1 + 1)/3 = 1, as the model's
    assert got["scores"]["A"]["precision_reference"] == pytest.approx(1.0)


def test_the_sample_answers_are_judged_through_the_cli(tmp_path, llm_server, cli_run):
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv").exit_code == 0
    answers = sorted((SAMPLE / "answers").glob("*.jsonl"))
    llm_server.script(then='{"grade": "partial", "reason": "scripted"}')
    r = cli_run("judge", "support", "-w", bench, *answers, "--model", MODEL_NAME, "--api-base", llm_server.base_url,
                "--api-key", "test", "--quiet", "--samples", "3")
    assert r.exit_code == 0, r.output
    pairs = int(re.search(r"(\d+) sentence-citation pairs to grade in (\d+) calls", r.stderr).group(1))
    cached = int(re.search(r"\((\d+) from cache\)", r.stdout).group(1))  # runs citing a passage for the same sentence
    assert pairs > 0 and len(llm_server.requests) + cached == 3 * pairs
    assert {b["seed"] for b in llm_server.requests} == {0, 1, 2} and llm_server.requests[0]["temperature"] == 0.7
    assert f"judged {pairs}, failed 0" in r.stdout
    with sqlite3.connect(bench / "bench.sqlite") as conn:
        assert conn.execute("SELECT count(DISTINCT run_id), count(*) FROM support_sentences").fetchone()[0] == 3
        assert conn.execute("SELECT DISTINCT grade, status FROM support_judgments").fetchall() == [("partial", "ok")]
        (name,) = conn.execute("SELECT name FROM judges").fetchone()
    assert name.startswith("openai/gpt-4o-mini:support@") and name.endswith(":samples=3:temperature=0.7")
