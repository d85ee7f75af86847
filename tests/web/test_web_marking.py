"""Marking evidence without a pool through Starlette's TestClient: the corpus searched by BM25 on a workspace
without any judgment, a passage opened, a span or the whole passage added as an alternative or a joint
source; what the routes refuse (CSRF, no session, stale forms, bad spans, unknown passages and nuggets)."""
from __future__ import annotations

import html
import re

import pytest
from starlette.testclient import TestClient

from trecbench.nuggets.search import INDEX_DIR
from trecbench.nuggets.store import NuggetStore
from trecbench.store.workspace import Workspace
from trecbench.web.app import create_app
from web_support import DOCS, add_assessor, csrf_of, make_nugget_bench


@pytest.fixture
def bench(tmp_path):
    """Topic 1 with two nuggets, and not a single judgment or pool entry a search could lean on."""
    path = make_nugget_bench(tmp_path, [], [("Wind farms stand in the North Sea", "vital"), ("Grid storage", "okay")])
    ws = Workspace(path)
    ws.connection().execute("DELETE FROM pool_candidates")
    ws.connection().commit()
    ws.close()
    return path


@pytest.fixture
def client(bench):
    return TestClient(create_app(bench, require_token=False), base_url="http://127.0.0.1")


def nugget(bench, index: int = 0):
    ws = Workspace(bench)
    try:
        return NuggetStore(ws).topic("1")[index]
    finally:
        ws.close()


def mark(client, bench, fields: dict, index: int = 0):
    """POST the mark form as the page does; returns (the 303 response, the page it goes back to)."""
    n = nugget(bench, index)
    url = f"/nuggets/1/{n.id}/mark"
    csrf = csrf_of(client.get(url, params={"q": "wind", "docid": fields.get("docid", "w1")}).text)
    response = client.post(url, data={"csrf": csrf, "version": str(n.version), "q": "wind", **fields},
                           follow_redirects=False)
    assert response.status_code == 303, response.text
    return response, client.get(response.headers["location"]).text


def flash(page: str) -> str:
    match = re.search(r'id="flash"[^>]*>(.*?)</p>', page, re.S)
    assert match, "the page shows no message"
    return html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).strip()


def test_the_search_finds_passages_in_a_workspace_without_judgments_and_keeps_its_index(bench, client):
    n = nugget(bench)
    page = client.get(f"/nuggets/1/{n.id}/mark", params={"q": "wind power"})
    assert page.status_code == 200
    found = re.findall(r'<li class="hit[^"]*" data-docid="([^"]+)"', page.text)
    assert set(found) == {"w1", "w2", "d2"} and found[0] in ("w1", "w2")
    assert (bench / INDEX_DIR).is_dir()
    # the page without a search asks for one, prefilled with the nugget's text
    empty = client.get(f"/nuggets/1/{n.id}/mark").text
    assert 'id="hits"' not in empty and 'value="Wind farms stand in the North Sea"' in empty
    nothing = client.get(f"/nuggets/1/{n.id}/mark", params={"q": "zzzz"}).text
    assert 'id="no-hits"' in nothing


def test_an_opened_passage_shows_its_text_exactly_with_the_query_words_marked(bench, client):
    n = nugget(bench)
    page = client.get(f"/nuggets/1/{n.id}/mark", params={"q": "wind", "docid": "d2"}).text
    text = re.search(r'<div class="doc-text" id="doc-text" data-docid="d2">(.*?)</div>', page, re.S).group(1)
    assert html.unescape(re.sub(r"</?mark>", "", text)) == DOCS["d2"]  # escaped, no script of the passage runs
    assert "<mark>Wind</mark>" in text and "<script>" not in text
    missing = client.get(f"/nuggets/1/{n.id}/mark", params={"docid": "nope"}).text
    assert 'id="doc-missing"' in missing


def test_a_selected_span_is_added_as_an_alternative_and_another_as_a_joint_source(bench, client):
    w1 = DOCS["w1"]  # "Wind power in the North Sea."
    start = w1.index("North Sea")
    response, page = mark(client, bench, {"docid": "w1", "scope": "span", "start": start, "end": start + 9,
                                          "selected": "North Sea", "how": "alternative"})
    assert response.headers["location"].startswith(f"/nuggets/1/{nugget(bench).id}/mark?q=wind&docid=w1")
    assert flash(page).startswith(f"Added w1[{start}:{start + 9}] (“North Sea”) to nugget {nugget(bench).id} "
                                  "as a new alternative")
    _, page = mark(client, bench, {"docid": "w2", "scope": "whole", "how": "joint", "alternative": "0"})
    assert "as a joint source of alternative 1" in flash(page)
    (group,) = nugget(bench).support
    assert [(x.docid, x.start, x.end) for x in group] == [("w1", start, start + 9), ("w2", None, None)]
    assert group[0].doc_hash is not None and group[0].span_hash is not None
    topic = client.get("/nuggets/1").text
    assert f'[{start}:{start + 9}]</span>' in topic and "mark evidence in the whole corpus" in topic
    history = html.unescape(client.get(f"/nuggets/1/{nugget(bench).id}/history").text)
    assert f"[w1[{start}:{start + 9}]]" in history and f"[w1[{start}:{start + 9}] + w2]" in history


def test_the_selected_text_wins_over_offsets_a_browser_counted_differently_and_blanks_are_trimmed(bench, client):
    w1 = DOCS["w1"]
    start = w1.index("North")
    mark(client, bench, {"docid": "w1", "start": start + 2, "end": start + 11, "selected": "North Sea"})
    mark(client, bench, {"docid": "w1", "start": 4, "end": 12, "selected": ""}, index=1)  # " power i" typed
    assert [(x.start, x.end) for g in nugget(bench).support for x in g] == [(start, start + 9)]
    assert [(x.start, x.end) for g in nugget(bench, 1).support for x in g] == [(5, 12)]


def test_the_whole_passage_selected_is_a_whole_passage_link(bench, client):
    mark(client, bench, {"docid": "w1", "start": 0, "end": len(DOCS["w1"]), "selected": DOCS["w1"]})
    ((link,),) = nugget(bench).support
    assert (link.docid, link.start, link.span_hash) == ("w1", None, None)


@pytest.mark.parametrize("fields, message", [
    ({"docid": "w1"}, "Select the supporting text"),
    ({"docid": "w1", "start": "3", "end": "99"}, "Characters 3 to 99 are not a span of the passage"),
    ({"docid": "w1", "start": "0", "end": "4", "selected": "Solar"}, "The selected text is not in the passage"),
    ({"docid": "w1", "start": "5", "end": "6", "selected": " "}, "only blanks"),
    ({"docid": "nope", "scope": "whole"}, "nope"),
    ({"docid": "w1", "scope": "whole", "how": "joint", "alternative": "3"}, "has no support alternative 4"),
    ({"docid": "w1", "scope": "whole", "how": "joint"}, "Choose the alternative"),
    ({"docid": "w1", "scope": "whole", "how": "sideways"}, "not 'sideways'"),
])
def test_a_mark_the_store_cannot_make_comes_back_as_a_message(bench, client, fields, message):
    _, page = mark(client, bench, fields)
    assert message in flash(page)
    assert nugget(bench).support == ()


def test_a_mark_from_a_page_of_an_older_version_is_refused(bench, client):
    n = nugget(bench)
    url = f"/nuggets/1/{n.id}/mark"
    csrf = csrf_of(client.get(url).text)
    form = {"csrf": csrf, "version": str(n.version), "docid": "w1", "scope": "whole"}
    assert client.post(url, data=form, follow_redirects=False).status_code == 303
    again = client.post(url, data=form, follow_redirects=False)
    assert "after you opened the page" in flash(client.get(again.headers["location"]).text)
    assert len(nugget(bench).support) == 1


def test_the_mark_routes_need_the_csrf_token_a_session_and_a_nugget_of_the_topic(bench, client):
    n = nugget(bench)
    url = f"/nuggets/1/{n.id}/mark"
    assert client.post(url, data={"version": str(n.version), "docid": "w1", "scope": "whole"}).status_code == 403
    assert client.post(url, data={"csrf": "forged", "version": str(n.version), "docid": "w1"}).status_code == 403
    assert client.get(f"/nuggets/2/{n.id}/mark").status_code == 404
    assert client.get("/nuggets/1/nope/mark").status_code == 404
    add_assessor(bench, "alice")
    stranger = TestClient(create_app(bench, require_token=True), base_url="http://127.0.0.1")
    assert stranger.get(url, follow_redirects=False).headers["location"].startswith("/login")
    assert stranger.post(url, data={"csrf": "x", "version": "1", "docid": "w1"}).status_code in (401, 403)
    assert nugget(bench).support == ()


def test_a_workspace_without_a_corpus_says_it_cannot_search(bench, client):
    from trecbench.store.workspace import CONFIG

    config = bench / CONFIG
    config.write_text(re.sub(r'(?m)^source = .*corpus.*$', 'source = ""', config.read_text(), count=1))
    n = nugget(bench)
    page = TestClient(create_app(bench, require_token=False), base_url="http://127.0.0.1").get(
        f"/nuggets/1/{n.id}/mark", params={"q": "wind"}).text
    assert 'id="search-problem"' in page and "no corpus configured" in page
