"""One testbed run (:func:`measure`): a cluster built for the run, TF1 workers (:mod:`validation.node`), and one
window that is common to all workers:

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

A TF2 job's run (:mod:`validation.testbed_tf2`) shares the nodes' environment, the reading of their protocol
lines and the window's CPU figures.
"""

from __future__ import annotations

import dataclasses
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

from tracegen.metrics import fraction_in_window
from validation import Progress
from validation.cluster import Cluster, NodeProcess
from validation.errors import JobError, NodeCrashedError
from validation.testbed_config import TestbedConfig
from validation.windowcpu import WindowCpu, WindowFigures

_WINDOW_LEAD_S = 0.3  # time between sending the window and its start, so every worker has it in time
_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "grpc_proxy", "no_proxy")


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
            threading.Thread(target=pump, args=(i, w.popen.stdout, events), daemon=True).start()

        collect(events, pss=pss, workers=workers, want="warm", deadline_s=time.monotonic() + config.timeout_s,
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
        done = collect(events, pss=pss, workers=workers, want="done", deadline_s=end_s + config.timeout_s,
                       timeout_s=config.timeout_s)
        cpu.join()
        stats = cluster.link_stats()

    rates = []
    for i in range(n_workers):
        steps = [(float(s), float(e)) for s, e in done[i]["steps"]]
        rates.append(fraction_in_window(steps, start_s, end_s) / window_len_s)
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


def pump(index: int, stream: IO[str], events: queue.Queue[tuple[int, str | None]]) -> None:
    """Forward a worker's stdout lines to ``events``; ``None`` marks its end."""
    try:
        for line in stream:
            events.put((index, line))
    except (OSError, ValueError):
        pass  # the stream was closed under us while the cluster was removed
    events.put((index, None))


def collect(
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
            raise JobError(f"no '{want}' from {'worker' if len(missing) == 1 else 'workers'} "
                           f"{', '.join(map(str, missing))} within {timeout_s:g} s ({tails})")
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
