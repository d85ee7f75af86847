"""Evidence within a token budget: the contexts that fit whole in N tokens, in rank order; tokens per stage.

The case is test_evidence_chunkings' two chunkings (whitespace words: c1 7, c2 3, c3 2, d1 7); the run ranks
t1's contexts c2, d1, c1, c3 and t2's c1 alone.
"""
from __future__ import annotations

import json
import socket

import pytest

from chunkings import two_chunkings
from trecbench.evaluation.evidence.budgets import Budget, TokenCounter, tokenizer, within_budget
from trecbench.evaluation.evidence.chunkings import read_chunking
from trecbench.evaluation.evidence.contexts import Context
from trecbench.evaluation.evidence.recall import evaluate_evidence


def test_the_context_that_would_cross_the_budget_is_left_out_with_all_after_it():
    words = {"a": 3, "b": 7, "c": 1}
    count = words.__getitem__
    assert within_budget(["a", "b", "c"], 10, count) == ("a", "b")
    assert within_budget(["a", "b", "c"], 9, count) == ("a",)  # c would fit, but b came first
    assert within_budget(["b", "b"], 10, count) == ("b",)  # a repeated context spends its tokens again
    assert within_budget(["b"], 6, count) == ()
    with pytest.raises(ValueError):
        within_budget(["a"], 0, count)


def test_the_budget_is_named_with_its_tokenizer():
    assert Budget(500, "cl100k_base").label == "500tok[cl100k_base]" and Budget(20).label == "20tok[whitespace]"


def test_whitespace_tokens_are_words_and_texts_come_from_the_context_before_the_corpus():
    class Corpus:
        def text(self, docid):
            return {"d1": "one two three"}.get(docid)

    count = TokenCounter("whitespace", Corpus())
    assert count(Context("d1", None)) == 3 and count(Context("d1", "carried  text\nhere")) == 3
    assert count(Context(None, "just two")) == 2
    from trecbench.errors import InputError

    with pytest.raises(InputError, match="'gone' has no text and is not in the corpus"):
        count(Context("gone", None))


def test_budgets_cut_the_run_on_another_chunking_as_computed_by_hand(tmp_path):
    f = two_chunkings(tmp_path)
    scores = evaluate_evidence(f["evidence"], f["run"], k=2, chunking=read_chunking(f["a"], f["b"]),
                               budgets=[9, 10, 18, 20], corpus=f["b"])
    t1 = scores.frame.loc[("sys", "t1")]
    assert t1["EvidenceRecall@9tok[whitespace]"] == 0  # c2 (3) alone: part of a3 only
    assert t1["EvidenceRecall@10tok[whitespace]"] == pytest.approx(1 / 3)  # c2 d1 (3 + 7): E1
    assert t1["EvidenceRecall@18tok[whitespace]"] == pytest.approx(2 / 3)  # + c1 (17), c3 would make 19: E1 E2
    assert t1["EvidenceRecall@20tok[whitespace]"] == 1 and t1["CompleteEvidence@20tok[whitespace]"] == 1
    assert scores.frame.loc[("sys", "t2"), "CompleteEvidence@9tok[whitespace]"] == 1  # c1 (7) holds a2
    assert list(scores.frame.columns)[:3] == ["EvidenceRecall@2", "CompleteEvidence@2", "IDRecall@2"]


def test_the_funnel_counts_each_stages_tokens(tmp_path):
    f = two_chunkings(tmp_path)
    scores = evaluate_evidence(f["evidence"], f["staged"], k=2, chunking=read_chunking(f["a"], f["b"]),
                               tokenizer="whitespace", corpus=f["b"])
    summary = scores.stage_summary().set_index("stage")
    # initial and final: t1 7 + 3 + 7 + 2, t2 7; cut@2: t1 c2 d1 (10), t2 c1 (7)
    assert summary["tokens"].tolist()[:3] == [26, 26, 17]
    assert summary["tokens_per_topic"].tolist()[:3] == [13.0, 13.0, 8.5]
    assert scores.notes()["staged"]["tokens_per_stage"] == {"initial": 26, "final": 26, "cut@2": 17}


def test_eval_evidence_cli_prints_budget_measures_and_funnel_tokens(tmp_path, cli_run):
    f = two_chunkings(tmp_path)
    result = cli_run("eval", "evidence", "--evidence", f["evidence"], "--contexts", f["staged"], "-k", "2",
                     "--evidence-spans", f["a"], "--corpus-spans", f["b"], "--budget", "10", "--budget", "18",
                     "--funnel")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[-4:] == ["EvidenceRecall@10tok[whitespace]", "CompleteEvidence@10tok[whitespace]",
                                     "EvidenceRecall@18tok[whitespace]", "CompleteEvidence@18tok[whitespace]"]
    # the staged final list is the run's order: t1 1/3, 2/3; t2 1, 1
    assert lines[1].split()[-4:] == ["0.6667", "0.5000", "0.8333", "0.5000"]
    assert "tokens counted with whitespace" in result.stdout
    funnel = {line.split()[1]: line.split() for line in lines if line.split()[:2] in (
        ["staged", "initial"], ["staged", "cut@2"], ["staged", "never"])}
    assert funnel["initial"][-2:] == ["26", "13.0"] and funnel["cut@2"][-2:] == ["17", "8.5"]
    assert funnel["never"][-2:] == ["-", "-"]


def test_texts_carried_by_the_contexts_file_are_counted_instead_of_the_corpus(tmp_path, cli_run):
    f = two_chunkings(tmp_path)
    carried = tmp_path / "carried.jsonl"
    carried.write_text(json.dumps({"qid": "t2", "run_id": "carried", "contexts": [
        {"id": "c1", "text": "a b c d e f g h i j k l"}]}) + "\n")
    result = cli_run("eval", "evidence", "--evidence", f["evidence"], "--contexts", carried, "--budget", "11",
                     "--budget", "12", "--corpus", f["b"], "--evidence-spans", f["a"], "--corpus-spans", f["b"], "-q")
    assert result.exit_code == 0, result.output
    row = [line.split() for line in result.stdout.splitlines() if line.startswith("carried  t2")][0]
    assert row[-4:] == ["0.0000", "0.0000", "1.0000", "1.0000"]  # 12 words carried, not c1's 7


def test_a_context_without_text_and_without_a_corpus_is_an_input_error(tmp_path, cli_run):
    f = two_chunkings(tmp_path)
    result = cli_run("eval", "evidence", "--evidence", f["evidence"], "--contexts", f["run"], "--budget", "5")
    assert result.exit_code == 2 and "has no text; give --corpus" in result.stderr
    assert "Traceback" not in result.output


def test_an_unknown_tokenizer_is_a_usage_error(tmp_path, cli_run):
    f = two_chunkings(tmp_path)
    result = cli_run("eval", "evidence", "--evidence", f["evidence"], "--contexts", f["run"], "--budget", "5",
                     "--tokenizer", "letters", "--corpus", f["b"])
    assert result.exit_code == 2 and "unknown tokenizer 'letters'" in result.stderr


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a tokenizer reached for the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)


def test_a_tiktoken_encoding_shipped_with_litellm_counts_offline(no_network, tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    from trecbench.evaluation.evidence.budgets import _litellm_tokenizers

    if _litellm_tokenizers() is None:
        pytest.skip("litellm's tiktoken files are not installed")
    count = tokenizer("cl100k_base")
    text = "The rollback plan is ready; page the on-call lead."
    assert count(text) == len(tiktoken.get_encoding("cl100k_base").encode(text)) > len(text.split())
    f = two_chunkings(tmp_path)
    scores = evaluate_evidence(f["evidence"], f["run"], budgets=[100], tokenizer="cl100k_base", corpus=f["b"],
                               chunking=read_chunking(f["a"], f["b"]))
    assert scores.frame.loc[("sys", "t1"), "EvidenceRecall@100tok[cl100k_base]"] == 1


def test_an_encoding_whose_file_is_not_here_is_refused_without_a_download(no_network, tmp_path, monkeypatch):
    pytest.importorskip("tiktoken")
    import tiktoken.registry

    monkeypatch.delitem(tiktoken.registry.ENCODINGS, "p50k_base", raising=False)  # not loaded already
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="'p50k_base': its encoding file is not on this machine"):
        tokenizer("p50k_base")
