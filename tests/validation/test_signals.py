"""validation.signals: SIGTERM and SIGHUP end a terminating block as TerminatedError, unless the caller ignores
them."""

from __future__ import annotations

import signal

import pytest

from validation.errors import TerminatedError
from validation.signals import terminating


def test_a_hangup_ends_the_block() -> None:
    with pytest.raises(TerminatedError, match="received SIGHUP") as info, terminating():
        signal.raise_signal(signal.SIGHUP)
    assert info.value.signum == signal.SIGHUP  # the command exits 129 by it, as a shell reports a hangup


def test_a_hangup_the_caller_ignores_stays_ignored() -> None:
    """``nohup tracegen netbench serve &``: closing the terminal stopped the server nohup was there to keep."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with terminating():
            signal.raise_signal(signal.SIGHUP)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)
