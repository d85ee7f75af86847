"""Hostile requests against the assessor app: other Host names, other sites, old cookies, guessed tokens,
open redirects, repeated form fields; and `trecbench assessors remove` / `new-token`."""
from __future__ import annotations

from paths import ROOT

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from starlette.testclient import TestClient
from web_support import add_assessor, csrf_of, human_judgments, make_bench

from trecbench.store.workspace import Workspace
from trecbench.web.app import create_app

BASE = "http://127.0.0.1"


@pytest.fixture
def bench(tmp_path):
    return make_bench(tmp_path)


def client(bench, *, require_token: bool = False, **options) -> TestClient:
    return TestClient(create_app(bench, require_token=require_token, **options), base_url=BASE)


def logged_in(bench, name: str = "alice") -> tuple[TestClient, str]:
    token = add_assessor(bench, name)
    c = client(bench, require_token=True)
    assert c.get("/", params={"token": token}).status_code == 200
    return c, token


def grade_form(c: TestClient, qid: str = "2", docid: str = "w2", grade: str = "2") -> dict:
    return {"csrf": csrf_of(c.get("/").text), "qid": qid, "docid": docid, "grade": grade}


def leases(bench) -> int:
    return Workspace(bench).connection().execute("SELECT COUNT(*) FROM leases").fetchone()[0]


# ---- Host header (DNS rebinding) ----

def test_a_host_name_other_than_the_bound_one_is_refused_before_any_session(bench):
    c = client(bench)
    for host in ["evil.example", "evil.example:8000", "127.0.0.1.evil.example", "[::2]:80"]:
        response = c.get("/", headers={"host": host})
        assert response.status_code == 421, host
        assert "set-cookie" not in response.headers
        assert c.post("/judge", headers={"host": host}, data={"qid": "2"}).status_code == 421
    for host in ["127.0.0.1:8000", "localhost:8000", "localhost", "[::1]:8000"]:  # loopback names
        assert c.get("/", headers={"host": host}).status_code == 200, host
    assert human_judgments(bench) == []


def test_extra_names_are_accepted_and_a_wildcard_bind_accepts_any_name(bench):
    proxied = client(bench, require_token=True, host="127.0.0.1", allowed_hosts=["bench.example.org"])
    assert proxied.get("/login", headers={"host": "bench.example.org"}).status_code == 200
    assert proxied.get("/login", headers={"host": "other.example.org"}).status_code == 421
    lan = client(bench, require_token=True, host="192.168.1.5")
    assert lan.get("/login", headers={"host": "192.168.1.5:8000"}).status_code == 200
    assert lan.get("/login", headers={"host": "localhost:8000"}).status_code == 421
    anywhere = client(bench, require_token=True, host="0.0.0.0")
    assert anywhere.get("/login", headers={"host": "whatever.example"}).status_code == 200


# ---- redirects never leave the site ----

def test_a_token_login_on_a_path_starting_with_two_slashes_stays_on_the_site(bench):
    token = add_assessor(bench, "alice")
    c = client(bench, require_token=True)
    for path in ["//evil.example/landing", "/\\evil.example/landing", "///evil.example"]:
        response = c.get(BASE + path, params={"token": token}, follow_redirects=False)
        assert response.status_code == 303
        assert response.headers["location"] == "/", path


# ---- other sites cannot change anything ----

def test_a_cross_site_post_is_refused_and_leaves_the_victims_session_alone(bench):
    alice, _ = logged_in(bench)
    form = grade_form(alice)
    for headers in [{"origin": "https://evil.example"}, {"origin": "null"},
                    {"sec-fetch-site": "cross-site"}, {"sec-fetch-site": "same-site", "origin": BASE}]:
        response = alice.post("/judge", data=form, headers=headers, follow_redirects=False)
        assert response.status_code == 403, headers
        assert "set-cookie" not in response.headers  # no session made or replaced
        login = alice.post("/login", data={"token": "x"}, headers=headers)
        assert login.status_code == 403 and "set-cookie" not in login.headers
    assert human_judgments(bench) == []
    page = alice.get("/")
    assert '<strong id="assessor">alice</strong>' in page.text  # still logged in
    same = alice.post("/judge", data=form, headers={"origin": BASE, "sec-fetch-site": "same-origin"},
                      follow_redirects=False)
    assert same.status_code == 303 and human_judgments(bench) == [("alice", "2", "w2", 2)]


def test_an_image_on_another_site_creates_no_lease(bench):
    c = client(bench)
    c.get("/")
    embedded = {"sec-fetch-site": "cross-site", "sec-fetch-dest": "image", "sec-fetch-mode": "no-cors"}
    assert c.get("/next", params={"qid": "1"}, headers=embedded).status_code == 403
    assert c.get("/judge", params={"qid": "1", "docid": "d1"}, headers=embedded).status_code == 403
    assert c.get("/next", params={"qid": "1"}).status_code == 405  # taking a pair is a post
    assert c.get("/judge", params={"qid": "1", "docid": "d1"}).status_code == 200  # a page changes nothing
    assert leases(bench) == 0
    # a link followed from another site (a top-level navigation) opens the page, still changing nothing
    link = {"sec-fetch-site": "cross-site", "sec-fetch-dest": "document", "sec-fetch-mode": "navigate"}
    assert c.get("/judge", params={"qid": "1", "docid": "d1"}, headers=link).status_code == 200
    assert leases(bench) == 0


# ---- sessions end on the server ----

def test_a_cookie_saved_before_logout_no_longer_logs_in(bench):
    alice, _ = logged_in(bench)
    saved = dict(alice.cookies)
    alice.post("/logout", data={"csrf": csrf_of(alice.get("/").text)})
    replay = client(bench, require_token=True)
    replay.cookies.update(saved)
    assert replay.get("/", follow_redirects=False).headers["location"].startswith("/login")
    assert replay.post("/judge", data={"qid": "2", "docid": "w2", "grade": "1", "csrf": "x"}).status_code == 401
    assert human_judgments(bench) == []


def test_removing_an_assessor_ends_their_sessions_and_keeps_their_judgments(bench, cli_run):
    alice, token = logged_in(bench)
    assert alice.post("/judge", data=grade_form(alice), follow_redirects=False).status_code == 303
    result = cli_run("assessors", "remove", "alice", "-w", bench)
    assert result.exit_code == 0, result.output
    assert alice.get("/", follow_redirects=False).status_code == 303  # the running app sees it at once
    fresh = client(bench, require_token=True)
    assert fresh.get("/", params={"token": token}, follow_redirects=False).headers["location"] == "/login?failed=1"
    assert human_judgments(bench) == [("alice", "2", "w2", 2)]
    assert "alice" not in cli_run("assessors", "list", "-w", bench).output
    again = cli_run("assessors", "remove", "alice", "-w", bench)
    assert again.exit_code == 2 and "no assessor 'alice'" in again.output


def test_a_new_token_replaces_the_old_one_and_ends_the_sessions(bench, cli_run):
    alice, old = logged_in(bench)
    result = cli_run("assessors", "new-token", "alice", "-w", bench)
    assert result.exit_code == 0, result.output
    new = result.stdout.strip()
    assert new and new != old
    assert alice.get("/", follow_redirects=False).status_code == 303
    c = client(bench, require_token=True)
    assert c.get("/", params={"token": old}, follow_redirects=False).headers["location"] == "/login?failed=1"
    assert c.get("/", params={"token": new}, follow_redirects=False).headers["location"] == "/"
    assert '<strong id="assessor">alice</strong>' in c.get("/").text
    missing = cli_run("assessors", "new-token", "nobody", "-w", bench)
    assert missing.exit_code == 2 and "no assessor 'nobody'" in missing.output


# ---- guessing tokens ----

def test_wrong_tokens_are_throttled_per_address(bench):
    from trecbench.web.auth import Throttle

    token = add_assessor(bench, "alice")
    now = [1000.0]
    c = client(bench, require_token=True, throttle=Throttle(limit=5, window=60, clock=lambda: now[0]))
    for _ in range(5):
        assert c.get("/", params={"token": "guess"}, follow_redirects=False).headers["location"] == "/login?failed=1"
    refused = c.get("/", params={"token": token}, follow_redirects=False)  # even the right one, for now
    assert refused.status_code == 429 and "too many wrong tokens" in refused.text
    assert refused.headers["retry-after"] == "60"
    csrf = csrf_of(c.get("/login").text)
    assert c.post("/login", data={"csrf": csrf, "token": token}).status_code == 429
    now[0] += 61
    assert c.get("/", params={"token": token}, follow_redirects=False).headers["location"] == "/"


# ---- the login page ----

def test_the_login_page_shows_nobody_as_logged_in(bench):
    c = client(bench)  # on loopback, where every other page logs in as `local`
    page = c.get("/login").text
    assert "judging as" not in page and "switch assessor" not in page and 'action="/logout"' not in page
    assert c.get("/logout").status_code == 405
    assert "judging as" in c.get("/").text  # any other page: local


# ---- forms say each thing once ----

def test_a_field_given_twice_is_refused(bench):
    c = client(bench)
    csrf = csrf_of(c.get("/").text)
    body = f"csrf={csrf}&qid=2&docid=w2&grade=99&grade=1"
    response = c.post("/judge", content=body, headers={"content-type": "application/x-www-form-urlencoded"})
    assert response.status_code == 400 and "'grade' is sent more than once" in response.text
    twice = f"csrf={csrf}&qid=2&qid=1&docid=w2&grade=1"
    assert c.post("/judge", content=twice,
                  headers={"content-type": "application/x-www-form-urlencoded"}).status_code == 400
    assert c.get("/judge?qid=1&qid=2&docid=d1").status_code == 400
    assert human_judgments(bench) == []


# ---- the real command, over HTTP ----

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(url: str, *, host: str | None = None, data: bytes | None = None, headers: dict | None = None):
    request = urllib.request.Request(url, data=data, headers={**({"Host": host} if host else {}), **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_serve_refuses_other_host_names_and_other_sites(bench):
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "trecbench.cli", "serve", "-w", str(bench), "--port", str(port),
                             "--allowed-host", "bench.example.org"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                status, _ = _request(url + "/login")
                break
            except (ConnectionError, urllib.error.URLError):
                assert proc.poll() is None and time.monotonic() < deadline, "serve did not start"
                time.sleep(0.1)
        assert status == 200
        assert _request(url + "/", host="evil.example")[0] == 421
        assert _request(url + "/login", host="bench.example.org")[0] == 200
        body = b"qid=2&docid=w2&grade=2&csrf=x"
        assert _request(url + "/judge", data=body, headers={"Origin": "http://evil.example"})[0] == 403
    finally:
        proc.terminate()
        proc.wait(15)
    assert human_judgments(bench) == []


def test_sessions_older_than_a_cookie_lasts_are_dropped_at_the_next_login(bench):
    from trecbench.store.workspace import SESSION_SECONDS

    alice, _ = logged_in(bench)
    ws = Workspace(bench)
    ws.connection().execute("UPDATE web_sessions SET created_at = '2000-01-01T00:00:00.000+00:00'")
    assert SESSION_SECONDS == 14 * 24 * 3600
    logged_in(bench, "bob")
    assert [r[0] for r in ws.connection().execute("SELECT assessor FROM web_sessions")] == ["bob"]
    assert alice.get("/", follow_redirects=False).status_code == 303  # her old session is gone
