"""Support assessment in a real browser, by keyboard: playwright driving Debian's chromium against a live uvicorn.

Skipped when playwright or /usr/bin/chromium is missing, unless TRECBENCH_REQUIRE_BROWSER=1 (CI sets it).
"""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from support_bench import make_support_bench, people_rows, registered_hash
from trecbench.store.workspace import Workspace
from web_support import live_server, watch

FIRST = ("rag_good", "T01", 0, "HB-ACC-04")
SECOND = ("rag_good", "T01", 1, "HB-ACC-04")
THIRD = ("rag_good", "T01", 2, "HB-ACC-06")


def serve(bench, *, token: bool = False):
    from trecbench.web.app import create_app

    return live_server(create_app(bench, require_token=token))


def shown(page) -> tuple[str, str, int, str]:
    assert urlsplit(page.url).path == "/support/judge", page.url
    q = parse_qs(urlsplit(page.url).query)
    return (q["run"][0], q["qid"][0], int(q["sentence"][0]), q["docid"][0])


def press_and_wait(page, key: str) -> None:
    with page.expect_navigation():
        page.keyboard.press(key)


def test_an_assessor_grades_three_pairs_by_keys_goes_back_and_finds_them_in_the_store(tmp_path, browser):
    bench = make_support_bench(tmp_path)
    with serve(bench) as url:
        page = browser.new_page()
        problems = watch(page)
        page.goto(url + "/")
        with page.expect_navigation():
            page.click("#nav-support")
        assert page.locator("#left").inner_text() == "84"  # the sample answers' pairs (rag_poor cites nothing)
        press_and_wait(page, "n")  # judge the next pair
        assert shown(page) == FIRST
        assert page.locator("#doc-text mark").first.inner_text() == "Break"
        assert page.locator("#sentence").inner_text().startswith("Emergency production access")
        context = page.locator("#after")
        assert context.is_visible() and context.evaluate("e => getComputedStyle(e).color") == "rgb(89, 89, 89)"
        press_and_wait(page, "2")
        assert shown(page) == SECOND
        press_and_wait(page, "1")
        assert shown(page) == THIRD
        press_and_wait(page, "0")
        assert shown(page) == ("rag_good", "T01", 3, "HB-ACC-10")  # its first of two citations
        press_and_wait(page, "p")  # back to the pair graded last
        assert shown(page) == THIRD
        assert page.locator("#my-grade").inner_text() == "none"
        assert page.locator("button.grade.current").get_attribute("value") == "none"
        page.keyboard.press("c")  # not a grade of this workspace's scale: nothing is sent
        assert page.evaluate("document.getElementById('support-form').dataset.sent") is None
        page.screenshot(path=str(tmp_path / "support.png"), full_page=True)
        assert (tmp_path / "support.png").stat().st_size > 1000
        assert problems == []
    hashes = [registered_hash(bench, "rag_good", "T01", n) for n in range(3)]
    assert people_rows(bench) == [("local", *FIRST, "full", hashes[0]), ("local", *SECOND, "partial", hashes[1]),
                                  ("local", *THIRD, "none", hashes[2])]


def test_two_assessors_with_tokens_grade_different_pairs_under_their_own_names(tmp_path, browser):
    bench = make_support_bench(tmp_path)
    ws = Workspace(bench)
    tokens = {name: ws.add_assessor(name) for name in ("alice", "bob")}
    with serve(bench, token=True) as url:
        pages = {}
        for name, token in tokens.items():
            pages[name] = browser.new_context().new_page()
            pages[name].goto(f"{url}/support?token={token}")
            assert pages[name].locator("#assessor").inner_text() == name
            press_and_wait(pages[name], "n")
        assert {name: shown(page) for name, page in pages.items()} == {"alice": FIRST, "bob": SECOND}
        press_and_wait(pages["alice"], "2")
        press_and_wait(pages["bob"], "0")
        assert shown(pages["alice"]) == THIRD  # bob held the second pair
    assert [(r[0], r[1:5], r[5]) for r in people_rows(bench)] == [("alice", FIRST, "full"), ("bob", SECOND, "none")]


def test_c_grades_contradicts_when_the_workspace_has_that_grade(tmp_path, browser):
    bench = make_support_bench(tmp_path, contradicts=True)
    with serve(bench) as url:
        page = browser.new_page()
        problems = watch(page)
        page.goto(url + "/support")
        press_and_wait(page, "n")
        press_and_wait(page, "c")
        assert shown(page) == SECOND
        assert problems == []
    assert [r[5] for r in people_rows(bench)] == ["contradicts"]


def test_the_sentence_and_the_passage_are_shown_as_text(tmp_path, browser):
    import json

    from trecbench.answers.support import answer_sentences
    from trecbench.answers.trec import read_answers

    bench = make_support_bench(tmp_path, answers=())
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(json.dumps({"run_id": "evil", "topic_id": "T01", "references": ["HB-ACC-04"], "answer": [
        {"text": "<img src=x onerror=\"window.pwned = 1\"> <script>window.pwned = 2</script>", "citations": [0]}]}) + "\n",
        encoding="utf-8")
    Workspace(bench).register_sentences(answer_sentences(read_answers(hostile)))
    with serve(bench) as url:
        page = browser.new_page()
        problems = watch(page)
        page.goto(url + "/support")
        press_and_wait(page, "n")
        assert "<script>" in page.locator("#sentence").inner_text()
        assert page.locator("#sentence img, #sentence script").count() == 0
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert problems == []
    assert re.fullmatch(r"[0-9a-f]{16}", registered_hash(bench, "evil", "T01", 0))
