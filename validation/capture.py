"""Capture single-step traces of TensorFlow: a helper for your own loop, and ``tracegen profile``.

Your own TF1-style training loop (graph mode, ``tf.compat.v1.Session``) is traced in one call::

    from validation.capture import trace_step
    for step in range(1000):
        if step in (100, 101, 102):          # after warm-up, a few steps
            trace_step(sess, train_op, f"traces/step_{step}")
        else:
            sess.run(train_op)

Each traced step writes ``<prefix>.pb`` (the raw RunMetadata, serialised before anything touches it),
and ``<prefix>.json`` (TensorFlow's own timeline Chrome JSON). ``tracegen inspect traces/`` reads them all.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib.metadata
import json
import os
import pathlib
import subprocess
import sys
import time
from typing import Any

from parsers.atomic import write_bytes_atomic
from parsers.read import META_NAME
from tracegen.outputs import OutputDir
from validation.errors import ConfigError, JobError, MissingDependencyError
from validation.ports import free_ports
from validation.stderr import summarize_stderr
from validation.zoo import ModelSpec, check_sizes

JOB_TIMEOUT_S = 600.0
# '--steps 100000000' traced until stopped, 4.5 MB a second of mlp steps; the replay draws from every complete step
MAX_TRACED_STEPS = 1000
MAX_WARMUP_STEPS = 10_000  # the job has JOB_TIMEOUT_S in all


def trace_step(sess: Any, fetches: Any, prefix: str | os.PathLike[str], feed_dict: Any = None) -> Any:
    """Run ``fetches`` once with a full trace and write ``<prefix>.pb`` and ``<prefix>.json``.

    Returns what ``sess.run`` returned. The RunMetadata is serialised before TensorFlow's ``Timeline``
    sees it, because ``Timeline`` rewrites the ``thread_id`` of every node it draws.
    """
    import tensorflow as tf
    from tensorflow.python.client import timeline

    v1 = tf.compat.v1
    options = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE, output_partition_graphs=True)
    metadata = v1.RunMetadata()
    result = sess.run(fetches, feed_dict=feed_dict, options=options, run_metadata=metadata)
    base = pathlib.Path(prefix)
    write_bytes_atomic(base.with_name(base.name + ".pb"), metadata.SerializeToString())
    chrome = timeline.Timeline(metadata.step_stats).generate_chrome_trace_format()
    write_bytes_atomic(base.with_name(base.name + ".json"), chrome.encode())
    return result


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ProfileConfig:
    """How ``tracegen profile`` runs its one-PS, one-worker job."""

    model: ModelSpec
    warmup_steps: int = 5
    traced_steps: int = 10
    learning_rate: float = 0.01

    def __post_init__(self) -> None:
        if not 0 <= self.warmup_steps <= MAX_WARMUP_STEPS:
            raise ConfigError(f"'warmup_steps' (--warmup) must be from 0 to {MAX_WARMUP_STEPS} "
                              f"(got {self.warmup_steps})")
        if not 1 <= self.traced_steps <= MAX_TRACED_STEPS:
            raise ConfigError(f"'traced_steps' (--steps) must be from 1 to {MAX_TRACED_STEPS} (got "
                              f"{self.traced_steps}): the replay draws from the steps, and more only fill the disk")


def tensorflow_version() -> str:
    """The installed TensorFlow's version (read from package metadata: no import), or MissingDependencyError."""
    for distribution in ("tensorflow-cpu", "tensorflow"):
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
    raise MissingDependencyError("TensorFlow is not installed; install the extra: pip install 'tracegen-ps[tf]'")


def profile(config: ProfileConfig, out_dir: pathlib.Path) -> list[pathlib.Path]:
    """Run a real async-PS job (1 PS, 1 worker) on localhost and trace ``traced_steps`` steps.

    Writes ``step_NNN.pb``, ``step_NNN.json`` for each traced step and ``meta.json`` into ``out_dir``,
    which must not already hold a trace. Returns the ``.pb`` paths.
    """
    tf_version = tensorflow_version()
    held = out_dir.iterdir() if out_dir.is_dir() else ()
    clash = sorted(p.name for p in held if p.name.startswith("step_") or p.name == META_NAME)
    if clash:
        raise ConfigError(f"{out_dir}: already holds a trace ({clash[0]}, ...); choose an empty directory")
    check_sizes(config.model)
    with OutputDir(out_dir, [META_NAME], command="profile") as out:
        with out.staged_folder() as staged:  # in place only once all of it is: a stopped run leaves nothing
            _run_profile_job(config, staged)
        meta = {
            "tool": "tracegen profile",
            "model": config.model.name,
            "batch_size": config.model.batch_size,
            "widths": list(config.model.resolved_widths()),
            "learning_rate": config.learning_rate,
            "warmup_steps": config.warmup_steps,
            "traced_steps": config.traced_steps,
            "cluster": "1 PS + 1 worker, separate processes on 127.0.0.1",
            "tensorflow": tf_version,
            "python": sys.version.split()[0],
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        out.write(META_NAME, json.dumps(meta, indent=2) + "\n")
    return sorted(out_dir.glob("step_*.pb"))


def _run_profile_job(config: ProfileConfig, trace_dir: pathlib.Path) -> None:
    ps_port, worker_port = free_ports(2)
    cluster = {"ps": [f"127.0.0.1:{ps_port}"], "worker": [f"127.0.0.1:{worker_port}"]}
    job = {
        "cluster": cluster,
        "model": dataclasses.asdict(config.model),
        "learning_rate": config.learning_rate,
        "warmup_steps": config.warmup_steps,
        "traced_steps": config.traced_steps,
        "trace_dir": str(trace_dir),
    }
    run_job(job, n_workers=1, timeout_s=JOB_TIMEOUT_S)


def run_job(job: dict[str, Any], n_workers: int, timeout_s: float) -> list[str]:
    """Start one PS and ``n_workers`` worker processes, wait for the workers, stop the PS.

    Returns each worker's last stdout line. Every process started here is ended before returning.
    """
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    procs: list[subprocess.Popen[str]] = []

    def start(role: str, index: int) -> subprocess.Popen[str]:
        spec = json.dumps(dict(job, role=role, task_index=index))
        quiet = role == "ps"  # the PS only serves; nothing it prints is read
        proc = subprocess.Popen(
            [sys.executable, "-m", "validation.node", spec],
            stdout=subprocess.DEVNULL if quiet else subprocess.PIPE,
            stderr=subprocess.DEVNULL if quiet else subprocess.PIPE,
            text=True, env=env,
        )
        procs.append(proc)
        return proc

    try:
        start("ps", 0)
        workers = [start("worker", i) for i in range(n_workers)]
        deadline = time.monotonic() + timeout_s
        lines = []
        for i, proc in enumerate(workers):
            try:
                out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired as exc:
                raise JobError(f"worker {i} did not finish within {timeout_s:.0f} s") from exc
            if proc.returncode != 0:
                raise JobError(f"worker {i} exited with code {proc.returncode}: {summarize_stderr(err)}")
            lines.append((out.strip().splitlines() or [""])[-1])
        return lines
    finally:
        reap(procs)


def reap(procs: list[subprocess.Popen[str]]) -> None:
    """Kill whichever of ``procs`` still run, wait for all, close their pipes: none is left behind."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
