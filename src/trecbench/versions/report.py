"""The lines `trecbench corpus update` and `corpus changes` print: an update's account as a table (with its
sums), and each change with its word diff."""
from __future__ import annotations

from .changes import CorpusChange
from .update import KINDS, OUTCOMES, CorpusUpdate

__all__ = ["KIND_NAMES", "update_lines", "change_lines"]

KIND_NAMES = {"judgment": "judgments", "link": "nugget links"}


def update_lines(update: CorpusUpdate) -> list[str]:
    """The account: one row per kind (carried, mapped, split, changed, retired, total, what there was), a
    line saying whether the sums hold, and what was written (or that nothing was, for a dry run)."""
    head = f"corpus {update.previous} -> {update.version} ({update.corpus})" + (" [dry run]" if update.dry_run else "")
    lines = [head, "kind\t" + "\t".join(OUTCOMES) + "\ttotal\tbefore"]
    for kind in KINDS:
        counts = update.counts[kind]
        lines.append(f"{KIND_NAMES[kind]}\t" + "\t".join(str(counts[o]) for o in OUTCOMES)
                     + f"\t{sum(counts.values())}\t{update.totals[kind]}")
    lines.append("sums hold: carried + mapped + split + changed + retired = before" if update.balanced()
                 else "sums do NOT hold: something was not accounted for")
    if update.dry_run:
        lines.append("dry run: nothing was written")
        return lines
    lines.append(f"{update.version} is now the workspace's corpus ({update.passages} passages); "
                 f"{update.links_updated} nugget(s) relinked")
    if update.review_pool:
        queued = sum(update.counts[k][o] for k in KINDS for o in ("split", "changed"))
        lines.append(f"review pool {update.review_pool}: {queued} item(s) for people (`trecbench corpus changes`)")
    return lines


def change_lines(changes: list[CorpusChange]) -> list[str]:
    """Per change: `outcome kind qid ref: docid -> new docids (source start-end) note`, then the word diff
    (indented) when the text changed."""
    lines = []
    for c in changes:
        where = f" ({c.where.source_id} {c.where.start}-{c.where.end})" if c.where else ""
        targets = " ".join(c.new_docids) or "-"
        what = "judgment" if c.kind == "judgment" else "link"
        lines.append(f"{c.version}\t{c.outcome}\t{what}\t{c.qid}\t{c.ref}\t{c.docid} -> {targets}{where}"
                     + (f"\t{c.note}" if c.note else ""))
        if c.outcome == "changed":
            lines.append("  " + (c.diff or "(old or new text unknown)"))
    if not lines:
        lines.append("nothing to review")
    return lines
