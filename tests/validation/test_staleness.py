"""Real against simulated staleness: the KS distance, the measured file, and the rows per N."""

from __future__ import annotations

import os
import pathlib
import re

import pytest

import validation.staleness
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
    with pytest.raises(ConfigError, match=r"not a testbed staleness\.csv"):
        read_measured_staleness(path)
    path.write_text("n_workers,repeat,staleness,steps\n1,0,-1,5\n")
    with pytest.raises(ConfigError, match=re.escape(str(path))):
        read_measured_staleness(path)


HEADER = "n_workers,repeat,staleness,steps\n"


@pytest.mark.parametrize(("rows", "message"), [
    ("1,0,0,50,9\n", r"staleness\.csv:2: 5 cells, the header has 4"),  # pandas took 1 as an index: N=0
    ("1,0,0,50\n2\n", r"staleness\.csv:3: 1 cell, the header has 4"),  # said "1 cells"
    ("1,0,x,50\n", r"staleness\.csv:2: 'staleness' must be an integer \(got 'x'\)"),  # was a TypeError
    ("1,0,0,fifty\n", r"staleness\.csv:2: 'steps' must be an integer \(got 'fifty'\)"),
    ("1,0,1.5,50\n", r"staleness\.csv:2: 'staleness' must be an integer \(got '1.5'\)"),  # int() made it 1
    ("1,0,0,50\n1,0,1,30.7\n", r"staleness\.csv:3: 'steps' must be an integer \(got '30.7'\)"),
    ("2.5,0,0,50\n", r"staleness\.csv:2: 'n_workers' must be an integer \(got '2.5'\)"),
    ("1,0.5,0,50\n", r"staleness\.csv:2: 'repeat' must be an integer \(got '0.5'\)"),
    ("0,0,0,50\n", r"staleness\.csv:2: 'n_workers' must be > 0 \(got '0'\)"),
    ("1,0,-1,5\n", r"staleness\.csv:2: 'staleness' must be >= 0 \(got '-1'\)"),
    ("1,0,0,0\n", r"staleness\.csv:2: 'steps' must be > 0 \(got '0'\)"),  # an all-zero N divided by zero
    ("1,0,1000001,5\n", r"staleness\.csv:2: 'staleness' must be at most 1000000, the steps a window could hold "
                        r"\(got '1000001'\)"),
    ("1,0,0,1000001\n", r"staleness\.csv:2: 'steps' must be at most 1000000, the steps a window could hold "
                        r"\(got '1000001'\)"),
    ("1,1000001,0,5\n", r"staleness\.csv:2: 'repeat' must be at most 1000000, far more runs than a campaign makes"),
    ("100001,0,0,5\n", r"staleness\.csv:2: 'n_workers' must be at most 100000 \(got '100001'\)"),
    ("2,0,1,30\n\n2,0,1,30\n", r"staleness\.csv:4: n_workers 2, repeat 0, staleness 1 again \(first on line 2\)"),
], ids=["extra-cell", "short-row", "text-staleness", "text-steps", "fractional-staleness", "fractional-steps",
        "fractional-n", "fractional-repeat", "zero-n", "negative-staleness", "zero-steps", "huge-staleness",
        "huge-steps", "huge-repeat", "huge-n", "repeated-row"])
def test_malformed_measured_staleness_names_file_line_column_and_value(tmp_path: pathlib.Path, rows: str,
                                                                       message: str) -> None:
    path = tmp_path / "staleness.csv"
    path.write_text(HEADER + rows)
    with pytest.raises(ConfigError, match=message):
        read_measured_staleness(path)


@pytest.mark.parametrize(("text", "message"), [
    ("n_workers,repeat,staleness,staleness\n1,0,0,5\n", ":1: column 'staleness' appears twice in the header"),
    ("n_workers,repeat,stale,steps\n1,0,0,5\n",
     ": not a testbed staleness.csv: the header must be n_workers,repeat,staleness,steps (got "
     "'n_workers,repeat,stale,steps')"),
    ("n_workers,repeat,staleness\n1,0,0\n", ": not a testbed staleness.csv"),
    ("", ": empty file; a CSV needs a header line naming its columns and a row per run"),
])
def test_a_header_other_than_the_testbeds_is_refused(tmp_path: pathlib.Path, text: str, message: str) -> None:
    path = tmp_path / "staleness.csv"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(f"{path}{message}")):
        read_measured_staleness(path)


def test_the_measured_staleness_is_read_within_a_size_limit(tmp_path: pathlib.Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "staleness.csv"
    path.write_text(HEADER + "1,0,0,5\n" * 20)
    monkeypatch.setattr(validation.staleness, "MAX_STALENESS_BYTES", 100)
    with pytest.raises(ConfigError, match=rf"{re.escape(str(path))}: file is more than the limit of 100 bytes"):
        read_measured_staleness(path)
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # a FIFO with no writer: opening it blocked forever
    with pytest.raises(ConfigError, match=rf"{re.escape(str(fifo))}: a FIFO \(named pipe\), not a regular file"):
        read_measured_staleness(fifo)


def test_ks_distance_is_quick_whatever_the_largest_staleness() -> None:
    # went through every value from 0 to 10**12, a list of 10**12 floats per side
    assert ks_distance({0: 1, 10**12: 1}, {0: 2}) == 0.5
    assert ks_distance({5: 1, 10**12: 3}, {10**12: 4}) == 0.25
