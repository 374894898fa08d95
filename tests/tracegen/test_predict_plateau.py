"""``tracegen predict``'s plateau and knee: the knee against the plateau, the stall rule, saturation (a link given by
its bandwidth against its two-way ceiling), the plateau search past the range asked, and a knee that does not move
with the range once the range covers it."""

from __future__ import annotations

import dataclasses
import pathlib
import re
from collections.abc import Callable

import pytest

from parsers import read_trace
from tracegen.cli_predict import run_predict
from tracegen.curve import CurvePoint
from tracegen.model import build_model
from tracegen.plateau import knee, saturation_workers

from tracegen_support import parse, rows


def point(n: int, rate: float) -> CurvePoint:
    return CurvePoint(n_workers=n, steps_per_s=rate, steps_per_s_low=rate, steps_per_s_high=rate,
                      pull_link_utilisation=0, push_link_utilisation=0, ps_cpu_utilisation=0, bottleneck="workers")


def test_knee_is_measured_against_the_plateau_not_the_range_asked() -> None:
    curve = [point(1, 1.0), point(2, 1.89), point(3, 1.96), point(4, 2.0), point(5, 1.7)]
    assert knee(curve, plateau=2.0) == 3
    # 'reaches': a point at exactly 95 % of the plateau (0.95 x 2.0 is the float 1.9) is the knee
    assert knee([point(1, 1.0), point(2, 1.9), point(3, 2.0)], plateau=2.0) == 2
    # a curve still climbing: its largest N is no knee
    assert knee([point(n, float(n)) for n in range(1, 9)], plateau=20.0) is None


def test_a_curve_stalls_after_three_points_each_under_one_percent_above_the_best() -> None:
    from tracegen.plateau import stalled_after

    assert stalled_after([1.0, 2.0, 2.01, 1.9, 2.0]) == 4
    assert stalled_after([1.0, 2.0, 2.01, 1.9, 2.03, 2.0, 2.0, 2.0]) == 7  # 2.03: 1.5 % over 2.0, counted anew
    assert stalled_after([1.0, 1.006, 1.012, 1.018]) is None  # 0.6 % a point: over 1 % in two
    assert stalled_after([float(n) for n in range(1, 20)]) is None
    # a flat stretch below saturation (workers in lock-step) starts the count again: dev mlp_500, N = 2..4
    flat = [10.8, 17.5, 17.3, 17.6, 17.4, 18.7, 19.0, 20.6, 21.2]
    busy = [False, False, False, False, False, False, False, True, True]
    assert stalled_after(flat) == 4 and stalled_after(flat, busy) is None
    assert stalled_after([*flat, 21.2, 21.3, 21.1], [*busy, True, True, True]) == 11
    # a point between saturated ones starts the count again (not merely left out of it)
    assert stalled_after([1.0] * 5, [True, True, False, True, True]) is None
    assert stalled_after([1.0] * 6, [True, True, False, True, True, True]) == 5
    # exactly 1 % above the best (1.0 x 1.01 is the float 1.01) is not above it: a stalled point
    assert stalled_after([1.0, 1.01, 1.01, 1.01]) == 3


def test_a_curve_past_its_plateau_is_not_simulated_and_each_point_simulated_is_the_same(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The real mlp trace behind its own (traced) link saturates the pull direction by N = 6: by default predict
    stops there, the N after it not simulated and said so; every N it does simulate is the --every-n curve's
    point to the bit, in one process or two, and --every-n gives all of them."""
    from tracegen.curve import scaling_curve, simulate_job
    from tracegen.processes import Processes
    from tracegen.simulate import SimConfig, resolve_link

    model = build_model(read_trace(mlp_trace_dir))
    config = SimConfig(steps=6, warmup_steps=1, link_spec=resolve_link(model, SimConfig()))
    every = scaling_curve(model, config, range(1, 17), seeds=2)
    stopped = scaling_curve(model, config, range(1, 17), seeds=2, stop_at_plateau=True)
    with Processes(simulate_job, 2) as pool:
        side = scaling_curve(model, config, range(1, 17), seeds=2, stop_at_plateau=True, processes=pool)
    assert side == stopped
    kept = [p.n_workers for p in stopped.points]
    assert kept == list(range(1, kept[-1] + 1)) and 4 <= kept[-1] < 16
    assert stopped.unsimulated_workers == tuple(range(kept[-1] + 1, 17)) and not every.unsimulated_workers
    assert stopped.points == every.points[:len(kept)]
    assert stopped.plateau_steps_per_s == max(p.steps_per_s for p in stopped.points)
    assert abs(every.plateau_steps_per_s / stopped.plateau_steps_per_s - 1) < 0.03
    assert stopped.n_events < every.n_events / 2
    argv = [str(mlp_trace_dir), "--workers", "1-16", "--steps", "6", "--warmup-steps", "1", "--seeds", "2"]
    assert run_predict(parse([*argv, "--out", str(tmp_path / "a")])) == 0
    out = capsys.readouterr().out
    assert re.search(r"N=\d+-16 not simulated: the rate stalled by N=\d+", out), out
    assert [int(r["n_workers"]) for r in rows(tmp_path / "a" / "curve.csv")] == kept
    assert run_predict(parse([*argv, "--every-n", "--out", str(tmp_path / "b")])) == 0
    assert "not simulated" not in capsys.readouterr().out
    assert len(rows(tmp_path / "b" / "curve.csv")) == 16


def test_a_link_given_by_its_bandwidth_saturates_at_what_it_carries_both_ways(
        mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With ``--bandwidth`` each direction carries 3/4 of its rate while the other is busy, so measured against
    its peak it never looked 90 % busy: the stall rule never fired, and ``--workers 1-3000`` on the mlp trace was
    still simulating N = 183 after two minutes. A direction is now saturated at 90 % of its two-way ceiling."""
    from tracegen.bottleneck import two_way_share
    from tracegen.linkspec import from_bandwidth
    from tracegen.plateau import SATURATED, saturated

    model = build_model(read_trace(mlp_trace_dir))
    link = from_bandwidth(125_000_000, model.link, two_way=0.75)
    assert two_way_share(link, 0) == pytest.approx(0.75) and two_way_share(link, 1) == pytest.approx(0.75)
    busy = dataclasses.replace(point(10, 30.0), pull_link_utilisation=0.7, push_link_utilisation=0.69)
    assert saturated(busy, link) and not saturated(busy)
    under = SATURATED * 0.75 - 0.01
    assert not saturated(dataclasses.replace(busy, pull_link_utilisation=under, push_link_utilisation=under), link)
    # each resource on its own: the push direction against its two-way ceiling too, the PS's CPU against 90 %
    idle = dataclasses.replace(busy, pull_link_utilisation=0.1, push_link_utilisation=0.1)
    assert saturated(dataclasses.replace(idle, push_link_utilisation=0.7), link)
    assert not saturated(dataclasses.replace(idle, push_link_utilisation=0.7))
    assert saturated(dataclasses.replace(idle, ps_cpu_utilisation=SATURATED), link)
    assert not saturated(dataclasses.replace(idle, ps_cpu_utilisation=SATURATED - 0.01), link)
    argv = [str(mlp_trace_dir), "--bandwidth", "1Gbit/s", "--workers", "1-40", "--out", str(tmp_path / "out")]
    assert run_predict(parse(argv)) == 0
    out = capsys.readouterr().out
    assert re.search(r"N=\d+-40 not simulated: the rate stalled by N=\d+", out), out


def test_saturation_workers_covers_the_bound() -> None:
    assert saturation_workers(1.0, 10.0, 8) == 16  # 1.5 x 10 / 1, plus one
    assert saturation_workers(1.0, float("inf"), 8) == 8
    assert saturation_workers(0.001, 10.0, 4) == 256


def test_the_plateau_search_doubles_n_while_the_rate_still_rises() -> None:
    from tracegen.plateau import PLATEAU_PROBES, plateau_search

    asked: list[int] = []

    def at(rates: dict[int, float]) -> Callable[[int], float]:
        def rate(n: int) -> float:
            asked.append(n)
            return rates[n]
        return rate

    # 8 asked at 10.0: 16 adds 10 %, 32 under 1 % more: the plateau is 32's
    assert plateau_search(8, 10.0, 8, at({16: 11.0, 32: 11.05})) == (32, 11.05, True) and asked == [16, 32]
    asked.clear()  # the bound's N past the asked range comes first; a fall keeps the best before it
    assert plateau_search(4, 5.0, 10, at({10: 9.0, 20: 8.5})) == (10, 9.0, True) and asked == [10, 20]
    asked.clear()  # still rising at the last doubling: a lower bound, and never past the cap
    rising = {n: float(n) for n in (16, 32, 64, 128, 256)}
    assert plateau_search(8, 8.0, 8, at(rising)) == (8 * 2 ** PLATEAU_PROBES, float(8 * 2 ** PLATEAU_PROBES), False)
    asked.clear()  # at the cap, still rising: a lower bound too
    assert plateau_search(200, 1.0, 200, at({256: 2.0})) == (256, 2.0, False) and asked == [256]
    asked.clear()  # nothing past a range that reaches the cap: its largest N's rate, as before
    assert plateau_search(300, 1.0, 300, at({})) == (300, 1.0, True) and asked == []
    # ... but a range that reaches the cap still climbing (2 steps/s a worker up to N = 300) was called reached,
    # and its knee put near its last N: a lower bound, as past the cap
    assert plateau_search(300, 600.0, 300, at({}), rising=True) == (300, 600.0, False) and asked == []


def test_a_curve_that_reaches_the_cap_still_rising_has_not_reached_its_plateau() -> None:
    """_plateau_past tells plateau_search whether the asked curve still rose at its largest N."""
    from tracegen.curve import CurvePoint, _plateau_past
    from tracegen.plateau import STALL_GAIN

    def point(n: int, rate: float) -> CurvePoint:
        return CurvePoint(n_workers=n, steps_per_s=rate, steps_per_s_low=rate, steps_per_s_high=rate,
                          pull_link_utilisation=0.1, push_link_utilisation=0.1, ps_cpu_utilisation=0.1,
                          bottleneck="workers")

    def never(n: int) -> float:
        raise AssertionError(f"nothing is simulated past the cap (asked N={n})")

    climbing = [point(n, 2.0 * n) for n in (1, 150, 300)]
    assert _plateau_past(climbing, 0, never) == (300, 600.0, False)
    flat = [*climbing[:2], point(300, 300.0 * (1 + STALL_GAIN / 2))]  # under 1 % above the best before it
    assert _plateau_past(flat, 0, never) == (300, 300.0 * (1 + STALL_GAIN / 2), True)
    assert _plateau_past([point(300, 600.0)], 0, never)[2] is False  # one point: not shown to have stopped


def test_the_knee_does_not_move_with_the_range_asked_once_the_range_covers_it(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The quick start's trace (its profile and single-worker file beside it) climbs slowly past N = 8 (21.2
    steps/s there, about 22 from N = 12 on): asked 1-8, the plateau was the rate at N = 8 and the knee N = 7, a
    knee of the range asked, not of the curve. The plateau search past the range gives the knee that 1-12 gives."""
    trace = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
    knees = []
    for workers in ("1-8", "1-12"):
        assert run_predict(parse([str(trace), "--workers", workers, "--out", str(tmp_path / workers)])) == 0
        out = capsys.readouterr().out
        found = re.search(r"plateau ([\d.]+) steps/s \(simulated at N=\d+\); knee \(95% of the plateau\): N=(\d+);",
                          out)
        assert found, out
        table = rows(tmp_path / workers / "curve.csv")
        assert float(found[1]) >= max(float(r["steps_per_s"]) for r in table)
        knees.append(int(found[2]))
    assert knees[0] == knees[1]
