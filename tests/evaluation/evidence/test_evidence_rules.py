"""Evidence and context recall edges: permissions that fail closed, unsupported nuggets, averaging, duplicates."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from cli_support import bench_with_a_duplicate, cited_answer, write_jsonl as write
from trecbench.evaluation.evidence.duplicates import duplicate_groups
from trecbench.evaluation.evidence.recall import EvidenceItem, Permissions, StagedContexts, evaluate_evidence, read_permissions



def json_scores(stdout: str) -> dict:
    return {entry["run"]: entry for entry in json.loads(stdout)}


EVIDENCE = [{"qid": "T7", "evidence": [{"id": "E1", "any_of": [["SECRET"]]}, {"id": "E2", "any_of": [["A"]]}]},
            {"qid": "T8", "evidence": [{"id": "E1", "any_of": [["B"]]}]}]
CONTEXTS = [{"qid": "T7", "docids": ["SECRET", "X"], "run_id": "sys"}, {"qid": "T8", "docids": ["B"], "run_id": "sys"}]


def test_permissions_warn_of_topics_without_an_entry_and_ids_that_match_only_when_folded(tmp_path, cli_run):
    acl = write(tmp_path, [{"qid": "t7", "allow": ["a "]}], "acl.jsonl")
    args = ["eval", "evidence", "--evidence", write(tmp_path, EVIDENCE, "ev.jsonl"), "--contexts",
            write(tmp_path, CONTEXTS, "ctx.jsonl"), "--permissions", acl, "--format", "json"]
    result = cli_run(*args)
    assert result.exit_code == 0, result.output
    assert "permissions: entry 't7' matches topic 'T7' only after case/whitespace folding; ids must match exactly" \
        in result.stderr
    assert "permissions: 2 topic(s) have no entry, they are unrestricted (use default deny to refuse them): T7 T8" \
        in result.stderr
    assert "permissions: docid 'a ' matches document 'A' only after case/whitespace folding" in result.stderr
    scores = json_scores(result.stdout)["sys"]
    assert scores["all"]["EvidenceRecall@10"] == 0.75 and len(scores["permission_warnings"]) == 3
    # default deny: T7 and T8 may see nothing, so nothing is required of them and what they retrieved leaks
    denied = cli_run(*args, "--permissions-default", "deny")
    assert denied.exit_code == 0, denied.output
    assert "they may see no document (default deny): T7 T8" in denied.stderr
    assert "sys: 3 retrieved document(s) the topic may not see: T7:SECRET T7:X T8:B" in denied.stderr
    assert json_scores(denied.stdout)["sys"]["all"]["EvidenceRecall@10"] is None


def write_acl(tmp_path: Path) -> Path:
    return write(tmp_path, [{"qid": "T7", "allow": ["A"]}], "acl.jsonl")


def test_default_deny_in_python_and_an_exact_entry_restricts(tmp_path):
    items = [EvidenceItem("T7", "E1", (("SECRET",),)), EvidenceItem("T7", "E2", (("A",),))]
    system = StagedContexts("s", ("final",), {"T7": {"final": ("A",)}})
    exact = evaluate_evidence(items, system, permissions=Permissions({"T7": frozenset({"A"})}))
    assert exact.frame.loc[("s", "T7"), "EvidenceRecall@10"] == 1.0 and exact.warnings == []
    deny = evaluate_evidence(items, system, permissions=Permissions({}, default="deny"))
    assert read_permissions(write_acl(tmp_path), default="deny").default == "deny"
    assert pd.isna(deny.frame.loc[("s", "T7"), "EvidenceRecall@10"]) and deny.no_evidence == ["T7"]


def test_nuggets_without_support_are_reported_and_counted(tmp_path, cli_run):
    nuggets = write(tmp_path, [{"qid": "T5", "nuggets": [
        {"id": "T5-n1", "text": "a", "support": [["A"]]}, {"id": "T5-n2", "text": "b"}]},
        {"qid": "T6", "nuggets": [{"id": "T6-n1", "text": "c"}]}], "nuggets.jsonl")
    contexts = write(tmp_path, [{"qid": "T5", "docids": ["A"], "run_id": "sys"}], "ctx.jsonl")
    result = cli_run("eval", "evidence", "--nuggets", nuggets, "--contexts", contexts, "--format", "json", "-q")
    assert result.exit_code == 0, result.output
    assert "2 nugget(s) not required, no evidence (no supporting documents): T5:T5-n2 T6:T6-n1" in result.stderr
    scores = json_scores(result.stdout)["sys"]
    assert scores["not_required_without_evidence"] == ["T5:T5-n2", "T6:T6-n1"]
    assert scores["topics"]["T5"]["EvidenceRecall@10"] == 1.0 and scores["topics"]["T6"]["EvidenceRecall@10"] is None
    assert scores["topics_without_evidence"] == ["T6"]


def test_macro_and_micro_averages_are_named_in_the_output_and_help(tmp_path, cli_run):
    # T1 has 1 item covered, T2 3 items with 1 covered: macro (1 + 1/3) / 2, micro 2 / 4
    evidence = write(tmp_path, [{"qid": "T1", "evidence": [{"id": "E1", "any_of": [["A"]]}]},
                                {"qid": "T2", "evidence": [{"id": f"E{i}", "any_of": [[f"B{i}"]]} for i in (1, 2, 3)]}],
                     "ev.jsonl")
    contexts = write(tmp_path, [{"qid": "T1", "docids": ["A"], "run_id": "sys"},
                                {"qid": "T2", "docids": ["B1"], "run_id": "sys"}], "ctx.jsonl")
    result = cli_run("eval", "evidence", "--evidence", evidence, "--contexts", contexts, "--funnel")
    assert result.exit_code == 0, result.output
    assert "0.6667" in result.stdout.splitlines()[1]  # EvidenceRecall@10, macro
    assert "share is micro: all topics' items pooled, while EvidenceRecall@10 above is the macro mean over topics" \
        in result.stdout
    assert "0.5000" in result.stdout.split("funnel")[1]
    as_json = json_scores(cli_run("eval", "evidence", "--evidence", evidence, "--contexts", contexts, "--format",
                                  "json").stdout)["sys"]
    assert "macro" in as_json["averaging"]["EvidenceRecall@k, CompleteEvidence@k, IDRecall@k"]
    assert "micro" in as_json["averaging"]["funnel share"]
    helptext = " ".join(cli_run("eval", "evidence", "--help").stdout.split())
    assert "macro mean over topics" in helptext and "shares are micro" in helptext


# --- duplicate groups of the workspace's pool ----------------------------------------------------------

@pytest.fixture
def bench(tmp_path):
    return bench_with_a_duplicate(tmp_path, "rep", "dup", "other")  # dup is a duplicate of rep


def test_duplicate_groups_come_from_the_workspace_pool(bench):
    groups = duplicate_groups(bench)
    assert groups.same("q1", "dup") == "rep" and groups.same("q1", "other") == "other"
    assert groups.same("q2", "dup") == "dup"  # groups are per topic


def test_evidence_counts_a_retrieved_duplicate_as_its_twin_unless_told_not_to(bench, tmp_path, cli_run):
    evidence = write(tmp_path, [{"qid": "q1", "evidence": [{"id": "E1", "any_of": [["rep"]]}]}], "ev.jsonl")
    contexts = write(tmp_path, [{"qid": "q1", "docids": ["dup"], "run_id": "sys"}], "ctx.jsonl")
    args = ["eval", "evidence", "--evidence", evidence, "--contexts", contexts, "--format", "json"]
    alone = cli_run(*args)
    assert json_scores(alone.stdout)["sys"]["all"]["EvidenceRecall@10"] == 0.0
    same = cli_run(*args, "-w", bench)
    assert same.exit_code == 0, same.output
    assert json_scores(same.stdout)["sys"]["all"]["EvidenceRecall@10"] == 1.0
    assert "1 retrieved document(s) in the top k scored as their duplicate group's representative" in same.stderr
    distinct = cli_run(*args, "-w", bench, "--duplicates", "distinct")
    assert json_scores(distinct.stdout)["sys"]["all"]["EvidenceRecall@10"] == 0.0


def test_id_context_recall_counts_a_group_once(bench, tmp_path, cli_run):
    # qrels give rep and its propagated duplicate a grade: retrieving either is retrieving the one document
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 rep 2\nq1 propagated dup 2\nq1 0 other 0\n")
    contexts = write(tmp_path, [{"qid": "q1", "docids": ["dup"], "run_id": "sys"}], "ctx.jsonl")
    args = ["eval", "context-recall", "--contexts", contexts, "--qrels", qrels, "--format", "json"]
    assert json_scores(cli_run(*args).stdout)["sys"]["all"]["IDContextRecall"] == 0.5
    assert json_scores(cli_run(*args, "-w", bench).stdout)["sys"]["all"]["IDContextRecall"] == 1.0
    assert json_scores(cli_run(*args, "-w", bench, "--duplicates", "distinct").stdout)["sys"]["all"][
        "IDContextRecall"] == 0.5


def test_the_citation_assigner_takes_a_cited_duplicate_for_its_twin(bench, tmp_path, cli_run):
    nuggets = write(tmp_path, [{"qid": "q1", "query": "q", "nuggets": [
        {"text": "Nuclear power emits very little carbon dioxide", "importance": "vital", "support": [["rep"]]}]}],
        "n.jsonl")
    answers = cited_answer(tmp_path, ["dup"], topic="q")
    args = ["eval", "answers", "--nuggets", nuggets, answers, "--format", "csv"]
    assert "r1,all,V_strict,0.0" in cli_run(*args).stdout  # partial_support: cites a document the nugget lacks
    same = cli_run(*args, "-w", bench)
    assert same.exit_code == 0, same.output
    assert "r1,all,V_strict,1.0" in same.stdout
    assert "r1,all,V_strict,0.0" in cli_run(*args, "-w", bench, "--duplicates", "distinct").stdout


# --- context recall with a model ---------------------------------------------------------------------

CLAIMS = {"claims": [{"claim": "Paris is the capital.", "attributed": True, "passages": [1], "reason": "p1"}]}


def test_llm_context_recall_exits_1_on_incomplete_topics_calls_nothing_without_context_and_says_true_things(
        llm_server, tmp_path, cli_run, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    contexts = write(tmp_path, [{"qid": "q1", "contexts": [{"id": "d1", "text": "Paris is the capital."}]},
                                {"qid": "q2", "contexts": [{"id": "d2", "text": "Nothing."}]},
                                {"qid": "q3", "contexts": [{"id": "d3", "text": "Nothing either."}]},
                                {"qid": "q4", "contexts": []}], "ctx.jsonl")
    refs = write(tmp_path, [{"qid": q, "reference": f"Reference {q}."} for q in ("q1", "q2", "q3", "q4")], "refs.jsonl")

    def reply(body):
        content = " ".join(m["content"] for m in body["messages"])
        if "Reference q2." in content:
            return "not json at all"
        if "Reference q3." in content:
            return json.dumps({"claims": []})
        return json.dumps(CLAIMS)

    llm_server.script(reply)
    result = cli_run("eval", "context-recall", "--mode", "llm", "--model", "openai/judge", "--api-base",
                     llm_server.base_url, "--cache", tmp_path / "c.sqlite", "--contexts", contexts, "--references", refs,
                     "--missing", "zero", "--format", "json", "-q")
    assert result.exit_code == 1, result.output
    scores = json_scores(result.stdout)["ctx"]
    assert [scores["topics"][q]["LLMContextRecall"] for q in ("q1", "q2", "q3", "q4")] == [1.0, None, None, 0.0]
    assert not any("Reference q4." in r["messages"][-1]["content"] for r in llm_server.requests)
    assert "1 topic(s), no score: the reference answer has no claims: q3" in result.stderr
    assert "1 topic(s), scored 0: no retrieved context: q4" in result.stderr
    assert "1 (run, topic) model call(s) failed; run again to retry them" in result.stderr
    assert scores["incomplete_topics"] == ["q2"]
