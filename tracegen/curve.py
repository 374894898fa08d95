"""The scaling curve: predicted throughput for each number of workers, its plateau, knee and bottleneck.

For each N the simulation runs once per seed; a point reports the mean steps/s and the lowest and highest over
seeds. The *plateau* is what the model gives once workers are plentiful: the best rate of a curve that stalled
(:func:`stalled_after`), else the throughput simulated past the asked N: at ``saturation_workers`` (enough
workers to keep the tighter of the link and PS bounds busy, or the largest asked N if that is more), then at twice
as many while that still adds :data:`STALL_GAIN` (at most :data:`PLATEAU_PROBES` times, up to
:data:`MAX_SATURATION_WORKERS`): a curve that climbs slowly past the bound's N is not taken as flat where the
asked range ends. ``plateau_reached`` is False when the last of those still climbed (the plateau is then a
lower bound). The *knee* is the smallest asked N whose mean reaches 95 % of the plateau; when no asked N does,
the knee is ``None`` ("not reached by N=<largest>"), never the largest N of a curve that still climbs.

A point's bottleneck is the resource busiest in its runs, its utilisation averaged over the seeds: ``link-pull`` /
``link-push`` (a PS link direction carrying ≥ 80 % of what it carries while the other direction is busy too, as
both are at a link-bound plateau: :func:`two_way_share`), ``ps-cpu`` (the PS's cores busy ≥ 80 %),
of the PS shard busiest on that measure when there are several (:func:`labelled_shard`; the utilisation columns are
the shards' mean); when none is that busy:
``workers`` while each worker still steps at :data:`EFFICIENT` of the smallest N's rate per worker or more (adding
workers helps), and ``contention`` once it does not (workers wait on each other's transfers, requests and applies,
though no single resource is saturated). Not the knee: a curve flat from N = 2 that climbs again later (workers in
lock-step on both link directions, each short of busy) said ``workers`` at N = 3 with each worker at half its
rate alone, and workers that never meet said ``contention`` at the largest N of a curve searched no further.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import statistics
from collections.abc import Callable, Iterable, Sequence

from parsers.errors import quoted
from tracegen.errors import ConfigError
from tracegen.link import PULL, PUSH, LinkSpec
from tracegen.metrics import (
    ShardUse,
    Staleness,
    link_bound_steps_per_s,
    link_utilisation,
    ps_bound_steps_per_s,
    ps_cpu_utilisation,
    shard_utilisations,
    staleness,
    steps_per_s,
)
from tracegen.model import StepModel
from tracegen.processes import Processes
from tracegen.simulate import MAX_WORKERS, SimConfig, SimResult, simulate
from tracegen.units import fixed

KNEE_FRACTION = 0.95
BUSY_THRESHOLD = 0.8
EFFICIENT = 0.8  # a point with no busy resource is ``workers`` at this share of the smallest N's rate per worker
MAX_SATURATION_WORKERS = 256
PLATEAU_PROBES = 3  # doublings of N past the asked range while the rate still climbs (the plateau search)
STALL_POINTS = 3  # past the plateau: this many asked N in a row, each not STALL_GAIN above the best rate so far
STALL_GAIN = 0.01
SATURATED = 0.9  # predict's stall counts only points whose busiest resource is at least this busy


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
    # a rise under STALL_GAIN, lies deep inside the seeds' noise (:func:`search_noise`); None when it does not, when
    # the plateau is at the tighter bound, or when no search ran
    plateau_noise: tuple[int, int, float] | None = None
    # the same for the stall that ended the curve (``stop_at_plateau``, :func:`stalled_after`): (N it stalled at, the
    # best N before it, the wider 95 % half-width of the two) when that is inside the seeds' noise
    # (:func:`noise_between`); None when it is not, or the rate did not stall
    stall_noise: tuple[int, int, float] | None = None


def parse_workers(text: str, name: str = "workers") -> tuple[int, ...]:
    """``1-16`` → 1..16, ``1,2,4,8`` → those, ``1-4,8,16`` → both kinds; sorted, each ≥ 1. An N given twice
    (``1,1,2``, ``1-4,3``) is refused: a list typed with a repeat holds a slip, and dropping the repeat would
    answer a question that was not asked. ``name``: the option the list came from, for the error message."""
    out: dict[int, str] = {}  # N → the piece that gave it
    for part in text.split(","):
        piece = part.strip()
        lo_s, sep, hi_s = piece.partition("-")
        if not (lo_s.isascii() and lo_s.isdigit()) or (sep and not (hi_s.isascii() and hi_s.isdigit())):
            # "cannot read '' in ''" of an empty option, or of '1,,2', left the reader to find the nothing
            what = "" if piece else " (nothing given)" if not text.strip() else " (an empty entry)"
            raise ConfigError(f"'{name}': cannot read {quoted(piece)} in {quoted(text)}{what}; write e.g. 1-16 or "
                              "1,2,4,8")
        lo = _count(lo_s)
        hi = _count(hi_s) if sep else lo
        if lo < 1 or hi < lo or hi > MAX_WORKERS:
            raise ConfigError(f"'{name}': {quoted(piece)} must be N or LO-HI with 1 <= LO <= HI <= {MAX_WORKERS} "
                              f"(got {quoted(text)})")
        again = next((n for n in range(lo, hi + 1) if n in out), None)
        if again is not None:
            pieces = "" if out[again] == piece else f" ({quoted(out[again])} and {quoted(piece)})"
            raise ConfigError(f"'{name}': {quoted(text)} lists N={again} twice{pieces}; give each N once")
        out.update(dict.fromkeys(range(lo, hi + 1), piece))
    return tuple(sorted(out))


def _count(digits: str) -> int:
    """ASCII ``digits`` as a number, or a number beyond any N for more than 18 after leading zeros: ``int`` refuses
    4300 digits and more with a ValueError, which was a traceback of ``--workers``."""
    significant = digits.lstrip("0")
    return int(significant or "0") if len(significant) <= 18 else 10**18


def format_workers(workers: Sequence[int]) -> str:
    """The inverse of :func:`parse_workers`: ``(1, 2, 3, 8)`` → ``1-3,8``."""
    runs: list[list[int]] = []
    for n in sorted(set(workers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in runs)


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


def bottleneck(result: SimResult) -> str:
    """Name of the busiest resource of a run, or ``workers`` when none is busy (module docstring); with several
    PS shards, of the shard busiest on that measure (:func:`labelled_shard`; their mean would hide one saturated
    shard among idle ones)."""
    return busiest_label(labelled_shard(shard_utilisations(result), result.link_spec), result.link_spec)


def runs_bottleneck(runs: Sequence[SimResult]) -> str:
    """The bottleneck of one N's runs (its seeds): of each shard's utilisations averaged over the runs (with one PS,
    the figures a curve's table prints beside it), so that the label never contradicts them; a vote of the runs'
    own labels called a point with 78 % push ``link-push`` and the next, 80 %, ``workers``."""
    per_run = [shard_utilisations(r) for r in runs]
    means = [ShardUse(shard=k, pull=statistics.fmean(u[k].pull for u in per_run),
                      push=statistics.fmean(u[k].push for u in per_run),
                      cpu=statistics.fmean(u[k].cpu for u in per_run)) for k in range(len(per_run[0]))]
    return busiest_label(labelled_shard(means, runs[0].link_spec), runs[0].link_spec)


def labelled_shard(uses: Sequence[ShardUse], link: LinkSpec) -> ShardUse:
    """The shard a bottleneck is named from: the one whose load is highest as :func:`busiest_label` weighs it (the
    lower shard on a tie). Not :func:`tracegen.metrics.busiest_shard`, the busiest against each resource's peak: on
    three greedy shards at N = 24 that was shard 2's CPU at 74 %, so the point said ``workers``, while shard 1's
    pull link moved 69 % of its peak, 92 % of what it carries both ways."""
    return max(uses, key=lambda u: (_load(u, link)[1], -u.shard))


def _load(use: ShardUse, link: LinkSpec) -> tuple[str, float]:
    """A shard's busiest resource and its load as :func:`busiest_label` weighs it."""
    loads = (("link-pull", use.pull / two_way_share(link, PULL)),
             ("link-push", use.push / two_way_share(link, PUSH)), ("ps-cpu", use.cpu))
    return max(loads, key=lambda kv: kv[1])


def busiest_label(busiest: ShardUse, link: LinkSpec) -> str:
    """:func:`bottleneck` from the shard it is named from (:func:`labelled_shard`), when that is already at hand. A
    link direction is weighed against what it carries while the other direction is busy too
    (:func:`two_way_share`), as :func:`saturated` weighs it: a link given by its bandwidth alone carries 3/4 of it
    each way then, so measured against its peak it never reached 80 %, and its plateau, the link moving all it
    could, was labelled ``contention``."""
    name, value = _load(busiest, link)
    return name if value >= BUSY_THRESHOLD else "workers"


def idle_label(n_workers: int, steps_per_s: float, first_per_worker: float) -> str:
    """What holds a point whose resources are none of them busy (module docstring): ``workers`` while each of its
    ``n_workers`` steps at :data:`EFFICIENT` of ``first_per_worker`` (the smallest N's steps/s per worker) or
    more, else ``contention``."""
    return "workers" if steps_per_s >= EFFICIENT * first_per_worker * n_workers else "contention"


def knee(points: Sequence[CurvePoint], plateau: float, fraction: float = KNEE_FRACTION) -> int | None:
    """The smallest N whose throughput reaches ``fraction`` of the plateau; None if none does."""
    return min((p.n_workers for p in points if p.steps_per_s >= fraction * plateau), default=None)


def saturation_workers(one_worker_steps_per_s: float, bound_steps_per_s: float, largest: int) -> int:
    """Workers enough to saturate the tighter bound (1.5 x bound / one worker's rate, plus one), at least
    ``largest``, at most :data:`MAX_SATURATION_WORKERS` (or ``largest`` if that is more)."""
    if not math.isfinite(bound_steps_per_s) or one_worker_steps_per_s <= 0:
        return largest
    wanted = math.ceil(1.5 * bound_steps_per_s / one_worker_steps_per_s) + 1
    return max(largest, min(wanted, MAX_SATURATION_WORKERS))


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


def stalled_after(rates: Sequence[float], saturated: Sequence[bool] | None = None) -> int | None:
    """The index of the rate after which a curve has stalled: :data:`STALL_POINTS` rates in a row, each not
    :data:`STALL_GAIN` above the best before it (so the last of them rose less than that over all of them); None
    while it still climbs. With ``saturated`` (per rate), only saturated points count, and one that is not starts
    the count again: a flat stretch below a saturated resource (workers in lock-step, say) may rise again."""
    best, stall = 0.0, 0
    for i, rate in enumerate(rates):
        if rate > best * (1 + STALL_GAIN):
            best, stall = rate, 0
        else:
            stall = stall + 1 if saturated is None or saturated[i] else 0
        if stall >= STALL_POINTS:
            return i
    return None


def saturated(point: CurvePoint, link: LinkSpec | None = None) -> bool:
    """Whether ``point``'s busiest resource (a link direction or the PS's CPU, means over seeds and shards) is
    :data:`SATURATED` busy: more workers then cannot raise the rate much. A direction's utilisation is of its
    peak (:meth:`~tracegen.link.LinkSpec.peak_bytes_per_s`); with ``link``, a direction counts as busy at that share
    of the most it carries while the other direction is busy too, its lower ceiling under the two-way load of a
    plateau (a link given by its bandwidth alone carries 3/4 of it each way then: measured against the peak, it
    never looked saturated, and ``--workers 1-3000`` simulated every N)."""
    pull, push = (SATURATED if link is None else SATURATED * two_way_share(link, d) for d in (PULL, PUSH))
    return (point.pull_link_utilisation >= pull or point.push_link_utilisation >= push
            or point.ps_cpu_utilisation >= SATURATED)


def two_way_share(link: LinkSpec, direction: int) -> float:
    """The most ``direction`` carries while the other is busy, as a share of its peak."""
    return max(rate for _, rate in link.both[direction]) / link.peak_bytes_per_s(direction)


def scaling_curve(model: StepModel, config: SimConfig, workers: Sequence[int], *, seeds: int = 3,
                  progress: Callable[[int], None] | None = None, find_plateau: bool = True,
                  processes: Simulations | None = None, stop_at_plateau: bool = False) -> Curve:
    """Simulate every N in ``workers`` with seeds ``config.seed .. config.seed + seeds - 1``, and the plateau
    (without ``find_plateau``, the plateau is the largest N's throughput and no more workers are simulated).
    ``stop_at_plateau``: the N are simulated in order until the rate stalls at a saturated resource
    (:func:`stalled_after`, :func:`saturated`); the N after that are not simulated (``unsimulated_workers``),
    the plateau is the best rate and no more is simulated for it. Each N simulated is the same point either way.
    ``processes`` (of :func:`simulate_job`): run the simulations there, side by side; the curve is the same.
    ``progress(n)`` when N's simulations are done."""
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


def search_noise(largest: CurvePoint, probed: Sequence[CurvePoint], *, plateau: float = 0.0,
                 bound: float = math.inf) -> tuple[int, int, float] | None:
    """Whether the plateau search past the asked range, which simulated ``probed`` after the asked ``largest``
    and stopped on the last of them, a rise under :data:`STALL_GAIN` over the one before, stopped inside the
    seeds' noise: (the N it stopped at, the N before, the wider 95 % half-width of the two) when that half-width is
    more than the 5 % (1 - :data:`KNEE_FRACTION`) between the plateau and the knee, let alone the STALL_GAIN the stop
    was judged by; else None: the quick start's ±0.47 on 22.14 steps/s at N=64 (2 %), a last point that rose more
    (the search ended still rising: a lower bound), and a ``plateau`` within STALL_GAIN of the tighter ``bound``,
    pinned by it, noise or not. One such comparison is all that ends the search: ``--steps 3`` on the bundled mlp
    trace stopped at N=5 on a 0.7 % rise over N=4 (±6.05 and ±9.08 steps/s) and called 94.22 steps/s the plateau,
    where ``--steps 30`` went on to 96.33 at N=20, its link bound."""
    if not probed or plateau >= (1 - STALL_GAIN) * bound:
        return None
    return noise_between(probed[-1], probed[-2] if len(probed) > 1 else largest)


def stall_noise_of(points: Sequence[CurvePoint], stalled: int | None) -> tuple[int, int, float] | None:
    """``Curve.stall_noise`` of ``points`` that stalled at index ``stalled`` (:func:`stalled_after`; None: they did
    not): :func:`noise_between` the point it stalled at and the best before it, which it did not rise 1 % above."""
    if stalled is None or stalled < 1:
        return None
    before = max(points[:stalled], key=lambda p: (p.steps_per_s, -p.n_workers))
    return noise_between(points[stalled], before)


def noise_between(stop: CurvePoint, before: CurvePoint) -> tuple[int, int, float] | None:
    """Whether a rise under :data:`STALL_GAIN` from ``before`` to ``stop``, taken as the rate stopping, lies inside
    the seeds' noise: (``stop``'s N, ``before``'s N, the wider 95 % half-width of the two) when that half-width is
    more than the 5 % (1 - :data:`KNEE_FRACTION`) between the plateau and the knee; None when it is not, or when
    ``stop`` rose more. The one rule of the plateau search's stop (:func:`search_noise`) and of the stall that ends
    a curve (:func:`stalled_after`, ``Curve.stall_noise``)."""
    if stop.steps_per_s >= before.steps_per_s * (1 + STALL_GAIN):
        return None
    half = max(p.steps_per_s_ci95 or 0.0 for p in (stop, before))
    return (stop.n_workers, before.n_workers, half) if half > (1 - KNEE_FRACTION) * before.steps_per_s else None


def noise_words(half: float) -> str:
    """Why a stop judged inside the seeds' noise (:func:`noise_between`) does not pin the rate, in words."""
    return (f"the seeds' 95% interval there, ±{fixed(half, 2)} steps/s, is wider than the {1 - KNEE_FRACTION:.0%} "
            "that sets the knee")


def _plateau_past(points: Sequence[CurvePoint], start: int, at: Callable[[int], float]) -> tuple[int, float, bool]:
    """:func:`plateau_search` past the asked ``points``; an asked N above what it found (the seeds' noise, a dip
    past it) is the plateau instead: never a plateau under a rate the curve shows."""
    before = [p.steps_per_s for p in points[:-1]]  # one point alone: nothing says it has stopped rising
    rising = not before or points[-1].steps_per_s >= max(before) * (1 + STALL_GAIN)
    sat, plateau, reached = plateau_search(points[-1].n_workers, points[-1].steps_per_s, start, at, rising=rising)
    best = max(points, key=lambda p: (p.steps_per_s, -p.n_workers))
    return (best.n_workers, best.steps_per_s, reached) if best.steps_per_s > plateau else (sat, plateau, reached)


def plateau_search(largest: int, rate: float, start: int, at: Callable[[int], float], *,
                   rising: bool = False) -> tuple[int, float, bool]:
    """(N, rate, reached) of the plateau past the asked N, whose largest, ``largest``, ran at ``rate``: ``at(n)``
    (the rate simulated at ``n``) at ``start`` if that is more workers, then at twice as many while the rate still
    rises :data:`STALL_GAIN` over the last, at most :data:`PLATEAU_PROBES` times and up to
    :data:`MAX_SATURATION_WORKERS` (or ``largest`` if that is more). ``reached`` is False when the last N
    simulated still rose that much: past the asked range, or, where the range already reaches the cap and nothing
    is simulated past it, when the asked curve was still ``rising`` at its largest N."""
    best_n, best, rose = largest, rate, rising
    n = start if start > largest else 2 * largest
    for _ in range(PLATEAU_PROBES):
        n = min(n, max(MAX_SATURATION_WORKERS, largest))
        if n <= best_n:  # at the cap: reached unless the N before it still rose
            return best_n, best, not rose
        got = at(n)
        if got < best * (1 + STALL_GAIN):
            return (n, got, True) if got > best else (best_n, best, True)
        best_n, best, n, rose = n, got, 2 * n, True
    return best_n, best, False


def plateau_probes(largest: int, start: int = 0) -> tuple[int, ...]:
    """The N :func:`plateau_search` simulates past an asked range ending at ``largest``, from ``start`` as it does,
    when the rate keeps rising: for estimating what a curve costs."""
    cap = max(MAX_SATURATION_WORKERS, largest)
    probes: list[int] = []
    n = start if start > largest else 2 * largest
    for _ in range(PLATEAU_PROBES):
        n = min(n, cap)
        if n <= (probes[-1] if probes else largest):
            break
        probes.append(n)
        n *= 2
    return tuple(probes)


def plateau_text(curve: Curve) -> str:
    """The plateau in words: its rate and where it was simulated, and that it is not pinned where the search
    stopped inside the seeds' noise (``plateau_noise``) or the curve stalled inside it (``stall_noise``: no search
    ran past a stall, so the plateau rests on it as much; ``--steps 3`` on the bundled ps03 trace printed 'plateau
    20.75 steps/s (simulated at N=13)' under a stall it called not pinned, and with ``--every-n`` said nothing of
    the noise at all), or, when the search had not seen it stop rising, that it is a lower bound."""
    at = f"{fixed(curve.plateau_steps_per_s, 2)} steps/s (simulated at N={curve.saturation_workers}"
    if curve.plateau_reached and curve.plateau_noise is not None:
        stop, before, half = curve.plateau_noise
        return (f"{at}; not pinned: the search stopped at N={stop} on a rise under {STALL_GAIN:.0%} from N={before}, "
                f"and {noise_words(half)}; more --steps or --seeds narrow it)")
    if curve.plateau_reached and curve.stall_noise is not None:
        stop, before, half = curve.stall_noise
        return (f"{at}; not pinned: the rate stalled at N={stop} on a rise under {STALL_GAIN:.0%} from N={before}, "
                f"and {noise_words(half)}; more --steps or --seeds narrow it)")
    if curve.plateau_reached:
        return f"{at})"
    return f"at least {fixed(curve.plateau_steps_per_s, 2)} steps/s (still rising at N={curve.saturation_workers})"


def unsimulated_text(curve: Curve) -> str:
    """Which asked N a stalled curve did not simulate, in words (its ``unsimulated_workers`` must be some)."""
    return (f"N={format_workers(curve.unsimulated_workers)} not simulated: the rate stalled by "
            f"N={curve.points[-1].n_workers}")


def stall_consequence(curve: Curve) -> str:
    """What a stalled curve's stall says of more workers (after :func:`unsimulated_text` and why it stalled): that
    they do not raise the rate, or, where the stall lies inside the seeds' noise (``stall_noise``), that it is not
    pinned: ``--steps 3`` on the bundled ps03 trace stalled by N=14 at 20.75 steps/s (±3.45), and ``--steps 30``
    simulated 21.96 at N=15."""
    if curve.stall_noise is None:
        return "so more workers do not raise it"
    stop, before, _ = curve.stall_noise
    return (f"but that is not pinned: N={stop} is under {STALL_GAIN:.0%} above N={before}, and "
            f"{noise_words(curve.stall_noise[2])}, so more workers may still raise it; more --steps or --seeds "
            "narrow it")


def knee_text(curve: Curve) -> str:
    """The knee in words: ``N=k``; ``N=k or later`` against a plateau that is a lower bound; or not reached.
    Where the N just below the knee were not simulated (``--workers 1,2,100``, ``--workers 5``), the knee is
    only known to lie among them or at k: ``N=k or earlier (N=3-99 not simulated)``; the bare ``N=100`` read
    as a finding that 3..99 workers fall short."""
    if curve.knee_n_workers is None:
        return f"not reached by N={curve.points[-1].n_workers}"
    k = curve.knee_n_workers
    below = simulated_below((p.n_workers for p in curve.points), k)
    if below == k - 1:
        return f"N={k}" + ("" if curve.plateau_reached else " or later")
    gap = f"N={below + 1}" if below + 1 == k - 1 else f"N={below + 1}-{k - 1}"
    if not curve.plateau_reached:  # a higher plateau moves it later; the unsimulated N may hold it
        return f"N={below + 1} or later ({gap} not simulated)"
    return f"N={k} or earlier ({gap} not simulated)"


def knee_mark(curve: Curve) -> str:
    """The knee as a chart marks it at its N (:func:`knee_short` with ``N``): ``N=k``, ``N<=k`` or ``N>=a``; ''
    for no knee."""
    if curve.knee_n_workers is None:  # nothing to mark at any N
        return ""
    short = knee_short((p.n_workers for p in curve.points), curve.knee_n_workers, curve.plateau_reached)
    return f"N={short}" if short[0].isdigit() else f"N{short}"


def knee_short(simulated: Iterable[int], k: int | None, plateau_reached: bool) -> str:
    """:func:`knee_text` in short, the one rule of the chart's mark, the shards table and ``shards.csv``, plan's
    table, ``plan.csv`` and ``plan.html``: ``k`` where the N just below the knee ``k`` were ``simulated`` and the
    plateau reached; ``<=k`` where they were not ('N=k or earlier'); ``>=a`` against a plateau that is a lower
    bound ('N=a or later': ``a`` the first N not simulated below ``k``, else ``k``); ``>n`` for no knee, ``n`` the
    largest N simulated ('not reached by N=n'; '' when none was). The marks showed a bare ``k`` where the words
    said 'N=3 or later', and the tables '-' or nothing where they said 'not reached by N=32'."""
    simulated = list(simulated)
    if k is None:
        return f">{max(simulated)}" if simulated else ""
    below = simulated_below(simulated, k)
    if not plateau_reached:
        return f">={below + 1}"
    return str(k) if below == k - 1 else f"<={k}"


def simulated_below(simulated: Iterable[int], k: int) -> int:
    """The largest of the ``simulated`` N below the knee ``k`` (0 for none): below ``k - 1``, the N between were
    not simulated, and the knee may lie among them (:func:`knee_text`, :func:`knee_short`)."""
    return max((n for n in simulated if n < k), default=0)


def finite(x: float) -> float | None:
    """``x`` or None when infinite (for output)."""
    return None if math.isinf(x) else x
