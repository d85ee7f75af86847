"""Printing scores: trec_eval's exact text, an aligned table, CSV and JSON."""
from __future__ import annotations

from typing import IO

from trecbench.helpers.messages import some

from .engine import RunScores, Score
from .measures.base import LONG, STRING


def trec_eval_value(value, kind: str, summary: bool) -> str:
    if kind == LONG:
        return str(int(value))
    if kind == STRING:
        return str(value) if summary else f"'{value}'"
    if value != value:  # NaN (0/0): C's printf of the NaN that 0.0/0.0 gives
        return "%6s" % "-nan"
    return "%6.4f" % value


def trec_eval_lines(res: RunScores, *, per_topic: bool, version: int, summary: bool = True) -> list[str]:
    """The lines `trec_eval [-q] [-n] -c -m ...` prints, byte for byte (trec_eval's own names); without
    `summary` (trec_eval -n) no `all` row, and so no runid line either."""
    lines = []
    if per_topic:
        shown = [s for s in res.scores if s.per_topic and s.values is not None and s.family != "num_q"]
        # each measure's values formatted at once, as trec_eval_value formats one
        heads = ["%-22s\t" % _te_name(s) for s in shown]
        cells = [_per_topic_cells(s) for s in shown]
        missing = set(res.missing) if version < 10 else set()  # trec_eval 9 averages them in, prints no row
        for i, qid in enumerate(res.topics):
            if qid not in missing:
                lines.extend([f"{head}{qid}\t{column[i]}" for head, column in zip(heads, cells)])
    for s in res.scores if summary else ():
        if s.in_summary:
            lines.append("%-22s\t%s\t%s" % (_te_name(s), "all", trec_eval_value(s.summary, s.kind, True)))
    return lines


def _per_topic_cells(s: Score) -> list[str]:
    """A measure's per-topic values as `trec_eval_value` prints them, all at once."""
    values = s.values.tolist() if s.values is not None else []
    if s.kind == LONG:
        return [str(int(v)) for v in values]
    if s.kind == STRING:
        return [f"'{v}'" for v in values]
    return ["%6.4f" % v if v == v else "%6s" % "-nan" for v in values]


def _te_name(s: Score) -> str:
    # measures trec_eval does not have (Judged@k, RR@k) keep the name they were asked by
    return s.label if s.family in ("judged", "") or s.family == "recip_rank" and s.label.startswith("RR@") else s.name


def _fmt(value, kind: str) -> str:
    if value is None:
        return ""
    if kind == LONG:
        return str(int(value))
    if kind == STRING:
        return str(value)
    return f"{value:.4f}"


def table_lines(results: list[RunScores], *, per_topic: bool) -> list[str]:
    """Runs as rows, measures as columns; per-topic rows under each run with -q."""
    header = ["run"] + (["topic"] if per_topic else [])
    labels = [s.label for s in in_asked_order(results[0]) if s.name != "runid"] if results else []
    header += labels
    rows = []
    for res in results:
        name = res.shown
        by_label = {s.label: s for s in res.scores}
        if per_topic:
            for i, qid in enumerate(res.topics):
                row = [name, qid]
                for lab in labels:
                    s = by_label.get(lab)
                    row.append(_fmt(s.values[i], s.kind) if s is not None and s.per_topic and s.values is not None
                               else "")
                rows.append(row)
        row = [name] + (["all"] if per_topic else [])
        for lab in labels:
            s = by_label.get(lab)
            row.append(_fmt(s.summary, s.kind) if s is not None and s.in_summary else "")
        rows.append(row)
    return aligned(header, rows, left=2 if per_topic else 1)


def aligned(header: list[str], rows: list[list], *, left: int) -> list[str]:
    """The one text-table layout of score tables: columns two spaces apart, the first `left` columns
    (names) left-aligned, the others (numbers) right-aligned, no trailing spaces."""
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    return ["  ".join(str(x).ljust(w) if i < left else str(x).rjust(w) for i, (x, w) in enumerate(zip(row, widths)))
            .rstrip() for row in [header, *rows]]


def in_asked_order(res: RunScores) -> list[Score]:
    """Scores in the order the measures were asked for (trec_eval's order within one request)."""
    return sorted(res.scores, key=lambda s: s.order)


def records(results: list[RunScores], *, per_topic: bool) -> list[dict]:
    """Long format: one record per (run, topic, measure); topic `all` for the summary."""
    out = []
    for res in results:
        name = res.shown
        if per_topic:
            for i, qid in enumerate(res.topics):
                for s in in_asked_order(res):
                    if s.per_topic and s.values is not None:
                        out.append({"run": name, "query_id": qid, "measure": s.label,
                                    "value": _json_value(s.values[i], s.kind)})
        for s in in_asked_order(res):
            if s.in_summary and s.name != "runid":
                out.append({"run": name, "query_id": "all", "measure": s.label,
                            "value": _json_value(s.summary, s.kind)})
    return out


def _json_value(value, kind: str):
    if kind == LONG:
        return int(value)
    if kind == STRING:
        return str(value)
    return None if value != value else float(value)  # NaN (0/0) is null: JSON has no NaN


def write_csv(results: list[RunScores], stream: IO[str], *, per_topic: bool) -> None:
    import csv

    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(["run", "query_id", "measure", "value"])
    for r in records(results, per_topic=per_topic):
        v = r["value"]
        writer.writerow([r["run"], r["query_id"], r["measure"], repr(v) if isinstance(v, float) else v])


def write_json(results: list[RunScores], stream: IO[str], *, per_topic: bool) -> None:
    doc = []
    for res in results:
        name = res.shown
        entry = {"run": name, "runid": res.runid, "missing_topics": list(res.missing),
                 "all": {s.label: _json_value(s.summary, s.kind) for s in in_asked_order(res)
                         if s.in_summary and s.name != "runid"}}
        if per_topic:
            entry["topics"] = {qid: {s.label: _json_value(s.values[i], s.kind) for s in in_asked_order(res)
                                     if s.per_topic and s.values is not None}
                               for i, qid in enumerate(res.topics)}
        doc.append(entry)
    import json  # only for --format json

    json.dump(doc, stream, indent=2)
    stream.write("\n")


FORMATS = ("table", "trec_eval", "csv", "json")


def write_results(results: list[RunScores], stream: IO[str], fmt: str = "table", *, per_topic: bool = False,
                  version: int = 9, summary: bool = True) -> None:
    """Scores in one of `FORMATS`: `trec_eval` is, for each run, what `trec_eval -c [-q] [-n]` prints (that
    version; `summary=False` is -n, for that format only)."""
    if fmt == "trec_eval":
        for res in results:
            lines = trec_eval_lines(res, per_topic=per_topic, version=version, summary=summary)
            stream.write("".join(line + "\n" for line in lines))
    elif fmt == "table":
        stream.write("\n".join(table_lines(results, per_topic=per_topic)) + "\n")
    elif fmt == "csv":
        write_csv(results, stream, per_topic=per_topic)
    elif fmt == "json":
        write_json(results, stream, per_topic=per_topic)
    else:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")


def first_mean(results: list[RunScores]) -> str | None:
    """The measure runs are ordered by: the first one asked for that has a numeric mean (not runid, num_q)."""
    for s in in_asked_order(results[0]) if results else ():
        if s.in_summary and s.kind not in (LONG, STRING):
            return s.label
    return None


def best_first(results: list[RunScores]) -> list[RunScores]:
    """Runs best first by `first_mean` (the report's and the demo's order; ties keep the input order, runs
    without a mean come last): one order for every output, so a table and the report list the same run first."""
    label = first_mean(results)
    if label is None:
        return list(results)

    def mean(res: RunScores) -> float:
        # first_mean skips LONG and STRING measures: this summary is a number
        value = next((float(s.summary) for s in res.scores  # type: ignore[arg-type]
                      if s.label == label and s.in_summary), float("nan"))
        return -value if value == value else float("inf")

    return sorted(results, key=mean)  # sorted is stable: equal means keep the input order


def relevance_rule(level: int) -> str:
    """The one wording of the relevance level, in every output that depends on it (`eval`, `qrels stats`,
    the report's headline)."""
    return f"relevant: grade >= {level}"


def level_and_order(results: list[RunScores], rel_level: int) -> str:
    """The first line on stderr: the relevance level the scores used and the order of the runs."""
    label = first_mean(results)
    order = f"runs best first by {label}" if label and len(results) > 1 else ""
    return "; ".join(x for x in (relevance_rule(rel_level), order) if x)


def coverage_notes(results: list[RunScores]) -> list[str]:
    """A sentence per run whose topics differ from the qrels': the qrels topics it lacks, the ones the qrels lack."""
    notes = []
    for res in results:
        if res.missing:
            notes.append(f"{res.shown}: {len(res.missing)} qrels topic(s) not in the run, scored 0: {some(res.missing)}")
        if res.unjudged:
            notes.append(f"{res.shown}: {len(res.unjudged)} run topic(s) not in the qrels, not scored: "
                         f"{some(res.unjudged)}")
    return notes
