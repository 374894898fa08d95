"""A prediction's budget: what its simulations will cost, said before they run (the ``simulated events`` line,
the synthetic traces' size), refused when it is too much (more than :data:`MAX_EVENTS` events, workers so uneven
the others would train for hours, traces larger than the free space), and, for a long run, a line as each N is done
saying how long the rest will likely take. From :mod:`tracegen.estimate`'s figures.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tracegen.config import PredictConfig
from tracegen.cost import seconds_left, wall_s
from tracegen.errors import ConfigError
from tracegen.estimate import (
    LIKELY_PROBES,
    TRACE_BYTES_PER_EVENT,
    estimated_events,
    estimated_seconds,
    estimated_trace_events,
    likely_plateau_start,
    likely_workers,
    planned_runs,
    run_seconds,
    traces_seconds,
    worker_step_s,
)
from tracegen.link import LinkSpec
from tracegen.model import StepModel
from tracegen.outputs import OutputDir
from tracegen.plateau import plateau_probes
from tracegen.processes import processes_for
from tracegen.units import counted, format_bytes, format_wait
from tracegen.workercounts import format_workers

SLOW_EVENTS = 3_000_000  # about a second compiled, 22 s pure (tracegen.cost): above it, say what the run costs

MAX_UNEVEN_EVENTS = 3e8  # two minutes compiled, 40 minutes pure: more, with uneven workers, is one far too slow

MAX_EVENTS = 1e10  # about an hour compiled, 20 hours pure: refused, it is a typo or a job for a sweep


def check_uneven(model: StepModel, config: PredictConfig, events: float, seconds: str) -> None:
    """ConfigError when workers that differ make a prediction of ``events`` simulate more than
    :data:`MAX_UNEVEN_EVENTS`: every worker trains until the slowest has run its steps, so a worker far slower
    than the rest keeps them running for hours (the plateau search's hundreds of workers too). ``seconds``: how
    long that takes, said (:func:`budget`)."""
    if events <= MAX_UNEVEN_EVENTS or not (config.worker_speed or config.worker_link_bits_per_s):
        return
    n = max(*config.workers, len(config.worker_speed), len(config.worker_link_bits_per_s))
    times = worker_step_s(model, config, n)
    slow = times.index(max(times))
    raise ConfigError(f"worker {slow + 1} of the worker classes takes about {times[slow]:.3g} s a step alone, and the "
                      f"others train until it has run its steps: about {events:.2g} events, {seconds} (more than "
                      f"the {MAX_UNEVEN_EVENTS:.0e} allowed when workers differ); give it a faster speed or link, or "
                      "ask for fewer --steps")


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


def planned(model: StepModel, config: PredictConfig, spec: LinkSpec, curves: int, out: OutputDir,
             report: Callable[[str], None]) -> tuple[int, Callable[[int], None] | None]:
    """What ``curves`` curves on the link ``spec`` will cost, said (:func:`budget`), and refused when too much:
    the processes to run them in and what to say as each N of the first is done (None for a short run)."""
    likely = likely_workers(model, config, spec)
    # a curve that does not stall in the asked range goes on to its plateau past it (tracegen.plateau.plateau_search)
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
    """What the run will cost, in lines to print; refused when it is too much: more events than :data:`MAX_EVENTS`,
    workers so uneven the others would train for hours, synthetic traces larger than the free space where they are to
    be written. ``curve_events``: the curves' events if their rate stalls by N = ``stalls_by``
    (:func:`tracegen.estimate.likely_workers`); ``every_events``: if it climbs to the largest N asked. ``seconds``:
    how long each of the two takes, synthetic traces included, in ``jobs`` processes
    (:func:`tracegen.estimate.planned_runs`, :func:`tracegen.cost.wall_s`), on one core for 1
    (:func:`tracegen.estimate.estimated_seconds`, as for workers that differ, whose runs last as long as the slowest
    worker's steps): every figure from :func:`tracegen.cost.task_s`'s price."""
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
    """What the synthetic traces will take, space and about ``seconds`` (:func:`tracegen.estimate.traces_seconds`),
    in a line; refused when they would not fit where they are to be written: found out before any work, not by a full
    disk hours later (``--emit-traces 100000`` was 100 GB)."""
    free = out.free_bytes()
    if trace_bytes > free:
        raise ConfigError(f"'emit_traces' {format_workers(config.emit_traces)}: the synthetic traces would take about "
                          f"{format_bytes(trace_bytes)}, more than the {format_bytes(free)} free in "
                          f"{str(out.root)!r}; ask for fewer worker counts or steps, or write them elsewhere")
    took = f", roughly {format_wait(seconds)} to simulate and write" if seconds >= 1 else ""
    return f"synthetic traces {format_workers(config.emit_traces)}: about {format_bytes(trace_bytes)}{took}"

