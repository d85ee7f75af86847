"""The one place that loads an `irds:<dataset-id>` source; ir_datasets is imported only when one is used.

ir_datasets downloads a dataset's files the first time they are read; offline, that fails deep inside
it as `RuntimeError('All download sources failed', ...)` or a requests error. The dataset handed out
here turns that failure, wherever it happens (queries, qrels, docs, the docstore), into one InputError
line saying what to download and where to put it.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from trecbench.errors import InputError


def load_dataset(source: str) -> Any:
    """Return the ir_datasets dataset named by `irds:<dataset-id>`, or raise InputError if it is unknown.

    Reading it raises InputError (one line: what to download, where to put it) when its files cannot be
    downloaded.
    """
    name = source.removeprefix("irds:")
    if not name:
        raise InputError(source, 0, "missing dataset id after 'irds:'")
    import ir_datasets  # heavy: imports every dataset definition

    try:
        return _Offline(ir_datasets.load(name), source)
    except KeyError:
        raise InputError(source, 0, f"unknown ir_datasets dataset {name!r}") from None


def is_irds(source: object) -> bool:
    """True for a string naming an ir_datasets dataset (`irds:<dataset-id>`)."""
    return isinstance(source, str) and source.startswith("irds:")


def iter_qrels(source: str) -> Iterator[tuple[str, str, str, int]]:
    """(query_id, iteration, doc_id, relevance) of each qrels record of the dataset, in its order.

    Raises InputError if the dataset is unknown or has no qrels, or its files cannot be downloaded.
    """
    dataset = load_dataset(source)
    if not dataset.has_qrels():
        raise InputError(source, 0, "this ir_datasets dataset has no qrels")
    for qrel in dataset.qrels_iter():
        yield str(qrel.query_id), str(getattr(qrel, "iteration", "0")), str(qrel.doc_id), int(qrel.relevance)


class _Offline:
    """A dataset, or its docstore, whose calls and iterators report a failed download as one InputError line.

    Every other attribute is the wrapped object's, so the readers use it as they would ir_datasets' own.
    """

    def __init__(self, wrapped: Any, source: str):
        self._wrapped = wrapped
        self._source = source

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._wrapped, name)
        if not callable(value) or isinstance(value, type):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            with _downloads(self._source):
                result = value(*args, **kwargs)
            if isinstance(result, Iterator) or name.endswith("_iter"):  # read as it is iterated
                return _guarded(iter(result), self._source)
            if name == "docs_store":  # looking documents up builds the store: a download too
                return _Offline(result, self._source)
            return result

        return call


def _guarded(items: Iterator[Any], source: str) -> Iterator[Any]:
    with _downloads(source):
        yield from items


def _not_a_failed_try(record: logging.LogRecord) -> bool:
    # ir_datasets logs every failed try of every address before it gives up: the one line says it all
    return not str(record.msg).startswith(("Download failed", "download error"))


@contextmanager
def _downloads(source: str) -> Iterator[None]:
    """Turn ir_datasets' failed downloads into InputError(source, 0, what to download and where)."""
    log = logging.getLogger("ir_datasets")  # the one logger ir_datasets writes through
    log.addFilter(_not_a_failed_try)
    try:
        yield
    except InputError:
        raise
    except Exception as e:
        hint = download_hint(e)
        if hint is None:
            raise
        raise InputError(source, 0, hint) from None
    finally:
        log.removeFilter(_not_a_failed_try)


def download_hint(error: BaseException) -> str | None:
    """One line for a download ir_datasets could not make: the file's address and where it goes (the
    path ir_datasets looks for it at first), or None if `error` is no failed download."""
    from ir_datasets.util.download import Download, LocalDownload

    download = _innermost(error.__traceback__, Download)
    if download is None:
        return None
    urls = [m.url for m in download.mirrors if isinstance(getattr(m, "url", None), str)]
    places = [str(m._path) for m in download.mirrors if isinstance(m, LocalDownload)]
    place = str(download._cache_path) if download._cache_path else (places[0] if places else None)
    if not urls:  # a file ir_datasets cannot download: it has to be put there by hand
        return f"ir_datasets needs a file it cannot download: put it at {place} (see ir-datasets.com for this dataset)"
    where = (f"download it and put it at {place}" if place else
             "run this once with network access (ir_datasets keeps the files under IR_DATASETS_HOME, "
             f"{_home()})")
    return f"cannot download {urls[0]} (offline?): {where}"


def _innermost(tb: TracebackType | None, kind: type) -> Any:
    """The innermost `self` of type `kind` among the traceback's frames, or None."""
    found = None
    while tb is not None:
        candidate = tb.tb_frame.f_locals.get("self")
        if isinstance(candidate, kind):
            found = candidate
        tb = tb.tb_next
    return found


def _home() -> str:
    from ir_datasets.util import home_path

    return str(home_path())
