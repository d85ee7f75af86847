"""The assessor's page (issue 22): landmarks and headers a screen reader can name, the model's suggestion
offered only when a model judged the pair, skipping with a comment, the organiser's overview and the scale."""
from __future__ import annotations

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


PAGES = ["/", "/topic?qid=1", "/judge?qid=1&docid=d1", "/nuggets", "/nuggets/1", "/nuggets/1/{nid}/history"]


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
                                  "/nuggets/1/{nid}/history"])
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
