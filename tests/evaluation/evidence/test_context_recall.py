"""Context recall by ids and by string similarity, reproducing Ragas' behaviour and its two failure cases."""
from __future__ import annotations

import json
import math

import pytest

from cli_support import write_jsonl as write

from trecbench.evaluation.evidence.context_recall import (
    Context,
    ContextSet,
    Reference,
    evaluate_context_recall,
    id_recall,
    string_recall,
)
from trecbench.evaluation.textmatch import similarity

REFERENCE = "The sky is blue now."  # 20 characters
# a 200-character chunk whose last sentence is the reference
CHUNK = ("Weather reports describe clouds, rain and wind in detail for each region of the country. "
         "Forecasts also mention humidity levels. Expect mild temperatures. Pack a warm coat, maybe. " + REFERENCE)



def test_id_recall_compares_reference_and_retrieved_ids_as_sets():
    assert id_recall(["doc1", "doc2", "doc3", "doc1"], ["doc1", "doc2", "doc4"]) == pytest.approx(2 / 3)
    assert math.isnan(id_recall(["doc1"], []))


def test_a_short_reference_inside_a_long_chunk_is_a_miss_unless_compared_with_sentence_windows():
    assert len(REFERENCE) == 20 and len(CHUNK) == 200 and CHUNK.endswith(REFERENCE)
    assert similarity(REFERENCE, CHUNK) == pytest.approx(0.1)
    score, best = string_recall([CHUNK], [REFERENCE])
    assert (score, best) == (0.0, [pytest.approx(0.1)])
    score, best = string_recall([CHUNK], [REFERENCE], window="sentence")
    assert (score, best) == (1.0, [1.0])


def test_a_negated_sentence_is_about_094_similar_and_counts_as_found_a_known_risk():
    said = "The treatment is safe for children under five years of age."
    negated = "The treatment is not safe for children under five years of age."
    assert similarity(said, negated) == pytest.approx(0.94, abs=0.005)
    assert string_recall([negated], [said]) == (1.0, [pytest.approx(1 - 4 / 63)])


def test_a_hit_must_be_strictly_above_the_threshold():
    # one edit in ten characters: similarity exactly 0.9
    assert string_recall(["abcdefghij"], ["abcdefghiX"], threshold=0.9)[0] == 0.0
    assert string_recall(["abcdefghij"], ["abcdefghiX"], threshold=0.89)[0] == 1.0


def test_string_recall_is_the_share_of_reference_contexts_found():
    retrieved = ["Paris is the capital of France."]
    refs = ["Paris is the capital of France.", "The Eiffel Tower is one of the most famous landmarks in Paris."]
    assert string_recall(retrieved, refs)[0] == 0.5


def test_a_topic_without_reference_scores_nan_with_a_reason_or_zero_when_asked():
    contexts = ContextSet("sys", {"q1": (Context("d1", None),), "q2": (Context("d2", None),)})
    refs = {"q1": Reference("q1", ids=("d1", "d9"))}
    result = evaluate_context_recall(contexts, refs, mode="id")
    assert result.frame.loc[("sys", "q1"), "IDContextRecall"] == 0.5
    assert math.isnan(result.frame.loc[("sys", "q2"), "IDContextRecall"])
    assert result.reasons == {("sys", "q2"): "no reference for this topic"}
    assert result.frame.loc[("sys", "all"), "IDContextRecall"] == 0.5
    zero = evaluate_context_recall(contexts, refs, mode="id", missing="zero")
    assert zero.frame.loc[("sys", "all"), "IDContextRecall"] == 0.25


def test_contexts_are_cut_at_k_and_a_referenced_topic_without_contexts_scores_zero():
    contexts = ContextSet("sys", {"q1": (Context("d2", None), Context("d1", None))})
    refs = {"q1": Reference("q1", ids=("d1",)), "q2": Reference("q2", ids=("d5",))}
    result = evaluate_context_recall(contexts, refs, mode="id", k=1)
    assert result.frame.loc[("sys", "q1"), "IDContextRecall@1"] == 0.0
    assert result.frame.loc[("sys", "q2"), "IDContextRecall@1"] == 0.0


def test_string_mode_looks_up_texts_given_by_id_in_a_corpus(tmp_path):
    corpus = write(tmp_path, [{"id": "d1", "contents": CHUNK}, {"id": "d2", "contents": REFERENCE}], "corpus.jsonl")
    contexts = ContextSet("sys", {"q1": (Context("d1", None),)})
    refs = {"q1": Reference("q1", ids=("d2",))}
    found = evaluate_context_recall(contexts, refs, mode="string", corpus=corpus, window="sentence")
    assert found.frame.loc[("sys", "q1"), "StringContextRecall"] == 1.0


def test_eval_context_recall_command_by_ids_from_qrels(tmp_path, cli_run):
    run = write(tmp_path, ["q1 Q0 d1 1 3 bm25", "q1 Q0 d2 2 2 bm25", "q1 Q0 d3 3 1 bm25", "q2 Q0 d1 1 1 bm25"],
                "run.txt")
    qrels = write(tmp_path, ["q1 0 d1 1", "q1 0 d3 2", "q1 0 d4 0", "q2 0 d7 0"], "qrels.txt")
    result = cli_run("eval", "context-recall", "--mode", "id", "--contexts", run, "--qrels", qrels, "-k", "2", "-q")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1].split() == ["bm25", "q1", "0.5000"]
    assert lines[2].split() == ["bm25", "q2", "-"]
    assert "1 topic(s), no score: no reference ids for this topic: q2" in result.stderr


def test_eval_context_recall_command_string_mode_with_window(tmp_path, cli_run):
    contexts = write(tmp_path, [{"qid": "q1", "contexts": [{"id": "c1", "text": CHUNK}]}], "ctx.jsonl")
    refs = write(tmp_path, [{"qid": "q1", "reference_contexts": [REFERENCE]}], "refs.jsonl")
    plain = cli_run("eval", "context-recall", "--mode", "string", "--contexts", contexts, "--references", refs,
                    "--format", "json", "-q")
    assert json.loads(plain.stdout)[0]["all"] == {"StringContextRecall": 0.0}
    assert json.loads(plain.stdout)[0]["details"] == {"q1": [0.1]}
    window = cli_run("eval", "context-recall", "--mode", "string", "--window", "sentence", "--contexts", contexts,
                     "--references", refs, "--format", "csv")
    assert "ctx,all,StringContextRecall,1.0" in window.stdout


def test_eval_context_recall_llm_mode_needs_a_model(tmp_path, cli_run):
    contexts = write(tmp_path, [{"qid": "q1", "contexts": ["x"]}], "ctx.jsonl")
    refs = write(tmp_path, [{"qid": "q1", "reference": "x"}], "refs.jsonl")
    result = cli_run("eval", "context-recall", "--mode", "llm", "--contexts", contexts, "--references", refs)
    assert result.exit_code == 2
    assert "--mode llm needs --model" in result.output


def test_context_recall_scores_say_what_the_command_prints_naming_runs_when_there_are_several(tmp_path, cli_run):
    from trecbench.evaluation.evidence.context_recall import evaluate_context_recall, references_from_qrels

    qrels = write(tmp_path, ["q1 0 d1 1", "q2 0 d7 0"], "qrels.txt")
    runs = [write(tmp_path, [f"q1 Q0 d1 1 3 {name}", f"q2 Q0 d1 1 1 {name}"], f"{name}.txt") for name in ("a", "b")]
    one = evaluate_context_recall([runs[0]], references_from_qrels(qrels, 1), mode="id")
    assert one.messages() == ["1 topic(s), no score: no reference ids for this topic: q2"]
    both = evaluate_context_recall(runs, references_from_qrels(qrels, 1), mode="id")
    assert both.messages() == ["2 topic(s), no score: no reference ids for this topic: a:q2 b:q2"]
    printed = cli_run("eval", "context-recall", "--contexts", runs[0], "--contexts", runs[1], "--qrels", qrels)
    assert printed.stderr.splitlines() == both.messages()


def test_ids_match_exactly_once_surrounding_whitespace_is_stripped(tmp_path, cli_run):
    # " d1" in JSONL is the d1 a TREC run would name; case is kept, so "D2" is not "d2"
    contexts = write(tmp_path, [{"qid": "q1", "contexts": [{"id": " d1", "text": "a"}, {"id": "D2", "text": "b"}]}],
                     "ctx.jsonl")
    refs = write(tmp_path, [{"qid": "q1", "reference_ids": ["d1\t", "d2"]}], "refs.jsonl")
    result = cli_run("eval", "context-recall", "--mode", "id", "--contexts", contexts, "--references", refs,
                     "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["all"] == {"IDContextRecall": 0.5}


def test_an_empty_reference_context_is_refused_as_an_empty_reference_id_is(tmp_path, cli_run):
    contexts = write(tmp_path, [{"qid": "q1", "contexts": [""]}, {"qid": "q2", "contexts": ["x"]}], "ctx.jsonl")
    refs = write(tmp_path, [{"qid": "q1", "reference_contexts": [""]}, {"qid": "q2", "reference_contexts": ["x", " "]}],
                 "refs.jsonl")
    result = cli_run("eval", "context-recall", "--mode", "string", "--contexts", contexts, "--references", refs)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (f"{refs}:1: 'reference_contexts' must be a list of non-empty strings\n"
                             f"{refs}:2: 'reference_contexts' must be a list of non-empty strings\n")
