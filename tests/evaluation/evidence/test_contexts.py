"""One contexts reader and one "top k contexts" rule for `eval evidence` and `eval context-recall`."""
from __future__ import annotations


import pytest

from cli_support import write_jsonl as write

from trecbench.evaluation.evidence.contexts import Context, StagedContexts, read_contexts, top_k_contexts



def csv_value(stdout: str, run: str, measure: str) -> float:
    for line in stdout.splitlines():
        r, qid, m, value = line.split(",")
        if (r, qid, m) == (run, "all", measure):
            return float(value)
    raise AssertionError(f"{measure} of {run} not in {stdout!r}")


def test_the_top_k_contexts_are_the_first_k_positions_repeats_included():
    assert top_k_contexts(["d1", "d1", "d2"], 2) == ("d1", "d1")
    assert top_k_contexts(["d1", "d1", "d2"], None) == ("d1", "d1", "d2")
    with pytest.raises(ValueError):
        top_k_contexts(["d1"], 0)
    staged = StagedContexts("s", ("final",), {"q1": {"final": ("d1", "d1", "d2")}})
    assert staged.top_k("q1", 2) == (Context("d1", None), Context("d1", None))


def test_evidence_and_id_context_recall_cut_the_same_list_at_the_same_place(tmp_path, cli_run):
    # [d1, d1, d2] cut at 2 holds d1 twice and not d2: both commands say d2 is not in the top 2
    contexts = write(tmp_path, [{"qid": "q1", "docids": ["d1", "d1", "d2"], "run_id": "sys"}], "ctx.jsonl")
    evidence = write(tmp_path, [{"qid": "q1", "evidence": [{"id": "E1", "any_of": [["d2"]]}]}], "ev.jsonl")
    refs = write(tmp_path, [{"qid": "q1", "reference_ids": ["d2"]}], "refs.jsonl")
    for k, expected in (("2", 0.0), ("3", 1.0)):
        ev = cli_run("eval", "evidence", "--evidence", evidence, "--contexts", contexts, "-k", k, "--format", "csv")
        assert ev.exit_code == 0, ev.output
        cr = cli_run("eval", "context-recall", "--mode", "id", "--contexts", contexts, "--references", refs, "-k", k,
                     "--format", "csv")
        assert cr.exit_code == 0, cr.output
        assert csv_value(ev.stdout, "sys", f"EvidenceRecall@{k}") == expected
        assert csv_value(cr.stdout, "sys", f"IDContextRecall@{k}") == expected


def test_both_commands_read_the_same_files_with_the_same_errors(tmp_path, cli_run):
    staged = write(tmp_path, [{"qid": "q1", "stage": "initial", "docids": ["d2", "d1"]},
                              {"qid": "q1", "stage": "final", "contexts": [{"id": "d1", "text": "one"}]},
                              {"qid": "q1", "stage": "final", "docids": ["d2"]}], "staged.jsonl")
    evidence = write(tmp_path, [{"qid": "q1", "evidence": [{"id": "E1", "any_of": [["d2"]]}]}], "ev.jsonl")
    refs = write(tmp_path, [{"qid": "q1", "reference_ids": ["d2"]}], "refs.jsonl")
    wanted = f"{staged}:3: stage 'final' of topic 'q1' appears twice (first on line 2)\n"
    ev = cli_run("eval", "evidence", "--evidence", evidence, "--contexts", staged)
    cr = cli_run("eval", "context-recall", "--contexts", staged, "--references", refs)
    assert (ev.exit_code, ev.stderr) == (2, wanted)
    assert (cr.exit_code, cr.stderr) == (2, wanted)
    good = write(tmp_path, [{"qid": "q1", "stage": "initial", "docids": ["d2", "d1"]},
                            {"qid": "q1", "stage": "final", "contexts": [{"id": "d1", "text": "one"}]}], "good.jsonl")
    read = read_contexts(good)
    assert read.stages == ("initial", "final") and read.ids("q1") == ("d1",) and read.ids("q1", "initial") == (
        "d2", "d1")
    ev = cli_run("eval", "evidence", "--evidence", evidence, "--contexts", good, "--format", "csv")
    cr = cli_run("eval", "context-recall", "--contexts", good, "--references", refs, "--format", "csv")
    assert csv_value(ev.stdout, "good", "EvidenceRecall@10") == 0.0  # the last stage is scored
    assert csv_value(cr.stdout, "good", "IDContextRecall") == 0.0


def test_evidence_needs_context_ids(tmp_path, cli_run):
    texts = write(tmp_path, [{"qid": "q1", "contexts": ["only a text"]}], "texts.jsonl")
    evidence = write(tmp_path, [{"qid": "q1", "evidence": [{"id": "E1", "any_of": [["d2"]]}]}], "ev.jsonl")
    result = cli_run("eval", "evidence", "--evidence", evidence, "--contexts", texts)
    assert result.exit_code == 2
    assert "contexts without ids; evidence is matched by docid" in result.stderr
