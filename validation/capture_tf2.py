"""Capture a TensorFlow 2 ParameterServerStrategy job with TensorFlow's own profiler: ``xplane.pb`` files.

:func:`capture` runs a real job on 127.0.0.1 — one PS task (or ``ps_tasks`` of them, ``--ps K``) and one worker
task, each a ``tf.distribute.Server`` in a process of its own, and a coordinator process that builds a
``tf.distribute.ParameterServerStrategy`` with a ``ClusterCoordinator`` — and profiles every process with the
profiler server/client API: every process starts ``tf.profiler.experimental.server``, and the coordinator asks all
of them at once with ``tf.profiler.experimental.client.trace`` while it schedules steps. With several PS tasks the
strategy places the variables on them round-robin, in the order they are made. TensorFlow then writes one
``<host>.xplane.pb`` per process into ``<out>/plugins/profile/<run>/`` (a TensorBoard logdir).

The model is tiny, Keras-free and known (:data:`MODEL`): a two-layer perceptron whose four float32 variables
live on the PS; each step is a ``tf.function`` with ``GradientTape`` and plain SGD (``assign_sub``), so the
variables' reads travel PS → worker and the gradients worker → PS. Or a zoo model (``model=``, ``tracegen profile
--api tf2 --model NAME``): the same builders as the TF1 jobs (:func:`validation.zoo.variables_from`), the same
plain SGD (:func:`zoo_step`). :func:`profiled` is the part a user adds to their own training loop.

    python -m validation.capture_tf2 OUT_DIR [--steps N] [--warmup N] [--ps K]

What this yields (TensorFlow 2.21, ``tensorflow-cpu``, 2 cores): the worker's file holds the step's ops
(``name:Type``) and the gradient ``_Send`` events (worker → PS); the PS's file holds ``ReadVariableOp`` and the
``_Send`` of every variable read (PS → worker), the ``AssignSubVariableOp`` updates and, for the function's first
call, its registration text with every variable's dtype and shape; the coordinator's file holds one
``train_step`` event (stat ``tf_function_call``) per scheduled step on its ``python`` line. Not tried here:
``tf.profiler.experimental.start``/``stop`` in the coordinator alone, which profiles only its own process, where
no op of the step runs. Every process needs more inter-op threads than 2 cores give, or the job
deadlocks (DOMAIN.md).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import pathlib
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from parsers.errors import counted
from tracegen.outputs import OutputDir
from validation.capture import MAX_TRACED_STEPS, MAX_WARMUP_STEPS, reap, tensorflow_version
from validation.cluster_config import MAX_PS
from validation.errors import ConfigError, JobError
from validation.ports import free_ports
from validation.stderr import summarize_stderr
from validation.zoo import ModelSpec, build_loss, check_sizes, variable_specs, variables_from

JOB_TIMEOUT_S = 300.0
# Inter-op threads of every process: with the default (the core count) a 2-core machine deadlocks (DOMAIN.md).
INTER_OP_THREADS = 8
# The model: (name, shape) of each float32 variable on the PS, and the batch.
MODEL: tuple[tuple[str, tuple[int, ...]], ...] = (("w1", (256, 320)), ("b1", (320,)), ("w2", (320, 10)), ("b2", (10,)))
BATCH = 16
LEARNING_RATE = 0.01


def capture(out_dir: pathlib.Path, *, steps: int = 3, warmup: int = 0, timeout_s: float = JOB_TIMEOUT_S,
            model: ModelSpec | None = None, ps_tasks: int = 1) -> list[pathlib.Path]:
    """Run the job, profile ``steps`` scheduled steps after ``warmup`` unprofiled ones, write the TensorBoard
    logdir ``out_dir`` (which must not already hold a profile) and ``out_dir/meta.json``; return the
    ``.xplane.pb`` files written. ``model``: a zoo model (:mod:`validation.zoo`) instead of :data:`MODEL`;
    ``ps_tasks``: the PS tasks the variables are placed on (each its own process, profiled)."""
    if not 1 <= steps <= MAX_TRACED_STEPS + 1:  # the first call and --steps after it
        raise ConfigError(f"'steps' must be from 1 to {MAX_TRACED_STEPS + 1} (got {steps})")
    if not 0 <= warmup <= MAX_WARMUP_STEPS:
        raise ConfigError(f"'warmup' must be from 0 to {MAX_WARMUP_STEPS} (got {warmup})")
    if not 1 <= ps_tasks <= MAX_PS:
        raise ConfigError(f"'ps_tasks' must be from 1 to {MAX_PS} (got {ps_tasks})")
    tf_version = tensorflow_version()
    if (out_dir / "plugins").exists() or (out_dir / "meta.json").exists():
        raise ConfigError(f"{out_dir}: already holds a profile (plugins/ or meta.json); choose an empty directory")
    if model is not None:
        check_sizes(model)
    with OutputDir(out_dir, ["meta.json"], command="profile") as written:
        with written.staged_folder() as logdir:  # in place only once all of it is: a stopped run leaves nothing
            files, meta = _profile_job(logdir, steps, warmup, timeout_s, model, ps_tasks)
        written.write("meta.json", json.dumps({**meta, "hosts": [f.name for f in files], "tensorflow": tf_version,
                                               "python": sys.version.split()[0]}, indent=2) + "\n")
    return sorted(out_dir.glob("plugins/profile/*/*.xplane.pb"))


def _profile_job(logdir: pathlib.Path, steps: int, warmup: int, timeout_s: float,
                 model: ModelSpec | None, ps_tasks: int) -> tuple[list[pathlib.Path], dict[str, Any]]:
    """Run the job with its profiler writing into ``logdir``: the ``.xplane.pb`` files and meta.json's fields."""
    ports = free_ports(2 * ps_tasks + 3)
    ps_ports, ps_profilers, (worker, worker_profiler, chief_profiler) = (
        ports[:ps_tasks], ports[ps_tasks:2 * ps_tasks], ports[2 * ps_tasks:])
    job = {
        "cluster": {"ps": [f"127.0.0.1:{p}" for p in ps_ports], "worker": [f"127.0.0.1:{worker}"]},
        "profiler_ports": {"ps": ps_profilers, "worker": [worker_profiler], "chief": chief_profiler},
        "steps": steps, "warmup": warmup, "logdir": str(logdir.resolve()),
        "zoo": None if model is None else {"name": model.name, "batch_size": model.batch_size,
                                           "widths": list(model.resolved_widths())},
    }
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    procs: list[subprocess.Popen[str]] = []
    try:
        for role, index in [*(("ps", j) for j in range(ps_tasks)), ("worker", 0)]:
            procs.append(_start([role, str(index), json.dumps(job)], env, quiet=True))
        coordinator = _start(["coordinator", "0", json.dumps(job)], env, quiet=False)
        procs.append(coordinator)
        try:
            out, err = coordinator.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise JobError(f"the coordinator did not finish within {timeout_s:.0f} s") from exc
        if coordinator.returncode != 0:
            raise JobError(f"the coordinator exited with code {coordinator.returncode}: {summarize_stderr(err)}")
        report = json.loads((out.strip().splitlines() or ["{}"])[-1])
    finally:
        reap(procs)
    files = sorted(logdir.glob("plugins/profile/*/*.xplane.pb"))
    if not files:
        raise JobError(f"{logdir.parent}: the profiler wrote no .xplane.pb file")
    described = ({"model": {name: list(shape) for name, shape in MODEL}, "batch_size": BATCH} if model is None
                 else {"model": model.name, "widths": list(model.resolved_widths()), "batch_size": model.batch_size})
    meta = {
        "tool": "validation.capture_tf2", "api": "tf.distribute.ParameterServerStrategy", **described,
        "dtype": "float32",
        "learning_rate": LEARNING_RATE, "warmup_steps": warmup, "profiled_steps": steps,
        "cluster": f"coordinator, {counted(ps_tasks, 'PS task')}, 1 worker task: separate processes on 127.0.0.1",
        "ps_tasks": ps_tasks,
        "profiler": "tf.profiler.experimental.server in every process, client.trace from the coordinator",
        "inter_op_threads": INTER_OP_THREADS, **report,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    return files, meta


def _start(argv: Sequence[str], env: dict[str, str], *, quiet: bool) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "validation.capture_tf2", "--node", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL if quiet else subprocess.PIPE,
        stderr=subprocess.DEVNULL if quiet else subprocess.PIPE,
        text=True, env=env,
    )


def exit_with_parent() -> None:
    """End this process as soon as the process that started it is gone (no orphans, whatever killed it)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(3)

    threading.Thread(target=watch, daemon=True).start()


def _config(tf: Any) -> Any:
    config = tf.compat.v1.ConfigProto()
    config.inter_op_parallelism_threads = INTER_OP_THREADS
    return config


def run_server(role: str, task_index: int, job: dict[str, Any]) -> None:
    """Serve task ``task_index`` of ``role`` (``ps`` or ``worker``) with a profiler server beside it, until
    killed."""
    import tensorflow as tf

    tf.profiler.experimental.server.start(job["profiler_ports"][role][task_index])
    server = tf.distribute.Server(tf.train.ClusterSpec(job["cluster"]), job_name=role, task_index=task_index,
                                  protocol="grpc", config=_config(tf), start=True)
    server.join()


def run_coordinator(job: dict[str, Any]) -> dict[str, Any]:
    """Build the strategy and the model, run the warm-up steps, then schedule steps while every process is
    profiled; return what it did."""
    import tensorflow as tf

    tf.config.threading.set_inter_op_parallelism_threads(INTER_OP_THREADS)
    tf.profiler.experimental.server.start(job["profiler_ports"]["chief"])
    resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(job["cluster"]), rpc_layer="grpc")
    strategy = tf.distribute.ParameterServerStrategy(resolver)
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    train_step = _own_step(tf, strategy) if job.get("zoo") is None else zoo_step(tf, strategy, ModelSpec(
        name=job["zoo"]["name"], batch_size=job["zoo"]["batch_size"], widths=tuple(job["zoo"]["widths"])))

    def run_steps(n: int) -> list[float]:
        results = [coordinator.schedule(train_step) for _ in range(n)]
        coordinator.join()
        return [float(r.fetch()) for r in results]

    warm = run_steps(job["warmup"])
    ports = [job["profiler_ports"]["chief"], *job["profiler_ports"]["worker"], *job["profiler_ports"]["ps"]]
    addresses = [f"grpc://127.0.0.1:{port}" for port in ports]
    with profiled(job["logdir"], addresses):
        start = time.time()
        start_ns = time.time_ns()
        losses = run_steps(job["steps"])
        steps_s = time.time() - start
    return {"warmup_losses": warm, "losses": losses, "profiled_steps_s": round(steps_s, 3),
            "first_schedule_ns": start_ns}


@contextlib.contextmanager
def profiled(logdir: str | os.PathLike[str], addresses: Sequence[str], duration_ms: int = 4000) -> Iterator[None]:
    """Profile every process of a ParameterServerStrategy job while the body schedules steps — the few lines a
    user adds to their own training loop (module docstring of the job for what each process needs)::

        # in every PS and worker process, before serving:  tf.profiler.experimental.server.start(6009)
        # in the coordinator, also:                        tf.profiler.experimental.server.start(6009)
        with profiled("logdir", ["grpc://coordinator:6009", "grpc://ps0:6009", "grpc://worker0:6009"]):
            for _ in range(11):  # the first call (its registration) and 10 steps
                coordinator.schedule(train_step)
            coordinator.join()

    then ``tracegen predict logdir``. Start it before the step function's first call: only the profile of that
    call holds the function's graphs. ``duration_ms`` must cover the scheduled steps."""
    import tensorflow as tf

    tracing = threading.Thread(target=tf.profiler.experimental.client.trace,
                               args=(",".join(addresses), os.fspath(logdir), duration_ms), daemon=True)
    tracing.start()
    time.sleep(1.0)  # the trace starts asynchronously on each host; steps scheduled before may be missed
    yield
    tracing.join()


def zoo_variables(tf: Any, strategy: Any, spec: ModelSpec) -> dict[str, Any]:
    """A zoo model's variables, made under the strategy (on the PS tasks, round robin in this order), by name."""
    with strategy.scope():
        return {name: tf.Variable(init(shape, dtype=tf.float32), name=name.replace("/", "_"))
                for name, shape, init in variable_specs(spec)}


def zoo_step(tf: Any, strategy: Any, spec: ModelSpec, learning_rate: float = LEARNING_RATE,
             counter: Any = None, store: dict[str, Any] | None = None) -> Any:
    """The training step of a zoo model as a ``tf.function``: its variables made once under the strategy (on the
    PS; or ``store``, :func:`zoo_variables`' of ``spec``), the loss built inside :func:`validation.zoo.
    variables_from` so that every call uses them, plain SGD applied on the PS (``assign_sub``; ``scatter_sub`` of
    the rows a sparse gradient touches); with ``counter`` (a variable on the PS), also one increment of it, in the
    same function (a nested ``tf.function`` would hide the step's nodes behind a call in the registered graph)."""
    if store is None:
        store = zoo_variables(tf, strategy, spec)
    variables = list(store.values())

    @tf.function  # type: ignore[untyped-decorator]  # TensorFlow ships no type hints
    def train_step() -> Any:
        with tf.GradientTape() as tape, variables_from(lambda name, _shape, _init: store[name]):
            loss = build_loss(spec)
        grads = tape.gradient(loss, variables)
        for var, grad in zip(variables, grads, strict=True):
            if isinstance(grad, tf.IndexedSlices):
                var.scatter_sub(tf.IndexedSlices(learning_rate * grad.values, grad.indices, grad.dense_shape))
            else:
                var.assign_sub(learning_rate * grad)
        if counter is not None:
            counter.assign_add(1)
        return loss

    return train_step


def _own_step(tf: Any, strategy: Any) -> Any:
    """The step of :data:`MODEL`, written out (Keras-free, known shapes)."""
    with strategy.scope():
        variables = [tf.Variable(tf.random.normal(shape, stddev=0.1, seed=i), name=name)
                     for i, (name, shape) in enumerate(MODEL)]
    w1, b1, w2, b2 = variables
    n_in, n_out = MODEL[0][1][0], MODEL[2][1][1]

    @tf.function  # type: ignore[untyped-decorator]  # TensorFlow ships no type hints
    def train_step() -> Any:
        x = tf.random.uniform([BATCH, n_in])
        y = tf.random.uniform([BATCH, n_out])
        with tf.GradientTape() as tape:
            hidden = tf.nn.relu(tf.matmul(x, w1) + b1)
            loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w2) + b2 - y))
        grads = tape.gradient(loss, variables)
        for var, grad in zip(variables, grads, strict=True):
            var.assign_sub(LEARNING_RATE * grad)
        return loss

    return train_step


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--node"]:
        exit_with_parent()
        role, index, job = args[1], int(args[2]), json.loads(args[3])
        if role == "coordinator":
            print(json.dumps(run_coordinator(job)), flush=True)
            os._exit(0)  # the strategy's background threads keep a normal exit waiting for the stopped servers
        run_server(role, index, job)
        return 0
    parser = argparse.ArgumentParser(prog="python -m validation.capture_tf2", description=__doc__.splitlines()[0])
    parser.add_argument("out", type=pathlib.Path, help="TensorBoard logdir to write (must hold no profile yet)")
    parser.add_argument("--steps", type=int, default=3, help="steps scheduled while profiling")
    parser.add_argument("--warmup", type=int, default=0, help="steps run before profiling starts")
    parser.add_argument("--ps", type=int, default=1, metavar="K", help=f"PS tasks (default 1, at most {MAX_PS})")
    options = parser.parse_args(args)
    for path in capture(options.out, steps=options.steps, warmup=options.warmup, ps_tasks=options.ps):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
