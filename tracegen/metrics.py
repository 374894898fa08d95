"""What a simulation result says, as functions of it (never stored beside it).

Throughput is measured over a window common to all workers: it opens when the last worker ends its warm-up
steps (the start-up transient, when workers started at offsets and had the link to themselves, is left out) and
closes when the first worker ends its last step (after which fewer workers compete). In it the steps are counted
by the share of their time inside the window (:func:`fraction_in_window`, the testbed's estimator of a real run,
whose windows are tens of steps long) — except where the link binds: a step's pulls come first, so a step cut by
the window's start is counted for time whose bytes were moved before it, and this count reads high (on the mlp
trace past its knee, the link moving exactly its capacity: +0.3 % at 30 measured steps, +1 % at 10, +3.5 % at 3,
146 steps/s against a bound of 96 at 1). There the work done is counted instead: the bytes moved in the window over
the bytes one step moves (every step moves the same), in the direction a step asks the most of (its bytes over the
direction's capacity), when that direction was at least :data:`BYTES_COUNTED_FROM` busy in the window
(data/README.md, "Steps per second from the bytes a step moves").
Utilisations are bytes (or CPU time) used inside that same window over what the resource could have given in it,
so they can never exceed 1.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

from tracegen.errors import ConfigError
from tracegen.link import PULL, PUSH
from tracegen.model import PS_KINDS, StepModel, TaskKind
from tracegen.simulate import SimResult

BYTES_COUNTED_FROM = 0.9  # steps_per_s counts bytes once the busiest direction is this busy in the window


def fraction_in_window(steps: Sequence[tuple[float, float]], start: float, end: float) -> float:
    """Steps done inside [start, end]: each step counted by the fraction of its duration inside. Any one time
    unit: the model's integer nanoseconds, or the seconds of a real run (the testbed and netbench count theirs
    with this, so that simulated and measured throughput are the same estimator)."""
    total = 0.0
    for s, e in steps:
        overlap = min(e, end) - max(s, start)
        if overlap > 0 and e > s:
            total += overlap / (e - s)
    return total


def measurement_window(result: SimResult) -> tuple[int, int]:
    """(from_ns, to_ns) of the steady window (module docstring); ConfigError when the run is too short to have
    one."""
    warm = result.config.warmup_steps
    ends = result.step_end_ns
    t_a = max(e[warm - 1] for e in ends) if warm else max(s[0] for s in result.step_start_ns)
    t_b = min(e[-1] for e in ends)
    if t_b <= t_a:
        raise ConfigError(f"the simulation is too short for a steady window: with {result.config.n_workers} workers, "
                          f"{result.config.warmup_steps} warm-up steps and {result.config.steps} measured steps "
                          "each, one worker had finished before the last one was warm; simulate more steps")
    return t_a, t_b


def steps_per_s(result: SimResult) -> float:
    """Training steps per second of all workers together, over the steady window (module docstring): where the
    link binds, the bytes its busiest direction moved there over the bytes one step moves; elsewhere, and in a run
    that moves no bytes or has no warm-up step (no snapshot at the window's start), the steps by their time in it
    (:func:`steps_per_s_from_times`)."""
    snapshots = result.snapshots
    if not result.config.warmup_steps or not snapshots:
        return steps_per_s_from_times(result)
    steps = sum(len(ends) for ends in result.step_end_ns)
    # per direction, the bytes one step moves (at the last step's end every step's transfers are done), and how
    # much of its capacity that asks for: the direction asked the most moves most evenly, at its capacity once it
    # binds (chosen from the step and the link, not from what the window saw)
    per_step = {d: snapshots[-1][1 + d] / steps for d in (PULL, PUSH)}
    load = {d: per_step[d] / result.link_spec.peak_bytes_per_s(d) for d in (PULL, PUSH)}
    d = max((PULL, PUSH), key=lambda k: (load[k], k == PULL))
    if per_step[d] <= 0:
        return steps_per_s_from_times(result)
    t_a, t_b = measurement_window(result)
    at = {s[0]: s for s in snapshots}
    moved = at[t_b][1 + d] - at[t_a][1 + d]
    capacity = result.link_spec.peak_bytes_per_s(d) * result.n_shards * (t_b - t_a) / 1e9
    if moved < BYTES_COUNTED_FROM * capacity:  # below it, a few steps' pulls come in lumps: their time is smoother
        return steps_per_s_from_times(result)
    return moved / per_step[d] * 1e9 / (t_b - t_a)


def steps_per_s_from_times(result: SimResult) -> float:
    """Steps per second over the steady window, each worker's steps counted by the share of their time inside it
    (:func:`fraction_in_window`, the testbed's estimator of a real run's rate)."""
    t_a, t_b = measurement_window(result)
    done = sum(fraction_in_window(list(zip(s, e, strict=True)), t_a, t_b)
               for s, e in zip(result.step_start_ns, result.step_end_ns, strict=True))
    return done * 1e9 / (t_b - t_a)


def step_time_ns(result: SimResult, worker: int = 0) -> list[int]:
    """Durations of ``worker``'s steps, warm-up included."""
    return [e - s for s, e in zip(result.step_start_ns[worker], result.step_end_ns[worker], strict=True)]


def _snapshot_window(result: SimResult) -> tuple[int, int]:
    """:func:`measurement_window`, whose ends are step ends, where the run took its snapshots (a run without
    warm-up steps has none at its start)."""
    if not result.config.warmup_steps:
        raise ConfigError("utilisations are measured from the end of the last worker's warm-up step: simulate at "
                          "least one warm-up step (got 0)")
    return measurement_window(result)


def _window_use(result: SimResult, column: int) -> tuple[float, int, int]:
    """(amount used, window start, window end) of snapshot ``column`` (1 pull bytes, 2 push bytes, 3 PS
    thread-ns)."""
    t_a, t_b = _snapshot_window(result)
    at = {s[0]: s for s in result.snapshots}
    return at[t_b][column] - at[t_a][column], t_a, t_b


def link_utilisation(result: SimResult, direction: str) -> float:
    """Bytes ``direction`` (``pull``/``push``) carried in the window / what its peak capacity allows there (over
    all shards' links)."""
    d = PULL if direction == "pull" else PUSH
    moved, t_a, t_b = _window_use(result, 1 + d)
    return moved * 1e9 / (result.link_spec.peak_bytes_per_s(d) * (t_b - t_a) * result.n_shards)


def ps_cpu_capacity_ns(result: SimResult, t_a: int, t_b: int) -> float:
    """CPU time one PS could use in ``[t_a, t_b)``: its cores x the window; under a CFS quota, per period the
    window touches, the period's budget, or all the host's cores over the part of a period inside the window when
    that is less (a quota-held PS may spend a period's budget at once, on every core, so a window short against
    the period can hold more than cores x window)."""
    quota, cores = result.link_spec.ps_quota, result.ps_cores
    if quota is None or not quota.applies(cores):
        return cores * (t_b - t_a)
    period, host = quota.period_ns, quota.host_cores
    budget = cores * period
    first, last = t_a // period, (t_b - 1) // period
    if first == last:
        return min((t_b - t_a) * host, budget)
    head, tail = (first + 1) * period - t_a, t_b - last * period
    return min(head * host, budget) + min(tail * host, budget) + (last - first - 1) * budget


def ps_cpu_utilisation(result: SimResult) -> float:
    """PS CPU time used in the window / what the PS could use there (:func:`ps_cpu_capacity_ns`), over all
    shards."""
    busy, t_a, t_b = _window_use(result, 3)
    return busy / (ps_cpu_capacity_ns(result, t_a, t_b) * result.n_shards)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ShardUse:
    """One PS shard's utilisations in the steady window (fractions)."""

    shard: int
    pull: float
    push: float
    cpu: float

    @property
    def busiest(self) -> tuple[str, float]:
        """The shard's busiest resource and its utilisation."""
        return max((("link-pull", self.pull), ("link-push", self.push), ("ps-cpu", self.cpu)), key=lambda kv: kv[1])


def shard_utilisations(result: SimResult) -> tuple[ShardUse, ...]:
    """Per shard, its link's and CPU's utilisations (one shard: the whole PS's)."""
    if result.n_shards == 1:
        return (ShardUse(shard=0, pull=link_utilisation(result, "pull"), push=link_utilisation(result, "push"),
                         cpu=ps_cpu_utilisation(result)),)
    t_a, t_b = _snapshot_window(result)
    at = dict(zip((s[0] for s in result.snapshots), result.shard_snapshots, strict=True))
    span = t_b - t_a
    spec = result.link_spec
    cpu = ps_cpu_capacity_ns(result, t_a, t_b)
    return tuple(ShardUse(shard=k, pull=(b[0] - a[0]) * 1e9 / (spec.peak_bytes_per_s(PULL) * span),
                          push=(b[1] - a[1]) * 1e9 / (spec.peak_bytes_per_s(PUSH) * span),
                          cpu=(b[2] - a[2]) / cpu)
                 for k, (a, b) in enumerate(zip(at[t_a], at[t_b], strict=True)))


def busiest_shard(result: SimResult) -> ShardUse:
    """The shard whose busiest resource is the busiest of all (the lower shard on a tie; one PS: the PS)."""
    return max(shard_utilisations(result), key=lambda u: (u.busiest[1], -u.shard))


def _shard_sums(model: StepModel, result: SimResult, value: Callable[[int], float]) -> list[float]:
    """``value(task)`` summed per shard over the tasks the shards run."""
    shard = result.config.ps_shard_of_task or (0,) * model.n_tasks
    sums = [0.0] * result.n_shards
    for t in range(model.n_tasks):
        sums[shard[t]] += value(t)
    return sums


def link_bound_steps_per_s(model: StepModel, result: SimResult) -> float:
    """The most steps per second the link allows: each direction of each shard's link carries its share of one
    step's bytes per step, at most at its peak capacity."""
    bounds = []
    for d, kind in ((PULL, TaskKind.PULL), (PUSH, TaskKind.PUSH)):
        sizes = [model.size_bytes[t] if model.kinds[t] == kind else 0 for t in range(model.n_tasks)]
        per_shard = _shard_sums(model, result, sizes.__getitem__)
        bounds += [result.link_spec.peak_bytes_per_s(d) / b for b in per_shard if b > 0]
    return min(bounds) if bounds else math.inf


def ps_bound_steps_per_s(model: StepModel, result: SimResult) -> float:
    """The most steps per second the PS's CPU allows: its ops and its handling of every transfer request, on
    the busiest shard."""
    spec = result.link_spec

    def work(t: int) -> float:
        kind = model.kinds[t]
        if kind == TaskKind.PULL:
            return spec.rpc_cpu_ns[PULL]
        if kind == TaskKind.PUSH:
            return spec.rpc_cpu_ns[PUSH]
        if kind in PS_KINDS:
            return sum(spec.ps_work_ns(tm.dur_ns[t]) for tm in model.timings) / len(model.timings)
        return 0.0

    costs = [work(t) for t in range(model.n_tasks)]
    ops = [c if model.kinds[t] in PS_KINDS else 0.0 for t, c in enumerate(costs)]
    # every shard's CPU does all of its work on its cores, and its ops on at most its op threads (a request's
    # handling has handlers of its own: tracegen.pscpu)
    bounds = [result.ps_cores * 1e9 / w for w in _shard_sums(model, result, costs.__getitem__) if w]
    bounds += [min(result.ps_cores, result.ps_threads) * 1e9 / w for w in _shard_sums(model, result, ops.__getitem__)
               if w]
    return min(bounds, default=math.inf)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Staleness:
    """The staleness of every parameter update of some runs' measured steps (:mod:`tracegen.variables`): how
    many updates to the same parameter other workers' gradients made between a worker's read and its apply."""

    mean: float
    median: float
    p99: float
    histogram: tuple[tuple[int, int], ...]  # (staleness, updates), by staleness

    @property
    def n_updates(self) -> int:
        """Updates counted."""
        return sum(c for _, c in self.histogram)


def staleness(results: Sequence[SimResult]) -> Staleness | None:
    """The updates of ``results`` read and applied inside each run's steady window (:func:`measurement_window`:
    outside it fewer workers are running, and a slow worker's last steps would look fresh), pooled; None when no
    run applied a parameter a worker reads."""
    kept = [np.empty(0, dtype=np.int64)]
    for r in results:
        t_a, t_b = measurement_window(r)
        rows = r.staleness_updates()
        kept.append(rows[(rows[:, 0] >= t_a) & (rows[:, 1] <= t_b), 2])
    values = np.concatenate(kept)
    if not values.size:
        return None
    counts = np.bincount(values)
    return Staleness(mean=float(values.mean()), median=float(np.median(values)),
                     p99=float(np.percentile(values, 99, method="higher")),
                     histogram=tuple((int(s), int(c)) for s, c in enumerate(counts) if c))
