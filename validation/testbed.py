"""Measure the real scaling curve of async-PS training on an emulated cluster: ``tracegen testbed``.

For each worker count N and each repeat, :func:`run_testbed` builds a fresh :class:`~validation.cluster.Cluster`
(1 PS + N workers, the PS link shaped both ways, every node CPU-capped), runs the zoo model with real
TensorFlow, and measures over one window that is common to all workers (:mod:`validation.testbed_window`; TF2
jobs: :mod:`validation.testbed_tf2`). Worker 0 of the first N = 1 run also traces ``traced_steps`` steps after
its warm-up, under the very same settings, into ``out_dir/trace/``.

``out_dir/measured.csv`` is rewritten (atomically) after every run, so an interrupted campaign keeps what it
measured; its schema and the files beside it are :mod:`validation.testbed_files`'s. The options are
:class:`~validation.testbed_config.TestbedConfig`'s.
"""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Sequence

from parsers.linkprofile import PROFILE_NAME
from parsers.singleworker import SINGLE_WORKER_NAME
from validation import Progress
from validation.capture import tensorflow_version
from validation.cluster_host import check_host, leftover_name, reap_dead_runs
from validation.errors import ConfigError, NodeCrashedError
from validation.staleness import STALENESS_NAME
from validation.testbed_config import TestbedConfig
from validation.testbed_files import write_measured_csv, write_staleness, write_trace_meta
from validation.testbed_link import default_client_cores, measure_link_profile
from validation.testbed_single import MeasureOne, measure_at_cap, write_single_worker_json
from validation.testbed_tf2 import measure_tf2
from validation.testbed_window import Measurement, measure

MIN_STEPS_PER_WORKER = 60  # the bar for a window long enough to trust
WORKERS_DIR = "workers"  # every worker's steps traced right after the window of the first run of each N > 1


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TestbedResult:
    """What :func:`run_testbed` measured and where it wrote it."""

    __test__ = False  # not a pytest test class, despite its name

    measurements: tuple[Measurement, ...]
    csv_path: pathlib.Path
    trace_dir: pathlib.Path


def _run_two_hosts(config: TestbedConfig, csv_path: pathlib.Path, trace_dir: pathlib.Path,
                   report: Progress) -> TestbedResult:
    """``--only-link-profile`` / ``--only-single-worker``: what a user measures on two hosts, beside the trace."""
    wanted = [name for name, on in ((PROFILE_NAME, config.only_link_profile),
                                     (SINGLE_WORKER_NAME, config.only_single_worker)) if on]
    for name in wanted:  # both, before either is measured: the profile took minutes, then single-worker.json was
        if (trace_dir / name).exists():  # found there
            raise ConfigError(f"{trace_dir / name}: already exists; move it away to measure again")
    check_host(config.cluster_config(1))
    _reap(report)
    trace_dir.mkdir(parents=True, exist_ok=True)
    if config.only_link_profile:
        _measure_profile(config, trace_dir, report)
    done: list[Measurement] = []
    if config.only_single_worker:
        for repeat in range(config.repeats):
            report(f"single worker: run {repeat + 1}/{config.repeats}")
            done.append(_measure_one(config)(config, 1, repeat=repeat, progress=report))
            write_single_worker_json(trace_dir, config, done)
        _add_at_cap(config, trace_dir, done, report)
    return TestbedResult(measurements=tuple(done), csv_path=csv_path, trace_dir=trace_dir)


def run_testbed(config: TestbedConfig, progress: Progress | None = None) -> TestbedResult:
    """Measure every worker count of ``config`` ``repeats`` times and capture the N = 1 trace.

    Writes ``measured.csv`` and ``trace/`` into ``config.out_dir`` (which must hold neither yet, nor a
    ``staleness.csv`` or ``workers/`` traces) and reports progress as one-line messages through ``progress``.
    Raises ClusterError when this machine cannot host the largest cluster, JobError when a node fails,
    TerminatedError on SIGTERM or SIGHUP; the cluster of the run in progress is removed in every case.
    """
    report = progress or (lambda _message: None)
    out_dir = config.out_dir
    csv_path, trace_dir = out_dir / "measured.csv", out_dir / "trace"
    if out_dir.exists() and not out_dir.is_dir():  # else found out only once the host was checked, by mkdir
        raise ConfigError(f"{out_dir}: a file, not a directory; --out names the directory to measure into")
    if config.only_link_profile or config.only_single_worker:
        return _run_two_hosts(config, csv_path, trace_dir, report)
    _refuse_earlier_outputs(out_dir)
    check_host(config.cluster_config(max(config.workers)))  # refuse before anything starts
    _reap(report)
    tf_version = tensorflow_version()
    trace_dir.mkdir(parents=True, exist_ok=True)
    if config.link_profile:
        _measure_profile(config, trace_dir, report)

    if 1 not in config.workers:
        report("N=1: trace run (1 is not among the worker counts, so it is traced in a run of its own)")
        (measure_tf2 if config.api == "tf2" else measure)(config, 1, repeat=0, trace_dir=trace_dir, progress=report)
    measurements: list[Measurement] = []
    total = len(config.workers) * config.repeats
    for repeat in range(config.repeats):
        for n in config.workers:
            report(f"run {len(measurements) + 1}/{total}: N={n} repeat {repeat}")
            traced = trace_dir if (n == 1 and repeat == 0) else None
            after = out_dir / WORKERS_DIR / f"n{n}" if (config.trace_workers and n > 1 and repeat == 0) else None
            window = window_for(config, n, measurements)
            m = _measure_retrying_a_crash(config, n, repeat, traced, after, window, report)
            measurements.append(m)
            write_measured_csv(csv_path, config, measurements, tf_version)
            if config.staleness:
                write_staleness(out_dir / STALENESS_NAME, measurements)
            if traced is not None:
                write_trace_meta(trace_dir, config, tf_version)
            if n == 1:  # every run of one worker so far: their median
                write_single_worker_json(trace_dir, config, [r for r in measurements if r.n_workers == 1])
            rates = ", ".join(f"{r:.3f}" for r in m.worker_steps_per_s)
            report(f"N={n} repeat {repeat}: {m.steps_per_s:.3f} steps/s (workers {rates}; global_step "
                   f"{m.global_steps_per_s:.3f}/s; {m.qdisc_drops} drops, {m.tcp_retrans_segs} retransmits"
                   f"{host_note(m)})")
            fewest = min(m.worker_steps_per_s, default=m.steps_per_s / n) * m.window_s
            if fewest < MIN_STEPS_PER_WORKER:
                report(f"note: a worker did only {fewest:.0f} steps in the {m.window_s:g} s window "
                       f"(fewer than {MIN_STEPS_PER_WORKER}); a longer window gives a steadier rate")
    _add_at_cap(config, trace_dir, [r for r in measurements if r.n_workers == 1], report)
    return TestbedResult(measurements=tuple(measurements), csv_path=csv_path, trace_dir=trace_dir)


def _reap(report: Progress) -> None:
    """Remove what runs killed outright (SIGKILL: no handler of theirs ran) left on this machine, saying what."""
    for run_id, removed in reap_dead_runs().items():
        if removed:
            names = ", ".join(leftover_name(x) for x in removed)
            report(f"removed what the dead run {run_id} (killed, its cluster left standing) left: {names}")


def _refuse_earlier_outputs(out_dir: pathlib.Path) -> None:
    """ConfigError when ``out_dir`` holds what a run writes: ``measured.csv``, ``staleness.csv``, or files in
    ``trace/`` or ``workers/``. An earlier run's ``staleness.csv`` was overwritten by ``--staleness`` without a word,
    and without it was left to be read beside the new measurements by ``validate`` as theirs; its ``workers/``
    traces were mixed with the new run's."""
    held = [name for name in ("measured.csv", STALENESS_NAME) if (out_dir / name).exists()]
    held += [f"{name}/" for name in ("trace", WORKERS_DIR)  # its folders alone: what an interrupted run made
             if any(not p.is_dir() for p in (out_dir / name).rglob("*"))]
    if held:
        raise ConfigError(f"{out_dir}: already holds {' and '.join(held)} of an earlier run; choose an empty directory "
                          "or move them away")


def _add_at_cap(config: TestbedConfig, trace_dir: pathlib.Path, alone: Sequence[Measurement],
                report: Progress) -> None:
    """With ``ps_at_cap``: single-worker.json again, from ``alone`` and the PS held at its cap."""
    if config.ps_at_cap and alone:
        write_single_worker_json(trace_dir, config, alone, measure_at_cap(config, alone, _measure_one(config), report))


def _measure_one(config: TestbedConfig) -> MeasureOne:
    """How a run of this config's API is measured."""
    return measure_tf2 if config.api == "tf2" else measure


def _measure_profile(config: TestbedConfig, trace_dir: pathlib.Path, report: Progress) -> None:
    client = config.netbench_client_cores or default_client_cores(config.cpu_cap_ps)
    report(f"link profile: tracegen netbench between the PS and one client host ({client:g} cores)")
    measure_link_profile(dataclasses.replace(config.cluster_config(1), cpu_cap_worker=client, worker_caps=(),
                                             worker_links=(), coordinator=False, n_ps=1),  # one PS link, as all are
                         trace_dir / PROFILE_NAME, progress=report, tensors=config.netbench_tensors,
                         tensor_bytes=config.netbench_tensor_bytes)


def window_for(config: TestbedConfig, n_workers: int, done: Sequence[Measurement]) -> float:
    """The window for a run of ``n_workers``: ``config.window_s``, lengthened (up to ``max_window_s``) so that
    each worker does about ``window_steps`` steps, assuming a worker of N runs at least 1/N of the first N = 1
    run's rate (the aggregate does not fall below one worker's). Never shorter than ``window_s``; without an
    N = 1 run yet, ``window_s``."""
    first = next((m for m in done if m.n_workers == 1), None)
    if config.window_steps == 0 or first is None or first.steps_per_s <= 0:
        return config.window_s
    wanted = 1.15 * config.window_steps * n_workers / first.steps_per_s
    return round(max(config.window_s, min(wanted, config.max_window_s)), 1)


def _measure_retrying_a_crash(config: TestbedConfig, n: int, repeat: int, traced: pathlib.Path | None,
                              after: pathlib.Path | None, window: float, report: Progress) -> Measurement:
    """One run of ``n`` workers; when a TensorFlow process of it crashed (killed by a signal the testbed did not
    send: TensorFlow's own SIGSEGV, the OOM killer) the run is done again, once, and the progress says so."""

    def once() -> Measurement:
        if config.api == "tf2":
            return measure_tf2(config, n, repeat=repeat, trace_dir=traced, window_s=window, progress=report)
        return measure(config, n, repeat=repeat, trace_dir=traced, after_trace_dir=after, window_s=window,
                       progress=report)

    try:
        return once()
    except NodeCrashedError as exc:
        report(f"N={n} repeat {repeat}: {exc}; running it again (once)")
    return once()


def host_note(m: Measurement) -> str:
    """Where the host's CPU went in a window, for the progress line ("" when unknown)."""
    if m.host_busy_cores is None or m.host_softirq_cores is None or m.host_steal_cores is None:
        return ""
    wakes = ("" if m.ps_wakeups_per_s is None or not m.steps_per_s
             else f"; PS woken {m.ps_wakeups_per_s / m.steps_per_s:.0f} times per step")
    return (f"; host {m.host_busy_cores:.2f} cores busy, {m.host_softirq_cores:.2f} of them softirq, "
            f"{m.host_steal_cores:.2f} stolen{wakes}")
