"""`trecbench report`: one self-contained HTML file with every section, built from a workspace.

The bench is the bundled sample (170 passages, 12 topics, five runs) with its qrels imported, a model
judge and an assessor who judged some of the same pairs, a stored pool, nuggets with evidence links,
logged model calls, an answers file and staged contexts.
"""
from __future__ import annotations

from paths import ROOT

import json
import re
import shutil
from pathlib import Path

import pytest

SAMPLE = ROOT / "src" / "trecbench" / "sample"
RUNS = ["bm25", "bm25_rm3", "tfidf", "title_only", "lexical_overlap"]


def sample_bench(root: Path, *, runs_folder: bool = True, extras: bool = True) -> Path:
    """A workspace over the sample: nist's qrels, model and assessor judgments, a pool, nuggets, model calls."""
    from trecbench.llm.cache import ResponseCache
    from trecbench.llm.records import CallRecord
    from trecbench.nuggets.store import NuggetStore
    from trecbench.pooling import pool_runs
    from trecbench.qrels import read_qrels
    from trecbench.store import Judge, Judgment, Workspace

    root.mkdir(parents=True, exist_ok=True)
    for name in ("corpus.jsonl", "topics.tsv", "qrels.txt"):
        shutil.copy(SAMPLE / name, root / name)  # the corpus index (.idx) is written beside the copy
    ws = Workspace.init(root / "bench", corpus=str(root / "corpus.jsonl"), topics=str(root / "topics.tsv"),
                        name="larkspur")
    qrels = read_qrels(root / "qrels.txt")
    nist = Judge("import", "nist")
    ws.record_many([Judgment(q, d, int(g), nist) for q, d, g in zip(qrels["query_id"], qrels["doc_id"],
                                                                    qrels["relevance"])])
    if runs_folder:
        for run in RUNS:
            shutil.copy(SAMPLE / "runs" / f"{run}.txt", root / "bench" / "runs" / f"{run}.txt")
    if not extras:
        ws.close()
        return root / "bench"
    # pooled as `trecbench pool RUN... -w` pools: the pool records its run files, so leave-one-run-out can use it
    pool_runs([str(SAMPLE / "runs" / f"{r}.txt") for r in RUNS], workspace=ws, name="depth20", depth=20)
    # a model judge on T01-T03 (one grade in five off by one) and an assessor on the first 30 pairs of T01-T02
    model = Judge("model", "gpt-test:graded-0-3", "openai/gpt-test", "graded-0-3", "abc123", (("batch", 1),))
    alice = Judge("human", "alice")
    rows = [(q, d, int(g)) for q, d, g in zip(qrels["query_id"], qrels["doc_id"], qrels["relevance"])]
    t123 = [r for r in rows if r[0] in ("T01", "T02", "T03")]
    ws.record_many([Judgment(q, d, min(3, g + 1) if i % 5 == 0 else g, model) for i, (q, d, g) in enumerate(t123)])
    ws.record_many([Judgment(q, d, g, alice) for q, d, g in t123[:30]])
    ws.record(Judgment("T04", "HB-FRZ-01", None, model, status="failed", error="unparseable reply"))
    # nuggets with evidence links: T01 and T02, from their best-graded documents
    best = {q: [d for qq, d, g in sorted(rows, key=lambda r: -r[2]) if qq == q and g >= 2] for q in ("T01", "T02")}
    store = NuggetStore(ws)
    store.add("T01", "The incident commander approves emergency access", "vital", author="alice",
              support=[[best["T01"][0]]], status="approved")
    store.add("T01", "Access lasts four hours", "okay", author="alice", support=[[best["T01"][-1]]])
    store.add("T02", "Roll back within 15 minutes, no approval needed", "vital", author="alice",
              support=[[best["T02"][0]], [best["T02"][-1]]], status="approved")
    cache = ResponseCache(ws.connection())
    for i in range(4):
        cache.log(CallRecord(f"k{i}", "openai/gpt-test", ok=i != 3, prompt_tokens=1000, completion_tokens=20,
                             cost=0.0125, cached=i == 2, attempts=1, purpose="judge"))
    cache.log(CallRecord("n1", "openai/gpt-test", ok=True, prompt_tokens=5000, completion_tokens=400, cost=0.5,
                         attempts=1, purpose="nuggets-draft"))
    ws.close()
    return root / "bench"


def answers_file(root: Path, bench: Path) -> Path:
    """Two RAG runs (TREC RAG 2024 format): one cites the nuggets' documents, one cites nothing useful."""
    from trecbench.nuggets.store import NuggetStore
    from trecbench.store import Workspace

    topics = NuggetStore(Workspace(bench)).export()
    lines = []
    for run, good in (("rag-good", True), ("rag-poor", False)):
        for t in topics:
            refs = [g[0] for n in t.nuggets for g in n.support][:3] if good else ["HB-ONB-01"]
            text = " ".join(n.text for n in t.nuggets) if good else "Ask your manager."
            lines.append({"run_id": run, "topic_id": t.qid, "topic": t.query, "references": refs,
                          "response_length": len(text.split()),
                          "answer": [{"text": text, "citations": list(range(len(refs)))}]})
    path = root / "answers.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def contexts_file(root: Path, bench: Path) -> Path:
    """A two-stage system that finds every evidence document first and loses some when reranking."""
    from trecbench.nuggets.store import NuggetStore
    from trecbench.store import Workspace

    lines = []
    for t in NuggetStore(Workspace(bench)).export():
        docs = [d for n in t.nuggets for g in n.support for d in g]
        lines.append({"run_id": "pipeline", "qid": t.qid, "stage": "initial", "docids": docs + ["HB-ONB-01"]})
        lines.append({"run_id": "pipeline", "qid": t.qid, "stage": "reranked", "docids": ["HB-ONB-01"] + docs[:1]})
    path = root / "stages.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The sample bench, its answers and contexts, and the report written by the command (built once)."""
    from click.testing import CliRunner

    from trecbench.cli import cli

    root = tmp_path_factory.mktemp("report")
    bench = sample_bench(root)
    answers, contexts = answers_file(root, bench), contexts_file(root, bench)
    out = root / "report.html"
    result = CliRunner().invoke(cli, ["report", "-w", str(bench), "-o", str(out), "--answers", str(answers),
                                      "--contexts", str(contexts), "--iterations", "1000", "--quiet"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return {"root": root, "bench": bench, "html": out.read_text(encoding="utf-8"), "output": result.output,
            "answers": answers, "contexts": contexts}


def section(html: str, name: str) -> str:
    match = re.search(rf'<section id="{name}">(.*?)</section>', html, re.S)
    assert match, f"no section {name}"
    return match.group(1)


def table_rows(fragment: str) -> list[list[str]]:
    """The text of each body row's cells (tags stripped, whitespace collapsed)."""
    rows = []
    for body in re.findall(r"<tbody>(.*?)</tbody>", fragment, re.S):
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S):
            cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)
            rows.append([" ".join(re.sub(r"<[^>]+>", " ", c).split()) for c in cells])
    return rows


def test_the_report_names_every_section_and_the_command_says_what_it_wrote(built):
    html = built["html"]
    for name in ("overview", "retrieval", "topics", "answers", "evidence", "pool", "agreement", "cost"):
        assert f'<section id="{name}">' in html
    assert "5 run(s) scored" in built["output"]
    assert "no data for" not in built["output"]  # every section had data
    for name in ("overview", "retrieval", "topics", "answers", "evidence", "pool", "agreement", "cost", "reuse"):
        assert 'class="missing"' not in section(html, name), name  # the audit has its own test: it needs a model


def test_runs_are_scored_with_trec_eval_numbers_best_first(built):
    import trecbench
    from trecbench.qrels.select import propagate, select_grades, to_qrels
    from trecbench.store import Workspace
    from trecbench.store.workspace import load_pool

    ws = Workspace(built["bench"])
    grades, _ = propagate(select_grades(ws.judgments()), load_pool(ws))
    qrels = to_qrels(grades)[["query_id", "doc_id", "relevance"]]
    expected = trecbench.evaluate(qrels, [SAMPLE / "runs" / f"{r}.txt" for r in RUNS], ["nDCG@10", "R@100", "AP"])
    rows = table_rows(section(built["html"], "retrieval"))[:5]
    order = [r[0].replace(" baseline", "") for r in rows]
    assert order == list(expected.sort_values("nDCG@10", ascending=False).index)
    for row in rows:
        run = row[0].replace(" baseline", "")
        shown = [float(cell.split()[0]) for cell in row[1:]]
        assert shown == pytest.approx(list(expected.loc[run]), abs=5e-5)
        low, high = map(float, re.search(r"\[([\d.]+), ([\d.]+)\]", row[1]).groups())
        assert low <= expected.loc[run, "nDCG@10"] <= high


def test_the_best_run_is_the_baseline_and_significantly_worse_runs_are_marked(built):
    fragment = section(built["html"], "retrieval")
    rows = table_rows(fragment)
    assert rows[0][0] == "bm25_rm3 baseline"
    worst = next(r for r in rows if r[0] == "title_only")
    assert "▼" in worst[1]  # title_only is far below bm25_rm3 on nDCG@10 over 12 topics
    assert "▲" not in fragment.split("<tbody>")[1].split("</tbody>")[0]  # nothing beats the best run
    assert "Holm-corrected" in fragment


def test_intervals_and_marks_come_from_the_seeded_bootstrap_and_holm_corrected_randomisation(tmp_path):
    import pandas as pd

    from trecbench.evaluation.significance import bootstrap_interval, compare_runs, holm
    from trecbench.report.scores import BETTER, score_table

    topics = [f"q{i}" for i in range(15)]
    a = [0.9] * 15
    b = [0.2 + 0.01 * i for i in range(15)]
    c = [0.9 - 0.02 * (i % 2) for i in range(15)]
    frame = pd.DataFrame({"AP": a + b + c, "RR": a + b + c},
                         index=pd.MultiIndex.from_product([["a", "b", "c"], topics], names=["run", "query_id"]))
    table = score_table(frame, baseline="b", iterations=500, seed=3)
    assert table.runs == ["a", "c", "b"] and table.baseline == "b"
    assert (table.cell("a", "AP").low, table.cell("a", "AP").high) == (0.9, 0.9)
    # the draws of bootstrap_interval, made once for every column: the same interval
    for run, values in (("b", b), ("c", c)):
        cell = table.cell(run, "AP")
        assert (cell.low, cell.high) == pytest.approx(bootstrap_interval(values, iterations=500, seed=3), abs=1e-12)
    raw = [x.p_randomisation for run in ("a", "c") for x in compare_runs(frame, "b", runs=[run], iterations=500,
                                                                       seed=3)]
    assert [table.cell(r, m).p for r in ("a", "c") for m in ("AP", "RR")] == holm(raw)
    assert table.cell("a", "AP").mark == BETTER and table.comparisons == 4
    ab = compare_runs(frame, "b", runs=["a"], measures=["AP"], iterations=500, seed=3)[0]
    assert (table.cell("a", "AP").diff_low, table.cell("a", "AP").diff_high) == (ab.ci_low, ab.ci_high)


def test_the_heatmap_has_a_row_per_run_and_a_column_per_topic(built):
    fragment = section(built["html"], "topics")
    assert fragment.count("<svg") == 1
    for run in RUNS:
        assert f">{run}<" in fragment
    for qid in ("T01", "T09", "T12"):
        assert f">{qid}<" in fragment


def test_answer_scores_rank_the_run_that_states_the_nuggets_first(built):
    rows = table_rows(section(built["html"], "answers"))
    assert [r[0] for r in rows] == ["rag-good baseline", "rag-poor"]
    assert float(rows[0][1].split()[0]) == 1.0  # V_strict of the good run
    assert float(rows[1][1].split()[0]) == 0.0


def test_the_evidence_funnel_shows_where_items_were_lost(built):
    fragment = section(built["html"], "evidence")
    funnel = [r for r in table_rows(fragment) if len(r) == 6]
    stages = {r[1]: r for r in funnel}
    assert stages["initial"][2:4] == ["3", "3"]  # three evidence items, all found by the first stage
    # reranking keeps each topic's first evidence document: T01's second nugget is lost, T02's has an alternative
    assert stages["reranked"][2] == "2" and stages["reranked"][5] == "1"
    assert "the evidence links of the workspace" in fragment


def test_the_pool_section_shows_each_runs_unique_contribution(built):
    from trecbench.pooling import build_pool
    from trecbench.pooling.stats import pool_stats

    fragment = section(built["html"], "pool")
    pool = build_pool({r: SAMPLE / "runs" / f"{r}.txt" for r in RUNS}, depth=20)
    unique = pool_stats(pool)["runs"]["unique"]
    rows = {r[0]: r for r in table_rows(fragment)}
    for run in RUNS:
        assert rows[run][3] == f"{unique[run]:,}"  # topics, contributed, unique
    assert "depth20" in fragment and rows["all"][1] == f"{len(pool):,}"


def test_judges_with_enough_common_pairs_get_a_kappa_and_others_are_named(built):
    from trecbench.qrels.agreement import agreement
    from trecbench.store import Workspace

    fragment = section(built["html"], "agreement")
    rows = table_rows(fragment)
    kappas = {(r[0], r[1]): r for r in rows if len(r) == 6}
    pair = kappas[("nist (import)", "gpt-test:graded-0-3 (model)")]
    frame = Workspace(built["bench"]).judgments()

    def of(name):
        mine = frame[frame["judge"] == name]
        return mine[["query_id", "doc_id", "grade"]].rename(columns={"grade": "relevance"})

    expected = agreement(of("nist"), of("gpt-test:graded-0-3"))
    assert int(pair[2]) == expected.pairs and float(pair[3]) == pytest.approx(expected.kappa, abs=5e-4)
    assert ("nist (import)", "alice (human)") in kappas  # 30 pairs in common
    assert any(r[0] == "gpt-test:graded-0-3" and r[-1] == "1" for r in rows)  # the failed judgment is counted


def test_model_calls_and_cost_are_grouped_by_purpose(built):
    rows = {r[0]: r for r in table_rows(section(built["html"], "cost"))}
    assert rows["judge"][2:8] == ["3", "1", "1", "3,000", "60", "$0.0375"]  # the cached call cost nothing
    assert rows["nuggets-draft"][2:8] == ["1", "0", "0", "5,000", "400", "$0.5000"]
    assert rows["all"][-1] == "$0.5375"


def test_the_report_is_self_contained(built):
    html = built["html"]
    assert not re.search(r"""(?:src|href|xlink:href|action)\s*=\s*["']?(?:https?:)?//""", html, re.I)
    assert not re.search(r"url\(\s*['\"]?(?:https?:)?//", html, re.I)
    assert "@import" not in html and "<link" not in html and "<script" not in html.lower()
    assert "http://" not in html and "https://" not in html  # nothing from the data here holds a URL either
    assert "<?xml" not in html and "<!DOCTYPE svg" not in html


def test_text_from_data_is_escaped_in_tables_and_figures(tmp_path):
    bench = sample_bench(tmp_path, runs_folder=False, extras=False)
    run = tmp_path / "evil.txt"
    lines = (SAMPLE / "runs" / "bm25.txt").read_text().splitlines()
    run.write_text("".join(" ".join(x.split()[:5] + ["<b>evil</b>&amp;"]) + "\n" for x in lines))
    out = tmp_path / "r.html"
    from trecbench.report import ReportOptions, write_report

    write_report(bench, out, ReportOptions(runs=[str(run), str(SAMPLE / "runs" / "tfidf.txt")], iterations=200))
    html = out.read_text()
    assert "<b>evil</b>" not in html
    assert "&lt;b&gt;evil&lt;/b&gt;&amp;amp;" in html  # in the table and in the SVG labels alike
    assert html.count("&lt;b&gt;evil") >= 3


def test_sections_without_data_say_what_would_fill_them(tmp_path, cli_run):
    bench = sample_bench(tmp_path, runs_folder=False, extras=False)
    out = tmp_path / "r.html"
    result = cli_run("report", "-w", bench, "-o", out, "--quiet")
    assert result.exit_code == 0
    assert "0 run(s) scored; no data for retrieval, answers, evidence, pool, model calls" in result.output
    html = out.read_text()
    assert "trecbench report -w BENCH --runs bm25.txt dense.txt -o report.html" in section(html, "retrieval")
    assert "trecbench report -w BENCH --answers rag-run.jsonl -o report.html" in section(html, "answers")
    assert "--contexts stages.jsonl" in section(html, "evidence")
    assert "trecbench pool RUN... -w BENCH" in section(html, "pool")
    assert "No two judges judged at least 20 of the same pairs" in section(html, "agreement")
    assert "trecbench judge llm -w BENCH" in section(html, "cost")


def test_runs_in_the_workspace_folder_are_scored_and_unreadable_ones_noted(tmp_path, cli_run):
    bench = sample_bench(tmp_path, extras=False)
    (bench / "runs" / "notes.txt").write_text("this is not a run\n")
    out = tmp_path / "r.html"
    result = cli_run("report", "-w", bench, "-o", out, "--quiet", "-m", "P@10")
    assert result.exit_code == 0, result.output
    assert "5 run(s) scored" in result.output
    fragment = section(out.read_text(), "retrieval")
    assert "notes.txt (runs/ folder) not scored" in fragment
    assert [r[0] for r in table_rows(fragment)][0].startswith("bm25_rm3")


def test_a_run_given_on_the_command_line_that_cannot_be_read_is_an_input_error(tmp_path, cli_run):
    bench = sample_bench(tmp_path, runs_folder=False, extras=False)
    bad = tmp_path / "bad.txt"
    bad.write_text("T01 Q0 HB-REL-01 1 not-a-score run\n")
    result = cli_run("report", "-w", bench, str(bad), "-o", tmp_path / "r.html", "--quiet")
    assert result.exit_code == 2
    assert f"{bad}:1:" in result.output and "Traceback" not in result.output


def test_an_unknown_baseline_or_measure_is_a_usage_error(tmp_path, cli_run):
    bench = sample_bench(tmp_path, extras=False)
    result = cli_run("report", "-w", bench, "-o", tmp_path / "r.html", "--baseline", "nope", "--quiet")
    assert result.exit_code == 2 and "baseline 'nope' is not among the runs" in result.output
    result = cli_run("report", "-w", bench, "-o", tmp_path / "r.html", "-m", "nDCG@ten", "--quiet")
    assert result.exit_code == 2


def test_a_chosen_baseline_is_compared_with_every_other_run(tmp_path):
    from trecbench.report import ReportOptions, build_report

    bench = sample_bench(tmp_path, extras=False)
    report = build_report(bench, ReportOptions(baseline="title_only", iterations=500, measures=["nDCG@10"]))
    table = report.retrieval.table
    assert table.baseline == "title_only" and table.comparisons == 4
    assert table.cell("bm25_rm3", "nDCG@10").mark == "better"


def test_the_report_is_the_same_for_the_same_seed_but_the_time(tmp_path):
    from trecbench.report import ReportOptions, build_report, render_html

    bench = sample_bench(tmp_path, extras=False)
    first, second = (render_html(build_report(bench, ReportOptions(iterations=300))) for _ in range(2))
    strip = re.compile(r"Generated [^<]* by")
    assert strip.sub("", first) == strip.sub("", second)


def test_source_date_epoch_fixes_the_time_so_two_reports_are_the_same_bytes(tmp_path, cli_run, monkeypatch):
    bench = sample_bench(tmp_path, extras=False)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225599")  # 2025-12-31 23:59:59 UTC
    outs = [tmp_path / "a.html", tmp_path / "b.html"]
    for out in outs:
        r = cli_run("report", "-w", bench, "-o", out, "--iterations", "200", "--quiet")
        assert r.exit_code == 0, r.output
    assert outs[0].read_bytes() == outs[1].read_bytes()
    assert "Generated 2025-12-31 23:59 UTC by" in outs[0].read_text(encoding="utf-8")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    r = cli_run("report", "-w", bench, "-o", tmp_path / "c.html", "--quiet")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.stderr.strip().splitlines()[-1] == "SOURCE_DATE_EPOCH: not a time in whole seconds since 1970: 'yesterday'"
    assert not (tmp_path / "c.html").exists()


def test_a_progress_bar_counts_the_steps_unless_quiet(tmp_path, cli_run):
    bench = sample_bench(tmp_path, extras=False)
    from trecbench.report import ReportOptions, build_report

    class Bar:
        total, done, labels = None, 0, []

        def update(self, n=1):
            self.done += n

        def set_description_str(self, text):
            self.labels.append(text)

        def refresh(self):
            pass

    bar = Bar()
    build_report(bench, ReportOptions(iterations=200), progress=bar)
    assert bar.total == bar.done == 6 + 2 * 5 + 0
    assert "scoring runs" in bar.labels


def test_a_run_the_qrels_judge_little_of_is_marked(tmp_path, cli_run):
    bench = sample_bench(tmp_path, runs_folder=False, extras=False)
    new = tmp_path / "new.txt"
    new.write_text("".join(f"T{t:02d} Q0 UNSEEN-{i} {i} {20 - i} newrun\n" for t in range(1, 13) for i in range(1, 11)))
    out = tmp_path / "r.html"
    result = cli_run("report", "-w", bench, new, "-o", out, "--quiet")
    assert result.exit_code == 0, result.output
    assert "unjudged documents: newrun: mean Judged@10 0.000 &lt; 0.9" in section(out.read_text(), "retrieval")


def test_the_report_notes_what_eval_answers_and_eval_evidence_print_about_the_same_scores(tmp_path, cli_run):
    from trecbench.nuggets.store import NuggetStore
    from trecbench.report import ReportOptions
    from trecbench.report.collect import answers_section, evidence_section
    from trecbench.store import Workspace

    bench = sample_bench(tmp_path)
    ws = Workspace(bench)
    NuggetStore(ws).add("T03", "An okay nugget alone", "okay", author="alice")  # T03: no vital nugget
    answers, contexts = answers_file(tmp_path, bench), contexts_file(tmp_path, bench)
    with contexts.open("a") as f:  # a topic the evidence does not cover
        f.write(json.dumps({"run_id": "pipeline", "qid": "T09", "stage": "initial", "docids": ["HB-ONB-01"]}) + "\n")
    options = ReportOptions(answers=[str(answers)], contexts=[str(contexts)])
    said = cli_run("eval", "answers", "-w", bench, answers).stderr.splitlines()
    notes = answers_section(ws, options).notes
    assert any("T03" in n for n in notes) and set(notes) <= set(said)  # the command also counts unsupported nuggets
    said = cli_run("eval", "evidence", "-w", bench, "--contexts", contexts).stderr.splitlines()
    assert any("T09" in line for line in said) and evidence_section(ws, options).notes == said
