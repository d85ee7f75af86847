"""The estimators on fixed tiny inputs against the published formulas computed by hand (the numbers written out)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from trecbench.evaluation.correction import design_total, labels_for_width, p_value, ppi_mean
from trecbench.evaluation.correction.ppi import Z95

Y = [1, 0, 1, 0]  # people's labels of the n = 4 labeled units
F = [1, 0, 1, 1]  # the model's labels of them
F_OTHERS = [1, 1, 0, 1, 0, 0]  # the model's labels of the N = 6 unlabeled units


def test_ppi_mean_is_angelopoulos_et_al_2023():
    # theta = mean(f~) - mean(f - y) = 3/6 - 1/4 = 0.25
    # var = var(f~)/N + var(f - y)/n = 0.3/6 + 0.25/4 = 0.1125 (sample variances, n - 1)
    got = ppi_mean(Y, F, F_OTHERS, lam=1.0)
    assert got.value == pytest.approx(0.25, abs=1e-12)
    assert got.se == pytest.approx(math.sqrt(0.1125), abs=1e-12)
    assert (got.low, got.high) == pytest.approx((0.25 - Z95 * 0.33541019662496846, 0.25 + Z95 * 0.33541019662496846))
    assert got.lam == 1.0 and got.n == 4


def test_ppi_plus_plus_tunes_lambda_as_angelopoulos_duchi_zrnic_2023():
    # lam = cov(y, f) / ((1 + n/N) var(f, labeled and unlabeled)) = (1/6) / ((1 + 4/6) * 2.4/9) = 0.375
    # theta = mean(y) + lam (mean(f~) - mean(f)) = 0.5 + 0.375 * (0.5 - 0.75) = 0.40625
    # var = lam^2 var(f~)/N + var(y - lam f)/n = 0.140625 * 0.3/6 + (0.73046875/3)/4 = 0.0679036458...
    got = ppi_mean(Y, F, F_OTHERS, lam=None)
    assert got.lam == pytest.approx(0.375, abs=1e-12)
    assert got.value == pytest.approx(0.40625, abs=1e-12)
    assert got.se ** 2 == pytest.approx(0.00703125 + 0.73046875 / 12, abs=1e-12)


def test_the_finite_population_form_is_the_regression_estimator():
    # all N = 10 units judged by the model (the 4 labeled among them): mean 0.6
    # lam = cov(y, f) / var(f) on the labeled = (1/6) / 0.25 = 2/3
    # theta = lam * 0.6 + mean(y - lam f) = 0.4 + 0 ; var = (1 - 4/10) * var(y - lam f) / 4 = 0.6 * (2/9) / 4
    got = ppi_mean(Y, F, F + F_OTHERS, lam=None, population=True)
    assert got.lam == pytest.approx(2 / 3, abs=1e-12)
    assert got.value == pytest.approx(0.4, abs=1e-12)
    assert got.se ** 2 == pytest.approx(0.6 * (2 / 9) / 4, abs=1e-12)
    census = ppi_mean(Y, F, F, lam=None, population=True)  # every unit labeled: the truth, no error
    assert census.value == pytest.approx(0.5) and census.se == 0


def test_design_total_is_horvitz_thompson_with_the_stratified_variance():
    truth, model = [1, 0, 1, 0], [1, 1, 2, 0]
    pi, strata = [0.5, 0.5, 0.25, 0.25], ["A", "A", "B", "B"]
    # lam 1: x = (truth - model)/pi = [0, -2, -4, 0]; total 10 - 6 = 4
    # var: A (1 - 0.5) * 2/1 * ((0+1)^2 + (-2+1)^2) = 2 ; B (1 - 0.25) * 2 * ((-4+2)^2 + (0+2)^2) = 12
    got = design_total(truth, model, pi, strata, model_total=10.0, lam=1.0)
    assert got.value == pytest.approx(4.0) and got.se ** 2 == pytest.approx(14.0)
    halved = design_total(truth, model, pi, strata, model_total=10.0, lam=1.0, scale=2.0)
    assert halved.value == pytest.approx(2.0) and halved.se ** 2 == pytest.approx(3.5)
    # tuned: cov(truth/pi, model/pi) / var(model/pi) by the same strata = (0 + 24) / (0 + 48) = 0.5
    # x = [2, 0, 4, 0] - 0.5 [2, 2, 8, 0] = [1, -1, 0, 0]; total 5 + 0 ; var A 2, B 0
    tuned = design_total(truth, model, pi, strata, model_total=10.0, lam=None)
    assert tuned.lam == pytest.approx(0.5) and tuned.value == pytest.approx(5.0) and tuned.se ** 2 == pytest.approx(2.0)


def test_a_stratified_simple_random_sample_gets_the_textbook_variance():
    rng = np.random.default_rng(4)
    sizes, taken = {"a": 50, "b": 120, "c": 30}, {"a": 10, "b": 15, "c": 6}
    truth, model, pi, strata, textbook = [], [], [], [], 0.0
    for h, n_h in taken.items():
        a, b = rng.integers(0, 4, n_h).astype(float), rng.integers(0, 4, n_h).astype(float)
        truth += a.tolist()
        model += b.tolist()
        pi += [n_h / sizes[h]] * n_h
        strata += [h] * n_h
        textbook += sizes[h] ** 2 * (1 - n_h / sizes[h]) * np.var(a - b, ddof=1) / n_h  # Cochran (5.7)
    got = design_total(truth, model, pi, strata, model_total=0.0, lam=1.0)
    assert got.se ** 2 == pytest.approx(textbook, rel=1e-12)


def test_a_lone_pair_of_a_stratum_is_pooled_and_a_census_adds_no_variance():
    got = design_total([1, 0, 1], [0, 0, 1], [0.5, 0.2, 1.0], ["x", "y", "z"], model_total=3.0, lam=1.0)
    # x and y pooled: z-values (1-0)/0.5 = 2 and 0, weights 1 - pi = 0.5 and 0.8, B = (0.5*2 + 0)/1.3 = 10/13;
    # 2/1 * (0.5 (16/13)^2 + 0.8 (10/13)^2) = 32/13 (Hajek's approximation); z is a census (pi 1): nothing
    assert got.value == pytest.approx(5.0) and got.se ** 2 == pytest.approx(32 / 13)


def test_the_labels_for_a_width_and_the_test_of_a_difference():
    got = ppi_mean(Y, F, F_OTHERS, lam=1.0)
    # n (2 z se / width)^2 = 4 * (2 * 1.959964 * 0.335410 / 0.1)^2 = 691.5... -> 692
    assert labels_for_width(got, 0.1) == math.ceil(4 * (2 * Z95 * math.sqrt(0.1125) / 0.1) ** 2) == 692
    # two-sided normal p of 0.25 / 0.335410 = 0.745356: 2 * (1 - Phi(0.745356)) = 0.456057
    assert p_value(got) == pytest.approx(0.4560565, abs=1e-6)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="at least two labeled"):
        ppi_mean([1], [1], [0, 1])
    with pytest.raises(ValueError, match="inclusion probabilities"):
        design_total([1, 0], [1, 1], [0.5, 0.0], model_total=1.0)
    with pytest.raises(ValueError, match="one value per sampled pair"):
        design_total([1, 0], [1], [0.5, 0.5], model_total=1.0)
