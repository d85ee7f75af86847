"""Nugget editing in the assessor app through Starlette's TestClient: each action, history and undo, refusals."""
from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from starlette.testclient import TestClient

from trecbench.nuggets.store import NuggetStore
from trecbench.store.workspace import Judge, Judgment, Workspace
from trecbench.web.app import create_app
from web_support import csrf_of, make_nugget_bench

# topic 1: d1, d3, d4 judged relevant, d2 not; topic 2: w1 relevant
GRADES = [("1", "d1", 2), ("1", "d3", 1), ("1", "d4", 3), ("1", "d2", 0), ("2", "w1", 1)]


@pytest.fixture
def bench(tmp_path):
    return make_nugget_bench(tmp_path, GRADES, [("Solar panels turn sunlight into electricity", "vital"),
                                                ("Panels are made of silicon", "okay"),
                                                ("Storage smooths solar output", "okay")])


def client_for(bench, *, require_token: bool = False) -> TestClient:
    return TestClient(create_app(bench, require_token=require_token), base_url="http://127.0.0.1")


@pytest.fixture
def client(bench):
    return client_for(bench)


def stored(bench, qid: str = "1"):
    ws = Workspace(bench)
    try:
        return NuggetStore(ws).topic(qid)
    finally:
        ws.close()


def history(bench, nid: str):
    ws = Workspace(bench)
    try:
        return NuggetStore(ws).history(nid)
    finally:
        ws.close()


def ids(bench, qid: str = "1") -> list[str]:
    return [n.id for n in stored(bench, qid)]


def post(client: TestClient, path: str, data: dict | None = None, *, page: str = "/nuggets/1"):
    """POST a form the way the page does (with the session's CSRF token); returns the 303 response."""
    csrf = csrf_of(client.get(page).text)
    response = client.post(path, data={"csrf": csrf, **(data or {})}, follow_redirects=False)
    assert response.status_code == 303, response.text
    return response


def ticked(*nuggets) -> dict:
    """The merge form's fields for these nuggets: each ticked, with the version the page showed."""
    return {"nid": [n.id for n in nuggets], **{f"version-{n.id}": str(n.version) for n in nuggets}}


def flash(client: TestClient, qid: str = "1") -> str:
    match = re.search(r'id="flash"[^>]*>(.*?)</p>', client.get(f"/nuggets/{qid}").text, re.S)
    assert match, "the page shows no message"
    return html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).strip()


def shown_ids(page: str) -> list[str]:
    return re.findall(r'<li class="nugget [^"]*" id="n-([^"]+)"', page)


# ---- the pages ----

def test_the_nugget_topic_list_counts_nuggets_vital_and_approved(bench, client):
    first = stored(bench)[0]
    post(client, f"/nuggets/1/{first.id}/approve", {"version": first.version})
    page = client.get("/nuggets")
    assert page.status_code == 200
    rows = re.findall(r'<tr data-qid="(\w+)">.*?class="total">(\d+)<.*?class="vital">(\d+)<.*?class="approved">(\d+)',
                      page.text, re.S)
    assert rows == [("1", "3", "1", "1"), ("2", "0", "0", "0")]
    assert 'href="/nuggets"' in client.get("/").text  # reachable from the judging pages' bar


def test_the_topic_page_shows_the_narrative_and_the_nuggets_in_order(bench, client):
    page = client.get("/nuggets/1").text
    assert "Documents about &lt;em&gt;solar&lt;/em&gt; power are relevant." in page
    assert shown_ids(page) == ids(bench)
    assert page.index("Solar panels turn sunlight") < page.index("Panels are made of silicon")
    assert "from llm" in page and "draft" in page and "no supporting documents yet" in page


def test_only_documents_judged_relevant_are_offered_for_linking(bench, client):
    first = ids(bench)[0]
    page = client.get("/nuggets/1").text
    assert 'name="docid"' not in page  # the documents are listed once, not once per nugget
    assert page.count('class="link-docs"') == 3 and f'href="/nuggets/1?link={first}#n-{first}"' in page
    page = client.get("/nuggets/1", params={"link": first}).text  # that nugget's form, open
    offered = re.findall(r'name="docid" value="([^"]+)"', page)
    assert offered == ["d4", "d1", "d3"]  # judged relevant (d2 was judged 0), grade descending, once
    assert re.search(rf'<li class="nugget [^"]*" id="n-{first}".*?<details class="link" open>', page, re.S)
    assert page.count('class="link-docs"') == 2
    assert 'id="doc-d1"' in page and 'id="doc-d2"' not in page


def test_document_previews_and_nugget_text_are_escaped(bench, client):
    ws = Workspace(bench)
    ws.record(Judgment("1", "d2", 2, Judge("human", "judy")))  # the document with a <script> is relevant now
    NuggetStore(ws).add("1", "<img src=x onerror=alert(1)> & more", author="alice")
    page = client.get("/nuggets/1").text
    assert "<script>window.pwned" not in page and "<img src=x" not in page
    assert "&lt;script&gt;window.pwned = 1" in page
    assert "&lt;img src=x onerror=alert(1)&gt; &amp; more" in page


def test_nugget_pages_allow_no_inline_script(bench, client):
    nid = ids(bench)[0]
    for path in ["/nuggets", "/nuggets/1", f"/nuggets/1/{nid}/history"]:
        response = client.get(path)
        assert response.status_code == 200
        assert "script-src 'self';" in response.headers["content-security-policy"]
        scripts = re.findall(r"<script[^>]*>", response.text)
        assert all('src="/static/' in s for s in scripts), scripts
        assert " style=" not in response.text  # inline style attributes are blocked by the CSP too


def test_an_unknown_topic_or_nugget_is_not_found(bench, client):
    assert client.get("/nuggets/99").status_code == 404
    assert client.get("/nuggets/1/nope/history").status_code == 404
    nid = stored(bench, "1")[0].id
    assert client.get(f"/nuggets/2/{nid}/history").status_code == 404  # the nugget is topic 1's


# ---- each action ----

def test_editing_saves_text_and_importance_as_a_new_version_by_the_assessor(bench, client):
    n = stored(bench)[1]
    response = post(client, f"/nuggets/1/{n.id}/edit", {"version": n.version, "text": "  Most panels are silicon  ",
                                                          "importance": "vital"})
    assert response.headers["location"] == f"/nuggets/1#n-{n.id}"
    edited = stored(bench)[1]
    assert (edited.text, edited.importance, edited.updated_by) == ("Most panels are silicon", "vital", "local")
    assert edited.version > n.version
    assert history(bench, n.id)[-1].author == "local"
    assert flash(client) == f"Saved nugget {n.id}."


def test_an_edit_that_changes_nothing_adds_no_version(bench, client):
    n = stored(bench)[0]
    post(client, f"/nuggets/1/{n.id}/edit", {"version": n.version, "text": n.text, "importance": n.importance})
    assert len(history(bench, n.id)) == 1
    assert "unchanged" in flash(client)


def test_empty_text_is_refused_with_a_message(bench, client):
    n = stored(bench)[0]
    post(client, f"/nuggets/1/{n.id}/edit", {"version": n.version, "text": "   ", "importance": "okay"})
    assert stored(bench)[0].text == n.text
    assert flash(client) == "A nugget needs some text."
    post(client, "/nuggets/1/add", {"text": "", "importance": "okay"})
    assert len(stored(bench)) == 3
    post(client, f"/nuggets/1/{n.id}/edit", {"version": n.version, "text": "x", "importance": "essential"})
    assert "Importance is one of vital, okay" in flash(client)


def test_adding_a_nugget_puts_it_last_as_a_human_draft(bench, client):
    response = post(client, "/nuggets/1/add", {"text": "Panels last 25 years", "importance": "vital"})
    added = stored(bench)[-1]
    assert response.headers["location"] == f"/nuggets/1#n-{added.id}"
    assert (added.text, added.importance, added.origin, added.status, added.updated_by) == (
        "Panels last 25 years", "vital", "human", "draft", "local")
    assert post(client, "/nuggets/2/add", {"text": "Wind farms at sea"}).headers["location"].startswith("/nuggets/2#")
    assert [n.text for n in stored(bench, "2")] == ["Wind farms at sea"]


def test_adding_to_an_unknown_topic_is_refused(client):
    csrf = csrf_of(client.get("/nuggets").text)
    assert client.post("/nuggets/99/add", data={"csrf": csrf, "text": "x"}).status_code == 404


def test_deleting_a_nugget_keeps_its_history_and_undo_brings_it_back(bench, client):
    n = stored(bench)[1]
    post(client, f"/nuggets/1/{n.id}/delete", {"version": n.version})
    assert n.id not in ids(bench)
    message = flash(client)
    assert message.startswith(f"Deleted nugget {n.id}")
    page = client.get(f"/nuggets/1/{n.id}/history")
    assert page.status_code == 200 and 'id="deleted"' in page.text
    latest = history(bench, n.id)[-1]
    post(client, f"/nuggets/1/{n.id}/undo", {"version": latest.version}, page=f"/nuggets/1/{n.id}/history")
    assert ids(bench)[1] == n.id and stored(bench)[1].text == n.text


def test_merging_ticked_nuggets_makes_one_with_the_given_text(bench, client):
    a, b, c = stored(bench)
    response = post(client, "/nuggets/1/merge", {**ticked(a, c), "text": "Solar power is made and stored"})
    now = stored(bench)
    assert len(now) == 2 and b.id in [n.id for n in now]
    merged = next(n for n in now if n.text == "Solar power is made and stored")
    assert response.headers["location"] == f"/nuggets/1#n-{merged.id}"
    assert merged.updated_by == "local"
    assert "merge" in [v.action for v in history(bench, merged.id)]


def test_merging_needs_two_nuggets_of_the_topic(bench, client):
    a = stored(bench)[0]
    post(client, "/nuggets/1/merge", ticked(a))
    assert flash(client) == "Tick two or more nuggets to merge them."
    other = NuggetStore(Workspace(bench)).add("2", "Wind farms at sea", author="alice")
    post(client, "/nuggets/1/merge", ticked(a, other))
    assert flash(client).startswith("no such nugget")
    assert len(stored(bench)) == 3 and len(stored(bench, "2")) == 1


def test_splitting_makes_one_nugget_per_line(bench, client):
    a, b, c = stored(bench)
    post(client, f"/nuggets/1/{a.id}/split",
         {"version": a.version, "texts": "Panels use sunlight\n\n  They make electricity \n"})
    texts = [n.text for n in stored(bench)]
    assert "Panels use sunlight" in texts and "They make electricity" in texts and a.text not in texts
    assert len(texts) == 4
    post(client, f"/nuggets/1/{b.id}/split", {"version": b.version, "texts": "only one line"})
    assert "two or more lines" in flash(client)


def test_moving_a_nugget_up_and_down_reorders_the_topic(bench, client):
    a, b, c = ids(bench)
    post(client, f"/nuggets/1/{c}/move", {"version": stored(bench)[2].version, "direction": "up"})
    assert ids(bench) == [a, c, b]
    assert shown_ids(client.get("/nuggets/1").text) == [a, c, b]
    first = stored(bench)[0]
    post(client, f"/nuggets/1/{a}/move", {"version": first.version, "direction": "down"})
    assert ids(bench) == [c, a, b]
    top = stored(bench)[0]
    post(client, f"/nuggets/1/{top.id}/move", {"version": top.version, "direction": "up"})
    assert ids(bench) == [c, a, b] and "already first" in flash(client)


def test_linking_several_documents_adds_one_joint_group(bench, client):
    n = stored(bench)[0]
    post(client, f"/nuggets/1/{n.id}/link", {"version": n.version, "docid": ["d1", "d4"]})
    n = stored(bench)[0]
    assert [[link.docid for link in group] for group in n.support] == [["d1", "d4"]]
    post(client, f"/nuggets/1/{n.id}/link", {"version": n.version, "docid": "d3"})
    assert [[link.docid for link in group] for group in stored(bench)[0].support] == [["d1", "d4"], ["d3"]]
    page = client.get("/nuggets/1").text
    support = re.search(rf'id="n-{n.id}".*?<div class="support">(.*?)</div>', page, re.S).group(1)
    assert re.sub(r"\s+", " ", re.sub(r"<form.*?</form>|<[^>]+>", "", support, flags=re.S)).strip() == (
        "Supported by any of: [d1 + d4] or [d3]")


def test_linking_is_limited_to_documents_judged_relevant(bench, client):
    n = stored(bench)[0]
    post(client, f"/nuggets/1/{n.id}/link", {"version": n.version, "docid": ["d1", "d2"]})
    assert stored(bench)[0].support == ()
    message = flash(client)
    assert "judged relevant" in message and "not d2" in message
    post(client, f"/nuggets/1/{n.id}/link", {"version": n.version})
    assert "Tick one document" in flash(client)


def test_unlinking_removes_one_alternative(bench, client):
    ws = Workspace(bench)
    n = stored(bench)[0]
    NuggetStore(ws).link(n.id, ["d1"], author="alice")
    n = NuggetStore(ws).link(n.id, ["d3", "d4"], author="alice")
    post(client, f"/nuggets/1/{n.id}/unlink", {"version": n.version, "alternative": "0"})
    assert [[link.docid for link in group] for group in stored(bench)[0].support] == [["d3", "d4"]]
    assert flash(client) == f"Unlinked [d1] from nugget {n.id}."
    post(client, f"/nuggets/1/{n.id}/unlink", {"version": stored(bench)[0].version, "alternative": "5"})
    assert "no support alternative" in flash(client)


def test_approving_marks_the_nugget_approved(bench, client):
    n = stored(bench)[2]
    post(client, f"/nuggets/1/{n.id}/approve", {"version": n.version})
    approved = stored(bench)[2]
    assert (approved.status, approved.updated_by) == ("approved", "local")
    page = client.get("/nuggets/1").text
    block = re.search(rf'id="n-{n.id}".*?</li>', page, re.S).group(0)
    assert 'class="approve"' not in block  # nothing left to approve


def test_a_topics_drafts_are_approved_at_once_each_a_version_in_its_history(bench, client):
    assert 'id="approve-all"' in client.get("/nuggets/1").text and all(n.status == "draft" for n in stored(bench))
    post(client, "/nuggets/1/approve-all")
    assert [n.status for n in stored(bench)] == ["approved"] * 3
    assert all(history(bench, n.id)[-1].action == "approve" for n in stored(bench))
    assert "Approved 3 nugget(s)" in flash(client)
    assert 'id="approve-all"' not in client.get("/nuggets/1").text  # nothing left to approve
    no_csrf = client.post("/nuggets/1/approve-all", data={}, follow_redirects=False)
    assert no_csrf.status_code == 403


def test_history_shows_each_version_with_action_author_and_changes(bench, client):
    n = stored(bench)[0]
    post(client, f"/nuggets/1/{n.id}/edit", {"version": n.version, "text": "Solar panels make electricity",
                                             "importance": "vital"})
    post(client, f"/nuggets/1/{n.id}/link", {"version": stored(bench)[0].version, "docid": ["d1", "d3"]})
    post(client, f"/nuggets/1/{n.id}/approve", {"version": stored(bench)[0].version})
    page = client.get(f"/nuggets/1/{n.id}/history").text
    rows = re.findall(r'<span class="action">(.*?)</span>.*?<td class="author">(.*?)</td>', page, re.S)
    assert [r[1] for r in rows] == ["local", "local", "local", "model"]  # newest first
    assert [r[0] for r in rows][0] == "approve" and rows[-1][1] == "model"
    assert "<del>turn sunlight into</del>" in page and "<ins>make</ins>" in page
    assert "[d1 + d3]" in page
    assert 'id="undo"' in page


def test_history_shows_text_as_escaped_words_taken_out_and_put_in(bench, client):
    n = stored(bench)[0]
    post(client, f"/nuggets/1/{n.id}/edit", {"version": n.version, "text": "Solar <b>cells</b> turn sunlight",
                                             "importance": "vital"})
    page = client.get(f"/nuggets/1/{n.id}/history").text
    assert "<b>cells" not in page
    assert "<ins>&lt;b&gt;cells&lt;/b&gt;</ins>" in page and "<del>panels</del>" in page


def test_a_merged_nuggets_history_goes_on_to_show_the_edits_of_what_it_was_merged_from(bench, client):
    a, b, c = stored(bench)
    post(client, f"/nuggets/1/{a.id}/edit", {"version": a.version, "text": "Panels make power", "importance": "vital"})
    post(client, "/nuggets/1/merge", ticked(*stored(bench)[:2]))
    merged = stored(bench)[0]
    page = client.get(f"/nuggets/1/{merged.id}/history").text
    rows = re.findall(r'<tr data-nid="([^"]+)" data-version="(\d+)"[^>]*>.*?<span class="action">(.*?)</span>', page,
                      re.S)
    assert rows[0] == (merged.id, "1", "merge")
    assert (a.id, "2", "edit") in rows and (a.id, "1", "add") in rows and (b.id, "1", "add") in rows
    assert f'href="/nuggets/1/{a.id}/history"' in page  # "merge from" links to each source


def test_undoing_a_merge_brings_back_the_merged_nuggets(bench, client):
    a, b, c = stored(bench)
    post(client, "/nuggets/1/merge", ticked(a, b))
    merged = stored(bench)[0]
    post(client, f"/nuggets/1/{merged.id}/undo", {"version": merged.version})
    assert ids(bench) == [a.id, b.id, c.id]
    assert "it is deleted now" in flash(client)


def test_undo_takes_back_the_last_change_as_a_new_version(bench, client):
    n = stored(bench)[0]
    post(client, f"/nuggets/1/{n.id}/edit", {"version": n.version, "text": "Changed my mind", "importance": "okay"})
    edited = stored(bench)[0]
    response = post(client, f"/nuggets/1/{n.id}/undo", {"version": edited.version},
                    page=f"/nuggets/1/{n.id}/history")
    assert response.headers["location"] == f"/nuggets/1#n-{n.id}"
    restored = stored(bench)[0]
    assert (restored.text, restored.importance) == (n.text, n.importance)
    assert len(history(bench, n.id)) == 3  # created, edited, undone: nothing is lost


def test_a_form_from_an_older_version_is_refused(bench, client):
    n = stored(bench)[0]
    NuggetStore(Workspace(bench)).edit(n.id, text="bob's words", author="bob")  # while the page was open
    post(client, f"/nuggets/1/{n.id}/edit", {"version": n.version, "text": "mine", "importance": "okay"})
    assert stored(bench)[0].text == "bob's words"
    message = flash(client)
    assert f"Nugget {n.id} was changed by bob" in message and "nothing was done" in message
    post(client, f"/nuggets/1/{n.id}/undo", {"version": n.version})
    assert stored(bench)[0].text == "bob's words"  # undo would have taken back bob's change, unseen


def test_an_unknown_nugget_is_a_message_not_a_traceback(client):
    response = post(client, "/nuggets/1/nope/approve", {"version": "1"})
    assert response.headers["location"] == "/nuggets/1#n-nope"
    assert flash(client) == "no such nugget: nope"
    csrf = csrf_of(client.get("/nuggets/1").text)
    assert client.post("/nuggets/1/nope/frobnicate", data={"csrf": csrf}).status_code == 404


# ---- who may post ----

def test_every_nugget_post_needs_the_sessions_csrf_token(bench, client):
    n = stored(bench)[0]
    client.get("/nuggets/1")
    forms = [(f"/nuggets/1/{n.id}/edit", {"text": "forged", "importance": "vital"}),
             (f"/nuggets/1/{n.id}/approve", {}), (f"/nuggets/1/{n.id}/delete", {}),
             (f"/nuggets/1/{n.id}/split", {"texts": "a\nb"}), (f"/nuggets/1/{n.id}/move", {"direction": "down"}),
             (f"/nuggets/1/{n.id}/link", {"docid": "d1"}), (f"/nuggets/1/{n.id}/unlink", {"alternative": "0"}),
             (f"/nuggets/1/{n.id}/undo", {}), ("/nuggets/1/add", {"text": "forged"}),
             ("/nuggets/1/merge", {"nid": ids(bench)[:2]})]
    other = csrf_of(client_for(bench).get("/nuggets/1").text)
    for path, data in forms:
        assert client.post(path, data=data).status_code == 403
        assert client.post(path, data={**data, "csrf": other}).status_code == 403
    assert stored(bench) == [n, *stored(bench)[1:]] and len(stored(bench)) == 3
    assert len(history(bench, n.id)) == 1


def test_beyond_loopback_nugget_pages_and_posts_need_a_token(bench):
    n = stored(bench)[0]
    public = client_for(bench, require_token=True)
    for path in ["/nuggets", "/nuggets/1", f"/nuggets/1/{n.id}/history"]:
        response = public.get(path, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"].startswith("/login?next=")
    assert public.post(f"/nuggets/1/{n.id}/approve", data={"version": n.version}).status_code == 401
    assert public.post("/nuggets/1/add", data={"text": "x"}).status_code == 401
    assert stored(bench)[0].status == "draft" and len(stored(bench)) == 3
    ws = Workspace(bench)
    token = ws.add_assessor("alice")
    ws.close()
    assert public.get("/nuggets/1", params={"token": token}).status_code == 200
    post(public, f"/nuggets/1/{n.id}/approve", {"version": n.version})
    assert stored(bench)[0].updated_by == "alice"
    assert history(bench, n.id)[-1].author == "alice"


# ---- saves from one version: compare-and-set ----

def test_a_form_without_its_version_is_refused(bench, client):
    n = stored(bench)[0]
    for action, data in [("edit", {"text": "no version", "importance": "okay"}), ("approve", {}), ("delete", {}),
                         ("undo", {})]:
        post(client, f"/nuggets/1/{n.id}/{action}", data)
        message = flash(client)
        assert "does not say which version" in message and "nothing was done" in message, action
    a, b = stored(bench)[:2]
    post(client, "/nuggets/1/merge", {"nid": [a.id, b.id]})
    assert "does not say which version" in flash(client)
    assert stored(bench)[0] == n and len(history(bench, n.id)) == 1 and len(stored(bench)) == 3


def test_of_two_saves_from_the_same_version_only_one_is_made(bench, monkeypatch):
    """The second save arrives while the first is between its version check and its write: it must wait
    for the first and then be refused, never check the old version and overwrite."""
    import threading

    n = stored(bench)[0]
    first, second = client_for(bench), client_for(bench)
    forms = {c: {"csrf": csrf_of(c.get("/nuggets/1").text), "version": str(n.version), "importance": "okay"}
             for c in (first, second)}
    real_edit = NuggetStore.edit
    racing: list[threading.Thread] = []

    def edit_while_another_saves(self, *args, **kwargs):
        if not racing:  # the first save: let the second one run now, as far as it can get
            other = threading.Thread(target=second.post, args=(f"/nuggets/1/{n.id}/edit",),
                                     kwargs={"data": {**forms[second], "text": "second"}, "follow_redirects": False})
            racing.append(other)
            other.start()
            other.join(1.0)  # done at once if it is not held up; held up until this save commits otherwise
        return real_edit(self, *args, **kwargs)

    monkeypatch.setattr(NuggetStore, "edit", edit_while_another_saves)
    first.post(f"/nuggets/1/{n.id}/edit", data={**forms[first], "text": "first"})
    racing[0].join(30)
    versions = history(bench, n.id)
    assert [v.action for v in versions] == ["add", "edit"]  # one save made, not two
    assert stored(bench)[0].text == "first"
    assert "was changed by local" in flash(second)


# ---- ids are path segments ----

def test_ids_containing_a_slash_reach_their_pages(bench, client):
    made = NuggetStore(Workspace(bench)).add("t/1", "Wind at sea", author="alice")
    assert "/" in made.id
    quoted = made.id.replace("/", "%2F")
    page = client.get("/nuggets/t%2F1")
    assert page.status_code == 200 and "Wind at sea" in page.text
    assert f'action="/nuggets/t%2F1/{quoted}/edit"' in page.text and 'action="/nuggets/t%2F1/add"' in page.text
    assert client.get(f"/nuggets/t%2F1/{quoted}/history").status_code == 200
    post(client, f"/nuggets/t%2F1/{quoted}/edit", {"version": made.version, "text": "Wind farms at sea",
                                                    "importance": "vital"}, page="/nuggets/t%2F1")
    assert flash(client, "t%2F1") == f"Saved nugget {made.id}."
    assert stored(bench, "t/1")[0].text == "Wind farms at sea"
    assert client.get("/nuggets/t%2F1/nope/x/history").status_code == 404


def test_unlinking_an_alternative_that_does_not_exist_names_the_number_sent(bench, client):
    n = stored(bench)[0]
    post(client, f"/nuggets/1/{n.id}/link", {"version": n.version, "docid": "d1"})
    n = stored(bench)[0]
    for sent in ("-1", "1"):
        post(client, f"/nuggets/1/{n.id}/unlink", {"version": n.version, "alternative": sent})
        message = flash(client)
        assert f"has no support alternative {sent} (its 1 are numbered 0 to 0)" in message, message
        assert "#0" not in message
    assert len(stored(bench)[0].support) == 1


def test_the_relevant_documents_follow_new_judgments_and_corpus_edits(bench, client):
    import json
    import os

    page = client.get("/nuggets/1").text
    assert 'id="doc-d1"' in page and 'id="doc-d2"' not in page
    ws = Workspace(bench)
    ws.record(Judgment("1", "d2", 2, Judge("human", "alice")))  # recorded elsewhere while the page is served
    assert 'id="doc-d2"' in client.get("/nuggets/1").text
    corpus = Path(ws.corpus_source)
    lines = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    for record in lines:
        if record["id"] == "d1":
            record["contents"] = "Photovoltaic cells, rewritten."
    corpus.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    stat = corpus.stat()
    os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    page = client.get("/nuggets/1").text
    assert "Photovoltaic cells, rewritten." in page and "Indented second paragraph" not in page


def test_both_topic_lists_are_one_table_linking_each_topic_to_its_page(bench, client):
    from pathlib import Path

    import trecbench.web

    templates = Path(trecbench.web.__file__).parent / "templates"
    for name in ("topics.html", "nuggets_topics.html"):
        assert 'import topics_table' in (templates / name).read_text(), name
    judging, nuggets = client.get("/").text, client.get("/nuggets").text
    for page, link in ((judging, "/topic?qid=2"), (nuggets, "/nuggets/2")):
        assert "<th>topic</th><th>query</th>" in page
        assert re.search(rf'<tr data-qid="2">\s*<td><a href="{re.escape(link)}">2</a></td>\s*<td>wind power</td>', page)
