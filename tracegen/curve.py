"""The scaling curve: predicted throughput for each number of workers, its knee and its bottleneck.

For each N the simulation runs once per seed; a point reports the mean steps/s and the lowest and highest over
seeds. The knee is the smallest N whose mean reaches 95 % of the curve's maximum. A point's bottleneck is the
resource busiest in that run: ``link-pull`` / ``link-push`` (a PS link direction busy ≥ 80 % of the run),
``ps-cpu`` (PS threads busy ≥ 80 %), ``ps-transfer`` (the PS's CPU moving bytes at ≥ 80 % of
``ps_transfer_bytes_per_s``); when none is that busy: ``workers`` up to the knee (each worker's own step time:
adding workers helps) and ``contention`` past it (workers wait on each other's transfers and applies, although
no single resource is saturated).
The link bound is the throughput at which one direction would be busy all the time.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence

from tracegen.errors import ConfigError
from tracegen.model import StepModel
from tracegen.simulate import (
    SimConfig,
    SimResult,
    link_bound_steps_per_s,
    link_utilisation,
    ps_bound_steps_per_s,
    ps_cpu_utilisation,
    ps_transfer_utilisation,
    simulate,
    steps_per_s,
)

KNEE_FRACTION = 0.95
BUSY_THRESHOLD = 0.8


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CurvePoint:
    """Prediction for one number of workers (utilisations are fractions 0..1, means over seeds)."""

    n_workers: int
    steps_per_s: float
    steps_per_s_low: float
    steps_per_s_high: float
    pull_link_utilisation: float
    push_link_utilisation: float
    ps_cpu_utilisation: float
    ps_transfer_utilisation: float
    bottleneck: str


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Curve:
    """A scaling curve and what bounds it."""

    points: tuple[CurvePoint, ...]
    knee_n_workers: int
    link_bound_steps_per_s: float
    ps_bound_steps_per_s: float
    pull_bandwidth_bytes_per_s: int
    push_bandwidth_bytes_per_s: int
    latency_ns: int
    n_events: int


def parse_workers(text: str) -> tuple[int, ...]:
    """``1-16`` → 1..16, ``1,2,4,8`` → those, ``1-4,8,16`` → both kinds; sorted, unique, each ≥ 1."""
    out: set[int] = set()
    for part in text.split(","):
        piece = part.strip()
        lo_s, sep, hi_s = piece.partition("-")
        try:
            lo = int(lo_s)
            hi = int(hi_s) if sep else lo
        except ValueError:
            raise ConfigError(f"'workers': cannot read {piece!r} in {text!r}; write e.g. 1-16 or 1,2,4,8") from None
        if lo < 1 or hi < lo or hi > 100_000:
            raise ConfigError(f"'workers': {piece!r} must be N or LO-HI with 1 <= LO <= HI <= 100000 "
                              f"(got {text!r})")
        out.update(range(lo, hi + 1))
    return tuple(sorted(out))


def bottleneck(result: SimResult) -> str:
    """Name of the resource that bounds a run (see the module docstring)."""
    use = {"link-pull": link_utilisation(result, "pull"), "link-push": link_utilisation(result, "push"),
           "ps-cpu": ps_cpu_utilisation(result), "ps-transfer": ps_transfer_utilisation(result)}
    name, value = max(use.items(), key=lambda kv: kv[1])
    return name if value >= BUSY_THRESHOLD else "workers"


def knee(points: Sequence[CurvePoint], fraction: float = KNEE_FRACTION) -> int:
    """The smallest N whose throughput reaches ``fraction`` of the curve's maximum."""
    best = max(p.steps_per_s for p in points)
    return min(p.n_workers for p in points if p.steps_per_s >= fraction * best)


def scaling_curve(model: StepModel, config: SimConfig, workers: Sequence[int], *, seeds: int = 3) -> Curve:
    """Simulate every N in ``workers`` with seeds ``config.seed .. config.seed + seeds - 1``."""
    if not workers:
        raise ConfigError("'workers' must name at least one worker count (got none)")
    if seeds < 1:
        raise ConfigError(f"'seeds' must be >= 1 (got {seeds})")
    points = []
    n_events = 0
    last: SimResult | None = None
    for n in sorted(set(workers)):
        runs = [simulate(model, dataclasses.replace(config, n_workers=n, seed=config.seed + s, record_tasks=False))
                for s in range(seeds)]
        rates = [steps_per_s(r) for r in runs]
        n_events += sum(r.n_events for r in runs)
        names = [bottleneck(r) for r in runs]
        points.append(CurvePoint(
            n_workers=n, steps_per_s=statistics.fmean(rates), steps_per_s_low=min(rates),
            steps_per_s_high=max(rates),
            pull_link_utilisation=statistics.fmean(link_utilisation(r, "pull") for r in runs),
            push_link_utilisation=statistics.fmean(link_utilisation(r, "push") for r in runs),
            ps_cpu_utilisation=statistics.fmean(ps_cpu_utilisation(r) for r in runs),
            ps_transfer_utilisation=statistics.fmean(ps_transfer_utilisation(r) for r in runs),
            bottleneck=max(sorted(set(names)), key=names.count)))
        last = runs[0]
    assert last is not None  # noqa: S101 - workers is non-empty
    knee_n = knee(points)
    points = [dataclasses.replace(p, bottleneck="contention") if p.bottleneck == "workers" and p.n_workers > knee_n
              else p for p in points]
    return Curve(points=tuple(points), knee_n_workers=knee_n,
                 link_bound_steps_per_s=link_bound_steps_per_s(model, last),
                 ps_bound_steps_per_s=ps_bound_steps_per_s(model, last),
                 pull_bandwidth_bytes_per_s=last.pull_bandwidth_bytes_per_s,
                 push_bandwidth_bytes_per_s=last.push_bandwidth_bytes_per_s, latency_ns=last.latency_ns,
                 n_events=n_events)


def finite(x: float) -> float | None:
    """``x`` or None when infinite (for output)."""
    return None if math.isinf(x) else x
