"""Compare our numbers with a saved trec_eval output, value by printed value."""
from __future__ import annotations

from dataclasses import dataclass

from trecbench.errors import InputError, Problem

from .engine import RunScores
from .output import trec_eval_lines


@dataclass(frozen=True)
class Difference:
    measure: str
    query_id: str
    ours: str | None  # None: we did not compute it
    theirs: str | None  # None: absent from their file

    def __str__(self) -> str:
        return (f"{self.measure}\t{self.query_id}\tours={self.ours if self.ours is not None else '-'}"
                f"\ttrec_eval={self.theirs if self.theirs is not None else '-'}")


def read_trec_eval_output(path: str) -> dict[tuple[str, str], str]:
    """`measure<TAB>qid<TAB>value` lines (as `trec_eval -q` prints them) -> {(measure, qid): value}."""
    values: dict[tuple[str, str], str] = {}
    problems = []
    try:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 3:
                    parts = line.split()
                if len(parts) != 3:
                    problems.append(Problem(path, n, f"expected 'measure<TAB>topic<TAB>value', got {line.strip()[:60]!r}"))
                    continue
                values[(parts[0].strip(), parts[1].strip())] = parts[2].strip()
    except OSError as e:
        raise InputError(path, 0, f"cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise InputError(path, 0, f"invalid UTF-8 ({e.reason})") from None
    if problems:
        raise InputError.of(problems)
    if not values:
        raise InputError(path, 0, "empty file: no trec_eval output lines")
    return values


@dataclass(frozen=True)
class Comparison:
    """Our values beside a saved trec_eval output, over what that file holds."""

    differences: list[Difference]
    same: int  # values compared and equal
    not_computed: list[str]  # measures of their file that we did not compute (not compared)
    measures_theirs: list[str]
    per_topic: bool  # their file has per-topic rows (trec_eval -q); else only `all` rows are compared

    @property
    def compared(self) -> int:
        return self.same + sum(d.ours is not None and d.theirs is not None for d in self.differences)


def compare_with(res: RunScores, theirs: dict[tuple[str, str], str], *, version: int) -> Comparison:
    """Differences on every (measure, topic) both sides have, and what only one side has.

    A file without per-topic rows (trec_eval without -q) is compared on its `all` rows only.
    """
    ours: dict[tuple[str, str], str] = {}
    for line in trec_eval_lines(res, per_topic=True, version=10):
        m, q, v = line.split("\t")
        ours[(m.strip(), q)] = v.strip()  # their values are read stripped: `  -nan` is `-nan`
    per_topic = any(q != "all" for _, q in theirs)
    diffs, same = [], 0
    measures_theirs = list(dict.fromkeys(m for m, _ in theirs))
    for key, v in ours.items():
        if key[0] not in measures_theirs or (key[1] != "all" and not per_topic):
            continue  # a measure or a row their file does not report: nothing to compare
        t = theirs.get(key)
        if t is None:
            if key[1] in res.missing and version < 10:
                continue
            diffs.append(Difference(key[0], key[1], v, None))
        elif t != v:
            diffs.append(Difference(key[0], key[1], v, t))
        else:
            same += 1
    measures_ours = {m for m, _ in ours}
    for key, t in theirs.items():
        if key[0] in measures_ours and key not in ours:
            diffs.append(Difference(key[0], key[1], None, t))
    not_computed = [m for m in measures_theirs if m not in measures_ours]
    return Comparison(diffs, same, not_computed, measures_theirs, per_topic)
