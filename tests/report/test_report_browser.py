"""The report opened in a real browser (Debian's chromium through playwright) from a file:// URL, offline.

Skipped when playwright or /usr/bin/chromium is missing, unless TRECBENCH_REQUIRE_BROWSER=1 (CI sets it).
"""
from __future__ import annotations

from test_report import answers_file, contexts_file, sample_bench
from web_support import watch

HEADINGS = ["Overview", "Retrieval", "Per-topic scores", "Answer scores", "Evidence funnel", "Pool",
            "Judge agreement", "Model calls and cost"]


def open_offline(browser, path):
    """A page showing `path`; returns (page, problems, requests to anything but the file itself)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems = watch(page)
    outside: list[str] = []

    def route(r):
        if r.request.url != path.as_uri():
            outside.append(r.request.url)
            return r.abort()
        return r.continue_()

    page.route("**/*", route)
    page.goto(path.as_uri())
    return page, problems, outside


def test_the_report_renders_offline_with_every_section_visible(tmp_path, browser):
    from trecbench.report import ReportOptions, write_report

    bench = sample_bench(tmp_path)
    out = tmp_path / "report.html"
    write_report(bench, out, ReportOptions(answers=[str(answers_file(tmp_path, bench))],
                                           contexts=[str(contexts_file(tmp_path, bench))], iterations=1000))
    page, problems, outside = open_offline(browser, out)
    assert page.title() == "trecbench report: larkspur"
    for heading in HEADINGS:
        assert page.get_by_role("heading", name=heading, exact=True).is_visible(), heading
    # the score tables, and every figure drawn with a size
    assert page.locator("#retrieval table.scores tbody tr").count() == 5
    assert page.locator("#retrieval table.scores").is_visible()
    assert page.locator("#answers table.scores tbody tr").count() == 2
    assert page.locator("#cost table tbody tr").count() == 3
    figures = page.locator("svg.figure")
    assert figures.count() == 5  # intervals, heatmap, differences from the baseline, funnel, pool
    for i in range(figures.count()):
        box = figures.nth(i).bounding_box()
        assert box and box["width"] > 200 and box["height"] > 80
    assert page.locator("#retrieval td.worse .mark").first.is_visible()
    page.locator("#pool").scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 50_000
    assert problems == []
    assert outside == []  # nothing fetched but the file itself


def test_a_report_without_data_renders_and_says_what_would_fill_it(tmp_path, browser):
    from trecbench.report import write_report

    bench = sample_bench(tmp_path, runs_folder=False, extras=False)
    out = tmp_path / "empty.html"
    write_report(bench, out)
    page, problems, outside = open_offline(browser, out)
    for heading in HEADINGS:
        assert page.get_by_role("heading", name=heading, exact=True).is_visible(), heading
    # retrieval and per-topic, comparisons, answers, evidence, pool, reusability, agreement, audit, cost
    assert page.locator(".missing").count() == 10
    assert page.locator("#retrieval .missing code").inner_text().startswith("trecbench report -w BENCH")
    page.screenshot(path=str(tmp_path / "empty.png"), full_page=True)
    assert problems == [] and outside == []
