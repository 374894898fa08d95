"""The bandwidth-only band anchored to the measured single-worker rate (:mod:`tracegen.band`)."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import pathlib
import shutil

import pytest

from parsers.singleworker import SINGLE_WORKER_NAME, SingleWorker, write_single_worker
from tracegen.band import anchored, band_edges
from tracegen.cli_predict import add_predict_arguments, run_predict
from tracegen.curve import Curve, CurvePoint


def _curve(rates: list[float], link_bound: float) -> Curve:
    points = tuple(CurvePoint(n_workers=n, steps_per_s=r, steps_per_s_low=r * 0.9, steps_per_s_high=r * 1.1,
                              pull_link_utilisation=0.5, push_link_utilisation=0.5, ps_cpu_utilisation=0.1,
                              bottleneck="workers") for n, r in enumerate(rates, start=1))
    return Curve(points=points, plateau_steps_per_s=max(rates), saturation_workers=len(rates), knee_n_workers=None,
                 link_bound_steps_per_s=link_bound, ps_bound_steps_per_s=float("inf"), link_description="test",
                 n_events=0)


def test_a_faster_single_worker_raises_only_the_high_end_and_never_past_the_link() -> None:
    low, high = _curve([8.0, 14.0, 18.0], 30.0), _curve([10.0, 18.0, 25.0], 30.0)
    new_low, new_high = anchored((low, high), 1.5)
    assert new_low == low
    assert [p.steps_per_s for p in new_high.points] == pytest.approx([15.0, 27.0, 30.0])
    assert all(p.steps_per_s_high <= 30.0 or p.steps_per_s_high == q.steps_per_s_high
               for p, q in zip(new_high.points, high.points, strict=True))


def test_a_slower_single_worker_lowers_only_the_low_end() -> None:
    low, high = _curve([8.0, 14.0], 30.0), _curve([10.0, 18.0], 30.0)
    new_low, new_high = anchored((low, high), 0.5)
    assert new_high == high
    assert [p.steps_per_s for p in new_low.points] == pytest.approx([4.0, 7.0])
    assert anchored((low, high), 1.0) == (low, high)
    with pytest.raises(ValueError, match="'factor' must be > 0"):
        anchored((low, high), 0.0)


def test_predict_with_a_bandwidth_holds_the_measured_single_worker_rate(mlp_trace_dir: pathlib.Path,
                                                                        tmp_path: pathlib.Path) -> None:
    """Whatever the simulation gives at N = 1, the band holds the rate one untraced worker measured, and the
    curve's own band without the measurement is no wider."""
    trace = tmp_path / "trace"
    shutil.copytree(mlp_trace_dir, trace)
    argv = [str(trace), "--workers", "1,2,4", "--bandwidth", "200Mbit/s", "--steps", "4", "--seeds", "1"]
    parser = argparse.ArgumentParser()
    add_predict_arguments(parser)
    assert run_predict(parser.parse_args([*argv, "--out", str(tmp_path / "plain")])) == 0
    with (tmp_path / "plain" / "curve.csv").open() as fh:
        plain = list(csv.DictReader(fh))
    # an untraced worker far slower than the replayed step (a faster one may not outrun the link's bound)
    slow = 0.5 * float(plain[0]["band_low"])
    write_single_worker(SingleWorker(steps_per_s=slow, window_s=10.0), trace / SINGLE_WORKER_NAME)
    assert run_predict(parser.parse_args([*argv, "--out", str(tmp_path / "anchored")])) == 0
    with (tmp_path / "anchored" / "curve.csv").open() as fh:
        wide = list(csv.DictReader(fh))
    assert float(wide[0]["band_low"]) * (1 - 1e-4) <= slow <= float(wide[0]["band_high"])
    for a, b in zip(plain, wide, strict=True):
        assert float(b["band_low"]) <= float(a["band_low"]) and float(b["band_high"]) >= float(a["band_high"])


def test_the_terminal_prints_the_band_curve_csv_writes(tmp_path: pathlib.Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The printed band_low/band_high are curve.csv's, widened to hold the point's own seeds (the mid curve has
    tracing's cost undone, the band not: deep's N = 1 lies above the band's high end before it is widened), so
    that the terminal never shows a band that leaves out the steps/s printed beside it."""
    # a deep trace whose N = 1 seeds reach past the band curve's own high end (the development deep_1000 did until
    # the replay's latency change of 2026-12-07 raised its band curve)
    trace = pathlib.Path(__file__).resolve().parents[2] / "data/fresh3/test/deep_300mbit_q5_b16k_ps05/trace"
    parser = argparse.ArgumentParser()
    add_predict_arguments(parser)
    out = tmp_path / "out"
    argv = [str(trace), "--workers", "1,2", "--bandwidth", "300Mbit/s", "--jobs", "1", "--out", str(out)]
    assert run_predict(parser.parse_args(argv)) == 0
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    at = lines.index(next(cells for cells in lines if cells[:2] == ["N", "steps/s"]))
    header, rows = lines[at], lines[at + 1:at + 3]
    printed = {int(r[0]): (r[header.index("band_low")], r[header.index("band_high")]) for r in rows}
    with (out / "curve.csv").open() as fh:
        written = {int(r["n_workers"]): (f"{float(r['band_low']):.2f}", f"{float(r['band_high']):.2f}")
                   for r in csv.DictReader(fh)}
    assert printed == written
    for r in rows:  # and the band holds the point printed beside it
        low, high, point = (float(r[header.index(k)]) for k in ("band_low", "band_high", "steps/s"))
        assert low <= point <= high
    # and its seeds: the mean alone lay inside the band's own ends, so the lines above held without the widening
    with (out / "curve.csv").open() as fh:
        table = list(csv.DictReader(fh))
    for r in table:
        assert float(r["band_low"]) <= float(r["steps_per_s_low"]), r
        assert float(r["band_high"]) >= float(r["steps_per_s_high"]), r
    # the case the test is about: an end that is the point's seed, not the band curve's own
    assert any(r["band_high"] == r["steps_per_s_high"] or r["band_low"] == r["steps_per_s_low"] for r in table)


def _point(n: int, low: float, high: float) -> CurvePoint:
    return CurvePoint(n_workers=n, steps_per_s=(low + high) / 2, steps_per_s_low=low, steps_per_s_high=high,
                      pull_link_utilisation=0.5, push_link_utilisation=0.5, ps_cpu_utilisation=0.1,
                      bottleneck="workers")


def test_band_edges_widen_the_band_to_the_points_seeds_by_hand() -> None:
    """Each end is the band curve's own seeds or the point's, whichever lies further out."""
    def curve(*seeds: tuple[float, float]) -> Curve:
        return dataclasses.replace(_curve([1.0] * len(seeds), 30.0),
                                   points=tuple(_point(n, lo, hi) for n, (lo, hi) in enumerate(seeds, start=1)))

    mid = curve((10.0, 13.0), (18.0, 20.0), (25.0, 27.0))
    low, high = curve((8.0, 9.0), (19.0, 21.0), (20.0, 22.0)), curve((11.0, 12.0), (19.5, 22.0), (28.0, 29.0))
    assert band_edges(mid, (low, high)) == ((8.0, 18.0, 20.0), (13.0, 22.0, 29.0))
