"""The analytic baselines: hand-computed values and the bounds they must respect."""

from __future__ import annotations

import dataclasses
import itertools
import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parsers import read_trace
from parsers.linkprofile import read_link_profile
from parsers.singleworker import SingleWorker
from tracegen.baselines import (
    StepCosts,
    Worker,
    cycle_rates,
    link_rates,
    mixed,
    no_overlap,
    ps_queue,
    roofline,
    roofline_saturates,
    step_costs,
)
from tracegen.errors import ModelError
from tracegen.link import uniform_link
from tracegen.model import build_model

ROOT = pathlib.Path(__file__).resolve().parents[2]
COSTS = StepCosts(pull_bytes=1_000_000, push_bytes=1_000_000, step_ns=20_000_000, compute_ns=10_000_000,
                  ps_compute_ns=0)


def flat(rate: float):  # type: ignore[no-untyped-def]
    return lambda _n: (rate, rate)


def test_roofline_by_hand() -> None:
    # T1 = 20 ms: 50 steps/s per worker, until 1 MB per step at 100 MB/s caps the link at 100 steps/s
    assert roofline(COSTS, [1, 2, 4], flat(100e6)) == pytest.approx([50.0, 100.0, 100.0])


def test_roofline_saturates_by_hand() -> None:
    # 50 steps/s per worker against the link's 100 steps/s: two workers reach it; at 400 MB/s, eight
    assert roofline_saturates(COSTS, flat(100e6), 16) == 2
    assert roofline_saturates(COSTS, flat(400e6), 16) == 8
    assert roofline_saturates(COSTS, flat(400e6), 7) is None


def test_no_overlap_by_hand() -> None:
    # 1 MB each way at 100 MB/s = 10 ms + 10 ms, plus 10 ms compute: 30 ms a step; the link caps at 100/s.
    assert no_overlap(COSTS, [1, 2, 4], flat(100e6)) == pytest.approx([1 / 0.03, 2 / 0.03, 100.0])


def test_a_measured_ps_cpu_is_a_bound_for_every_baseline(mlp_trace_dir: pathlib.Path) -> None:
    # 40 ms of PS CPU per step on 0.5 cores: 12.5 steps/s at most, however fast the link
    measured = SingleWorker(steps_per_s=5.0, window_s=30.0, ps_cpu_s_per_step=0.04, ps_cores=0.5)
    costs = step_costs(build_model(read_trace(mlp_trace_dir)), measured)
    assert costs.ps_bound_steps_per_s == pytest.approx(12.5) and costs.ps_compute_ns == pytest.approx(80e6)
    for baseline in (roofline, no_overlap, ps_queue):
        assert max(baseline(costs, [1, 4, 64], flat(1e12))) <= 12.5 * (1 + 1e-9)


def test_mixed_workers_by_hand() -> None:
    like_traced = [Worker(), Worker()]
    for name, fn in (("roofline", roofline), ("no_overlap", no_overlap), ("ps_queue", ps_queue)):
        assert mixed(name, COSTS, [1, 2, 4], flat(100e6), like_traced) == pytest.approx(fn(COSTS, [1, 2, 4],
                                                                                         flat(100e6)))
    # worker 0 behind 10 MB/s of its own: 1 MB each way takes it 100 ms (roofline) or 100 + 10 + 100 ms
    # (no_overlap); worker 1 is like the traced one (20 ms, 30 ms)
    far = [Worker(link_bytes_per_s=10e6)]
    assert mixed("roofline", COSTS, [1, 2], flat(100e6), far) == pytest.approx([10.0, 10.0 + 50.0])
    assert mixed("no_overlap", COSTS, [1, 2], flat(100e6), far) == pytest.approx([1 / 0.21, 1 / 0.21 + 1 / 0.03])
    half = [Worker(speed=0.5)]  # its compute takes twice as long: 40 ms a step in the roofline
    assert mixed("roofline", COSTS, [1], flat(100e6), half) == pytest.approx([25.0])
    with pytest.raises(ModelError, match="got 'nope'"):
        mixed("nope", COSTS, [1], flat(100e6), half)


def test_ps_queue_by_hand() -> None:
    # D = 20 ms at the PS, Z = 10 ms. n=1: R = 20 ms, X = 1/30 ms. n=2: Q1 = 2/3, R = 20*(5/3) ms,
    # X = 2 / (33.33 + 10) ms.
    x1, x2 = ps_queue(COSTS, [1, 2], flat(100e6))
    assert x1 == pytest.approx(1 / 0.030)
    assert x2 == pytest.approx(2 / (0.020 * 5 / 3 + 0.010))


def test_cycle_rates_are_the_profiles_cycle_points_the_same_each_way() -> None:
    """Measured counts give their own rate, counts between them the straight line, counts beyond the last the
    last; the pull figure both ways (a cycling client pushes what it pulled); no cycle points, no rates."""
    profile = read_link_profile(ROOT / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace/link-profile.json")
    cycle = {p.connections: p.pull_bytes_per_s for p in profile.of_mode("cycle")}
    assert sorted(cycle) == [1, 2, 4, 8]
    rates = cycle_rates(profile)
    assert rates is not None
    for k, rate in cycle.items():
        assert rates(k) == (rate, rate)
    assert rates(3)[0] == pytest.approx((cycle[2] + cycle[4]) / 2)
    assert rates(64) == (cycle[8], cycle[8])
    assert cycle_rates(dataclasses.replace(profile, points=tuple(
        p for p in profile.points if p.mode != "cycle"))) is None


def test_link_rates_are_the_two_way_capacity_capped_per_connection() -> None:
    spec = uniform_link((100e6, 100e6), two_way_bytes_per_s=(60e6, 70e6), connection_bytes_per_s=(40e6, 40e6))
    rates = link_rates(spec)
    assert rates(1) == (40e6, 40e6)
    assert rates(4) == (60e6, 70e6)


@given(pull=st.integers(1, 10**9), push=st.integers(1, 10**9), compute=st.integers(0, 10**9),
       ps=st.integers(0, 10**8), bw=st.floats(1e3, 1e11), n_max=st.integers(1, 64))
def test_baselines_respect_their_bounds(pull: int, push: int, compute: int, ps: int, bw: float, n_max: int) -> None:
    costs = StepCosts(pull_bytes=pull, push_bytes=push, step_ns=max(1, compute), compute_ns=compute,
                      ps_compute_ns=ps)
    workers = list(range(1, n_max + 1))
    single = no_overlap(costs, [1], flat(bw))[0]
    for n, x in zip(workers, no_overlap(costs, workers, flat(bw)), strict=True):
        assert x <= n * single * (1 + 1e-9)
        assert x <= bw / max(pull, push) * (1 + 1e-9)
    for n, x in zip(workers, roofline(costs, workers, flat(bw)), strict=True):
        assert x <= n * 1e9 / costs.step_ns * (1 + 1e-9)
    queue = ps_queue(costs, workers, flat(bw))
    demand_s = (pull + push) / bw + ps / 1e9
    assert all(x <= 1 / demand_s * (1 + 1e-9) for x in queue)
    assert all(b >= a * (1 - 1e-9) for a, b in itertools.pairwise(queue))  # MVA never falls


def test_costs_from_a_real_trace(model_dir: pathlib.Path) -> None:
    model = build_model(read_trace(model_dir))
    costs = step_costs(model)
    assert costs.pull_bytes > 0 and costs.push_bytes >= costs.pull_bytes and costs.compute_ns > 0
    assert costs.step_ns == model.measured_step_ns


def test_no_overlap_takes_each_direction_at_its_own_rate_by_hand() -> None:
    # pulls at 100 MB/s (10 ms), pushes at 50 MB/s (20 ms), 10 ms compute: 40 ms a step; the push direction caps
    # the link at 50 steps/s
    assert no_overlap(COSTS, [1, 2, 4], lambda _n: (100e6, 50e6)) == pytest.approx([25.0, 50.0, 50.0])


def test_the_busiest_shard_and_the_threads_of_a_step_by_hand() -> None:
    """A shard serving 1/4 of the bytes carries 1/4 of them and of the PS's CPU per step, and so 4 x its CPU bound;
    a PS op time is spread over the PS's op threads, a worker op time over the worker's."""
    import dataclasses

    from tracegen.baselines import on_busiest_shard
    from tracegen.model import StepModel, StepTiming, TaskKind
    from tracegen.wire import LinkEstimate

    costs = dataclasses.replace(COSTS, ps_compute_ns=80e6, ps_bound_steps_per_s=12.5)
    shard = on_busiest_shard(costs, 0.25)
    assert (shard.pull_bytes, shard.push_bytes) == (250_000, 250_000)
    assert (shard.ps_compute_ns, shard.ps_bound_steps_per_s) == (pytest.approx(20e6), pytest.approx(50.0))
    model = StepModel(
        names=("pull w", "matmul", "push grad", "apply w"),
        kinds=(TaskKind.PULL, TaskKind.COMPUTE, TaskKind.PUSH, TaskKind.APPLY),
        size_bytes=(1000, 0, 3000, 0), data_preds=((), (0,), (1,), (2,)), control_preds=((), (), (), ()),
        rank=(0, 1, 2, 3), first_need_ns=(0, 0, 0, 0),
        timings=(StepTiming(dur_ns=(0, 6_000_000, 0, 4_000_000), delay_ns=(0, 0, 0, 0), step_ns=0),),
        link=LinkEstimate(pull_bandwidth_bytes_per_s=10**9, push_bandwidth_bytes_per_s=10**9, latency_ns=0,
                          method="given"), worker_threads=3, ps_threads=2)
    got = step_costs(model)
    assert (got.pull_bytes, got.push_bytes) == (1000, 3000)
    assert (got.compute_ns, got.ps_compute_ns) == (pytest.approx(2e6), pytest.approx(2e6))
