"""The single-worker input, measured on the testbed: ``single-worker.json`` from runs of one worker, and its
``ps_at_cap`` (:mod:`parsers.singleworker`): the same worker against a PS capped so that it holds it at its cap."""

from __future__ import annotations

import dataclasses
import datetime
import pathlib
import statistics
from collections.abc import Callable, Sequence

from parsers.singleworker import HELD_SHARE, SINGLE_WORKER_NAME, AtCap, SingleWorker, write_single_worker
from tracegen import own_version
from validation import Progress
from validation.testbed_config import TestbedConfig
from validation.testbed_link import ps_quota
from validation.testbed_window import Measurement

MeasureOne = Callable[..., Measurement]  # testbed_window.measure: (config, n_workers, repeat=, progress=)


def utc_now() -> str:
    """Now, ISO 8601 UTC to the second."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_single_worker_json(trace_dir: pathlib.Path, config: TestbedConfig, runs: Sequence[Measurement],
                             at_cap: AtCap | None = None) -> None:
    """``runs`` (runs of one worker, each a job of its own) as ``single-worker.json``: the median rate and the
    median PS CPU per step. One run's rate moves by more than its window's noise from one job to the next (14 %
    on a re-measured configuration, data/remeasured/), so every run of one worker counts, not the first alone."""
    rates = [m.steps_per_s for m in runs]
    cpus = [m.ps_cpu_cores / m.steps_per_s for m in runs if m.ps_cpu_cores is not None]
    quota = ps_quota(config.cluster_config(1))
    notes = ["one untraced worker on the emulated cluster, the PS link shaped and both nodes capped as in the trace"]
    if len(runs) > 1:
        notes.append(f"median of {len(runs)} runs, each a job of its own: "
                     + ", ".join(f"{r:.3f}" for r in rates) + " steps/s")
    record = SingleWorker(steps_per_s=statistics.median(rates), window_s=sum(m.window_s for m in runs),
                          ps_cpu_s_per_step=statistics.median(cpus) if cpus else None,
                          ps_cores=config.cpu_cap_ps, ps_cpu_quota=quota, ps_at_cap=at_cap,
                          link_bits_per_s=config.bandwidth_bits_per_s,
                          tool=f"tracegen testbed {own_version()}", date=utc_now(), notes=tuple(notes))
    write_single_worker(record, trace_dir / SINGLE_WORKER_NAME)


AT_CAP_SHARE = 0.5  # the PS's cap for ps_at_cap: this share of the CPU it used with the worker alone
MIN_CAP = 0.001  # cores: the least a CFS quota enforces (1 ms per 1 s period, validation.cluster)


def measure_at_cap(config: TestbedConfig, alone: Sequence[Measurement], measure: MeasureOne,
                   report: Progress) -> AtCap | None:
    """One worker, ``repeats`` jobs, against the PS capped at :data:`AT_CAP_SHARE` of what it used in ``alone``
    (the worker then holds it at its cap: its CPU per step without spare in it, :mod:`parsers.singleworker`);
    None, said on ``report``, when the PS's CPU is unknown or the PS did not reach that cap."""
    used = [m.ps_cpu_cores for m in alone if m.ps_cpu_cores is not None]
    if not used:
        report("PS at its cap: not measured (the PS's CPU with the worker alone is unknown)")
        return None
    cap = round(AT_CAP_SHARE * statistics.median(used), 3)
    if cap < MIN_CAP:
        report(f"PS at its cap: not measured (half of the {statistics.median(used):.4f} cores the PS used alone is "
               f"under {MIN_CAP} cores)")
        return None
    tight = dataclasses.replace(config, cpu_cap_ps=cap)
    runs = []
    for repeat in range(config.repeats):
        report(f"single worker, PS capped at {tight.cpu_cap_ps:g} cores: run {repeat + 1}/{config.repeats}")
        runs.append(measure(tight, 1, repeat=repeat, progress=report))
    rate = statistics.median(m.steps_per_s for m in runs)
    cpus = [m.ps_cpu_cores / m.steps_per_s for m in runs if m.ps_cpu_cores is not None]
    if not cpus:
        report("PS at its cap: not recorded (the PS's CPU in those runs is unknown)")
        return None
    cpu = statistics.median(cpus)
    if cpu * rate < HELD_SHARE * tight.cpu_cap_ps:
        report(f"PS at its cap: not recorded (it used {cpu * rate:.3f} of {tight.cpu_cap_ps:g} cores)")
        return None
    report(f"PS at its cap ({tight.cpu_cap_ps:g} cores): {rate:.3f} steps/s, {cpu * 1e3:.1f} ms of PS CPU per step")
    return AtCap(ps_cores=tight.cpu_cap_ps, steps_per_s=rate, ps_cpu_s_per_step=cpu,
                 window_s=sum(m.window_s for m in runs), ps_cpu_quota=ps_quota(tight.cluster_config(1)))
