"""Shared fixtures: the real traces bundled in data/ and format variants made from them by real TensorFlow."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest
from hypothesis import settings

# No Hypothesis deadline: a per-example time limit is a timed unit test, and it failed a property test whose
# example took 303 ms (200 allowed) while other jobs ran on this machine's second core, and 62 ms alone.
settings.register_profile("tracegen", deadline=None)
settings.load_profile("tracegen")

ROOT = pathlib.Path(__file__).resolve().parent.parent
TRACES = ROOT / "data" / "traces"
MODELS = sorted(p.name for p in TRACES.iterdir() if (p / "step_000.pb").is_file())  # tf2_pss/ is an xplane profile


@pytest.fixture(params=MODELS)
def model_dir(request: pytest.FixtureRequest) -> pathlib.Path:
    """One bundled trace folder (three traced steps of one zoo model)."""
    return TRACES / request.param


@pytest.fixture(params=MODELS)
def step_pb(request: pytest.FixtureRequest) -> pathlib.Path:
    """The first traced step of one bundled model, as TensorFlow wrote it (binary RunMetadata)."""
    return TRACES / request.param / "step_000.pb"


@pytest.fixture(scope="session")
def tf_protos():  # type: ignore[no-untyped-def]
    """TensorFlow's own protobuf classes (the real schema we check our subset against)."""
    from tensorflow.core.protobuf import config_pb2

    return config_pb2


def _default_signals() -> None:
    """In a child before exec: SIGINT and SIGTERM back to their defaults. A suite started in the background
    (``bash scripts/test.sh &``) inherits SIGINT *ignored*, and Python then never turns it into
    KeyboardInterrupt; the tests that interrupt a run must not depend on how the suite was started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture
def ipv6_loopback() -> None:
    """Skips the test, saying why, on a machine where nothing can listen on IPv6's loopback address, ``::1``."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError as exc:
        pytest.skip(f"needs IPv6 loopback (::1): {exc}")


@pytest.fixture
def default_signals() -> Callable[[], None]:
    """A ``preexec_fn`` for child processes that will be sent SIGINT or SIGTERM."""
    return _default_signals


class ProcessTree:
    """What the tests that stop runs with signals check: a run's child processes, and that they went."""

    @staticmethod
    def children(pid: int) -> list[int]:
        """Processes whose parent is ``pid``."""
        found = []
        for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(stat.parent.name))
        return found

    @staticmethod
    def spawned(pid: int) -> list[int]:
        """``pid``'s worker processes started by multiprocessing's ``spawn`` (not its resource tracker, which
        lives as long as its parent, by design)."""
        found = []
        for child in ProcessTree.children(pid):
            try:
                command = pathlib.Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            if b"multiprocessing.spawn" in command:
                found.append(child)
        return found

    @staticmethod
    def alive(pid: int) -> bool:
        """Whether ``pid`` runs (a zombie does not)."""
        try:
            state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        return state != "Z"

    @staticmethod
    @contextlib.contextmanager
    def started(argv: list[str], preexec: Callable[[], None] | None = None) -> Iterator[subprocess.Popen[str]]:
        """``argv`` running with its output piped (text), killed on the way out if it still runs and its pipes
        closed: a test that signals a run and waits for it never leaves it behind, whatever its assertions say.
        ``preexec``: the ``default_signals`` fixture, so that SIGINT works however the suite was started."""
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=preexec)  # noqa: PLW1509 - only resets two signal handlers
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for stream in (proc.stdout, proc.stderr):  # closed here, not by the garbage collector later, in
                if stream is not None:                 # another test that then fails on the ResourceWarning
                    stream.close()

    @classmethod
    def wait_gone(cls, pids: list[int], timeout_s: float = 30) -> list[int]:
        """Wait for ``pids`` to end; those still running after ``timeout_s`` (then killed: a test never leaves a
        process behind, whatever its assertions say)."""
        deadline = time.monotonic() + timeout_s
        while (left := [p for p in pids if cls.alive(p)]) and time.monotonic() < deadline:
            time.sleep(0.1)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        return left


@pytest.fixture
def process_tree() -> type[ProcessTree]:
    """:class:`ProcessTree`."""
    return ProcessTree


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (benchmarks is not a package); loaded once."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def benchmark_module() -> Callable[[str], ModuleType]:
    """:func:`load_benchmark`, for tests of what lives in ``benchmarks/``."""
    return load_benchmark
