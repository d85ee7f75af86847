"""Nugget editing in a real browser: playwright driving Debian's chromium against a live uvicorn.

Skipped when playwright or /usr/bin/chromium is missing, unless TRECBENCH_REQUIRE_BROWSER=1 (CI sets it).
"""
from __future__ import annotations

import re

import pytest

from web_support import live_server, make_nugget_bench, watch

GRADES = [("1", "d1", 2), ("1", "d3", 1), ("1", "d4", 3), ("1", "d2", 0)]


@pytest.fixture
def bench(tmp_path):
    return make_nugget_bench(tmp_path, GRADES, [(text, "vital") for text in [
        "Solar panels turn sunlight into electricity", "Panels are made of silicon", "Panels produce electric power"]])


def groups(text: str) -> list[set[str]]:
    """The support alternatives a text shows ("[d1] or [d3 + d4]"), each as a set: a joint group has no order."""
    return [set(g.split(" + ")) for g in re.findall(r"\[([^\]]+)\]", re.sub(r"\s+", " ", text))]


def nugget_ids(page) -> list[str]:
    return page.locator("li.nugget").evaluate_all("items => items.map(i => i.dataset.nid)")


def test_an_assessor_edits_merges_links_an_and_group_and_approves_and_the_history_shows_each_step(
        bench, browser, tmp_path):
    from trecbench.web.app import create_app

    with live_server(create_app(bench, require_token=False)) as url:
        page = browser.new_page()
        problems = watch(page)
        page.goto(url + "/login")
        page.fill("#name", "alice")  # on this machine a name is enough: alice is the author of every step
        with page.expect_navigation():
            page.click("main button[type=submit]")  # not the bar's "switch assessor"
        assert page.locator("#assessor").inner_text() == "alice"
        page.click("#nav-nuggets")
        page.wait_for_url(url + "/nuggets")
        assert page.locator('tr[data-qid="1"] .total').inner_text() == "3"
        page.click('tr[data-qid="1"] a')
        page.wait_for_url(re.compile(r"/nuggets/1$"))
        first, second, third = nugget_ids(page)

        # edit the first nugget's text
        edit = page.locator(f'li.nugget[data-nid="{first}"] form.edit')
        edit.locator("textarea").fill("Solar panels convert sunlight into electricity")
        with page.expect_navigation():
            edit.locator("button").click()
        assert page.locator("#flash").inner_text().startswith(f"Saved nugget {first}")
        assert page.locator(f'li.nugget[data-nid="{first}"] textarea[name=text]').input_value() == (
            "Solar panels convert sunlight into electricity")

        # merge it with the third
        page.check(f'li.nugget[data-nid="{first}"] input[name=nid]')
        page.check(f'li.nugget[data-nid="{third}"] input[name=nid]')
        page.fill("#merge-text", "Solar panels turn sunlight into electric power")
        with page.expect_navigation():
            page.click("#merge-form button")
        assert len(nugget_ids(page)) == 2
        merged = page.locator("li.nugget", has=page.locator("textarea", has_text="electric power")).first
        nid = merged.get_attribute("data-nid")
        assert nid != second
        item = page.locator(f'li.nugget[data-nid="{nid}"]')

        # link d1 and d4 as one AND group (a preview of each document is there to read first)
        with page.expect_navigation():
            item.locator("a.link-docs").click()  # the page again, with this nugget's form for linking open
        item = page.locator(f'li.nugget[data-nid="{nid}"]')
        item.locator('input[name=docid][value="d1"]').check()
        item.locator('input[name=docid][value="d4"]').check()
        page.locator("#doc-d1 summary").click()
        assert "Solar panels convert sunlight" in page.locator("#doc-d1 .text").inner_text()
        with page.expect_navigation():
            item.locator("details.link button[type=submit]").click()
        assert groups(item.locator(".alternative").first.inner_text()) == [{"d1", "d4"}]

        # approve
        with page.expect_navigation():
            item.locator("button.approve").click()
        page.reload()
        item = page.locator(f'li.nugget[data-nid="{nid}"]')
        assert item.locator(".status").inner_text() == "approved"
        assert item.locator(".alternative").count() == 1
        assert groups(item.locator(".support").inner_text()) == [{"d1", "d4"}]
        assert item.locator("textarea[name=text]").input_value() == "Solar panels turn sunlight into electric power"
        page.screenshot(path=str(tmp_path / "nuggets.png"), full_page=True)

        # the history: each step with its author
        item.locator("a.history").click()
        page.wait_for_url(re.compile(rf"/nuggets/1/{re.escape(nid)}/history$"))
        rows = page.locator("#history tbody tr")
        steps = [(rows.nth(i).locator(".action").inner_text(), rows.nth(i).locator(".author").inner_text())
                 for i in range(rows.count())]
        actions = [a for a, _ in steps]
        for action in ("edit", "merge", "link", "approve"):
            assert action in actions, steps
        assert actions.index("approve") < actions.index("link") < actions.index("merge") < actions.index("edit")
        assert all(author == "alice" for action, author in steps if action in ("edit", "merge", "link", "approve")), steps
        assert {"d1", "d4"} in groups(page.locator("#history").inner_text())
        page.screenshot(path=str(tmp_path / "history.png"), full_page=True)
        assert (tmp_path / "history.png").stat().st_size > 1000
        assert problems == []
