"""Login CSRF: a `?token=` link another site sends the browser to asks before it logs in, so no site can
switch an assessor to its own token and collect their grades under its name; a link the person opened
themselves, or one from the app's own pages, still logs in at once."""
from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient
from web_support import add_assessor, csrf_of, human_judgments, make_bench

from trecbench.web.app import create_app

BASE = "http://127.0.0.1"
# What a browser sends for a top-level navigation another site started (a link, a redirect, window.location).
FROM_ANOTHER_SITE = {"sec-fetch-site": "cross-site", "sec-fetch-dest": "document", "sec-fetch-mode": "navigate",
                     "sec-fetch-user": "?1"}


@pytest.fixture
def bench(tmp_path):
    return make_bench(tmp_path)


def client(bench, *, require_token: bool = True) -> TestClient:
    return TestClient(create_app(bench, require_token=require_token), base_url=BASE)


def judging_as(c: TestClient) -> str | None:
    match = re.search(r'<strong id="assessor">([^<]+)</strong>', c.get("/").text)
    return match.group(1) if match else None


def grade(c: TestClient, qid: str, docid: str, value: int) -> None:
    form = {"csrf": csrf_of(c.get("/").text), "qid": qid, "docid": docid, "grade": str(value)}
    assert c.post("/judge", data=form, follow_redirects=False).status_code == 303


def confirm_form(html: str) -> dict[str, str]:
    """The hidden fields of the confirmation page's form."""
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', html))


def test_a_token_link_from_another_site_does_not_switch_a_logged_in_assessor(bench):
    alice_token, mallory_token = add_assessor(bench, "alice"), add_assessor(bench, "mallory")
    victim = client(bench)
    assert victim.get("/", params={"token": alice_token}).status_code == 200
    page = victim.get("/judge", params={"qid": "2", "docid": "w2", "token": mallory_token}, headers=FROM_ANOTHER_SITE,
                      follow_redirects=False)
    assert page.status_code == 200
    assert '<span id="login-as">mallory</span>' in page.text and "you are judging as" in page.text
    assert "set-cookie" not in page.headers  # the session is neither replaced nor changed
    assert judging_as(victim) == "alice"
    grade(victim, "2", "w2", 2)
    assert human_judgments(bench) == [("alice", "2", "w2", 2)]  # her grade stays hers


def test_a_token_link_from_another_site_logs_in_only_after_the_person_confirms(bench):
    add_assessor(bench, "alice")
    bob_token = add_assessor(bench, "bob")
    c = client(bench)  # nobody logged in yet: an invitation link opened from a webmail page
    page = c.get("/topic", params={"qid": "1", "token": bob_token}, headers=FROM_ANOTHER_SITE, follow_redirects=False)
    assert page.status_code == 200 and '<span id="login-as">bob</span>' in page.text
    assert c.get("/", follow_redirects=False).headers["location"].startswith("/login")  # not logged in
    fields = confirm_form(page.text)
    assert fields["next"] == "/topic?qid=1" and fields["token"] == bob_token
    confirmed = c.post("/login", data=fields, headers={"origin": BASE, "sec-fetch-site": "same-origin"},
                       follow_redirects=False)
    assert confirmed.status_code == 303 and confirmed.headers["location"] == "/topic?qid=1"
    assert judging_as(c) == "bob"


def test_the_confirmation_cannot_be_posted_by_another_site(bench):
    mallory_token = add_assessor(bench, "mallory")
    c = client(bench)
    fields = confirm_form(c.get("/", params={"token": mallory_token}, headers=FROM_ANOTHER_SITE).text)
    forged = c.post("/login", data=fields, headers={"origin": "https://evil.example", "sec-fetch-site": "cross-site"})
    assert forged.status_code == 403
    assert c.get("/", follow_redirects=False).headers["location"].startswith("/login")


@pytest.mark.parametrize("site", ["none", "same-origin"])
def test_a_token_link_the_person_opened_or_this_site_made_logs_in_at_once(bench, site):
    alice_token, bob_token = add_assessor(bench, "alice"), add_assessor(bench, "bob")
    c = client(bench)
    assert c.get("/", params={"token": alice_token}).status_code == 200
    headers = {"sec-fetch-site": site, "sec-fetch-dest": "document", "sec-fetch-mode": "navigate"}
    response = c.get("/topic", params={"qid": "1", "token": bob_token}, headers=headers, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/topic?qid=1"
    assert judging_as(c) == "bob"


def test_a_link_without_fetch_metadata_asks_only_when_someone_is_logged_in(bench):
    alice_token, mallory_token = add_assessor(bench, "alice"), add_assessor(bench, "mallory")
    c = client(bench)  # a browser too old to say where a request comes from
    first = c.get("/", params={"token": alice_token}, follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/"
    switched = c.get("/", params={"token": mallory_token}, follow_redirects=False)
    assert switched.status_code == 200 and '<span id="login-as">mallory</span>' in switched.text
    assert judging_as(c) == "alice"


def test_on_loopback_a_token_link_from_another_site_does_not_replace_the_local_assessor(bench):
    mallory_token = add_assessor(bench, "mallory")
    c = client(bench, require_token=False)
    assert judging_as(c) == "local"
    page = c.get("/", params={"token": mallory_token}, headers=FROM_ANOTHER_SITE, follow_redirects=False)
    assert page.status_code == 200 and '<span id="login-as">mallory</span>' in page.text
    grade(c, "2", "w1", 1)
    assert human_judgments(bench) == [("local", "2", "w1", 1)]


def test_a_link_with_the_token_already_logged_in_just_goes_to_the_page(bench):
    alice_token = add_assessor(bench, "alice")
    c = client(bench)
    c.get("/", params={"token": alice_token})
    again = c.get("/topic", params={"qid": "2", "token": alice_token}, headers=FROM_ANOTHER_SITE,
                  follow_redirects=False)
    assert again.status_code == 303 and again.headers["location"] == "/topic?qid=2"
    assert judging_as(c) == "alice"


def test_a_wrong_token_from_another_site_is_refused_and_counted(bench):
    from trecbench.web.auth import Throttle

    token = add_assessor(bench, "alice")
    c = TestClient(create_app(bench, require_token=True, throttle=Throttle(limit=2, window=60, clock=lambda: 0.0)),
                   base_url=BASE)
    for _ in range(2):
        wrong = c.get("/", params={"token": "guess"}, headers=FROM_ANOTHER_SITE, follow_redirects=False)
        assert wrong.status_code == 303 and wrong.headers["location"] == "/login?failed=1"
    assert c.get("/", params={"token": token}, headers=FROM_ANOTHER_SITE).status_code == 429
