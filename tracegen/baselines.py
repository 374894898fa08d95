"""Analytic baselines, so that what the simulator adds is visible beside it. Each gets exactly the simulator's
inputs: the single-worker trace (its complete steps) and the same link (a profile or a bandwidth), through
:func:`link_rates`, which says how many bytes per second each direction gives N workers.

- ``roofline``: ``X(N) = min(N / T1, min over directions of rate(N) / bytes per step, PS bound)``, with ``T1``
  the median traced step: perfect scaling until a link direction (or the PS's CPU) saturates.
- ``no_overlap``: one step = pull everything + compute + push everything, nothing overlapped, each at the link's
  rate for one worker: ``T1' = pull / r + compute + push / r``; ``X(N) = min(N / T1', link bound)``.
- ``roofline_cycle``: the roofline with the link profile's ``cycle`` rate for N clients as each direction's rate
  (:func:`cycle_rates`): what clients alternating pulls and pushes, as workers do, moved on the two hosts — the
  profile's points the other baselines and the simulator's link model do not use.
- ``ps_queue``: the PS as one server in a closed queueing network (exact mean-value analysis). Each of the N
  workers computes for ``Z = compute`` (a delay station), then queues at the PS, whose service demand per step is
  ``D = pull / r + push / r + ps_compute`` (both directions and the applies served by one server).
  ``R(n) = D (1 + Q(n-1))``, ``X(n) = n / (R(n) + Z)``, ``Q(n) = X(n) R(n)``.

Workers that are not all alike (:func:`mixed`: each its own speed and, maybe, a link of its own) change only the
per-worker terms: worker i's step is ``T_i = max(T1 / speed_i, pull / own_i, push / own_i)`` in the roofline,
``pull / min(r, own_i) + compute / speed_i + push / min(r, own_i)`` in ``no_overlap``, and ``X(N)`` is the sum of
the N workers' ``1 / T_i`` under the same bounds; ``ps_queue``'s customers stay identical, with the N workers'
mean think time (their compute, plus what their own links add to their transfers).

The PS bound is ``cores / PS CPU per step`` when the simulator knows the PS's CPU per step (a single-worker
measurement, ``single-worker.json``): then ``no_overlap`` is capped by it too, and ``ps_queue`` serves that CPU
(over the cores) instead of the traced PS ops. Without it there is no PS bound.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

from parsers.linkprofile import LinkProfile
from parsers.singleworker import SingleWorker
from tracegen.errors import ModelError
from tracegen.link import PULL, PUSH, LinkSpec, interpolate
from tracegen.model import PS_KINDS, StepModel, TaskKind

BASELINES = ("roofline", "no_overlap", "ps_queue")
RateFn = Callable[[int], tuple[float, float]]  # N -> (pull, push) bytes per second the link gives N workers


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StepCosts:
    """What one step of one worker costs, from its complete traced steps (means over them)."""

    pull_bytes: int
    push_bytes: int
    step_ns: int
    compute_ns: float
    ps_compute_ns: float
    ps_bound_steps_per_s: float = float("inf")


def step_costs(model: StepModel, measured: SingleWorker | None = None) -> StepCosts:
    """A step's bytes, its median length, and its compute times (worker ops over the worker's threads); with a
    single-worker measurement that knows the PS's CPU per step and its cores, the PS's time per step from it."""
    ps_ns = model.mean_work_ns(PS_KINDS) / model.ps_threads
    bound = float("inf")
    if measured is not None and measured.ps_cpu_s_per_step and measured.ps_cores:
        ps_ns = measured.ps_cpu_s_per_step * 1e9 / measured.ps_cores
        bound = 1e9 / ps_ns
    return StepCosts(pull_bytes=model.bytes_of(TaskKind.PULL), push_bytes=model.bytes_of(TaskKind.PUSH),
                     step_ns=model.measured_step_ns,
                     compute_ns=model.mean_work_ns([TaskKind.COMPUTE]) / model.worker_threads,
                     ps_compute_ns=ps_ns, ps_bound_steps_per_s=bound)


def on_busiest_shard(costs: StepCosts, share: float) -> StepCosts:
    """``costs`` as the busiest of several PS shards sees them, when it serves ``share`` of a step's bytes: its
    bytes, and its share of the PS's CPU per step (each shard a PS like the traced one). The baselines then
    treat that shard as the one PS: the others are less loaded by construction."""
    if not 0 < share <= 1:
        raise ModelError(f"'share' must be in (0, 1] (got {share})")
    return dataclasses.replace(costs, pull_bytes=round(costs.pull_bytes * share),
                               push_bytes=round(costs.push_bytes * share),
                               ps_compute_ns=costs.ps_compute_ns * share,
                               ps_bound_steps_per_s=costs.ps_bound_steps_per_s / share)


def link_rates(spec: LinkSpec) -> RateFn:
    """Per direction, what N workers get while both directions are busy: the capacity for N connections, at
    most N times one connection's limit."""
    def rates(n: int) -> tuple[float, float]:
        return (min(spec.capacity(PULL, n, True), n * spec.connection_bytes_per_s[PULL]),
                min(spec.capacity(PUSH, n, True), n * spec.connection_bytes_per_s[PUSH]))
    return rates


def cycle_rates(profile: LinkProfile) -> RateFn | None:
    """Per direction, the profile's ``cycle`` rate for N clients (linear between the counts measured, flat beyond
    them): the same each way, as a cycling client pulls and pushes the same bytes; None without ``cycle`` points."""
    table = tuple((p.connections, float(p.pull_bytes_per_s)) for p in profile.of_mode("cycle"))
    if not table or min(r for _, r in table) <= 0:
        return None

    def rates(n: int) -> tuple[float, float]:
        rate = interpolate(table, n)
        return (rate, rate)
    return rates


def cycle_plateau(profile: LinkProfile, model: StepModel, n_workers: int) -> float | None:
    """Steps per second the profile's ``cycle`` rate for ``n_workers`` clients allows a step of ``model`` (the
    busier direction's bytes; ``roofline_cycle``'s link bound); None without ``cycle`` points or bytes to move."""
    rates = cycle_rates(profile)
    bound = math.inf if rates is None else _bound(step_costs(model), rates(n_workers))  # no PS bound: no measurement
    return bound if math.isfinite(bound) else None


def _check(workers: Sequence[int]) -> None:
    if not workers or min(workers) < 1:
        raise ModelError(f"'workers' must be counts >= 1 (got {list(workers)})")


def _bound(costs: StepCosts, rates: tuple[float, float]) -> float:
    """The lower of the busier link direction's bound and the PS's CPU's (when known)."""
    bounds = [r / b for r, b in zip(rates, (costs.pull_bytes, costs.push_bytes), strict=True) if b > 0]
    return min([*bounds, costs.ps_bound_steps_per_s])


def roofline_saturates(costs: StepCosts, rates: RateFn, largest: int) -> int | None:
    """The fewest workers at which the roofline reaches its bound (N / T1 at least the busier link direction's or
    the PS's CPU's bound), or None if not by ``largest``."""
    for n in range(1, largest + 1):
        if n * 1e9 / costs.step_ns >= _bound(costs, rates(n)):
            return n
    return None


def roofline(costs: StepCosts, workers: Sequence[int], rates: RateFn) -> list[float]:
    """Steps per second for each N: N / T1 until the busier direction saturates."""
    _check(workers)
    return [min(n * 1e9 / costs.step_ns, _bound(costs, rates(n))) for n in workers]


def no_overlap(costs: StepCosts, workers: Sequence[int], rates: RateFn) -> list[float]:
    """Steps per second for each N: nothing overlapped inside a step, capped by the busier direction."""
    _check(workers)
    pull_rate, push_rate = rates(1)
    step_s = costs.pull_bytes / pull_rate + costs.compute_ns / 1e9 + costs.push_bytes / push_rate
    return [min(n / step_s, _bound(costs, rates(n))) for n in workers]


def ps_queue(costs: StepCosts, workers: Sequence[int], rates: RateFn, think_s: float | None = None) -> list[float]:
    """Steps per second for each N: exact MVA of one PS server and N workers (module docstring); ``think_s``
    the workers' time away from the PS per step (default: the compute)."""
    _check(workers)
    think_s = costs.compute_ns / 1e9 if think_s is None else think_s
    throughput: dict[int, float] = {}
    queue = 0.0
    for n in range(1, max(workers) + 1):
        pull_rate, push_rate = rates(n)
        demand_s = costs.pull_bytes / pull_rate + costs.push_bytes / push_rate + costs.ps_compute_ns / 1e9
        response = demand_s * (1 + queue)
        throughput[n] = n / (response + think_s)
        queue = throughput[n] * response
    return [throughput[n] for n in workers]


@dataclasses.dataclass(frozen=True, slots=True)
class Worker:
    """One worker of a mixed cluster: its speed relative to the traced node and its own link's payload rate in
    bytes/s (0: none of its own)."""

    speed: float = 1.0
    link_bytes_per_s: float = 0.0


def mixed(name: str, costs: StepCosts, workers: Sequence[int], rates: RateFn,
          cluster: Sequence[Worker]) -> list[float]:
    """The baseline ``name`` for each N when worker i is ``cluster[i]`` (beyond it: like the traced worker);
    module docstring."""
    _check(workers)
    out = []
    pull_1, push_1 = rates(1)
    for n in workers:
        crew = [cluster[i] if i < len(cluster) else Worker() for i in range(n)]
        bound = _bound(costs, rates(n))
        if name == "roofline":
            steps_s = [max((costs.step_ns / 1e9 / w.speed, *_own_link_s(costs, w))) for w in crew]
            out.append(min(sum(1 / t for t in steps_s), bound))
        elif name == "no_overlap":
            steps_s = [costs.pull_bytes / _slower(pull_1, w) + costs.compute_ns / 1e9 / w.speed
                       + costs.push_bytes / _slower(push_1, w) for w in crew]
            out.append(min(sum(1 / t for t in steps_s), bound))
        elif name == "ps_queue":
            think = [costs.compute_ns / 1e9 / w.speed + costs.pull_bytes / _slower(pull_1, w)
                     - costs.pull_bytes / pull_1 + costs.push_bytes / _slower(push_1, w) - costs.push_bytes / push_1
                     for w in crew]
            out.append(ps_queue(costs, [n], rates, think_s=sum(think) / n)[0])
        else:
            raise ModelError(f"'name' must be one of {', '.join(BASELINES)} (got {name!r})")
    return out


def _own_link_s(costs: StepCosts, w: Worker) -> tuple[float, ...]:
    """A step's pulls and pushes on the worker's own link alone, seconds; () without one."""
    if not w.link_bytes_per_s:
        return ()
    return costs.pull_bytes / w.link_bytes_per_s, costs.push_bytes / w.link_bytes_per_s


def _slower(rate: float, w: Worker) -> float:
    """One connection's rate for worker ``w``: the link's, or its own link's when that is slower."""
    return min(rate, w.link_bytes_per_s) if w.link_bytes_per_s else rate
