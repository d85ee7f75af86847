"""`trecbench judge validate`: a blind stratified sample, and model judges whose error rate is known, checked."""
from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

TOPICS = [f"t{i:02d}" for i in range(12)]
DOCS_PER_TOPIC = 20
RUNS = 5
P_RIGHT = 0.7  # the noisy judge gives the true grade with this probability


def h(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:12], 16)


def true_grade(qid: str, docid: str) -> int:
    return h("grade", qid, docid) % 4


def noisy_grade(qid: str, docid: str) -> int:
    """The true grade with probability P_RIGHT (deterministic per pair), else one of the other three."""
    g = true_grade(qid, docid)
    if h("right", qid, docid) % 1000 < P_RIGHT * 1000:
        return g
    return (g + 1 + h("other", qid, docid) % 3) % 4


def model_server(body: dict) -> str:
    """Perfect under the graded-0-3 prompt, noisy under multi-criteria; the pair is read from the texts."""
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    qid = re.search(r"topic (t\d+)", user).group(1)
    grades = []
    for label, docid in re.findall(r"\[P(\d+)\] passage (\S+)", user):
        g = noisy_grade(qid, docid) if "Exactness" in system else true_grade(qid, docid)
        grades.append({"passage": f"P{label}", "grade": g, "reason": f"{docid} looked at"})
    return json.dumps(grades)


@pytest.fixture
def bench(tmp_path, cli_run):
    docs = [(q, f"{q}-d{j:02d}") for q in TOPICS for j in range(DOCS_PER_TOPIC)]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"id": d, "contents": f"passage {d} text"}) + "\n"
                                                   for _, d in docs))
    (tmp_path / "topics.tsv").write_text("".join(f"{q}\tquestion of topic {q}\n" for q in TOPICS))
    ws = tmp_path / "bench"
    assert cli_run("init", ws, "--corpus", tmp_path / "corpus.jsonl", "--topics", tmp_path / "topics.tsv").exit_code == 0
    runs = []
    for r in range(RUNS):
        lines = []
        for q in TOPICS:
            # better runs put higher true grades first: noise grows with r
            scored = sorted(((true_grade(q, d) + (h("run", str(r), d) % 1000) / 1000 * (r + 1) * 1.5, d)
                             for qq, d in docs if qq == q), reverse=True)
            lines += [f"{q} Q0 {d} {i} {s:.4f} run{r}" for i, (s, d) in enumerate(scored, 1)]
        path = tmp_path / f"run{r}.txt"
        path.write_text("\n".join(lines) + "\n")
        runs.append(path)
    r = cli_run("pool", *runs, "--depth", "20", "-w", ws, "--name", "depth-20", "-o", tmp_path / "pool.tsv")
    assert r.exit_code == 0, r.output
    return ws


def sample_pairs(ws) -> list[tuple[str, str]]:
    from trecbench.store import Workspace
    from trecbench.store.workspace import load_pool

    pool = load_pool(Workspace(ws), "validation")
    return list(zip(pool["query_id"], pool["doc_id"]))


def test_the_sample_has_the_size_asked_or_the_size_a_width_implies(bench, cli_run):
    r = cli_run("judge", "validate", "-w", bench, "--sample", "--size", "60", "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["pairs"] == 60 and len(sample_pairs(bench)) == 60 and out["source"] == "depth-20"
    assert sum(k for k, _ in out["strata"].values()) == 60
    assert set(out["strata"]) == {"1-5", "6-10", "11-20"}  # bands of the best rank a run gave
    # proportional: the pool has 12 topics x 20 documents, each band's share of 60
    counts = {s: n for s, (_, n) in out["strata"].items()}
    assert sum(counts.values()) == 240
    r = cli_run("judge", "validate", "-w", bench, "--sample", "--width", "0.1", "--name", "wide", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["pairs"] == 240  # ceil(1.96^2/0.01) = 385 > the 240 pooled
    r = cli_run("judge", "validate", "-w", bench, "--sample", "--width", "0.2", "--name", "w2", "--format", "json")
    assert json.loads(r.stdout)["pairs"] == 97  # ceil(3.8415 / 0.04)


def test_model_grades_stratify_the_sample_when_a_model_has_judged(bench, cli_run, llm_server):
    llm_server.script(model_server)
    r = cli_run("judge", "llm", "-w", bench, "--model", "openai/gpt-4o-mini", "--api-base", llm_server.base_url,
                "--api-key", "test", "--quiet", "--batch", "10", "--pool", "depth-20")
    assert r.exit_code == 0, r.output
    r = cli_run("judge", "validate", "-w", bench, "--sample", "--size", "48", "--format", "json")
    strata = json.loads(r.stdout)["strata"]
    assert {s.split(" grade ")[1] for s in strata} == {"0", "1", "2", "3"}
    assert all(k >= 1 for k, _ in strata.values())


def test_measured_agreement_matches_a_judge_whose_error_rate_is_known(bench, cli_run, llm_server, tmp_path):
    assert cli_run("judge", "validate", "-w", bench, "--sample", "--size", "120", "--seed", "3").exit_code == 0
    pairs = sample_pairs(bench)
    human = tmp_path / "human.txt"
    human.write_text("".join(f"{q} 0 {d} {true_grade(q, d)}\n" for q, d in pairs))
    r = cli_run("qrels", "import", human, "-w", bench, "--judge", "alice", "--kind", "human")
    assert r.exit_code == 0, r.output
    r = cli_run("judge", "validate", "-w", bench)
    assert r.exit_code == 0 and "no model judge has judged pool 'validation'" in r.stdout
    llm_server.script(model_server)
    for prompt in ("graded-0-3", "multi-criteria"):
        r = cli_run("judge", "llm", "-w", bench, "--model", "openai/gpt-4o-mini", "--api-base", llm_server.base_url,
                    "--api-key", "test", "--quiet", "--batch", "5", "--pool", "validation", "--prompt", prompt)
        assert r.exit_code == 0, r.output
    r = cli_run("judge", "validate", "-w", bench, "--format", "json", "--bootstrap", "200")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["pairs"] == 120 and out["runs"] == RUNS and out["reference"] == "alice"
    best, noisy = out["judges"]  # ranked: the perfect judge first
    sha = __import__("trecbench.judging.prompts", fromlist=["x"]).load_prompt("graded-0-3").sha256[:8]
    assert best["judge"] == f"openai/gpt-4o-mini:graded-0-3@{sha}:batch=5 (batch 5, samples 1)"
    assert best["kappa"]["value"] == 1.0 and best["kappa_binary"]["value"] == 1.0 and best["tau"]["value"] == pytest.approx(1.0)
    assert best["verdict"] == "good"
    truth = [true_grade(q, d) for q, d in pairs]
    model = [noisy_grade(q, d) for q, d in pairs]
    assert 0.6 < np.mean(np.equal(truth, model)) < 0.8  # the judge's error rate is what it is meant to be
    assert noisy["kappa"]["value"] == pytest.approx(cohen_kappa_score(truth, model), abs=1e-12)
    assert noisy["kappa_binary"]["value"] == pytest.approx(
        cohen_kappa_score([g >= 1 for g in truth], [g >= 1 for g in model]), abs=1e-12)
    confusion = noisy["confusion"]
    assert sum(int(confusion[str(a)][str(b)]) for a in range(4) for b in range(4) if a == b) == \
        int(np.sum(np.equal(truth, model)))
    # tau: the runs' nDCG@10 under each set of grades, scored by trec_eval's rules on the sampled pairs
    import trecbench

    def means(grades):
        path = tmp_path / f"q{len(list(tmp_path.iterdir()))}.txt"
        path.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in zip(pairs, grades)))
        return trecbench.evaluate(str(path), [str(tmp_path / f"run{r}.txt") for r in range(RUNS)], ["nDCG@10"])
    a, b = means(truth)["nDCG@10"], means(model)["nDCG@10"]
    assert noisy["tau"]["value"] == pytest.approx(kendalltau(a, b).statistic, abs=1e-12)
    for key in ("kappa", "kappa_binary"):
        assert noisy[key]["low"] <= noisy[key]["value"] <= noisy[key]["high"] < 1
    assert noisy["cost_per_1000"] > 0 and best["cost_per_1000"] > 0
    topics = noisy["topics"]
    assert sum(t["pairs"] for t in topics.values()) == 120
    assert min(t["exact"] for t in topics.values()) < 1
    # the same seed gives the same intervals
    again = json.loads(cli_run("judge", "validate", "-w", bench, "--format", "json", "--bootstrap", "200").stdout)
    assert again["judges"][1]["kappa"] == noisy["kappa"]
    table = cli_run("judge", "validate", "-w", bench, "--bootstrap", "50").stdout
    assert "verdict: good = binarised kappa >= 0.4 and tau >= 0.9;" in table and "kappa 0.31-0.37" in table
    assert table.index("graded-0-3") < table.index("multi-criteria")
    assert cli_run("report", "-w", bench, "-o", tmp_path / "report.html").exit_code == 0
    html = (tmp_path / "report.html").read_text()
    section = html[html.index('id="validation"'):]
    assert "validation sample validation (120 pairs, 12 topics, 5 runs" in section
    assert f"{noisy['kappa']['value']:.3f}" in section and "good" in section and "kappa 0.31-0.37" in section


def test_comparing_without_people_or_without_a_sample_is_refused_clearly(bench, cli_run):
    r = cli_run("judge", "validate", "-w", bench)
    assert r.exit_code == 2 and "the workspace has no validation sample" in r.stderr
    assert cli_run("judge", "validate", "-w", bench, "--sample", "--size", "10").exit_code == 0
    r = cli_run("judge", "validate", "-w", bench)
    assert r.exit_code == 2 and "no judgment by a person or an import of pool 'validation'" in r.stderr
    r = cli_run("judge", "validate", "-w", bench, "--sample", "--size", "10")
    assert r.exit_code == 2 and "choose another --name" in r.stderr
    r = cli_run("judge", "validate", "-w", bench, "--sample")
    assert r.exit_code == 2 and "one of --size and --width" in r.output
    r = cli_run("judge", "validate", "-w", bench, "--sample", "--width", "1.5")
    assert r.exit_code == 2


def test_the_web_app_hides_model_grades_on_a_validation_sample(bench, cli_run):
    from starlette.testclient import TestClient

    from trecbench.store import Judge, Judgment, Workspace
    from trecbench.web.app import create_app

    assert cli_run("judge", "validate", "-w", bench, "--sample", "--size", "10").exit_code == 0
    qid, docid = sample_pairs(bench)[0]
    Workspace(bench).record(Judgment(qid, docid, 3, Judge("model", "m:graded-0-3", "m", "graded-0-3", "x")))
    client = TestClient(create_app(bench, require_token=False, pool="validation"), base_url="http://127.0.0.1")
    page = client.get("/judge", params={"qid": qid, "docid": docid, "suggest": "1"}).text
    assert 'id="blind"' in page and "suggested-grade" not in page and "show-suggestion" not in page
    client = TestClient(create_app(bench, require_token=False, pool="depth-20"), base_url="http://127.0.0.1")
    page = client.get("/judge", params={"qid": qid, "docid": docid, "suggest": "1"}).text
    assert '<strong id="suggested-grade">3</strong>' in page
