"""What support assessment can and cannot judge in a set of answers, counted and listed (answers.support)."""
from trecbench.answers import Answer, AnswerSentence
from trecbench.answers.support import CitedSentence, UnknownCitation, answer_sentences, support_inventory


def answers() -> list[Answer]:
    return [Answer("r1", "q1", (AnswerSentence("A.", ("d1", "d2")), AnswerSentence("B."))),
            Answer("r1", "q2", (AnswerSentence("C."),)),
            Answer("r2", "q1", (AnswerSentence("D.", ("d9",)),))]


def test_the_inventory_counts_sentences_pairs_and_what_cites_nothing():
    inventory = support_inventory(answers(), corpus={"d1", "d2"})
    assert (inventory.answers, inventory.sentences, inventory.pairs) == (3, 4, 3)
    assert inventory.uncited_answers == (("r1", "q2"),)
    assert inventory.uncited_sentences == (CitedSentence("r1", "q1", 1), CitedSentence("r1", "q2", 0))
    assert inventory.unknown_citations == (UnknownCitation("r2", "q1", 0, "d9"),)


def test_without_a_corpus_the_unknown_citations_are_not_checked():
    inventory = support_inventory(answers())
    assert inventory.unknown_citations is None
    assert "citations to docids not in the corpus: not checked (no corpus)" in inventory.lines()


def test_every_sentence_is_registered_even_one_citing_nothing():
    sentences = answer_sentences(answers())
    assert [(s.run_id, s.qid, s.sentence, s.citations) for s in sentences] == [
        ("r1", "q1", 0, ("d1", "d2")), ("r1", "q1", 1, ()), ("r1", "q2", 0, ()), ("r2", "q1", 0, ("d9",))]
