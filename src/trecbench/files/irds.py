"""The one place that loads an `irds:<dataset-id>` source; ir_datasets is imported only when one is used."""
from __future__ import annotations

from typing import Any, Iterator

from trecbench.errors import InputError


def load_dataset(source: str) -> Any:
    """Return the ir_datasets dataset named by `irds:<dataset-id>`, or raise InputError if it is unknown."""
    name = source.removeprefix("irds:")
    if not name:
        raise InputError(source, 0, "missing dataset id after 'irds:'")
    import ir_datasets  # heavy: imports every dataset definition

    try:
        return ir_datasets.load(name)
    except KeyError:
        raise InputError(source, 0, f"unknown ir_datasets dataset {name!r}") from None


def is_irds(source: object) -> bool:
    """True for a string naming an ir_datasets dataset (`irds:<dataset-id>`)."""
    return isinstance(source, str) and source.startswith("irds:")


def iter_qrels(source: str) -> Iterator[tuple[str, str, str, int]]:
    """(query_id, iteration, doc_id, relevance) of each qrels record of the dataset, in its order.

    Raises InputError if the dataset is unknown or has no qrels.
    """
    dataset = load_dataset(source)
    if not dataset.has_qrels():
        raise InputError(source, 0, "this ir_datasets dataset has no qrels")
    for qrel in dataset.qrels_iter():
        yield str(qrel.query_id), str(getattr(qrel, "iteration", "0")), str(qrel.doc_id), int(qrel.relevance)
