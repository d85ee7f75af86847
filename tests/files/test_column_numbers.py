"""files.columns parses scores and grades as strtod and int() do, on every shape its fast paths take (up to 15
digits by one division, 16 to 18 by one extended-precision division, the rest by numpy's string conversion),
and refuses what is not a number; ids come back as the strings they were."""
from __future__ import annotations

import numpy as np
import pytest

import trecbench.files.columns as columns
from trecbench.files.columns import Ids, split_fields


def decimals(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    values = rng.gamma(2.0, 4.0, n) * 10.0 ** rng.integers(-9, 9, n)
    shapes = rng.integers(0, 7, n)
    out = []
    for x, shape, places in zip(values.tolist(), shapes.tolist(), rng.integers(0, 21, n).tolist()):
        out.append([repr(x), f"{x:.6f}", f"{-x:.17g}", f"{x:.{places}f}", f"{int(x * 1000)}.", f"{x:.3e}",
                    f"+{x:.16g}"][shape])
    return out


EDGES = ["-0.0", "+1.5", ".5", "-.5", "5.", "0", "+0", "-0", "000000000000000000001.5", "123456789012345678",
         "1234567890123456789", "9007199254740993", "9007199254740993.0", "0.1000000000000000055511151231257827",
         "1" * 40 + ".5", "4503599627370497.5", "2.2250738585072014e-308", "17976931348623157" + "0" * 292]


def scores_of(texts: list[str]) -> np.ndarray:
    data = "".join(f"q{i % 7} d{i} {t}\n" for i, t in enumerate(texts)).encode()
    cols = split_fields(data, 3, ids=(0, 1), floats=(2,))
    assert cols is not None
    return cols[2]


def test_scores_are_the_doubles_strtod_gives_bit_for_bit():
    texts = decimals(100_000, seed=3) + EDGES
    got, want = scores_of(texts), np.array([float(t) for t in texts])
    assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist()


def test_values_of_16_to_18_digits_halfway_between_two_doubles_round_to_even_as_strtod_does():
    # m / 10**f exactly halfway: the extended division lands on a midpoint, so these go to the exact conversion
    texts = [str(2**53 + 1 + 2 * k) for k in range(200)] + [f"{2**54 + 2 + 4 * k}.0" for k in range(200)]
    got, want = scores_of(texts), np.array([float(t) for t in texts])
    assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist()


@pytest.mark.parametrize("text", ["1.2.3", "+", "-", ".", "1-2", "e5", "5e", "--1", "1+", "inf", "nan", "0x10"])
def test_what_is_not_a_number_sends_the_file_to_the_general_reader(text):
    assert split_fields(f"q d {text}\n".encode(), 3, floats=(2,)) is None


def test_grades_are_the_integers_int_gives_and_a_decimal_is_refused():
    rng = np.random.default_rng(5)
    texts = [str(x) for x in rng.integers(-10**17, 10**17, 2000).tolist()] + ["+5", "0", "-0", "9" * 18, "12345678901234567"]
    data = "".join(f"q d{i} {t}\n" for i, t in enumerate(texts)).encode()
    cols = split_fields(data, 3, ints=(2,))
    assert cols is not None and cols[2].tolist() == [int(t) for t in texts]
    assert split_fields(b"q d 1.5\n", 3, ints=(2,)) is None


def test_ids_come_back_as_the_strings_they_were():
    texts = ["a", "msmarco_passage_01_123", "é", "x" * 70, "a#b", "q\x01"]
    assert Ids.of(texts).strings() == texts
    assert Ids.of(["line\nbreak", "nul\x00inside", ""]).strings() == ["line\nbreak", "nul\x00inside", ""]
    data = "".join(f"{t} Q0 {t}-doc 1 1.5 tag\n" for t in texts[:5]).encode()
    cols = split_fields(data, 6, ids=(0, 2), floats=(4,))
    assert cols[0].strings() == texts[:5] and cols[2].strings() == [f"{t}-doc" for t in texts[:5]]
    assert list(cols[0].objects()) == texts[:5]


@pytest.mark.skipif(not columns._X87, reason="x87 extended precision (the bit test reads its layout)")
def test_the_halfway_test_on_the_extended_bits_finds_every_midpoint_the_arithmetic_one_finds():
    # quotients of 16-18 digit mantissas, some exactly halfway (odd integers between 2**53 and 2**54, and
    # 2**54 + 2 + 4k over 10). The arithmetic test also takes quarter points above a power of two (where
    # the step it reads from the double above is twice the step below): those round once correctly.
    rng = np.random.default_rng(11)
    mantissa = np.concatenate([rng.integers(10**15, 10**18, 20_000), 2**53 + 1 + 2 * np.arange(300),
                               10 * (2**54 + 2 + 4 * np.arange(300))])
    fraction = np.concatenate([rng.integers(0, 19, 20_000), np.zeros(300, int), np.ones(300, int)])
    exact = mantissa.astype(np.longdouble) / columns._POW10_LONG[fraction]
    value = exact.astype(np.float64)
    bits, arithmetic = columns._halfway(exact, value, bits=True), columns._halfway(exact, value, bits=False)
    assert bits[-600:].all() and not (bits & ~arithmetic).any()
    only = np.flatnonzero(arithmetic & ~bits)
    assert len(only) > 50
    assert value[only].tolist() == [float(f"{m}e-{f}") for m, f in zip(mantissa[only].tolist(), fraction[only].tolist())]
