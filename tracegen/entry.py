"""The ``tracegen`` command's entry point: the command line's modules imported under a Ctrl-C guard.

Importing them (pandas, pyarrow, matplotlib) takes about a second; a Ctrl-C then raised KeyboardInterrupt out of
an import, with a traceback, before :func:`tracegen.cli.main` could say "interrupted" in one line, and a SIGTERM
or SIGHUP, which :func:`tracegen.cli.main` handles only once it runs, killed the command without a word. Both are
one line here too, with the exit code the shell reports (130, 143, 129).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Sequence


class _Stopped(BaseException):
    """SIGTERM or SIGHUP before :func:`tracegen.cli.main` handles them itself."""


def _stop(signum: int, _frame: object) -> None:
    raise _Stopped(signal.Signals(signum).name)


def main(argv: Sequence[str] | None = None) -> int:
    """Import :mod:`tracegen.cli` and run it; a Ctrl-C, SIGTERM or SIGHUP that lands before the command handles
    them (the import, parsing the arguments) is one line and the exit code the shell reports."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGHUP)
                    if signal.getsignal(sig) is signal.SIG_DFL}  # one the caller ignores stays ignored
    # The simulation does no linear algebra, but once pandas has called into OpenBLAS its threads spin on the
    # other cores for a while (perf, resnet at N = 8 and 16: 6.6 % of the samples), against the simulations of
    # --jobs; one thread (unless the user set it) made a 2-process deep curve 1-4 % faster (14.3-14.9 s against
    # 14.2-14.3 s in alternating runs).
    # Set before numpy is imported, here and in every process the command spawns.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        from tracegen import cli

        return cli.main(argv)
    except KeyboardInterrupt:
        print("tracegen: interrupted", file=sys.stderr)
        return 130
    except _Stopped as exc:
        print(f"tracegen: stopped by {exc}", file=sys.stderr)
        return 128 + signal.Signals[str(exc)].value
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
