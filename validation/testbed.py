"""Measure the real scaling curve of async-PS training on an emulated cluster: ``tracegen testbed``.

For each worker count N and each repeat, :func:`run_testbed` builds a fresh :class:`~validation.cluster.Cluster`
(1 PS + N workers, the PS link shaped both ways, every node CPU-capped), runs the zoo model with real
TensorFlow, and measures over one window that is common to all workers:

1. every worker runs ``warmup_steps`` steps and reports "warm" (worker 0 of the first N = 1 run also traces
   ``traced_steps`` steps here, under the very same settings, into ``out_dir/trace/``);
2. once all workers are warm, the controller sets one window [A, A + ``window_s``] on the machine's
   monotonic clock (one clock for every process here) and sends it to every worker;
3. every worker keeps training without pause and reports the start and end of each of its steps that overlap
   the window.

A worker's rate is the number of its steps done inside the window — each step counted by the fraction of its
duration that lies inside [A, B] — divided by the window's length. The aggregate ``steps_per_s`` is the sum of
the workers' rates. This equals the rate of ``global_step`` increments over the window: every worker step
increments ``global_step`` exactly once, and all workers are counted over the same interval of the same clock,
with the partial steps at both ends counted by fraction instead of dropped or counted whole. As a cross-check,
worker 0 also reads ``global_step`` at its first step boundary at or after A and at or after B, and
``global_steps_per_s`` is that difference over the time between the two reads.

``out_dir/measured.csv`` is rewritten (atomically) after every run, so an interrupted campaign keeps what it
measured. Its schema, which :data:`MEASURED_SCHEMA` holds for readers to validate against (one row per run;
columns never change with N or options)::

    n_workers             int    workers in this run (N)
    repeat                int    repeat index, 0-based
    steps_per_s           float  aggregate training steps per second over the window (sum of the workers')
    worker_steps_per_s    str    each worker's steps per second, worker 0 first, joined by ';'
    global_steps_per_s    float  global_step increments per second read by worker 0 (cross-check)
    window_s              float  length of the common measurement window, seconds
    model                 str    zoo model name (mlp, cnn, resnet)
    batch_size            int    examples per step per worker
    widths                str    the model's widths as built, joined by ';'
    learning_rate         float  plain SGD learning rate
    warmup_steps          int    steps each worker ran before the window
    bandwidth_bits_per_s  int    tbf rate of the PS link, each direction, bits per second
    burst_bytes           int    tbf bucket size, bytes
    latency_ms            float  tbf queue latency (queue limit = rate * latency + burst), milliseconds
    cpu_cap_ps            float  the PS's CPU cap, cores
    cpu_cap_worker        float  each worker's CPU cap, cores
    qdisc_drops           int    packets the PS link's two qdiscs dropped, whole run (warm-up included)
    tcp_retrans_segs      int    TCP segments retransmitted by all nodes, whole run (warm-up included)
    tensorflow_version    str    TensorFlow version of the nodes
    ps_tasks              int    PS tasks, each with its own link of the shape above and the PS's CPU cap
    placement             str    how variables were placed on them: round-robin (TF's default) or greedy
    ps_bytes              str    parameter bytes on each PS task, as worker 0's graph placed them, joined by ';'
    worker_caps           str    each worker's CPU cap in this run, cores, worker 0 first, joined by ';'
    worker_links          str    each worker's own link rate in this run, bits/s (0: unshaped), joined by ';'
    api                   str    tf1 (graph-mode workers) or tf2 (ParameterServerStrategy: worker_steps_per_s
                                 empty, the rate is the coordinator's step counter, global_steps_per_s the same)
    cpu_cap_coordinator   float  the TF2 coordinator node's CPU cap, cores (empty for tf1)
    ps_cpu_cores          float  CPU the PS task(s) used over the window, cores, from their cgroups (empty when
                                 unknown): with steps_per_s, the PS's CPU per step at this N
    worker_cpu_cores      float  CPU all workers' processes used over the window, cores (empty when unknown)
    host_busy_cores       float  CPU the whole machine ran over the window, cores: every node, the kernel's packet
                                 work, anything else (:mod:`validation.windowcpu`; empty when unknown)
    host_softirq_cores    float  of which softirq (the kernel moving packets, charged to no node's cap), cores
    host_steal_cores      float  CPU the hypervisor took from this virtual machine over the window, cores
    ps_wakeups_per_s      float  voluntary context switches of all the PS processes' threads over the window, per
                                 second (a thread slept, for work or I/O, and was woken): with steps_per_s, the
                                 PS's wake-ups per step at this N (empty when unknown)
    ps_preemptions_per_s  float  their involuntary context switches, per second (the CFS quota spent, another
                                 task's turn)

With ``ps_tasks`` > 1 (``--ps K``) the cluster has K PS tasks, the variables placed by
``replica_device_setter`` as ``placement`` says (:mod:`validation.node`); the N = 1 trace is then a trace of a
K-PS job. Files written before these three columns existed have one PS, round robin. With ``worker_caps``
(``--worker-caps``) worker I is capped at its own figure (a mixed cluster); the N = 1 trace is then of worker 0
at its cap. Files without the column had every worker at ``cpu_cap_worker``. With ``worker_links``
(``--worker-links``) worker I's own link is shaped at its figure, with the PS link's burst and queue latency; the
N = 1 trace is then of worker 0 behind its link. Files without the column had unshaped workers. Files written
before the last six columns existed do not say where the host's CPU went, nor how often the PS woke.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import pathlib
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO, Any, TypedDict

from parsers.atomic import write_bytes_atomic
from parsers.linkprofile import PROFILE_NAME
from parsers.singleworker import SINGLE_WORKER_NAME
from tracegen.placement import PLACEMENTS
from validation import Progress
from validation.capture import tensorflow_version
from validation.cluster import Cluster, NodeProcess
from validation.cluster_config import ClusterConfig, LinkShape
from validation.cluster_host import check_host
from validation.errors import ConfigError, JobError, NodeCrashedError
from validation.testbed_link import default_client_cores, measure_link_profile
from validation.testbed_single import MeasureOne, measure_at_cap, utc_now, write_single_worker_json
from validation.testbed_tf2 import measure_tf2
from validation.windowcpu import WindowCpu, WindowFigures
from validation.zoo import ModelSpec

MEASURED_SCHEMA: tuple[tuple[str, str], ...] = (
    ("n_workers", "int"),
    ("repeat", "int"),
    ("steps_per_s", "float"),
    ("worker_steps_per_s", "str"),
    ("global_steps_per_s", "float"),
    ("window_s", "float"),
    ("model", "str"),
    ("batch_size", "int"),
    ("widths", "str"),
    ("learning_rate", "float"),
    ("warmup_steps", "int"),
    ("bandwidth_bits_per_s", "int"),
    ("burst_bytes", "int"),
    ("latency_ms", "float"),
    ("cpu_cap_ps", "float"),
    ("cpu_cap_worker", "float"),
    ("qdisc_drops", "int"),
    ("tcp_retrans_segs", "int"),
    ("tensorflow_version", "str"),
    ("ps_tasks", "int"),
    ("placement", "str"),
    ("ps_bytes", "str"),
    ("worker_caps", "str"),
    ("worker_links", "str"),
    ("api", "str"),
    ("cpu_cap_coordinator", "float"),
    ("ps_cpu_cores", "float"),
    ("worker_cpu_cores", "float"),
    ("host_busy_cores", "float"),
    ("host_softirq_cores", "float"),
    ("host_steal_cores", "float"),
    ("ps_wakeups_per_s", "float"),
    ("ps_preemptions_per_s", "float"),
)
"""The columns of ``measured.csv`` in order, each with its type (see the module docstring for units)."""

MEASURED_COLUMNS: tuple[str, ...] = tuple(name for name, _ in MEASURED_SCHEMA)
LIST_SEPARATOR = ";"
MIN_STEPS_PER_WORKER = 60  # the bar for a window long enough to trust
_WINDOW_LEAD_S = 0.3  # time between sending the window and its start, so every worker has it in time
_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "grpc_proxy", "no_proxy")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TestbedConfig:
    """Everything ``tracegen testbed`` runs with; one field per command-line option.

    The default queue, ``burst_bytes`` 16384 and ``latency_ms`` 50, was chosen by measurement so that the
    link behaves like a switch port (fair sharing, no loss) rather than a lossy emulation artefact. With
    mlp 512-512 (2.7 MB of parameters), batch 32, 200 Mbit/s, caps 0.3 cores, 10 s windows, two repeats:
    ``latency_ms`` 5 (a 141 KB queue) dropped 16 000 - 55 000 packets per run with 26 000 - 84 000 TCP
    retransmissions and gave N = 1, 2, 3: 4.28/4.22, 5.58/6.52, 5.87/6.42 steps/s; ``latency_ms`` 50 (a
    1.27 MB queue) dropped 0 - 88 packets (1 - 94 retransmissions) and gave 4.17/4.27, 6.05/5.89, 6.04/6.44
    steps/s. Two plain TCP flows of 25 MB pushed at once into the PS finished after 1.96 s and 2.24 s at
    5 ms (1.60 s and 2.32 s at 1 ms: unfair, lossy) and both after 2.12 s at 50 ms (fair, at line rate).
    """

    __test__ = False  # not a pytest test class, despite its name

    out_dir: pathlib.Path
    model: str
    workers: tuple[int, ...]
    bandwidth_bits_per_s: int
    batch_size: int = 32
    widths: tuple[int, ...] = ()
    burst_bytes: int = 16_384
    latency_ms: float = 50.0
    repeats: int = 3
    window_s: float = 30.0
    window_steps: int = 0
    max_window_s: float = 120.0
    trace_workers: bool = True
    warmup_steps: int = 10
    cpu_cap_ps: float = 0.3
    cpu_cap_worker: float = 0.3
    traced_steps: int = 10
    learning_rate: float = 0.01
    subnet: str = "10.77.0.0/24"
    timeout_s: float = 300.0
    link_profile: bool = True
    netbench_client_cores: float | None = None
    only_link_profile: bool = False
    only_single_worker: bool = False
    ps_at_cap: bool = False  # also the single worker against a PS capped so that it holds it at its cap
    staleness: bool = False  # workers also report each step's staleness (validation.node); staleness.csv
    ps_tasks: int = 1
    placement: str = "round-robin"
    worker_caps: tuple[float, ...] = ()  # worker I's CPU cap when given (a mixed cluster), else cpu_cap_worker
    worker_links: tuple[int, ...] = ()  # worker I's own link rate, bits/s, when given and > 0, else unshaped
    api: str = "tf1"  # tf1: graph-mode workers (validation.node); tf2: ParameterServerStrategy (testbed_tf2)
    cpu_cap_coordinator: float = 0.3  # the TF2 coordinator node's CPU cap

    def __post_init__(self) -> None:
        self.model_spec()
        if self.api not in ("tf1", "tf2"):
            raise ConfigError(f"'api' must be tf1 or tf2 (got {self.api!r})")
        if self.api == "tf2" and (self.ps_tasks > 1 or self.staleness or self.worker_caps or self.worker_links
                                  or self.trace_workers):
            raise ConfigError("--api tf2 runs one PS, workers alike, without staleness or per-worker traces")
        if self.placement not in PLACEMENTS:
            raise ConfigError(f"'placement' must be one of {', '.join(PLACEMENTS)} (got {self.placement!r})")
        if not self.workers:
            raise ConfigError("'workers' must name at least one worker count (got none)")
        if any(n < 1 for n in self.workers):
            raise ConfigError(f"'workers' must all be >= 1 (got {list(self.workers)})")
        if len(set(self.workers)) != len(self.workers):
            raise ConfigError(f"'workers' must not repeat a count (got {list(self.workers)})")
        for name, low in (("repeats", 1), ("window_steps", 0), ("warmup_steps", 1), ("traced_steps", 1)):
            if getattr(self, name) < low:
                raise ConfigError(f"{name!r} must be >= {low} (got {getattr(self, name)})")
        for name in ("window_s", "max_window_s", "learning_rate", "timeout_s"):
            if not getattr(self, name) > 0.0:  # a NaN fails too
                raise ConfigError(f"{name!r} must be > 0 (got {getattr(self, name)})")
        self.cluster_config(max(self.workers))  # checks the link, the caps and the subnet

    def model_spec(self) -> ModelSpec:
        """The zoo model to train."""
        return ModelSpec(name=self.model, batch_size=self.batch_size, widths=self.widths)

    def link(self) -> LinkShape:
        """The PS link's shape."""
        return LinkShape(rate_bits_per_s=self.bandwidth_bits_per_s, burst_bytes=self.burst_bytes,
                         latency_ms=self.latency_ms)

    def cluster_config(self, n_workers: int) -> ClusterConfig:
        """The emulated cluster of one run with ``n_workers`` workers."""
        return ClusterConfig(n_workers=n_workers, link=self.link(), cpu_cap_ps=self.cpu_cap_ps,
                             cpu_cap_worker=self.cpu_cap_worker, subnet=self.subnet, n_ps=self.ps_tasks,
                             worker_caps=self.worker_caps, worker_links=self.worker_links,
                             coordinator=self.api == "tf2", cpu_cap_coordinator=self.cpu_cap_coordinator)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Measurement:
    """One run's result: the rates over the common window and the link's counters."""

    n_workers: int
    repeat: int
    steps_per_s: float
    worker_steps_per_s: tuple[float, ...]
    global_steps_per_s: float
    window_s: float
    qdisc_drops: int
    tcp_retrans_segs: int
    param_bytes: int = 0  # bytes of the model's trainable variables, as a worker reported them
    ps_cpu_cores: float | None = None  # CPU the PS processes used over the window, in cores (None: unknown)
    worker_cpu_cores: float | None = None  # the workers' (or a TF2 job's worker servers'), in cores
    host_busy_cores: float | None = None  # the whole machine's, in cores (validation.windowcpu)
    host_softirq_cores: float | None = None  # of which softirq
    host_steal_cores: float | None = None  # what the hypervisor took, in cores
    ps_wakeups_per_s: float | None = None  # the PS processes' voluntary context switches per second
    ps_preemptions_per_s: float | None = None  # their involuntary ones
    ps_bytes: tuple[int, ...] = ()  # parameter bytes on each PS task (worker 0's placement)
    staleness: tuple[int, ...] = ()  # of every step inside the window, all workers (when asked for)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TestbedResult:
    """What :func:`run_testbed` measured and where it wrote it."""

    __test__ = False  # not a pytest test class, despite its name

    measurements: tuple[Measurement, ...]
    csv_path: pathlib.Path
    trace_dir: pathlib.Path


def steps_in_window(steps: Sequence[tuple[float, float]], start_s: float, end_s: float) -> float:
    """Steps done inside [start_s, end_s]: each step counted by the fraction of its duration inside."""
    total = 0.0
    for s, e in steps:
        overlap = min(e, end_s) - max(s, start_s)
        if overlap > 0.0 and e > s:
            total += overlap / (e - s)
    return total


def _run_two_hosts(config: TestbedConfig, csv_path: pathlib.Path, trace_dir: pathlib.Path,
                   report: Progress) -> TestbedResult:
    """``--only-link-profile`` / ``--only-single-worker``: what a user measures on two hosts, beside the trace."""
    check_host(config.cluster_config(1))
    trace_dir.mkdir(parents=True, exist_ok=True)
    if config.only_link_profile:
        _measure_profile(config, trace_dir, report)
    done: list[Measurement] = []
    if config.only_single_worker:
        if (trace_dir / SINGLE_WORKER_NAME).exists():
            raise ConfigError(f"{trace_dir / SINGLE_WORKER_NAME}: already exists; move it away to measure again")
        for repeat in range(config.repeats):
            report(f"single worker: run {repeat + 1}/{config.repeats}")
            done.append(_measure_one(config)(config, 1, repeat=repeat, progress=report))
            write_single_worker_json(trace_dir, config, done)
        _add_at_cap(config, trace_dir, done, report)
    return TestbedResult(measurements=tuple(done), csv_path=csv_path, trace_dir=trace_dir)


def run_testbed(config: TestbedConfig, progress: Progress | None = None) -> TestbedResult:
    """Measure every worker count of ``config`` ``repeats`` times and capture the N = 1 trace.

    Writes ``measured.csv`` and ``trace/`` into ``config.out_dir`` (which must not hold either yet) and
    reports progress as one-line messages through ``progress``. Raises ClusterError when this machine cannot
    host the largest cluster, JobError when a node fails, TerminatedError on SIGTERM; the cluster of the run in
    progress is removed in every case.
    """
    report = progress or (lambda _message: None)
    out_dir = config.out_dir
    csv_path, trace_dir = out_dir / "measured.csv", out_dir / "trace"
    if config.only_link_profile or config.only_single_worker:
        return _run_two_hosts(config, csv_path, trace_dir, report)
    if csv_path.exists() or (trace_dir.is_dir() and any(trace_dir.iterdir())):
        raise ConfigError(f"{out_dir}: already holds measured.csv or trace/; choose an empty directory")
    check_host(config.cluster_config(max(config.workers)))  # refuse before anything starts
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
            after = out_dir / "workers" / f"n{n}" if (config.trace_workers and n > 1 and repeat == 0) else None
            window = window_for(config, n, measurements)
            m = _measure_retrying_a_crash(config, n, repeat, traced, after, window, report)
            measurements.append(m)
            _write_csv(csv_path, config, measurements, tf_version)
            if config.staleness:
                _write_staleness(out_dir / STALENESS_NAME, measurements)
            if traced is not None:
                _write_trace_meta(trace_dir, config, tf_version)
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


STALENESS_NAME = "staleness.csv"


def _add_at_cap(config: TestbedConfig, trace_dir: pathlib.Path, alone: Sequence[Measurement],
                report: Progress) -> None:
    """With ``ps_at_cap``: single-worker.json again, from ``alone`` and the PS held at its cap."""
    if config.ps_at_cap and alone:
        write_single_worker_json(trace_dir, config, alone, measure_at_cap(config, alone, _measure_one(config), report))


def _measure_one(config: TestbedConfig) -> MeasureOne:
    """How a run of this config's API is measured."""
    return measure_tf2 if config.api == "tf2" else measure


def _write_staleness(path: pathlib.Path, measurements: Sequence[Measurement]) -> None:
    """``staleness.csv``: per run, how many steps inside the window had each staleness."""
    lines = ["n_workers,repeat,staleness,steps"]
    for m in measurements:
        values = sorted(set(m.staleness))
        lines += [f"{m.n_workers},{m.repeat},{v},{m.staleness.count(v)}" for v in values]
    write_bytes_atomic(path, ("\n".join(lines) + "\n").encode())


def _measure_profile(config: TestbedConfig, trace_dir: pathlib.Path, report: Progress) -> None:
    client = config.netbench_client_cores or default_client_cores(config.cpu_cap_ps)
    report(f"link profile: tracegen netbench between the PS and one client host ({client:g} cores)")
    measure_link_profile(dataclasses.replace(config.cluster_config(1), cpu_cap_worker=client, worker_caps=(),
                                             worker_links=(), coordinator=False),
                         trace_dir / PROFILE_NAME, progress=report)


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


def measure(
    config: TestbedConfig,
    n_workers: int,
    *,
    repeat: int = 0,
    trace_dir: pathlib.Path | None = None,
    after_trace_dir: pathlib.Path | None = None,
    window_s: float | None = None,
    progress: Progress | None = None,
) -> Measurement:
    """Build one cluster with ``n_workers`` workers, measure one window, remove the cluster.

    With ``trace_dir``, worker 0 traces ``config.traced_steps`` steps after warm-up into it. With
    ``after_trace_dir``, every worker I traces ``config.traced_steps`` steps right after the window into
    ``after_trace_dir/wI`` (the measurement is over by then; the workers keep training a few steps more so
    that each traced step runs beside the others). ``window_s`` overrides ``config.window_s``.
    """
    window_len_s = config.window_s if window_s is None else window_s
    report = progress or (lambda _message: None)
    env = node_env()
    with Cluster(config.cluster_config(n_workers)) as cluster:
        report(f"N={n_workers}: cluster {cluster.run_id} is up; starting TensorFlow")
        job: dict[str, Any] = {
            "cluster": cluster.tf_cluster(),
            "model": dataclasses.asdict(config.model_spec()),
            "learning_rate": config.learning_rate,
            "warmup_steps": config.warmup_steps,
            "control": "stdin",
            "staleness": config.staleness,
            "placement": config.placement,
        }
        pss = [cluster.start(node, _node_argv(job, "ps", j), env=env) for j, node in enumerate(cluster.ps_nodes)]
        workers: list[NodeProcess] = []
        for i in range(n_workers):
            spec = dict(job)
            if i == 0 and trace_dir is not None:
                spec.update(trace_dir=str(trace_dir), traced_steps=config.traced_steps)
            if after_trace_dir is not None:
                (after_trace_dir / f"w{i}").mkdir(parents=True, exist_ok=True)
                spec.update(after_trace_dir=str(after_trace_dir / f"w{i}"), after_traced_steps=config.traced_steps)
            workers.append(cluster.start(f"w{i}", _node_argv(spec, "worker", i), env=env,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE))
        events: queue.Queue[tuple[int, str | None]] = queue.Queue()
        for i, w in enumerate(workers):
            if w.popen.stdout is None:
                raise JobError(f"worker {i}: no stdout pipe")
            threading.Thread(target=_pump, args=(i, w.popen.stdout, events), daemon=True).start()

        _collect(events, pss=pss, workers=workers, want="warm", deadline_s=time.monotonic() + config.timeout_s,
                 timeout_s=config.timeout_s)
        report(f"N={n_workers}: all workers warm; measuring {window_len_s:g} s")
        start_s = time.monotonic() + _WINDOW_LEAD_S
        end_s = start_s + window_len_s
        window = json.dumps({"start_s": start_s, "end_s": end_s}) + "\n"
        for i, w in enumerate(workers):
            if w.popen.stdin is None:
                raise JobError(f"worker {i}: no stdin pipe")
            try:
                w.popen.stdin.write(window)
                w.popen.stdin.flush()
            except BrokenPipeError as exc:
                raise JobError(f"worker {i} exited before the window began: {w.stderr_tail()}") from exc
        cpu = WindowCpu(pss, workers, start_s, end_s)
        done = _collect(events, pss=pss, workers=workers, want="done", deadline_s=end_s + config.timeout_s,
                        timeout_s=config.timeout_s)
        cpu.join()
        stats = cluster.link_stats()

    rates = []
    for i in range(n_workers):
        steps = [(float(s), float(e)) for s, e in done[i]["steps"]]
        rates.append(steps_in_window(steps, start_s, end_s) / window_len_s)
    reads = done[0]["global_step_reads"]
    if len(reads) != 2 or reads[1][0] <= reads[0][0]:
        raise JobError(f"worker 0 reported unusable global_step reads {reads}")
    global_rate = (reads[1][1] - reads[0][1]) / (reads[1][0] - reads[0][0])
    return Measurement(
        n_workers=n_workers, repeat=repeat, steps_per_s=sum(rates), worker_steps_per_s=tuple(rates),
        global_steps_per_s=global_rate, window_s=window_len_s,
        qdisc_drops=stats.pull_drops + stats.push_drops, tcp_retrans_segs=stats.tcp_retrans_segs,
        param_bytes=int(done[0].get("param_bytes", 0)),
        ps_bytes=tuple(int(b) for b in done[0].get("ps_bytes", [])),
        staleness=tuple(int(v) for i in range(n_workers) for v in done[i].get("staleness", [])),
        **cpu_fields(cpu.figures(window_len_s)),
    )


class CpuFields(TypedDict):
    """:class:`Measurement`'s fields of a window's CPU figures."""

    ps_cpu_cores: float | None
    worker_cpu_cores: float | None
    host_busy_cores: float | None
    host_softirq_cores: float | None
    host_steal_cores: float | None
    ps_wakeups_per_s: float | None
    ps_preemptions_per_s: float | None


def cpu_fields(figures: WindowFigures) -> CpuFields:
    """A window's CPU figures as :class:`Measurement`'s fields."""
    return {"ps_cpu_cores": figures.ps_cores, "worker_cpu_cores": figures.worker_cores,
            "host_busy_cores": figures.host_busy_cores, "host_softirq_cores": figures.host_softirq_cores,
            "host_steal_cores": figures.host_steal_cores, "ps_wakeups_per_s": figures.ps_wakeups_per_s,
            "ps_preemptions_per_s": figures.ps_preemptions_per_s}


def node_env() -> dict[str, str]:
    """The environment of every node process: this one's without proxies (traffic stays in the cluster),
    TensorFlow quiet, no GPU."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in _PROXY_VARS}
    env.update(TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    return env


def _node_argv(job: dict[str, Any], role: str, index: int) -> list[str]:
    return [sys.executable, "-m", "validation.node", json.dumps(dict(job, role=role, task_index=index))]


def _pump(index: int, stream: IO[str], events: queue.Queue[tuple[int, str | None]]) -> None:
    """Forward a worker's stdout lines to ``events``; ``None`` marks its end."""
    try:
        for line in stream:
            events.put((index, line))
    except (OSError, ValueError):
        pass  # the stream was closed under us while the cluster was removed
    events.put((index, None))


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


def _collect(
    events: queue.Queue[tuple[int, str | None]],
    *,
    pss: Sequence[NodeProcess],
    workers: Sequence[NodeProcess],
    want: str,
    deadline_s: float,
    timeout_s: float,
) -> dict[int, dict[str, Any]]:
    """Wait until every worker has sent the event ``want``; raise JobError if a node dies or time runs out."""
    got: dict[int, dict[str, Any]] = {}
    while len(got) < len(workers):
        for j, ps in enumerate(pss):
            code = ps.popen.poll()
            if code is not None:
                raise (NodeCrashedError if code < 0 else JobError)(
                    f"PS task {j} exited with code {code} while workers waited for '{want}': {ps.stderr_tail()}")
        remaining = deadline_s - time.monotonic()
        if remaining <= 0.0:
            missing = [i for i in range(len(workers)) if i not in got]
            tails = "; ".join(f"worker {i}: {workers[i].stderr_tail()}" for i in missing)
            raise JobError(f"no '{want}' from worker(s) {missing} within {timeout_s:g} s ({tails})")
        try:
            index, line = events.get(timeout=min(0.5, remaining))
        except queue.Empty:
            continue
        if line is None:
            if want == "warm" or index not in got:
                code = workers[index].popen.wait(timeout=10.0)
                raise (NodeCrashedError if code < 0 else JobError)(
                    f"worker {index} exited with code {code} before it reported '{want}': "
                    f"{workers[index].stderr_tail()}"
                )
            continue
        if not line.startswith("{"):
            continue  # not a protocol line
        event = json.loads(line)
        if isinstance(event, dict) and event.get("event") == want:
            got[index] = event
    return got


def host_note(m: Measurement) -> str:
    """Where the host's CPU went in a window, for the progress line ("" when unknown)."""
    if m.host_busy_cores is None or m.host_softirq_cores is None or m.host_steal_cores is None:
        return ""
    wakes = ("" if m.ps_wakeups_per_s is None or not m.steps_per_s
             else f"; PS woken {m.ps_wakeups_per_s / m.steps_per_s:.0f} times per step")
    return (f"; host {m.host_busy_cores:.2f} cores busy, {m.host_softirq_cores:.2f} of them softirq, "
            f"{m.host_steal_cores:.2f} stolen{wakes}")


def _fmt(value: float) -> str:
    return format(value, ".6g")


def _fmt_or_empty(value: float | None) -> str:
    return "" if value is None else _fmt(value)


def _write_csv(path: pathlib.Path, config: TestbedConfig, rows: Sequence[Measurement], tf_version: str) -> None:
    spec = config.model_spec()
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(MEASURED_COLUMNS)
    for m in rows:
        record = {
            "n_workers": m.n_workers,
            "repeat": m.repeat,
            "steps_per_s": _fmt(m.steps_per_s),
            "worker_steps_per_s": LIST_SEPARATOR.join(_fmt(r) for r in m.worker_steps_per_s),
            "global_steps_per_s": _fmt(m.global_steps_per_s),
            "window_s": _fmt(m.window_s),
            "model": spec.name,
            "batch_size": spec.batch_size,
            "widths": LIST_SEPARATOR.join(str(w) for w in spec.resolved_widths()),
            "learning_rate": _fmt(config.learning_rate),
            "warmup_steps": config.warmup_steps,
            "bandwidth_bits_per_s": config.bandwidth_bits_per_s,
            "burst_bytes": config.burst_bytes,
            "latency_ms": _fmt(config.latency_ms),
            "cpu_cap_ps": _fmt(config.cpu_cap_ps),
            "cpu_cap_worker": _fmt(config.cpu_cap_worker),
            "qdisc_drops": m.qdisc_drops,
            "tcp_retrans_segs": m.tcp_retrans_segs,
            "tensorflow_version": tf_version,
            "ps_tasks": config.ps_tasks,
            "placement": config.placement,
            "ps_bytes": LIST_SEPARATOR.join(str(b) for b in m.ps_bytes),
            "worker_caps": LIST_SEPARATOR.join(_fmt(config.cluster_config(m.n_workers).worker_cap(i))
                                               for i in range(m.n_workers)),
            "api": config.api,
            "cpu_cap_coordinator": _fmt(config.cpu_cap_coordinator) if config.api == "tf2" else "",
            "ps_cpu_cores": _fmt_or_empty(m.ps_cpu_cores),
            "worker_cpu_cores": _fmt_or_empty(m.worker_cpu_cores),
            "host_busy_cores": _fmt_or_empty(m.host_busy_cores),
            "host_softirq_cores": _fmt_or_empty(m.host_softirq_cores),
            "host_steal_cores": _fmt_or_empty(m.host_steal_cores),
            "ps_wakeups_per_s": _fmt_or_empty(m.ps_wakeups_per_s),
            "ps_preemptions_per_s": _fmt_or_empty(m.ps_preemptions_per_s),
            "worker_links": LIST_SEPARATOR.join(str(config.worker_links[i] if i < len(config.worker_links) else 0)
                                                for i in range(m.n_workers)),
        }
        writer.writerow([record[name] for name in MEASURED_COLUMNS])
    write_bytes_atomic(path, buf.getvalue().encode())


def _write_trace_meta(trace_dir: pathlib.Path, config: TestbedConfig, tf_version: str) -> None:
    spec = config.model_spec()
    meta = {
        "tool": "tracegen testbed",
        "model": spec.name,
        "batch_size": spec.batch_size,
        "widths": list(spec.resolved_widths()),
        "learning_rate": config.learning_rate,
        "warmup_steps": config.warmup_steps,
        "traced_steps": config.traced_steps,
        "cluster": "1 PS + 1 worker, each in its own network namespace on one bridge (emulated cluster)",
        "bandwidth_bits_per_s": config.bandwidth_bits_per_s,
        "burst_bytes": config.burst_bytes,
        "latency_ms": config.latency_ms,
        "cpu_cap_ps": config.cpu_cap_ps,
        "cpu_cap_worker": config.cluster_config(1).worker_cap(0),  # the traced worker's
        "tensorflow": tf_version,
        "python": sys.version.split()[0],
        "date": utc_now(),
    }
    write_bytes_atomic(trace_dir / "meta.json", (json.dumps(meta, indent=2) + "\n").encode())
