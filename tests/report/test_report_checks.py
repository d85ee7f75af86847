"""The report's answers to issue 22: the level in the headline, every comparison listed and exportable, the
per-topic differences, reusability, judges compared, the audit, the empty cost section and its colours."""
from __future__ import annotations

import json
import re
from urllib.parse import unquote

import pytest
from test_report import SAMPLE, built, sample_bench, section, table_rows  # noqa: F401  (built is a fixture)



def download(fragment: str, name: str) -> str:
    """The text of the data: link that downloads `name`."""
    match = re.search(rf'download="{re.escape(name)}" href="data:[^,]*,([^"]*)"', fragment)
    assert match, f"no download link {name}"
    return unquote(match.group(1).replace("&amp;", "&"))


def test_the_headline_names_the_relevance_level_of_its_relevant_count(built):  # noqa: F811  (the fixture imported from test_report)
    from trecbench.qrels.select import workspace_qrels

    qrels = workspace_qrels(built["bench"]).qrels
    relevant = int((qrels["relevance"] >= 1).sum())
    assert f"({relevant:,} relevant (grade &gt;= 1)" in section(built["html"], "overview")
    pool = section(built["html"], "pool")
    assert pool.count("relevant: grade &gt;= 1") == 2  # the captions of the per-run and per-topic counts


def test_every_comparison_with_the_baseline_is_listed_and_exported_as_csv_and_latex(built):  # noqa: F811  (the fixture imported from test_report)
    import pandas as pd

    fragment = section(built["html"], "comparisons")
    rows = [r for r in table_rows(fragment) if len(r) == 8]
    runs = {r[0] for r in rows}
    assert len([r for r in rows if r[1] in ("nDCG@10", "R@100", "AP")]) == 4 * 3  # four runs x three measures
    assert "bm25" in runs or "bm25_rm3" in runs
    assert any(r[-1] == "significantly worse" for r in rows)
    csv = download(fragment, "retrieval-comparisons.csv")
    frame = pd.read_csv(__import__("io").StringIO(csv))
    assert list(frame.columns) == ["run", "baseline", "measure", "run_mean", "baseline_mean", "difference", "ci_low",
                                   "ci_high", "p_holm", "result"]
    assert len(frame) == 12 and frame["baseline"].nunique() == 1
    shown = {(r[0], r[1]): r for r in rows}
    for row in frame.itertuples():
        assert shown[(row.run, row.measure)][4] == f"{row.difference:+.4f}"
    assert (frame["run_mean"] - frame["baseline_mean"] - frame["difference"]).abs().max() < 0.05
    tex = download(fragment, "retrieval-comparisons.tex")
    assert tex.count(" \\\\\n") == 1 + 12 and "\\_" in tex  # run names' underscores are escaped (bm25\_rm3)
    assert "answers-comparisons.csv" in fragment  # the answer table's comparisons too


def test_the_comparisons_plot_each_runs_per_topic_difference_from_the_baseline(built):  # noqa: F811  (the fixture imported from test_report)
    fragment = section(built["html"], "comparisons")
    figure = re.search(r'<figure id="differences">(.*?)</figure>', fragment, re.S)
    assert figure and "<svg" in figure.group(1)
    assert re.search(r'aria-label="per-topic nDCG@10 difference from [^"]+"', figure.group(1))


def test_the_reusability_section_is_leave_one_run_out_on_the_workspace_pool(built):  # noqa: F811  (the fixture imported from test_report)
    from trecbench.pooling.loo import workspace_leave_one_out
    from trecbench.qrels.select import workspace_qrels

    qrels = workspace_qrels(built["bench"]).qrels[["query_id", "iteration", "doc_id", "relevance"]]
    expected = workspace_leave_one_out(built["bench"], ["nDCG@10", "R@100", "AP"], qrels=qrels)
    fragment = section(built["html"], "reuse")
    assert expected.verdict().splitlines()[-1] in fragment.replace("&gt;", ">").replace("&lt;", "<")
    rows = {r[0]: r for r in table_rows(fragment) if len(r) == 6}
    for row in expected.summary.itertuples():
        assert rows[row.measure][1] == f"{100 * row.max_drop:.1f}%"
        assert rows[row.measure][4] == f"{row.kendall_tau:.3f}"


def test_judges_are_compared_by_a_confusion_matrix_and_the_rank_correlation_of_their_system_orderings(built):  # noqa: F811  (the fixture imported from test_report)
    from trecbench.qrels.agreement import agreement, judged_pairs, ranking_agreement
    from trecbench.store import Workspace

    frame = Workspace(built["bench"]).judgments()

    def of(name):
        mine = frame[(frame["judge"] == name) & frame["propagated_from"].isna()]
        return mine[["query_id", "doc_id", "grade"]].rename(columns={"grade": "relevance"})

    fragment = section(built["html"], "agreement")
    a, b = "nist (import)", "gpt-test:graded-0-3 (model)"
    block = fragment[fragment.index(f"<h3>{a} and {b}</h3>"):]
    confusion = agreement(of("nist"), of("gpt-test:graded-0-3")).confusion
    shown = table_rows(block[:block.index("</table>")])
    assert shown == [[str(g)] + [str(int(v)) for v in confusion.loc[g]] for g in confusion.index]
    both, _, _ = judged_pairs(of("nist"), of("gpt-test:graded-0-3"))
    runs = {f"{r}.txt": str(built["bench"] / "runs" / f"{r}.txt") for r in
            ["bm25", "bm25_rm3", "tfidf", "title_only", "lexical_overlap"]}
    tau = ranking_agreement(both.rename(columns={"a": "relevance"})[["query_id", "doc_id", "relevance"]],
                            both.rename(columns={"b": "relevance"})[["query_id", "doc_id", "relevance"]],
                            runs, ["nDCG@10"])[0]
    sentence = re.search(r"Systems ordered by nDCG@10 .*? \(5 runs\): Kendall tau (\S+), Spearman rho (\S+)\.",
                         block).groups()
    assert sentence == (f"{tau.kendall_tau:.3f}", f"{tau.spearman_rho:.3f}")


def test_an_empty_cost_section_names_the_commands_that_record_calls_not_a_dry_run(tmp_path, cli_run):
    bench = sample_bench(tmp_path, runs_folder=False, extras=False)
    out = tmp_path / "r.html"
    assert cli_run("report", "-w", bench, "-o", out, "--quiet").exit_code == 0
    fragment = section(out.read_text(), "cost")
    command = re.search(r"To fill this section: <code>(.*?)</code>", fragment).group(1)
    assert command == "trecbench judge llm -w BENCH --model openai/gpt-4o-mini"
    assert "records nothing" in fragment and "nuggets draft" in fragment


def test_the_audit_section_shows_the_newest_audit_queue(tmp_path, cli_run, llm_server):
    from trecbench.qrels import read_qrels

    bench = tmp_path / "bench"
    assert cli_run("init", bench, "--corpus", SAMPLE / "corpus.jsonl", "--topics", SAMPLE / "topics.tsv").exit_code == 0
    assert cli_run("qrels", "import", SAMPLE / "qrels.txt", "-w", bench, "--judge", "nist").exit_code == 0

    def always_three(body: dict) -> str:  # the model calls every passage perfectly relevant
        passages = re.findall(r"\[P(\d+)\]", body["messages"][-1]["content"])
        return json.dumps([{"passage": f"P{p}", "grade": 3, "reason": "scripted"} for p in passages])

    llm_server.script(always_three)
    r = cli_run("judge", "llm", "-w", bench, "--model", "openai/gpt-4o-mini", "--api-base", llm_server.base_url,
                "--api-key", "test", "--quiet", "--batch", "5", "--audit")
    assert r.exit_code == 0, r.output
    out = tmp_path / "r.html"
    assert cli_run("report", "-w", bench, "-o", out, "--quiet").exit_code == 0
    fragment = section(out.read_text(), "audit")
    old = read_qrels(SAMPLE / "qrels.txt")
    far = int((old["relevance"] <= 1).sum())  # 3 - grade >= 2
    summary = table_rows(fragment)[0]
    assert summary[0] == f"{len(old):,}" and summary[5] == str(far) and summary[6] == "0"
    listed = [r for r in table_rows(fragment)[1:]]
    assert len(listed) == min(50, far) and all(r[2] in ("0", "1") and r[3] == "3" for r in listed)
    assert "class=\"missing\"" not in fragment


def _luminance(colour: str) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(int(colour[i:i + 2], 16) / 255) for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two #rrggbb colours."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_contrast_ratio_is_wcag_s():
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)


def test_every_text_colour_of_the_template_meets_wcag_aa_on_every_background_it_is_drawn_on():
    from trecbench.report.render import TEMPLATES

    css = (TEMPLATES / "report.html.j2").read_text()
    var = dict(re.findall(r"--([a-z]+):\s*(#[0-9a-f]{6})", css))
    # backgrounds of text: the page, the fact cards and table heads (--band), even rows
    backgrounds = {"page": "#ffffff", "band": var["band"], "even rows": re.search(
        r"tbody tr:nth-child\(even\) \{ background: (#[0-9a-f]{6})", css).group(1)}
    texts = {name: var[name] for name in ("ink", "muted", "accent", "up", "down", "base")}
    texts["notes"] = re.search(r"\.notes \{ color: (#[0-9a-f]{6})", css).group(1)
    failing = [(t, b, round(contrast(fg, bg), 2)) for t, fg in texts.items() for b, bg in backgrounds.items()
               if contrast(fg, bg) < 4.5]
    # inline code has its own background, inside notes and legends (muted text) unless it sets its own colour
    code = re.search(r"  code \{([^}]*)\}", css).group(1)
    code_bg = re.search(r"background: (#[0-9a-f]{6})", code).group(1)
    code_colour = re.search(r"(?<!-)color: var\(--([a-z]+)\)", code)
    code_fg = var[code_colour.group(1)] if code_colour else var["muted"]
    failing += [("code", "code", round(contrast(code_fg, code_bg), 2))] if contrast(code_fg, code_bg) < 4.5 else []
    assert failing == []
    header = re.search(r"header p \{[^}]*color: (#[0-9a-f]{6})", css).group(1)
    assert contrast(header, var["ink"]) >= 4.5
