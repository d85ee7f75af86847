"""Write runs in trec_eval's ranking order (`trecbench.ranking`): per topic, score descending, ties by docid descending."""
from __future__ import annotations

import os
from typing import TextIO, Union

import numpy as np
import pandas as pd

from trecbench.files.output import open_output
from trecbench.files.columns import Ids
from trecbench.files.trec import check_ids
from trecbench.ranking import DEFAULT_VERSION, trec_eval_order


def trec_order(df: pd.DataFrame, version: int = DEFAULT_VERSION) -> pd.DataFrame:
    """The rows sorted the way trec_eval `version` ranks them (`trecbench.ranking`): query_id, then score
    descending (as C floats for 9, doubles for 10), then doc_id descending.

    Ids compare as strings (code point order, the same as trec_eval's strcmp on UTF-8); the rank column,
    if any, plays no part. Returns a new frame with a fresh index and the same attrs.
    """
    topics = pd.factorize(df["query_id"].to_numpy(dtype=object), sort=True)[0]
    docs = Ids.of(df["doc_id"].astype(str).tolist())
    order = trec_eval_order(topics, df["score"].to_numpy(dtype=np.float64), docs, version)
    out = df.iloc[order].reset_index(drop=True)
    out.attrs = dict(df.attrs)
    return out


def write_run(df: pd.DataFrame, path: Union[str, "os.PathLike[str]", TextIO], runid: str | None = None,
              version: int = DEFAULT_VERSION) -> None:
    """Write `qid Q0 docid rank score tag` lines in trec_order (for trec_eval `version`), ranks 1..n per topic.

    The tag is `runid`, else `df.attrs["runid"]`, else "trecbench". Scores are written as Python's
    shortest round-tripping repr, so reading the file back gives the same float64 values.
    `path` may also be an open text stream.
    """
    tag = runid or df.attrs.get("runid") or "trecbench"
    _check_writable(df, tag)
    ordered = trec_order(df, version)
    ranks = ordered.groupby("query_id", sort=False).cumcount().to_numpy() + 1
    columns = (ordered["query_id"].tolist(), ordered["doc_id"].tolist(), ranks.tolist(), ordered["score"].tolist())
    lines = [f"{q} Q0 {d} {r} {s!r} {tag}\n" for q, d, r, s in zip(*columns)]
    if hasattr(path, "write"):
        path.writelines(lines)  # type: ignore[union-attr]
        return
    with open_output(path) as f:
        f.writelines(lines)


def _check_writable(df: pd.DataFrame, tag: str) -> None:
    """Refuse frames that would not read back as the same run (a programming error, hence ValueError)."""
    missing = {"query_id", "doc_id", "score"} - set(df.columns)
    if missing:
        raise ValueError(f"run frame lacks column(s) {sorted(missing)}")
    if not np.isfinite(df["score"].to_numpy(dtype=np.float64)).all():
        raise ValueError("run frame has scores that are not finite numbers")
    check_ids([tag], "runid")
    check_ids(df["query_id"], "query_id")
    check_ids(df["doc_id"], "doc_id")
