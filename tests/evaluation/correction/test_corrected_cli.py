"""`eval retrieval -w BENCH --corrected` and `judge validate --sample --strategy uncertainty` on a real workspace:
a model judge (the loopback server) that grades too high, people's grades imported for a sample."""
from __future__ import annotations

import hashlib
import json
import re

import pytest

TOPICS = [f"t{i:02d}" for i in range(12)]
DOCS_PER_TOPIC = 20
RUNS = 4


def h(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:12], 16)


def true_grade(qid: str, docid: str) -> int:
    return [0, 0, 0, 1, 1, 2, 3][h("grade", qid, docid) % 7]


def high_grade(qid: str, docid: str) -> int:
    """The true grade, one higher for half the pairs: a judge biased towards high grades."""
    g = true_grade(qid, docid)
    return min(3, g + 1) if h("up", qid, docid) % 2 else g


def model_server(body: dict) -> str:
    user = body["messages"][-1]["content"]
    qid = re.search(r"topic (t\d+)", user).group(1)
    return json.dumps([{"passage": f"P{label}", "grade": high_grade(qid, docid), "reason": "read"}
                       for label, docid in re.findall(r"\[P(\d+)\] passage (\S+)", user)])


@pytest.fixture
def bench(tmp_path, cli_run, llm_server):
    docs = [(q, f"{q}-d{j:02d}") for q in TOPICS for j in range(DOCS_PER_TOPIC)]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"id": d, "contents": f"passage {d} text"}) + "\n"
                                                   for _, d in docs))
    (tmp_path / "topics.tsv").write_text("".join(f"{q}\tquestion of topic {q}\n" for q in TOPICS))
    ws = tmp_path / "bench"
    assert cli_run("init", ws, "--corpus", tmp_path / "corpus.jsonl", "--topics", tmp_path / "topics.tsv").exit_code == 0
    for r in range(RUNS):
        lines = []
        for q in TOPICS:
            scored = sorted(((true_grade(q, d) + (h("run", str(r), d) % 1000) / 1000 * (r + 1) * 1.5, d)
                             for qq, d in docs if qq == q), reverse=True)
            lines += [f"{q} Q0 {d} {i} {s:.4f} run{r}" for i, (s, d) in enumerate(scored, 1)]
        (tmp_path / f"run{r}.txt").write_text("\n".join(lines) + "\n")
    runs = [tmp_path / f"run{r}.txt" for r in range(RUNS)]
    assert cli_run("pool", *runs, "--depth", "20", "-w", ws, "--name", "depth-20").exit_code == 0
    llm_server.script(model_server)
    r = cli_run("judge", "llm", "-w", ws, "--model", "openai/gpt-4o-mini", "--api-base", llm_server.base_url,
                "--api-key", "test", "--quiet", "--batch", "10", "--pool", "depth-20")
    assert r.exit_code == 0, r.output
    return ws


def judge_sample(ws, tmp_path, cli_run, pool: str, share: float = 1.0) -> list[tuple[str, str]]:
    """People grade (the first `share` of) the sample `pool`: the true grades, imported as a person's."""
    from trecbench.store import Workspace
    from trecbench.store.workspace import load_pool

    frame = load_pool(Workspace(ws), pool)
    pairs = list(zip(frame["query_id"], frame["doc_id"]))[: int(len(frame) * share)]
    path = tmp_path / f"people-{pool}.txt"
    path.write_text("".join(f"{q} 0 {d} {true_grade(q, d)}\n" for q, d in pairs))
    r = cli_run("qrels", "import", path, "-w", ws, "--judge", "alice", "--kind", "human")
    assert r.exit_code == 0, r.output
    return pairs


def true_means(tmp_path, measure: str) -> dict[str, float]:
    import trecbench

    path = tmp_path / "truth.txt"
    path.write_text("".join(f"{q} 0 {q}-d{j:02d} {true_grade(q, f'{q}-d{j:02d}')}\n"
                            for q in TOPICS for j in range(DOCS_PER_TOPIC)))
    frame = trecbench.evaluate(str(path), {f"run{r}": str(tmp_path / f"run{r}.txt") for r in range(RUNS)}, [measure])
    return frame[measure].to_dict()


def test_eval_retrieval_prints_the_plain_and_the_corrected_figures(bench, tmp_path, cli_run):
    assert cli_run("judge", "validate", "-w", bench, "--sample", "--size", "120", "--seed", "1").exit_code == 0
    judge_sample(bench, tmp_path, cli_run, "validation")
    runs = [tmp_path / f"run{r}.txt" for r in range(RUNS)]
    plain = cli_run("eval", "retrieval", "-w", bench, *runs, "-m", "P@10", "-m", "nDCG@10")
    r = cli_run("eval", "retrieval", "-w", bench, *runs, "-m", "P@10", "-m", "nDCG@10", "--corrected",
                "--width", "0.05")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(plain.stdout)  # the plain table is unchanged, the corrected one follows
    added = r.stdout[len(plain.stdout):]
    assert "model judge 'openai/gpt-4o-mini:graded-0-3@" in added and "120 pairs of its qrels graded by people" in added
    assert "sample 'validation' (stratified: 120 of its 120 pairs judged by people)" in added
    assert "label-level PPI" in added and "not corrected" in added  # nDCG@10: not linear, no whole topic
    assert "note: nDCG@10: not corrected: not linear in the gains" in added
    assert "differences with run0 under the same correction" in added
    assert "pairs judged by people for a 95% interval 0.05 wide" in added
    out = json.loads(cli_run("eval", "retrieval", "-w", bench, *runs, "-m", "P@10", "--corrected",
                             "--format", "json").stdout)
    truth = true_means(tmp_path, "P@10")
    rows = {s["run"]: s for s in out["corrected"]["scores"]}
    assert sorted(s["run"] for s in out["scores"]) == sorted(rows) == ["run0", "run1", "run2", "run3"]
    for run, row in rows.items():
        # the biased judge's plain figure is above the truth; the corrected interval holds it
        assert row["plain"] > truth[run] and row["low"] <= truth[run] <= row["high"], (run, row, truth[run])
        assert abs(row["corrected"] - truth[run]) < row["plain"] - truth[run]
    assert {d["run"] for d in out["corrected"]["differences"]} == {"run1", "run2", "run3"}
    r = cli_run("report", "-w", bench, "-m", "P@10", "-o", tmp_path / "report.html")
    assert r.exit_code == 0, r.output
    html = (tmp_path / "report.html").read_text()
    section = html[html.index('id="corrected"'):]
    assert "corrected by people&#39;s grades" in section or "corrected by people's grades" in section
    assert f"{rows['run0']['corrected']:.4f}" in section and "label" in section


def test_corrected_scores_follow_what_people_have_judged_so_far(bench, tmp_path, cli_run):
    runs = [tmp_path / f"run{r}.txt" for r in range(RUNS)]
    r = cli_run("eval", "retrieval", "-w", bench, *runs, "-m", "P@10", "--corrected")
    assert r.exit_code == 2 and "no pair has a human grade" in r.stderr
    r = cli_run("judge", "validate", "-w", bench, "--sample", "--size", "100", "--strategy", "uncertainty",
                "--name", "people", "--format", "json")
    assert r.exit_code == 0, r.output
    drawn = json.loads(r.stdout)
    assert drawn["pairs"] == 100
    # people go where the model is unsure: a pair it graded 3 (far above the threshold 1) is drawn with a
    # lower probability than one it graded 0 or 1, and every probability is recorded for the correction
    from trecbench.store import Workspace

    design = Workspace(bench).pool("people").params["inclusion"]
    assert len(design) == 100 and all(0 < p <= 1 for _, _, p, _ in design)
    sure = [p for q, d, p, _ in design if high_grade(q, d) == 3]
    unsure = [p for q, d, p, _ in design if high_grade(q, d) <= 1]
    assert sure and unsure and max(sure) < min(unsure)
    judge_sample(bench, tmp_path, cli_run, "people", share=0.5)
    half = json.loads(cli_run("eval", "retrieval", "-w", bench, *runs, "-m", "P@10", "--corrected",
                              "--format", "json").stdout)["corrected"]
    assert half["pairs"] == 50 and "uncertainty: 50 of its 100 pairs judged by people" in half["used"]
    judge_sample(bench, tmp_path, cli_run, "people")
    full = json.loads(cli_run("eval", "retrieval", "-w", bench, *runs, "-m", "P@10", "--corrected",
                              "--format", "json").stdout)["corrected"]
    assert full["pairs"] == 100
    width = lambda c: sum(s["high"] - s["low"] for s in c["scores"])  # noqa: E731
    assert width(full) < width(half)


def test_corrected_options_are_refused_where_they_cannot_apply(bench, tmp_path, cli_run):
    run = tmp_path / "run0.txt"
    r = cli_run("eval", "retrieval", "--qrels", tmp_path / "none.txt", run, "--corrected")
    assert r.exit_code == 2 and "give -w BENCH" in r.output
    r = cli_run("eval", "retrieval", "-w", bench, run, "--width", "0.1")
    assert r.exit_code == 2 and "go with --corrected" in r.output
    r = cli_run("eval", "retrieval", "-w", bench, run, "--corrected", "--format", "csv")
    assert r.exit_code == 2 and "table or JSON" in r.output
    r = cli_run("eval", "retrieval", "-w", bench, run, "--corrected", "--corrected-judge", "nobody")
    assert r.exit_code == 2 and "no model judge 'nobody'" in r.stderr
    r = cli_run("judge", "validate", "-w", bench, "--strategy", "uncertainty")
    assert r.exit_code == 2 and "go with --sample" in r.output
