"""One testbed run of a TF2 ParameterServerStrategy job (``tracegen testbed --api tf2``): the same emulated
cluster as the TF1 runs (:mod:`validation.cluster`: the PS link shaped, every node capped) plus a coordinator
node, ``chief``, unshaped and capped at ``cpu_cap_coordinator``; the job is :mod:`validation.tf2node`.

The measurement is the TF1 runs' (:func:`validation.testbed_window.measure`): after warm-up the controller sends one
window on ``time.monotonic()``; the coordinator reads a step counter on the PS at its start and end, and steps
of all workers together per second is the rate (ParameterServerStrategy does not say which worker ran which
step, so ``worker_steps_per_s`` stays empty). The PS's CPU over the window comes from its cgroup, summed over the
PS tasks with ``ps_tasks`` > 1 (as the TF1 runs'), each PS task a node of its own with its own link and cap; the
strategy places the variables on them round robin in creation order (the counter first). In the traced run
(N = 1, first repeat), every process runs a profiler server and the coordinator profiles the step function's first
call and ``traced_steps`` more into ``trace_dir`` (a TensorBoard logdir) before warm-up: every PS task's included.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import queue
import subprocess
import sys
import threading
import time
from typing import Any

from validation import Progress
from validation.cluster import Cluster
from validation.errors import JobError
from validation.testbed_config import TestbedConfig
from validation.testbed_window import Measurement, collect, cpu_fields, node_env, pump
from validation.windowcpu import WindowCpu

PROFILER_PORT = 6009
WINDOW_LEAD_S = 1.0
PROFILE_MS_PER_STEP = 2000  # the profile lasts this long per traced step (at least 10 s): a generous bound


def measure_tf2(config: TestbedConfig, n_workers: int, *, repeat: int = 0, trace_dir: pathlib.Path | None = None,
                window_s: float | None = None, progress: Progress | None = None) -> Measurement:
    """Build one cluster with ``n_workers`` workers and a coordinator, measure one window, remove the cluster."""
    window_len_s = config.window_s if window_s is None else window_s
    report = progress or (lambda _message: None)
    env = node_env()
    with Cluster(config.cluster_config(n_workers)) as cluster:
        report(f"N={n_workers}: cluster {cluster.run_id} is up; starting TensorFlow (ParameterServerStrategy)")
        job: dict[str, Any] = {"cluster": cluster.tf_cluster(), "model": dataclasses.asdict(config.model_spec()),
                               "learning_rate": config.learning_rate, "warmup_steps": config.warmup_steps}
        if trace_dir is not None:
            job["profiler_port"] = PROFILER_PORT
            job["profile"] = {"logdir": str(trace_dir), "steps": config.traced_steps,
                              "duration_ms": max(10_000, PROFILE_MS_PER_STEP * (config.traced_steps + 1)),
                              "addresses": [f"grpc://{cluster.address(n)}:{PROFILER_PORT}"
                                            for n in ("chief", *cluster.ps_nodes, *cluster.worker_nodes)]}
        servers = [cluster.start(node, _argv(job, role, j), env=env)
                   for role, nodes in (("ps", cluster.ps_nodes), ("worker", cluster.worker_nodes))
                   for j, node in enumerate(nodes)]
        chief = cluster.start("chief", _argv(job, "coordinator", 0), env=env, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
        events: queue.Queue[tuple[int, str | None]] = queue.Queue()
        if chief.popen.stdout is None or chief.popen.stdin is None:
            raise JobError("the coordinator has no stdin/stdout pipe")
        threading.Thread(target=pump, args=(0, chief.popen.stdout, events), daemon=True).start()
        collect(events, pss=servers, workers=[chief], want="warm", deadline_s=time.monotonic() + config.timeout_s,
                timeout_s=config.timeout_s)
        report(f"N={n_workers}: warm; measuring {window_len_s:g} s")
        start_s = time.monotonic() + WINDOW_LEAD_S
        end_s = start_s + window_len_s
        try:
            chief.popen.stdin.write(json.dumps({"start_s": start_s, "end_s": end_s}) + "\n")
            chief.popen.stdin.flush()
        except BrokenPipeError as exc:
            raise JobError(f"the coordinator exited before the window began: {chief.stderr_tail()}") from exc
        n_ps = len(cluster.ps_nodes)
        cpu = WindowCpu(servers[:n_ps], servers[n_ps:], start_s, end_s)
        done = collect(events, pss=servers, workers=[chief], want="done", deadline_s=end_s + config.timeout_s,
                       timeout_s=config.timeout_s)[0]
        cpu.join()
        stats = cluster.link_stats()
    reads = done.get("counter_reads", [])
    if len(reads) != 2 or reads[1][0] <= reads[0][0]:
        raise JobError(f"the coordinator reported unusable step-counter reads {reads}")
    rate = (reads[1][1] - reads[0][1]) / (reads[1][0] - reads[0][0])
    return Measurement(n_workers=n_workers, repeat=repeat, steps_per_s=rate, worker_steps_per_s=(),
                       global_steps_per_s=rate, window_s=window_len_s, param_bytes=int(done.get("param_bytes", 0)),
                       ps_bytes=tuple(int(b) for b in done.get("ps_bytes", [])),
                       qdisc_drops=stats.pull_drops + stats.push_drops, tcp_retrans_segs=stats.tcp_retrans_segs,
                       **cpu_fields(cpu.figures(window_len_s)))


def _argv(job: dict[str, Any], role: str, index: int) -> list[str]:
    return [sys.executable, "-m", "validation.tf2node", json.dumps(dict(job, role=role, task_index=index))]
