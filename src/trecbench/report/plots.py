"""The report's figures, drawn with matplotlib's Agg backend and returned as inline SVG text.

Each figure is standalone SVG markup without XML prologue, namespace URLs or metadata, so the report
file references nothing outside itself. Run names and topic ids are drawn as plain text (mathtext off:
a `$` in a run name stays a `$`), and matplotlib escapes them in the SVG.
"""
from __future__ import annotations

import html
import io
import math
import re
from typing import Sequence

import numpy as np
import pandas as pd

_LABEL_LIMIT = 28  # characters of a run name shown on an axis


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _style(name: str) -> dict:
    return {"svg.fonttype": "none",  # text stays text: smaller files, selectable labels
            "svg.hashsalt": name,  # ids differ between figures of one page, and are the same on every run
            "text.parse_math": False, "font.size": 9, "axes.spines.top": False, "axes.spines.right": False}


def _svg(fig, name: str) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight",
                metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    _pyplot().close(fig)
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    # inline SVG in HTML needs no namespace declarations; dropping them leaves no URL in the file
    head_end = text.index(">")
    head = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text[:head_end])
    head = head.replace("<svg", f'<svg role="img" aria-label="{html.escape(name)}" class="figure"', 1)
    return head + text[head_end:]


def short(name: str, limit: int = _LABEL_LIMIT) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def interval_plot(runs: Sequence[str], means: Sequence[float], lows: Sequence[float], highs: Sequence[float],
                  *, measure: str, baseline: str | None = None) -> str:
    """Each run's mean with its 95% interval, best on top (a forest plot)."""
    plt = _pyplot()
    with plt.rc_context(_style(f"intervals-{measure}")):
        height = 0.9 + 0.28 * len(runs)
        fig, ax = plt.subplots(figsize=(6.4, height))
        y = np.arange(len(runs))[::-1]
        m = np.asarray(means, dtype=float)
        lo = np.asarray(lows, dtype=float)
        hi = np.asarray(highs, dtype=float)
        err = np.vstack([np.nan_to_num(m - lo), np.nan_to_num(hi - m)])
        colors = ["#b45309" if r == baseline else "#1d4ed8" for r in runs]
        ax.errorbar(m, y, xerr=err, fmt="none", ecolor="#94a3b8", elinewidth=2, capsize=3)
        ax.scatter(m, y, c=colors, zorder=3, s=22)
        if baseline is not None and baseline in runs:
            ax.axvline(m[list(runs).index(baseline)], color="#b45309", lw=0.8, ls="--")
        ax.set_yticks(y, [short(r) for r in runs])
        ax.set_xlabel(f"{measure} (mean over topics, 95% bootstrap interval)")
        ax.set_ylim(-0.7, len(runs) - 0.3)
        ax.grid(axis="x", color="#e2e8f0")
        return _svg(fig, f"{measure} per run with 95% intervals")


def heatmap(values: pd.DataFrame, *, measure: str) -> str:
    """Runs (rows) x topics (columns) coloured by the measure; values written in when the grid is small."""
    plt = _pyplot()
    runs, topics = list(values.index), [str(t) for t in values.columns]
    with plt.rc_context(_style(f"heatmap-{measure}")):
        width = min(16.0, max(5.0, 1.6 + 0.34 * len(topics)))
        height = min(22.0, max(1.6, 0.9 + 0.3 * len(runs)))
        fig, ax = plt.subplots(figsize=(width, height))
        data = values.to_numpy(dtype=float)
        finite = data[np.isfinite(data)]
        vmax = max(1.0, float(finite.max())) if finite.size else 1.0
        image = ax.imshow(np.ma.masked_invalid(data), aspect="auto", cmap="viridis", vmin=0.0, vmax=vmax,
                          interpolation="nearest")
        ax.set_yticks(range(len(runs)), [short(r) for r in runs])
        step = max(1, math.ceil(len(topics) / 60))
        ax.set_xticks(range(0, len(topics), step), topics[::step], rotation=90)
        ax.set_xlabel("topic")
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        if len(topics) <= 24 and len(runs) <= 20:
            for i in range(len(runs)):
                for j in range(len(topics)):
                    v = data[i, j]
                    if np.isfinite(v):
                        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                                color="white" if v < 0.6 * vmax else "black")
        fig.colorbar(image, ax=ax, label=measure, fraction=0.03, pad=0.02)
        return _svg(fig, f"{measure} per run and topic")


def funnel_plot(summary: pd.DataFrame) -> str:
    """Per run, the share of required evidence items present at each stage (and at the cut)."""
    plt = _pyplot()
    with plt.rc_context(_style("funnel")):
        fig, ax = plt.subplots(figsize=(6.4, 2.8))
        for run, rows in summary.groupby("run", sort=False):
            rows = rows[rows["share"].notna()]
            ax.plot(list(rows["stage"]), list(rows["share"]), marker="o", label=short(str(run)))
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("share of evidence items present")
        ax.grid(axis="y", color="#e2e8f0")
        ax.legend(frameon=False, fontsize=8, loc="lower left")
        return _svg(fig, "evidence funnel")


def pool_plot(topics: pd.DataFrame) -> str:
    """Candidates per topic: relevant, judged not relevant and unjudged, stacked."""
    plt = _pyplot()
    with plt.rc_context(_style("pool")):
        names = [str(t) for t in topics.index]
        width = min(16.0, max(5.0, 1.5 + 0.3 * len(names)))
        fig, ax = plt.subplots(figsize=(width, 2.8))
        x = np.arange(len(names))
        bottom = np.zeros(len(names))
        parts = [("relevant", "#16a34a"), ("judged, not relevant", "#94a3b8"), ("unjudged", "#fbbf24")]
        if "relevant" in topics.columns:
            stacks = [topics["relevant"], topics["judged"] - topics["relevant"], topics["unjudged"]]
        else:
            stacks = [None, None, topics["candidates"]]
            parts = [parts[0], parts[1], ("candidates", "#1d4ed8")]
        for (label, color), values in zip(parts, stacks):
            if values is None:
                continue
            v = values.to_numpy(dtype=float)
            ax.bar(x, v, bottom=bottom, color=color, label=label, width=0.8)
            bottom += v
        step = max(1, math.ceil(len(names) / 60))
        ax.set_xticks(x[::step], names[::step], rotation=90)
        ax.set_ylabel("pooled documents")
        ax.legend(frameon=False, fontsize=8, ncols=3, loc="upper left", bbox_to_anchor=(0, 1.18))
        return _svg(fig, "pool size per topic")


def difference_plot(differences: pd.DataFrame, *, measure: str, baseline: str) -> str:
    """Per run (a panel each, best run first), its per-topic difference from the baseline, topics sorted from
    the largest gain to the largest loss: where a run wins and where it loses, as TREC overviews show it."""
    plt = _pyplot()
    runs = list(differences.columns)
    with plt.rc_context(_style(f"differences-{measure}")):
        fig, axes = plt.subplots(len(runs), 1, figsize=(6.4, 0.6 + 1.5 * len(runs)), sharex=True, squeeze=False)
        for ax, run in zip(axes[:, 0], runs):
            d = differences[run].dropna().sort_values(ascending=False).to_numpy(dtype=float)
            ax.bar(np.arange(len(d)), d, width=0.85, color=["#15803d" if v > 0 else "#b91c1c" for v in d])
            ax.axhline(0, color="#0f172a", lw=0.6)
            ax.set_ylabel(short(str(run), 16), rotation=0, ha="right", va="center")
            ax.grid(axis="y", color="#e2e8f0")
        axes[-1, 0].set_xlabel(f"topics, sorted by the run's {measure} minus {short(baseline)}'s")
        axes[-1, 0].set_xticks([])
        return _svg(fig, f"per-topic {measure} difference from {baseline}")
