"""The scaling curve: predicted throughput for each number of workers, its plateau, knee and bottleneck.

For each N the simulation runs once per seed; a point reports the mean steps/s and the lowest and highest over
seeds. The *plateau* is what the model gives once workers are plentiful: the best rate of a curve that stalled
(:func:`tracegen.plateau.stalled_after`), else the throughput simulated past the asked N: at ``saturation_workers``
(enough workers to keep the tighter of the link and PS bounds busy, or the largest asked N if that is more), then at
twice as many while that still adds :data:`tracegen.plateau.STALL_GAIN` (at most
:data:`tracegen.plateau.PLATEAU_PROBES` times, up to :data:`tracegen.plateau.MAX_SATURATION_WORKERS`): a curve that
climbs slowly past the bound's N is not taken as flat where the asked range ends. ``plateau_reached`` is False when
the last of those still climbed (the plateau is then a lower bound). The *knee* is the smallest asked N whose mean
reaches 95 % of the plateau; when no asked N does, the knee is ``None`` ("not reached by N=<largest>"), never the
largest N of a curve that still climbs.

A point's bottleneck is the resource busiest in its runs, its utilisation averaged over the seeds: ``link-pull`` /
``link-push`` (a PS link direction carrying ≥ 80 % of what it carries while the other direction is busy too, as both
are at a link-bound plateau: :func:`tracegen.bottleneck.two_way_share`), ``ps-cpu`` (the PS's cores busy ≥ 80 %), of
the PS shard busiest on that measure when there are several (:func:`tracegen.bottleneck.labelled_shard`; the
utilisation columns are the shards' mean); when none is that busy: ``workers`` while each worker still steps at
:data:`tracegen.bottleneck.EFFICIENT` of the smallest N's rate per worker or more (adding workers helps), and
``contention`` once it does not (workers wait on each other's transfers, requests and applies, though no single
resource is saturated). Not the knee: a curve flat from N = 2 that climbs again later (workers in lock-step on both
link directions, each short of busy) said ``workers`` at N = 3 with each worker at half its rate alone, and workers
that never meet said ``contention`` at the largest N of a curve searched no further.

This module builds the curve (:func:`scaling_curve`) and holds its records; the stall, the plateau search and the
knee are :mod:`tracegen.plateau`, the bottleneck :mod:`tracegen.bottleneck`, the findings in words
:mod:`tracegen.curvetext`, and the ``--workers`` lists :mod:`tracegen.workercounts`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import statistics
from collections.abc import Callable, Sequence

from tracegen.bottleneck import idle_label, runs_bottleneck
from tracegen.errors import ConfigError
from tracegen.metrics import (
    Staleness,
    link_bound_steps_per_s,
    link_utilisation,
    ps_bound_steps_per_s,
    ps_cpu_utilisation,
    staleness,
    steps_per_s,
)
from tracegen.model import StepModel
from tracegen.plateau import (
    STALL_GAIN,
    knee,
    plateau_search,
    saturated,
    saturation_workers,
    search_noise,
    stall_noise_of,
    stalled_after,
)
from tracegen.processes import Processes
from tracegen.simulate import SimConfig, SimResult, simulate


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
    bottleneck: str
    staleness: Staleness | None = None  # of the parameter updates, pooled over seeds
    steps_per_s_ci95: float | None = None  # half-width of the 95 % confidence interval of the mean over seeds


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Curve:
    """A scaling curve and what bounds it."""

    points: tuple[CurvePoint, ...]
    plateau_steps_per_s: float
    saturation_workers: int
    knee_n_workers: int | None
    link_bound_steps_per_s: float
    ps_bound_steps_per_s: float
    link_description: str
    n_events: int
    unsimulated_workers: tuple[int, ...] = ()  # asked N past the plateau, not simulated (``stop_at_plateau``)
    plateau_reached: bool = True  # False: the plateau search's last N still climbed; the plateau is a lower bound
    # (N the search stopped at, N it was compared with, the wider 95 % half-width of the two, steps/s) when that stop,
    # a rise under STALL_GAIN, lies deep inside the seeds' noise (:func:`tracegen.plateau.search_noise`); None when it
    # does not, when the plateau is at the tighter bound, or when no search ran
    plateau_noise: tuple[int, int, float] | None = None
    # the same for the stall that ended the curve (``stop_at_plateau``, :func:`tracegen.plateau.stalled_after`): (N it
    # stalled at, the best N before it, the wider 95 % half-width of the two) when that is inside the seeds' noise
    # (:func:`tracegen.plateau.noise_between`); None when it is not, or the rate did not stall
    stall_noise: tuple[int, int, float] | None = None


# Student's t, two-sided 95 %, for 1..30 degrees of freedom (the textbook table)
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def ci95_half_width(values: Sequence[float]) -> float | None:
    """Half-width of the 95 % confidence interval of the mean of ``values`` (independent seeds), Student's t;
    None for fewer than two. Beyond 30 degrees of freedom t is 1.96 + 2.4 / df (within 0.003 of the table)."""
    n = len(values)
    if n < 2:
        return None
    df = n - 1
    t = _T95[df - 1] if df <= len(_T95) else 1.96 + 2.4 / df
    return t * statistics.stdev(values) / math.sqrt(n)


def _point(n: int, runs: Sequence[SimResult]) -> CurvePoint:
    rates = [steps_per_s(r) for r in runs]
    return CurvePoint(
        n_workers=n, steps_per_s=statistics.fmean(rates), steps_per_s_low=min(rates), steps_per_s_high=max(rates),
        pull_link_utilisation=statistics.fmean(link_utilisation(r, "pull") for r in runs),
        push_link_utilisation=statistics.fmean(link_utilisation(r, "push") for r in runs),
        ps_cpu_utilisation=statistics.fmean(ps_cpu_utilisation(r) for r in runs),
        bottleneck=runs_bottleneck(runs), staleness=staleness(runs),
        steps_per_s_ci95=ci95_half_width(rates))


def simulate_job(job: tuple[StepModel, SimConfig]) -> SimResult:
    """:func:`~tracegen.simulate.simulate` of one ``(model, config)``: what a worker process of a
    :class:`~tracegen.processes.Processes` given to :func:`scaling_curve` runs."""
    return simulate(*job)


Simulations = Processes[tuple[StepModel, SimConfig], SimResult]  # local processes running simulate_job


def simulations(jobs: int) -> contextlib.AbstractContextManager[Simulations | None]:
    """``jobs`` local processes for :func:`scaling_curve`'s ``processes`` (a ``with`` block); None for one job:
    the simulations then run in this process, with nothing to start."""
    return Processes(simulate_job, jobs) if jobs > 1 else contextlib.nullcontext()


def _points(model: StepModel, config: SimConfig, ns: Sequence[int], seeds: int,
            processes: Simulations | None,
            on_point: Callable[[CurvePoint, list[SimResult]], None]) -> None:
    """Simulate every N of ``ns`` with ``seeds`` seeds; ``on_point(point, its runs)`` as each N's runs are
    all in (in order of N without ``processes``; as they finish with them). Each N's runs are dropped once its
    point is made: a 64-worker run's records are tens of megabytes."""
    work = [(k, (model, dataclasses.replace(config, n_workers=n, seed=config.seed + s, record_tasks=False)))
            for k, n in enumerate(ns) for s in range(seeds)]
    got: dict[int, list[SimResult]] = {}

    def done(key: int, run: SimResult) -> None:
        runs = got.setdefault(key, [])
        runs.append(run)
        if len(runs) == seeds:
            del got[key]
            runs.sort(key=lambda r: r.config.seed)
            on_point(_point(ns[key], runs), runs)

    if processes is None:
        for key, job in work:
            done(key, simulate_job(job))
    else:
        processes.stream(sorted(work, key=lambda kj: -kj[1][1].n_workers), done)  # the longest first


def batch_workers(jobs: int, seeds: int) -> int:
    """How many N :func:`scaling_curve` simulates at a time while it looks for the rate to stall: enough runs to
    keep ``jobs`` processes busy (twice as many), each N ``seeds`` runs."""
    return max(1, math.ceil(2 * jobs / seeds))


def scaling_curve(model: StepModel, config: SimConfig, workers: Sequence[int], *, seeds: int = 3,
                  progress: Callable[[int], None] | None = None, find_plateau: bool = True,
                  processes: Simulations | None = None, stop_at_plateau: bool = False) -> Curve:
    """Simulate every N in ``workers`` with seeds ``config.seed .. config.seed + seeds - 1``, and the plateau
    (without ``find_plateau``, the plateau is the largest N's throughput and no more workers are simulated).
    ``stop_at_plateau``: the N are simulated in order until the rate stalls at a saturated resource
    (:func:`tracegen.plateau.stalled_after`, :func:`tracegen.plateau.saturated`); the N after that are not simulated
    (``unsimulated_workers``), the plateau is the best rate and no more is simulated for it. Each N simulated is the
    same point either way. ``processes`` (of :func:`simulate_job`): run the simulations there, side by side; the
    curve is the same. ``progress(n)`` when N's simulations are done."""
    if not workers:
        raise ConfigError("'workers' must name at least one worker count (got none)")
    if not 1 <= seeds <= 1000:
        raise ConfigError(f"'seeds' must be from 1 to 1000 (got {seeds})")
    asked = sorted(set(workers))
    by_n: dict[int, CurvePoint] = {}
    events: dict[int, int] = {}
    firsts: list[SimResult] = []  # the smallest N's first run: what the bounds are read from

    def keep(point: CurvePoint, runs: list[SimResult]) -> None:
        by_n[point.n_workers] = point
        if point.n_workers == asked[0]:
            firsts.append(runs[0])
        events[point.n_workers] = sum(r.n_events for r in runs)
        if progress is not None:
            progress(point.n_workers)

    ns, stalled = asked, None
    if not stop_at_plateau:
        _points(model, config, ns, seeds, processes, keep)
    else:  # a batch of N at a time (enough to keep the processes busy), in order, until the rate stalls
        batch = 1 if processes is None else batch_workers(processes.jobs, seeds)
        for start in range(0, len(asked), batch):
            _points(model, config, asked[start:start + batch], seeds, processes, keep)
            done = [by_n[n] for n in asked[:start + batch] if n in by_n]
            link = firsts[0].link_spec
            stalled = stalled_after([p.steps_per_s for p in done], [saturated(p, link) for p in done])
            if stalled is not None:
                ns = asked[:stalled + 1]  # what a later N of the batch gave is dropped: the same curve for any jobs
                break
    points = [by_n[n] for n in ns]
    n_events = sum(events[n] for n in ns)
    first = firsts[0]
    link_bound, ps_bound = link_bound_steps_per_s(model, first), ps_bound_steps_per_s(model, first)
    if stalled is None and find_plateau:  # every asked N simulated: the curve may have stalled among them
        stalled = stalled_after([p.steps_per_s for p in points], [saturated(p, first.link_spec) for p in points])
    reached, noise, stall_noise = True, None, stall_noise_of(points, stalled)
    if stalled is not None:  # the plateau is known: the best rate simulated
        best = max(points, key=lambda p: (p.steps_per_s, -p.n_workers))
        sat, plateau = best.n_workers, best.steps_per_s
    elif not find_plateau:
        sat, plateau = ns[-1], points[-1].steps_per_s
    else:
        one = points[0].steps_per_s / points[0].n_workers
        start = saturation_workers(one, min(link_bound, ps_bound), ns[-1])

        probed: list[CurvePoint] = []  # the points the search simulates past the asked N, in order
        sat, plateau, reached = _plateau_past(points, start, functools.partial(
            _probe, model, config, seeds, processes, probed))
        noise = search_noise(points[-1], probed, plateau=plateau, bound=min(link_bound, ps_bound))
    knee_n = knee(points, plateau)
    first_rate = points[0].steps_per_s / points[0].n_workers
    points = [dataclasses.replace(p, bottleneck=idle_label(p.n_workers, p.steps_per_s, first_rate))
              if p.bottleneck == "workers" else p for p in points]
    return Curve(points=tuple(points), plateau_steps_per_s=plateau, saturation_workers=sat, knee_n_workers=knee_n,
                 link_bound_steps_per_s=link_bound, ps_bound_steps_per_s=ps_bound,
                 link_description=first.link_spec.description, n_events=n_events,
                 unsimulated_workers=tuple(asked[len(ns):]), plateau_reached=reached, plateau_noise=noise,
                 stall_noise=stall_noise)


def _probe(model: StepModel, config: SimConfig, seeds: int, processes: Simulations | None,
           probed: list[CurvePoint], n: int) -> float:
    """The rate simulated at ``n`` for the plateau search, its point appended to ``probed``."""
    _points(model, config, [n], seeds, processes, lambda point, _runs: probed.append(point))
    return probed[-1].steps_per_s


def _plateau_past(points: Sequence[CurvePoint], start: int, at: Callable[[int], float]) -> tuple[int, float, bool]:
    """:func:`tracegen.plateau.plateau_search` past the asked ``points``; an asked N above what it found (the seeds'
    noise, a dip past it) is the plateau instead: never a plateau under a rate the curve shows."""
    before = [p.steps_per_s for p in points[:-1]]  # one point alone: nothing says it has stopped rising
    rising = not before or points[-1].steps_per_s >= max(before) * (1 + STALL_GAIN)
    sat, plateau, reached = plateau_search(points[-1].n_workers, points[-1].steps_per_s, start, at, rising=rising)
    best = max(points, key=lambda p: (p.steps_per_s, -p.n_workers))
    return (best.n_workers, best.steps_per_s, reached) if best.steps_per_s > plateau else (sat, plateau, reached)
