"""`trecbench demo` builds and scores the bundled sample benchmark end to end, offline, with the expected numbers."""
from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def demo_output(tmp_path_factory):
    from click.testing import CliRunner

    from trecbench.cli import cli

    folder = tmp_path_factory.mktemp("demo") / "out"
    result = CliRunner().invoke(cli, ["demo", "--dir", str(folder), "--quiet"], catch_exceptions=False)
    return folder, result


def _rows(text: str, names: set[str]) -> dict[str, list[str]]:
    return {line.split()[0]: line.split()[1:] for line in text.splitlines() if line.split() and line.split()[0] in names}


def test_demo_scores_retrieval_with_the_sample_runs_and_a_bm25_baseline(demo_output):
    folder, result = demo_output
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Sample benchmark: 12 topics, 6 runs, pool of 524 candidates, 728 judgments, "
                                    "77 nuggets")
    rows = _rows(result.stdout, {"bm25_rm3", "bm25", "bm25s_baseline", "tfidf", "lexical_overlap", "title_only"})
    assert rows["bm25_rm3"][:3] == ["0.8941", "1.0000", "0.9146"]  # nDCG@10, R@100, AP
    assert rows["title_only"][0] == "0.5085"
    assert rows["bm25s_baseline"][0] == "0.7963"


def test_demo_scores_answers_evidence_reusability_and_agreement(demo_output):
    _, result = demo_output
    rows = _rows(result.stdout, {"rag_good", "rag_partial", "rag_poor"})
    # V_strict; rag_poor cites nothing, so no nugget is fully supported
    assert [rows[r][0] for r in ("rag_good", "rag_partial", "rag_poor")] == ["1.0000", "0.3750", "0.0000"]
    # EvidenceRecall@5, CompleteEvidence@5, IDRecall@5
    assert "sample_rag            0.8226              0.2500      0.7417" in result.stdout
    assert "sample_rag           final       62        76 0.8158         11" in result.stdout
    assert "verdict: SAFE to reuse for new systems" in result.stdout
    assert "Cohen's kappa 0.9042 on 230 pairs both judged" in result.stdout
    assert "Judge agreement (assessor-1 vs assessor-2)" in result.stdout  # offline, the two assessors compared


def test_demo_writes_a_workspace_qrels_and_a_self_contained_report(demo_output):
    folder, result = demo_output
    report = (folder / "report.html").read_text()
    for heading in ("Retrieval", "Answers", "Evidence", "Pool", "Judge agreement", "Model calls and cost"):
        assert heading in report
    assert "<script src" not in report and 'href="http' not in report
    assert (folder / "bench" / "bench.sqlite").is_file() and (folder / "qrels.txt").is_file()
    assert "Report: " in result.stdout


def test_demo_replaces_an_earlier_demo_but_not_another_folder(tmp_path, cli_run):
    other = tmp_path / "precious"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    result = cli_run("demo", "--dir", other, "--quiet")
    assert result.exit_code == 2 and "is not a demo folder" in result.stderr
    assert (other / "notes.txt").read_text() == "keep me"


def test_sample_numbers_equal_trec_eval_format_output(cli_run):
    from trecbench.demo import sample_dir

    root = sample_dir()
    result = cli_run("eval", "retrieval", "--qrels", root / "qrels.txt", root / "runs" / "bm25_rm3.txt",
                     "-m", "ndcg_cut.10", "--format", "trec_eval")
    assert result.stdout == "ndcg_cut_10           \tall\t0.8941\n"


def test_demo_with_a_model_judges_drafts_and_assigns_through_it(tmp_path, llm_server, cli_run, monkeypatch):
    import json
    import re

    def model(body):
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if "assessing search results" in system:  # relevance judging
            labels = re.findall(r"\[P(\d+)\]", user)
            return json.dumps([{"passage": f"P{x}", "grade": 2 if int(x) % 2 else 0, "reason": "r"} for x in labels])
        if "how important each nugget" in system:  # nugget importance
            names = re.findall(r"^N(\d+): ", user, re.M)
            return json.dumps([{"nugget": f"N{k}", "importance": "vital" if int(k) % 2 else "okay"} for k in names])
        m = re.search(r"holding exactly (\d+) labels", user)
        if m:  # nugget assignment
            return json.dumps({"labels": ["support"] * int(m.group(1))})
        earlier = re.findall(r"^N(\d+): (.*)$", user, re.M)  # nugget drafting: keep the list, add one fact
        first = re.search(r"^\[P1\] (.*)$", user, re.M)
        nuggets = [{"from": [f"N{k}"], "text": t, "support": []} for k, t in earlier]
        if first:
            nuggets.append({"from": [], "text": " ".join(first.group(1).split()[:8]), "support": ["P1"]})
        return json.dumps({"nuggets": nuggets})

    llm_server.script(model)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    folder = tmp_path / "demo"
    result = cli_run("demo", "--dir", folder, "--model", "openai/gpt-4o-mini", "--api-base", llm_server.base_url,
                     "--quiet")
    assert result.exit_code == 0, result.output
    assert "nuggets assigned by the model" in result.stdout
    line = next(x for x in result.stdout.splitlines() if x.startswith("Judge agreement"))  # names the model compared
    assert re.match(r"Judge agreement \(openai/gpt-4o-mini:graded-0-3@[0-9a-f]{8}:batch=5 vs assessor-2\)", line), line
    assert "assessor-1" not in line
    assert (folder / "report.html").is_file()
    systems = {r["messages"][0]["content"][:30] for r in llm_server.requests}
    assert len(systems) >= 3  # judging, drafting and assignment prompts all went to the model
    import sqlite3

    with sqlite3.connect(folder / "bench" / "bench.sqlite") as conn:
        judged = conn.execute("SELECT COUNT(*) FROM judgments j JOIN judges g ON g.id = j.judge_id "
                              "WHERE g.kind = 'model' AND j.status = 'ok'").fetchone()[0]
        origins = {r[0] for r in conn.execute("SELECT origin FROM nuggets")}
    assert judged == 524 and origins == {"llm"}


def test_the_demo_uses_only_trecbenchs_public_names():
    import ast
    import inspect

    import trecbench
    import trecbench.demo

    tree = ast.parse(inspect.getsource(trecbench.demo))
    names = []
    for node in ast.walk(tree):  # the offline path and the model's calls alike
        if isinstance(node, ast.Import):
            assert not any(a.name.startswith("trecbench") for a in node.names), ast.unparse(node)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("trecbench"):
            assert node.module == "trecbench", f"line {node.lineno} imports from {node.module}"
            names += [a.name for a in node.names]
    assert names and set(names) <= set(trecbench.__all__)
    assert all(getattr(trecbench, name) is not None for name in names)


def test_serving_the_demo_workspace_shows_a_document_to_judge_not_nothing_left(demo_output):
    from starlette.testclient import TestClient

    from trecbench.web.app import create_app
    from web_support import csrf_of

    folder, _ = demo_output
    client = TestClient(create_app(folder / "bench", require_token=False), base_url="http://127.0.0.1")
    topics = client.get("/").text
    # the runs pooled deeper than the sample's judgments reach: every topic has documents left for people
    assert "pool depth-25" in topics and "<td>done</td>" not in topics
    assert all(f'name="qid" value="T{n:02d}">judge</button>' in topics for n in range(1, 13))
    page = client.post("/next", data={"csrf": csrf_of(topics), "qid": "T01"})
    assert page.url.path == "/judge" and 'id="doc-text"' in page.text and 'id="grade-form"' in page.text
