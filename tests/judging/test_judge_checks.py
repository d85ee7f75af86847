"""Knowing the judge: tau_AP against hand computations (ties included) and ircor's published example, label stability
of scripted samples, and the new-run bias check on a fixture whose answer is worked out below; through `judge validate`."""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from sampled_bench import make_sampled_bench

from trecbench.judging.judge_checks import label_stability, new_run_bias, sample_grades, tau_ap

# ircor's documented example (Urbano and Marrero's R package for tau_AP): x the true scores, y the estimate
X = [0.67, 0.45, 0.29, 0.12, 0.57, 0.24, 0.94, 0.75, 0.08, 0.54]
Y = [0.48, 0.68, 0.32, 0.09, 0.06, 0.61, 0.87, 0.22, 0.44, 0.84]


def test_tau_ap_matches_the_published_values_without_and_with_ties_in_the_estimate():
    assert tau_ap(X, Y) == pytest.approx(0.3928571, abs=5e-8)  # ircor's tauAP(x, y)
    assert tau_ap(X, [round(v, 1) for v in Y]) == pytest.approx(0.39903, abs=5e-6)  # ircor's tauAP_a, ties in y


def test_tau_ap_by_hand_with_ties_in_both_orderings():
    # people: A 0.9, B 0.5, C 0.5, D 0.1 (B and C tied); the model: A 0.8, B 0.8, C 0.3, D 0.6 (A and B tied).
    # The model's order is {A, B}, D, C; its tie is broken both ways, each as likely:
    #   A B D C: B under A (people: A above B, 1/1); D under A, B (both above D, 2/2); C under A, B, D
    #            (A above C 1, B tied with C 1/2, D below C 0: 1.5/3); sum 2.5, tau_AP = 2/3 * 2.5 - 1 = 2/3
    #   B A D C: A under B (people: B below A, 0/1); D 2/2; C 1.5/3; sum 1.5, tau_AP = 2/3 * 1.5 - 1 = 0
    # the expectation: (2/3 + 0) / 2 = 1/3
    people = [0.9, 0.5, 0.5, 0.1]
    model = [0.8, 0.8, 0.3, 0.6]
    assert tau_ap(people, model) == pytest.approx(1 / 3, abs=1e-12)
    # without ties: the same order is 1, the reverse -1, and one swap at the top costs more than at the bottom
    assert tau_ap([4, 3, 2, 1], [4, 3, 2, 1]) == pytest.approx(1.0)
    assert tau_ap([4, 3, 2, 1], [1, 2, 3, 4]) == pytest.approx(-1.0)
    # swap at the top: B A C D: A under B 0/1, C 2/2, D 3/3: 2/3 * 2 - 1 = 1/3; at the bottom A B D C: 1 1 2/3
    assert tau_ap([4, 3, 2, 1], [3, 4, 2, 1]) == pytest.approx(1 / 3)
    assert tau_ap([4, 3, 2, 1], [4, 3, 1, 2]) == pytest.approx(2 / 3 * (1 + 1 + 2 / 3) - 1)
    assert math.isnan(tau_ap([1, 1, 1], [3, 2, 1]))  # people tie every run: no ordering to compare


def reply(*grades: int) -> str:
    return json.dumps([{"passage": f"P{i}", "grade": g, "reason": "r"} for i, g in enumerate(grades, 1)])


def test_label_stability_of_scripted_samples():
    # one call of two passages asked three times: d1 3, 3, 2 (majority 3); d2 0, 0, 0
    call = json.dumps([reply(3, 0), reply(3, 0), reply(2, 0)])
    # a call of one passage: d3 1, 0, 0 (majority 0; flips across the threshold)
    single = json.dumps([reply(1), reply(0), reply(0)])
    # a re-asked passage: its sample replies grade it alone under P1 of a two-passage call: not read back
    reasked = json.dumps([reply(2), reply(2), reply(2)])
    rows = [("q", "d1", 3, call), ("q", "d2", 0, call), ("q", "d3", 0, single), ("r", "d4", 2, reasked),
            ("r", "d5", 2, reasked)]
    grades, unread = sample_grades(rows)
    assert grades == {("q", "d1"): [3, 3, 2], ("q", "d2"): [0, 0, 0], ("q", "d3"): [1, 0, 0]}
    assert unread == 2  # r's two rows are one call of two passages whose replies each grade P1 only
    stability = label_stability(grades, threshold=1, samples=3, unread=unread)
    assert (stability.pairs, stability.samples) == (3, 3)
    assert stability.flipped == pytest.approx(2 / 3)  # d1 and d3
    assert stability.flipped_binary == pytest.approx(1 / 3)  # d3 only: d1's 3 and 2 are both relevant
    assert stability.agreement == pytest.approx((1 / 3 + 1 + 1 / 3) / 3)  # of the three pairs of samples


def test_a_call_whose_replies_leave_a_passage_out_or_disagree_with_the_grade_is_not_read_back():
    partial = json.dumps([reply(2), reply(2), reply(2)])  # two passages recorded, each reply grades one
    wrong = json.dumps([reply(1), reply(1), reply(1)])  # the samples' majority 1, the grade stored 3
    grades, unread = sample_grades([("q", "a", 2, partial), ("q", "b", 2, partial), ("q", "c", 3, wrong)])
    assert grades == {} and unread == 3


def test_new_run_bias_on_a_fixture_with_a_known_answer():
    # one topic; at depth 2 each run contributes one pair of its own and shares x
    runs = {name: pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": [own, "x"], "score": [2.0, 1.0]})
            for name, own in (("A", "a1"), ("B", "b1"), ("C", "c1"))}
    people = pd.DataFrame({"query_id": ["q1"] * 4, "doc_id": ["x", "a1", "b1", "c1"], "relevance": [1, 1, 0, 0]})
    model = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["a1", "b1", "c1"], "relevance": [0, 1, 1]})
    bias = new_run_bias(people, model, runs, "P@2", depth=2)
    table = bias.runs.set_index("run")
    # people: A 1.0 (rank 1), B 0.5 and C 0.5 (rank 2: one run scores more)
    assert table["people"].to_dict() == {"A": 1.0, "B": 0.5, "C": 0.5}
    assert table["rank"].to_dict() == {"A": 1, "B": 2, "C": 2}
    # filled by the model: A's a1 -> 0: 0.5, no other run above it (B, C 0.5): rank 1; B's b1 -> 1: 1.0, rank 1
    # (A's 1.0 is not above); C likewise: shifts 0, -1, -1
    assert table["filled"].to_dict() == {"A": 0.5, "B": 1.0, "C": 1.0}
    assert table["filled_rank"].to_dict() == {"A": 1, "B": 1, "C": 1}
    assert table["shift"].to_dict() == {"A": 0, "B": -1, "C": -1}
    assert table["left_out_rank"].to_dict() == {"A": 1, "B": 2, "C": 2}  # own pairs unjudged: A 0.5, B 0.5, C 0.5
    assert bias.mean_abs_shift == pytest.approx(2 / 3) and bias.mean_shift == pytest.approx(-2 / 3)
    assert table["own_filled"].to_dict() == {"A": 1, "B": 1, "C": 1}


# ---- through `judge validate`, on real files --------------------------------------------------------------

def test_judge_validate_prints_tau_ap_label_stability_and_new_run_bias(tmp_path, cli_run, llm_server):
    ws, runs, pooled, r = make_sampled_bench(tmp_path, cli_run, llm_server)
    assert pooled.exit_code == 0, pooled.output
    assert r.exit_code == 0, r.output
    assert len(llm_server.requests) == 12  # four pairs, three samples each
    assert cli_run("judge", "validate", "-w", ws, "--sample", "--size", "4", "--from", "depth-2").exit_code == 0
    r = cli_run("judge", "validate", "-w", ws, "--measure", "P@2", "--format", "json", "--bootstrap", "50")
    assert r.exit_code == 0, r.output
    (judge,) = json.loads(r.stdout)["judges"]
    # people: A 1.0, B 0.5, C 0.5; the model (a1 0, b1 1, c1 1, x 1): A 0.5, B 1.0, C 1.0; tau_AP = -0.5 by hand:
    # the model's order {B, C}, A: C under B (people tie them: 1/2), A under B and C (both below A: 0/2);
    # B C A: 2/2 * (0.5 + 0) - 1 = -0.5, and C B A the same
    assert judge["tau_ap"]["value"] == pytest.approx(-0.5)
    stability = judge["label_stability"]
    assert stability == {"pairs": 4, "samples": 3, "flipped": 0.5, "flipped_binary": 0.25,
                         "agreement": pytest.approx(2 / 3), "unread": 0}  # x flips across the threshold, b1 not
    bias = judge["new_run_bias"]
    assert bias["mean_abs_shift"] == pytest.approx(2 / 3) and bias["depth"] == 2
    assert [(row["run"], row["rank"], row["filled_rank"]) for row in bias["runs"]] == [("A", 1, 1), ("B", 2, 1),
                                                                                       ("C", 2, 1)]
    table = cli_run("judge", "validate", "-w", ws, "--measure", "P@2", "--bootstrap", "50").stdout
    assert "tau_AP" in table.splitlines()[1] and "-0.500" in table
    assert ("label stability (3 samples): 4 pairs, grade flips in 50.0% (across the threshold in 25.0%), two "
            "samples agree 66.7%") in table
    assert "mean absolute rank shift 0.67 over 3 runs, mean shift -0.67 (negative: favoured)" in table
    assert "  B: rank 2 with people, 1 with its holes filled, 2 left unjudged (1 of 1 own pairs graded by the model)" \
        in table
