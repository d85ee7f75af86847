"""Printing corrected scores: the table `eval retrieval --corrected` adds under the plain one, and its JSON."""
from __future__ import annotations

from .scores import NONE, Correction

METHODS = {"label": "label-level PPI", "topic": "topic-level PPI", NONE: "not corrected"}


def _f(v: float) -> str:
    return "-" if v != v else f"{v:.4f}"


def _people(inside: int | None, n: int, unit: str) -> str:
    """People's labels an estimate used: for a run's label-level figure, those within its cut-off of all."""
    return f"{n} {unit}" if inside is None else f"{inside} of {n} {unit}"


def correction_lines(result: Correction, said: str, order: list[str] | None = None) -> list[str]:
    """The sentence of what was used, a row per (run, measure) (runs in `order`, the plain table's, when
    given), the labels needed (with a width), the differences with the baseline, and the notes."""
    from trecbench.evaluation.retrieval.output import aligned

    rank = {name: i for i, name in enumerate(order or [])}
    scores = sorted(result.scores, key=lambda s: rank.get(s.run, len(rank)))  # stable: no order, as they are
    differences = sorted(result.differences, key=lambda d: rank.get(d.run, len(rank)))

    pct = f"{result.level:.0%}"
    lines = ["", said]
    header = ["run", "measure", "model", "corrected", f"{pct} interval", "lambda", "people", "method"]
    rows = []
    for s in scores:
        e = s.estimate
        unit = "pairs" if s.method == "label" else "topics"
        rows.append([s.run, s.measure, _f(s.plain), _f(e.value) if e else "-",
                     f"[{_f(e.low)}, {_f(e.high)}]" if e else "-", f"{e.lam:.2f}" if e else "-",
                     _people(s.inside, e.n, unit) if e else "-", METHODS[s.method]])
    lines += aligned(header, rows, left=2)
    if result.width is not None:
        for s in scores:
            if s.needed is not None:
                unit = "pairs" if s.method == "label" else "topics"
                lines.append(f"{s.run} {s.measure}: about {s.needed} {unit} judged by people for a {pct} interval "
                             f"{result.width:g} wide (now {s.estimate.width:.4f} with {s.estimate.n})")  # type: ignore[union-attr]
    if differences:
        lines += ["", f"differences with {differences[0].baseline} under the same correction (paired; "
                      "p of the normal test):"]
        header = ["run", "measure", "model diff", "corrected diff", f"{pct} interval", "p", "method"]
        lines += aligned(header, [[d.run, d.measure, f"{d.plain:+.4f}", f"{d.estimate.value:+.4f}",
                                   f"[{d.estimate.low:+.4f}, {d.estimate.high:+.4f}]", f"{d.p:.4f}",
                                   METHODS[d.method]] for d in differences], left=2)
    lines += [f"note: {n}" for n in result.notes]
    return lines
