"""The assessor's page (issue 22): landmarks and headers a screen reader can name, the model's suggestion
offered only when a model judged the pair, skipping with a comment, the organiser's overview and the scale."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from starlette.testclient import TestClient

from trecbench.store.workspace import Judge, Judgment, Workspace
from trecbench.web.app import create_app
from web_support import make_nugget_bench

BASE = "http://127.0.0.1"


@pytest.fixture
def bench(tmp_path):
    return make_nugget_bench(tmp_path, [("1", "d1", 2)], [("Solar panels make electricity.", "vital")])


def local_client(bench, **options) -> TestClient:
    return TestClient(create_app(bench, require_token=False, **options), base_url=BASE)


class Landmarks(HTMLParser):
    """The `<nav>`s without a name (aria-label or aria-labelledby) and the table headers with no text."""

    def __init__(self) -> None:
        super().__init__()
        self.unnamed_navs = 0
        self.empty_headers = 0
        self._header: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        names = dict(attrs)
        if tag == "nav" and not (names.get("aria-label") or names.get("aria-labelledby")):
            self.unnamed_navs += 1
        if tag == "th":
            self._header = []

    def handle_data(self, data):
        if self._header is not None:
            self._header.append(data)

    def handle_endtag(self, tag):
        if tag == "th" and self._header is not None:
            self.empty_headers += not "".join(self._header).strip()
            self._header = None


def nugget_id(bench) -> str:
    from trecbench.nuggets.store import NuggetStore

    ws = Workspace(bench)
    try:
        return NuggetStore(ws).topic("1")[0].id
    finally:
        ws.close()


PAGES = ["/", "/topic?qid=1", "/judge?qid=1&docid=d1", "/nuggets", "/nuggets/1", "/nuggets/1/{nid}/history",
         "/overview"]


@pytest.mark.parametrize("path", PAGES)
def test_every_nav_has_a_name_and_every_table_header_a_text(bench, path):
    response = local_client(bench).get(path.format(nid=nugget_id(bench)))
    assert response.status_code == 200, response.text
    found = Landmarks()
    found.feed(response.text)
    assert (found.unnamed_navs, found.empty_headers) == (0, 0)


def test_the_model_suggestion_is_offered_only_when_a_model_judged_the_pair(bench):
    ws = Workspace(bench)
    model = Judge("model", "gpt-x:graded-0-3", model="gpt-x", prompt_id="graded-0-3", prompt_hash="abc")
    ws.record(Judgment("1", "d3", 1, model))
    ws.close()
    client = local_client(bench)
    unjudged = client.get("/judge", params={"qid": "1", "docid": "d1"}).text
    assert "show model suggestion" not in unjudged and 'id="show-suggestion"' not in unjudged
    judged = client.get("/judge", params={"qid": "1", "docid": "d3"}).text
    assert 'id="show-suggestion"' in judged and "suggested-grade" not in judged


# ---- phones ----

PHONE = {"width": 390, "height": 844}
LONG_QUESTION = ("how do the photovoltaic cells of rooftop solar panels convert sunlight into household electricity "
                 "and what limits their efficiency on cloudy winter days")


@pytest.fixture
def phone_bench(tmp_path):
    """A bench whose topic 1 has a long question and a nugget with a long text, judged and edited once."""
    import json

    bench = make_nugget_bench(tmp_path, [("1", "d1", 2)], [(
        "Photovoltaic cells turn sunlight into direct current that an inverter converts for the household grid.",
        "vital")])
    topics = tmp_path / "topics.jsonl"
    topics.write_text(json.dumps({"qid": "1", "text": LONG_QUESTION, "narrative": "Anything on solar power."}) + "\n"
                      + json.dumps({"qid": "2", "text": "wind power"}) + "\n", encoding="utf-8")
    return bench


@pytest.mark.parametrize("path", ["/", "/topic?qid=1", "/judge?qid=1&docid=d1", "/nuggets/1",
                                  "/nuggets/1/{nid}/history", "/overview"])
def test_the_pages_fit_a_phone_390_pixels_wide(phone_bench, browser, path):
    from test_web_browser import serve

    nid = nugget_id(phone_bench)
    with serve(phone_bench) as url:
        page = browser.new_page(viewport=PHONE)
        page.goto(url + path.format(nid=nid))
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{path} is {width} px wide on a {PHONE['width']} px phone"
        if path == "/nuggets/1":  # the nugget's text box is about as wide as the screen, not four words
            box = page.locator("form.edit textarea").first.bounding_box()
            assert box["width"] >= 0.7 * PHONE["width"]


# ---- unsure / skip with a comment, and the organiser's overview ----

def csrf(client: TestClient) -> str:
    from web_support import csrf_of

    return csrf_of(client.get("/").text)


def skip(client: TestClient, qid: str, docid: str, comment: str):
    return client.post("/skip", data={"csrf": csrf(client), "qid": qid, "docid": docid, "comment": comment})


def test_a_skip_keeps_the_comment_records_no_grade_and_goes_on_to_the_next_document(bench):
    client = local_client(bench)
    page = client.get("/judge", params={"qid": "1", "docid": "d3"}).text
    assert 'id="skip-form"' in page and 'id="skip-comment"' in page and "<kbd>s</kbd>" in page
    response = skip(client, "1", "d3", "  the passage  is cut\n mid-sentence ")
    assert response.url.path == "/judge" and "docid=d2" in str(response.url)  # d1 is judged, d3 skipped
    ws = Workspace(bench)
    try:
        assert [(s.qid, s.docid, s.assessor, s.comment) for s in ws.skips()] == [
            ("1", "d3", "local", "the passage is cut mid-sentence")]
        assert [r.docid for r in ws.judgment_rows(kind="human")] == ["d1"]  # no grade for the skipped pair
    finally:
        ws.close()


def test_skipping_the_last_open_document_shows_the_topic_not_the_same_document_again(bench):
    client = local_client(bench)
    response = skip(client, "2", "w2", "")
    assert "docid=w1" in str(response.url)
    response = skip(client, "2", "w1", "no idea")
    assert response.url.path == "/judge" and "docid=w2" in str(response.url)  # the earlier skip, offered again
    response = skip(client, "2", "w2", "still no idea")
    assert "docid=w1" in str(response.url)
    Workspace(bench).record(Judgment("2", "w2", 1, Judge("human", "local")))
    response = skip(client, "2", "w1", "")
    assert response.url.path == "/topic" and 'id="finished"' in response.text


def test_a_skip_of_a_document_outside_the_pool_is_refused(bench):
    assert skip(local_client(bench), "1", "w1", "x").status_code == 409


def test_the_overview_shows_who_judged_how_much_leases_agreement_what_is_left_and_the_comments(bench):
    ws = Workspace(bench)
    ws.record_many([Judgment("1", "d3", 2, Judge("human", "ann")), Judgment("1", "d1", 2, Judge("human", "ann")),
                    Judgment("1", "d3", 1, Judge("human", "judy"))])
    ws.close()
    client = local_client(bench, double=True)
    skip(client, "1", "d2", "is this <about> solar?")
    client.post("/next", data={"csrf": csrf(client), "qid": "2"})  # local now holds w2
    page = client.get("/overview")
    assert page.status_code == 200
    html = page.text
    people = re.findall(r'<tr data-assessor="([^"]+)"><td>[^<]*</td><td class="judged">(\d+)</td>'
                        r'<td class="skipped">(\d+)</td>', html)
    assert people == [("ann", "2", "0"), ("judy", "2", "0"), ("local", "0", "1")]
    assert "<li>local: topic 2, document w2</li>" in html
    # ann and judy both judged d1 (2 and 2) and d3 (2 and 1): one same grade of two; kappa 0 (expected 1/2)
    assert re.search(r"<td>ann and judy</td><td>2</td><td>1</td>\s*<td class=\"kappa\">0.00</td>", html)
    left = dict(re.findall(r'<tr data-qid="([^"]+)">.*?<td class="left">(\d+)</td>', html, re.S))
    assert left == {"1": "2", "2": "2"}  # double judging: d1 and d3 have two judgments, d2 and d4 none
    assert "is this &lt;about&gt; solar?" in html and "<about>" not in html
    assert 'id="nav-overview"' in client.get("/").text


def test_the_overview_of_a_pool_nobody_judged_says_so(tmp_path):
    from web_support import make_bench

    html = local_client(make_bench(tmp_path)).get("/overview").text
    assert 'id="no-people"' in html and 'id="no-leases"' in html and 'id="no-agreement"' in html
    assert 'id="no-skips"' in html


def test_an_assessor_skips_with_the_keyboard_and_the_comment_is_kept(bench, browser):
    from test_web_browser import press_and_wait, serve

    with serve(bench) as url:
        page = browser.new_page()
        page.goto(url + "/judge?qid=1&docid=d3")
        page.keyboard.press("s")
        assert page.evaluate("document.activeElement.id") == "skip-comment"
        page.keyboard.type("two answers, which one?")  # typed into the box: 2, n, s are not keys here
        assert page.url.endswith("docid=d3")
        press_and_wait(page, "Enter")
        assert "docid=d2" in page.url
        page.goto(url + "/overview")
        assert page.locator("#skips td.comment").inner_text() == "two answers, which one?"
    ws = Workspace(bench)
    try:
        assert [(s.docid, s.comment) for s in ws.skips()] == [("d3", "two answers, which one?")]
    finally:
        ws.close()


# ---- the relevance scale: one text for people and the model ----

RAG_SCALE = '''
[scale]
relevant = 2
narrative = "Grade how well the passage answers the question for a person writing a report on it."

[[scale.level]]
grade = 0
name = "irrelevant"
definition = "the passage has nothing to do with the question."
[[scale.level]]
grade = 1
name = "related"
definition = "the passage is on the topic but does not answer the question."
[[scale.level]]
grade = 2
name = "partly answers"
definition = "the passage answers part of the question."
[[scale.level]]
grade = 3
name = "answers"
definition = "the passage answers the question, with some extra material."
[[scale.level]]
grade = 4
name = "perfectly answers"
definition = "the passage is dedicated to the question and answers it completely."
'''


def with_scale(bench, text: str = RAG_SCALE):
    toml = bench / "trecbench.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + text, encoding="utf-8")
    return bench


def test_the_judging_page_shows_the_definitions_the_model_is_given(bench):
    from trecbench.judging.prompts import build_messages, load_prompt
    from trecbench.llm.prompts import DEFAULT_SCALE

    page = local_client(bench).get("/judge", params={"qid": "1", "docid": "d3"}).text
    system = build_messages(load_prompt(None), "q", ["p"])[0]["content"]
    for level in DEFAULT_SCALE.levels:
        assert f"{level.grade} - {level.definition}" in system
        assert f'<dd data-grade="{level.grade}">{level.definition}</dd>' in page
        assert f"<kbd>{level.grade}</kbd> {level.name}</button>" in page


def test_the_default_scale_keeps_the_prompt_word_for_word():
    from trecbench.judging.prompts import load_prompt
    from trecbench.llm.prompts import DEFAULT_SCALE, RELEVANCE, relevance_prompt

    # the hash is part of every model judge's name: a changed byte would make every earlier judge another
    assert load_prompt(None).sha256 == "1b7b6d852a9d7f1d1d7e29b45d28b080ccab4fe2bb50dbc87dac36639d40aff5"
    assert load_prompt("graded-0-3", DEFAULT_SCALE) is load_prompt(None)
    assert relevance_prompt(DEFAULT_SCALE) == RELEVANCE
    assert [level.name for level in DEFAULT_SCALE.levels] == ["not relevant", "related", "highly relevant",
                                                              "perfectly relevant"]


def test_a_workspace_declares_a_0_4_scale_used_by_the_page_and_the_model_prompt(bench):
    from trecbench.judging.prompts import build_messages, load_prompt, parse_grades

    with_scale(bench)
    ws = Workspace(bench)
    scale = ws.settings.scale
    ws.close()
    assert (scale.max_grade, scale.relevant, scale.names[4]) == (4, 2, "perfectly answers")
    client = local_client(bench)
    page = client.get("/judge", params={"qid": "1", "docid": "d3"}).text
    assert re.findall(r'name="grade" value="(\d)"', page) == ["0", "1", "2", "3", "4"]
    assert "<kbd>4</kbd> perfectly answers</button>" in page and "<kbd>0</kbd>–<kbd>4</kbd>" in page
    assert "for a person writing a report on it." in page
    response = client.post("/judge", data={"csrf": csrf(client), "qid": "1", "docid": "d3", "grade": "4"})
    assert response.status_code == 200
    refused = client.post("/judge", data={"csrf": csrf(client), "qid": "1", "docid": "d2", "grade": "5"})
    assert refused.status_code == 400 and "grade 0-4" in refused.text

    prompt = load_prompt(None, scale)
    system = build_messages(prompt, "q", ["p"])[0]["content"]
    assert prompt.name == "graded-0-4" and prompt.max_grade == 4
    assert "for a person writing a report on it.\n\n4 - the passage is dedicated to the question" in system
    assert "0 - the passage has nothing to do with the question." in system and '"grade": <0, 1, 2, 3 or 4>' in system
    assert prompt.response_schema()["schema"]["properties"]["grades"]["items"]["properties"]["grade"]["enum"] == [
        0, 1, 2, 3, 4]
    assert prompt.sha256 != load_prompt(None).sha256  # another scale, another judge
    assert parse_grades('{"grades": [{"passage": "P1", "grade": 4}]}', 1, prompt.max_grade) == [(4, "")]


@pytest.mark.parametrize("text, message", [
    ("[scale]\nrelevant = 1\n", "needs 2 to 10 [[scale.level]]"),
    ('[scale]\n[[scale.level]]\ngrade = 1\nname = "a"\ndefinition = "b"\n'
     '[[scale.level]]\ngrade = 2\nname = "c"\ndefinition = "d"\n', "level 1 has grade 1"),
    ('[scale]\nrelevant = 5\n[[scale.level]]\ngrade = 0\nname = "a"\ndefinition = "b"\n'
     '[[scale.level]]\ngrade = 1\nname = "c"\ndefinition = "d"\n', "relevant = 5"),
    ('[scale]\n[[scale.level]]\ngrade = 0\nname = ""\ndefinition = "b"\n'
     '[[scale.level]]\ngrade = 1\nname = "c"\ndefinition = "d"\n', "level 0 needs a name"),
    ("[scale]\nlevels = 3\n", "unknown key 'levels'"),
])
def test_a_scale_that_cannot_be_used_is_refused_with_what_is_wrong(bench, text, message):
    from trecbench.errors import InputError

    with_scale(bench, "\n" + text)
    with pytest.raises(InputError, match=re.escape(message)):
        Workspace(bench)


def test_the_multi_criteria_prompt_is_refused_on_another_scale(bench):
    from trecbench.errors import InputError
    from trecbench.judging.prompts import load_prompt

    with_scale(bench)
    ws = Workspace(bench)
    try:
        with pytest.raises(InputError, match="written for the 0-3 scale"):
            load_prompt("multi-criteria", ws.settings.scale)
    finally:
        ws.close()
