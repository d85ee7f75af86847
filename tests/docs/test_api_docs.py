"""`help(trecbench)` is the API: every public name is listed, by stage, in the package's docstring."""
from __future__ import annotations

import re

import trecbench


def test_every_public_name_is_listed_in_the_package_docstring():
    listed = set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]*\b", trecbench.__doc__ or ""))
    missing = sorted(set(trecbench._EXPORTS) - listed)
    assert not missing, f"not listed in trecbench's docstring: {missing}"


def test_every_public_name_can_be_imported():
    for name in trecbench._EXPORTS:
        assert getattr(trecbench, name) is not None, name
