"""Do a model and people agree on support? Cohen's kappa and the confusion matrix on the pairs both graded, and
Kendall's tau between the orderings of the runs under each; and the blind sample people grade first.

The comparison follows the TREC 2024 RAG Track's support study (Thakur et al., "Support Evaluation for the
TREC 2024 RAG Track: Comparing Human versus LLM Judges", SIGIR 2025: exact agreement of 56% between GPT-4o
and people judging from scratch, 72% when people post-edited the model's grades). Kappa is Cohen's (1960) on
the grades (`qrels.agreement.cohen_kappa`), and binarised: supported (full, partial) or not (none,
contradicts). Tau is Kendall's tau-b (Kendall 1945; scipy), as relevance validation computes it, between the
runs' weighted support precision under the two judges, and between their weighted support recall.

A pair is compared when both judges graded it on the sentence's current text. Each side's grade of a pair is
the one `evaluation.support.chosen_grades` scores: the newest person's for the people, else the named
`reference` judge's (an import, another model) and the model judge's newest. The runs are scored by
`evaluation.support.score_support` (SupportP and SupportR, macro: the mean over topics) on the pairs both
graded only, each sentence cut to its compared citations (`run_scores`), so that the two orderings differ
only by the grades.

The verdict uses relevance validation's thresholds (`judging.validate.verdict`) with the binarised kappa
and the lower of the two taus.
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from trecbench.answers.support import GRADES, GRADES_WITH_CONTRADICTS
from trecbench.errors import InputError
from trecbench.store import Workspace
from trecbench.store.support import SupportKey, SupportRow, SupportSentence

SUPPORTED = ("full", "partial")  # the binarised kappa's "supported"
PEOPLE = "people"  # the default reference: the newest person's grade of each pair
SAMPLE_KEY = "support_sample:"  # meta key prefix of a stored blind sample


@dataclass(frozen=True)
class SupportAgreement:
    """One model judge against the reference on the pairs both graded."""

    judge: str
    reference: str
    pairs: int
    exact: float  # share of pairs given the same grade
    confusion: pd.DataFrame  # rows: the reference's grade, columns: the judge's
    kappa: float
    kappa_binary: float
    tau_precision: float
    tau_recall: float
    scores: pd.DataFrame  # run x (precision_reference, precision_judge, recall_reference, recall_judge)
    verdict: str

    def as_dict(self) -> dict:
        def num(v: float) -> float | None:
            return None if v != v else float(v)

        return {"judge": self.judge, "reference": self.reference, "pairs": self.pairs, "exact": num(self.exact),
                "kappa": num(self.kappa), "kappa_binary": num(self.kappa_binary),
                "tau_precision": num(self.tau_precision), "tau_recall": num(self.tau_recall),
                "verdict": self.verdict,
                "confusion": {a: {b: int(v) for b, v in row.items()} for a, row in self.confusion.iterrows()},
                "scores": {run: {k: float(v) for k, v in row.items()} for run, row in self.scores.iterrows()}}


def reference_grades(ws: Workspace, reference: str | None = None,
                     sentences: Sequence[SupportSentence] | None = None) -> tuple[dict[SupportKey, str], str]:
    """(the reference's grades on the registered sentences' current texts, its label): people's (None or
    `people`/`human`: the newest person's grade of each pair, `chosen_grades` over people's rows), else the
    judge named `reference`'s newest; InputError when it graded nothing."""
    from trecbench.evaluation.support import chosen_grades

    sentences = ws.support_sentences() if sentences is None else sentences
    if reference in (None, PEOPLE, "human"):
        grades, label = chosen_grades(ws.support_rows(kind="human"), sentences=sentences), PEOPLE
    else:
        try:
            grades, label = chosen_grades(ws.support_rows(), judge=reference, sentences=sentences), str(reference)
        except ValueError:
            grades, label = {}, str(reference)
    if not grades:
        who = "no person has" if label == PEOPLE else f"the judge {label!r} has"
        raise InputError(str(ws.path), 0, f"{who} graded support in this workspace: people grade the sample in "
                                          "the web app, or import their grades (`trecbench support import`)")
    return grades, label


def confusion_matrix(pairs: Sequence[tuple[str, str]], grades: Sequence[str]) -> np.ndarray:
    """Counts of (reference grade, judge grade) over `pairs`, rows and columns in the order of `grades`."""
    index = {g: i for i, g in enumerate(grades)}
    matrix = np.zeros((len(grades), len(grades)), dtype=np.int64)
    for a, b in pairs:
        matrix[index[a], index[b]] += 1
    return matrix


def run_scores(grades: Mapping[SupportKey, str]) -> dict[str, tuple[float, float]]:
    """{run: (SupportP, SupportR)} of the graded pairs by `evaluation.support.score_support`, macro (the mean over
    the run's topics): each sentence is made of its graded citations only, so every pair given counts in
    SupportP and every sentence with one in SupportR (its best-supported citation's weight)."""
    from trecbench.evaluation.support.scoring import SUPPORT_P, SUPPORT_R, score_support
    from trecbench.evaluation.topic_scores import summary

    cited: dict[tuple[str, str, int], list[str]] = defaultdict(list)
    for run, qid, sentence, docid in grades:
        cited[(run, qid, sentence)].append(docid)
    sentences = [SupportSentence(run, qid, n, "", "", tuple(docids)) for (run, qid, n), docids in cited.items()]
    runs = summary(score_support(sentences, grades).frame)
    return {str(run): (float(row[SUPPORT_P]), float(row[SUPPORT_R])) for run, row in runs.iterrows()}


def kendall_tau(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Kendall's tau-b between the orderings of the runs both score; nan with fewer than two runs or when one
    side gives every run the same score."""
    runs = sorted(set(a) & set(b))
    x, y = [a[r] for r in runs], [b[r] for r in runs]
    if len(runs) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return float("nan")
    from scipy.stats import kendalltau

    return float(kendalltau(x, y).statistic)


def compare(reference: Mapping[SupportKey, str], judged: Mapping[SupportKey, str], *,
            judge: str, label: str) -> SupportAgreement | None:
    """The agreement of `judged` with `reference` on the pairs both graded (None when they share none)."""
    from trecbench.qrels.agreement import cohen_kappa
    from trecbench.judging.validate import verdict

    both = [k for k in judged if k in reference]
    if not both:
        return None
    given = [(reference[k], judged[k]) for k in both]
    grades = GRADES_WITH_CONTRADICTS if any("contradicts" in p for p in given) else GRADES
    matrix = confusion_matrix(given, grades)
    binary = confusion_matrix([(str(a in SUPPORTED), str(b in SUPPORTED)) for a, b in given], ("False", "True"))
    ours = run_scores({k: reference[k] for k in both})
    theirs = run_scores({k: judged[k] for k in both})
    tau_p = kendall_tau({r: s[0] for r, s in ours.items()}, {r: s[0] for r, s in theirs.items()})
    tau_r = kendall_tau({r: s[1] for r, s in ours.items()}, {r: s[1] for r, s in theirs.items()})
    kappa_binary = cohen_kappa(binary)
    scores = pd.DataFrame({"precision_reference": {r: s[0] for r, s in ours.items()},
                           "precision_judge": {r: s[0] for r, s in theirs.items()},
                           "recall_reference": {r: s[1] for r, s in ours.items()},
                           "recall_judge": {r: s[1] for r, s in theirs.items()}}).sort_index()
    scores.index.name = "run"
    confusion = pd.DataFrame(matrix, index=pd.Index(grades, name=label), columns=pd.Index(grades, name="model"))
    return SupportAgreement(judge, label, len(both), float(np.trace(matrix)) / len(both), confusion,
                            cohen_kappa(matrix), kappa_binary, tau_p, tau_r, scores,
                            verdict(kappa_binary, min(tau_p, tau_r) if tau_p == tau_p and tau_r == tau_r
                                    else float("nan")))


def support_agreement(ws: Workspace, *, reference: str | None = None, judge: str | None = None
                      ) -> list[SupportAgreement]:
    """Every model judge of support (or only `judge`) against the reference (people by default), on the pairs
    both graded; InputError when the reference graded nothing or no model judge shares a pair with it."""
    from trecbench.evaluation.support import chosen_grades

    sentences = ws.support_sentences()
    ref, label = reference_grades(ws, reference, sentences)
    rows = ws.support_rows(judge=judge) if judge is not None else ws.support_rows(kind="model")
    by_judge: dict[str, list[SupportRow]] = defaultdict(list)
    for r in rows:
        if r.judge != label:
            by_judge[r.judge].append(r)
    results = [c for name, judged in sorted(by_judge.items())
               if (c := compare(ref, chosen_grades(judged, sentences=sentences), judge=name, label=label)) is not None]
    if not results:
        who = f"the judge {judge!r}" if judge is not None else "no model judge"
        raise InputError(str(ws.path), 0, f"{who} graded none of the pairs {label} graded: run `trecbench judge "
                                          "support` on the same answers")
    return results


def format_agreement(results: Sequence[SupportAgreement]) -> str:
    """The agreement as text: per judge its numbers, the confusion matrix and the runs' scores under each."""
    lines = []
    for a in results:
        lines.append(f"{a.judge} vs {a.reference}: {a.pairs} pairs, exact agreement {a.exact:.3f}, kappa "
                     f"{a.kappa:.3f}, binarised (full/partial vs none) {a.kappa_binary:.3f}; Kendall tau of the "
                     f"runs: precision {a.tau_precision:.3f}, recall {a.tau_recall:.3f}; verdict {a.verdict}")
        lines.append(f"  confusion (rows {a.reference}, columns the model):")
        lines += ["    " + line for line in a.confusion.to_string().splitlines()]
        lines.append("  runs (weighted support precision and recall on these pairs):")
        lines += ["    " + line for line in a.scores.round(4).to_string().splitlines()]
    from trecbench.judging.validate import RULE

    return "\n".join(lines + [RULE])


# ---- the blind sample people grade first ----

class SupportSample(NamedTuple):
    """A stored sample: its name, the pairs drawn (in judging order) and, per run, (drawn, candidates)."""

    name: str
    pairs: tuple[SupportKey, ...]
    strata: dict[str, tuple[int, int]]


def draw_support_sample(ws: Workspace, size: int, *, seed: int = 0, name: str = "support-validation") -> SupportSample:
    """Draw `size` registered (sentence, citation) pairs no person has graded, stratified by run (largest
    remainder shares, at least one per run while `size` allows), and keep them in the workspace under `name`
    (meta `support_sample:NAME`, JSON {"seed", "pairs", "strata"}) for people to grade blind.

    InputError when no pair is left to draw or the name is taken."""
    from trecbench.judging.validate import allocate

    people = {r.key for r in ws.support_rows(kind="human")}
    candidates = [(s.run_id, s.qid, s.sentence, d) for s in ws.support_sentences() for d in dict.fromkeys(s.citations)]
    candidates = [k for k in candidates if k not in people]
    if not candidates:
        raise InputError(str(ws.path), 0, "no sentence-citation pair to sample: register answers first (`trecbench "
                                          "judge support` or `trecbench support add`), or people graded them all")
    if ws.meta(SAMPLE_KEY + name) is not None:
        raise InputError(str(ws.path), 0, f"a support sample named {name!r} exists: choose another --name")
    runs = pd.Series([k[0] for k in candidates])
    sizes = runs.value_counts().sort_index()
    share = allocate(sizes, min(size, len(candidates)))
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for run, k in share.items():
        chosen.extend(rng.choice(np.flatnonzero(runs.to_numpy() == run), size=int(k), replace=False).tolist())
    order = [candidates[i] for i in sorted(chosen)]
    order = [order[i] for i in rng.permutation(len(order))]  # judging order: random, so no run comes first
    strata = {str(run): (int(share[run]), int(sizes[run])) for run in sizes.index}
    ws.set_meta(SAMPLE_KEY + name, json.dumps({"seed": seed, "pairs": [list(k) for k in order],
                                               "strata": {r: list(v) for r, v in strata.items()}}))
    return SupportSample(name, tuple(order), strata)


def support_sample(ws: Workspace, name: str = "support-validation") -> SupportSample | None:
    """The stored sample `name` (None when there is none): what the assessor page offers people first."""
    raw = ws.meta(SAMPLE_KEY + name)
    return None if raw is None else _read_sample(name, raw)


def _read_sample(name: str, raw: str) -> SupportSample:
    data = json.loads(raw)
    return SupportSample(name, tuple((r, q, int(n), d) for r, q, n, d in data["pairs"]),
                         {r: (int(k), int(n)) for r, (k, n) in data["strata"].items()})


def support_samples(ws: Workspace) -> list[SupportSample]:
    """Every stored support sample, by name."""
    return [_read_sample(key[len(SAMPLE_KEY):], raw) for key, raw in ws.metas(SAMPLE_KEY).items()]


def sample_first(ws: Workspace) -> list[SupportKey]:
    """The pairs of every stored sample, each once, samples by name and each in its judging order: what the
    assessor page offers people before any other pair, so that a blind human sample is graded first."""
    return list(dict.fromkeys(key for sample in support_samples(ws) for key in sample.pairs))
