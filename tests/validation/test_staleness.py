"""Real against simulated staleness: the KS distance, the measured file, and the rows per N."""

from __future__ import annotations

import pathlib

import pytest

from tracegen.curve import Curve, CurvePoint
from tracegen.metrics import Staleness
from validation.errors import ConfigError
from validation.staleness import compare_staleness, ks_distance, read_measured_staleness, staleness_markdown


def test_ks_distance_is_the_largest_gap_between_the_cumulative_distributions() -> None:
    assert ks_distance({0: 5, 1: 5}, {0: 5, 1: 5}) == 0.0
    assert ks_distance({0: 10}, {3: 4}) == 1.0  # no overlap
    # F_a = (0.5, 1.0), F_b = (0.25, 0.75, 1.0): gaps 0.25, 0.25, 0
    assert ks_distance({0: 1, 1: 1}, {0: 1, 1: 2, 2: 1}) == pytest.approx(0.25)
    with pytest.raises(ConfigError, match="empty"):
        ks_distance({}, {0: 1})


def _curve(hist: dict[int, tuple[tuple[int, int], ...]]) -> Curve:
    points = tuple(CurvePoint(n_workers=n, steps_per_s=1.0, steps_per_s_low=1.0, steps_per_s_high=1.0,
                              pull_link_utilisation=0.0, push_link_utilisation=0.0, ps_cpu_utilisation=0.0,
                              bottleneck="workers",
                              staleness=Staleness(mean=0.0, median=0.0, p99=0.0, histogram=h) if h else None)
                   for n, h in sorted(hist.items()))
    return Curve(points=points, plateau_steps_per_s=1.0, saturation_workers=1, knee_n_workers=1,
                 link_bound_steps_per_s=1.0, ps_bound_steps_per_s=1.0, link_description="", n_events=0)


def test_measured_repeats_pool_and_rows_pair_each_n(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "staleness.csv"
    path.write_text("n_workers,repeat,staleness,steps\n1,0,0,50\n2,0,0,20\n2,0,1,30\n2,1,1,10\n3,0,2,7\n")
    measured = read_measured_staleness(path)
    assert measured == {1: {0: 50}, 2: {0: 20, 1: 40}, 3: {2: 7}}
    rows = compare_staleness(measured, _curve({1: ((0, 9),), 2: ((0, 1), (1, 2)), 4: ((3, 1),)}))
    assert [r.n_workers for r in rows] == [1, 2]  # N = 3 was not simulated, N = 4 not measured
    assert rows[0].ks_distance == 0.0 and rows[1].measured_mean == pytest.approx(40 / 60)
    assert rows[1].ks_distance == pytest.approx(abs(20 / 60 - 1 / 3))
    assert "| 2 | 60 | 0.67 | 0.67 | 1 | 1 | 0.000 |" in staleness_markdown(rows, path)


def test_a_file_that_is_not_the_testbeds_is_refused(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "staleness.csv"
    path.write_text("n,staleness\n1,0\n")
    with pytest.raises(ConfigError, match="not a testbed staleness.csv"):
        read_measured_staleness(path)
    path.write_text("n_workers,repeat,staleness,steps\n1,0,-1,5\n")
    with pytest.raises(ConfigError, match=str(path)):
        read_measured_staleness(path)


def test_ks_distance_is_quick_whatever_the_largest_staleness() -> None:
    # went through every value from 0 to 10**12, a list of 10**12 floats per side
    assert ks_distance({0: 1, 10**12: 1}, {0: 2}) == 0.5
    assert ks_distance({5: 1, 10**12: 3}, {10**12: 4}) == 0.25
