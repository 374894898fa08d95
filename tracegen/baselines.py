"""Two analytic baselines, so that what the simulator adds is visible beside it.

Both take a step's costs from the single-worker trace (:func:`step_costs`) and a link bandwidth:

- ``no_overlap``: one step = pull everything + compute + push everything, nothing overlapped:
  ``T1 = pull_bytes / B + compute + push_bytes / B``; throughput ``X(N) = min(N / T1, link bound)``, where the
  link bound is ``B / max(pull_bytes, push_bytes)`` (full duplex: each direction carries its own bytes).
- ``ps_queue``: the PS as one server in a closed queueing network (exact mean-value analysis). Each of the N
  workers computes for ``Z = compute`` (a delay station), then queues at the PS, whose service demand per step
  is ``D = (pull_bytes + push_bytes) / B + ps_compute`` (both directions and the applies served by one
  server). ``R(n) = D (1 + Q(n-1))``, ``X(n) = n / (R(n) + Z)``, ``Q(n) = X(n) R(n)``; ``X(N) <= 1 / D``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from parsers.trace import Trace
from tracegen.errors import ModelError
from tracegen.summary import summarize

BASELINES = ("no_overlap", "ps_queue")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StepCosts:
    """What one step of one worker costs, from its trace."""

    pull_bytes: int
    push_bytes: int
    compute_ns: int
    ps_compute_ns: int


def step_costs(trace: Trace) -> StepCosts:
    """A step's bytes and compute times (per-step medians of :func:`tracegen.summary.summarize`)."""
    s = summarize(trace)
    missing = [k for k in ("pull_bytes", "push_bytes", "compute_time_ns", "ps_compute_time_ns") if s[k] is None]
    if missing:
        raise ModelError(f"{trace.source}: the baselines need {', '.join(missing)}, which this "
                         f"{trace.source_format} trace does not give")
    return StepCosts(pull_bytes=int(s["pull_bytes"]), push_bytes=int(s["push_bytes"]),
                     compute_ns=int(s["compute_time_ns"]), ps_compute_ns=int(s["ps_compute_time_ns"]))


def _check(workers: Sequence[int], bandwidth_bytes_per_s: float) -> None:
    if not workers or min(workers) < 1:
        raise ModelError(f"'workers' must be counts >= 1 (got {list(workers)})")
    if bandwidth_bytes_per_s <= 0:
        raise ModelError(f"'bandwidth_bytes_per_s' must be > 0 (got {bandwidth_bytes_per_s})")


def no_overlap(costs: StepCosts, workers: Sequence[int], bandwidth_bytes_per_s: float) -> list[float]:
    """Steps per second for each N: no overlap inside a step, capped by the busier link direction."""
    _check(workers, bandwidth_bytes_per_s)
    step_s = (costs.pull_bytes + costs.push_bytes) / bandwidth_bytes_per_s + costs.compute_ns / 1e9
    bound = bandwidth_bytes_per_s / max(costs.pull_bytes, costs.push_bytes, 1)
    return [min(n / step_s, bound) for n in workers]


def ps_queue(costs: StepCosts, workers: Sequence[int], bandwidth_bytes_per_s: float) -> list[float]:
    """Steps per second for each N: exact MVA of one PS server and N workers (module docstring)."""
    _check(workers, bandwidth_bytes_per_s)
    demand_s = (costs.pull_bytes + costs.push_bytes) / bandwidth_bytes_per_s + costs.ps_compute_ns / 1e9
    think_s = costs.compute_ns / 1e9
    throughput: dict[int, float] = {}
    queue = 0.0
    for n in range(1, max(workers) + 1):
        response = demand_s * (1 + queue)
        throughput[n] = n / (response + think_s)
        queue = throughput[n] * response
    return [throughput[n] for n in workers]
