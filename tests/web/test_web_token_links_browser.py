"""Login CSRF in a real browser: another site sends a logged-in assessor to the app with its own `?token=`;
chromium's Fetch Metadata marks that navigation cross-site, and the app asks before anything changes.

Skipped when playwright or /usr/bin/chromium is missing, unless TRECBENCH_REQUIRE_BROWSER=1 (CI sets it).
"""
from __future__ import annotations

import re

import pytest

from trecbench.store.workspace import Workspace
from web_support import human_judgments, live_server, make_bench


@pytest.fixture
def bench(tmp_path):
    return make_bench(tmp_path)


def _sender(target: str):
    """Another site's page that sends the browser on to `target` as soon as it loads."""
    from starlette.applications import Starlette
    from starlette.responses import HTMLResponse
    from starlette.routing import Route

    html = f'<!doctype html><title>a prize</title><script>location.href = "{target}";</script>'
    return Starlette(routes=[Route("/", lambda request: HTMLResponse(html))])


def test_a_page_on_another_site_cannot_log_the_assessor_in_as_someone_else(bench, browser):
    from trecbench.web.app import create_app

    ws = Workspace(bench)
    alice, mallory = ws.add_assessor("alice"), ws.add_assessor("mallory")
    with live_server(create_app(bench, require_token=True, host="0.0.0.0")) as url:
        page = browser.new_context().new_page()
        page.goto(f"{url}/?token={alice}")  # typed by alice herself: logs in at once
        assert page.locator("#assessor").inner_text() == "alice"
        with live_server(_sender(f"{url}/topic?qid=2&token={mallory}")) as evil:
            with page.expect_navigation(url=re.compile(re.escape(url) + "/topic")):
                page.goto(evil.replace("127.0.0.1", "localhost") + "/")  # another site
        assert page.locator("#login-as").inner_text() == "mallory"
        assert page.locator("#assessor").inner_text() == "alice"  # still alice until she says otherwise
        page.goto(url + "/")
        assert page.locator("#assessor").inner_text() == "alice"
        page.goto(f"{url}/topic?qid=2&token={mallory}")  # the same link opened by the person: logs in
        assert page.locator("#assessor").inner_text() == "mallory"
    assert human_judgments(bench) == []


def test_confirming_a_link_from_another_site_logs_in(bench, browser):
    from trecbench.web.app import create_app

    bob = Workspace(bench).add_assessor("bob")
    with live_server(create_app(bench, require_token=True, host="0.0.0.0")) as url:
        page = browser.new_context().new_page()
        with live_server(_sender(f"{url}/topic?qid=1&token={bob}")) as mail:  # a webmail page, say
            with page.expect_navigation(url=re.compile(re.escape(url) + "/topic")):
                page.goto(mail.replace("127.0.0.1", "localhost") + "/")
        assert page.locator("#login-as").inner_text() == "bob"
        with page.expect_navigation(url=re.compile(re.escape(url) + r"/topic\?qid=1$")):
            page.click("#confirm-login")
        assert page.locator("#assessor").inner_text() == "bob"
