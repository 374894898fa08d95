"""One node of a real TF2 ParameterServerStrategy job in the testbed: ``python -m validation.tf2node '<job JSON>'``.

Roles: ``ps`` and ``worker`` serve (``tf.distribute.Server``, a profiler server beside it when the job names a
``profiler_port``) until they are killed; ``coordinator`` builds the strategy over the cluster and a
:class:`~tf.distribute.coordinator.ClusterCoordinator`, the zoo model's step (:func:`validation.capture_tf2.
zoo_step`, plus one increment of a step counter on the PS), and drives the job:

1. with ``profile`` in the job, it profiles every process (:func:`validation.capture_tf2.profiled`) while it
   runs the step function's first call and ``profile["steps"]`` more — the TF2 single-worker trace;
2. ``warmup_steps`` steps per worker, then prints ``{"event": "warm", ...}``;
3. keeps every worker busy (at most two steps queued per worker, so that the queue never outgrows the window),
   reads the window ``{"start_s": A, "end_s": B}`` (``time.monotonic()``) from stdin, reads the counter at A and
   at B, stops scheduling, and prints ``{"event": "done", "counter_reads": [[t, count], [t, count]],
   "param_bytes": ..., "ps_bytes": [...]}`` (the model's parameter bytes, and those on each PS task). The steps
   of all workers together per second over the window is the measurement; ParameterServerStrategy does not say
   which worker ran which step.

With several PS tasks the strategy places the variables round robin in the order they are made: the counter
first (on PS task 0), then the model's. The counter is read wherever it lies.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import threading
import time
from typing import Any

INTER_OP_THREADS = 8  # a 2-core machine deadlocks PSS processes with fewer (DOMAIN.md)
QUEUED_PER_WORKER = 2


def run_server(job: dict[str, Any]) -> None:
    """Serve this task until killed."""
    import tensorflow as tf

    if job.get("profiler_port"):
        tf.profiler.experimental.server.start(int(job["profiler_port"]))
    config = tf.compat.v1.ConfigProto()
    config.inter_op_parallelism_threads = INTER_OP_THREADS
    server = tf.distribute.Server(tf.train.ClusterSpec(job["cluster"]), job_name=job["role"],
                                  task_index=int(job["task_index"]), protocol="grpc", config=config, start=True)
    server.join()


def run_coordinator(job: dict[str, Any]) -> dict[str, Any]:
    """Drive the job (module docstring); return the ``done`` event."""
    import tensorflow as tf

    from validation.capture_tf2 import profiled, zoo_step, zoo_variables
    from validation.zoo import ModelSpec

    tf.config.threading.set_inter_op_parallelism_threads(INTER_OP_THREADS)
    if job.get("profiler_port"):
        tf.profiler.experimental.server.start(int(job["profiler_port"]))
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(tf.train.ClusterSpec(job["cluster"]),
                                                                    rpc_layer="grpc")
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    model = job["model"]
    spec = ModelSpec(name=model["name"], batch_size=model["batch_size"], widths=tuple(model["widths"]))
    with strategy.scope():
        counter = tf.Variable(0, dtype=tf.int64, name="steps_done")
    store = zoo_variables(tf, strategy, spec)
    counted_step = zoo_step(tf, strategy, spec, learning_rate=job["learning_rate"], counter=counter, store=store)
    ps_bytes = [0] * len(job["cluster"]["ps"])
    for v in store.values():  # where the strategy put each parameter: "/job:ps/replica:0/task:J/device:CPU:0"
        ps_bytes[tf.DeviceSpec.from_string(v.device).task or 0] += int(v.shape.num_elements()) * v.dtype.size

    def run(n: int) -> None:
        for _ in range(n):
            coordinator.schedule(counted_step)
        coordinator.join()

    n_workers = len(job["cluster"]["worker"])
    profile = job.get("profile")
    if profile:
        with profiled(profile["logdir"], profile["addresses"], int(profile["duration_ms"])):
            run(1 + int(profile["steps"]))
    run(int(job["warmup_steps"]) * n_workers)
    line: list[str] = []
    reader = threading.Thread(target=lambda: line.append(sys.stdin.readline()), daemon=True)
    reader.start()
    print(json.dumps({"event": "warm", "at_s": time.monotonic()}), flush=True)
    queued: collections.deque[Any] = collections.deque()
    reads: list[tuple[float, int]] = []
    window: tuple[float, float] | None = None
    while True:
        queued.append(coordinator.schedule(counted_step))
        if len(queued) > QUEUED_PER_WORKER * n_workers:
            queued.popleft().fetch()  # wait for the oldest: the queue stays short
        if window is None and line:
            if not line[0].strip():
                raise RuntimeError("the controller closed stdin before it sent the measurement window")
            sent = json.loads(line[0])
            window = (float(sent["start_s"]), float(sent["end_s"]))
        if window is not None and not reads and time.monotonic() >= window[0]:
            reads.append((time.monotonic(), int(counter.numpy())))
        if window is not None and reads and time.monotonic() >= window[1]:
            reads.append((time.monotonic(), int(counter.numpy())))
            break
    coordinator.join()
    return {"event": "done", "counter_reads": [list(r) for r in reads], "param_bytes": sum(ps_bytes),
            "ps_bytes": ps_bytes}


def main(argv: list[str]) -> int:
    """Entry point of the node process."""
    job = json.loads(argv[0])
    if job["role"] == "coordinator":
        print(json.dumps(run_coordinator(job)), flush=True)
        os._exit(0)  # the strategy's threads keep a normal exit waiting for servers that are being stopped
    run_server(job)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
