"""The assessor web app in a real browser: playwright driving Debian's chromium against a live uvicorn.

Skipped when playwright or /usr/bin/chromium is missing, unless TRECBENCH_REQUIRE_BROWSER=1 (CI sets it).
"""
from __future__ import annotations

import re

import pytest

from trecbench.store.workspace import Workspace
from web_support import CHROMIUM, CHROMIUM_ARGS, SCRIPT_DOC, human_judgments, live_server, make_bench, watch


@pytest.fixture
def bench(tmp_path):
    return make_bench(tmp_path)


def serve(bench, host="127.0.0.1", **options):
    from trecbench.web.app import create_app
    from trecbench.web.auth import is_loopback

    return live_server(create_app(bench, require_token=not is_loopback(host), **options), host)


def shown_doc(page) -> str:
    return re.search(r"docid=([^&]+)", page.url).group(1)


def press_and_wait(page, key: str) -> None:
    with page.expect_navigation():
        page.keyboard.press(key)


def test_an_assessor_judges_with_the_keyboard_and_finds_the_grades_saved_after_reload(bench, browser, tmp_path):
    with serve(bench) as url:
        page = browser.new_page()
        problems = watch(page)
        page.goto(url + "/")
        assert page.locator('tr[data-qid="1"] .count').inner_text() == "0 / 4"
        page.locator('tr[data-qid="1"] button.button').click()
        page.wait_for_url(re.compile(r"/judge\?"))
        assert shown_doc(page) == "d1"
        assert page.locator("mark").first.inner_text().lower() == "solar"
        press_and_wait(page, "2")  # judged d1, on to d3
        assert shown_doc(page) == "d3"
        press_and_wait(page, "0")  # judged d3, on to d2
        assert shown_doc(page) == "d2"
        press_and_wait(page, "n")  # skip d2
        assert shown_doc(page) == "d4"
        press_and_wait(page, "p")
        press_and_wait(page, "p")
        assert shown_doc(page) == "d3"
        assert page.locator("#my-grade").inner_text() == "0"
        press_and_wait(page, "3")  # re-judged: a new row, d3's grade is now 3
        page.goto(url + "/judge?qid=1&docid=d3")
        page.reload()
        assert page.locator("#my-grade").inner_text() == "3"
        assert page.locator("button.grade.current").get_attribute("value") == "3"
        page.goto(url + "/judge?qid=1&docid=d1")
        assert page.locator("#my-grade").inner_text() == "2"
        page.goto(url + "/")
        assert page.locator('tr[data-qid="1"] .count').inner_text() == "2 / 4"
        page.screenshot(path=str(tmp_path / "topics.png"), full_page=True)
        assert (tmp_path / "topics.png").stat().st_size > 1000
        assert problems == []
    assert human_judgments(bench) == [("local", "1", "d1", 2), ("local", "1", "d3", 0), ("local", "1", "d3", 3)]


def test_a_document_containing_a_script_is_shown_as_text(bench, browser, tmp_path):
    with serve(bench) as url:
        page = browser.new_page()
        problems = watch(page)
        page.goto(url + "/judge?qid=1&docid=d2")
        assert page.locator("#doc-text").inner_text() == SCRIPT_DOC
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.locator("#doc-text script").count() == 0
        page.goto(url + "/judge?qid=1&docid=d3")
        assert page.locator("#doc-text img").count() == 0 and page.locator("#doc-text b").count() == 0
        assert page.evaluate("typeof window.pwned") == "undefined"
        page.screenshot(path=str(tmp_path / "script-doc.png"))
        assert problems == []  # no dialog, no error (a blocked inline script would be one)


def test_the_model_suggestion_appears_only_when_asked(bench, browser):
    from trecbench.store.workspace import Judge, Judgment

    Workspace(bench).record(Judgment("2", "w2", 1, Judge("model", "m:graded", model="m", prompt_id="graded")))
    with serve(bench) as url:
        page = browser.new_page()
        page.goto(url + "/judge?qid=2&docid=w2")
        assert page.locator("#suggested-grade").count() == 0
        page.click("#show-suggestion")
        assert page.locator("#suggested-grade").inner_text() == "1"
        assert page.locator("#my-grade").inner_text() == "not judged"
    assert human_judgments(bench) == []


def test_two_assessors_judge_at_once_and_nothing_is_lost(bench, browser):
    ws = Workspace(bench)
    tokens = {name: ws.add_assessor(name) for name in ("alice", "bob")}
    with serve(bench, host="0.0.0.0") as url:
        pages = {}
        for name, token in tokens.items():
            context = browser.new_context()
            pages[name] = context.new_page()
            pages[name].goto(f"{url}/?token={token}")
            assert pages[name].locator("#assessor").inner_text() == name
        for page in pages.values():
            page.locator('tr[data-qid="1"] button.button').click()
            page.wait_for_url(re.compile(r"/judge\?"))
        first = {name: shown_doc(page) for name, page in pages.items()}
        assert first == {"alice": "d1", "bob": "d3"}  # one pair, one assessor
        done = {name: [] for name in pages}
        while pages:  # take turns, a key each, until the topic is finished for both
            for name, page in list(pages.items()):
                if "/judge?" not in page.url:
                    del pages[name]
                    continue
                done[name].append(shown_doc(page))
                press_and_wait(page, "1" if name == "alice" else "2")
    assert sorted(done["alice"] + done["bob"]) == ["d1", "d2", "d3", "d4"]  # each judged once, by one of them
    recorded = human_judgments(bench)
    assert sorted((q, d) for _, q, d, _ in recorded) == [("1", "d1"), ("1", "d2"), ("1", "d3"), ("1", "d4")]
    assert {(a, d) for a, _, d, _ in recorded} == {(a, d) for a in done for d in done[a]}


def test_without_a_token_every_request_is_refused_when_bound_beyond_localhost(bench, browser):
    token = Workspace(bench).add_assessor("alice")
    with serve(bench, host="0.0.0.0") as url:
        context = browser.new_context()
        page = context.new_page()
        problems = watch(page)
        page.goto(url + "/judge?qid=1&docid=d1")
        assert "/login" in page.url and page.locator("#token").count() == 1
        assert page.locator("#doc-text").count() == 0
        assert context.request.get(url + "/static/app.js").status == 401
        assert context.request.get(url + "/static/app.css").status == 401
        refused = context.request.post(url + "/judge", form={"qid": "1", "docid": "d1", "grade": "3"},
                                       max_redirects=0)
        assert refused.status == 401
        page.fill("#token", "not-a-token")
        page.click("button[type=submit]")
        assert page.locator("#error").inner_text() == "That token is not valid."
        page.fill("#token", token)
        page.click("button[type=submit]")
        page.wait_for_url(re.compile(r"/judge\?qid=1&docid=d1$"))  # back where the assessor was going
        assert page.locator("#assessor").inner_text() == "alice"
        assert [p for p in problems if "401" not in p] == []  # the wrong token's 401 page is the only error
    assert human_judgments(bench) == []


def _attacker(victim: str):
    """Another site's page: an auto-submitted form posting a grade to the app, and images that would take
    pairs (the old GET /next) or open one, all aimed at the app's address."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    html = f"""<!doctype html><title>win a prize</title>
<img src="{victim}/next?qid=1"><img src="{victim}/judge?qid=1&docid=d1"><img src="{victim}/?token=attacker">
<form method="post" action="{victim}/judge"><input name="qid" value="2"><input name="docid" value="w2">
<input name="grade" value="3"><input name="csrf" value="guessed"></form>
<script>window.addEventListener("load", () => setTimeout(() => document.forms[0].submit(), 300));</script>"""
    return Starlette(routes=[Route("/", lambda request: HTMLResponse(html))])


def test_another_site_can_neither_judge_nor_lease_nor_log_the_assessor_out(bench, browser):
    token = Workspace(bench).add_assessor("alice")
    with serve(bench, host="0.0.0.0") as url:  # any Host name: the Origin checks alone must hold
        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{url}/?token={token}")
        assert page.locator("#assessor").inner_text() == "alice"
        with live_server(_attacker(url)) as evil:
            evil_page = context.new_page()
            with evil_page.expect_navigation(url=re.compile(re.escape(url) + "/judge")):
                evil_page.goto(evil.replace("127.0.0.1", "localhost") + "/")  # another site
            assert "403" in evil_page.content() and "another site" in evil_page.content()
        page.goto(url + "/")
        assert page.locator("#assessor").inner_text() == "alice"  # her session was not replaced
    assert human_judgments(bench) == []
    assert Workspace(bench).connection().execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0


def test_a_name_rebound_to_the_loopback_address_is_refused(bench, browser):
    with serve(bench) as url:
        port = url.rsplit(":", 1)[1]
        # a second chromium that resolves an outside name to 127.0.0.1, as a rebinding DNS server would
        chromium = browser.browser_type.launch(executable_path=CHROMIUM,
                                     args=[*CHROMIUM_ARGS, "--host-resolver-rules=MAP rebound.example 127.0.0.1"])
        try:
            page = chromium.new_page()
            response = page.goto(f"http://rebound.example:{port}/")
            assert response.status == 421 and "does not answer to the name" in page.content()
            assert page.context.cookies() == []  # no session was made
            assert page.goto(f"http://localhost:{port}/").status == 200
        finally:
            chromium.close()
    assert human_judgments(bench) == []
