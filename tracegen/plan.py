"""``plan``: which cluster to rent, before buying nodes — every worker type x PS type x N of a catalogue, priced.

For each pair of a worker type and a PS type of the catalogue (:mod:`parsers.catalogue`), the traced step and
link are moved onto those instances (:mod:`tracegen.instance`: what each column changes) and the throughput of
N workers and one PS is simulated for the asked N (a job traced with K PS tasks keeps them: K PS of the type, each
with its traced parameters and its own link, as ``predict`` does; with ``placed`` (``plan --ps-shards``), each
number K of PS shards is a pair of its own: the parameters placed on K PS of the type, each with its own link, as
``predict --ps-shards`` places them). Every simulated N is an *option*: samples/s,
the cluster's dollars per hour (N workers and the PS), dollars per 1,000 samples, and the hours and dollars to process
``samples``. The *cheapest option that reaches the target rate* is the one that processes ``samples`` for the
fewest dollars (equivalently the fewest dollars per sample) among those whose predicted samples/s reach it; ties
go to the lower $/hour, then fewer workers, then catalogue order, then fewer PS. Without a target, the cheapest
per sample.

Per pair, as ``predict`` has them (:mod:`tracegen.curve`): the *plateau* (the most the pair reaches once
workers are plentiful), the *knee* (the smallest simulated N within 95 % of it) and, when the PS type's link is
only a rate, the plateau's *band* (the same N simulated on the half- and full-duplex ends of that rate). Unlike
``predict``, ``plan`` never simulates past the asked N: when the link and PS bounds say the pair would still
climb past the largest asked N, the plateau is reported as "beyond N=<largest>", at least the best rate seen,
and there is no knee.

What makes it fast enough to answer in seconds (``benchmarks/bench_plan.py``; the mlp trace and the example
catalogue take a few seconds on one core), and what it costs in accuracy:
- Each point is one seed (``seeds``) of ``step_budget`` measured steps over all workers together (at least
  :data:`MIN_STEPS` per worker) after :data:`WARMUP_STEPS` warm-up step each: a large N needs fewer steps per
  worker for the same count of sampled steps. ``predict`` runs 30 steps per worker and 3 seeds; ``plan`` is for
  ranking options — confirm the chosen one with ``tracegen predict``. How far one option's rate lies from
  ``predict``'s was measured (``benchmarks/plan_noise.py``, :data:`NOISE_MARGIN`): the options whose dollars per
  sample lie within that of the chosen one's are named beside it (:func:`within_noise`), as plan cannot rank them.
- Pairs that simulate the same thing are simulated once: the key is the scaled model's speeds and the links
  (two worker types of equal speed whose network card does not cap the traced connection share one sweep;
  different prices do not matter to the simulation).
- Past the plateau a pair's N are not simulated: once they stall (:func:`tracegen.plateau.stalled_after`: 3 N in
  a row each less than 1 % above the best rate so far), more workers only add cost (their throughput is no
  higher), so no cheapest option can be among them. Unlike ``predict``, the stall does not ask for a saturated
  resource: a flat stretch that would rise again ends the pair early (the cnn development trace and the example
  catalogue: one pair stopped at N = 18 with 5,604 samples/s, where N = 21 gives 5,970). With that check, the
  same pair ran to N = 32 with no resource 90 % busy and reported no knee, an answer less useful for ranking;
  so it is left to ``predict`` to confirm the choice. Nothing past the largest asked N is simulated (above).
- The band is simulated at one N per pair (the plateau's), not at every N.

Pure and seeded like ``predict``: the same trace, catalogue, options and seed give byte-identical ``plan.csv``.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Sequence

from parsers.catalogue import Catalogue, Instance
from parsers.linkprofile import LinkProfile
from parsers.singleworker import SingleWorker
from tracegen.bottleneck import idle_label, runs_bottleneck
from tracegen.budget import MAX_EVENTS, SLOW_EVENTS
from tracegen.config import MAX_BATCH_SIZE, MIN_PAYLOAD_FRACTION, MIN_STEPS, PAYLOAD_FRACTION, PredictConfig
from tracegen.cost import busy_tasks, run_s
from tracegen.errors import ConfigError
from tracegen.estimate import likely_workers, run_engine, task_events
from tracegen.instance import instance_links, on_instances
from tracegen.link import LinkSpec
from tracegen.metrics import link_bound_steps_per_s, ps_bound_steps_per_s, steps_per_s
from tracegen.model import StepModel
from tracegen.placement import Placement
from tracegen.plateau import KNEE_FRACTION, saturation_workers, stalled_after
from tracegen.preparation import prepared
from tracegen.processes import MAX_JOBS, Processes, processes_for
from tracegen.simulate import SimConfig, SimResult, simulate
from tracegen.units import counted, format_wait

STEP_BUDGET = 16
MAX_STEP_BUDGET = 100_000  # measured steps per point: a coarse plan, not a long run
MAX_SEEDS = 100  # seeds per point
WARMUP_STEPS = 1
MAX_SAMPLES = 1e18
PREPARE_SAID = 1000  # pairs from which preparing them is said first: about 0.3 to 4 ms each on the mlp trace

# How far one option's samples/s from plan's defaults (STEP_BUDGET, one seed) may lie from predict's (30 steps per
# worker, 3 seeds) for the same N on the same instances, and so its dollars per sample: measured by
# benchmarks/plan_noise.py on 2026-12-07 over the 12 validation traces x the example catalogue's pairs, every N plan
# simulated (2557 points): median 0.7 %, 90th percentile 4.9 %, largest 19.6 % (test/deep_200, c5.xlarge +
# c5.2xlarge, N = 18); at the pairs' best N alone (118 points) the largest was 14.7 %, but a margin of 15 % missed
# predict's own cheapest option on test/deep_200 when first measured (22.7 % then, before the replay was held to its
# steps; docs/model.md). The margin is the largest over every point, rounded up: one option's error, not the gap two
# options erring opposite ways could open (docs/model.md, "plan's own noise").
NOISE_MARGIN = 0.20


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PlanConfig:
    """What to plan (module docstring). ``target_samples_per_s`` None: no target."""

    workers: tuple[int, ...] = tuple(range(1, 33))
    samples: float = 1e8
    target_samples_per_s: float | None = None
    batch_size: int = 1
    step_budget: int = STEP_BUDGET
    seeds: int = 1
    seed: int = 0
    payload_fraction: float = PAYLOAD_FRACTION
    link: str = "conn"
    policy: str = "tf"

    def __post_init__(self) -> None:
        if not self.workers or min(self.workers) < 1 or list(self.workers) != sorted(set(self.workers)):
            raise ConfigError(f"'workers' must be distinct worker counts >= 1, ascending (got {self.workers!r})")
        if not (math.isfinite(self.samples) and 1 <= self.samples <= MAX_SAMPLES and self.samples % 1 == 0):
            raise ConfigError(f"'samples' must be a whole number from 1 to {MAX_SAMPLES:g} (got {self.samples})")
        target = self.target_samples_per_s
        if target is not None and not (math.isfinite(target) and target > 0):
            raise ConfigError(f"'target_samples_per_s' must be a number > 0 (got {target})")
        if not 1 <= self.batch_size <= MAX_BATCH_SIZE:
            raise ConfigError(f"'batch_size' must be from 1 to 10^9 (got {self.batch_size})")
        if not 1 <= self.step_budget <= MAX_STEP_BUDGET:
            raise ConfigError(f"'step_budget' must be from 1 to {MAX_STEP_BUDGET} (got {self.step_budget})")
        if not 1 <= self.seeds <= MAX_SEEDS:
            raise ConfigError(f"'seeds' must be from 1 to {MAX_SEEDS} (got {self.seeds})")
        if not MIN_PAYLOAD_FRACTION <= self.payload_fraction <= 1:
            raise ConfigError(f"'payload_fraction' must be from {MIN_PAYLOAD_FRACTION} to 1 "
                              f"(got {self.payload_fraction})")
        self.sim_config(1, None)  # checks the seed, the link model and the policy

    def sim_config(self, n_workers: int, spec: LinkSpec | None, seed_offset: int = 0,
                   ps_shard_of_task: tuple[int, ...] = ()) -> SimConfig:
        """The simulation of one point (module docstring); ``ps_shard_of_task``: a multi-PS trace's PS tasks."""
        steps = max(MIN_STEPS, math.ceil(self.step_budget / n_workers))
        return SimConfig(n_workers=n_workers, steps=steps, warmup_steps=WARMUP_STEPS, seed=self.seed + seed_offset,
                         link_spec=spec, link=self.link, policy=self.policy, ps_shard_of_task=ps_shard_of_task)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Option:
    """N workers of one type and ``n_ps`` PS (one, or the traced job's PS tasks) of another, priced."""

    worker: Instance
    ps: Instance
    n_workers: int
    steps_per_s: float
    samples_per_s: float
    bottleneck: str
    n_ps: int = 1

    @property
    def usd_per_hour(self) -> float:
        """What the cluster costs per hour: N workers and the PS."""
        return self.n_workers * self.worker.usd_per_hour + self.n_ps * self.ps.usd_per_hour

    @property
    def usd_per_1000_samples(self) -> float:
        """Dollars per 1,000 samples processed (infinite when nothing is processed)."""
        return self.usd_per_hour / (self.samples_per_s * 3600) * 1000 if self.samples_per_s > 0 else math.inf

    def hours_for(self, samples: float) -> float:
        """Hours to process ``samples`` (infinite when nothing is processed)."""
        return samples / self.samples_per_s / 3600 if self.samples_per_s > 0 else math.inf

    def usd_for(self, samples: float) -> float:
        """Dollars to process ``samples``."""
        return self.hours_for(samples) * self.usd_per_hour


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Pair:
    """One worker type with one PS type: its options (the simulated N), plateau (best steps/s at
    ``saturation_workers``), knee and band (samples/s at the plateau's N on the half- and full-duplex ends of the
    PS type's rate; None when a link profile pins it)."""

    worker: Instance
    ps: Instance
    options: tuple[Option, ...]
    plateau_samples_per_s: float
    saturation_workers: int
    beyond_workers: int | None
    knee_n_workers: int | None
    band_samples_per_s: tuple[float, float] | None
    link_description: str
    n_ps: int = 1

    @property
    def plateau_reached(self) -> bool:
        """Whether the plateau lies within the asked N (else ``plateau_samples_per_s`` is a lower bound, and
        ``beyond_workers`` the N the bounds say would saturate)."""
        return self.beyond_workers is None

    @property
    def best(self) -> Option:
        """The option of this pair with the fewest dollars per sample (then fewer workers)."""
        return min(self.options, key=lambda o: (_dollars(o.usd_per_1000_samples), o.n_workers))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What :func:`plan` found. ``chosen``: the cheapest option reaching the target (the cheapest per sample
    without one; None when no option reaches the target); ``fastest``: the option with the most samples/s."""

    model: StepModel
    config: PlanConfig
    pairs: tuple[Pair, ...]
    chosen: Option | None
    fastest: Option
    traced_link: LinkSpec
    measured_rpc: bool
    n_simulations: int
    notes: tuple[str, ...] = ()  # what the inputs left unsure (a single-worker measurement the replay misses)
    placement: str = ""  # how the parameters were placed on the PS shards of --ps-shards; empty: as traced

    @property
    def options(self) -> tuple[Option, ...]:
        """Every option of every pair, pair by pair."""
        return tuple(o for p in self.pairs for o in p.options)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Sweep:
    """What one distinct simulation set gave: (N, steps/s, bottleneck) per simulated N, and the pair figures."""

    points: tuple[tuple[int, float, str], ...]
    plateau_steps_per_s: float
    saturation_workers: int
    beyond_workers: int | None
    knee_n_workers: int | None
    band_steps_per_s: tuple[float, float] | None
    n_simulations: int


def traced_hosts(model: StepModel, link_profile: LinkProfile | None,
                 single_worker: SingleWorker | None) -> tuple[StepModel, LinkSpec, tuple[str, ...]]:
    """The step and the link of the traced hosts as ``predict`` prepares them: tracing's cost undone when a
    single-worker measurement shows it (:mod:`tracegen.untraced`), and what the traced PS's cores, quota and CPU
    per request were (the catalogue's links replace its rates); and what ``predict`` would warn of."""
    config = PredictConfig(workers=(1,), link_profile=link_profile, single_worker=single_worker)
    prep = prepared(model, config.on_traced_ps_tasks(model))  # a job traced on several PS tasks ran on them
    return prep.model, prep.links["mid"], prep.notes


def _point(model: StepModel, spec: LinkSpec, n: int, config: PlanConfig,
           shard_of_task: tuple[int, ...]) -> tuple[float, str, SimResult]:
    runs = [simulate(model, config.sim_config(n, spec, s, shard_of_task)) for s in range(config.seeds)]
    return statistics.fmean(steps_per_s(r) for r in runs), runs_bottleneck(runs), runs[0]


def _sweep(model: StepModel, links: dict[str, LinkSpec], config: PlanConfig,
           shard_of_task: tuple[int, ...] = ()) -> _Sweep:
    """Simulate the asked N until the rate stalls, then the plateau (and its band) — module docstring.
    ``shard_of_task``: the PS shard of every task (:class:`~tracegen.simulate.SimConfig`'s)."""
    mid = links["mid"]
    points: list[tuple[int, float, str]] = []
    first, stalled = None, False
    for n in config.workers:
        rate, name, result = _point(model, mid, n, config, shard_of_task)
        first = first or result
        points.append((n, rate, name))
        stalled = stalled_after([r for _, r, _ in points]) is not None
        if stalled:
            break
    assert first is not None  # noqa: S101 - workers is non-empty
    sat, plateau = max(((n, r) for n, r, _ in points), key=lambda nr: (nr[1], -nr[0]))
    beyond = None
    if not stalled:
        bound = min(link_bound_steps_per_s(model, first), ps_bound_steps_per_s(model, first))
        wanted = saturation_workers(points[0][1] / points[0][0], bound, points[-1][0])
        beyond = wanted if wanted > points[-1][0] else None
    knee = None if beyond is not None else min((n for n, r, _ in points if r >= KNEE_FRACTION * plateau),
                                                default=None)
    points = [(n, r, idle_label(n, r, points[0][1] / points[0][0]) if name == "workers" else name)
              for n, r, name in points]
    band = None
    if "low" in links:
        low, high = (_point(model, links[end], sat, config, shard_of_task)[0] for end in ("low", "high"))
        band = (min(low, plateau), max(high, plateau))
    return _Sweep(points=tuple(points), plateau_steps_per_s=plateau, saturation_workers=sat, beyond_workers=beyond,
                  knee_n_workers=knee, band_steps_per_s=band, n_simulations=len(points) + (2 if band else 0))


Job = tuple[StepModel, dict[str, LinkSpec], PlanConfig, tuple[int, ...]]


def _sweep_job(job: Job) -> _Sweep:
    """:func:`_sweep` of one pair, as a worker process of :func:`plan` runs it."""
    return _sweep(*job)


def plan(model: StepModel, catalogue: Catalogue, config: PlanConfig, *, link_profile: LinkProfile | None = None,
         single_worker: SingleWorker | None = None, progress: Callable[[str], None] | None = None,
         jobs: int = 1, placed: Sequence[Placement] = ()) -> Plan:
    """Every worker type x PS type x N of ``catalogue`` for the traced step ``model`` (module docstring).
    ``link_profile`` / ``single_worker``: the traced hosts' own (beside the trace), for what the traced PS was.
    ``jobs`` > 1: the pairs are simulated side by side in that many local processes (:mod:`tracegen.processes`)
    when they would take :data:`tracegen.processes.PARALLEL_S` or more on one core, as predict's curves are
    (:func:`tracegen.processes.processes_for`); the plan is the same. ``placed``: the parameters on K PS shards for
    each K to consider (:func:`tracegen.shards.placements`); none: the PS tasks as traced."""
    if not 1 <= jobs <= MAX_JOBS:  # as predict and sweep: checked before any work
        raise ConfigError(f"'jobs' must be from 1 to {MAX_JOBS} (got {jobs})")
    report = progress or (lambda _line: None)
    model, traced, notes = traced_hosts(model, link_profile, single_worker)
    for note in notes:
        report(f"warning: {note}")
    measured_rpc = single_worker is not None and single_worker.ps_cpu_s_per_step is not None
    arrangements = ([(p.n_shards, p.shard_of_task if p.n_shards > 1 else ()) for p in placed]
                    or [(n_ps(model), model.traced_ps_task)])
    n_pairs = len(catalogue.workers) * len(catalogue.servers) * len(arrangements)
    if n_pairs >= PREPARE_SAID:  # each costs ms before the estimate (a 200-type catalogue was silent for 83 s)
        shards = f" x {len(arrangements)} PS counts" if len(arrangements) > 1 else ""
        report(f"preparing {n_pairs:,} pairs of instance types ({len(catalogue.workers)} worker types x "
               f"{len(catalogue.servers)} PS types{shards}): the traced step scaled to each pair's speeds and links "
               "before their cost is estimated")
    todo: dict[tuple[object, ...], tuple[str, Job]] = {}
    scaled: dict[tuple[float, float], StepModel] = {}  # the step on each pair of speeds, moved once
    pair_keys = []
    for worker in catalogue.workers:
        for ps in catalogue.servers:
            links = instance_links(model, traced, worker=worker, ps=ps, measured_rpc=measured_rpc,
                                   payload_fraction=config.payload_fraction)
            speeds = (worker.compute_speed, ps.compute_speed)
            for k, of_task in arrangements:
                key: tuple[object, ...] = (*speeds, tuple(sorted(links.items())), of_task)
                if key not in todo:
                    if speeds not in scaled:
                        scaled[speeds] = on_instances(model, traced, worker_speed=speeds[0], ps_speed=speeds[1])
                    todo[key] = (f"{worker.name} workers with {k} x {ps.name} PS",
                                 (scaled[speeds], links, config, of_task))
                pair_keys.append((worker, ps, k, key, links["mid"]))
    keys = list(todo)
    events = sum(_likely_events(*todo[k][1]) for k in keys)
    seconds = sum(_likely_seconds(*todo[k][1]) for k in keys)
    if events > MAX_EVENTS:  # as predict: a typo or a job for a sweep, found before any work
        raise ConfigError(f"this plan would simulate about {events:.2g} events, "
                          f"{format_wait(seconds)} on one core (more than the "
                          f"{MAX_EVENTS:.0e} allowed); ask for fewer or smaller --workers, fewer --seeds or a smaller "
                          "--step-budget")
    if events > SLOW_EVENTS:
        report(f"about {events:.2g} simulated events: roughly {format_wait(max(seconds, 1))} on one core")
    # as predict: in processes only where starting them costs less than they save
    sweeps = _simulate(todo, len(pair_keys), processes_for(seconds, jobs), report)
    pairs = [_pair(worker, ps, sweeps[key], mid, config.batch_size, k) for worker, ps, k, key, mid in pair_keys]
    options = [o for p in pairs for o in p.options]
    return Plan(model=model, config=config, pairs=tuple(pairs), chosen=cheapest(options, config.target_samples_per_s),
                fastest=fastest(options), traced_link=traced,
                measured_rpc=measured_rpc, n_simulations=sum(s.n_simulations for s in sweeps.values()), notes=notes,
                placement=placed[0].how if placed else "")


def _simulate(todo: dict[tuple[object, ...], tuple[str, Job]], n_pairs: int, jobs: int,
              report: Callable[[str], None]) -> dict[tuple[object, ...], _Sweep]:
    """Each job of ``todo`` (key: what it is, the job) simulated, in ``jobs`` local processes, each said as it
    starts or ends; ``n_pairs``: the pairs they are for, fewer jobs where pairs share one."""
    keys = list(todo)
    # 'simulating 9 pairs' of a catalogue of 12 read as 3 dropped: a spot type at another price alone is simulated
    # once with the type it copies, and its rows priced apart
    copies = n_pairs - len(keys)
    alike = (f" (of {n_pairs}: {copies} {'has' if copies == 1 else 'have'} another's speeds and links, and only "
             f"{'its price is its' if copies == 1 else 'their price is their'} own)" if copies > 0 else "")
    if jobs > 1 and len(keys) > 1:
        report(f"simulating {len(keys)} pairs in {min(jobs, len(keys))} processes{alike}")
        with Processes(_sweep_job, min(jobs, len(keys))) as processes:
            done = processes.map([todo[k][1] for k in keys],
                                 lambda i, _sweep: report(f"simulated {todo[keys[i]][0]}"))
        return dict(zip(keys, done, strict=True))
    if alike:
        report(f"simulating {counted(len(keys), 'pair')}{alike}")
    sweeps = {}
    for key in keys:
        report(f"simulating {todo[key][0]}")
        sweeps[key] = _sweep_job(todo[key][1])
    return sweeps


def cheapest(options: Sequence[Option], target_samples_per_s: float | None) -> Option | None:
    """The option that processes samples for the fewest dollars among those reaching ``target_samples_per_s``
    (all of them without a target), its ties as the module docstring breaks them; None when none reaches it."""
    reaching = [o for o in options if target_samples_per_s is None or o.samples_per_s >= target_samples_per_s]
    return min(reaching, key=lambda o: (_dollars(o.usd_per_1000_samples), _dollars(o.usd_per_hour), o.n_workers,
                                        o.worker.line, o.ps.line, o.n_ps), default=None)


def within_noise(plan: Plan, margin: float = NOISE_MARGIN) -> tuple[Option, ...]:
    """The options other than the chosen one that plan's own noise (:data:`NOISE_MARGIN`, a fraction: how far one
    option's figures may lie from ``predict``'s) cannot tell from it, pair by pair, N ascending: their dollars per
    1,000 samples at most ``1 + margin`` times the chosen's and, with a target, their samples/s at least ``1 -
    margin`` times it (an option just short of it may reach it). With a target that no option reaches: those whose
    samples/s lie within the margin below it. Both ends count as within (compared as :func:`_dollars` compares)."""
    target = plan.config.target_samples_per_s
    near_target = [o for o in plan.options
                   if target is None or _dollars(o.samples_per_s) >= _dollars(target * (1 - margin))]
    chosen = plan.chosen
    if chosen is None:  # a target none reaches
        return tuple(near_target)
    if not math.isfinite(chosen.usd_per_1000_samples):  # nothing processed: no dollars per sample to compare
        return ()
    limit = _dollars(chosen.usd_per_1000_samples * (1 + margin))
    return tuple(o for o in near_target if o is not chosen and _dollars(o.usd_per_1000_samples) <= limit)


def fastest(options: Sequence[Option]) -> Option:
    """The option with the most samples/s; on a tie the cheaper per hour, then fewer workers, then fewer PS."""
    return max(options, key=lambda o: (o.samples_per_s, -_dollars(o.usd_per_hour), -o.n_workers, -o.n_ps))


def _dollars(usd: float) -> float:
    """``usd`` to 12 significant digits, for comparing: the same dollars added in another order (3 x $0.70 + $1,
    $2.10 + $1) differ in the last bits of a float, and a tie the module docstring breaks by $/hour or workers must
    not be broken by those bits instead."""
    return float(f"{usd:.12g}")


def _likely_runs(model: StepModel, links: dict[str, LinkSpec], config: PlanConfig,
                 shard_of_task: tuple[int, ...] = ()) -> list[tuple[int, int]]:
    """The runs :func:`_sweep` of one pair likely simulates, each as (N, its steps with warm-up), once per seed:
    each asked N until the rate likely stalls (:func:`tracegen.estimate.likely_workers`: every asked N on several PS
    shards, whose one-PS roofline saturates K times too early), and the band's two at the last."""
    sharded = shard_of_task if len(set(shard_of_task)) > 1 else ()
    ns = likely_workers(model, PredictConfig(workers=config.workers, ps_shard_of_task=sharded), links["mid"])
    runs = [*ns, *([ns[-1]] * 2 * ("low" in links))]
    return [(n, config.sim_config(n, None).steps + WARMUP_STEPS) for n in runs] * config.seeds


def _likely_events(model: StepModel, links: dict[str, LinkSpec], config: PlanConfig,
                   shard_of_task: tuple[int, ...] = ()) -> float:
    """About how many events :func:`_sweep` of one pair simulates (:func:`_likely_runs`): three per task
    instance."""
    return task_events(model, sum(n * steps for n, steps in _likely_runs(model, links, config, shard_of_task)))


def _likely_seconds(model: StepModel, links: dict[str, LinkSpec], config: PlanConfig,
                    shard_of_task: tuple[int, ...] = ()) -> float:
    """About how long :func:`_sweep` of one pair takes on one core: each of its likely runs (:func:`_likely_runs`)
    priced, for the step's busy tasks (:func:`tracegen.cost.busy_tasks`, as predict prices them), at its N on the
    engine the pair goes to (:func:`tracegen.cost.run_s`: a task instance costs the C core more in a larger run)."""
    engine = _engine(model, links, config, shard_of_task)
    tasks = busy_tasks(model)
    return sum(run_s(tasks, n, steps, engine) for n, steps in _likely_runs(model, links, config, shard_of_task))


def _engine(_model: StepModel, _links: dict[str, LinkSpec], config: PlanConfig,
            shard_of_task: tuple[int, ...] = ()) -> str:
    """The engine one pair's runs go to (:func:`tracegen.estimate.run_engine`): not the C core on several PS
    shards."""
    sharded = shard_of_task if len(set(shard_of_task)) > 1 else ()
    return run_engine(config.sim_config(1, None, ps_shard_of_task=sharded))


def n_ps(model: StepModel) -> int:
    """How many PS the traced job had (its PS tasks; 1 for a one-PS trace)."""
    return max(model.traced_ps_task, default=0) + 1


def _pair(worker: Instance, ps: Instance, sweep: _Sweep, mid: LinkSpec, batch: int, ps_count: int) -> Pair:
    options = tuple(Option(worker=worker, ps=ps, n_workers=n, steps_per_s=r, samples_per_s=r * batch, bottleneck=b,
                           n_ps=ps_count) for n, r, b in sweep.points)
    band = sweep.band_steps_per_s
    return Pair(worker=worker, ps=ps, options=options, plateau_samples_per_s=sweep.plateau_steps_per_s * batch,
                saturation_workers=sweep.saturation_workers, beyond_workers=sweep.beyond_workers,
                knee_n_workers=sweep.knee_n_workers,
                band_samples_per_s=None if band is None else (band[0] * batch, band[1] * batch),
                link_description=mid.description, n_ps=ps_count)
