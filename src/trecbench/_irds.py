"""The one place that loads an `irds:<dataset-id>` source; ir_datasets is imported only when one is used."""
from __future__ import annotations

from typing import Any

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
