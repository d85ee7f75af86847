"""Scoring a new run on old qrels: find the holes of its top k, have a model judge fill them, and say how far to trust it.

A hole is a pair (topic, document) in a run's top `depth` (trec_eval's order, the workspace's topics) that
the qrels of people give no grade: people's qrels are the workspace's qrels (`workspace_qrels`, duplicate
groups propagated) made of the judgments of people and imports only (`people_qrels`), the judges a team would
score a run with; a model's grade does not close a hole. `judge_holes` has a model judge grade the holes
through `judge_pool` (its `pairs`), so they are cached, budgeted, dry-run, batched, leased and resumed as
`judge llm` does and recorded as that model judge's judgments: a hole is judged and paid once, and a second
run asks nothing. `hole_scores` then gives a run's score three ways (people only, holes filled by the
model, corrected: `corrected_score`, through `trecbench.evaluation.correction`) with a
warning whose strength follows the hole share and the filling judge's validated agreement (binarised
kappa from `judge validate`); docs/holes.md gives the thresholds and their reasons.

Mixing model and human labels favours or penalises new runs, the more so the larger the holes
(Abbasiantaeb, Meng, Azzopardi, Aliannejadi, "Can we use large language models to fill relevance judgment
holes?", 2024); a model can fill holes well when it agrees with people (arXiv 2405.04727, "LLMs can patch up
missing relevance judgments in evaluation", 2024).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import pandas as pd

from trecbench.qrels.select import PEOPLE, people_qrels

if TYPE_CHECKING:
    from trecbench.store.workspace import Workspace, WorkspaceLike

__all__ = ["PEOPLE", "people_qrels", "RunHoles", "run_holes", "hole_pairs", "ValidatedJudge", "validations",
           "validated_judge", "HoleFilling", "judge_holes", "HoleWarning", "hole_warning", "HoleScores",
           "corrected_score", "hole_scores", "has_filled_holes", "format_hole_scores", "hole_table"]

DEFAULT_DEPTH = 10
SMALL_HOLES = 0.10  # below: few holes (1 - eval retrieval's Judged@k warning threshold, 0.9)
LARGE_HOLES = 0.30  # from here: the model's grades are a third or more of the run's top k
# warning strength by (hole size, judge's validated agreement): none < note < warning < strong
LEVELS = {("small", "good"): "note", ("small", "fair"): "warning", ("small", "poor"): "warning",
          ("medium", "good"): "warning", ("medium", "fair"): "strong", ("medium", "poor"): "strong",
          ("large", "good"): "strong", ("large", "fair"): "strong", ("large", "poor"): "strong"}


@dataclass(frozen=True)
class RunHoles:
    """A run's top `depth` pairs and the holes among them (pairs people's qrels do not grade)."""

    run: str
    depth: int
    pairs: int  # (topic, document) pairs in its top depth, on the workspace's topics
    holes: pd.DataFrame  # query_id, doc_id, rank: the pairs people gave no grade

    @property
    def share(self) -> float:
        """The share of the run's top-depth pairs that are holes (0 when it has none)."""
        return len(self.holes) / self.pairs if self.pairs else 0.0


def run_holes(ws: WorkspaceLike, runs: Any, *, depth: int = DEFAULT_DEPTH, people: Any = None) -> list[RunHoles]:
    """The holes of each run (paths, frames or {name: run}) in its top `depth` against people's qrels
    (`people`: a `WorkspaceQrels`, default `people_qrels(ws)`)."""
    from trecbench.pooling.rank import named_runs
    from trecbench.store import as_workspace

    ws = as_workspace(ws)
    frames = named_runs(runs)
    people = people_qrels(ws) if people is None else people
    graded = people.qrels[people.qrels["relevance"] >= 0]
    have = set(zip(graded["query_id"].astype(str), graded["doc_id"].astype(str)))
    topics = list(ws.topics())
    return [_holes_of(name, frame, depth, topics, have) for name, frame in frames.items()]


def _holes_of(name: str, frame: pd.DataFrame, depth: int, topics: list[str], have: set) -> RunHoles:
    from trecbench.pooling.pool import build_pool

    top = build_pool({name: frame}, depth=depth, topics=topics).candidates
    top = top.assign(query_id=top["query_id"].astype(str), doc_id=top["doc_id"].astype(str))
    missing = [(q, d) not in have for q, d in zip(top["query_id"], top["doc_id"])]
    holes = top.loc[missing, ["query_id", "doc_id", "best_rank"]].rename(columns={"best_rank": "rank"})
    return RunHoles(name, depth, len(top), holes.reset_index(drop=True))


def hole_pairs(holes: Sequence[RunHoles]) -> pd.DataFrame:
    """The holes of several runs as pairs to judge (query_id, doc_id, priority: the best rank a run gave)."""
    frames = [h.holes for h in holes if len(h.holes)]
    if not frames:
        return pd.DataFrame({"query_id": pd.Series(dtype=object), "doc_id": pd.Series(dtype=object),
                             "priority": pd.Series(dtype="int64")})
    both = pd.concat(frames, ignore_index=True)
    both = both.groupby(["query_id", "doc_id"], as_index=False, sort=True)["rank"].min()
    return both.rename(columns={"rank": "priority"}).sort_values(["query_id", "priority", "doc_id"]).reset_index(
        drop=True)


# ---- the validated judge --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidatedJudge:
    """A model judge `judge validate` compared with people: its settings and its agreement."""

    judge_id: int
    name: str
    model: str
    prompt_id: str
    prompt_hash: str
    batch: int
    samples: int
    examples: int
    temperature: float
    kappa_binary: float
    verdict: str
    pool: str  # the validation sample it was compared on

    def prompt(self, scale: Any = None) -> Any:
        """Its prompt, loaded by name; InputError when the prompt of that name is not the one it used (a file)."""
        from trecbench.errors import InputError
        from trecbench.judging.prompts import load_prompt

        try:
            prompt = load_prompt(self.prompt_id, scale) if scale is not None else load_prompt(self.prompt_id)
        except InputError:
            prompt = None
        if prompt is None or prompt.sha256 != self.prompt_hash:
            raise InputError(self.name, 0, f"the validated judge's prompt {self.prompt_id!r} (sha256 "
                                           f"{self.prompt_hash[:8]}) cannot be loaded by name: give --model and "
                                           "--prompt FILE")
        return prompt


def validations(ws: Workspace) -> list[ValidatedJudge]:
    """The model judges of the workspace's newest validation sample, best first (`judge validate`'s order);
    none when it has no sample judged by people and a model."""
    from trecbench.errors import InputError
    from trecbench.judging.validate import STRATEGY, validate

    if not any(p.strategy == STRATEGY for p in ws.pools()):
        return []
    try:  # kappa's point value does not depend on the bootstrap: few draws
        result = validate(ws, bootstrap=10)
    except InputError:
        return []
    stats = {s.id: s for s in ws.judge_stats()}
    out = []
    for j in result.judges:
        s = stats.get(j.judge_id)
        if s is None or s.judge.kind != "model":
            continue
        p = s.params
        out.append(ValidatedJudge(j.judge_id, s.judge.name, s.judge.model or "", s.judge.prompt_id or "",
                                  s.judge.prompt_hash or "", int(p.get("batch", 1)), int(p.get("samples", 1)),
                                  int(p.get("examples", 0)), float(p.get("temperature", 0.0)),
                                  float(j.kappa_binary.value), j.verdict, result.pool))
    return out


def validated_judge(ws: Workspace) -> ValidatedJudge | None:
    """The workspace's validated judge: `judge validate`'s best judge (first by binarised kappa, then tau),
    None when nothing was validated."""
    found = validations(ws)
    return found[0] if found else None


# ---- filling the holes ----------------------------------------------------------------------------------


@dataclass
class HoleFilling:
    """The runs' holes before judging, and the judging run (`trecbench.judging.pool.JudgeRun`)."""

    holes: list[RunHoles]
    run: Any

    @property
    def pairs(self) -> int:
        """Distinct holes over all the runs."""
        return len(hole_pairs(self.holes))


def judge_holes(ws: WorkspaceLike, runs: Any, config: Any, *, depth: int = DEFAULT_DEPTH, prompt: Any = None, batch: int = 1,
                samples: int = 1, examples: int = 0, limit: int | None = None, max_cost: Any = None,
                dry_run: bool = False, provider_batch: bool = False, collect: bool = False,
                on_start: Callable | None = None, on_progress: Callable | None = None,
                holes: list[RunHoles] | None = None) -> HoleFilling:
    """Judge the holes of `runs` (module doc) with `config`'s model, through `judge_pool(pairs=...)`.

    ws: a `Workspace` or its path. The options are `judge_pool`'s; the judgments are that model judge's
    (`model_judge`: model, prompt, batch, samples, temperature), so holes it judged before are skipped and
    replies it had are read from the cache. `holes`: the runs' holes as `run_holes` found them (else found here).
    """
    from trecbench.judging.pool import judge_pool
    from trecbench.store import as_workspace

    ws = as_workspace(ws)
    holes = run_holes(ws, runs, depth=depth) if holes is None else holes
    frame = hole_pairs(holes)
    frame.attrs["name"] = "holes"
    run = judge_pool(ws, config, prompt=prompt, batch=batch, samples=samples, examples=examples, limit=limit,
                     max_cost=max_cost, dry_run=dry_run, provider_batch=provider_batch, collect=collect, pairs=frame,
                     on_start=on_start, on_progress=on_progress)
    return HoleFilling(holes, run)


# ---- scores with holes, and how far to trust them -------------------------------------------------------


@dataclass(frozen=True)
class HoleWarning:
    """How strongly to warn about a run's filled score: level none, note, warning or strong, and why."""

    level: str
    message: str


def hole_warning(share: float, kappa: float | None, *, depth: int = DEFAULT_DEPTH, judge: str | None = None,
                 unfilled: int = 0) -> HoleWarning:
    """The warning for a run whose top `depth` has `share` holes, filled by a judge of validated binarised
    `kappa` (None: not validated); `unfilled` holes no model graded (they count as not relevant).

    Hole size: small below SMALL_HOLES, large from LARGE_HOLES; the judge: good or fair by `judge validate`'s
    kappa thresholds (GOOD, FAIR), else poor (an unvalidated judge counts as poor); LEVELS combines them."""
    from trecbench.judging.validate import FAIR, GOOD

    if share <= 0:
        return HoleWarning("none", "")
    size = "small" if share < SMALL_HOLES else "large" if share >= LARGE_HOLES else "medium"
    quality = ("poor" if kappa is None or kappa != kappa else "good" if kappa >= GOOD["kappa_binary"]
               else "fair" if kappa >= FAIR["kappa_binary"] else "poor")
    level = LEVELS[(size, quality)]
    agreement = ("not validated (`trecbench judge validate`)" if kappa is None or kappa != kappa
                 else f"validated binarised kappa {kappa:.2f}, {quality}")
    who = f"the model judge {judge} ({agreement})" if judge else "no model judge"
    advice = {"note": "few holes and a judge that agrees with people: the filled score is close to people's",
              "warning": "compare it with the pooled runs with care: the filled score leans on the model's grades",
              "strong": "do not rank it against the pooled runs on the filled score: model grades mixed with "
                        "people's favour or penalise a new run in proportion to its holes; have people judge "
                        "them, or judge the whole pool with the model (docs/holes.md)"}[level]
    text = f"{share:.0%} of its top {depth} unjudged by people, filled by {who}; {advice}"
    if unfilled:
        text += (f"; {unfilled} hole(s) have no grade and count as not relevant: `trecbench judge holes -w BENCH "
                 "RUN` fills them")
    return HoleWarning(level, text)


@dataclass(frozen=True)
class HoleScores:
    """A run's score three ways: people's qrels only, holes filled by a model, corrected (an estimate, or why there is none)."""

    run: str
    measure: str
    depth: int
    pairs: int
    holes: int  # pairs of its top depth people did not grade
    filled: int  # of those, graded by the filling judge
    judge: str | None  # the model judge that filled them (None: no model graded any)
    kappa: float | None  # its validated binarised kappa (None: not validated)
    people: float
    with_holes_filled: float
    corrected: Any = None  # `corrected_score`'s figure: an estimate with its interval, or why there is none
    warning: HoleWarning = field(default_factory=lambda: HoleWarning("none", ""))

    @property
    def share(self) -> float:
        return self.holes / self.pairs if self.pairs else 0.0

    def as_dict(self) -> dict:
        corrected = self.corrected
        if corrected is not None and hasattr(corrected, "as_dict"):
            corrected = corrected.as_dict()
        return {"run": self.run, "measure": self.measure, "depth": self.depth, "pairs": self.pairs,
                "holes": self.holes, "filled": self.filled, "judge": self.judge, "kappa_binary": self.kappa,
                "people": self.people, "with_holes_filled": self.with_holes_filled, "corrected": corrected,
                "warning": {"level": self.warning.level, "message": self.warning.message}}


def corrected_score(ws: Workspace, run: str, frame: pd.DataFrame, measure: str, *, judge: str | None,
                    rel_level: int) -> Any:
    """The corrected figure of a run whose holes a model filled: the filling judge's qrels corrected by
    people's grades of the pairs it also graded (`trecbench.evaluation.correction.workspace_correction`:
    prediction-powered inference). Returns the estimate (`value`, `low`, `high`), or a short sentence saying
    why there is none (no judge, no pair people graded, a measure the estimators do not cover)."""
    from trecbench.errors import InputError
    from trecbench.evaluation.correction.workspace import workspace_correction

    if judge is None:
        return "not available (no model judge filled a hole)"
    try:
        result, _ = workspace_correction(ws, {run: frame}, [measure], judge=judge, rel_level=rel_level)
    except InputError as e:
        return f"not available ({e.problems[0].message if e.problems else e})"
    found = [c for c in result.scores if c.run == run and c.measure == measure]
    if not found or found[0].estimate is None:
        return f"not available ({measure} is not corrected: see docs/correction.md)"
    return found[0].estimate


def hole_scores(ws: WorkspaceLike, runs: Any, measure: str, *, depth: int = DEFAULT_DEPTH, rel_level: int | None = None,
                judge: str | None = None) -> list[HoleScores]:
    """Each run's score by `measure` three ways (module doc), its holes in its top `depth`, and the warning.

    The filling judge is `judge` (a model judge's name), else the model judge that graded the most of the
    run's holes (ties: the newest). Filled qrels: people's grades, and that judge's latest grade of every pair
    people did not grade.
    """
    from trecbench.evaluation import evaluate
    from trecbench.pooling.rank import named_runs
    from trecbench.store import as_workspace

    ws = as_workspace(ws)
    rel_level = ws.settings.scale.relevant if rel_level is None else rel_level
    frames = named_runs(runs)
    people = people_qrels(ws)
    human = people.qrels[["query_id", "doc_id", "relevance"]].astype({"query_id": str, "doc_id": str})
    grades = _model_grades(ws)
    kappas = {v.name: v.kappa_binary for v in validations(ws)} if not grades.empty else {}
    out = []
    for holes in run_holes(ws, frames, depth=depth, people=people):
        name, frame = holes.run, frames[holes.run]
        chosen = judge if judge is not None else _filling_judge(grades, holes.holes)
        theirs = grades[grades["judge"] == chosen] if chosen is not None else grades.iloc[0:0]
        have = pd.MultiIndex.from_arrays([human["query_id"], human["doc_id"]])
        fill = theirs[~pd.MultiIndex.from_arrays([theirs["query_id"], theirs["doc_id"]]).isin(have)]
        filled_qrels = pd.concat([human, fill[["query_id", "doc_id", "relevance"]]], ignore_index=True)
        hole_keys = set(zip(holes.holes["query_id"], holes.holes["doc_id"]))
        filled = sum((q, d) in hole_keys for q, d in zip(fill["query_id"], fill["doc_id"]))
        score = _score(evaluate, human, name, frame, measure, rel_level)
        with_fill = _score(evaluate, filled_qrels, name, frame, measure, rel_level)
        kappa = kappas.get(chosen) if chosen is not None else None
        warning = hole_warning(holes.share, kappa, depth=depth, judge=chosen if filled else None,
                               unfilled=len(holes.holes) - filled)
        corrected = corrected_score(ws, name, frame, measure, judge=chosen if filled else None, rel_level=rel_level)
        out.append(HoleScores(name, measure, depth, holes.pairs, len(holes.holes), filled,
                              chosen if filled else None, kappa, score, with_fill, corrected, warning))
    return out


def _score(evaluate: Callable, qrels: pd.DataFrame, name: str, frame: pd.DataFrame, measure: str,
           rel_level: int) -> float:
    if qrels.empty:
        return float("nan")
    return float(evaluate(qrels, {name: frame}, [measure], rel_level=rel_level).iloc[0, 0])


def _model_grades(ws: Workspace) -> pd.DataFrame:
    """Each model judge's latest grade of each pair: query_id, doc_id, relevance, judge, id."""
    judged = ws.judgments(direct=True)
    judged = judged[judged["judge_kind"] == "model"].sort_values("id")
    judged = judged.drop_duplicates(["query_id", "doc_id", "judge"], keep="last")
    out = judged[["query_id", "doc_id", "grade", "judge", "id"]].rename(columns={"grade": "relevance"})
    return out.astype({"query_id": str, "doc_id": str, "relevance": int})


def _filling_judge(grades: pd.DataFrame, holes: pd.DataFrame) -> str | None:
    """The model judge that graded the most of these holes (ties: the one with the newest judgment)."""
    if grades.empty or holes.empty:
        return None
    keys = pd.MultiIndex.from_arrays([holes["query_id"].astype(str), holes["doc_id"].astype(str)])
    mine = grades[pd.MultiIndex.from_arrays([grades["query_id"], grades["doc_id"]]).isin(keys)]
    if mine.empty:
        return None
    counts = mine.groupby("judge").agg(n=("id", "size"), newest=("id", "max"))
    return str(counts.sort_values(["n", "newest"], ascending=False).index[0])


def has_filled_holes(ws: Workspace, runs: Any, *, depth: int = DEFAULT_DEPTH) -> bool:
    """Whether a model judge graded any hole of these runs' top `depth` (what makes `eval retrieval -w` print
    the three figures: without it the output stays as it was)."""
    grades = _model_grades(ws)
    if grades.empty:
        return False
    graded = set(zip(grades["query_id"], grades["doc_id"]))
    return any((q, d) in graded for h in run_holes(ws, runs, depth=depth)
               for q, d in zip(h.holes["query_id"], h.holes["doc_id"]))


def format_hole_scores(scores: Sequence[HoleScores]) -> list[str]:
    """The lines `eval retrieval -w` prints on stderr: per run its holes, the three figures, the warning."""
    lines = []
    for s in scores:
        corrected = "not available" if s.corrected is None else _interval(s.corrected)
        judge = f"filled by {s.judge}: {s.filled}" if s.judge else "filled by no model judge"
        lines.append(f"holes of {s.run}: {s.holes} of {s.pairs} pairs of its top {s.depth} ({s.share:.0%}) "
                     f"unjudged by people; {judge}")
        lines.append(f"  {s.measure}: people only {s.people:.4f}; holes filled {s.with_holes_filled:.4f}; "
                     f"corrected {corrected}")
        if s.warning.level != "none":
            word = {"note": "note", "warning": "warning", "strong": "strong warning"}[s.warning.level]
            lines.append(f"{word}: {s.run}: {s.warning.message}")
    return lines


def _interval(estimate: Any) -> str:
    value, low, high = (getattr(estimate, k, None) for k in ("value", "low", "high"))
    if value is None:
        return str(estimate)
    return f"{value:.4f} [{low:.4f}, {high:.4f}]" if low is not None and high is not None else f"{value:.4f}"


def hole_table(fillings: Mapping[str, RunHoles] | Sequence[RunHoles]) -> list[str]:
    """One line per run: its holes before judging (what `judge holes` prints first)."""
    holes = list(fillings.values()) if isinstance(fillings, Mapping) else list(fillings)
    return [f"{h.run}: {len(h.holes)} of {h.pairs} pairs of its top {h.depth} ({h.share:.0%}) unjudged by people"
            for h in holes]
