"""Signals that end a run: SIGTERM and SIGHUP become :class:`~validation.errors.TerminatedError` while a
:func:`terminating` block runs, so that its ``finally`` clauses remove what it started.

Ctrl-C already raises ``KeyboardInterrupt``. A dropped terminal sends SIGHUP, ``kill`` and service managers
SIGTERM; by default either would end the process at once and leave child processes, namespaces and cgroups
behind. Outside the main thread (where handlers cannot be installed) the block changes nothing, and a signal
the caller ignores (``nohup``'s SIGHUP) stays ignored. While what was started is removed, :func:`held` keeps
those signals and Ctrl-C back, so that a second one (Ctrl-C pressed twice, a terminal closed after a Ctrl-C)
cannot stop the removal half-way; they are delivered once it is done.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from validation.errors import TerminatedError

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
HELD_SIGNALS = frozenset({signal.SIGINT, *ENDING_SIGNALS})


def _raise(signum: int, _frame: FrameType | None) -> None:
    name = signal.Signals(signum).name
    raise TerminatedError(f"received {name}; stopping and removing what this run started", signum)


@contextlib.contextmanager
def terminating() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise TerminatedError; the previous handlers return afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _raise) for sig in ENDING_SIGNALS
                if signal.getsignal(sig) is not signal.SIG_IGN}  # nohup's ignored SIGHUP stays ignored
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP wait (blocked, not lost) and arrive when it ends: for removing
    what a run started. Outside the main thread it changes nothing (Python runs handlers there only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD_SIGNALS)  # a held signal is delivered now
