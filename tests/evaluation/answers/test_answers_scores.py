"""Answer scores from nugget assignments (hand-computed), and the offline citation and string assigners."""
from __future__ import annotations

import json
import math

import pytest

from cli_support import cited_answer, write_jsonl as write

from trecbench.answers import Answer, AnswerSentence
from trecbench.errors import InputError
from trecbench.evaluation.answers.scoring import evaluate_answers, score_assignments, topic_scores
from trecbench.evaluation.answers.assign import (
    NuggetAssignment,
    TopicAssignment,
    get_assigner,
    read_assignments,
    write_assignments,
)
from trecbench.nuggets import Nugget, TopicNuggets

# q1: vital support, vital partial, vital not, okay support, okay partial; q2: okay support, okay not
NIST = [
    {"qid": "q1", "run_id": "runA", "nuggets": [
        {"text": "n1", "importance": "vital", "assignment": "support"},
        {"text": "n2", "importance": "vital", "assignment": "partial_support"},
        {"text": "n3", "importance": "vital", "assignment": "not_support"},
        {"text": "n4", "importance": "okay", "assignment": "support"},
        {"text": "n5", "importance": "okay", "assignment": "partial_support"}]},
    {"query": "q two", "qid": "q2", "answer_text": "...", "response_length": 3, "run_id": "runA", "nuggets": [
        {"text": "m1", "importance": "okay", "assignment": "support"},
        {"text": "m2", "importance": "okay", "assignment": "not_support"}]},
]



def test_scores_from_an_assignments_file_match_a_hand_computation(tmp_path):
    scores = score_assignments(read_assignments(write(tmp_path, NIST, "a.jsonl")))
    q1 = scores.frame.loc[("runA", "q1")].to_dict()
    assert q1 == pytest.approx({"V_strict": 1 / 3, "V": 1.5 / 3, "A_strict": 2 / 5, "A": 3 / 5,
                                "W_strict": 1.5 / 4, "W": 2.25 / 4})
    q2 = scores.frame.loc[("runA", "q2")]
    assert math.isnan(q2["V_strict"]) and math.isnan(q2["V"])
    assert q2[["A_strict", "A", "W_strict", "W"]].tolist() == [0.5, 0.5, 0.5, 0.5]
    run = scores.frame.loc[("runA", "all")].to_dict()
    # q2 has no vital nugget: it is left out of the V means and listed
    assert run == pytest.approx({"V_strict": 1 / 3, "V": 0.5, "A_strict": 0.45, "A": 0.55, "W_strict": 0.4375,
                                 "W": 0.53125})
    assert scores.no_vital == ["q2"]


def test_partial_support_counts_half_except_in_strict_scores():
    labels = [NuggetAssignment("a", "a", "vital", "partial_support"), NuggetAssignment("b", "b", "okay",
                                                                                       "partial_support")]
    assert topic_scores(labels) == {"V_strict": 0.0, "V": 0.5, "A_strict": 0.0, "A": 0.5, "W_strict": 0.0, "W": 0.5}


def test_a_failed_assignment_makes_the_topic_incomplete_and_unscored_not_unsupported(tmp_path):
    lines = [dict(NIST[0]), NIST[1]]
    lines[0] = {**lines[0], "nuggets": lines[0]["nuggets"][:4] + [
        {"text": "n5", "importance": "okay", "assignment": "failed"}], "error": "reply could not be parsed"}
    scores = score_assignments(read_assignments(write(tmp_path, lines, "a.jsonl")))
    assert scores.incomplete == [("runA", "q1", "reply could not be parsed")]
    assert ("runA", "q1") not in scores.frame.index
    assert scores.frame.loc[("runA", "all"), "A"] == 0.5


def test_nugget_topics_a_run_did_not_answer_score_zero_or_are_skipped():
    nuggets = {"q1": TopicNuggets("q1", (Nugget("q1-1", "q1", "x"),)),
               "q2": TopicNuggets("q2", (Nugget("q2-1", "q2", "y"),))}
    made = [TopicAssignment("r", "q1", (NuggetAssignment("q1-1", "x", "vital", "support"),))]
    zero = score_assignments(made, nuggets=nuggets)
    assert zero.frame.loc[("r", "all"), "V_strict"] == 0.5 and zero.missing == {"r": ["q2"]}
    skip = score_assignments(made, nuggets=nuggets, missing_topics="skip")
    assert skip.frame.loc[("r", "all"), "V_strict"] == 1.0


def test_assignments_round_trip_through_a_file_with_failures(tmp_path):
    made = [TopicAssignment("r", "q1", (NuggetAssignment("q1-1", "x", "vital", "support", "why"),
                                        NuggetAssignment("q1-2", "y", "okay", None)), "timeout")]
    path = tmp_path / "out.jsonl"
    write_assignments(made, path)
    assert read_assignments(path) == made


def test_bad_assignment_values_are_reported_with_their_line(tmp_path):
    path = write(tmp_path, [{"qid": "q1", "nuggets": [{"text": "n", "importance": "vital", "assignment": "maybe"}]},
                            {"qid": "q2", "nuggets": [{"text": "n", "importance": "high", "assignment": "support"}]}],
                 "a.jsonl")
    with pytest.raises(InputError) as e:
        read_assignments(path)
    assert [str(p) for p in e.value.problems] == [
        f"{path}:1: topic 'q1', nugget 1: assignment 'maybe' is not one of support, partial_support, not_support",
        f"{path}:2: topic 'q2', nugget 1: importance 'high' is not vital or okay"]


# --- offline assigners ------------------------------------------------------------------------------

TOPIC = TopicNuggets("q1", (
    Nugget("n1", "q1", "Nuclear power emits very little carbon dioxide", "vital", (("A",), ("B",))),
    Nugget("n2", "q1", "Chernobyl and Fukushima were major nuclear accidents", "vital", (("C1", "C2"),)),
    Nugget("n3", "q1", "Fusion energy remains experimental", "okay", (("D",),)),
    Nugget("n4", "q1", "Uranium is mined in Kazakhstan", "okay", ()),
))


def answer(*sentences: tuple[str, tuple[str, ...]]) -> Answer:
    return Answer("run", "q1", tuple(AnswerSentence(t, c) for t, c in sentences))


def labels(result: TopicAssignment) -> dict[str, str]:
    return {a.nugget_id: a.label for a in result.assignments}


def test_citation_assigner_needs_the_citation_and_a_matching_citing_sentence():
    a = answer(("Nuclear power emits very little carbon dioxide.", ("B",)),
               ("Chernobyl and Fukushima were major nuclear accidents.", ("C1",)),
               ("Fusion is cheap.", ("D",)),
               ("Uranium is mined in Kazakhstan.", ()))
    result = get_assigner("citation").assign([(a, TOPIC)])[0]
    # n1: cites B (an alternative) in the matching sentence; n2: says it but cites only C1 of the joint group C1+C2;
    # n3: cites D but does not say it; n4: has no supporting documents, so its text alone gives partial support
    assert labels(result) == {"n1": "support", "n2": "partial_support", "n3": "partial_support",
                              "n4": "partial_support"}


def test_citation_assigner_joint_group_cited_across_sentences_supports():
    a = answer(("Chernobyl and Fukushima were major nuclear accidents.", ("C1",)), ("More on this.", ("C2",)))
    result = get_assigner("citation").assign([(a, TOPIC)])[0]
    assert labels(result)["n2"] == "support"
    assert labels(result)["n1"] == "not_support"


def test_string_assigner_labels_by_similarity_to_sentence_windows():
    a = answer(("Nuclear power emits very little carbon dioxide.", ()),
               ("Fusion energy is still rather an experimental thing.", ()), ("Something else entirely.", ()))
    result = get_assigner("string").assign([(a, TOPIC)])[0]
    assert labels(result) == {"n1": "support", "n2": "not_support", "n3": "partial_support", "n4": "not_support"}
    assert result.assignments[0].reason.startswith("best similarity 1.000")


def test_evaluate_answers_scores_every_run_and_lists_topics_without_nuggets(tmp_path):
    runs = [answer(("Nuclear power emits very little carbon dioxide.", ("A",)),),
            Answer("run", "q9", (AnswerSentence("x", ()),))]
    scores, made = evaluate_answers([TOPIC], runs, assigner="citation")
    assert scores.frame.loc[("run", "q1"), "V_strict"] == 0.5
    assert scores.unjudged == {"run": ["q9"]}
    assert [t.qid for t in made] == ["q1"]


def test_eval_answers_command_scores_an_assignments_file_as_table_csv_and_json(tmp_path, cli_run):
    path = write(tmp_path, NIST, "a.jsonl")
    result = cli_run("eval", "answers", "--assignments", path, "-q")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["run", "topic", "V_strict", "V", "A_strict", "A", "W_strict", "W"]
    assert lines[1].split() == ["runA", "q1", "0.3333", "0.5000", "0.4000", "0.6000", "0.3750", "0.5625"]
    assert lines[2].split() == ["runA", "q2", "-", "-", "0.5000", "0.5000", "0.5000", "0.5000"]
    assert "1 topic(s) have no vital nuggets, left out of V_strict and V: q2" in result.stderr
    csv_out = cli_run("eval", "answers", "--assignments", path, "--format", "csv").stdout
    assert "runA,all,W,0.53125" in csv_out
    doc = json.loads(cli_run("eval", "answers", "--assignments", path, "--format", "json", "-q").stdout)
    assert doc[0]["topics"]["q2"]["V_strict"] is None
    assert doc[0]["topics_without_vital_nuggets"] == ["q2"]


def test_eval_answers_command_assigns_saves_and_rescoring_the_saved_file_agrees(tmp_path, cli_run):
    nuggets = write(tmp_path, [{"qid": "q1", "query": "nuclear", "nuggets": [
        {"text": "Nuclear power emits very little carbon dioxide", "importance": "vital", "support": [["A"]]},
        {"text": "Fusion energy remains experimental", "importance": "okay", "support": [["D"]]}]}], "n.jsonl")
    answers = cited_answer(tmp_path, ["A", "D"])
    saved = tmp_path / "assignments.jsonl"
    first = cli_run("eval", "answers", "--nuggets", nuggets, answers, "--save-assignments", saved, "--format", "csv")
    assert first.exit_code == 0, first.output
    assert "r1,all,V_strict,1.0" in first.stdout
    again = cli_run("eval", "answers", "--nuggets", nuggets, "--assignments", saved, "--format", "csv")
    assert again.stdout == first.stdout


def test_eval_answers_command_needs_nuggets_or_assignments(cli_run, tmp_path):
    result = cli_run("eval", "answers", str(tmp_path / "x.jsonl"))
    assert result.exit_code == 2
    assert "--nuggets is required" in result.output


def test_eval_answers_offers_the_registered_assigners(tmp_path, cli_run, monkeypatch):
    from trecbench.evaluation.answers import assign

    monkeypatch.setitem(assign.ASSIGNERS, "citation2", ("citation", "CitationAssigner"))
    assert "citation2" in cli_run("eval", "answers", "--help").stdout
    nuggets = write(tmp_path, [{"qid": "q1", "query": "nuclear", "nuggets": [
        {"text": "Nuclear power emits very little carbon dioxide", "importance": "vital", "support": [["A"]]}]}],
        "n.jsonl")
    answers = cited_answer(tmp_path, ["A"])
    result = cli_run("eval", "answers", "--nuggets", nuggets, answers, "--assigner", "citation2", "--format", "csv")
    assert result.exit_code == 0, result.output
    assert "r1,all,V_strict,1.0" in result.stdout
    assert cli_run("eval", "answers", "--nuggets", nuggets, answers, "--assigner", "nope").exit_code == 2
