"""The report as one self-contained HTML file: Jinja2 with autoescaping, inline CSS and inline SVG figures.

Nothing is loaded from elsewhere (no script, font, stylesheet or image URL), so the file opens offline
and can be mailed or attached to a ticket. Every text that comes from data (run names, topic ids, judge
names, notes) is escaped by the template; the figures are SVG that matplotlib wrote and escaped.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, TYPE_CHECKING

from trecbench.report.collect import Report
from trecbench.report.scores import BASELINE, BETTER, WORSE, differences_csv, differences_latex

if TYPE_CHECKING:
    from trecbench.store.workspace import WorkspaceLike

TEMPLATES = Path(__file__).parent / "templates"


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(v):
        return "–"
    return f"{v:.{digits}f}"


def _count(value: Any) -> str:
    if value is None:
        return "–"
    try:
        if isinstance(value, float) and math.isnan(value):
            return "–"
        return f"{int(value):,}"
    except (TypeError, ValueError):
        return str(value)


def _money(value: Any) -> str:
    v = float(value or 0.0)
    return f"${v:,.4f}" if v < 1 else f"${v:,.2f}"


def _pvalue(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return "< 0.0001" if value < 1e-4 else f"{value:.4f}"


def _datauri(text: str, mime: str) -> str:
    """`text` as a data: URL, so a download link needs no file and no script beside the report."""
    from urllib.parse import quote

    return f"data:{mime};charset=utf-8,{quote(text, safe='')}"


def environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters.update(num=_num, n=_count, money=_money, pvalue=_pvalue, datauri=_datauri)
    env.globals.update(BETTER=BETTER, WORSE=WORSE, BASELINE=BASELINE, differences_csv=differences_csv,
                       differences_latex=differences_latex)
    return env


def render_html(report: Report) -> str:
    """The report as an HTML document (a string)."""
    from markupsafe import Markup

    def svg(text: str) -> Markup:
        return Markup(text)  # written by matplotlib, whose SVG escapes every label it draws

    return environment().get_template("report.html.j2").render(r=report, svg=svg)


def write_report(workspace: WorkspaceLike, output: str | Path, options: Any = None, *, progress: Any = None) -> Report:
    """Build the report of `workspace` and write it to `output` (UTF-8 HTML); returns what it showed.

    An output that cannot be written is refused before the report is built (InputError), and one whose
    writing fails (a full disk) keeps the old file (`trecbench.files.output`)."""
    from trecbench.files.output import check_writable, write_output
    from trecbench.report.collect import build_report

    check_writable(output)
    report = build_report(workspace, options, progress=progress)
    html = render_html(report)
    write_output(output, html)
    return report
