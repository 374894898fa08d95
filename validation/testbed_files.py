"""What ``tracegen testbed`` writes into its folder: ``measured.csv``, ``staleness.csv`` and the trace's ``meta.json``.

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

``staleness.csv`` (with ``--staleness``): per run, how many steps inside the window had each staleness
(:mod:`validation.staleness` reads it).
"""

from __future__ import annotations

import csv
import io
import json
import pathlib
import sys
from collections.abc import Sequence

from parsers.atomic import write_bytes_atomic
from parsers.errors import counted
from validation.testbed_config import TestbedConfig
from validation.testbed_single import utc_now
from validation.testbed_window import Measurement

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


def write_staleness(path: pathlib.Path, measurements: Sequence[Measurement]) -> None:
    """``staleness.csv``: per run, how many steps inside the window had each staleness."""
    lines = ["n_workers,repeat,staleness,steps"]
    for m in measurements:
        values = sorted(set(m.staleness))
        lines += [f"{m.n_workers},{m.repeat},{v},{m.staleness.count(v)}" for v in values]
    write_bytes_atomic(path, ("\n".join(lines) + "\n").encode())


def _fmt(value: float) -> str:
    return format(value, ".6g")


def _fmt_or_empty(value: float | None) -> str:
    return "" if value is None else _fmt(value)


def write_measured_csv(path: pathlib.Path, config: TestbedConfig, rows: Sequence[Measurement], tf_version: str) -> None:
    """``measured.csv`` at ``path``: one row per run of ``rows`` (:data:`MEASURED_SCHEMA`), written atomically."""
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


def write_trace_meta(trace_dir: pathlib.Path, config: TestbedConfig, tf_version: str) -> None:
    """``trace_dir/meta.json``: the settings the N = 1 trace was captured under."""
    spec = config.model_spec()
    meta = {
        "tool": "tracegen testbed",
        "model": spec.name,
        "batch_size": spec.batch_size,
        "widths": list(spec.resolved_widths()),
        "learning_rate": config.learning_rate,
        "warmup_steps": config.warmup_steps,
        "traced_steps": config.traced_steps,
        "cluster": f"{counted(config.ps_tasks, 'PS task')} + 1 worker{' + a coordinator' * (config.api == 'tf2')}, "
                   "each in its own network namespace on one bridge (emulated cluster)",
        "ps_tasks": config.ps_tasks,
        "api": config.api,
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
