"""Where a sweep's chunks of points run: local worker processes, or tasks on a Ray cluster.

Both runners keep a bounded number of chunks in flight (:data:`IN_FLIGHT_PER_JOB` per slot), hand each chunk's
rows to the caller as soon as it finishes, and stop their workers on the way out, whatever the way out is (the
last chunk, an error, Ctrl-C, SIGTERM):

- :class:`LocalRunner`: ``jobs`` local processes (:mod:`tracegen.processes`: started fresh, SIGINT left to the
  driver, terminated when it stops early, gone when it is killed outright), each holding the sweep's inputs once;
  for one job, this process (starting one costs about a second, and gains nothing; the CLI asks for one where the
  points left are too short to gain from more, :func:`tracegen.processes.processes_for`).
- :class:`RayRunner`: ``ray.init(address=...)`` (``local``: start a Ray instance of ``jobs`` CPUs in this
  process, gone at ``ray.shutdown()``), the inputs put into the object store once, one Ray task per chunk; on
  the way out, unfinished tasks are cancelled and the driver disconnects. The cluster's nodes need this package
  installed (``pip install 'tracegen-ps[sweep]'``), as the driver has it.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import signal
import socket
from collections.abc import Callable, Sequence
from typing import Any

from tracegen.address import split_address
from tracegen.errors import ConfigError, TracegenError
from tracegen.processes import IN_FLIGHT_PER_JOB, WAIT_S, Processes
from tracegen.sweep import Row, run_chunk
from tracegen.sweepgrid import SweepInputs, SweepPoint

CONNECT_TIMEOUT_S = 10

_INPUTS: SweepInputs | None = None  # a local worker process's copy of the sweep's inputs


def _set_inputs(inputs: SweepInputs) -> None:
    global _INPUTS  # noqa: PLW0603 - one copy per worker process, set once when it starts
    _INPUTS = inputs


def _run_local_chunk(points: tuple[SweepPoint, ...]) -> list[Row]:
    if _INPUTS is None:  # pragma: no cover - the initializer always runs first
        raise ConfigError("sweep worker process started without its inputs")
    return run_chunk(_INPUTS, points)


class LocalRunner:
    """``jobs`` local worker processes (module docstring; :class:`tracegen.processes.Processes`); for one job, this
    process."""

    def __init__(self, jobs: int) -> None:
        if not 1 <= jobs <= 4096:
            raise ConfigError(f"'jobs' must be from 1 to 4096 (got {jobs})")
        self.slots = jobs

    def run(self, inputs: SweepInputs, chunks: Sequence[tuple[SweepPoint, ...]],
            on_rows: Callable[[list[Row]], None]) -> None:
        """Run every chunk; ``on_rows`` gets each chunk's rows in the order chunks finish."""
        if self.slots == 1:  # a stop raises here as in the driver's wait for processes: the sweep keeps its rows
            for chunk in chunks:
                on_rows(run_chunk(inputs, chunk))
            return
        with Processes(_run_local_chunk, self.slots, initializer=_set_inputs, initargs=(inputs,)) as pool:
            pool.stream(enumerate(chunks), lambda _index, rows: on_rows(rows))


class RayRunner:
    """Ray tasks on the cluster at ``address`` (``local``: a Ray instance of ``jobs`` CPUs started here). Made
    without touching the network (the address's form is checked); :meth:`check_head` asks whether a head
    answers, which :meth:`run` does first: a resumed sweep with no point left never needs the cluster."""

    def __init__(self, address: str, jobs: int) -> None:
        if not address.strip():
            raise ConfigError("'ray' must be a cluster address such as HOST:6379, auto or local (got '')")
        if not 1 <= jobs <= 4096:
            raise ConfigError(f"'jobs' must be from 1 to 4096 (got {jobs})")
        _check_form(address)
        self.address = address
        self.slots = jobs
        self._head_answered = False

    def check_head(self) -> None:
        """ConfigError at once when nothing listens at a HOST:PORT address (Ray itself retries for minutes)."""
        if not self._head_answered:
            _check_reachable(self.address)
            self._head_answered = True

    def _connect(self) -> Any:
        try:
            ray: Any = importlib.import_module("ray")
        except ImportError:
            raise ConfigError("--ray needs Ray: pip install 'tracegen-ps[sweep]'") from None
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
        try:
            if self.address == "local":
                ray.init(num_cpus=self.slots, include_dashboard=False, **options)
            else:
                ray.init(address=self.address, **options)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ConfigError(f"--ray {self.address!r}: cannot connect to a Ray cluster: {exc}") from exc
        finally:  # ray.init installs its own handlers in the driver; the CLI's stop the sweep cleanly
            for sig, handler in handlers.items():
                if handler is not None:
                    signal.signal(sig, handler)
        if self.address != "local":
            self.slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        return ray

    def run(self, inputs: SweepInputs, chunks: Sequence[tuple[SweepPoint, ...]],
            on_rows: Callable[[list[Row]], None]) -> None:
        """Run every chunk as a Ray task; ``on_rows`` gets each chunk's rows in the order tasks finish."""
        self.check_head()
        ray = self._connect()
        pending: list[Any] = []
        try:
            task = ray.remote(num_cpus=1)(run_chunk)
            shared = ray.put(inputs)
            queue = iter(chunks)
            while True:
                while len(pending) < IN_FLIGHT_PER_JOB * self.slots and (chunk := next(queue, None)) is not None:
                    pending.append(task.remote(shared, chunk))
                if not pending:
                    break
                done, pending = ray.wait(pending, num_returns=1, timeout=WAIT_S)
                for ref in done:
                    on_rows(_get(ray, ref))
        except SystemError as exc:  # a signal's exception raised inside Ray's Cython wait comes out wrapped
            stop = exc.__context__ or exc.__cause__
            if isinstance(stop, BaseException) and not isinstance(stop, Exception):  # KeyboardInterrupt, Terminated
                raise stop from None
            raise
        finally:
            for ref in pending:
                with contextlib.suppress(Exception):  # a task that finished meanwhile cannot be cancelled
                    ray.cancel(ref, force=True)
            ray.shutdown()


def _check_form(address: str) -> None:
    """ConfigError for a HOST:PORT address Ray would not read: an IPv6 address in brackets, as Ray reads it too
    (the host was looked up as the name '[::1]'), a port from 1 to 65535."""
    if ":" in address and "/" not in address:  # else local, auto, or a ray:// client address: Ray's own checks
        split_address(address, "--ray")


def _check_reachable(address: str) -> None:
    """ConfigError at once when nothing listens at a HOST:PORT address (:func:`_check_form`)."""
    if ":" not in address or "/" in address:
        return  # local, auto, or a ray:// client address: Ray's own checks
    host, port = split_address(address, "--ray")
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise ConfigError(f"--ray {address!r}: no Ray head answers there ({exc.strerror or exc})") from None


def _get(ray: Any, ref: Any) -> list[Row]:
    """A task's rows; a library error inside the task is raised here as itself (one line, not Ray's)."""
    try:
        rows: list[Row] = ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, TracegenError):
            raise cause from None
        raise
    return rows
