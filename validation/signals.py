"""Signals that end a run: SIGTERM and SIGHUP become :class:`~validation.errors.TerminatedError` while a
:func:`terminating` block runs, so that its ``finally`` clauses remove what it started.

Ctrl-C already raises ``KeyboardInterrupt``. A dropped terminal sends SIGHUP, ``kill`` and service managers
SIGTERM; by default either would end the process at once and leave child processes, namespaces and cgroups
behind. Outside the main thread (where handlers cannot be installed) the block changes nothing, and a signal
the caller ignores (``nohup``'s SIGHUP) stays ignored. While what was started is removed,
:func:`tracegen.signals.held` (the one the CLI's own removals use too) keeps those signals and Ctrl-C back, so that a
second one (Ctrl-C pressed twice, a terminal closed after a Ctrl-C) cannot stop the removal half-way; they are
raised again once it is done.
"""

from __future__ import annotations

import contextlib
import select
import signal
import socket
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


POLL_S = 0.5  # how late a signal's handler may run while the main thread waits on a socket


def wait_readable(sock: socket.socket) -> None:
    """Wait until ``sock`` is readable (a connection to accept, bytes to read), in slices of :data:`POLL_S`.

    A blocking ``accept()`` could miss a signal for good: Python runs a handler between bytecodes, so a SIGTERM
    that arrived after the last check and before the system call entered it (or one the kernel handed to another
    thread) left the main thread waiting for a connection that never came, with the handler's exception pending.
    ``netbench serve`` ignored a SIGTERM sent right after it said it was listening that way (seen once in CI).
    Each slice returns to Python, which runs what is pending."""
    while not select.select([sock], [], [], POLL_S)[0]:
        pass
