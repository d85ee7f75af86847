"""The one rule that picks a support pair's grade among several judges' judgments."""
import pytest

from trecbench.evaluation.support import chosen_grades, chosen_judgments
from trecbench.store.support import SupportRow, SupportSentence

KEY = ("r1", "q1", 0, "d1")


def row(id_: int, grade: str | None, kind: str, judge: str, *, status: str = "ok", text_hash: str = "h") -> SupportRow:
    return SupportRow(id_, "r1", "q1", 0, "d1", text_hash, grade, status, None, None, "2025-01-01", id_, kind, judge,
                      "m" if kind == "model" else None)


def test_a_persons_grade_wins_over_a_newer_models():
    rows = [row(1, "none", "model", "gpt"), row(2, "full", "human", "ann"), row(3, "partial", "model", "gpt")]
    assert chosen_grades(rows) == {KEY: "full"}


def test_the_newest_persons_grade_wins_among_people():
    rows = [row(1, "full", "human", "ann"), row(2, "partial", "human", "bob")]
    assert chosen_judgments(rows)[KEY].judge == "bob"


def test_an_imported_grade_wins_over_a_models_but_not_a_persons():
    assert chosen_grades([row(1, "none", "model", "gpt"), row(2, "full", "import", "file")]) == {KEY: "full"}
    assert chosen_grades([row(1, "none", "human", "ann"), row(2, "full", "import", "file")]) == {KEY: "none"}


def test_a_named_judge_gives_its_own_newest_grade():
    rows = [row(1, "none", "model", "gpt"), row(2, "full", "human", "ann"), row(3, "partial", "model", "gpt")]
    assert chosen_grades(rows, "gpt") == {KEY: "partial"}
    assert chosen_grades(rows, "gpt (model)") == {KEY: "partial"}


def test_a_judge_without_judgments_is_refused():
    with pytest.raises(ValueError, match="no support judgments by 'nobody'"):
        chosen_grades([row(1, "full", "human", "ann")], "nobody")


def test_a_failed_judgment_is_never_a_grade():
    assert chosen_grades([row(1, "full", "model", "gpt"), row(2, None, "human", "ann", status="failed")]) == \
        {KEY: "full"}


def test_a_judgment_of_another_text_of_the_sentence_is_left_out():
    sentence = SupportSentence("r1", "q1", 0, "new text", "new", ("d1",))
    rows = [row(1, "full", "human", "ann", text_hash="old")]
    assert chosen_grades(rows) == {KEY: "full"}
    assert chosen_grades(rows, sentences=[sentence]) == {}
