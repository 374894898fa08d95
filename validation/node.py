"""One node of a real async-PS TensorFlow job: ``python -m validation.node '<job JSON>'``.

The PS serves its variables until it is killed. A worker builds the zoo model with
``replica_device_setter``, trains with plain (asynchronous) gradient descent, optionally traces some steps
after warm-up, and prints one JSON line saying what it did.

With ``"control": "stdin"`` in the job (the emulated-cluster testbed), a worker's window is set by its
controller instead: after warm-up (and tracing) it prints ``{"event": "warm", ...}``, keeps training, reads one
JSON line ``{"start_s": A, "end_s": B}`` from stdin (times on ``time.monotonic()``, which is one system-wide
clock for all processes of one Linux machine), trains until a step ends at or after B, and prints
``{"event": "done", "steps": [[start, end], ...], "global_step_reads": [[t, global_step], ...]}``: the start and
end of every step that overlaps [A, B], and ``global_step`` read at the first step boundary at or after A and
again at or after B; also ``ps_bytes``, the parameter bytes on each PS task.

With several PS tasks in the cluster, ``"placement": "greedy"`` in the job places variables with
:class:`GreedyBytes`; otherwise ``replica_device_setter``'s default, round robin in creation order.
"""

from __future__ import annotations

import json
import pathlib
import sys
import threading
import time
from typing import Any

from validation.zoo import ModelSpec, build_loss


def run_node(job: dict[str, Any]) -> dict[str, Any] | None:
    """Run the node ``job`` describes; a worker returns its summary, the PS never returns."""
    import tensorflow as tf

    v1 = tf.compat.v1
    v1.disable_eager_execution()
    cluster = tf.train.ClusterSpec(job["cluster"])
    role, index = job["role"], int(job["task_index"])
    server = tf.distribute.Server(cluster, job_name=role, task_index=index)
    if role == "ps":
        server.join()
        return None
    spec = ModelSpec(name=job["model"]["name"], batch_size=job["model"]["batch_size"],
                     widths=tuple(job["model"]["widths"]))
    n_ps = len(job["cluster"]["ps"])
    strategy = GreedyBytes(n_ps) if job.get("placement", "round-robin") == "greedy" else None
    setter = v1.train.replica_device_setter(worker_device=f"/job:worker/task:{index}", cluster=cluster,
                                            ps_strategy=strategy)
    with v1.device(setter):
        global_step = v1.train.get_or_create_global_step()
        loss = build_loss(spec)
        optimizer = v1.train.GradientDescentOptimizer(job["learning_rate"])
        step_read = None
        if job.get("staleness"):  # what minimize() builds, with the increment's new value fetchable
            apply = optimizer.apply_gradients(optimizer.compute_gradients(loss))
            with v1.control_dependencies([apply]):
                train_op = global_step.assign_add(1)  # its value: the global step after this step's increment
            # the global step as the step reads it: at its start, beside the parameters
            step_read = v1.identity(global_step.read_value())
        else:
            train_op = optimizer.minimize(loss, global_step=global_step)
        init = v1.global_variables_initializer()
        uninitialized = v1.report_uninitialized_variables()
    config = v1.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"])
    with v1.Session(server.target, config=config) as sess:
        if index == 0:
            sess.run(init)
        while len(sess.run(uninitialized)) > 0:
            time.sleep(0.2)
        return _train(sess, train_op, global_step, job, step_read)


class GreedyBytes:
    """A ``ps_strategy`` for ``replica_device_setter``: each variable, in creation order, to the PS task holding
    the fewest bytes so far (the lowest task on a tie) — what ``tf.contrib``'s ``GreedyLoadBalancingStrategy``
    with ``byte_size_load_fn`` did (contrib is gone). ``tracegen.placement`` places ``greedy`` the same way."""

    def __init__(self, n_tasks: int) -> None:
        self.loads = [0] * n_tasks

    def __call__(self, op: Any) -> int:
        task = min(range(len(self.loads)), key=lambda t: (self.loads[t], t))
        self.loads[task] += _variable_bytes(op)
        return task


def _variable_bytes(op: Any) -> int:
    """Bytes of the variable ``op`` creates (its ``shape`` and ``dtype`` attributes; 0 when unknown)."""
    import tensorflow as tf

    try:
        shape = tf.TensorShape(op.get_attr("shape"))
        dtype = tf.as_dtype(op.get_attr("dtype"))
    except (ValueError, TypeError):
        return 0
    n = shape.num_elements()
    return 0 if n is None else int(n) * dtype.size


def _train(sess: Any, train_op: Any, global_step: Any, job: dict[str, Any], step_read: Any = None) -> dict[str, Any]:
    from validation.capture import trace_step

    for _ in range(int(job.get("warmup_steps", 0))):
        sess.run(train_op)
    trace_dir = job.get("trace_dir")
    if trace_dir:
        for k in range(int(job.get("traced_steps", 0))):
            trace_step(sess, train_op, pathlib.Path(trace_dir) / f"step_{k:03d}")
    if job.get("control") == "stdin":
        return _train_controlled(sess, train_op, global_step, job, step_read)
    return {"event": "done", "traced_steps": int(job.get("traced_steps", 0)) if trace_dir else 0}


def _train_controlled(sess: Any, train_op: Any, global_step: Any, job: dict[str, Any],
                      step_read: Any = None) -> dict[str, Any]:
    """Train through the window the controller sends on stdin; report every step that overlaps it.

    With ``step_read`` (the global step read at the step's start), every step also reports its staleness: the
    global step after its own increment (``train_op``'s value: the increment after the updates), less one,
    less what it read — the steps other workers applied between this step's read and its apply. Each step
    updates every parameter once, so that is the staleness of each of its gradients.

    With ``after_trace_dir`` in the job, trace ``after_traced_steps`` steps once the window is over, then
    train as many steps again, so that the other workers' traced steps also run beside this one's.
    """
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(sys.stdin.readline()), daemon=True)
    reader.start()
    print(json.dumps({"event": "warm", "at_s": time.monotonic()}))
    sys.stdout.flush()
    steps: list[tuple[float, float]] = []
    stale: list[int] = []
    reads: list[tuple[float, int]] = []
    window: tuple[float, float] | None = None
    while True:
        t0 = time.monotonic()
        if step_read is None:
            sess.run(train_op)
        else:
            after, before = sess.run([train_op, step_read])
            stale.append(int(after) - 1 - int(before))
        t1 = time.monotonic()
        steps.append((t0, t1))
        if window is None:
            if not lines:
                del steps[:-1000]  # only the steps that may overlap a window yet to come are kept
                del stale[:-1000]
                continue
            if not lines[0].strip():
                raise RuntimeError("the controller closed stdin before it sent the measurement window")
            sent = json.loads(lines[0])
            window = (float(sent["start_s"]), float(sent["end_s"]))
        if not reads and t1 >= window[0]:
            reads.append((time.monotonic(), int(sess.run(global_step))))
        if t1 >= window[1]:
            reads.append((time.monotonic(), int(sess.run(global_step))))
            break
    inside = [i for i, (s, e) in enumerate(steps) if s >= window[0] and e <= window[1]]
    staleness = [stale[i] for i in inside] if stale else []  # stale runs beside steps, trimmed with it
    kept = [[s, e] for s, e in steps if e > window[0] and s < window[1]]
    if job.get("after_trace_dir"):
        from validation.capture import trace_step

        count = int(job.get("after_traced_steps", 0))
        for k in range(count):
            trace_step(sess, train_op, pathlib.Path(job["after_trace_dir"]) / f"step_{k:03d}")
        for _ in range(count):
            sess.run(train_op)
    import tensorflow as tf

    trainable = tf.compat.v1.trainable_variables()
    step_bytes = sum(int(v.shape.num_elements()) * v.dtype.base_dtype.size for v in trainable)
    ps_bytes = [0] * len(job["cluster"]["ps"])
    for v in trainable:  # where replica_device_setter put each parameter: "/job:ps/task:J"
        task = tf.DeviceSpec.from_string(v.device).task or 0
        ps_bytes[task] += int(v.shape.num_elements()) * v.dtype.base_dtype.size
    return {"event": "done", "steps": kept, "global_step_reads": [list(r) for r in reads],
            "param_bytes": step_bytes, "ps_bytes": ps_bytes, "staleness": staleness}


def main(argv: list[str]) -> int:
    """Entry point of the node process."""
    summary = run_node(json.loads(argv[0]))
    print(json.dumps(summary))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
