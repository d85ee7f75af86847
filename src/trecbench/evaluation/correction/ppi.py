"""Prediction-powered estimates of a mean under people's labels, from a model's labels of everything and people's of a sample.

Two published estimators, and the design-based form the workspace uses:

- `ppi_mean`: the mean estimate of prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan,
  Zrnic, "Prediction-powered inference", Science 382, 2023): with n labeled units (truth y, prediction f)
  and N unlabeled ones (prediction f~),
      theta_PP = mean(f~) - mean(f - y),   interval theta_PP +- z * sqrt(var(f~)/N + var(f - y)/n).
  With `lam=None` its power-tuned form, PPI++ (Angelopoulos, Duchi, Zrnic, "PPI++: Efficient
  Prediction-Powered Inference", arXiv 2311.01453, 2023):
      theta_lam = mean(y) + lam * (mean(f~) - mean(f)),  variance lam^2 var(f~)/N + var(y - lam f)/n,
      lam^ = cov(y, f) / ((1 + n/N) var(f)),
  `var(f)` over the labeled and unlabeled predictions together, clipped to [0, 1] (0 is people alone,
  1 is plain PPI). `population=True` is the finite-population form the topic-level correction uses: the
  "unlabeled" units are all N units (the labeled among them) and the estimand is their mean, so the model's
  term has no sampling error and the rectifier's variance takes the finite-population factor (1 - n/N):
      theta_lam = lam * mean_N(f) + mean_n(y - lam f),  variance (1 - n/N) var_n(y - lam f) / n,
      lam^ = cov_n(y, f) / var_n(f)   (the regression estimator of survey sampling; Cochran, Sampling
  Techniques, 3rd ed. 1977, section 7.1, of which PPI++ with N -> population is the same estimate).

- `design_total`: the label-level correction. The total of x over a population of pairs, x = a truth term
  minus lam times a model term, estimated from a sample whose pair i was drawn with probability pi_i
  (Horvitz-Thompson: sum of x_i / pi_i), its variance by strata with Hajek's approximation (1964),
      V = sum_h n_h / (n_h - 1) * sum_{i in h} (1 - pi_i) (x_i/pi_i - B_h)^2,
      B_h = sum (1 - pi_i) x_i/pi_i / sum (1 - pi_i).
  A stratified simple random sample gives the textbook N_h^2 (1 - n_h/N_h) s_h^2 / n_h per stratum; a
  sample drawn with probabilities proportional to the model's uncertainty (Zrnic and Candes, "Active
  Statistical Inference", ICML 2024) is the single-stratum case. Oosterhuis, Jagerman, Qin, Wang and
  Bendersky ("Reliable Confidence Intervals for Information Retrieval Evaluation Using Generative A.I.",
  KDD 2024) apply PPI to IR metrics with the rectifier of each human-annotated query; a measure linear in
  the gains (P@k, DCG@k) makes the query's rectifier a sum over its pairs, so single judged pairs suffice.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    """A corrected mean: the value, its interval (`level`), standard error and the weight put on the model."""

    value: float
    low: float
    high: float
    se: float
    lam: float  # weight on the model's labels: 1 plain PPI, 0 people alone, between: tuned (PPI++)
    n: int  # human labels it used (pairs or topics)

    @property
    def width(self) -> float:
        return self.high - self.low


def z_of(level: float) -> float:
    """The two-sided normal quantile of a confidence level (1.96 for 0.95)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, not {level}")
    if level == 0.95:
        return Z95
    from scipy.stats import norm

    return float(norm.ppf(0.5 + level / 2))


def t_of(level: float, df: int) -> float:
    """The two-sided Student t quantile of a level with `df` degrees of freedom (2.776 for 0.95 and 4)."""
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2, max(1, df)))


def _estimate(value: float, variance: float, lam: float, n: int, level: float, df: int | None = None) -> Estimate:
    se = math.sqrt(max(variance, 0.0))
    z = z_of(level) if df is None else t_of(level, df)
    return Estimate(float(value), float(value - z * se), float(value + z * se), se, float(lam), n)


def _var(x: np.ndarray) -> float:
    return float(np.var(x, ddof=1)) if len(x) > 1 else 0.0


def _cov(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.cov(x, y, ddof=1)[0, 1]) if len(x) > 1 else 0.0


def clip(lam: float) -> float:
    """A tuned weight kept between people alone (0) and plain PPI (1); NaN (no spread) is plain PPI."""
    return 1.0 if lam != lam else min(1.0, max(0.0, lam))


def ppi_mean(y, f_labeled, f_unlabeled, *, lam: float | None = 1.0, population: bool = False,
             level: float = 0.95, df: int | None = None) -> Estimate:
    """The prediction-powered mean (see the module doc for the formulas and their sources).

    y, f_labeled: truth and prediction of the n labeled units; f_unlabeled: the prediction of the N others
    (with `population`: of all N units, the labeled included). lam: the weight on the model, 1 for PPI,
    None to tune it (PPI++). df: the interval's quantile from Student's t with df degrees of freedom
    instead of the normal (few labeled units). Refuses (ValueError) fewer than two labeled units or
    unequal lengths.
    """
    y, f, g = (np.asarray(v, dtype=np.float64) for v in (y, f_labeled, f_unlabeled))
    n, big = len(y), len(g)
    if len(f) != n:
        raise ValueError(f"{n} labels but {len(f)} predictions of them")
    if n < 2 or big < 1:
        raise ValueError("prediction-powered inference needs at least two labeled units and one unlabeled")
    if population:
        if lam is None:
            spread = _var(f)
            lam = clip(_cov(y, f) / spread if spread > 0 else math.nan)
        value = lam * g.mean() + (y - lam * f).mean()
        variance = max(0.0, 1 - n / big) * _var(y - lam * f) / n
        return _estimate(value, variance, lam, n, level, df)
    if lam is None:
        spread = _var(np.concatenate([f, g]))
        lam = clip(_cov(y, f) / ((1 + n / big) * spread) if spread > 0 else math.nan)
    value = y.mean() + lam * (g.mean() - f.mean())
    variance = lam ** 2 * _var(g) / big + _var(y - lam * f) / n
    return _estimate(value, variance, lam, n, level, df)


def _strata_moments(z1: np.ndarray, z2: np.ndarray, pi: np.ndarray, strata: np.ndarray) -> float:
    """The (co)variance of two Horvitz-Thompson totals whose terms are z1, z2 (x / pi), stratum by stratum:
    n_h/(n_h - 1) * sum c_i (z1_i - B1)(z2_i - B2), c_i = 1 - pi_i, B = sum c z / sum c (Hajek's
    approximation for unequal probabilities, "Asymptotic theory of rejective sampling", 1964; with equal
    probabilities it is the stratified simple random sample's (1 - n_h/N_h) n_h/(n_h - 1) sum (z - mean z)^2)."""
    total = 0.0
    for h in np.unique(strata):
        inside = strata == h
        n_h = int(inside.sum())
        c = 1 - pi[inside]
        if n_h < 2 or c.sum() <= 0:
            continue  # `design_total` merges strata of one pair first; a census (every pi 1) adds nothing
        a, b = z1[inside], z2[inside]
        da, db = a - (c * a).sum() / c.sum(), b - (c * b).sum() / c.sum()
        total += n_h / (n_h - 1) * float((c * da * db).sum())
    return total


def merged_strata(pi: np.ndarray, strata: np.ndarray) -> np.ndarray:
    """Strata with one sampled pair drawn at random (pi < 1) pooled into one: a variance needs two."""
    strata = np.asarray(strata, dtype=object).copy()
    values, counts = np.unique(strata.astype(str), return_counts=True)
    lone = {v for v, c in zip(values, counts) if c < 2}
    for i, s in enumerate(strata.astype(str)):
        if s in lone and pi[i] < 1:
            strata[i] = "\0pooled"
    return strata


def design_total(truth, model, pi, strata=None, *, model_total: float, lam: float | None = 1.0,
                 scale: float = 1.0, level: float = 0.95) -> Estimate:
    """The corrected total of the truth over a population, divided by `scale` (topics, for a mean).

    truth, model: the sampled pairs' terms under people's and the model's labels (weight x gain); pi:
    their inclusion probabilities (0 < pi <= 1); strata: their strata (None: one); model_total: the model
    term summed over the whole population. Estimate: lam * model_total + sum((truth - lam * model) / pi).
    lam None: tuned to the least variance (PPI++'s weight for this design), clipped to [0, 1].
    """
    a, b, p = (np.asarray(v, dtype=np.float64) for v in (truth, model, pi))
    if not (len(a) == len(b) == len(p)):
        raise ValueError("truth, model and pi must have one value per sampled pair")
    if len(a) == 0:
        raise ValueError("no sampled pair: nothing to correct with")
    if np.any(p <= 0) or np.any(p > 1):
        raise ValueError("inclusion probabilities must be in (0, 1]")
    s = merged_strata(p, np.zeros(len(a)) if strata is None else np.asarray(strata))
    za, zb = a / p, b / p
    if lam is None:
        spread = _strata_moments(zb, zb, p, s)
        lam = clip(_strata_moments(za, zb, p, s) / spread if spread > 0 else math.nan)
    x = za - lam * zb
    value = (lam * model_total + x.sum()) / scale
    return _estimate(value, _strata_moments(x, x, p, s) / scale ** 2, lam, len(a), level)


def p_value(estimate: Estimate) -> float:
    """Two-sided p of the normal test that the estimated quantity is 0 (a paired difference of runs)."""
    if estimate.se == 0:
        return 1.0 if estimate.value == 0 else 0.0
    from scipy.stats import norm

    return float(2 * norm.sf(abs(estimate.value) / estimate.se))


def labels_for_width(estimate: Estimate, width: float, level: float = 0.95) -> int:
    """Human labels (pairs or topics) for an interval `width` wide, from the observed standard error:
    n * (2 z se / width)^2, rounded up (the variance taken as falling as 1/n, the finite-population
    factor left out: an upper bound)."""
    if width <= 0:
        raise ValueError("width must be positive")
    if estimate.se == 0:
        return estimate.n
    return max(2, math.ceil(estimate.n * (2 * z_of(level) * estimate.se / width) ** 2))
