"""The estimate of a prediction's simulations before they run: the N a curve likely simulates (the asked ones
until its rate stalls, then the plateau search's probes), the events its runs take, and their seconds on one core or
in the batches they run in, every figure priced by :mod:`tracegen.cost`. predict, plan, validate and sweep all
estimate by it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from tracegen import fastcore, native
from tracegen.baselines import link_rates, roofline_saturates, step_costs
from tracegen.config import PredictConfig
from tracegen.cost import TRACE_WRITE_BYTES_PER_S, busy_tasks, run_s, task_s
from tracegen.curve import batch_workers
from tracegen.link import PULL, PUSH, LinkSpec
from tracegen.model import TRANSFER_KINDS, StepModel, TaskKind
from tracegen.plateau import MAX_SATURATION_WORKERS, STALL_POINTS
from tracegen.simulate import SimConfig

# how far past the N at which the roofline saturates a curve's rate may still climb before it stalls, for the
# estimate of what a run simulates (on the twelve validation traces, N = 1..64 with their profiles, the stall came at
# 2.0-8.5x that N; four times it, plus the three points, covered ten)
STALL_MARGIN = 4

# the plateau probes a curve that climbs through the asked N likely simulates: the first, where the roofline has
# saturated, and the next, which finds the rate no higher and ends the search (tracegen.plateau.plateau_search; the
# estimate counted all three, and the resnet trace's 1-8 simulated 26 and 52, not 108 too)
LIKELY_PROBES = 2

EVENTS_PER_TASK = 3.0  # what a task instance costs the engine, about: its ready, start and end
TRACE_BYTES_PER_EVENT = 150  # a synthetic trace's bytes per estimated event (133-140 on the bundled traces)


def worker_step_s(model: StepModel, config: PredictConfig, n_workers: int) -> list[float]:
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


def seconds_on_one_core(events: float, n_workers: int, engine: str | None = None) -> float:
    """About how long ``events`` (:func:`task_events`) of runs of ``n_workers`` workers take on one core with
    ``engine`` (default: the one this process runs, :func:`tracegen.native.engine`; a prediction's,
    :func:`engine_of`), every task taken to take time: a task instance at :func:`tracegen.cost.task_s`'s price
    for that engine and N, the one price of every estimate (a C core task instance costs more in a larger run)."""
    return events / EVENTS_PER_TASK * task_s(engine or native.engine(), n_workers)


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


def likely_workers(model: StepModel, config: PredictConfig, spec: LinkSpec | None) -> tuple[int, ...]:
    """The asked N a curve likely simulates: in order until the rate stalls (:func:`tracegen.plateau.stalled_after`),
    taken to come :data:`tracegen.plateau.STALL_POINTS` asked N after :data:`STALL_MARGIN` times the N at which the
    roofline saturates (the link ``spec``, and the PS's CPU when a single-worker measurement gives it). Every asked N
    with ``every_n``, workers that differ, several PS shards, or no link."""
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


def likely_plateau_start(model: StepModel, config: PredictConfig, spec: LinkSpec | None) -> int:
    """Where the plateau search likely starts (:func:`tracegen.plateau.saturation_workers`: one and a half times the
    workers that saturate the tighter bound, at least the largest asked), with the roofline's single-worker rate
    and bound for the simulated ones: 0 (twice the largest asked) when no link gives a bound."""
    if spec is None:
        return 0
    costs = step_costs(model, config.single_worker)
    saturates = roofline_saturates(costs, link_rates(spec), MAX_SATURATION_WORKERS)
    wanted = MAX_SATURATION_WORKERS if saturates is None else math.ceil(1.5 * saturates) + 1
    return max(*config.workers, min(wanted, MAX_SATURATION_WORKERS))


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
        times = worker_step_s(model, config, n)
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

