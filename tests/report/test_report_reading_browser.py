"""Reading the report in chromium: a phone's width, headings clear of the sticky navigation, every comparison
in view without hovering (issue 22).

Skipped when playwright or /usr/bin/chromium is missing, unless TRECBENCH_REQUIRE_BROWSER=1 (CI sets it).
"""
from __future__ import annotations

import pytest
from test_report import answers_file, contexts_file, sample_bench
from test_report_browser import open_offline


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from trecbench.report import ReportOptions, write_report

    root = tmp_path_factory.mktemp("reading")
    bench = sample_bench(root)
    out = root / "report.html"
    write_report(bench, out, ReportOptions(answers=[str(answers_file(root, bench))],
                                           contexts=[str(contexts_file(root, bench))], iterations=500))
    return out


def test_the_report_fits_a_390_px_phone(report, browser):
    page, problems, outside = open_offline(browser, report)
    page.set_viewport_size({"width": 390, "height": 844})
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px screen"
    # wide tables scroll inside their own box instead of widening the page
    assert page.locator("#retrieval table.scores").is_visible()
    assert problems == [] and outside == []


@pytest.mark.parametrize("width", [1280, 390])
def test_a_navigation_link_brings_its_heading_into_view_below_the_sticky_navigation(report, browser, width):
    page, problems, _ = open_offline(browser, report)
    page.set_viewport_size({"width": width, "height": 700})
    for target in ["pool", "agreement", "cost", "reuse", "audit", "comparisons"]:  # each from the top of the page
        page.evaluate("window.scrollTo(0, 0)")
        page.locator(f'nav a[href="#{target}"]').click()
        page.wait_for_function(f"location.hash === '#{target}'")
        nav = page.locator("nav").bounding_box()
        heading = page.locator(f"#{target} h2").bounding_box()
        assert nav and heading
        assert heading["y"] >= nav["y"] + nav["height"], (target, heading, nav)
        assert heading["y"] < 700, (target, heading)
    assert problems == []


def test_every_comparison_is_visible_without_hovering_and_downloadable(report, browser):
    page, problems, _ = open_offline(browser, report)
    rows = page.locator("#retrieval-differences tbody tr")
    assert rows.count() == 4 * 3  # four runs besides the baseline, three measures
    assert rows.first.is_visible()
    assert page.locator("#answers-differences tbody tr").count() == 6  # rag-poor against rag-good, six measures
    with page.expect_download() as info:
        page.locator("#comparisons a", has_text="CSV").first.click()
    download = info.value
    assert download.suggested_filename == "retrieval-comparisons.csv"
    lines = open(download.path(), encoding="utf-8").read().splitlines()
    assert lines[0] == "run,baseline,measure,run_mean,baseline_mean,difference,ci_low,ci_high,p_holm,result"
    assert len(lines) == 1 + 12
    with page.expect_download() as info:
        page.locator("#comparisons a", has_text="LaTeX").first.click()
    tex = open(info.value.path(), encoding="utf-8").read()
    assert tex.startswith("\\begin{table}") and tex.count("\\\\\n") == 1 + 12  # the header row and one per comparison
    assert problems == []
