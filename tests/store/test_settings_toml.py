"""trecbench.toml as tomli-w writes it: the same bytes as before for ASCII values, and every value read back."""
from __future__ import annotations

import pytest

from trecbench.store.settings import Settings


def test_the_settings_file_keeps_its_bytes_for_ascii_values():
    text = Settings("bench", "corpus.jsonl", "topics.tsv").to_toml()
    assert text == ('# trecbench workspace settings\n[bench]\nname = "bench"\n\n'
                    '[corpus]\nsource = "corpus.jsonl"\n\n[topics]\nsource = "topics.tsv"\n')


def test_unset_sources_are_written_empty_and_read_back_as_none(tmp_path):
    path = tmp_path / "trecbench.toml"
    path.write_text(Settings("b").to_toml(), encoding="utf-8")
    assert 'source = ""' in path.read_text(encoding="utf-8")
    assert Settings.read(path) == Settings("b", None, None)


@pytest.mark.parametrize("name, corpus, topics", [
    ('q"uote', "C:\\corpus\\docs.jsonl", "nl\nand\ttab"),
    ("é名", "ü/ç.jsonl", "irds:msmarco-passage/dev"),
    ("x'y", "/a path/with [brackets] = signs.jsonl", "# not a comment"),
])
def test_every_value_is_read_back_as_it_was_written(tmp_path, name, corpus, topics):
    path = tmp_path / "trecbench.toml"
    path.write_text(Settings(name, corpus, topics).to_toml(), encoding="utf-8")
    assert Settings.read(path) == Settings(name, corpus, topics)
