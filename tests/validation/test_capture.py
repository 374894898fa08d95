"""Capture with real TensorFlow: ``tracegen profile`` end to end, and the user's own loop traced with
``trace_step`` on a model this project has never seen, whose sizes ``inspect`` must report exactly."""

from __future__ import annotations

import json
import pathlib
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

import pytest

from parsers import read_trace
from tracegen.cli import main
from tracegen.model import TaskKind, build_model
from tracegen.outputs import STAGING_NAME
from tracegen.summary import gradient_tensors
from tracegen.variables import variable_map
from validation.ports import free_ports

pytestmark = pytest.mark.slow


def test_profile_then_inspect(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cnn"
    assert main(["profile", "--model", "cnn", "--batch-size", "4", "--widths", "3,5,7", "--warmup", "1",
                 "--steps", "3", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".tracegen-run.json", ".tracegen.lock",  # tracegen.outputs'
                                                     "meta.json", "step_000.json", "step_000.pb",
                                                     "step_001.json", "step_001.pb", "step_002.json", "step_002.pb"]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["model"] == "cnn" and meta["widths"] == [3, 5, 7] and meta["tensorflow"].startswith("2.")
    capsys.readouterr()
    assert main(["inspect", "--json", str(out)]) == 0
    s = json.loads(capsys.readouterr().out)
    # conv1 5x5x3x3+3, conv2 5x5x3x5+5, fc1 (8*8*5)x7+7, logits 7x10+10 float32 parameters.
    elements = (75 * 3 + 3) + (75 * 5 + 5) + (320 * 7 + 7) + (7 * 10 + 10)
    assert (s["n_variables"], s["param_elements"], s["param_bytes"]) == (8, elements, 4 * elements)
    assert (s["pull_bytes"], s["gradient_push_count"], s["n_steps"]) == (4 * elements, 8, 3)  # from the graph
    # A gradient's bytes are known from its records; TF now and then leaves a push unrecorded in a step (DOMAIN.md),
    # and one CI run saw a gradient unrecorded in both of two traced steps: then the bytes are unknown, not guessed
    trace = read_trace(out)
    pushes = trace.transfers[trace.transfers["direction"] == "push"]
    recorded = set(pushes.dropna(subset=["size_bytes"])["tensor_name"])
    assert s["gradient_push_bytes"] == (4 * elements if gradient_tensors(trace) <= recorded else None)
    # Refuses to overwrite the trace it made.
    assert main(["profile", "--model", "mlp", "--out", str(out)]) == 2
    assert "already holds a trace" in capsys.readouterr().err


def test_profile_tf2_captures_a_zoo_model_that_predict_can_use(tmp_path: pathlib.Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cnn_tf2"
    assert main(["profile", "--api", "tf2", "--model", "cnn", "--batch-size", "4", "--widths", "3,5,7",
                 "--steps", "3", "--ps", "2", "--out", str(out)]) == 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["model"] == "cnn" and meta["widths"] == [3, 5, 7] and meta["batch_size"] == 4
    assert meta["ps_tasks"] == 2 and len(meta["hosts"]) == 4  # coordinator, worker, two PS tasks
    trace = read_trace(out)
    assert len(trace.steps) == 3  # the first call left out
    # the variables placed round-robin on the two PS tasks, each read where its pulls come from
    assert set(trace.variables["device"]) == {f"/job:ps/replica:0/task:{k}/device:CPU:0" for k in range(2)}
    model = build_model(trace)
    # conv1 5x5x3x3+3, conv2 5x5x3x5+5, fc1 (8*8*5)x7+7, logits 7x10+10 float32 parameters: pulled, then updated
    sizes = [4 * n for n in (75 * 3, 3, 75 * 5, 5, 320 * 7, 7, 7 * 10, 10)]
    assert variable_map(model).n_variables == 8
    pulled = [model.size_bytes[t] for t in range(model.n_tasks) if model.kinds[t] == TaskKind.PULL
              and variable_map(model).of_task[t] >= 0]
    assert sorted(set(pulled)) == sorted(set(sizes))  # conv kernels are read twice: forward and backward
    capsys.readouterr()
    assert main(["predict", str(out), "--workers", "1,2", "--steps", "4", "--seeds", "1", "--out",
                 str(tmp_path / "p")]) == 0
    assert (tmp_path / "p" / "curve.csv").read_text().count("\n") == 3
    capsys.readouterr()
    assert main(["profile", "--api", "tf2", "--warmup", "2", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert "--warmup must be 0" in err and "\n" not in err


UNSEEN_MODEL = textwrap.dedent('''
    import json, sys
    import numpy as np
    import tensorflow as tf
    from validation.capture import trace_step
    from validation.ports import free_ports
    v1 = tf.compat.v1
    v1.disable_eager_execution()
    ps_port, worker_port = free_ports(2)
    cluster = tf.train.ClusterSpec({"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{worker_port}"]})
    ps = tf.distribute.Server(cluster, job_name="ps", task_index=0)
    worker = tf.distribute.Server(cluster, job_name="worker", task_index=0)
    with v1.device(v1.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=cluster)):
        step = v1.train.get_or_create_global_step()
        emb = v1.get_variable("embedding", [301, 17])
        ids = v1.random.uniform([9, 5], maxval=301, dtype=tf.int32)
        x = tf.reduce_sum(tf.gather(emb, ids), axis=1)
        w = v1.get_variable("proj", [17, 23], dtype=tf.float64)
        h = tf.cast(tf.tanh(tf.matmul(tf.cast(x, tf.float64), w)), tf.float32)
        scale = v1.get_variable("scale", [], initializer=v1.ones_initializer())
        loss = tf.reduce_mean(tf.square(h * scale))
        train = v1.train.MomentumOptimizer(0.01, 0.9).minimize(loss, global_step=step)
    with v1.Session(worker.target) as sess:
        sess.run(v1.global_variables_initializer())
        for _ in range(2):
            sess.run(train)
        trace_step(sess, train, sys.argv[1] + "/step_000")
        trace_step(sess, train, sys.argv[1] + "/step_001")
        params = v1.trainable_variables()
        sizes = {v.op.name: int(np.prod(v.shape)) * v.dtype.size for v in params}
        print(json.dumps({"n": len(params), "bytes": sum(sizes.values()), "sizes": sizes}))
''')


def test_a_model_never_seen_is_measured_exactly(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = subprocess.run([sys.executable, "-c", UNSEEN_MODEL, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    truth = json.loads(done.stdout.strip().splitlines()[-1])
    assert main(["inspect", "--json", str(tmp_path)]) == 0
    s = json.loads(capsys.readouterr().out)
    assert (s["n_variables"], s["param_bytes"]) == (truth["n"], truth["bytes"])
    # Momentum keeps one slot per parameter on the PS: other variables = slots + global_step.
    assert s["n_other_variables"] == truth["n"] + 1
    # Dense parameters are pulled whole, but TensorFlow runs the gather next to the embedding on the PS, so
    # only the 9 x 5 looked-up rows of 17 float32 cross the link.
    dense = truth["bytes"] - truth["sizes"]["embedding"]
    assert s["pull_bytes"] == dense + 9 * 5 * 17 * 4
    # Its gradient is sparse too (IndexedSlices: values and indices pushed separately).
    assert s["gradient_push_count"] == truth["n"] + 1


UNSEEN_TF2 = textwrap.dedent('''
    import json, os, subprocess, sys, threading, time
    import tensorflow as tf

    config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=8)  # 2 cores deadlock PSS otherwise
    if sys.argv[1] in ("ps", "worker"):
        tf.profiler.experimental.server.start(int(sys.argv[3]))
        tf.distribute.Server(tf.train.ClusterSpec(json.loads(sys.argv[2])), job_name=sys.argv[1], task_index=0,
                             protocol="grpc", config=config, start=True).join()
    logdir = sys.argv[2]
    ports = json.loads(sys.argv[3])  # free ports, chosen by the test
    cluster = {"ps": [f"127.0.0.1:{ports['ps']}"], "worker": [f"127.0.0.1:{ports['worker']}"]}
    ports = {"ps": ports["ps_prof"], "worker": ports["worker_prof"], "chief": ports["chief_prof"]}
    nodes = [subprocess.Popen([sys.executable, "-c", SCRIPT, role, json.dumps(cluster), str(ports[role])])
             for role in ("ps", "worker")]  # SCRIPT: this text, which the test defines
    try:
        tf.config.threading.set_inter_op_parallelism_threads(8)
        tf.profiler.experimental.server.start(ports["chief"])
        resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(tf.train.ClusterSpec(cluster), rpc_layer="grpc")
        strategy = tf.distribute.ParameterServerStrategy(resolver)
        coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
        with strategy.scope():
            a = tf.Variable(tf.zeros([37, 11]))
            b = tf.Variable(tf.zeros([11]))
            c = tf.Variable(tf.ones([11, 3], dtype=tf.float64))

        @tf.function
        def step():
            x = tf.random.uniform([5, 37])
            with tf.GradientTape() as tape:
                h = tf.nn.tanh(tf.matmul(x, a) + b)
                loss = tf.reduce_sum(tf.cast(tf.matmul(tf.cast(h, tf.float64), c), tf.float32) ** 2)
            for var, grad in zip((a, b, c), tape.gradient(loss, [a, b, c])):
                var.assign_sub(0.01 * grad)
            return loss

        addresses = ",".join(f"grpc://127.0.0.1:{ports[r]}" for r in ("chief", "ps", "worker"))
        tracing = threading.Thread(target=tf.profiler.experimental.client.trace, args=(addresses, logdir, 6000))
        tracing.start()
        time.sleep(1.0)
        for _ in range(5):
            coordinator.schedule(step)
        coordinator.join()
        tracing.join()
        print(json.dumps({"n": 3, "sizes": sorted([37 * 11 * 4, 11 * 4, 11 * 3 * 8])}), flush=True)
    finally:
        for node in nodes:
            node.kill()
    os._exit(0)
''')


def test_a_tf2_loop_tracegen_did_not_write_reads_with_its_variables(tmp_path: pathlib.Path) -> None:
    """A ParameterServerStrategy loop written here, profiled by TensorFlow's own profiler API (no tracegen code):
    its variables, their bytes, and the pulls and pushes of each step read right, and a step model is built."""
    script = "SCRIPT = " + repr(UNSEEN_TF2) + "\n" + UNSEEN_TF2
    ports = dict(zip(("ps", "worker", "ps_prof", "worker_prof", "chief_prof"), free_ports(5), strict=True))
    done = subprocess.run([sys.executable, "-c", script, "coordinator", str(tmp_path / "logdir"), json.dumps(ports)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    truth = json.loads(done.stdout.strip().splitlines()[-1])
    trace = read_trace(tmp_path / "logdir")
    assert sorted(trace.variables["size_bytes"]) == truth["sizes"]
    assert len(trace.steps) == 4  # five calls, the first (registration) left out
    for _, moved in trace.transfers.groupby("step"):
        pushes = moved[moved["direction"] == "push"]
        assert sorted(pushes["size_bytes"].astype(int)) == truth["sizes"]
        assert (moved["direction"] == "pull").sum() == truth["n"] + 1  # and the "updates applied" signal
    model = build_model(trace)
    assert variable_map(model).n_variables == truth["n"]


def test_a_stopped_profile_leaves_nothing(tmp_path: pathlib.Path, default_signals: Callable[[], None],
                                          process_tree: Any) -> None:
    """A profile stopped half-way (SIGTERM; '--steps 100000000' had to be) left every step it had traced in --out
    without its meta.json, which the next profile into it refused ('already holds a trace') and predict read as a
    trace. Now the steps are staged and put in place only when all of them are there."""
    out = tmp_path / "mlp"
    staged = out / STAGING_NAME
    exe = pathlib.Path(sys.executable).parent / "tracegen"
    with process_tree.started([str(exe), "profile", "--warmup", "0", "--steps", "1000", "--out", str(out)],
                              default_signals) as proc:
        deadline = time.monotonic() + 180
        while not list(staged.glob("step_*.pb")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert list(staged.glob("step_*.pb")), "no step was traced"
        nodes = process_tree.children(proc.pid)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err.strip().splitlines()[-1] == "tracegen profile: stopped by SIGTERM", err
    assert not out.exists()  # the run made it: nothing of it is left, its lock included
    assert process_tree.wait_gone(nodes) == []  # the PS and the worker too


def test_a_worker_that_fails_is_reported_by_its_reason(tmp_path: pathlib.Path) -> None:
    """A real worker whose first pull fails (one tensor over gRPC's 2 GiB, which ``check_sizes`` refuses before a
    job starts, so it is bypassed here). Its stderr ends in the node TensorFlow ran (``[[{{node ...}}]]``), which
    the error used to quote; it must quote TensorFlow's exception and its cause."""
    from validation.capture import ProfileConfig, _run_profile_job
    from validation.errors import JobError
    from validation.zoo import ModelSpec

    config = ProfileConfig(model=ModelSpec(name="mlp", batch_size=4, widths=(700_000,)), warmup_steps=1,
                           traced_steps=1, learning_rate=0.01)  # fc1's kernel: 784 x 700,000 x 4 B = 2.2 GB
    with pytest.raises(JobError) as caught:
        _run_profile_job(config, tmp_path)
    message = str(caught.value)
    assert message.startswith("worker 0 exited with code 1: InternalError: Graph execution error: "), message
    assert "2GB" in message and "[[" not in message and "\n" not in message, message
