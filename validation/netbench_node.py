"""The TensorFlow processes of ``tracegen netbench``: ``python -m validation.netbench_node '<job JSON>'``.

- ``role: ps`` — a TensorFlow PS task (``tf.distribute.Server``) for the job's cluster; it prints
  ``{"event": "ready"}`` once it listens and serves until it is killed.
- ``role: client`` — worker task ``index`` of the cluster. It places ``tensors`` float32 variables of
  ``tensor_bytes`` each on the PS (client 0 initialises them, the others wait), builds for n = 1, 2, 4, ... of
  them a *pull* step (read the first n variables onto the client: each whole tensor crosses PS -> client, as a
  worker's parameter reads do) and a *push* step (assign a client-side tensor to each: it crosses client -> PS,
  as gradients do), and prints ``{"event": "ready"}``. Then it reads commands from stdin, one JSON line each:
  ``{"mode": "pull"|"push", "tensors": n, "start_s": A, "end_s": B}`` runs that step back to back from now until
  a step ends at or after B (times on ``time.monotonic()``, one clock for every process of a machine; with
  ``"streams": s``, s steps at a time, so that the connection never waits between steps) and prints
  ``{"event": "done", "steps": [[start, end], ...]}`` with every step overlapping [A, B];
  ``{"mode": "exit"}`` ends the process. More modes: ``cycle`` (every pull, then every push: a worker's step
  without its computation), ``probe`` (read a 4-byte variable: the round trip of one small request), and
  ``rpc_pull`` / ``rpc_push`` (read / assign 64 variables of 1 KiB: the requests a PS handles per second).
Nothing is computed beyond what moves the tensors, so the rates are the link's and the two hosts' gRPC stacks'.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

FLOAT_BYTES = 4
SMALL_TENSORS = 64  # the rpc_pull / rpc_push steps: this many small tensors, so that requests, not bytes, count
SMALL_BYTES = 1024
MAX_TENSORS = 1000  # a client step's tensors at most (netbench run's --tensors)
TENSORS = 32  # netbench run's default payload: a client step's tensors at most, and their size
TENSOR_BYTES = 256 * 1024
MAX_TENSOR_BYTES = 1 << 30


def payload_fault(tensors: int, tensor_bytes: int, names: tuple[str, str] = ("'tensors'", "'tensor_bytes'")) -> str:
    """What is wrong with a payload of ``tensors`` per client step of ``tensor_bytes`` each, naming each as
    ``names`` says (a field, or the option that sets it); '' when nothing is."""
    if not 1 <= tensors <= MAX_TENSORS:
        return f"{names[0]} must be from 1 to {MAX_TENSORS} (got {tensors})"
    if not FLOAT_BYTES <= tensor_bytes <= MAX_TENSOR_BYTES:
        return f"{names[1]} must be from {FLOAT_BYTES} to {MAX_TENSOR_BYTES} (got {tensor_bytes})"
    return ""


def _say(event: dict[str, Any]) -> None:
    print(json.dumps(event), flush=True)


def run_ps(job: dict[str, Any]) -> None:
    """Serve as the PS task until killed."""
    import tensorflow as tf

    server = tf.distribute.Server(tf.train.ClusterSpec(job["cluster"]), job_name="ps", task_index=0)
    _say({"event": "ready"})
    server.join()


def step_sizes(max_tensors: int) -> list[int]:
    """The tensor counts a client has steps for: 1, 2, 4, ... up to ``max_tensors`` (always included)."""
    sizes = [1]
    while sizes[-1] * 2 <= max_tensors:
        sizes.append(sizes[-1] * 2)
    return sizes if sizes[-1] == max_tensors else [*sizes, max_tensors]


def run_client(job: dict[str, Any]) -> None:
    """Serve commands from stdin as client ``job['index']`` (module docstring)."""
    import tensorflow as tf

    v1 = tf.compat.v1
    v1.disable_eager_execution()
    index = int(job["index"])
    here = f"/job:worker/task:{index}"
    cluster = tf.train.ClusterSpec(job["cluster"])
    server = tf.distribute.Server(cluster, job_name="worker", task_index=index)
    elements = max(1, int(job["tensor_bytes"]) // FLOAT_BYTES)
    with v1.device("/job:ps/task:0"):
        params = [v1.get_variable(f"netbench_{i}", shape=[elements], initializer=v1.zeros_initializer())
                  for i in range(int(job["tensors"]))]
        tiny = v1.get_variable("netbench_probe", shape=[1], initializer=v1.zeros_initializer())
        small = [v1.get_variable(f"netbench_small_{i}", shape=[SMALL_BYTES // FLOAT_BYTES],
                                 initializer=v1.zeros_initializer()) for i in range(SMALL_TENSORS)]
    with v1.device(here):
        probe = tf.identity(tiny)  # a 4-byte read: one small request and response, as a step's own RPCs
        local = [v1.Variable(tf.ones([elements]), trainable=False, name=f"local_{i}",
                             collections=[v1.GraphKeys.LOCAL_VARIABLES]) for i in range(len(params))]
        small_local = [v1.Variable(tf.ones([SMALL_BYTES // FLOAT_BYTES]), trainable=False, name=f"small_local_{i}",
                                   collections=[v1.GraphKeys.LOCAL_VARIABLES]) for i in range(SMALL_TENSORS)]

    def pull_first(n: int, source: list[Any] = params) -> Any:
        with v1.device(here):
            return tf.group(*[tf.reduce_sum(tf.identity(p)[:1]) for p in source[:n]])

    def push_first(n: int, source: list[Any] = params, values: list[Any] = local) -> Any:
        assigns = []
        for p, x in zip(source[:n], values[:n], strict=True):
            with v1.device("/job:ps/task:0"):
                assigns.append(p.assign(x).op)
        with v1.device(here):
            return tf.group(*assigns)

    ops: dict[tuple[str, int], Any] = {("probe", 1): probe.op, ("rpc_pull", SMALL_TENSORS): pull_first(
        SMALL_TENSORS, small), ("rpc_push", SMALL_TENSORS): push_first(SMALL_TENSORS, small, small_local)}
    for n in step_sizes(len(params)):
        ops["pull", n] = pull = pull_first(n)
        ops["push", n] = push_first(n)
        with v1.control_dependencies([pull]):
            ops["cycle", n] = push_first(n)  # a worker's step without its computation: pulls, then pushes
    with v1.device(here):
        uninitialized = v1.report_uninitialized_variables(v1.global_variables())
    config = v1.ConfigProto(device_filters=["/job:ps", here])
    with v1.Session(server.target, config=config) as sess:
        if index == 0:
            sess.run(v1.variables_initializer([*params, tiny, *small]))
        while len(sess.run(uninitialized)) > 0:
            time.sleep(0.1)
        sess.run(v1.local_variables_initializer())
        sess.run(ops["cycle", len(params)])
        _say({"event": "ready"})
        _serve(sess, ops)


def _serve(sess: Any, ops: dict[tuple[str, int], Any]) -> None:
    """Run the commands read from stdin, one line of JSON each, until ``exit`` or the end of the input."""
    for line in sys.stdin:
        command = json.loads(line)
        if command.get("mode") == "exit":
            return
        op, end_s = ops[command["mode"], int(command.get("tensors", 1))], float(command["end_s"])
        streams = max(1, int(command.get("streams", 1)))
        steps: list[tuple[float, float]] = []
        if streams == 1:
            _loop(sess, op, end_s, steps)
        else:  # several steps in flight at once keep the connection busy between one step and the next
            threads = [threading.Thread(target=_loop, args=(sess, op, end_s, steps)) for _ in range(streams)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        start_s = float(command["start_s"])
        _say({"event": "done", "steps": sorted([s, e] for s, e in steps if e > start_s)})


def _loop(sess: Any, op: Any, end_s: float, steps: list[tuple[float, float]]) -> None:
    """Run ``op`` back to back until a step ends at or after ``end_s``; append each step's (start, end)."""
    while True:
        t0 = time.monotonic()
        sess.run(op)
        t1 = time.monotonic()
        steps.append((t0, t1))
        if t1 >= end_s:
            return


def main(argv: list[str]) -> int:
    """Entry point of a netbench TensorFlow process."""
    job = json.loads(argv[0])
    if job["role"] == "ps":
        run_ps(job)
    else:
        run_client(job)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
