"""A workspace's model qrels corrected by what people have judged so far: the judge, the human grades, the design.

The model's qrels are `workspace_qrels(judge="NAME (model)")` (its newest grade per pair, duplicates
propagated); people's grades are `judging.validate.reference_grades` (a person's, else an import's). The
sampling design comes from the newest `judge validate` sample that recorded one (`inclusion` in its
params: each pair's inclusion probability and stratum; `draw_sample` and the `uncertainty` strategy
record it). People judge a sample in a random order, so the pairs of a stratum judged so far are a random
part of it: their probability is the recorded one times the share of the stratum judged. Everything is
read again on every call: the figures follow people's judging.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from trecbench.errors import InputError

from .scores import Correction, Design, correct

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace, WorkspaceLike


def model_judge(ws: Workspace, name: str | None = None) -> str:
    """The model judge to correct: `name` (checked), else the model judge with the most judgments of its own."""
    stats = [s for s in ws.judge_stats() if s.judge.kind == "model"]
    if name is not None:
        if not any(s.judge.name == name for s in stats):
            have = ", ".join(sorted({s.judge.name for s in stats})) or "none"
            raise InputError(str(ws.path), 0, f"no model judge {name!r} in the workspace (model judges: {have})")
        return name
    if not stats:
        raise InputError(str(ws.path), 0, "no model judge has judged this workspace: nothing to correct "
                                          "(`trecbench judge llm -w BENCH --model ...`)")
    counts: dict[str, int] = {}
    for s in stats:
        counts[s.judge.name] = counts.get(s.judge.name, 0) + s.direct
    return max(sorted(counts), key=lambda n: counts[n])


def sample_design(ws: Workspace, human: pd.DataFrame, sample: str | None = None) -> tuple[Design | None, str]:
    """The design of people's pairs (None: none recorded) and a sentence naming it.

    sample: the validation pool whose design counts (default: the newest one that recorded one)."""
    from trecbench.judging.samples import VALIDATION

    pools = [p for p in ws.pools() if p.strategy == VALIDATION and p.params.get("inclusion")]
    if sample is not None:
        chosen = ws.pool(sample)
        if chosen is None or chosen.strategy != VALIDATION:
            raise InputError(str(ws.path), 0, f"pool {sample!r} is not a validation sample (`judge validate --sample`)")
        pools = [chosen] if chosen.params.get("inclusion") else []
    if not pools:
        return None, "no sampling design recorded"
    pool = pools[-1]
    rows = pd.DataFrame(pool.params["inclusion"], columns=["query_id", "doc_id", "pi", "stratum"])
    rows = rows.assign(query_id=rows["query_id"].astype(str), doc_id=rows["doc_id"].astype(str))
    graded = set(zip(human["query_id"].astype(str), human["doc_id"].astype(str)))
    rows["judged"] = [(q, d) in graded for q, d in zip(rows["query_id"], rows["doc_id"])]
    share = rows.groupby("stratum")["judged"].mean()
    rows["pi"] = rows["pi"] * rows["stratum"].map(share)
    judged = rows[rows["judged"]].drop(columns=["judged"]).reset_index(drop=True)
    strategy = pool.params.get("sampling", "stratified")
    return Design(judged, True), (f"sample {pool.name!r} ({strategy}: {len(judged)} of its {len(rows)} pairs "
                                  "judged by people)")


def workspace_correction(ws: WorkspaceLike, runs: Any, measures: Sequence[str], *, judge: str | None = None,
                         sample: str | None = None, rel_level: int | None = None, tuned: bool = True,
                         level: float = 0.95, width: float | None = None, baseline: str | None = None,
                         missing_topics: str = "zero") -> tuple[Correction, str]:
    """Each run's mean under the workspace's model judge's qrels, corrected by people's grades (`correct`),
    and the sentence saying what was used (judge, pairs, design). ws: a Workspace or its path."""
    from trecbench.judging.validate import reference_grades
    from trecbench.qrels.select import workspace_qrels
    from trecbench.store import as_workspace

    ws = as_workspace(ws)
    name = model_judge(ws, judge)
    made = workspace_qrels(ws, judge=f"{name} (model)")
    model = made.qrels[made.qrels["relevance"] >= 0]
    human, reference = reference_grades(ws.judgments(direct=True))
    if human.empty:
        raise InputError(str(ws.path), 0, "no pair has a human grade: nothing to correct with (draw a sample with "
                                          "`trecbench judge validate -w BENCH --sample --size 200` and judge it)")
    design, said = sample_design(ws, human, sample)
    level_used = ws.settings.scale.relevant if rel_level is None else rel_level
    result = correct(model, human, runs, measures, design=design, rel_level=level_used, tuned=tuned, level=level,
                     width=width, baseline=baseline, missing_topics=missing_topics)
    sentence = (f"corrected with people's grades ({reference}): model judge {name!r}, {result.pairs} pairs "
                f"of its qrels graded by people, {result.topics} whole topics; {said}; "
                f"{'PPI++ (tuned lambda)' if tuned else 'PPI (lambda 1)'}, {level:.0%} intervals")
    return result, sentence


def report_correction(ws: WorkspaceLike, runs: dict[str, str], measures: Sequence[str], *, threshold: int | None = None
                      ) -> tuple[Correction, str] | None:
    """What `trecbench report` shows: the runs scored (name: path) corrected as `eval retrieval --corrected`
    corrects them, None when there is no model judge, no human grade or no run."""
    if not runs:
        return None
    try:
        return workspace_correction(ws, dict(runs), list(measures), rel_level=threshold)
    except InputError:
        return None
