"""The child-process harness of ``fuzz_parsers.py`` and its verdicts.

A child (forked by a worker) makes each input, limits its own address space and core files, and runs the
stages: ``read`` (``parsers.read_trace``) and, on a Trace, ``model`` (``build_model``, a two-worker
``simulate``, ``steps_per_s``), reporting each stage's start on a pipe so that a hang is pinned on it. A worker
(``fuzz_parsers.py --serve``) forks the children, kills one past the time limit and tells the outcomes apart;
a :class:`Pool` of workers runs batches of inputs. ``SELF_CHECKS`` are readers that fail on purpose, one way
each, to show that the harness tells every way apart.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import math
import os
import pathlib
import resource
import selectors
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Any

from fuzz_corpus import ROOT, Corpus
from fuzz_mutations import make_input

READ_OUTCOMES = ("error", "read", "traceback", "hang", "memory", "crash", "bad message")
MODEL_OUTCOMES = ("ok", "error", "traceback", "hang", "memory", "crash", "odd")
PROBLEMS = frozenset({"traceback", "hang", "memory", "crash", "bad message", "odd"})
MAX_MESSAGE_CHARS = 300
ENTRY = str(pathlib.Path(__file__).resolve().with_name("fuzz_parsers.py"))  # what a worker runs (--serve)


# ------------------------------------------------------------------------------------------- the child


@dataclasses.dataclass(frozen=True)
class Job:
    """One input to make and run: input ``k`` of ``family``, or the file at ``path`` as it is."""

    k: int
    family: str
    seed: int = 0
    path: str | None = None
    stages: tuple[str, ...] = ("read", "model")


def _classify(exc: BaseException) -> str:
    return "memory" if isinstance(exc, MemoryError) else "traceback"


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    inner = [f for f in frames if "site-packages" not in f.filename] or frames
    return f"{pathlib.Path(inner[-1].filename).name}:{inner[-1].lineno}" if inner else "?"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__} at {_where(exc)}: {str(exc)[:200]}"


def _message_ok(message: str, path: str) -> bool:
    return "\n" not in message and len(message.splitlines()) <= 1 and len(message) <= MAX_MESSAGE_CHARS \
        and path in message


def _raise_bad_message(path: str) -> None:
    from parsers import TraceFormatError

    exc = TraceFormatError(path)
    exc.args = ("a message on\ntwo lines that names no file",)  # past the class's own guard, on purpose
    raise exc


# Readers that fail on purpose, one way each: the harness must tell every way apart (``--self-check``).
SELF_CHECKS: dict[str, Callable[[str], Any]] = {
    "selfcheck-traceback": lambda path: {}[path],
    "selfcheck-memory": lambda _path: bytearray(8 << 30),
    "selfcheck-hang": lambda _path: time.sleep(3600),
    "selfcheck-crash": lambda _path: os.kill(os.getpid(), signal.SIGSEGV),
    "selfcheck-bad-message": _raise_bad_message,
}


def run_read(path: str, family: str = "") -> tuple[dict[str, str], Any]:
    """The read stage: (outcome, the Trace or None)."""
    from parsers import TraceError, read_trace

    try:
        trace = SELF_CHECKS.get(family, read_trace)(path)
    except TraceError as exc:
        outcome = "error" if _message_ok(str(exc), path) else "bad message"
        return {"outcome": outcome, "detail": f"{type(exc).__name__}: {str(exc)[:400]}"}, None
    except BaseException as exc:  # noqa: BLE001 - finding these is the point
        return {"outcome": _classify(exc), "detail": _describe(exc)}, None
    return {"outcome": "read", "detail": f"{len(trace.ops)} ops, {len(trace.transfers)} transfers"}, trace


def run_model(trace: Any) -> dict[str, str]:
    """The model stage: build the step model, simulate two workers for a few steps, take the throughput."""
    from parsers import TraceError
    from tracegen.errors import TracegenError
    from tracegen.metrics import steps_per_s
    from tracegen.model import build_model
    from tracegen.simulate import SimConfig, simulate

    try:
        model = build_model(trace)
        result = simulate(model, SimConfig(n_workers=2, steps=3, warmup_steps=1))
        rate = steps_per_s(result)
    except (TracegenError, TraceError) as exc:
        return {"outcome": "error", "detail": f"{type(exc).__name__}: {str(exc)[:300]}"}
    except BaseException as exc:  # noqa: BLE001 - finding these is the point
        return {"outcome": _classify(exc), "detail": _describe(exc)}
    if not (isinstance(rate, float | int) and math.isfinite(rate) and rate > 0):
        return {"outcome": "odd", "detail": f"steps_per_s = {rate!r}"}
    return {"outcome": "ok", "detail": f"{rate:.3f} steps/s"}


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def run_input(job: Job, corpus: Corpus, work: pathlib.Path, out: IO[str]) -> None:
    """Make one input and run its stages, reporting each stage's start (so a hang is pinned on it) and the
    outcome."""
    if job.family in SELF_CHECKS:
        path, what = work / f"in_{job.k}.selfcheck", job.family
        path.write_bytes(b"")
    elif job.path is None:
        suffix, data, what = make_input(job.family, job.seed, job.k, corpus)
        path = work / f"in_{job.k}{suffix}"
        path.write_bytes(data)
        del data
    else:
        path, what = pathlib.Path(job.path), "given file"
    result: dict[str, Any] = {"k": job.k, "family": job.family, "input": str(path), "what": what,
                              "size": path.stat().st_size}
    _send(out, {"stage": "read", **result})
    t0 = time.process_time()
    read, trace = run_read(str(path), job.family)
    result["read"] = read | {"cpu_s": round(time.process_time() - t0, 4),
                             "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10}
    if trace is not None and "model" in job.stages:
        _send(out, {"stage": "model", "k": job.k, "read": result["read"]})
        t0 = time.process_time()
        result["model"] = run_model(trace) | {"cpu_s": round(time.process_time() - t0, 4)}
    del trace
    _send(out, {"done": True, **result})


def child(jobs: Sequence[Job], corpus: Corpus, work: pathlib.Path, limits: Limits, out: IO[str]) -> None:
    """Limit this process's address space (and core files), then run ``jobs`` one after another; stop early
    once the process has grown past half its limit, so that what one input left behind cannot make the next
    run out."""
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a child that crashes leaves no core file behind
    for job in jobs:
        run_input(job, corpus, work, out)
        if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10 > limits.memory_bytes // 2:
            break


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one child may use: wall time per stage of an input, and address space."""

    time_s: float = 10.0
    memory_bytes: int = 2 << 30


# ------------------------------------------------------------------------------------------- the worker


def _fork_child(jobs: Sequence[Job], corpus: Corpus, work: pathlib.Path, limits: Limits) -> tuple[int, int]:
    """Fork a child running ``jobs``: (its pid, the pipe it reports on)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_fd)
        code = 0
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            with os.fdopen(write_fd, "w") as out:
                child(jobs, corpus, work, limits, out)
        except BaseException:  # noqa: BLE001 - a child must end here, whatever happened
            code = 3
        os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def run_jobs(jobs: Sequence[Job], corpus: Corpus, work: pathlib.Path, limits: Limits) -> list[dict[str, Any]]:
    """Run ``jobs`` in children, a child for as many as it gets through: one that hangs is killed, one that dies
    is replaced, and the rest go to a new child. An input that gave a traceback or a memory blow-up in a child
    that had run others is run again in a child of its own, and that outcome counts."""
    results: dict[int, dict[str, Any]] = {}
    pending = list(jobs)
    while pending:
        results.update(_watch(pending, *_fork_child(pending, corpus, work, limits), limits))
        pending = [job for job in pending if job.k not in results]
    if len(jobs) > 1:
        for job in jobs:
            if any(results[job.k].get(s, {}).get("outcome") in ("traceback", "memory") for s in ("read", "model")):
                results.update(_watch([job], *_fork_child([job], corpus, work, limits), limits))
    return [results[job.k] for job in jobs]


def _watch(jobs: Sequence[Job], pid: int, read_fd: int, limits: Limits) -> dict[int, dict[str, Any]]:
    """Follow a child's reports; kill it when a stage runs past the time limit. Results by input, including
    the one it hung or died on (but not those it never started)."""
    results: dict[int, dict[str, Any]] = {}
    current: dict[str, Any] = {"k": jobs[0].k, "family": jobs[0].family}
    stage = "start"
    killed = False
    buf = b""
    deadline = time.monotonic() + limits.time_s + 30  # making an input comes first: a generous start
    with selectors.DefaultSelector() as sel:
        sel.register(read_fd, selectors.EVENT_READ)
        while True:
            if not sel.select(max(0.0, deadline - time.monotonic())):
                os.kill(pid, signal.SIGKILL)
                killed = True
                break
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                message = json.loads(line)
                if message.get("done"):
                    results[message["k"]] = {k: v for k, v in message.items() if k != "done"}
                    stage = "between"
                    deadline = time.monotonic() + limits.time_s + 30
                    continue
                if message["stage"] == "read":
                    current = {k: v for k, v in message.items() if k != "stage"}
                else:
                    current["read"] = message["read"]
                stage = message["stage"]
                deadline = time.monotonic() + limits.time_s
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if stage in ("read", "model"):  # it stopped inside an input
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        outcome = {"outcome": "hang", "detail": f"no answer in {limits.time_s:g} s"} if killed else {
            "outcome": "crash", "detail": f"signal {sig}" if sig else f"exit {os.WEXITSTATUS(status)}"}
        results[current["k"]] = current | {stage: outcome}
    elif not results:  # it died before starting anything: blame the first, so that the run moves on
        results[jobs[0].k] = current | {"read": {"outcome": "crash", "detail": f"child ended ({status})"}}
    return results


def serve(corpus: Corpus, work: pathlib.Path, limits: Limits) -> None:
    """Worker loop: a list of jobs per line of stdin (JSON), their results as one line of stdout."""
    for line in sys.stdin:
        jobs = [Job(k=spec["k"], family=spec["family"], seed=spec["seed"], path=spec.get("path"),
                    stages=tuple(spec["stages"])) for spec in json.loads(line)]
        sys.stdout.write(json.dumps(run_jobs(jobs, corpus, work, limits)) + "\n")
        sys.stdout.flush()


class Pool:
    """``jobs`` worker processes, each running batches of inputs in children it forks; results come back in
    any order."""

    def __init__(self, corpus: Corpus, work: pathlib.Path, limits: Limits, jobs: int, *, model: bool,
                 batch: int = 25) -> None:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        self.batch = batch
        self.workers = [
            subprocess.Popen([sys.executable, ENTRY, "--serve", "--corpus", str(corpus.root), "--work",
                              str(work), "--time-limit", str(limits.time_s), "--memory", str(limits.memory_bytes),
                              *(() if model else ("--no-model",)), *(("--quick",) if corpus.quick else ())],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
            for _ in range(jobs)
        ]

    def run(self, specs: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """Run every spec; yield each result as its batch comes back. A worker has one batch at a time, so at
        most one line waits in its pipe and a buffered ``readline`` never hides a second from the selector."""
        pending = iter(specs)
        busy: dict[int, bool] = {}
        with selectors.DefaultSelector() as sel:
            for i, worker in enumerate(self.workers):
                assert worker.stdout is not None
                sel.register(worker.stdout, selectors.EVENT_READ, i)
                busy[i] = self._feed(worker, pending)
            while any(busy.values()):
                for key, _ in sel.select():
                    i = key.data
                    line = self.workers[i].stdout.readline()  # type: ignore[union-attr]
                    if not line:
                        raise RuntimeError(f"fuzz worker {i} died")
                    yield from json.loads(line)
                    busy[i] = self._feed(self.workers[i], pending)

    def _feed(self, worker: subprocess.Popen[str], pending: Iterator[dict[str, Any]]) -> bool:
        batch = list(itertools.islice(pending, self.batch))
        if not batch:
            return False
        assert worker.stdin is not None
        worker.stdin.write(json.dumps(batch) + "\n")
        worker.stdin.flush()
        return True

    def close(self) -> None:
        """End the workers (their input ends) and close the pipes."""
        for worker in self.workers:
            if worker.stdin is not None:
                worker.stdin.close()
        for worker in self.workers:
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
            if worker.stdout is not None:
                worker.stdout.close()


@contextlib.contextmanager
def pool(corpus: Corpus, work: pathlib.Path, limits: Limits, jobs: int, *, model: bool = True) -> Iterator[Pool]:
    """A :class:`Pool`, closed (workers ended) when the block ends."""
    p = Pool(corpus, work, limits, jobs, model=model)
    try:
        yield p
    finally:
        p.close()


# ------------------------------------------------------------------------- the self-check, and warm workers


def self_check(pool: Pool) -> dict[str, str]:
    """Run each failing-on-purpose reader through ``pool``: the outcome the harness saw, by way of failing
    (``selfcheck-hang`` -> ``hang`` and so on when the harness works)."""
    specs = [{"k": k, "family": family, "seed": 0, "stages": ["read"]} for k, family in enumerate(SELF_CHECKS)]
    return {r["family"]: r["read"]["outcome"] for r in pool.run(specs)}


def expected_outcome(family: str) -> str:
    """The outcome self-check reader ``family`` must get: ``selfcheck-bad-message`` -> ``bad message``."""
    return family.removeprefix("selfcheck-").replace("-", " ")


def preload(corpus: Corpus, *, model: bool) -> None:
    """Import and run once what the children run, so that they start warm (imports done, caches filled), and
    freeze what exists so that the children's garbage collector leaves those pages shared; quiet the warning
    Python 3.12+ gives on forking a process with threads (the children only run single-threaded Python)."""
    import gc
    import warnings

    warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
    for name in (*corpus.names("pb_"), *corpus.names("ownjson_"), *corpus.names("tfjson_"), *corpus.names("text_")):
        _, trace = run_read(str(corpus.root / name))
        if model and trace is not None and name.startswith("pb_mlp"):
            run_model(trace)
    gc.collect()
    gc.freeze()
