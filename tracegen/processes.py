"""Work spread over local worker processes, stopped cleanly whatever way the caller leaves.

:class:`Processes` runs ``fn(item)`` for many items in ``jobs`` processes started fresh (``spawn``: nothing of the
caller's state but what is sent), keeps a bounded number in flight (:data:`IN_FLIGHT_PER_JOB` per process), and
hands each result to ``on_done`` as it arrives; :meth:`Processes.map` returns the results in the items' order, so
what the caller builds from them does not depend on which process was quicker. An optional ``initializer`` with
its ``initargs`` runs once in each process (a sweep ships its inputs that way, once per process, not per item).

Workers ignore SIGINT (a Ctrl-C in the terminal reaches the whole process group: the caller alone decides) and
SIGHUP, from their start: both are blocked while the caller starts them, and a process inherits the mask, so one that
lands while a worker is still importing what it runs waits until the worker ignores it (it killed the worker, with a
KeyboardInterrupt traceback over the caller's one line). Workers are
terminated when the caller leaves early (an error, Ctrl-C, SIGTERM turned into an exception by the CLI; a stop that
lands while they are being stopped is held until they are gone, :func:`tracegen.signals.held`), and die
with it when it is killed outright (Linux: ``PR_SET_PDEATHSIG``; a worker still starting when the caller died
exits as soon as it can tell). An exception raised by ``fn`` is raised again in the caller, as itself; a worker
that dies (a signal, the out-of-memory killer) is a :class:`~tracegen.errors.ProcessDiedError`, the others
stopped, even when it died while sending a result (the pool's own thread then waits for the rest of it forever,
so the pool is watched here too, and a stop closes the pipe under that thread once the workers are gone).

How many processes a run of simulations gets is :func:`processes_for`'s rule, the one predict, validate, plan and
sweep share: all those asked for once the simulations would take :data:`PARALLEL_S` on one core, else one.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from multiprocessing import resource_tracker
from typing import Any, Generic, TypeVar

from tracegen.errors import ConfigError, ProcessDiedError
from tracegen.signals import held

IN_FLIGHT_PER_JOB = 2
WAIT_S = 0.5  # how long a wait for results may hold off a signal handler in the caller
STOP_S = 5.0  # how long a terminated worker may take to exit before it is killed
PR_SET_PDEATHSIG = 1
MAX_JOBS = 4096
WORKER_IGNORES = (signal.SIGINT, signal.SIGHUP)  # a stop of the process group is the caller's to act on

In = TypeVar("In")
Out = TypeVar("Out")


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the platform has one), at least 1."""
    with contextlib.suppress(AttributeError, OSError):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _start_resource_tracker() -> None:
    """multiprocessing's resource tracker, started with SIGHUP ignored: it ignores SIGINT and SIGTERM itself, but
    a closed terminal's SIGHUP to the process group killed it, and the caller's stop then printed its
    tracebacks (``KeyError: '/mp-...'``) over the one line that says what happened."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        resource_tracker.ensure_running()
    finally:
        signal.signal(signal.SIGHUP, previous)


@contextlib.contextmanager
def _blocked_for_workers() -> Iterator[None]:
    """SIGINT and SIGHUP blocked in this thread for the block, in which it may start workers: they are born with
    them blocked, until :func:`_start_worker` ignores them. This process still gets its own: the kernel hands a
    signal to a thread that does not block it, or holds it until the block ends."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, WORKER_IGNORES)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _start_worker(caller: int, initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    for sig in WORKER_IGNORES:  # the caller stops its workers itself, whatever stopped it
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, WORKER_IGNORES)  # one that came while it started is dropped
    if sys.platform == "linux":  # die with the caller, even when it is killed outright
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != caller:
        # the caller died while this process was starting, before the death signal was asked for: nothing will
        # send it now, and the pool's queues, whose ends its siblings hold, would keep it waiting forever
        os._exit(1)
    if initializer is not None:
        initializer(*initargs)


def _workers(pool: concurrent.futures.ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    """The pool's worker processes (a private attribute: Python 3.11 has no public way to them)."""
    return list((getattr(pool, "_processes", None) or {}).values())


class Processes(Generic[In, Out]):
    """``jobs`` local worker processes running ``fn`` (module docstring). A context manager: the processes
    start at the first :meth:`map` and are gone when the ``with`` block is left."""

    def __init__(self, fn: Callable[[In], Out], jobs: int, *, initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = ()) -> None:
        if not 1 <= jobs <= MAX_JOBS:
            raise ConfigError(f"'jobs' must be from 1 to {MAX_JOBS} (got {jobs})")
        self.fn, self.jobs = fn, jobs
        self._initializer, self._initargs = initializer, initargs
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    def __enter__(self) -> Processes[In, Out]:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        self.close(finished=exc_type is None)

    def close(self, *, finished: bool = True) -> None:
        """Stop the processes; unless ``finished``, at once (running work is not wanted any more)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if finished:
            pool.shutdown(wait=True, cancel_futures=True)
            return
        with held():  # a stop that lands now (its workers died of the same SIGTERM) is raised once they are gone
            processes = _workers(pool)
            for process in processes:
                process.terminate()  # Python 3.14 has pool.terminate_workers(); 3.11 only this
            for process in processes:
                process.join(STOP_S)
                if process.exitcode is None:
                    process.kill()
                    process.join()
            # A worker killed while it sent a result left part of it in the pipe, and the pool's thread waits for
            # the rest: it would wait forever, as this process holds the pipe's other end. With every worker gone,
            # closing that end makes the wait end (the pool is then broken, which is what it is).
            writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
            if writer is not None:
                writer.close()
            pool.shutdown(wait=True, cancel_futures=True)

    def _died(self) -> ProcessDiedError:
        return ProcessDiedError(f"a worker process of {self.jobs} ended abruptly (killed by a signal or out of "
                                "memory?); run again, with fewer --jobs if memory is short")

    def _started(self, n_items: int) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None:
            _start_resource_tracker()
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=max(1, min(self.jobs, n_items)), mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker, initargs=(os.getpid(), self._initializer, self._initargs))
        return self._pool

    def map(self, items: Sequence[In], on_done: Callable[[int, Out], None] | None = None) -> list[Out]:
        """``fn`` of every item, in the items' order; ``on_done(index, result)`` as each one finishes."""
        results: dict[int, Out] = {}

        def done(index: int, result: Out) -> None:
            results[index] = result
            if on_done is not None:
                on_done(index, result)

        self.stream(list(enumerate(items)), done)
        return [results[i] for i in range(len(items))]

    def stream(self, items: Iterable[tuple[int, In]], on_done: Callable[[int, Out], None]) -> None:
        """``fn`` of every ``(key, item)``; ``on_done(key, result)`` in the order they finish."""
        queue = list(items)
        if not queue:
            return
        pool = self._started(len(queue))
        left = iter(queue)
        pending: dict[concurrent.futures.Future[Out], int] = {}
        ok = False
        try:
            while True:
                while len(pending) < IN_FLIGHT_PER_JOB * self.jobs and (nxt := next(left, None)) is not None:
                    with _blocked_for_workers():  # a submit may start a worker
                        pending[pool.submit(self.fn, nxt[1])] = nxt[0]
                if not pending:
                    break
                finished, _ = concurrent.futures.wait(pending, timeout=WAIT_S,
                                                      return_when=concurrent.futures.FIRST_COMPLETED)
                if not finished and any(w.exitcode is not None for w in _workers(pool)):
                    # the pool's thread notices a dead worker itself, unless it is stuck on a result the worker
                    # was sending when it died (close): then nothing would finish, ever
                    raise self._died()
                for future in finished:
                    try:
                        result = future.result()
                    except concurrent.futures.BrokenExecutor:  # BrokenProcessPool: a worker died
                        raise self._died() from None
                    on_done(pending.pop(future), result)
            ok = True
        finally:
            if not ok:  # an error or a signal: nothing still running is wanted
                self.close(finished=False)


# seconds on one core (tracegen.cost): below it, starting processes costs about what they save (about a second to
# start each, and each batch of N waits for its slowest; with 2 CPUs and the compiled engine, predict on the dev
# resnet_100 trace, about 2.3e7 events: 6.3 s in one process, 6.5-8.3 s in two). In seconds, not events: the C
# core runs the same events several times as fast, and the processes still take a second to start
PARALLEL_S = 7.5


def processes_for(one_core_s: float, jobs: int) -> int:
    """How many of ``jobs`` local processes to run simulations estimated at ``one_core_s`` seconds on one core in
    (predict's and validate's curves, plan's pairs, a sweep's grid): all of them from :data:`PARALLEL_S` on, else
    one, where starting them costs about what they save."""
    return jobs if one_core_s >= PARALLEL_S else 1

