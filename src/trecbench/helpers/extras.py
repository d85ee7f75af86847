"""Which optional extra (pyproject.toml's `[project.optional-dependencies]`) brings which package, and the one line
a command says when the extra it needs is not installed.

The core install scores files; a command that needs more (a model, the web app, the report's plots, the bm25s
baseline, an `irds:` source) imports its extra's packages only when it runs, so a missing extra surfaces as a
ModuleNotFoundError deep inside it. The CLI (`cli.LazyGroup.invoke`) turns that error into `missing_extra(error)`'s
line and exit status 2, for every command at once, instead of a traceback.
"""
from __future__ import annotations

import sys
from importlib.util import find_spec
from typing import NamedTuple


class Extra(NamedTuple):
    """An extra: its name, the top-level modules its packages install, and the trecbench modules that import them
    (where two extras bring the same package, the importing module says which extra the command needed)."""

    name: str
    modules: tuple[str, ...]
    users: tuple[str, ...]


# tests/architecture/test_extras.py checks this table against pyproject.toml's extras.
EXTRAS = (
    Extra("models", ("litellm", "openai", "httpx", "tiktoken"), ("trecbench.llm",)),
    Extra("web", ("starlette", "uvicorn", "jinja2", "markupsafe", "itsdangerous", "multipart", "python_multipart"),
          ("trecbench.web",)),
    Extra("report", ("matplotlib", "jinja2", "markupsafe"), ("trecbench.report",)),
    Extra("bm25", ("bm25s", "Stemmer"), ("trecbench.runs.baselines",)),
    Extra("irds", ("ir_datasets",), ("trecbench.files.irds",)),
)


class MissingExtra(RuntimeError):
    """A package of an optional extra is not installed; the message names it and says what to install."""


def install_command(extra: str) -> str:
    """The pip command that installs `extra`, e.g. `pip install 'trecbench[models]'`."""
    return f"pip install 'trecbench[{extra}]'"


def missing_extra(error: ModuleNotFoundError) -> MissingExtra | None:
    """The MissingExtra that `error` means, or None when the module is not an extra's (or is installed after all,
    and only something inside it is missing: a broken install, better shown as it is)."""
    module = (error.name or "").partition(".")[0]
    candidates = [extra for extra in EXTRAS if module in extra.modules]
    if not candidates or _installed(module):
        return None
    importer = _importer(error)
    chosen = next((extra for extra in candidates if any(importer == user or importer.startswith(user + ".")
                                                        for user in extra.users)), candidates[0])
    return MissingExtra(f"this command needs {module}, which is not installed: {install_command(chosen.name)}")


def _installed(module: str) -> bool:
    try:
        return module in sys.modules or find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _importer(error: BaseException) -> str:
    """The innermost trecbench module on the error's traceback: the one whose import failed."""
    importer = ""
    tb = error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_globals.get("__name__", "")
        if isinstance(name, str) and name.startswith("trecbench."):
            importer = name
        tb = tb.tb_next
    return importer
