"""The HTML report of a bench workspace: runs x measures with intervals and significance, per-topic heatmap,
answer scores, the evidence funnel, the pool, judge agreement, model calls and cost; one offline file.

    >>> from trecbench.report import ReportOptions, write_report
    >>> write_report("mybench", "report.html", ReportOptions(runs=["bm25.txt", "dense.txt"]))
"""
from trecbench.report.collect import Report, ReportOptionError, ReportOptions, build_report
from trecbench.report.render import render_html, write_report

__all__ = ["Report", "ReportOptions", "ReportOptionError", "build_report", "render_html", "write_report"]
