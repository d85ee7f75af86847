"""Support assessment in the assessor web app through Starlette's TestClient: every /support route, leases,
blindness, refusals, the organiser's overview, and hostile input (always 4xx, never a 500)."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.testclient import TestClient

from support_bench import make_support_bench, people_rows, registered_hash
from trecbench.store.workspace import Workspace
from trecbench.web.app import create_app
from web_support import csrf_of

BASE = "http://127.0.0.1"
FIRST = ("rag_good", "T01", 0, "HB-ACC-04")  # the first pair in judging order (topic, run, sentence, citation)
SECOND = ("rag_good", "T01", 1, "HB-ACC-04")


@pytest.fixture
def bench(tmp_path):
    return make_support_bench(tmp_path)


def client(bench, *, token: bool = False, **options) -> TestClient:
    return TestClient(create_app(bench, require_token=token, **options), base_url=BASE)


def logged_in(bench, name: str, **options) -> TestClient:
    """A client logged in with `name`'s token (the assessor is added to the workspace)."""
    token = Workspace(bench).add_assessor(name)
    c = client(bench, token=True, **options)
    assert c.get("/support", params={"token": token}).status_code == 200
    return c


def fields(key) -> dict[str, str]:
    return {"run": key[0], "qid": key[1], "sentence": str(key[2]), "docid": key[3]}


def shown(response) -> tuple[str, str, int, str]:
    """The pair a response shows (after redirects)."""
    assert response.url.path == "/support/judge", f"expected a support judging page, got {response.url}"
    q = parse_qs(urlsplit(str(response.url)).query)
    return (q["run"][0], q["qid"][0], int(q["sentence"][0]), q["docid"][0])


def take_next(c: TestClient, **form: str):
    return c.post("/support/next", data={"csrf": csrf_of(c.get("/support").text), **form})


def grade(c: TestClient, key, value: str, *, text_hash: str | None = None, follow: bool = True):
    page = c.get("/support/judge", params=fields(key))
    found = re.search(r'name="text_hash" value="([^"]+)"', page.text)
    csrf = csrf_of(page.text if page.status_code == 200 else c.get("/support").text)
    data = {"csrf": csrf, **fields(key), "grade": value,
            "text_hash": text_hash or (found.group(1) if found else "none")}
    return c.post("/support/judge", data=data, follow_redirects=follow)


def test_the_progress_page_lists_each_topic_with_its_pairs_left_and_the_topics_page_links_to_it(bench):
    c = client(bench)
    assert 'href="/support"' in c.get("/").text
    page = c.get("/support")
    assert page.status_code == 200
    # 88 sentences, 84 citations (rag_poor's 15 sentences cite nothing: no pair)
    assert re.search(r'<strong id="left">84</strong> pairs left', page.text)
    row = re.search(r'<tr data-qid="T01">(.*?)</tr>', page.text, re.S).group(1)
    # 3 answers (rag_poor's among them, citing nothing), rag_good's 5 pairs and rag_partial's 2
    assert "<td>3</td>" in row and '<span class="count">0 / 7</span>' in row and '<td class="left">7</td>' in row
    assert "rag_good" not in page.text  # the assessor's page does not name the runs


def test_an_empty_workspace_says_how_to_register_answers(tmp_path):
    bench = make_support_bench(tmp_path, answers=())
    page = client(bench).get("/support")
    assert page.status_code == 200 and "trecbench support add -w" in page.text and 'id="next"' not in page.text


def test_judge_next_leases_the_first_pair_and_shows_the_sentence_its_neighbour_and_the_marked_passage(bench):
    c = client(bench)
    page = take_next(c)
    assert shown(page) == FIRST
    assert Workspace(bench).support_leases(0) == {FIRST: "local"}
    assert "Who can approve an emergency production access request" in page.text  # the topic
    assert re.search(r'<strong class="sentence" id="sentence">Emergency production access during an incident',
                     page.text)
    assert re.search(r'<span class="context" id="after">Break-glass access is valid for 2 hours', page.text)
    assert 'id="before"' not in page.text  # the first sentence has no sentence before it
    passage = re.search(r'<div class="text" id="doc-text">(.*?)</div>', page.text, re.S).group(1)
    assert "<mark>incident</mark> <mark>commander</mark>" in passage and "<mark>is</mark>" not in passage
    buttons = re.findall(r'<button type="submit" name="grade" value="(\w+)" data-key="(\w)"', page.text)
    assert buttons == [("full", "2"), ("partial", "1"), ("none", "0")]
    assert 'value="contradicts"' not in page.text and "/static/support.js" in page.text


def test_the_page_shows_each_grade_s_definition_in_the_words_the_model_is_given(bench):
    import html

    from trecbench.answers.support import DEFINITIONS, GRADES
    from trecbench.llm.support_prompt import support_prompt

    page = client(bench).get("/support/judge", params=fields(FIRST))
    shown_meaning = dict(re.findall(r'<dd data-grade="(\w+)">(.*?)</dd>', page.text, re.S))
    assert {g: html.unescape(t) for g, t in shown_meaning.items()} == {g: DEFINITIONS[g] for g in GRADES}
    prompt = support_prompt(GRADES).instructions
    assert all(f"{g} - {DEFINITIONS[g]}" in prompt for g in GRADES)  # one text of the scale for both


def test_the_middle_sentence_shows_both_neighbours_as_context(bench):
    page = client(bench).get("/support/judge", params=fields(SECOND))
    assert 'id="before">Emergency production access' in page.text
    assert 'id="after">During a SEV1' in page.text


def test_a_grade_is_recorded_at_once_as_the_assessors_with_the_sentences_hash_and_the_next_pair_is_shown(bench):
    c = logged_in(bench, "alice")
    assert shown(take_next(c)) == FIRST
    after = grade(c, FIRST, "full")
    assert shown(after) == SECOND
    stored = people_rows(bench)
    assert stored == [("alice", *FIRST, "full", registered_hash(bench, "rag_good", "T01", 0))]
    ws = Workspace(bench)
    assert ws.support_rows(kind="human")[0].judge_kind == "human"
    assert ws.support_leases(0) == {SECOND: "alice"}  # the graded pair's lease ended, the next one's began


def test_two_assessors_are_never_offered_the_same_pair_at_once(bench):
    alice, bob = logged_in(bench, "alice"), logged_in(bench, "bob")
    assert shown(take_next(alice)) == FIRST
    assert shown(take_next(bob)) == SECOND
    assert shown(grade(alice, FIRST, "none")) == ("rag_good", "T01", 2, "HB-ACC-06")  # bob holds the second
    assert Workspace(bench).support_leases(0) == {SECOND: "bob", ("rag_good", "T01", 2, "HB-ACC-06"): "alice"}


def test_a_lease_that_expired_lets_another_assessor_take_the_pair(bench):
    alice, bob = logged_in(bench, "alice", lease_seconds=-1), logged_in(bench, "bob", lease_seconds=-1)
    assert shown(take_next(alice)) == FIRST
    assert shown(take_next(bob)) == FIRST  # alice's lease expired the moment it was made


def test_an_assessor_holds_one_pair_the_one_in_front_of_them(bench):
    c = client(bench)
    take_next(c)
    c.post("/support/open", data={"csrf": csrf_of(c.get("/support").text), **fields(SECOND)})
    assert Workspace(bench).support_leases(0) == {SECOND: "local"}


def test_the_page_is_blind_to_model_grades_and_to_other_peoples_grades(tmp_path):
    from trecbench.store.support import SupportJudgment
    from trecbench.store.workspace import Judge

    bench = make_support_bench(tmp_path)
    ws = Workspace(bench)
    h = registered_hash(bench, "rag_good", "T01", 0)
    ws.record_support([SupportJudgment(*FIRST, h, "partial", Judge("model", "m:support-secret", model="m"),
                                       rationale="RATIONALE-SHOULD-NOT-SHOW"),
                       SupportJudgment(*FIRST, h, "partial", Judge("human", "carol"))])
    c = logged_in(bench, "alice", double=True)  # with double judging the pair is still alice's to judge
    page = c.get("/support/judge", params=fields(FIRST))
    assert 'id="support-form"' in page.text
    for secret in ("m:support-secret", "RATIONALE-SHOULD-NOT-SHOW", "carol", 'aria-pressed="true"'):
        assert secret not in page.text
    assert '<strong id="my-grade">not judged</strong>' in page.text


def test_with_double_judging_a_pair_is_offered_to_a_second_person_and_not_again_to_the_first(bench):
    alice, bob = logged_in(bench, "alice", double=True), logged_in(bench, "bob", double=True)
    take_next(alice)
    grade(alice, FIRST, "full")
    assert shown(take_next(bob)) == FIRST
    assert shown(take_next(alice)) == SECOND


def test_previous_goes_back_to_a_graded_pair_which_shows_its_grade_and_a_new_grade_is_a_new_row(bench):
    c = client(bench)
    take_next(c)
    page = grade(c, FIRST, "partial")
    back = re.search(r'action="/support/open">(.*?)id="prev"', page.text, re.S).group(1)
    assert 'name="sentence" value="0"' in back
    opened = c.post("/support/open", data={"csrf": csrf_of(page.text), **fields(FIRST)})
    assert shown(opened) == FIRST
    assert '<strong id="my-grade">partial</strong>' in opened.text
    assert re.search(r'value="partial" data-key="1" class="grade current"\s+aria-pressed="true"', opened.text)
    grade(c, FIRST, "full")
    assert [r[5] for r in people_rows(bench)] == ["partial", "full"]
    overview = c.get("/support/overview").text
    assert re.search(r'<tr data-assessor="local"><td>local</td><td class="pairs">1</td>'
                     r'<td data-grade="full">1</td><td data-grade="partial">0</td>', overview)


def test_next_without_a_grade_passes_the_pair_and_keeps_nothing(bench):
    c = client(bench)
    take_next(c)
    page = c.post("/support/next", data={"csrf": csrf_of(c.get("/support").text), **fields(FIRST)})
    assert shown(page) == SECOND
    assert people_rows(bench) == []


def test_a_topics_judge_button_starts_at_that_topics_first_pair(bench):
    assert shown(take_next(client(bench), qid="T03"))[1] == "T03"


def test_a_grade_for_a_sentence_whose_text_changed_is_refused_and_nothing_is_recorded(bench):
    from trecbench.answers.support import sentence_hash
    from trecbench.store.support import SupportSentence

    c = client(bench)
    take_next(c)
    page = c.get("/support/judge", params=fields(FIRST))
    old = re.search(r'name="text_hash" value="([^"]+)"', page.text).group(1)
    Workspace(bench).register_sentences([SupportSentence("rag_good", "T01", 0, "A new text.",
                                                         sentence_hash("A new text."), ("HB-ACC-04",))])
    refused = c.post("/support/judge", data={"csrf": csrf_of(page.text), **fields(FIRST), "grade": "full",
                                             "text_hash": old})
    assert refused.status_code == 409
    assert "changed since the page was shown" in refused.text and 'id="refused-grade">full<' in refused.text
    assert people_rows(bench) == []
    again = c.post("/support/open", data={"csrf": csrf_of(refused.text), **fields(FIRST)})
    assert 'id="sentence">A new text.</strong>' in again.text


def test_a_grade_after_the_lease_was_lost_to_another_assessor_is_refused(bench):
    alice, bob = logged_in(bench, "alice", lease_seconds=-1), logged_in(bench, "bob")
    take_next(alice)
    page = alice.get("/support/judge", params=fields(FIRST))
    assert shown(take_next(bob)) == FIRST  # alice's lease had expired
    data = {"csrf": csrf_of(page.text), **fields(FIRST), "grade": "full",
            "text_hash": registered_hash(bench, "rag_good", "T01", 0)}
    refused = alice.post("/support/judge", data=data)
    assert refused.status_code == 409 and "another assessor has it now" in refused.text
    grade(bob, FIRST, "none")
    refused = alice.post("/support/judge", data=data)
    assert refused.status_code == 409 and "graded by another assessor meanwhile" in refused.text
    assert [(r[0], r[5]) for r in people_rows(bench)] == [("bob", "none")]


def test_a_grade_after_the_lease_expired_is_recorded_when_nobody_took_the_pair(bench):
    c = client(bench, lease_seconds=-1)
    take_next(c)
    assert shown(grade(c, FIRST, "partial")) == SECOND
    assert [r[5] for r in people_rows(bench)] == ["partial"]


def test_a_pair_another_assessor_holds_has_no_grade_buttons(bench):
    alice, bob = logged_in(bench, "alice"), logged_in(bench, "bob")
    take_next(alice)
    page = bob.get("/support/judge", params=fields(FIRST))
    assert 'id="held"' in page.text and 'id="support-form"' not in page.text and "alice" not in page.text


def test_contradicts_is_a_grade_only_when_the_workspace_asks_for_it(tmp_path, bench):
    c = client(bench)
    take_next(c)
    refused = grade(c, FIRST, "contradicts", follow=False)
    assert refused.status_code == 400 and people_rows(bench) == []
    with_it = make_support_bench(tmp_path / "c", contradicts=True)
    c = client(with_it)
    page = take_next(c)
    assert re.search(r'value="contradicts" data-key="c"', page.text)
    assert shown(grade(c, FIRST, "contradicts")) == SECOND
    assert [r[5] for r in people_rows(with_it)] == ["contradicts"]
    assert '<th>contradicts</th>' in c.get("/support/overview").text


def test_a_passage_the_corpus_lacks_is_never_offered_and_the_overview_lists_it(tmp_path):
    bench = make_support_bench(tmp_path, answers=(), odd=True)
    c = client(bench)
    assert shown(take_next(c)) == ("rag_odd", "T01", 0, "HB-ACC-04")
    missing = c.get("/support/judge", params=fields(("rag_odd", "T01", 0, "HB-NOT-THERE")))
    assert missing.status_code == 200 and 'id="missing"' in missing.text and 'id="support-form"' not in missing.text
    refused = grade(c, ("rag_odd", "T01", 0, "HB-NOT-THERE"), "full", text_hash=registered_hash(bench, "rag_odd", "T01", 0))
    assert refused.status_code == 409 and "the corpus has no document" in refused.text
    grade(c, ("rag_odd", "T01", 0, "HB-ACC-04"), "full")
    done = take_next(c)
    assert done.url.path == "/support" and 'id="finished"' in done.text
    assert "every pair is judged except 1 whose cited passage is not in the corpus" in done.text
    overview = c.get("/support/overview").text
    assert re.search(r'<ul id="support-missing">\s*<li><a [^>]*>topic T01, run rag_odd, sentence 1</a>: HB-NOT-THERE', overview)
    assert "run rag_odd, sentence 2: Ask around if unsure." in overview
    assert re.search(r'<td class="missing">1</td><td class="uncited">1</td>', overview)


def test_when_every_pair_is_judged_next_says_so(tmp_path):
    bench = make_support_bench(tmp_path, answers=("partial.jsonl",))
    c = client(bench)
    key = shown(take_next(c))
    while True:
        page = grade(c, key, "none")
        if page.url.path != "/support/judge":
            break
        key = shown(page)
    assert page.url.path == "/support" and "every pair is judged" in page.text
    assert len(people_rows(bench)) == 26  # 24 sentences, two of them citing two passages
    assert 'id="next"' not in page.text


def test_the_overview_shows_people_leases_and_whats_left_per_topic_and_run(bench):
    from trecbench.store.assessors import model_holder

    alice, bob = logged_in(bench, "alice"), logged_in(bench, "bob")
    take_next(alice)
    grade(alice, FIRST, "full")
    take_next(bob)
    Workspace(bench).take_support_pairs(model_holder("m:support"), [("rag_partial", "T01", 0, "HB-ACC-04")],
                                        expires_at=4e9, at=0)
    page = bob.get("/support/overview")
    assert page.status_code == 200
    assert re.search(r'<tr data-assessor="alice"><td>alice</td><td class="pairs">1</td>', page.text)
    leases = re.search(r'<ul id="support-leases">(.*?)</ul>', page.text, re.S).group(1)
    assert "alice: topic T01, run rag_good, sentence 2" in leases and "bob: topic T01, run rag_good, sentence 3" in leases
    assert "m:support" not in leases and 'id="model-leases"' in page.text
    row = re.search(r'<tr data-qid="T01" data-run="rag_good">(.*?)</tr>', page.text, re.S).group(1)
    assert '<td class="pairs">5</td>' in row and '<td class="judged">1</td>' in row and '<td class="left">4</td>' in row
    assert '<td class="held">2</td>' in row


def test_a_model_run_holding_a_pair_keeps_people_off_it_until_its_lease_ends(bench):
    from trecbench.store.assessors import model_holder

    Workspace(bench).take_support_pairs(model_holder("m:support"), [FIRST], expires_at=4e9, at=0)
    assert shown(take_next(client(bench))) == SECOND


# ---- who may judge, and hostile input: 4xx, never a 500, nothing recorded ----

def test_without_a_login_pages_go_to_the_login_page_and_posts_are_refused(bench):
    c = client(bench, token=True)
    page = c.get("/support/judge", params=fields(FIRST), follow_redirects=False)
    assert page.status_code == 303 and page.headers["location"].startswith("/login?next=%2Fsupport%2Fjudge")
    for path in ("/support", "/support/overview"):
        assert c.get(path, follow_redirects=False).status_code == 303
    for path in ("/support/judge", "/support/next", "/support/open"):
        assert c.post(path, data={**fields(FIRST), "grade": "full", "text_hash": "x"}).status_code == 401
    assert people_rows(bench) == [] and Workspace(bench).support_leases(0) == {}


def test_another_host_name_is_refused(bench):
    c = TestClient(create_app(bench, require_token=False), base_url="http://rebound.example")
    assert c.get("/support").status_code == 421


def test_a_post_without_the_csrf_token_or_from_another_site_is_refused(bench):
    c = client(bench)
    csrf = csrf_of(c.get("/support").text)
    data = {**fields(FIRST), "grade": "full", "text_hash": registered_hash(bench, "rag_good", "T01", 0)}
    assert c.post("/support/judge", data=data).status_code == 403
    assert c.post("/support/next", data={"csrf": "guessed"}).status_code == 403
    assert c.post("/support/judge", data={**data, "csrf": csrf}, headers={"Origin": "http://evil.example"}).status_code == 403
    assert people_rows(bench) == [] and Workspace(bench).support_leases(0) == {}


@pytest.mark.parametrize("sentence", ["x", "-1", "1.5", "9" * 30, "", "\u0663"])
def test_a_sentence_that_is_not_an_index_is_refused(bench, sentence):
    c = client(bench)
    assert c.get("/support/judge", params={**fields(FIRST), "sentence": sentence}).status_code == 400
    csrf = csrf_of(c.get("/support").text)
    data = {"csrf": csrf, **fields(FIRST), "sentence": sentence, "grade": "full", "text_hash": "x"}
    for path in ("/support/judge", "/support/open"):
        assert c.post(path, data=data).status_code == 400


@pytest.mark.parametrize("key", [("rag_good", "T01", 0, "HB-RB-01"), ("rag_good", "T01", 99, "HB-ACC-04"),
                                 ("nope", "T01", 0, "HB-ACC-04"), ("rag_good", "<script>", 0, "x" * 3000)])
def test_a_pair_that_is_not_registered_is_not_found_and_cannot_be_graded(bench, key):
    c = client(bench)
    page = c.get("/support/judge", params=fields(key))
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/plain")
    refused = grade(c, key, "full", text_hash="x")
    assert refused.status_code == 409 and "not registered" in refused.text
    opened = c.post("/support/open", data={"csrf": csrf_of(c.get("/support").text), **fields(key)})
    assert opened.status_code == 404  # nothing was leased; the page it goes to says there is no such pair
    assert people_rows(bench) == [] and Workspace(bench).support_leases(0) == {}


def test_missing_fields_a_field_given_twice_and_a_wrong_grade_are_refused(bench):
    c = client(bench)
    csrf = csrf_of(c.get("/support").text)
    h = registered_hash(bench, "rag_good", "T01", 0)
    full = {"csrf": csrf, **fields(FIRST), "grade": "full", "text_hash": h}
    for name in ("run", "qid", "sentence", "docid", "grade", "text_hash"):
        assert c.post("/support/judge", data={k: v for k, v in full.items() if k != name}).status_code == 400
    for value in ("2", "FULL", "supported", "x" * 5000):
        assert c.post("/support/judge", data={**full, "grade": value}).status_code == 400
    body = "&".join(f"{k}={v}" for k, v in full.items()) + "&grade=none"
    twice = c.post("/support/judge", content=body, headers={"content-type": "application/x-www-form-urlencoded"})
    assert twice.status_code == 400
    assert c.get("/support/judge", params=[*fields(FIRST).items(), ("qid", "T02")]).status_code == 400
    assert c.get("/support/judge", params={"run": "rag_good"}).status_code == 400
    assert people_rows(bench) == []


def test_a_huge_body_is_refused_before_it_is_read(bench):
    c = client(bench)
    csrf = csrf_of(c.get("/support").text)
    huge = {"csrf": csrf, **fields(FIRST), "grade": "full", "text_hash": "x" * 2_000_000}
    for path in ("/support/judge", "/support/next", "/support/open"):
        assert c.post(path, data=huge).status_code == 413
    odd_length = {"content-length": "abc", "content-type": "application/x-www-form-urlencoded"}
    assert c.post("/support/judge", content=b"x", headers=odd_length).status_code in (400, 413)
    assert people_rows(bench) == []


def test_a_full_disk_gets_a_page_saying_the_grade_was_not_saved(bench, monkeypatch):
    import sqlite3

    c = client(bench)
    take_next(c)
    page = c.get("/support/judge", params=fields(FIRST))

    def full(self, judgments):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Workspace, "record_support", full)
    data = {"csrf": csrf_of(page.text), **fields(FIRST), "grade": "full",
            "text_hash": registered_hash(bench, "rag_good", "T01", 0)}
    refused = c.post("/support/judge", data=data)
    assert refused.status_code == 507 and "Your grade full of sentence 1 of an answer to topic T01" in refused.text
    assert "was NOT saved" in refused.text


def test_a_pair_one_graded_has_no_buttons_while_a_second_person_holds_it(bench):
    alice, bob = logged_in(bench, "alice", double=True), logged_in(bench, "bob", double=True)
    take_next(alice)
    grade(alice, FIRST, "full")
    assert shown(take_next(bob)) == FIRST
    page = alice.post("/support/open", data={"csrf": csrf_of(alice.get("/support").text), **fields(FIRST)})
    assert 'id="held"' in page.text and 'id="support-form"' not in page.text
    assert '<strong id="my-grade">full</strong>' in page.text
    assert Workspace(bench).support_leases(0) == {FIRST: "bob"}
