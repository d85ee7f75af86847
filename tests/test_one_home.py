"""Rules that exist once: the modules that need them share one object instead of keeping copies."""
from __future__ import annotations

import pytest


def test_one_stopword_list_for_drafting_matching_and_highlighting():
    from trecbench.evaluation import textmatch
    from trecbench.nuggets import draft_extractive
    from trecbench.web import highlight

    assert draft_extractive.STOPWORDS is textmatch.STOPWORDS is highlight.STOPWORDS
    assert {"the", "explain", "please"} <= textmatch.STOPWORDS


@pytest.mark.parametrize("value, expected", [("d1", "d1"), (" d1 ", "d1"), (7, "7"), (True, None), ("", None),
                                             ("  ", None), (None, None), (1.5, None), (["d1"], None)])
def test_one_json_id_rule_for_every_reader(value, expected):
    from trecbench._lines import json_id

    assert json_id(value) == expected


def test_a_boolean_id_is_refused_by_the_topic_corpus_and_nugget_readers(tmp_path):
    from trecbench import InputError, read_nuggets, read_topics
    from trecbench.corpus import open_corpus

    (tmp_path / "t.jsonl").write_text('{"qid": true, "text": "q"}\n')
    (tmp_path / "c.jsonl").write_text('{"id": true, "contents": "x"}\n')
    (tmp_path / "n.jsonl").write_text('{"qid": true, "nuggets": [{"text": "a fact"}]}\n')
    for read in (lambda: read_topics(tmp_path / "t.jsonl"), lambda: open_corpus(tmp_path / "c.jsonl"),
                 lambda: read_nuggets(tmp_path / "n.jsonl")):
        with pytest.raises(InputError):
            read()


def test_propagation_has_one_home():
    import trecbench.pooling
    from trecbench.pooling.pool import Pool

    assert not hasattr(Pool, "propagate") and "propagate" not in trecbench.pooling.__all__
