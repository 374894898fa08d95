"""Tracing's own cost, undone with the untraced single-worker measurement.

A traced step is slower than an untraced one: the tracer records every op on the worker and the PS and every
transfer's RPC, and ships it all back at the step's end (the campaign's ``deep``: 105 ms traced, 79 ms
untraced). It slows what the two hosts' CPUs do — ops, the executor's dispatch gaps, each RPC's handling, and
so what one connection moved (the per-connection rate is bytes over the traced transfer time) — but not the
shared link: its capacity comes from the link profile or the bandwidth, measured or given without tracing.

``single-worker.json`` gives the untraced rate of one worker against the PS (two hosts; an input, not the
answer). When the replay of one worker is slower than that, the difference is what tracing cost, and the replay
is sped up by one factor ``speed`` until its N = 1 matches (:func:`untraced_speed`, bisection on the seeded
simulation): every op's duration and every dispatch gap divided by ``speed``, every connection's rate
multiplied by it (:func:`untraced_model`, :func:`untraced_link`). The transfers' sizes and the link's capacities stay.

Only ever a speed-up: tracing cannot make a step faster, so a replay faster than the untraced measurement has
another error (the measurement's own noise among them) that this does not pretend to know; it is left as is.
The factor is bounded by :data:`MAX_SPEED` — a replay that would need more is missing something tracing does
not explain.

Decided on the development set (:mod:`validation`): MAPE with a link profile 8.6 → 5.9 %, factors 1 to 1.56.
"""

from __future__ import annotations

import dataclasses

from tracegen.curve import scaling_curve
from tracegen.link import LinkSpec
from tracegen.model import TRANSFER_KINDS, StepModel, StepTiming
from tracegen.simulate import SimConfig

MAX_SPEED = 4.0  # tracing that costs three quarters of a step is not tracing
TOLERANCE = 0.005  # relative: the simulated N = 1 rate within 0.5 % of the measured one
MAX_ITERATIONS = 24
MAX_RUNS = MAX_ITERATIONS + 3  # most one-worker curves fit_untraced runs: as traced, MAX_SPEED, bisection, last
MISMATCH = 0.05  # relative: a replay of one worker this far from the measurement after the speed-up is reported


def untraced_model(model: StepModel, speed: float) -> StepModel:
    """``model`` with tracing's cost undone by ``speed`` (module docstring): its ops and gaps ``speed`` times as
    short, what one traced connection moved ``speed`` times as much."""
    _check(speed)
    if speed == 1.0:
        return model
    transfer = [k in TRANSFER_KINDS for k in model.kinds]

    def faster(timing: StepTiming) -> StepTiming:
        return dataclasses.replace(
            timing, dur_ns=tuple(d if moved else round(d / speed) for d, moved in zip(timing.dur_ns, transfer,
                                                                                       strict=True)),
            delay_ns=tuple(round(g / speed) for g in timing.delay_ns))

    est = model.link
    link = dataclasses.replace(est, pull_bandwidth_bytes_per_s=round(est.pull_bandwidth_bytes_per_s * speed),
                               push_bandwidth_bytes_per_s=round(est.push_bandwidth_bytes_per_s * speed))
    return dataclasses.replace(model, timings=tuple(faster(t) for t in model.timings), link=link)


def untraced_link(spec: LinkSpec, speed: float) -> LinkSpec:
    """``spec`` with one connection's rate ``speed`` times what the trace showed; the link's capacities stay."""
    _check(speed)
    if speed == 1.0:
        return spec
    conn = spec.connection_bytes_per_s
    return dataclasses.replace(spec, connection_bytes_per_s=(conn[0] * speed, conn[1] * speed),
                               description=f"{spec.description}; tracing's cost undone: one worker's own timing "
                                           f"{speed:.2f}x as fast as traced, to the untraced single-worker rate")


def _check(speed: float) -> None:
    if not 1.0 <= speed <= MAX_SPEED:
        raise ValueError(f"'speed' must be from 1 to {MAX_SPEED} (got {speed})")


def untraced_speed(model: StepModel, config: SimConfig, measured_steps_per_s: float, *, seeds: int) -> float:
    """The factor that brings the simulated single worker (``config`` with ``n_workers`` 1) to the measured
    untraced rate: 1 when it is already as fast, at most :data:`MAX_SPEED`."""
    return fit_untraced(model, config, measured_steps_per_s, seeds=seeds)[0]


def fit_untraced(model: StepModel, config: SimConfig, measured_steps_per_s: float, *,
                 seeds: int) -> tuple[float, float]:
    """:func:`untraced_speed`, and the simulated single worker's rate at that speed (for :func:`mismatch_note`)."""
    if not measured_steps_per_s > 0:
        raise ValueError(f"'measured_steps_per_s' must be > 0 (got {measured_steps_per_s})")

    def rate(speed: float) -> float:
        return one_worker_rate(model, config, speed, seeds=seeds)

    if (traced := rate(1.0)) >= measured_steps_per_s * (1 - TOLERANCE):
        return 1.0, traced
    if (fastest := rate(MAX_SPEED)) <= measured_steps_per_s:
        return MAX_SPEED, fastest
    low, high = 1.0, MAX_SPEED
    for _ in range(MAX_ITERATIONS):
        mid = (low + high) / 2
        got = rate(mid)
        if abs(got - measured_steps_per_s) <= TOLERANCE * measured_steps_per_s:
            return mid, got
        low, high = (mid, high) if got < measured_steps_per_s else (low, mid)
    return (low + high) / 2, rate((low + high) / 2)


def one_worker_rate(model: StepModel, config: SimConfig, speed: float, *, seeds: int) -> float:
    """The simulated rate of one worker (``config`` with ``n_workers`` 1, alone on its PS) with tracing's cost
    undone by ``speed``."""
    spec = config.link_spec
    if spec is None:
        raise ValueError("'config' needs its link_spec: the speed-up scales its per-connection rates")
    alone = dataclasses.replace(config, n_workers=1, link_spec=untraced_link(spec, speed), worker_speed=(),
                                worker_link_bytes_per_s=())
    curve = scaling_curve(untraced_model(model, speed), alone, (1,), seeds=seeds, find_plateau=False)
    return curve.points[0].steps_per_s


def mismatch_note(replayed_steps_per_s: float, measured_steps_per_s: float, speed: float) -> str | None:
    """What to tell the user when the replay of one worker, ``speed`` applied, still misses the untraced
    measurement by more than :data:`MISMATCH` (None when it does not): the measurement then does not pin N = 1,
    and the prediction carries the difference."""
    off = replayed_steps_per_s / measured_steps_per_s - 1
    if abs(off) <= MISMATCH:
        return None
    if off > 0:
        return (f"one worker replays at {replayed_steps_per_s:.2f} steps/s, {off:.0%} faster than the untraced "
                f"single-worker measurement ({measured_steps_per_s:.2f}): tracing cannot make a step faster, so "
                "nothing is undone and the prediction keeps the difference (a measurement taken at another time or "
                "on other hosts than the trace?)")
    return (f"one worker replays at {replayed_steps_per_s:.2f} steps/s, {-off:.0%} slower than the untraced "
            f"single-worker measurement ({measured_steps_per_s:.2f}) even with tracing's cost undone "
            f"{speed:.2f}x: the link or the PS's CPU does not let one worker go that fast; the measurement, the "
            "trace and the link disagree, and N = 1 is not pinned to the measurement (measured on a faster link than "
            "this? its rate as 'link_bits_per_s' in the measurement's file works tracing's cost out there)")
