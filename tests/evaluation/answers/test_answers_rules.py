"""`eval answers` edges: one topic set for every run, exact round trips, conflicts, checks, nuggetizer's rules."""
from __future__ import annotations

import json
import random

import pytest

from cli_support import cited_answer, write_jsonl as write
from types import SimpleNamespace
from trecbench.evaluation.answers.assign import PARTIAL, SUPPORT
from trecbench.evaluation.answers.assign.citation import CitationAssigner


def nist(run: str, qid: str, labels: list[tuple[str, str]]) -> dict:
    return {"qid": qid, "run_id": run, "nuggets": [{"text": f"{qid} nugget {i}", "importance": imp, "assignment": lab}
                                                   for i, (imp, lab) in enumerate(labels, start=1)]}


def json_scores(result) -> dict:
    return {entry["run"]: entry for entry in json.loads(result.stdout)}


def test_a_run_missing_topics_of_the_assignments_file_is_scored_zero_on_them(tmp_path, cli_run):
    # runA answers q1 and q2 (V_strict 1 and 0.5); runB answers only q1 (V_strict 1): its q2 scores 0
    lines = [nist("runA", "q1", [("vital", "support")]),
             nist("runA", "q2", [("vital", "support"), ("vital", "not_support")]),
             nist("runB", "q1", [("vital", "support")])]
    result = cli_run("eval", "answers", "--assignments", write(tmp_path, lines, "a.jsonl"), "--format", "json", "-q")
    assert result.exit_code == 0, result.output
    scores = json_scores(result)
    assert scores["runB"]["all"]["V_strict"] == 0.5  # (1 + 0) / 2, not its one-topic mean 1.0
    assert scores["runB"]["topics"]["q2"]["V_strict"] == 0.0
    assert scores["runB"]["missing_topics"] == ["q2"]
    assert "runB: 1 topic(s) with nuggets not answered, scored 0: q2" in result.stderr
    skipped = cli_run("eval", "answers", "--assignments", tmp_path / "a.jsonl", "--format", "json",
                      "--missing-topics", "skip")
    assert json_scores(skipped)["runB"]["all"]["V_strict"] == 1.0


def test_saved_assignments_hold_unanswered_topics_and_score_the_same_again(tmp_path, cli_run):
    nuggets = write(tmp_path, [
        {"qid": "q1", "query": "nuclear", "nuggets": [
            {"text": "Nuclear power emits very little carbon dioxide", "importance": "vital", "support": [["A"]]}]},
        {"qid": "q2", "query": "wind", "nuggets": [
            {"text": "Wind turbines need wind", "importance": "vital", "support": [["B"]]}]}], "n.jsonl")
    answers = cited_answer(tmp_path, ["A"])
    saved = tmp_path / "saved.jsonl"
    first = cli_run("eval", "answers", "--nuggets", nuggets, answers, "--save-assignments", saved, "--format", "csv")
    assert first.exit_code == 0, first.output
    assert "r1,all,V_strict,0.5" in first.stdout
    records = [json.loads(line) for line in saved.read_text().splitlines()]
    assert [(r["qid"], r.get("answered", True)) for r in records] == [("q1", True), ("q2", False)]
    for extra in ([], ["--nuggets", nuggets]):
        again = cli_run("eval", "answers", "--assignments", saved, "--format", "csv", *extra)
        assert again.exit_code == 0, again.output
        assert again.stdout == first.stdout
        assert "r1: 1 topic(s) with nuggets not answered, scored 0: q2" in again.stderr


def test_the_same_run_and_topic_labelled_differently_in_two_files_is_an_error_naming_both(tmp_path, cli_run):
    a = write(tmp_path, [nist("r", "q1", [("vital", "support")])], "a.jsonl")
    b = write(tmp_path, [nist("r", "q0", [("vital", "support")]), nist("r", "q1", [("vital", "not_support")])],
              "b.jsonl")
    for order in ((a, b), (b, a)):
        result = cli_run("eval", "answers", "--assignments", order[0], "--assignments", order[1])
        assert result.exit_code == 2, result.output
        assert "Traceback" not in result.output
        assert "run 'r', topic 'q1' is assigned differently in" in result.stderr
        assert f"{a}:1" in result.stderr and f"{b}:2" in result.stderr
    same = cli_run("eval", "answers", "--assignments", a, "--assignments", a, "--format", "csv")
    assert same.exit_code == 0, same.output


def test_assignments_are_checked_against_the_nuggets_file_every_mismatch_listed(tmp_path, cli_run):
    nuggets = write(tmp_path, [{"qid": "q1", "query": "q", "nuggets": [
        {"text": "q1 nugget 1", "importance": "vital"}, {"text": "q1 nugget 2", "importance": "vital"},
        {"text": "q1 nugget 3", "importance": "okay"}]}], "n.jsonl")
    lines = [nist("r", "q1", [("okay", "support"), ("vital", "support")]),  # nugget 1 okay here, nugget 3 missing
             {"qid": "q1", "run_id": "s", "nuggets": [
                 {"text": "q1 nugget 1", "importance": "vital", "assignment": "support"},
                 {"text": "q1 nugget 2", "importance": "vital", "assignment": "support"},
                 {"text": "q1 nugget 3", "importance": "okay", "assignment": "support"},
                 {"text": "something else", "importance": "okay", "assignment": "support"}]}]
    path = write(tmp_path, lines, "a.jsonl")
    result = cli_run("eval", "answers", "--assignments", path, "--nuggets", nuggets)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert sorted(result.stderr.splitlines()) == sorted([
        f"{path}:1: run 'r', topic 'q1': nugget 'q1 nugget 3' of the nuggets file is not assigned",
        f"{path}:1: run 'r', topic 'q1': nugget 'q1 nugget 1' is okay here but vital in the nuggets file",
        f"{path}:2: run 's', topic 'q1': nugget 'something else' is not in the nuggets file"])


# --- nuggetizer's rules -----------------------------------------------------------------------------
# castorini/nuggetizer, src/nuggetizer/core/metrics.py, as its documentation defines the four scores:
# per record, vital = nuggets whose importance is "vital"; strict counts assignment == "support",
# the others add 0.5 per "partial_support"; each score is over len(vital) (or all nuggets), 0.0 when
# that is empty; the global score is the mean over the records.

def reference_cells(nuggets: list[dict]) -> dict[str, float]:
    vital = [n for n in nuggets if n["importance"] == "vital"]

    def score(group, strict):
        if not group:
            return 0.0
        got = sum(1.0 if n["assignment"] == "support" else
                  (0.5 if n["assignment"] == "partial_support" and not strict else 0.0) for n in group)
        return got / len(group)

    return {"V_strict": score(vital, True), "V": score(vital, False), "A_strict": score(nuggets, True),
            "A": score(nuggets, False)}


@pytest.mark.parametrize("seed", range(6))
def test_rules_nuggetizer_reproduce_calculate_nugget_scores_cell_for_cell_on_random_files(tmp_path, cli_run, seed):
    rng = random.Random(seed)
    labels = ["support", "partial_support", "not_support", "failed", "Support", "supported", "partial",
              "Partial_Support"]
    topics = [f"t{i}" for i in range(rng.randint(3, 9))]
    files, expected = [], {}
    for r in range(rng.randint(1, 3)):
        run = f"run{r}"
        records = []
        for qid in topics:
            nuggets = [{"text": f"{qid} nugget {i}", "importance": rng.choice(["vital", "okay", "Vital", "OKAY"]),
                        "assignment": rng.choice(labels)} for i in range(rng.choice([0, 1, 2, 3, 5, 8]))]
            records.append({"qid": qid, "run_id": run, "nuggets": nuggets})
        files.append(write(tmp_path, records, f"{run}.jsonl"))
        cells = {r["qid"]: reference_cells(r["nuggets"]) for r in records}
        expected[run] = (cells, {m: sum(c[m] for c in cells.values()) / len(cells) for m in
                                 ("V_strict", "V", "A_strict", "A")})
    args = [a for f in files for a in ("--assignments", f)]
    result = cli_run("eval", "answers", *args, "--rules", "nuggetizer", "--format", "json", "-q")
    assert result.exit_code == 0, result.output
    got = json_scores(result)
    for run, (cells, means) in expected.items():
        for qid, want in cells.items():
            assert {m: got[run]["topics"][qid][m] for m in want} == pytest.approx(want, abs=1e-12), (run, qid)
        assert {m: got[run]["all"][m] for m in means} == pytest.approx(means, abs=1e-12), run
        assert got[run]["rules"] == "nuggetizer"


def test_default_rules_leave_out_what_nuggetizer_scores_zero(tmp_path, cli_run):
    # q1: only okay nuggets; q2: no nuggets; q3: a failed label; q4: "Supported" (trecbench reads it as support)
    lines = [nist("r", "q1", [("okay", "support")]), {"qid": "q2", "run_id": "r", "nuggets": []},
             nist("r", "q3", [("vital", "support"), ("vital", "failed")]), nist("r", "q4", [("vital", "Supported")])]
    path = write(tmp_path, lines, "a.jsonl")
    ours = cli_run("eval", "answers", "--assignments", path, "--format", "json", "-q")
    assert ours.exit_code == 1  # the failed assignment
    scores = json_scores(ours)["r"]
    assert scores["topics"]["q1"]["V_strict"] is None and scores["topics"]["q2"]["A"] is None
    assert "q3" not in scores["topics"] and scores["topics"]["q4"]["V_strict"] == 1.0
    assert scores["all"]["V_strict"] == 1.0 and scores["incomplete_topics"] == ["q3"]
    assert "1 topic(s) have no nuggets, no score: q2" in ours.stderr
    theirs = cli_run("eval", "answers", "--assignments", path, "--format", "json", "-q", "--rules", "nuggetizer")
    assert theirs.exit_code == 0, theirs.output
    scores = json_scores(theirs)["r"]
    assert [scores["topics"][q]["V_strict"] for q in ("q1", "q2", "q3", "q4")] == [0.0, 0.0, 0.5, 0.0]
    assert scores["all"]["V_strict"] == 0.125
    assert "2 topic(s) have no vital nuggets, scored 0 on V_strict and V: q1 q2" in theirs.stderr
    assert "r: topic q3 is incomplete and its failed labels scored 0 (nuggetizer rules)" in theirs.stderr


def _citing_answer(text: str):
    sentence = SimpleNamespace(text=text, citations=("d1",))
    return SimpleNamespace(run_id="r", sentences=[sentence], cited=("d1",))


def test_a_sentence_with_exactly_the_threshold_share_of_words_supports_the_nugget():
    nugget = SimpleNamespace(id="n1", text="zebra quartz violin mango turbine", importance="vital",
                             support=(("d1",),))
    topic = SimpleNamespace(qid="q1", nuggets=[nugget])
    at = CitationAssigner(threshold=0.6).assign_one(_citing_answer("zebra quartz violin"), topic)
    assert at.assignments[0].label == SUPPORT  # 3 of 5 content words = 0.6
    below = CitationAssigner(threshold=0.6).assign_one(_citing_answer("zebra quartz"), topic)
    assert below.assignments[0].label == PARTIAL


def test_the_first_line_says_which_nuggets_were_scored_against_approved_or_drafts(tmp_path, cli_run):
    from paths import SAMPLE

    from trecbench.nuggets.store import NuggetStore
    from trecbench.store import Workspace

    answers = sorted((SAMPLE / "answers").glob("*.jsonl"))[0]
    from_file = cli_run("eval", "answers", "--nuggets", SAMPLE / "nuggets.jsonl", answers, "--assigner", "citation")
    assert from_file.exit_code == 0
    assert from_file.stderr.splitlines()[0] == f"nuggets: 77 from {SAMPLE / 'nuggets.jsonl'} over 12 topics: 77 approved"
    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv").exit_code == 0
    assert cli_run("nuggets", "import", SAMPLE / "nuggets.jsonl", "-w", bench).exit_code == 0
    NuggetStore(Workspace(bench)).add("T01", "A draft nobody checked yet.", author="drafter", support=[["HB-ACC-04"]])
    in_workspace = cli_run("eval", "answers", "-w", bench, answers, "--assigner", "citation")
    assert in_workspace.stderr.splitlines()[0] == \
        "nuggets: 78 from the workspace over 12 topics: 77 approved, 1 draft (not approved yet)"
