"""The fast paths of the BM25 analyzer (ASCII word splitting, one analysis per distinct raw word) change no term."""
from __future__ import annotations

import json
import random
from pathlib import Path

from trecbench.runs.baselines import analysis
from trecbench.runs.baselines.analysis import TermIds, analyze

SAMPLE = Path(analysis.__file__).resolve().parents[2] / "sample"
PIECES = ["U.S.", "v2.1", "10,000", "don't", "e-mail", "09:00", "snake_case", "company's", "CEO'S", "a.b.c",
          "1.2.3", "x:y", "3;4", "'quoted'", "#release-train", "(v1)", "A", "is", "the", "Trains", "ran.",
          "12,5", "o'clock", "__init__", "x.1", "1.x", "end.", "'s", "'", "--", "\t", "\n"]


def test_ascii_text_splits_into_the_same_words_as_the_general_pattern():
    rnd = random.Random(9)
    for _ in range(2000):
        text = "".join(rnd.choice(PIECES) + rnd.choice(["", " ", ".", ",", "'", ":"]) for _ in range(rnd.randint(1, 12)))
        assert analysis._ASCII_WORD.findall(text) == analysis._WORD.findall(text), text


def test_term_ids_equal_analysing_each_text_and_numbering_terms_in_order():
    texts = [json.loads(line)["contents"] for line in (SAMPLE / "corpus.jsonl").open(encoding="utf-8")]
    texts += ["Straße's ÉCOLE naïve İstanbul 東京 café", "The the THE", "U.S. u.s. us"]
    vocab: dict[str, int] = {}
    expected = [[vocab.setdefault(t, len(vocab)) for t in analyze(text)] for text in texts]
    ids = TermIds()
    assert [ids.ids(text) for text in texts] == expected
    assert ids.vocab == vocab and list(ids.vocab) == list(vocab)
