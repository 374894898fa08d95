"""``predict``: from a trace to the scaling curve, its band, its plot, the gradients' staleness and synthetic
traces.

Pipeline: read the trace → :func:`tracegen.model.build_model` → the link (:func:`resolve_link`) →
:func:`tracegen.curve.scaling_curve` → files (:mod:`tracegen.outputs`): ``curve.csv``, ``curve.png``,
``staleness.csv`` and ``staleness.png`` (when the step updates parameters it reads) and, when asked,
``traces/n{N}.json``; with ``ps_shards``, ``shards.csv`` (:mod:`tracegen.shards`: how many PS). The same trace,
config and seed give byte-identical files, in one process or several (``jobs``: a long curve's simulations run
side by side in local processes, :mod:`tracegen.processes`).

Which link, in order:
1. a link profile measured by ``tracegen netbench`` (``link_profile``, or ``link-profile.json`` beside the trace
   when no bandwidth is given): capacities per number of connections, the two-way loss and the queue delays,
   all measured — the plateau is pinned;
2. a bandwidth alone: the plateau is not pinned, because how much a link's two directions slow each other under
   load depends on queues, windows and CPUs no spec sheet gives. The curve is predicted twice more, at the two
   ends of what is physically possible, and written as ``band_low``/``band_high``: high, both directions at full
   payload rate whatever the other does (a perfect full-duplex link); low, the two directions together no faster
   than one (every request and acknowledgement of one direction waits behind the other's data: the link behaves
   half-duplex). The point prediction is the middle of the two (each direction at 3/4 of its rate while the other
   is busy). A link profile pins it. With a ``single-worker.json`` the band also holds the curve scaled to the
   measured untraced single-worker rate (:mod:`tracegen.band`);
3. neither: the link the trace shows (its per-direction rates, the same for any number of connections).

Whichever link: with a ``single-worker.json`` (``single_worker``, or beside the trace), the PS's CPU per
transfer request comes from what one untraced worker's run measured on the PS
(:func:`tracegen.linkspec.with_single_worker`), and when the replay of one worker is slower than that untraced
run, tracing's own cost is undone (:mod:`tracegen.untraced`, :func:`prepared`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import time
from collections.abc import Callable, Sequence

from parsers.errors import quoted
from parsers.linkprofile import PROFILE_NAME, LinkProfile, read_link_profile
from parsers.read import beside_dir, is_there, meta_path, read_meta, read_trace
from parsers.singleworker import SINGLE_WORKER_NAME, SingleWorker, read_single_worker
from parsers.trace import Trace
from tracegen import fastcore, native
from tracegen.band import anchored
from tracegen.baselines import cycle_plateau, link_rates, roofline_saturates, step_costs
from tracegen.cost import TRACE_WRITE_BYTES_PER_S, busy_tasks, run_s, seconds_left, task_s, wall_s
from tracegen.curve import (
    MAX_SATURATION_WORKERS,
    STALL_POINTS,
    Curve,
    Simulations,
    batch_workers,
    format_workers,
    plateau_probes,
    scaling_curve,
    simulations,
)
from tracegen.errors import ConfigError
from tracegen.link import LINK_MODELS, PULL, PUSH, LinkSpec
from tracegen.linkspec import at_cap_plateau, from_bandwidth, from_profile, with_single_worker
from tracegen.model import TIMINGS, TRANSFER_KINDS, StepModel, TaskKind, build_model
from tracegen.outputs import OutputDir
from tracegen.placement import Placement
from tracegen.plots import curve_csv, curve_png, plot_title, staleness_csv, staleness_png
from tracegen.policy import check_order
from tracegen.processes import MAX_JOBS
from tracegen.shards import ShardRow, holding, placements, shard_table, shards_csv
from tracegen.simulate import SimConfig, resolve_link
from tracegen.synth import size_warning, write_synthetic_trace
from tracegen.units import counted, format_bytes, format_wait
from tracegen.untraced import MAX_RUNS, fit_untraced, mismatch_note, untraced_link, untraced_model

# the fewest measured steps a curve may be simulated with: the steady window's edges cut steps into the part of
# their time inside it, while their pulls come first, so a short window reads fast (the mlp trace past its knee,
# 10 steps: up to 1.3 % over the link's bound; 3 steps: 5 %; 1 step: 50 %)
MIN_STEPS = 3
MAX_BATCH_SIZE = 10**9  # samples per step: more is a typo (a batch of a billion)
PAYLOAD_FRACTION = 1448 / 1514  # TCP payload per Ethernet frame: MTU 1500, IPv4, TCP with timestamps
# less is no protocol's overhead but a slip (TCP/IPv4 at IPv4's least MTU, 68 bytes, still carries 15 %); and at
# the least line rate (1 kbit/s) it still leaves a byte per second, to which a payload rate is rounded up at least
MIN_PAYLOAD_FRACTION = 0.01
BAND_TWO_WAY = {"low": 0.5, "mid": 0.75, "high": 1.0}
SLOW_EVENTS = 3_000_000  # about a second compiled, 22 s pure (tracegen.cost): above it, say what the run costs
# seconds on one core (tracegen.cost): below it, starting processes costs about what they save (about a second to
# start each, and each batch of N waits for its slowest; with 2 CPUs and the compiled engine, predict on the dev
# resnet_100 trace, about 2.3e7 events: 6.3 s in one process, 6.5-8.3 s in two). In seconds, not events: the C
# core runs the same events several times as fast, and the processes still take a second to start
PARALLEL_S = 7.5
UNTRACED_SAY_S = 1.0  # seconds on one core tracing's cost may take to undo (prepared) before it is said
MAX_UNEVEN_EVENTS = 3e8  # two minutes compiled, 40 minutes pure: more, with uneven workers, is one far too slow
MAX_EVENTS = 1e10  # about an hour compiled, 20 hours pure: refused, it is a typo or a job for a sweep
# how far past the N at which the roofline saturates a curve's rate may still climb before it stalls, for the
# estimate of what a run simulates (on the twelve validation traces, N = 1..64 with their profiles, the stall came at
# 2.0-8.5x that N; four times it, plus the three points, covered ten)
STALL_MARGIN = 4
# the plateau probes a curve that climbs through the asked N likely simulates: the first, where the roofline has
# saturated, and the next, which finds the rate no higher and ends the search (tracegen.curve.plateau_search; the
# estimate counted all three, and the resnet trace's 1-8 simulated 26 and 52, not 108 too)
LIKELY_PROBES = 2
TRACE_BYTES_PER_EVENT = 150  # a synthetic trace's bytes per estimated event (133-140 on the bundled traces)


def _worker_step_s(model: StepModel, config: PredictConfig, n_workers: int) -> list[float]:
    """Roughly how long a step of each of ``n_workers`` takes alone: the traced step at the worker's speed, or
    the step's bytes through its own link if that is slower."""
    step_s = model.measured_step_ns / 1e9
    moved_bits = 8 * sum(model.bytes_of(k) for k in TRANSFER_KINDS)
    times = []
    for w in range(n_workers):
        speed = config.worker_speed[w] if w < len(config.worker_speed) else 1.0
        link = config.worker_link_bits_per_s[w] if w < len(config.worker_link_bits_per_s) else 0
        times.append(max(step_s / speed, moved_bits / link if link else 0.0))
    return times


def check_uneven(model: StepModel, config: PredictConfig, events: float, seconds: str) -> None:
    """ConfigError when workers that differ make a prediction of ``events`` simulate more than
    :data:`MAX_UNEVEN_EVENTS`: every worker trains until the slowest has run its steps, so a worker far slower
    than the rest keeps them running for hours (the plateau search's hundreds of workers too). ``seconds``: how
    long that takes, said (:func:`budget`)."""
    if events <= MAX_UNEVEN_EVENTS or not (config.worker_speed or config.worker_link_bits_per_s):
        return
    n = max(*config.workers, len(config.worker_speed), len(config.worker_link_bits_per_s))
    times = _worker_step_s(model, config, n)
    slow = times.index(max(times))
    raise ConfigError(f"worker {slow + 1} of the worker classes takes about {times[slow]:.3g} s a step alone, and the "
                      f"others train until it has run its steps: about {events:.2g} events, {seconds} (more than "
                      f"the {MAX_UNEVEN_EVENTS:.0e} allowed when workers differ); give it a faster speed or link, or "
                      "ask for fewer --steps")


def seconds_on_one_core(events: float, n_workers: int, engine: str | None = None) -> float:
    """About how long ``events`` (:func:`task_events`) of runs of ``n_workers`` workers take on one core with
    ``engine`` (default: the one this process runs, :func:`tracegen.native.engine`; a prediction's,
    :func:`engine_of`), every task taken to take time: a task instance at :func:`tracegen.cost.task_s`'s price
    for that engine and N, the one price of every estimate (a C core task instance costs more in a larger run)."""
    return events / EVENTS_PER_TASK * task_s(engine or native.engine(), n_workers)


def processes_for(one_core_s: float, jobs: int) -> int:
    """How many of ``jobs`` local processes to run simulations estimated at ``one_core_s`` seconds on one core in
    (predict's and validate's curves, plan's pairs, a sweep's grid): all of them from :data:`PARALLEL_S` on, else
    one, where starting them costs about what they save."""
    return jobs if one_core_s >= PARALLEL_S else 1


def run_seconds(model: StepModel, config: PredictConfig) -> Callable[[int], float]:
    """N → one core's seconds for one run of N workers (:func:`tracegen.cost.run_s`), the model's busy tasks
    counted once (a pass over every task of every traced step)."""
    tasks, steps, engine = busy_tasks(model), config.steps + config.warmup_steps, engine_of(config)
    return lambda n_workers: run_s(tasks, n_workers, steps, engine)


def engine_of(config: PredictConfig) -> str:
    """The engine ``config``'s runs go to (:func:`run_engine`)."""
    return run_engine(config.sim_config(None))


def run_engine(config: SimConfig) -> str:
    """The engine a run of ``config`` goes to (:func:`tracegen.native.engine`): the C core only for the runs it
    takes (:func:`tracegen.fastcore.takes_config`), so not for workers that differ, several PS shards or the
    ``fair`` link."""
    engine = native.engine()
    if engine == "C core" and not fastcore.takes_config(config):
        return native.reference_engine()
    return engine


def planned_runs(run_s_of: Callable[[int], float], config: PredictConfig, workers: Sequence[int],
                 probes: Sequence[int], jobs: int) -> list[list[float]]:
    """One curve's runs, each its one-core seconds (:func:`tracegen.cost.run_s`), in the batches
    :func:`tracegen.curve.scaling_curve` runs them in: the asked N ``workers`` :func:`tracegen.curve.batch_workers`
    at a time, then each plateau probe of ``probes`` alone; each N once per seed."""
    asked = sorted(set(workers))
    per = batch_workers(jobs, config.seeds)
    groups = [asked[i:i + per] for i in range(0, len(asked), per)] + [[n] for n in probes]
    return [[run_s_of(n) for n in group for _ in range(config.seeds)] for group in groups]


def _progress(report: Callable[[str], None], run_s_of: Callable[[int], float], config: PredictConfig,
              planned_s: float, jobs: int) -> Callable[[int], None]:
    """What to say as each N of the curve is done: that it is, and how long the rest will likely take at the pace
    of what is done (:func:`tracegen.cost.seconds_left`), from now on."""
    started, done = time.monotonic(), [0.0]

    def done_n(n: int) -> None:
        done[0] += config.seeds * run_s_of(n)
        left = seconds_left(time.monotonic() - started, done[0], planned_s, jobs)
        report(f"  N={n} done" + ("" if left is None or left < 1 else f"; about {format_wait(left)} left"))
    return done_n


def likely_workers(model: StepModel, config: PredictConfig, spec: LinkSpec | None) -> tuple[int, ...]:
    """The asked N a curve likely simulates: in order until the rate stalls (:func:`tracegen.curve.stalled_after`),
    taken to come :data:`STALL_POINTS` asked N after :data:`STALL_MARGIN` times the N at which the roofline
    saturates (the link ``spec``, and the PS's CPU when a single-worker measurement gives it). Every asked N with
    ``every_n``, workers that differ, several PS shards, or no link."""
    asked = tuple(sorted(set(config.workers)))
    if (spec is None or config.every_n or config.worker_speed or config.worker_link_bits_per_s
            or config.ps_shard_of_task):
        return asked
    saturates = roofline_saturates(step_costs(model, config.single_worker), link_rates(spec),
                                   max(1, math.ceil(asked[-1] / STALL_MARGIN)))
    if saturates is None:
        return asked
    reached = next((i for i, n in enumerate(asked) if n >= STALL_MARGIN * saturates), None)
    return asked if reached is None else asked[:reached + 1 + STALL_POINTS]


def batch_size_of(trace_path: str, given: int | None) -> int:
    """The given batch size, else ``batch_size`` of ``meta.json`` beside the trace (:func:`parsers.read.read_meta`),
    else 1."""
    if given is not None:
        return given
    meta = read_meta(trace_path)
    value = None if meta is None else meta.get("batch_size")
    if value is None:
        return 1
    if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_BATCH_SIZE):
        raise ConfigError(f"{meta_path(trace_path)}: 'batch_size' must be an integer from 1 to 10^9 "
                          f"(got {quoted(value)}); or give the batch size (--batch-size; to validate, a batch_size "
                          "column in the measurements)")
    return value


def likely_plateau_start(model: StepModel, config: PredictConfig, spec: LinkSpec | None) -> int:
    """Where the plateau search likely starts (:func:`tracegen.curve.saturation_workers`: one and a half times the
    workers that saturate the tighter bound, at least the largest asked), with the roofline's single-worker rate
    and bound for the simulated ones: 0 (twice the largest asked) when no link gives a bound."""
    if spec is None:
        return 0
    costs = step_costs(model, config.single_worker)
    saturates = roofline_saturates(costs, link_rates(spec), MAX_SATURATION_WORKERS)
    wanted = MAX_SATURATION_WORKERS if saturates is None else math.ceil(1.5 * saturates) + 1
    return max(*config.workers, min(wanted, MAX_SATURATION_WORKERS))


EVENTS_PER_TASK = 3.0  # what a task instance costs the engine, about: its ready, start and end


def task_events(model: StepModel, worker_steps: float) -> float:
    """About how many events ``worker_steps`` steps (all workers' together) take: :data:`EVENTS_PER_TASK` per
    task instance. The one rule behind every estimate of what a run costs (predict, plan, validate, sweep)."""
    return EVENTS_PER_TASK * model.n_tasks * worker_steps


def estimated_events(model: StepModel, config: PredictConfig, spec: LinkSpec | None = None, *,
                     workers: Sequence[int] | None = None) -> float:
    """Events one curve will take: about three per task instance (ready, start, end), every seed, each N of
    ``workers`` (default: every N asked; :func:`likely_workers`, those it likely simulates). When workers differ,
    every N asked, and every worker trains until the slowest has run its steps: the others' steps in that time,
    at most what the PS link ``spec`` carries (each step's bytes through each direction), counted too, and the
    plateau search's largest N with them (its slowest workers set how long it runs)."""
    return task_events(model, config.seeds * sum(steps for _, steps in _worker_steps(model, config, spec, workers)))


def estimated_seconds(model: StepModel, config: PredictConfig, spec: LinkSpec | None = None, *,
                      workers: Sequence[int] | None = None) -> float:
    """One core's seconds for the runs of :func:`estimated_events`, each N's priced at that N on the engine its
    runs go to (:func:`tracegen.cost.task_s`), for the step's busy tasks, as :func:`run_seconds` prices a run (an
    op of no duration costs no event of its own: half of a TF2 trace's tasks)."""
    tasks, engine = busy_tasks(model), engine_of(config)
    return sum(tasks * config.seeds * steps * task_s(engine, n) for n, steps in _worker_steps(model, config, spec,
                                                                                             workers))


def _worker_steps(model: StepModel, config: PredictConfig, spec: LinkSpec | None,
                  workers: Sequence[int] | None) -> list[tuple[int, float]]:
    """Each run of one curve (:func:`estimated_events`) as its N and the steps its workers run together (one
    seed)."""
    steps = config.steps + config.warmup_steps
    uneven = bool(config.worker_speed or config.worker_link_bits_per_s)
    if not uneven:
        return [(n, steps * n) for n in sorted(set(config.workers if workers is None else workers))]
    bound = math.inf
    if spec is not None:
        bound = min((spec.peak_bytes_per_s(d) / b for d, k in ((PULL, TaskKind.PULL), (PUSH, TaskKind.PUSH))
                     if (b := model.bytes_of(k)) > 0), default=math.inf)
    runs = []
    for n in (*config.workers, MAX_SATURATION_WORKERS):
        times = _worker_step_s(model, config, n)
        run_s = steps * max(times)
        runs.append((n, max(n * steps, min(sum(run_s / t for t in times), bound * run_s))))
    return runs


def traces_seconds(model: StepModel, config: PredictConfig) -> float:
    """One core's seconds for the synthetic traces of ``emit_traces``: their runs, one seed each, recorded (so not
    on the C core), and the writing of about :data:`TRACE_BYTES_PER_EVENT` bytes an event (:mod:`tracegen.cost`)."""
    steps, tasks, engine = config.steps + config.warmup_steps, busy_tasks(model), native.reference_engine()
    recorded_s = sum(run_s(tasks, n, steps, engine) for n in sorted(set(config.emit_traces)))  # each at its N
    return recorded_s + estimated_trace_events(model, config) * TRACE_BYTES_PER_EVENT / TRACE_WRITE_BYTES_PER_S


def estimated_trace_events(model: StepModel, config: PredictConfig) -> float:
    """Events the synthetic traces of ``emit_traces`` will take: one simulation (one seed) per N, as above."""
    return task_events(model, (config.steps + config.warmup_steps) * sum(set(config.emit_traces)))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PredictConfig:
    """What to predict. ``bandwidth_bytes_per_s`` is a line rate, as a link or ``tc`` is configured; tensors move
    at ``payload_fraction`` of it (the rest is TCP/IP and Ethernet headers: 1448 payload bytes in a 1514-byte
    frame with TCP timestamps at a 1500-byte MTU). ``link_profile`` wins over a bandwidth."""

    workers: tuple[int, ...] = tuple(range(1, 17))
    link_profile: LinkProfile | None = None
    single_worker: SingleWorker | None = None
    bandwidth_bytes_per_s: int | None = None
    payload_fraction: float = PAYLOAD_FRACTION
    link: str = "conn"
    policy: str = "tf"
    order: tuple[str, ...] = ()
    order_file: str = ""  # where ``order`` was read from: the CLIs' ``--policy FILE``, named in errors as that
    steps: int = 30
    warmup_steps: int = 3
    seeds: int = 3
    seed: int = 0
    ps_threads: int | None = None
    batch_size: int = 1
    emit_traces: tuple[int, ...] = ()
    timing: str = "steps"
    worker_speed: tuple[float, ...] = ()  # per worker (0, 1, ...): speed relative to the traced node; others 1
    worker_link_bits_per_s: tuple[int, ...] = ()  # per worker: its own link's line rate (0: none of its own)
    ps_shards: tuple[int, ...] = ()  # also predict with these numbers of PS shards (tracegen.shards)
    placement: str = "round-robin"  # of parameters on shards: round-robin, greedy or a placement file
    ps_shard_of_task: tuple[int, ...] = ()  # the curve itself on several PS shards (tracegen.placement)
    traced_ps_task: tuple[int, ...] = ()  # the traced job's PS tasks, when it had several (on_traced_ps_tasks)
    jobs: int = 1  # local processes for the curves' simulations (tracegen.processes); the files are the same
    every_n: bool = False  # simulate every asked N, also those past a stalled rate (tracegen.curve.stalled_after)

    def __post_init__(self) -> None:
        if not 1 <= self.jobs <= MAX_JOBS:
            raise ConfigError(f"'jobs' must be from 1 to {MAX_JOBS} (got {self.jobs})")
        if not self.workers or min(self.workers) < 1:
            raise ConfigError(f"'workers' must be worker counts >= 1 (got {self.workers!r})")
        if not 1 <= self.batch_size <= MAX_BATCH_SIZE:
            raise ConfigError(f"'batch_size' must be from 1 to 10^9 (got {self.batch_size})")
        if not MIN_PAYLOAD_FRACTION <= self.payload_fraction <= 1:
            raise ConfigError(f"'payload_fraction' must be from {MIN_PAYLOAD_FRACTION} to 1 "
                              f"(got {self.payload_fraction})")
        if not 1 <= self.seeds <= 1000:
            raise ConfigError(f"'seeds' must be from 1 to 1000 (got {self.seeds})")
        if self.emit_traces and min(self.emit_traces) < 1:
            raise ConfigError(f"'emit_traces' must be worker counts >= 1 (got {self.emit_traces!r})")
        if self.timing not in TIMINGS:
            raise ConfigError(f"'timing' must be one of {', '.join(TIMINGS)} (got {self.timing!r})")
        if self.link not in LINK_MODELS:
            raise ConfigError(f"'link' must be one of {', '.join(LINK_MODELS)} (got {self.link!r})")
        self.sim_config(None)  # checks steps, seeds, threads and the policy

    def sim_config(self, link_spec: LinkSpec | None) -> SimConfig:
        """The simulation settings (n_workers is set per point)."""
        return SimConfig(steps=self.steps, warmup_steps=self.warmup_steps, seed=self.seed, link_spec=link_spec,
                         link=self.link, policy=self.policy, order=self.order, ps_threads=self.ps_threads,
                         worker_speed=self.worker_speed, ps_shard_of_task=self.ps_shard_of_task,
                         worker_link_bytes_per_s=tuple(b / 8 * self.payload_fraction
                                                       for b in self.worker_link_bits_per_s))

    def one_ps(self, link_spec: LinkSpec | None) -> SimConfig:
        """:meth:`sim_config` of the traced job: its PS tasks (one, unless the trace had several) and workers like
        the traced one (what a single-worker measurement measured)."""
        return dataclasses.replace(self.sim_config(link_spec), ps_shard_of_task=self.traced_ps_task, worker_speed=(),
                                   worker_link_bytes_per_s=())

    def on_traced_ps_tasks(self, model: StepModel) -> PredictConfig:
        """This config for a model traced on several PS tasks: the traced job keeps them, and so does the curve
        unless a placement was asked for (``ps_shard_of_task``). Unchanged for a one-PS trace."""
        if not model.traced_ps_task:
            return self
        return dataclasses.replace(self, traced_ps_task=model.traced_ps_task,
                                   ps_shard_of_task=self.ps_shard_of_task or model.traced_ps_task)

    def payload_bytes_per_s(self) -> int | None:
        """The tensor bytes per second a given bandwidth carries, each way."""
        if self.bandwidth_bytes_per_s is None:
            return None
        return max(1, round(self.bandwidth_bytes_per_s * self.payload_fraction))


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Prediction:
    """What :func:`predict` computed and wrote. ``band`` holds the low and high curves when the link was only a
    bandwidth (module docstring)."""

    model: StepModel
    curve: Curve
    link_source: str
    band: tuple[Curve, Curve] | None
    files: tuple[pathlib.Path, ...]
    shards: tuple[ShardRow, ...] = ()
    ps_at_cap_steps_per_s: float | None = None  # the plateau the PS's CPU allows at its cap (linkspec.at_cap_plateau)
    cycle_steps_per_s: float | None = None  # the link bound of the profile's cycle points at the last N (cycle_plateau)


def beside(trace_path: str | os.PathLike[str], name: str) -> pathlib.Path | None:
    """The file ``name`` in the trace's folder (the folder itself for a directory of steps; a TF2 profile's logdir:
    :func:`parsers.read.beside_dir`), if there."""
    found = beside_dir(trace_path) / name
    # not a file (a folder of that name, a link that leads nowhere): its reader says so
    return found if is_there(found) else None


def profile_beside(trace_path: str | os.PathLike[str]) -> pathlib.Path | None:
    """``link-profile.json`` beside the trace, if there."""
    return beside(trace_path, PROFILE_NAME)


def single_worker_beside(trace_path: str | os.PathLike[str]) -> pathlib.Path | None:
    """``single-worker.json`` beside the trace, if there."""
    return beside(trace_path, SINGLE_WORKER_NAME)


def resolve_links(model: StepModel, config: PredictConfig) -> dict[str, LinkSpec]:
    """The link(s) to simulate: ``{"mid": spec}``, plus ``"low"`` and ``"high"`` for a bandwidth alone."""
    if config.link_profile is not None:
        links = {"mid": from_profile(config.link_profile, model.link)}
    elif (payload := config.payload_bytes_per_s()) is not None:
        links = {name: from_bandwidth(payload, model.link, two_way=f) for name, f in BAND_TWO_WAY.items()}
    else:
        links = {"mid": resolve_link(model, SimConfig())}
    if config.single_worker is None:
        return links
    return {name: with_single_worker(spec, model, config.single_worker) for name, spec in links.items()}


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Prepared:
    """What to simulate: ``model`` and ``links`` with tracing's cost undone by ``speed`` (1: nothing undone), and
    the replay as traced (``traced_model``, ``traced_links``), which the band keeps (:func:`band_curves`)."""

    model: StepModel
    links: dict[str, LinkSpec]
    traced_model: StepModel
    traced_links: dict[str, LinkSpec]
    speed: float = 1.0
    notes: tuple[str, ...] = ()  # what the user should know about the inputs (a measurement the replay misses)


def prepared(model: StepModel, config: PredictConfig, report: Callable[[str], None] | None = None) -> Prepared:
    """:func:`resolve_links`, then, with a single-worker measurement that the replay of one worker falls short
    of, tracing's cost undone (:mod:`tracegen.untraced`; one factor, found on the link the measurement was taken
    on, :func:`fit_link`, for every link). What that will cost is told to ``report`` first when it may take more
    than :data:`UNTRACED_SAY_S` (predict, validate: else a long run of steps is a silent minute before the
    curves' own estimate)."""
    links = resolve_links(model, config)
    if config.single_worker is None:
        return Prepared(model=model, links=links, traced_model=model, traced_links=links)
    # before the curves' budget (predict, validate): one worker up to MAX_RUNS times, at every seed and step asked
    run_events = task_events(model, (config.steps + config.warmup_steps) * config.seeds)
    events = MAX_RUNS * run_events
    if events > MAX_EVENTS:
        raise ConfigError(f"undoing tracing's cost ({config.single_worker.source or 'single-worker measurement'}) "
                          f"would simulate one worker up to {MAX_RUNS} times, about {events:.2g} events, "
                          f"{format_wait(seconds_on_one_core(events, 1, engine_of(config)))} on one core (more than "
                          f"the {MAX_EVENTS:.0e} allowed); ask for fewer steps or seeds")
    run_s = seconds_on_one_core(run_events, 1, engine_of(config))
    if report is not None and MAX_RUNS * run_s > UNTRACED_SAY_S:
        each = f"roughly {format_wait(run_s)}" if run_s >= 1 else "under a second"
        report(f"undoing tracing's cost: simulating one worker a few times (at most {MAX_RUNS}), about "
               f"{run_events:.2g} events a time: {each} a time on one core, {format_wait(MAX_RUNS * run_s)} at most")
    fit = fit_link(model, config, links)
    one_ps, measured = config.one_ps(fit), config.single_worker.steps_per_s
    speed, replayed = fit_untraced(model, one_ps, measured, seeds=config.seeds)
    note = mismatch_note(replayed, measured, speed)
    return Prepared(model=untraced_model(model, speed), traced_model=model, traced_links=links, speed=speed,
                    links={name: untraced_link(spec, speed) for name, spec in links.items()},
                    notes=(f"{config.single_worker.source or 'single-worker measurement'}: {note}",) if note else ())


def fit_link(model: StepModel, config: PredictConfig, links: dict[str, LinkSpec]) -> LinkSpec:
    """The link the single-worker measurement was taken on, where one worker's replay is set beside it to work out
    what tracing cost: the link profile when there is one (measured between the same two hosts); else the link
    the measurement names (its ``link_bits_per_s``, simulated as a bandwidth alone is); else the link predicted
    for, ``links["mid"]``. Tracing slows the hosts' CPUs, not the link, so the factor found there holds on any
    link; found on a slower link than the measurement's, one worker could never reach the measured rate, and the
    factor would run to its bound (``--bandwidth 200Mbit/s`` for a worker measured at 500: 4x)."""
    measured_on = None if config.single_worker is None else config.single_worker.link_bits_per_s
    if config.link_profile is not None or measured_on is None:
        return links["mid"]
    return resolve_links(model, dataclasses.replace(config, bandwidth_bytes_per_s=round(measured_on / 8)))["mid"]


def band_curves(prep: Prepared, config: PredictConfig, workers: tuple[int, ...], *, find_plateau: bool = True,
                processes: Simulations | None = None) -> tuple[Curve, Curve]:
    """The bandwidth-only band: the traced replay at the link's two extremes, widened to hold it scaled by the
    measured single worker's rate when there is one (:mod:`tracegen.band`). The replay as traced, not with
    tracing's cost undone: whether that correction holds at larger N is itself uncertain, and the band is there
    to cover what the point prediction cannot know."""
    low, high = (scaling_curve(prep.traced_model, config.sim_config(prep.traced_links[end]), workers,
                               seeds=config.seeds, find_plateau=find_plateau, processes=processes)
                 for end in ("low", "high"))
    if config.single_worker is None:
        return low, high
    fit = fit_link(prep.traced_model, config, prep.traced_links)  # where the measurement was taken
    return anchored((low, high), single_worker_factor(prep.traced_model, config, fit))


def _placed(model: StepModel, trace: Trace, config: PredictConfig, report: Callable[[str], None]) -> list[Placement]:
    """The placements of ``--ps-shards``, as plan and sweep take them: a PS that would hold no variable is left
    out, and a note says so (it changes no rate, and only costs)."""
    if not config.ps_shards:
        return []
    kept, left_out = holding(model, trace, config.ps_shards)
    if left_out is not None:
        report(f"note: {left_out}")
    return placements(model, trace, kept, config.placement)


def check_config_order(model: StepModel, config: PredictConfig) -> None:
    """ConfigError unless every tensor of ``config.order`` is a transfer of ``model``, naming the order file and
    its line where it came from one: as the ``--policy`` it was given as (``order_file`` is that option's FILE), as
    the file's read errors name it."""
    if config.order:
        check_order(model, config.order, config.order_file, "--policy" if config.order_file else "policy")


def predict(trace: Trace | str | os.PathLike[str], config: PredictConfig, out: OutputDir,
            progress: Callable[[str], None] | None = None) -> Prediction:
    """Run the pipeline of the module docstring and write its files into ``out``."""
    report = progress or (lambda _line: None)
    tr = trace if isinstance(trace, Trace) else read_trace(trace)
    traced = build_model(tr, timing=config.timing)
    check_config_order(traced, config)
    config = config.on_traced_ps_tasks(traced)
    if traced.traced_ps_task:
        report(f"the trace has {max(traced.traced_ps_task) + 1} PS tasks: each keeps its traced parameters, "
               "each a PS with the link given")
    prep = prepared(traced, config, report)
    for note in prep.notes:
        report(f"warning: {note}")
    model, links = prep.model, prep.links
    placed = _placed(model, tr, config, report)
    curves = len(links) + len(placed)
    jobs, progress_n = _planned(model, config, links["mid"], curves, out, report)
    with simulations(jobs) as processes:
        curve = scaling_curve(model, config.sim_config(links["mid"]), config.workers, seeds=config.seeds,
                              progress=progress_n, processes=processes, stop_at_plateau=not config.every_n)
        simulated = tuple(p.n_workers for p in curve.points)
        band = None
        if "low" in links:
            report("simulating the two ends of the band")
            band = band_curves(prep, config, simulated, processes=processes)
        shards: list[ShardRow] = []
        if placed:
            report(f"simulating {counted(len(placed), 'number')} of PS shards ({config.placement} placement)")
            shards = shard_table(model, placed, config.sim_config(None), links["mid"], config.workers,
                                 seeds=config.seeds, processes=processes, stop_at_plateau=not config.every_n)
    title = plot_title(tr.source)
    files = [out.write("curve.csv", curve_csv(curve, config.batch_size, band)),
             out.write("curve.png", curve_png(curve, title=title, band=band))]
    if any(p.staleness is not None for p in curve.points):
        files += [out.write("staleness.csv", staleness_csv(curve)),
                  out.write("staleness.png", staleness_png(curve, title=f"Staleness: {title}"))]
    if placed:
        files.append(out.write("shards.csv", shards_csv(shards)))
    for n in sorted(set(config.emit_traces)):
        with out.open(f"traces/n{n}.json") as path:
            write_synthetic_trace(model, dataclasses.replace(config.sim_config(links["mid"]), n_workers=n), path)
            too_large = size_warning(path)
        files.append(out.path(f"traces/n{n}.json"))
        if too_large is not None:
            report(f"warning: {too_large}")
    at_cap = None if config.link_profile is None else at_cap_plateau(config.link_profile, traced, links["mid"])
    profile = config.link_profile
    one_ps = not placed and not traced.traced_ps_task
    cycling = cycle_plateau(profile, model, curve.points[-1].n_workers) if profile is not None and one_ps else None
    return Prediction(model=model, curve=curve, link_source=links["mid"].description, band=band, files=tuple(files),
                      shards=tuple(shards), ps_at_cap_steps_per_s=at_cap, cycle_steps_per_s=cycling)


def _planned(model: StepModel, config: PredictConfig, spec: LinkSpec, curves: int, out: OutputDir,
             report: Callable[[str], None]) -> tuple[int, Callable[[int], None] | None]:
    """What ``curves`` curves on the link ``spec`` will cost, said (:func:`budget`), and refused when too much:
    the processes to run them in and what to say as each N of the first is done (None for a short run)."""
    likely = likely_workers(model, config, spec)
    # a curve that does not stall in the asked range goes on to its plateau past it (tracegen.curve.plateau_search)
    probes = plateau_probes(max(config.workers), likely_plateau_start(model, config, spec))
    likely_probes = probes[:LIKELY_PROBES] if likely[-1] == max(config.workers) else ()
    curve_events = curves * estimated_events(model, config, spec, workers=(*likely, *likely_probes))
    every_events = curves * estimated_events(model, config, spec, workers=(*config.workers, *probes))
    # processes as before this estimate counted two probes, not three (the threshold is in those seconds)
    climbing = (*likely, *probes) if likely_probes else likely
    jobs = processes_for(curves * estimated_seconds(model, config, spec, workers=climbing), config.jobs)
    run_s_of = run_seconds(model, config)
    traces_s = traces_seconds(model, config)  # in this process
    uneven = bool(config.worker_speed or config.worker_link_bits_per_s)  # runs as long as the slowest worker's
    if uneven:  # on one core: how the others' extra steps fall among the processes is not worked out
        planned_s = every_s = curves * estimated_seconds(model, config, spec) + traces_s  # as estimated_events
    else:
        planned_s, every_s = (wall_s(curves * planned_runs(run_s_of, config, w, p, jobs), jobs) + traces_s
                              for w, p in ((likely, likely_probes), (config.workers, probes)))
    for line in budget(model, config, out, curve_events, every_events=every_events, stalls_by=likely[-1],
                       seconds=(planned_s, every_s), jobs=1 if uneven else jobs):
        report(line)
    report(f"simulating {counted(len(config.workers), 'worker count')} x {counted(config.seeds, 'seed')}"
           + (f" in {jobs} processes" if jobs > 1 else ""))
    if every_events + estimated_trace_events(model, config) <= SLOW_EVENTS:
        return jobs, None
    if uneven:
        return jobs, lambda n: report(f"  N={n} done")
    return jobs, _progress(report, run_s_of, config, planned_s, jobs)


def budget(model: StepModel, config: PredictConfig, out: OutputDir, curve_events: float, *,
           seconds: tuple[float, float], every_events: float | None = None, stalls_by: int | None = None,
           jobs: int = 1) -> list[str]:
    """What the run will cost, in lines to print; refused when it is too much: more events than
    :data:`MAX_EVENTS`, workers so uneven the others would train for hours, synthetic traces larger than the
    free space where they are to be written. ``curve_events``: the curves' events if their rate stalls by N =
    ``stalls_by`` (:func:`likely_workers`); ``every_events``: if it climbs to the largest N asked. ``seconds``:
    how long each of the two takes, synthetic traces included, in ``jobs`` processes (:func:`planned_runs`,
    :func:`tracegen.cost.wall_s`), on one core for 1 (:func:`estimated_seconds`, as for workers that differ, whose
    runs last as long as the slowest worker's steps): every figure from :func:`tracegen.cost.task_s`'s price."""
    trace_events = estimated_trace_events(model, config)
    events = curve_events + trace_events
    likely_s, every_s = seconds
    where = f"in {jobs} processes" if jobs > 1 else "on one core"
    check_uneven(model, config, curve_events, f"{format_wait(likely_s)} {where}")
    if events > MAX_EVENTS:
        traces = (f", {trace_events:.2g} of them for 'emit_traces' {format_workers(config.emit_traces)}"
                  if trace_events else "")
        raise ConfigError(f"this prediction would simulate about {events:.2g} events, {format_wait(likely_s)} "
                          f"{where} (more than the {MAX_EVENTS:.0e} allowed){traces}; ask for fewer worker counts, "
                          "traces, steps or seeds")
    lines = ([trace_space(config, out, TRACE_BYTES_PER_EVENT * trace_events, traces_seconds(model, config))]
             if trace_events else [])
    every = events if every_events is None else every_events + trace_events
    if every > 2 * events and every > SLOW_EVENTS:
        largest = max(config.workers)
        # likely to reach the largest N asked: the two differ in the plateau's search past it, not in where the
        # rate stalls ('if the rate stalls by N=4, as it likely does; ... if it climbs to N=4' said both at once)
        likely, climbs = ((f"rate stalls by N={stalls_by}, as it likely does", f"it climbs to N={largest}")
                          if stalls_by is None or stalls_by < largest else
                          (f"plateau past N={largest} is found soon, as it likely is", "the rate climbs far past it"))
        lines.append(f"about {events:.2g} simulated events: roughly {format_wait(max(likely_s, 1))} {where} if the "
                     f"{likely}; {every:.2g} and {format_wait(max(every_s, 1))} if {climbs}")
    elif every > SLOW_EVENTS:
        lines.append(f"about {every:.2g} simulated events: roughly {format_wait(max(every_s, 1))} {where}")
    return lines


def trace_space(config: PredictConfig, out: OutputDir, trace_bytes: float, seconds: float) -> str:
    """What the synthetic traces will take, space and about ``seconds`` (:func:`traces_seconds`), in a line; refused
    when they would not fit where they are to be written: found out before any work, not by a full disk hours
    later (``--emit-traces 100000`` was 100 GB)."""
    free = out.free_bytes()
    if trace_bytes > free:
        raise ConfigError(f"'emit_traces' {format_workers(config.emit_traces)}: the synthetic traces would take about "
                          f"{format_bytes(trace_bytes)}, more than the {format_bytes(free)} free in "
                          f"{str(out.root)!r}; ask for fewer worker counts or steps, or write them elsewhere")
    took = f", roughly {format_wait(seconds)} to simulate and write" if seconds >= 1 else ""
    return f"synthetic traces {format_workers(config.emit_traces)}: about {format_bytes(trace_bytes)}{took}"


def single_worker_factor(model: StepModel, config: PredictConfig, spec: LinkSpec) -> float:
    """The measured single-worker rate over the simulated one (one worker like the traced one, one PS)."""
    if config.single_worker is None:
        raise ConfigError("no single-worker measurement to compare N = 1 with")
    one = scaling_curve(model, config.one_ps(spec), (1,), seeds=config.seeds, find_plateau=False).points[0]
    return config.single_worker.steps_per_s / one.steps_per_s


def load_profile(path: str | os.PathLike[str] | None) -> LinkProfile | None:
    """The profile at ``path`` (None for None)."""
    return None if path is None else read_link_profile(path)


def load_single_worker(path: str | os.PathLike[str] | None) -> SingleWorker | None:
    """The single-worker measurement at ``path`` (None for None)."""
    return None if path is None else read_single_worker(path)
