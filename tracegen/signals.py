"""Signals held back while a run removes or renames what it made: :func:`held`.

A stop (Ctrl-C's SIGINT, a dropped terminal's SIGHUP, ``kill``'s SIGTERM) that lands while a run removes its
temporary files, renames its outputs into place or stops its worker processes would leave the job half done: a
second Ctrl-C, or a SIGTERM that arrives while the exception of a first stop (or of a worker that died of it) is
still unwinding. Within :func:`held` those signals are recorded and raised again, to the handlers from before,
once the block has ended.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from types import FrameType
from typing import Any

HELD_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})

Handler = Callable[[int, FrameType | None], Any] | int | None


@contextlib.contextmanager
def held(after: Mapping[int, Handler] | None = None) -> Iterator[None]:
    """Within the block, SIGINT, SIGTERM and SIGHUP are recorded, not handled, and raised again when it ends, to
    the handlers from before it, or to ``after``'s where it names one. Recorded by a handler of its own, not
    blocked: a signal mask is the calling thread's, and with other threads running (a run's pipe readers, a
    process pool's manager) the kernel hands the signal to one of them, and Python then runs its handler in the
    main thread all the same, in the middle of the block. A signal ignored stays ignored. Outside the main thread
    it changes nothing (Python runs handlers there only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    arrived: list[int] = []

    def record(signum: int, _frame: FrameType | None) -> None:
        if signum not in arrived:
            arrived.append(signum)

    previous = {sig: signal.signal(sig, record) for sig in sorted(HELD_SIGNALS)
                if signal.getsignal(sig) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            restored = (after or {}).get(sig, handler)
            signal.signal(sig, signal.SIG_DFL if restored is None else restored)  # None: not set from Python
        for signum in arrived:
            if signum in previous:
                signal.raise_signal(signum)  # its handler's exception, if any, is raised from here
