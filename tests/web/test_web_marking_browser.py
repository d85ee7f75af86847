"""Marking evidence without a pool in a real browser (playwright driving Debian's chromium against a live
uvicorn): search the corpus, open a passage, select a sentence with the mouse, add it as an alternative, add
another passage as a joint source, reload and see both saved, and `nuggets export` writes the span.

Skipped when playwright or /usr/bin/chromium is missing, unless TRECBENCH_REQUIRE_BROWSER=1 (CI sets it).
"""
from __future__ import annotations

import json
import re

from trecbench.nuggets.store import NuggetStore
from trecbench.store.workspace import Workspace
from web_support import DOCS, live_server, make_nugget_bench, watch


def select_text(page, selector: str, words: str) -> None:
    """Select `words` inside the element by dragging the mouse from their first to their last character."""
    box = page.evaluate("""([selector, words]) => {
        const root = document.querySelector(selector);
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        let text = "", nodes = [];
        while (walker.nextNode()) { nodes.push([walker.currentNode, text.length]); text += walker.currentNode.data; }
        const at = text.indexOf(words);
        const point = (offset, after) => {
            for (const [node, from] of nodes) {
                if (offset < from + node.data.length || (after && offset === from + node.data.length)) {
                    const r = document.createRange();
                    r.setStart(node, offset - from); r.setEnd(node, offset - from + 1);
                    return r.getBoundingClientRect();
                }
            }
        };
        const first = point(at, false), last = point(at + words.length - 1, true);
        return {x1: first.left + 1, y1: first.top + first.height / 2, x2: last.right - 1, y2: last.top + last.height / 2};
    }""", [selector, words])
    page.mouse.move(box["x1"], box["y1"])
    page.mouse.down()
    page.mouse.move(box["x2"], box["y2"], steps=8)
    page.mouse.up()


def test_an_expert_searches_opens_selects_and_adds_evidence_without_a_pool(tmp_path, browser, cli_run):
    from trecbench.web.app import create_app

    bench = make_nugget_bench(tmp_path, [], [("Wind farms stand in the North Sea", "vital")])
    ws = Workspace(bench)
    nid = NuggetStore(ws).topic("1")[0].id
    ws.connection().execute("DELETE FROM pool_candidates")  # nothing pooled, nothing judged
    ws.connection().commit()
    ws.close()
    with live_server(create_app(bench, require_token=False)) as url:
        page = browser.new_page()
        problems = watch(page)
        page.goto(url + "/login")
        page.fill("#name", "erin")
        with page.expect_navigation():
            page.click("main button[type=submit]")
        page.goto(url + "/nuggets/1")
        with page.expect_navigation():
            page.click(f'li.nugget[data-nid="{nid}"] a.mark-evidence')

        # search the whole corpus
        page.fill("#search-q", "north sea wind")
        with page.expect_navigation():
            page.click("#search-form button")
        assert page.locator("li.hit").first.get_attribute("data-docid") == "w1"
        with page.expect_navigation():
            page.click('li.hit[data-docid="w1"] a.open-doc')
        assert page.locator("#doc-text").text_content() == DOCS["w1"]

        # select "the North Sea" with the mouse: the form follows the selection
        select_text(page, "#doc-text", "the North Sea")
        start = DOCS["w1"].index("the North Sea")
        page.wait_for_function("() => document.getElementById('mark-end').value !== ''")
        assert page.input_value("#mark-start") == str(start)
        assert page.input_value("#mark-end") == str(start + len("the North Sea"))
        assert page.locator("#selection-preview q").text_content() == "the North Sea"
        with page.expect_navigation():
            page.click("#add-alternative")
        assert page.locator("#flash").inner_text().startswith(f"Added w1[{start}:{start + 13}]")

        # open another passage and add it whole, as a joint source of that alternative
        page.fill("#search-q", "offshore")
        with page.expect_navigation():
            page.click("#search-form button")
        with page.expect_navigation():
            page.click('li.hit[data-docid="w2"] a.open-doc')
        page.check("#scope-whole")
        page.select_option("#joint-alternative", "0")
        with page.expect_navigation():
            page.click("#add-joint")
        assert "joint source of alternative 1" in page.locator("#flash").inner_text()

        # a reload shows it saved, on the marking page and on the topic page
        page.reload()
        assert re.sub(r"\s+", " ", page.locator("#current-support").inner_text()) == (
            f"Supported by [w1[{start}:{start + 13}] + w2]")
        page.goto(url + "/nuggets/1")
        support = page.locator(f'li.nugget[data-nid="{nid}"] .support').inner_text()
        assert f"w1[{start}:{start + 13}]" in support and "w2" in support
        assert problems == []
        page.close()

    exported = cli_run("nuggets", "export", "-w", bench)
    assert exported.exit_code == 0, exported.output
    (line,) = exported.stdout.splitlines()
    (record,) = json.loads(line)["nuggets"]
    assert record["support"] == [["w1", "w2"]]
    assert record["spans"][0][0]["start"] == start and record["spans"][0][0]["end"] == start + 13
    assert record["spans"][0][1] is None
