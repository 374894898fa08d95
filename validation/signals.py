"""Signals that end a run: SIGTERM and SIGHUP become :class:`~validation.errors.TerminatedError` while a
:func:`terminating` block runs, so that its ``finally`` clauses remove what it started.

Ctrl-C already raises ``KeyboardInterrupt``. A dropped terminal sends SIGHUP, ``kill`` and service managers
SIGTERM; by default either would end the process at once and leave child processes, namespaces and cgroups
behind. Outside the main thread (where handlers cannot be installed) the block changes nothing, and a signal
the caller ignores (``nohup``'s SIGHUP) stays ignored.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from validation.errors import TerminatedError

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


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
