"""The assessor web app through Starlette's TestClient: routes, login and tokens, CSRF, escaping, leases."""
from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from starlette.testclient import TestClient

from trecbench.store.workspace import Judge, Judgment, Workspace, text_hash
from trecbench.web.app import create_app
from trecbench.web.auth import is_loopback
from trecbench.web.highlight import highlight, query_terms
from web_support import DOCS, add_assessor, add_pool, csrf_of, human_judgments, make_bench


@pytest.fixture
def bench(tmp_path):
    return make_bench(tmp_path)


BASE = "http://127.0.0.1"  # the address the app is told it is served at (create_app's default host)


def local_client(bench, **options) -> TestClient:
    return TestClient(create_app(bench, require_token=False, **options), base_url=BASE)


def token_client(bench, **options) -> TestClient:
    return TestClient(create_app(bench, require_token=True, **options), base_url=BASE)


def login(client: TestClient, token: str) -> None:
    response = client.get("/", params={"token": token})
    assert response.status_code == 200 and "judging as" in response.text


def shown_doc(response) -> str:
    """The docid of the judging page a response shows (after redirects)."""
    assert response.url.path == "/judge", f"expected a judging page, got {response.url}"
    return parse_qs(urlsplit(str(response.url)).query)["docid"][0]


def take_next(client: TestClient, qid: str, *, after: str | None = None, follow: bool = True):
    """Press "judge next" (a post: it leases the pair it shows)."""
    csrf = csrf_of(client.get("/").text)
    return client.post("/next", data={"csrf": csrf, "qid": qid, **({"after": after} if after else {})},
                       follow_redirects=follow)


def open_pair(client: TestClient, qid: str, docid: str):
    """Go to a pair with previous/next or from the topic's list (a post: it leases the pair when open)."""
    csrf = csrf_of(client.get("/").text)
    return client.post("/open", data={"csrf": csrf, "qid": qid, "docid": docid})


def judge(client: TestClient, qid: str, docid: str, grade: int, *, follow: bool = True):
    page = client.get("/judge", params={"qid": qid, "docid": docid})
    return client.post("/judge", data={"csrf": csrf_of(page.text), "qid": qid, "docid": docid, "grade": str(grade)},
                       follow_redirects=follow)


# ---- what is judged, and in which order ----

def test_topic_list_shows_each_topic_with_its_progress(bench):
    client = local_client(bench)
    judge(client, "1", "d1", 2)
    page = client.get("/")
    assert page.status_code == 200
    rows = re.findall(r'<tr data-qid="(\w+)">.*?<span class="count">(\d+) / (\d+)</span>', page.text, re.S)
    assert rows == [("1", "1", "4"), ("2", "0", "2")]  # d5 duplicates d4: not offered


def test_the_topic_list_counts_judgments_recorded_since_it_was_last_shown(bench):
    client = local_client(bench, double=True)
    counts = r'<tr data-qid="(\w+)">.*?<span class="count">(\d+) / (\d+)</span>.*?<td class="mine">(\d+)</td>'
    assert re.findall(counts, client.get("/").text, re.S) == [("1", "0", "4", "0"), ("2", "0", "2", "0")]
    ws = Workspace(bench)
    ws.record_many([Judgment("1", "d1", 2, Judge("human", "alice")), Judgment("1", "d1", 1, Judge("human", "bob")),
                    Judgment("1", "d3", 1, Judge("human", "alice")), Judgment("1", "d3", 0, Judge("human", "alice")),
                    Judgment("1", "d5", 2, Judge("human", "bob")),  # a duplicate, not offered: not counted
                    Judgment("1", "d4", 2, Judge("model", "m", model="m", prompt_id="p")),  # not a person
                    Judgment("1", "d2", None, Judge("human", "bob"), status="failed")])
    judge(client, "2", "w2", 1)
    assert re.findall(counts, client.get("/").text, re.S) == [("1", "1", "4", "0"), ("2", "0", "2", "1")]
    add_pool(ws, "p2", [("1", "d3", 0, None, True), ("1", "d2", 1, None, True)])  # a new pool: counted afresh
    assert re.findall(counts, client.get("/").text, re.S) == [("1", "0", "2", "0")]
    ws.record(Judgment("1", "d3", 3, Judge("human", "bob")))
    assert re.findall(counts, client.get("/").text, re.S) == [("1", "1", "2", "0")]


def test_without_a_pool_the_page_says_how_to_make_one(tmp_path):
    bench = make_bench(tmp_path, pool=False)
    page = local_client(bench).get("/")
    assert "Nothing to judge yet" in page.text
    assert f"trecbench pool ... -w {bench}" in page.text


def test_documents_are_offered_in_priority_order_representatives_only(bench):
    client = local_client(bench)
    seen = []
    response = take_next(client, "1")
    while response.url.path == "/judge":
        docid = shown_doc(response)
        seen.append(docid)
        response = client.post("/judge", data={"csrf": csrf_of(response.text), "qid": "1", "docid": docid,
                                               "grade": "1"})
    assert seen == ["d1", "d3", "d2", "d4"]
    assert response.url.path == "/topic" and 'id="finished"' in response.text


def test_judging_records_one_human_judgment_with_the_document_hash_at_once(bench):
    client = local_client(bench)
    response = judge(client, "1", "d1", 3, follow=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/judge?qid=1&docid=d3"  # the next pair, leased
    frame = Workspace(bench).judgments()
    assert len(frame) == 1
    row = frame.iloc[0]
    assert (row.query_id, row.doc_id, row.grade, row.judge_kind, row.judge) == ("1", "d1", 3, "human", "local")
    stored = Workspace(bench).connection().execute("SELECT doc_hash FROM judgments").fetchone()[0]
    assert stored == text_hash(DOCS["d1"])


def test_rejudging_keeps_the_history_and_the_page_shows_the_current_grade(bench):
    client = local_client(bench)
    judge(client, "1", "d1", 3)
    judge(client, "1", "d1", 1)
    assert human_judgments(bench) == [("local", "1", "d1", 3), ("local", "1", "d1", 1)]
    page = client.get("/judge", params={"qid": "1", "docid": "d1"})
    assert re.search(r'<strong id="my-grade">1</strong>', page.text)
    assert re.search(r'value="1" class="grade current"', page.text)


def test_next_and_previous_step_through_the_topic(bench):
    client = local_client(bench)
    page = client.get("/judge", params={"qid": "1", "docid": "d3"})
    assert 'id="prev" name="docid" value="d1"' in page.text
    assert 'id="next" name="docid" value="d2"' in page.text
    last = client.get("/judge", params={"qid": "1", "docid": "d4"})
    assert 'id="next" formaction="/next" name="after" value="d4"' in last.text  # past the end: the first one left open


def test_a_grade_outside_0_to_3_or_an_unknown_document_is_refused(bench):
    client = local_client(bench)
    csrf = csrf_of(client.get("/judge", params={"qid": "1", "docid": "d1"}).text)
    assert client.post("/judge", data={"csrf": csrf, "qid": "1", "docid": "d1", "grade": "7"}).status_code == 400
    assert client.post("/judge", data={"csrf": csrf, "qid": "1", "docid": "nope", "grade": "1"}).status_code == 409
    assert client.post("/judge", data={"csrf": csrf, "qid": "99", "docid": "d1", "grade": "1"}).status_code == 404
    assert human_judgments(bench) == []


def test_only_documents_of_the_topics_pool_are_judged(bench):
    client = local_client(bench)
    csrf = csrf_of(client.get("/").text)
    # w1 is in the corpus but in topic 2's pool only; d5 is d4's duplicate (d4 is judged for the group)
    for qid, docid in [("1", "w1"), ("1", "d5"), ("2", "d1")]:
        response = client.post("/judge", data={"csrf": csrf, "qid": qid, "docid": docid, "grade": "2"})
        assert response.status_code == 409 and "not in pool 'p1'" in response.text
    page = client.get("/judge", params={"qid": "1", "docid": "w1"}).text
    assert 'id="not-in-pool"' in page and 'id="grade-form"' not in page
    assert human_judgments(bench) == []


def test_a_corpus_edited_while_serving_is_read_again(bench):
    import json
    import os

    ws = Workspace(bench)
    add_pool(ws, "p2", [("2", "w3", 0, None, True)])
    client = local_client(bench)
    page = client.get("/judge", params={"qid": "2", "docid": "w3"}).text
    assert 'id="missing"' in page and "the corpus has no document &#39;w3&#39;" in page
    corpus = Path(ws.corpus_source)
    with corpus.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"id": "w3", "contents": "Floating turbines far out."}) + "\n")
    stat = corpus.stat()
    os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a second later, whatever the clock
    page = client.get("/judge", params={"qid": "2", "docid": "w3"}).text
    assert "Floating turbines far out." in page and 'id="missing"' not in page
    judge(client, "2", "w3", 2)
    assert human_judgments(bench) == [("local", "2", "w3", 2)]


# ---- safety: corpus text is text ----

def test_document_html_is_shown_as_text_never_as_markup(bench):
    client = local_client(bench)
    page = client.get("/judge", params={"qid": "1", "docid": "d2"}).text
    assert "<script>window.pwned" not in page
    assert "&lt;script&gt;window.pwned = 1; alert(&#39;pwned&#39;)&lt;/script&gt;Wind turbines beside" in page
    page = client.get("/judge", params={"qid": "1", "docid": "d3"}).text
    assert "<img" not in page and "<b>bold" not in page
    assert "&lt;img src=x onerror=&#34;window.pwned = 2&#34;&gt; &lt;b&gt;bold&lt;/b&gt; &amp; more" in page
    assert "<mark>solar</mark> <mark>energy</mark>" in page


def test_topic_narrative_is_escaped(bench):
    page = local_client(bench).get("/judge", params={"qid": "1", "docid": "d1"}).text
    assert "Documents about &lt;em&gt;solar&lt;/em&gt; power are relevant." in page


def test_query_terms_are_marked_in_the_escaped_text():
    assert highlight("<b>Solar</b> solars & solarium", ["solar"]) == (
        "&lt;b&gt;<mark>Solar</mark>&lt;/b&gt; <mark>solars</mark> &amp; solarium")
    assert highlight("a<b & c", ["lt", "amp", "mark"]) == "a&lt;b &amp; c"  # never matches inside an entity
    assert highlight("xay a+b", [".", "a+"]) == "xay <mark>a+</mark>b"  # terms are literal, not patterns
    assert highlight("<i>", []) == "&lt;i&gt;"


def test_query_terms_leave_out_stopwords_and_repeats():
    assert query_terms("What is the effect of Solar energy on solar farms?") == ["effect", "solar", "energy", "farms"]


def test_pages_allow_no_inline_script(bench):
    client = local_client(bench)
    for path in ["/", "/topic?qid=1", "/judge?qid=1&docid=d1", "/login"]:
        response = client.get(path)
        csp = response.headers["content-security-policy"]
        assert "script-src 'self';" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
        assert response.headers["x-content-type-options"] == "nosniff"
        scripts = re.findall(r"<script[^>]*>", response.text)
        assert all('src="/static/' in s for s in scripts), scripts


# ---- CSRF ----

def test_every_post_needs_the_sessions_csrf_token(bench):
    client = local_client(bench)
    client.get("/")
    form = {"qid": "1", "docid": "d1", "grade": "2"}
    assert client.post("/judge", data=form).status_code == 403
    assert client.post("/judge", data={**form, "csrf": "forged"}).status_code == 403
    assert client.post("/judge", data={**form, "csrf": "faux-jeton-\u00e9\u00e8"}).status_code == 403
    other = local_client(bench)
    stolen = csrf_of(other.get("/judge", params={"qid": "1", "docid": "d1"}).text)
    assert client.post("/judge", data={**form, "csrf": stolen}).status_code == 403  # another session's token
    assert client.post("/logout", data={}).status_code == 403
    assert human_judgments(bench) == []


# ---- login ----

def test_on_loopback_no_login_is_needed_and_the_assessor_is_local(bench):
    client = local_client(bench)
    assert '<strong id="assessor">local</strong>' in client.get("/").text
    judge(client, "2", "w2", 1)
    assert human_judgments(bench) == [("local", "2", "w2", 1)]


def test_on_loopback_an_assessor_may_pick_a_name_without_a_token(bench):
    client = local_client(bench)
    csrf = csrf_of(client.get("/login").text)
    assert client.post("/login", data={"csrf": csrf, "name": "carol"}).status_code == 200
    judge(client, "2", "w2", 2)
    assert human_judgments(bench) == [("carol", "2", "w2", 2)]
    csrf = csrf_of(client.get("/login").text)
    assert client.post("/login", data={"csrf": csrf, "name": "two words"}).status_code == 401


def test_beyond_loopback_every_request_without_a_session_is_refused(bench):
    client = token_client(bench)
    for path in ["/", "/topic?qid=1", "/judge?qid=1&docid=d1"]:
        response = client.get(path, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"].startswith("/login?next=")
    for path in ["/static/app.css", "/static/app.js", "/static/nothing-here"]:
        assert client.get(path).status_code == 401
    assert client.post("/judge", data={"qid": "1", "docid": "d1", "grade": "3"}).status_code == 401
    assert client.post("/logout").status_code == 401
    login_page = client.get("/login")
    assert login_page.status_code == 200 and 'name="token"' in login_page.text and 'name="name"' not in login_page.text
    assert human_judgments(bench) == []


def test_beyond_loopback_a_name_without_a_token_does_not_log_in(bench):
    client = token_client(bench)
    csrf = csrf_of(client.get("/login").text)
    response = client.post("/login", data={"csrf": csrf, "name": "local"})
    assert response.status_code == 401
    assert client.get("/", follow_redirects=False).status_code == 303


def test_a_token_on_the_login_page_starts_a_session(bench):
    token = add_assessor(bench, "alice")
    client = token_client(bench)
    csrf = csrf_of(client.get("/login").text)
    assert client.post("/login", data={"csrf": csrf, "token": "wrong"}).status_code == 401
    response = client.post("/login", data={"csrf": csrf, "token": token, "next": "/topic?qid=2"})
    assert response.url.path == "/topic" and '<strong id="assessor">alice</strong>' in response.text
    judge(client, "2", "w2", 3)
    assert human_judgments(bench) == [("alice", "2", "w2", 3)]


def test_a_token_in_the_query_string_logs_in_once_and_leaves_the_url(bench):
    token = add_assessor(bench, "alice")
    client = token_client(bench)
    response = client.get("/topic", params={"qid": "1", "token": token}, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/topic?qid=1"
    assert client.get("/topic", params={"qid": "1"}).status_code == 200  # the session carries on
    bad = token_client(bench).get("/", params={"token": "wrong"}, follow_redirects=False)
    assert bad.headers["location"] == "/login?failed=1"


def test_a_session_made_without_a_token_is_refused_when_tokens_are_required(bench):
    local = local_client(bench)
    csrf = csrf_of(local.get("/login").text)
    local.post("/login", data={"csrf": csrf, "name": "alice"})
    add_assessor(bench, "alice")
    public = token_client(bench)
    public.cookies = local.cookies  # same workspace, same signing key: the cookie itself is valid
    assert public.get("/", follow_redirects=False).status_code == 303


def test_login_never_sends_anyone_off_the_site(bench):
    token = add_assessor(bench, "alice")
    client = token_client(bench)
    csrf = csrf_of(client.get("/login").text)
    for target in ["//evil.example/", "https://evil.example/", "/\\evil.example"]:
        response = client.post("/login", data={"csrf": csrf, "token": token, "next": target}, follow_redirects=False)
        assert response.headers["location"] == "/"
        csrf = csrf_of(client.get("/login").text)


def test_logout_ends_the_session(bench):
    token = add_assessor(bench, "alice")
    client = token_client(bench)
    login(client, token)
    client.post("/logout", data={"csrf": csrf_of(client.get("/").text)})
    assert client.get("/", follow_redirects=False).status_code == 303


@pytest.mark.parametrize("host,loopback", [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                           ("127.0.0.2", True), ("0.0.0.0", False), ("192.168.1.5", False),
                                           ("::", False), ("example.org", False)])
def test_tokens_are_required_unless_bound_to_loopback(host, loopback):
    assert is_loopback(host) is loopback


# ---- leases: one assessor per pair at a time ----

def test_a_pair_is_offered_to_one_assessor_at_a_time(bench):
    alice, bob = token_client(bench), token_client(bench)
    login(alice, add_assessor(bench, "alice"))
    login(bob, add_assessor(bench, "bob"))
    assert shown_doc(take_next(alice, "1")) == "d1"
    assert shown_doc(take_next(bob, "1")) == "d3"
    page = bob.get("/judge", params={"qid": "1", "docid": "d1"})  # bob opens alice's pair himself
    assert 'id="held-by">alice is judging' in page.text
    assert 'id="next" name="docid" value="d2"' in bob.get("/judge", params={"qid": "1", "docid": "d3"}).text


def test_judging_releases_the_lease_and_completes_the_pair(bench):
    alice, bob = token_client(bench), token_client(bench)
    login(alice, add_assessor(bench, "alice"))
    login(bob, add_assessor(bench, "bob"))
    response = judge(alice, "2", "w2", 2, follow=False)
    assert response.headers["location"] == "/judge?qid=2&docid=w1"  # her next pair, now in front of her
    assert take_next(bob, "2").url.path == "/topic"  # w2 is done (one judgment is enough), w1 is alice's
    judge(alice, "2", "w1", 0)
    assert Workspace(bench).connection().execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0
    assert take_next(bob, "2").url.path == "/topic"


def test_moving_on_releases_the_lease_on_the_pair_left(bench):
    alice, bob = token_client(bench), token_client(bench)
    login(alice, add_assessor(bench, "alice"))
    login(bob, add_assessor(bench, "bob"))
    assert shown_doc(take_next(alice, "1")) == "d1"
    open_pair(alice, "1", "d3")  # pressed n: she now holds d3 only
    assert shown_doc(take_next(bob, "1")) == "d1"


def test_an_expired_lease_offers_the_pair_again(bench):
    alice, bob = (token_client(bench, lease_seconds=-1) for _ in range(2))
    login(alice, add_assessor(bench, "alice"))
    login(bob, add_assessor(bench, "bob"))
    assert shown_doc(take_next(alice, "1")) == "d1"
    assert shown_doc(take_next(bob, "1")) == "d1"


def test_double_judging_offers_each_pair_to_two_assessors_once_each(bench, cli_run, tmp_path):
    alice, bob, carol = (token_client(bench, double=True) for _ in range(3))
    for client, name in [(alice, "alice"), (bob, "bob"), (carol, "carol")]:
        login(client, add_assessor(bench, name))
    assert shown_doc(take_next(alice, "2")) == "w2"
    assert shown_doc(take_next(bob, "2")) == "w2"  # a second assessor may take it too
    assert shown_doc(take_next(carol, "2")) == "w1"  # but not a third
    assert shown_doc(take_next(carol, "1")) == "d1"  # carol moves on, leaving w1
    for client, grades in [(alice, {"w2": 2, "w1": 0}), (bob, {"w2": 2, "w1": 1})]:
        response = take_next(client, "2")
        while response.url.path == "/judge":
            docid = shown_doc(response)
            response = client.post("/judge", data={"csrf": csrf_of(response.text), "qid": "2", "docid": docid,
                                                   "grade": str(grades[docid])})
    assert take_next(carol, "2").url.path == "/topic"  # both pairs have their two judgments
    assert sorted(human_judgments(bench)) == [("alice", "2", "w1", 0), ("alice", "2", "w2", 2),
                                              ("bob", "2", "w1", 1), ("bob", "2", "w2", 2)]
    page = alice.get("/")
    assert re.search(r'<tr data-qid="2">.*?<span class="count">2 / 2</span>', page.text, re.S)
    for name in ("alice", "bob"):
        result = cli_run("qrels", "export", "-w", bench, "--judge", name, "-o", tmp_path / f"{name}.txt")
        assert result.exit_code == 0, result.output
    agree = cli_run("qrels", "agree", tmp_path / "alice.txt", tmp_path / "bob.txt")
    assert agree.exit_code == 0, agree.output
    assert "pairs judged by both: 2" in agree.output


def test_a_new_pool_is_judged_from_the_next_request_on(bench):
    client = local_client(bench)
    ws = Workspace(bench)
    add_pool(ws, "p2", [("2", "w1", 0, None, True)])
    page = client.get("/")
    assert "pool p2" in page.text and 'data-qid="1"' not in page.text


# ---- the model's suggestion ----

def test_the_model_suggestion_is_hidden_until_asked_and_never_recorded_as_the_assessors(bench):
    ws = Workspace(bench)
    model = Judge("model", "gpt-x:graded-0-3", model="gpt-x", prompt_id="graded-0-3", prompt_hash="abc")
    ws.record(Judgment("1", "d1", 3, model, rationale="mentions <solar> panels"))
    ws.record(Judgment("1", "d1", None, model, status="failed", error="unparseable"))
    client = local_client(bench)
    page = client.get("/judge", params={"qid": "1", "docid": "d1"}).text
    assert 'id="show-suggestion"' in page and "suggested-grade" not in page and "gpt-x" not in page
    shown = client.get("/judge", params={"qid": "1", "docid": "d1", "suggest": "1"}).text
    assert '<strong id="suggested-grade">3</strong>' in shown and "mentions &lt;solar&gt; panels" in shown
    assert "not judged" in shown  # the assessor's own grade is untouched
    assert human_judgments(bench) == []
    page = client.get("/judge", params={"qid": "1", "docid": "d3", "suggest": "1"}).text
    assert "No model has judged this document" in page


# ---- several writers at once ----

def test_two_assessors_and_the_cli_recording_at_once_lose_nothing(bench):
    alice, bob = token_client(bench, double=True), token_client(bench, double=True)
    login(alice, add_assessor(bench, "alice"))
    login(bob, add_assessor(bench, "bob"))
    csrf = {"alice": csrf_of(alice.get("/").text), "bob": csrf_of(bob.get("/").text)}
    pairs = [("1", d) for d in ("d1", "d2", "d3", "d4")] + [("2", d) for d in ("w1", "w2")]
    errors: list[BaseException] = []

    def assessor(client, name):
        try:
            for round_ in range(3):
                for qid, docid in pairs:
                    response = client.post("/judge", data={"csrf": csrf[name], "qid": qid, "docid": docid,
                                                           "grade": str(round_)}, follow_redirects=False)
                    assert response.status_code == 303
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    def cli():
        try:
            ws = Workspace(bench)
            for qid, docid in pairs * 3:
                ws.record(Judgment(qid, docid, 1, Judge("import", "nist")))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=assessor, args=(alice, "alice")),
               threading.Thread(target=assessor, args=(bob, "bob")), threading.Thread(target=cli)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    frame = Workspace(bench).judgments()
    assert frame.groupby("judge").size().to_dict() == {"alice": 18, "bob": 18, "nist": 18}


def test_trecbench_help_does_not_import_the_web_stack():
    code = ("import sys; from trecbench.cli import cli\n"
            "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('starlette', 'uvicorn', 'jinja2') if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out and "serve" in out


def test_assessors_asking_at_the_same_moment_get_different_pairs(bench):
    clients = [token_client(bench) for _ in range(4)]
    for i, client in enumerate(clients):
        login(client, add_assessor(bench, f"a{i}"))
    shown: list[str] = []
    barrier = threading.Barrier(len(clients))

    def ask(client):
        barrier.wait()
        shown.append(shown_doc(take_next(client, "1")))

    threads = [threading.Thread(target=ask, args=(c,)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(shown) == ["d1", "d2", "d3", "d4"]


# ---- the command ----

@pytest.mark.parametrize("args,tokens", [([], False), (["--host", "0.0.0.0"], True), (["--host", "localhost"], False),
                                         (["--require-token"], True)])
def test_serve_requires_tokens_unless_bound_to_loopback(bench, cli_run, monkeypatch, args, tokens):
    calls = []
    monkeypatch.setattr("trecbench.web.app.serve", lambda ws, **options: calls.append(options))
    result = cli_run("serve", "-w", bench, "--double", *args)
    assert result.exit_code == 0, result.output
    assert calls[0]["require_token"] is tokens and calls[0]["double"] is True
    assert ("nobody can log in" in result.output) is tokens  # no assessors registered yet


def test_serve_reports_a_folder_that_is_not_a_workspace(tmp_path, cli_run):
    result = cli_run("serve", "-w", tmp_path)
    assert result.exit_code == 2 and "not a trecbench workspace" in result.output


def test_logged_urls_do_not_show_tokens():
    import logging

    from trecbench.web.auth import hide_tokens

    record = logging.LogRecord("uvicorn.access", logging.INFO, "", 0, '%s - "%s %s"', ("1.2.3.4", "GET",
                               "/topic?qid=1&token=s3cret&x=2"), None)
    assert hide_tokens(record) and record.getMessage() == '1.2.3.4 - "GET /topic?qid=1&token=***&x=2"'
