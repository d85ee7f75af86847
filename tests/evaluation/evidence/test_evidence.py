"""Evidence recall with alternative and joint sources, the stage funnel, and permissions (hand-computed)."""
from __future__ import annotations

import json
import math

import pytest

from cli_support import write_jsonl as write

from trecbench.errors import InputError
from trecbench.evaluation.evidence.recall import (
    EvidenceItem,
    Permissions,
    StagedContexts,
    evaluate_evidence,
    read_contexts,
    read_evidence,
    read_permissions,
)

# E1 is supported by A or by B, E2 by C, E3 by D
ITEMS = [EvidenceItem("q1", "E1", (("A",), ("B",))), EvidenceItem("q1", "E2", (("C",),)),
         EvidenceItem("q1", "E3", (("D",),))]


def system(name: str, stages: dict[str, list[str]], qid: str = "q1") -> StagedContexts:
    return StagedContexts(name, tuple(stages), {qid: {s: tuple(d) for s, d in stages.items()}})


def scores_of(result, run: str, qid: str = "q1") -> dict[str, float]:
    return result.frame.loc[(run, qid)].to_dict()



def test_retrieving_a_and_c_covers_two_of_three_items_and_two_of_four_sources():
    result = evaluate_evidence(ITEMS, system("s", {"final": ["A", "C"]}), k=10)
    assert scores_of(result, "s") == {"EvidenceRecall@10": 2 / 3, "CompleteEvidence@10": 0.0, "IDRecall@10": 2 / 4}


def test_retrieving_both_alternatives_of_one_item_counts_it_once():
    result = evaluate_evidence(ITEMS, system("s", {"final": ["A", "B"]}), k=10)
    assert scores_of(result, "s") == {"EvidenceRecall@10": 1 / 3, "CompleteEvidence@10": 0.0, "IDRecall@10": 2 / 4}


def test_a_joint_group_needs_both_chunks():
    items = [EvidenceItem("q1", "E1", (("C1", "C2"),))]
    half = evaluate_evidence(items, system("s", {"final": ["C1", "X"]}), k=10)
    both = evaluate_evidence(items, system("s", {"final": ["C2", "X", "C1"]}), k=10)
    assert scores_of(half, "s")["EvidenceRecall@10"] == 0.0
    assert scores_of(half, "s")["IDRecall@10"] == 0.5
    assert scores_of(both, "s") == {"EvidenceRecall@10": 1.0, "CompleteEvidence@10": 1.0, "IDRecall@10": 1.0}
    cut = evaluate_evidence(items, system("s", {"final": ["C2", "X", "C1"]}), k=2)
    assert scores_of(cut, "s")["EvidenceRecall@2"] == 0.0


def test_complete_evidence_is_the_share_of_topics_with_every_item_covered():
    items = ITEMS + [EvidenceItem("q2", "E1", (("Z",),))]
    contexts = StagedContexts("s", ("final",), {"q1": {"final": ("A", "C")}, "q2": {"final": ("Z",)}})
    result = evaluate_evidence(items, contexts, k=10)
    assert result.frame.loc[("s", "all"), "CompleteEvidence@10"] == 0.5
    assert result.frame.loc[("s", "all"), "EvidenceRecall@10"] == pytest.approx((2 / 3 + 1) / 2)


def test_the_funnel_shows_the_reranker_losing_e2():
    staged = system("s", {"initial": ["A", "C", "D", "X"], "filtered": ["A", "C", "D"], "reranked": ["A", "D"],
                          "final": ["A", "D"]})
    result = evaluate_evidence(ITEMS, staged, k=10)
    funnel = {f.item: (f.last_stage, f.lost_at) for f in result.funnel}
    assert funnel == {"E1": ("final", ""), "E2": ("filtered", "reranked"), "E3": ("final", "")}
    summary = result.stage_summary()
    reranked = summary[summary["stage"] == "reranked"].iloc[0]
    assert (reranked["present"], reranked["required"], reranked["lost_here"]) == (2, 3, 1)
    assert summary["stage"].tolist() == ["initial", "filtered", "reranked", "final", "cut@10", "never retrieved"]


def test_items_never_retrieved_and_items_below_the_cut_are_told_apart():
    staged = system("s", {"initial": ["X", "A", "C"], "final": ["X", "Y", "C"]})
    result = evaluate_evidence(ITEMS, staged, k=2)
    funnel = {f.item: (f.last_stage, f.lost_at) for f in result.funnel}
    assert funnel == {"E1": ("initial", "final"), "E2": ("final", "cut@2"), "E3": ("", "never retrieved")}


def test_permissions_drop_sources_a_topic_may_not_see_and_do_not_count_them_as_misses():
    permissions = Permissions({"q1": frozenset({"A", "C", "group:team"})}, {"team": frozenset({"X"})})
    result = evaluate_evidence(ITEMS, system("s", {"final": ["A", "C", "X"]}), k=10, permissions=permissions)
    # E1 keeps its alternative A (B is hidden), E2 stays, E3 needs D, which q1 may not see: not required
    assert scores_of(result, "s") == {"EvidenceRecall@10": 1.0, "CompleteEvidence@10": 1.0, "IDRecall@10": 1.0}
    assert [(d.item, d.sources, d.item_dropped) for d in result.dropped] == [("E1", ("B",), False),
                                                                             ("E3", ("D",), True)]
    assert result.leaks == {"s": []}


def test_retrieved_documents_a_topic_may_not_see_are_reported():
    permissions = Permissions({"q1": frozenset({"A", "B", "C", "D"})})
    result = evaluate_evidence(ITEMS, system("s", {"final": ["A", "SECRET"]}), k=10, permissions=permissions)
    assert result.leaks == {"s": [("q1", "SECRET")]}


def test_a_topic_whose_items_are_all_hidden_has_no_score_and_is_listed():
    permissions = Permissions({"q1": frozenset()})
    result = evaluate_evidence(ITEMS, system("s", {"final": ["A"]}), k=10, permissions=permissions)
    assert result.no_evidence == ["q1"]
    assert math.isnan(result.frame.loc[("s", "q1"), "EvidenceRecall@10"])


def test_an_evidence_topic_missing_from_the_contexts_scores_zero_or_is_skipped():
    items = ITEMS + [EvidenceItem("q2", "E1", (("Z",),))]
    zero = evaluate_evidence(items, system("s", {"final": ["A", "C", "D"]}), k=10)
    assert zero.frame.loc[("s", "all"), "EvidenceRecall@10"] == 0.5
    assert zero.missing == {"s": ["q2"]}
    skip = evaluate_evidence(items, system("s", {"final": ["A", "C", "D"]}), k=10, missing_topics="skip")
    assert skip.frame.loc[("s", "all"), "EvidenceRecall@10"] == 1.0


def test_files_evidence_staged_contexts_and_permissions_are_read(tmp_path):
    evidence = write(tmp_path, [{"qid": "q1", "evidence": [{"id": "E1", "text": "t", "any_of": [["A"], ["B"]]},
                                                           {"id": "E2", "any_of": [["C1", "C2"]]}]}], "ev.jsonl")
    contexts = write(tmp_path, [{"qid": "q1", "stage": "initial", "docids": ["A", "C1", "C2"], "run_id": "sys"},
                                {"qid": "q1", "stage": "final", "docids": ["A", "A", "C1"], "run_id": "sys"}],
                     "ctx.jsonl")
    acl = write(tmp_path, [{"qid": "q1", "allow": ["A", "group:g"]}, {"group": "g", "docids": ["C1"]}], "acl.jsonl")
    items = read_evidence(evidence)
    assert items[1] == EvidenceItem("q1", "E2", (("C1", "C2"),))
    staged = read_contexts(contexts)
    assert (staged.run, staged.stages, staged.ids("q1")) == ("sys", ("initial", "final"), ("A", "A", "C1"))
    permissions = read_permissions(acl)
    assert permissions.visible("q1", "C1") and not permissions.visible("q1", "C2") and permissions.visible("q9", "Z")


def test_a_trec_run_is_one_stage_ranked_as_trec_eval_ranks(tmp_path):
    run = write(tmp_path, ["q1 Q0 C 1 1.0 bm25", "q1 Q0 A 2 2.0 bm25", "q1 Q0 B 3 1.0 bm25"], "run.txt")
    staged = read_contexts(run)
    assert (staged.run, staged.stages, staged.ids("q1")) == ("bm25", ("retrieved",), ("A", "C", "B"))
    result = evaluate_evidence(ITEMS, staged, k=2)
    assert scores_of(result, "bm25")["EvidenceRecall@2"] == 2 / 3


def test_bad_evidence_lists_every_problem(tmp_path):
    path = write(tmp_path, [{"qid": "q1", "evidence": [{"id": "E1", "any_of": []}, {"id": "E2", "any_of": [["A"]]},
                                                       {"id": "E2", "any_of": [["B"]]}]},
                            {"evidence": []}, "nope"], "ev.jsonl")
    with pytest.raises(InputError) as e:
        read_evidence(path)
    assert [str(p) for p in e.value.problems] == [
        f"{path}:1: topic 'q1', evidence 1: 'any_of' must be a non-empty list of non-empty lists of docids, "
        'e.g. [["d1"], ["d2", "d3"]]',
        f"{path}:1: topic 'q1', evidence 3: id 'E2' is used twice",
        f"{path}:2: missing or empty 'qid'",
        f"{path}:3: invalid JSON: Expecting value (column 1)",
    ]


def test_eval_evidence_command_prints_measures_funnel_and_permission_notes(tmp_path, cli_run):
    evidence = write(tmp_path, [{"qid": "q1", "evidence": [{"id": "E1", "any_of": [["A"], ["B"]]},
                                                           {"id": "E2", "any_of": [["C"]]},
                                                           {"id": "E3", "any_of": [["D"]]}]}], "ev.jsonl")
    contexts = write(tmp_path, [{"qid": "q1", "stage": "initial", "docids": ["A", "C", "D"]},
                                {"qid": "q1", "stage": "reranked", "docids": ["A", "D"]}], "sys.jsonl")
    result = cli_run("eval", "evidence", "--evidence", evidence, "--contexts", contexts, "-k", "10", "--funnel", "-q")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["run", "topic", "EvidenceRecall@10", "CompleteEvidence@10", "IDRecall@10"]
    assert lines[1].split() == ["sys", "q1", "0.6667", "0.0000", "0.5000"]
    assert any(line.split()[:3] == ["sys", "q1", "E2"] and line.split()[-1] == "reranked" for line in lines)
    acl = write(tmp_path, [{"qid": "q1", "allow": ["A", "B", "C"]}], "acl.jsonl")
    result = cli_run("eval", "evidence", "--evidence", evidence, "--contexts", contexts, "--permissions", acl,
                     "--format", "json")
    doc = json.loads(result.stdout)
    # E3 (D) is not required; E1 (A or B) is covered, E2 (C) is not; of the sources A, B, C only A came back
    assert doc[0]["all"] == {"EvidenceRecall@10": 0.5, "CompleteEvidence@10": 0.0, "IDRecall@10": 1 / 3}
    assert "item E3: not permitted to see D; no longer required" in result.stderr
    assert "1 retrieved document(s) the topic may not see: q1:D" in result.stderr


def test_eval_evidence_takes_evidence_from_a_nuggets_file(tmp_path, cli_run):
    nuggets = write(tmp_path, [{"qid": "q1", "nuggets": [{"text": "a", "support": [["A"], ["B"]]},
                                                         {"text": "b", "support": [["C"]]},
                                                         {"text": "no support"}]}], "nuggets.jsonl")
    run = write(tmp_path, ["q1 Q0 B 1 2 sys"], "run.txt")
    result = cli_run("eval", "evidence", "--nuggets", nuggets, "--contexts", run, "--format", "csv")
    assert result.exit_code == 0
    assert "sys,all,EvidenceRecall@10,0.5" in result.stdout


def test_bad_contexts_file_exits_2_without_traceback(tmp_path, cli_run):
    evidence = write(tmp_path, [{"qid": "q1", "evidence": [{"id": "E1", "any_of": [["A"]]}]}], "ev.jsonl")
    contexts = write(tmp_path, [{"qid": "q1", "docids": "A"}], "c.jsonl")
    result = cli_run("eval", "evidence", "--evidence", evidence, "--contexts", contexts)
    assert result.exit_code == 2
    assert result.stderr == f"{contexts}:1: 'docids' must be a list of docids (strings)\n"


def test_a_nuggets_file_read_as_evidence_gives_every_nugget_those_without_support_with_no_sources(tmp_path):
    path = write(tmp_path, [{"qid": "q1", "nuggets": [{"id": "n1", "text": "a", "importance": "okay",
                                                       "support": [["A"], ["B", "C"]]}, {"text": "no support"}]}],
                 "nuggets.jsonl")
    assert read_evidence(path) == [EvidenceItem("q1", "n1", (("A",), ("B", "C")), "a", "okay"),
                                   EvidenceItem("q1", "q1-2", (), "no support", "vital")]


def test_stage_order_can_be_given_and_unknown_stages_are_reported(tmp_path):
    path = write(tmp_path, [{"qid": "q1", "stage": "final", "docids": ["A"]},
                            {"qid": "q1", "stage": "initial", "docids": ["A", "B"]}], "ctx.jsonl")
    assert read_contexts(path).stages == ("final", "initial")
    assert read_contexts(path, stages=["initial", "final"]).stages == ("initial", "final")
    with pytest.raises(InputError) as e:
        read_contexts(path, stages=["initial"])
    assert str(e.value) == f"{path}: stages not in the given order: final"
