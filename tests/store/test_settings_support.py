"""trecbench.toml's [support] table: whether people grading support may say a passage contradicts a sentence."""
from __future__ import annotations

import pytest

from trecbench.errors import InputError
from trecbench.store.settings import Settings


def _read(tmp_path, extra: str) -> Settings:
    path = tmp_path / "trecbench.toml"
    path.write_text(Settings("b").to_toml() + extra, encoding="utf-8")
    return Settings.read(path)


def test_without_a_support_table_the_scale_is_the_papers_three_grades(tmp_path):
    assert _read(tmp_path, "").support_contradicts is False


def test_contradicts_true_adds_the_grade(tmp_path):
    assert _read(tmp_path, "\n[support]\ncontradicts = true\n").support_contradicts is True
    assert _read(tmp_path, "\n[support]\ncontradicts = false\n").support_contradicts is False


@pytest.mark.parametrize("extra, said", [
    ('\n[support]\ncontradicts = "yes"\n', "contradicts = 'yes': true or false"),
    ("\n[support]\ngrades = 4\n", "a table with one key"),
    ("\n[support]\ncontradicts = 1\n", "contradicts = 1: true or false"),
])
def test_a_support_table_that_cannot_be_used_is_refused_saying_why(tmp_path, extra, said):
    with pytest.raises(InputError) as e:
        _read(tmp_path, extra)
    assert said in str(e.value) and "trecbench.toml" in str(e.value)
