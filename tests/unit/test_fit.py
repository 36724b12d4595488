"""Fits on synthetic sweeps with known parameters."""

import math

import numpy as np
import pytest

from fabriclab.analysis.fit import efficiency, half_peak_size, hockney, loggp, peak_bandwidth

SIZES = 2.0 ** np.arange(23)  # 1 B .. 4 MiB


def test_hockney_exact_on_noise_free_data():
    times = 2e-6 + SIZES / 10e9
    h = hockney(SIZES, times)
    assert h.alpha == pytest.approx(2e-6, rel=1e-9)
    assert h.r_inf == pytest.approx(10e9, rel=1e-9)
    assert h.n_half == pytest.approx(20000.0, rel=1e-9)
    assert h.rel_rms < 1e-12
    assert h.n_points == 23
    assert h.predict(1000.0) == pytest.approx(2.1e-6)


def test_hockney_ignores_size_zero():
    sizes = np.concatenate([[0.0], SIZES])
    times = np.concatenate([[0.5e-6], 2e-6 + SIZES / 10e9])  # T(0) off the line
    h = hockney(sizes, times)
    assert h.alpha == pytest.approx(2e-6, rel=1e-9)
    assert h.n_points == 23


def test_hockney_with_noise():
    rng = np.random.default_rng(7)
    times = (2e-6 + SIZES / 10e9) * np.exp(rng.normal(0.0, 0.02, SIZES.size))
    h = hockney(SIZES, times)
    assert h.alpha == pytest.approx(2e-6, rel=0.03)
    assert h.r_inf == pytest.approx(10e9, rel=0.03)
    assert 0.005 < h.rel_rms < 0.05


@pytest.mark.parametrize("sizes, times", [
    ([8.0], [1e-6]),
    ([8.0, 8.0], [1e-6, 1.1e-6]),
    ([0.0, 8.0], [1e-6, 2e-6]),
    ([1.0, 2.0], [1e-6]),
    ([1.0, 2.0], [1e-6, -1e-6]),
    ([1.0, 2.0], [0.0, 1e-6]),
    ([1.0, 2.0], [1e-6, float("nan")]),
    ([1.0, 1024.0, 4096.0], [2e-6, 2e-6, 1.9e-6]),  # no growth: no bandwidth term
])
def test_hockney_rejects(sizes, times):
    with pytest.raises(ValueError):
        hockney(sizes, times)


def test_loggp_single_line():
    G = 1e-10
    times = 3e-6 + (SIZES - 1) * G  # LogGP: o + L + o + (k - 1) G
    p = loggp(SIZES, times)
    assert p.G == pytest.approx(G, rel=1e-9)
    assert p.bandwidth == pytest.approx(1e10, rel=1e-9)
    assert p.L_plus_2o == pytest.approx(3e-6, rel=1e-9)
    assert p.fit_min_size == 2048.0  # upper half of 23 distinct sizes
    assert p.n_points == 12


def test_loggp_protocol_switch():
    G = 1e-10
    times = np.where(SIZES < 65536, 1e-6, 5e-6) + SIZES * G  # rendezvous from 64 KiB
    p = loggp(SIZES, times, min_size=65536)
    assert p.G == pytest.approx(G, rel=1e-9)
    assert p.intercept == pytest.approx(5e-6, rel=1e-9)
    assert p.L_plus_2o == pytest.approx(1e-6 + G, rel=1e-9)
    assert p.n_points == 7


def test_loggp_uses_zero_byte_point():
    sizes = [0.0, 1.0, 2.0, 4.0, 8.0]
    times = [0.8e-6, 1.0e-6, 1.1e-6, 1.3e-6, 1.7e-6]
    p = loggp(sizes, times)
    assert p.L_plus_2o == 0.8e-6
    assert p.fit_min_size == 2.0 and p.n_points == 3
    assert p.G == pytest.approx(0.1e-6, rel=1e-9)


def test_loggp_rejects():
    with pytest.raises(ValueError):
        loggp([0.0, 8.0], [1e-6, 2e-6])
    with pytest.raises(ValueError):
        loggp(SIZES, 2e-6 + SIZES / 1e10, min_size=2**22)


def test_peak_bandwidth():
    assert peak_bandwidth([1, 2, 4, 8], [1.0, 5.0, 9.0, 9.0]) == (9.0, 4.0)
    assert peak_bandwidth([8, 1, 4], [3.0, 1.0, 7.0]) == (7.0, 4.0)
    with pytest.raises(ValueError):
        peak_bandwidth([], [])
    with pytest.raises(ValueError):
        peak_bandwidth([1, 2], [1.0])


KIB = 1024.0
CURVE_SIZES = [1 * KIB, 2 * KIB, 4 * KIB, 8 * KIB, 16 * KIB, 32 * KIB]
CURVE_BW = [1e9, 2e9, 4e9, 6e9, 9e9, 10e9]


def test_half_peak_interpolates_in_log2():
    # half of 10 GB/s lies halfway between 4 GB/s at 4 KiB and 6 GB/s at 8 KiB:
    # log2 size 12.5, i.e. 2**12.5 = 5792.6 B
    assert half_peak_size(CURVE_SIZES, CURVE_BW) == pytest.approx(2**12.5)
    shuffled = [5, 0, 3, 1, 4, 2]
    assert half_peak_size([CURVE_SIZES[i] for i in shuffled],
                          [CURVE_BW[i] for i in shuffled]) == pytest.approx(2**12.5)


def test_half_peak_exact_point_and_fall_after_peak():
    bw = [1e9, 2e9, 3e9, 5e9, 9e9, 10e9, 4e9]
    assert half_peak_size(CURVE_SIZES + [64 * KIB], bw) == pytest.approx(8 * KIB)


def test_half_peak_none_when_not_bracketed():
    assert half_peak_size([1024.0, 2048.0], [6e9, 10e9]) is None
    assert half_peak_size([1024.0, 2048.0], [10e9, 3e9]) is None
    assert half_peak_size([1.0, 2.0], [0.0, 0.0]) is None
    assert half_peak_size([0.0], [0.0]) is None


def test_half_peak_ignores_size_zero_and_rejects_duplicates():
    assert half_peak_size([0.0] + CURVE_SIZES, [0.0] + CURVE_BW) == pytest.approx(2**12.5)
    with pytest.raises(ValueError):
        half_peak_size([1.0, 1.0, 2.0], [1.0, 2.0, 3.0])


def test_efficiency():
    assert efficiency(11e9, 12.5e9) == pytest.approx(0.88)
    for a, w in [(1.0, 0.0), (-1.0, 1.0), (math.nan, 1.0), (1.0, math.inf)]:
        with pytest.raises(ValueError):
            efficiency(a, w)
