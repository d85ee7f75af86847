"""A workspace's own relevance scale (trecbench.toml's [scale]) in model judging, `judge validate` and the
relevance level `eval retrieval -w` scores at."""
from __future__ import annotations

import json
import re

from test_judge_validate import DOCS_PER_TOPIC, TOPICS, bench, sample_pairs, true_grade  # noqa: F401 (bench: a fixture)

SCALE = """
[scale]
relevant = 2
narrative = "Grade for a person writing a report."
""" + "".join(f'[[scale.level]]\ngrade = {g}\nname = "level {g}"\ndefinition = "what grade {g} means."\n'
              for g in range(5))


def fours(body: dict) -> str:
    """A model that answers 4 (the 0-4 scale's top) for even documents and the true grade for the others."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    assert "Grade for a person writing a report.\n\n4 - what grade 4 means." in system
    qid = re.search(r"topic (t\d+)", user).group(1)
    return json.dumps([{"passage": f"P{label}", "grade": 4 if int(docid[-2:]) % 2 == 0 else true_grade(qid, docid)}
                       for label, docid in re.findall(r"\[P(\d+)\] passage (\S+)", user)])


def test_the_model_judges_and_validate_binarises_on_the_workspaces_scale(bench, cli_run, llm_server, tmp_path):  # noqa: F811
    toml = bench / "trecbench.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + SCALE, encoding="utf-8")
    assert cli_run("judge", "validate", "-w", bench, "--sample", "--size", "40", "--seed", "1").exit_code == 0
    pairs = sample_pairs(bench)
    human = tmp_path / "human.txt"
    human.write_text("".join(f"{q} 0 {d} {true_grade(q, d)}\n" for q, d in pairs))
    assert cli_run("qrels", "import", human, "-w", bench, "--judge", "alice", "--kind", "human").exit_code == 0
    llm_server.script(fours)
    r = cli_run("judge", "llm", "-w", bench, "--model", "openai/gpt-4o-mini", "--api-base", llm_server.base_url,
                "--api-key", "test", "--quiet", "--batch", "5", "--pool", "validation")
    assert r.exit_code == 0, r.output
    schema = llm_server.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["grades"]["items"]["properties"]["grade"]["enum"] == [0, 1, 2, 3, 4]
    r = cli_run("judge", "validate", "-w", bench, "--format", "json", "--bootstrap", "50")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["threshold"] == 2  # the scale's `relevant`, not 1
    (judge,) = out["judges"]
    assert judge["judge"].startswith("openai/gpt-4o-mini:graded-0-4@")
    evens = sum(1 for _, d in pairs if int(d[-2:]) % 2 == 0)
    assert evens and sum(int(row.get("4", 0)) for row in judge["confusion"].values()) == evens  # grade 4 kept


def test_eval_retrieval_on_a_workspace_counts_relevant_from_the_scales_grade(bench, cli_run, tmp_path):  # noqa: F811
    qrels = tmp_path / "all.txt"
    docs = [(q, f"{q}-d{j:02d}") for q in TOPICS for j in range(DOCS_PER_TOPIC)]
    qrels.write_text("".join(f"{q} 0 {d} {true_grade(q, d)}\n" for q, d in docs))
    assert cli_run("qrels", "import", qrels, "-w", bench, "--judge", "alice", "--kind", "human").exit_code == 0
    run = tmp_path / "run0.txt"

    def score(*options) -> str:
        r = cli_run("eval", "retrieval", *options, run, "-m", "P@10", "--format", "json")
        assert r.exit_code == 0, r.output
        return r.stdout

    at_1, at_2 = score("--qrels", qrels), score("--qrels", qrels, "-l", "2")
    assert at_1 != at_2
    assert score("-w", bench) == at_1  # the default scale: grade 1 and up
    toml = bench / "trecbench.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + SCALE, encoding="utf-8")
    assert score("-w", bench) == at_2  # [scale] relevant = 2
    assert score("-w", bench, "-l", "1") == at_1  # -l still says otherwise
