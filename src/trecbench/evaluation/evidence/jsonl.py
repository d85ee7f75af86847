"""Line checks shared by the evaluation readers of JSONL files (evidence, references, contexts)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator, Union

from trecbench.files.lines import json_id as record_id  # the one id rule of every reader
from trecbench.errors import Problem

__all__ = ["record_id", "topic_records"]


def topic_records(path: Union[str, Path], problems: list[Problem], *,
                  skip: Callable[[dict], bool] | None = None) -> Iterator[tuple[int, str, dict]]:
    """(line number, qid, record) of each line of a one-line-per-topic file.

    Unreadable lines, lines without `qid` (or `query_id`) and a topic's second line are added to
    `problems`; lines that `skip` accepts are passed over.
    """
    from trecbench.files.lines import iter_json_objects

    where = str(path)
    first: dict[str, int] = {}
    for number, record, error in iter_json_objects(path):
        if record is None:
            problems.append(Problem(where, number, error))
            continue
        if skip is not None and skip(record):
            continue
        qid = record_id(record.get("qid", record.get("query_id")))
        if qid is None:
            problems.append(Problem(where, number, "missing or empty 'qid'"))
            continue
        if qid in first:
            problems.append(Problem(where, number, f"topic {qid!r} appears twice (first on line {first[qid]})"))
            continue
        first[qid] = number
        yield number, qid, record
