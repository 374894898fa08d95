"""Signals held back while a run removes or renames what it made (tracegen.signals.held)."""

from __future__ import annotations

import signal

import pytest

from tracegen.signals import Handler, held


class _StopError(Exception):
    pass


def _stop(_signum: int, _frame: object) -> None:
    raise _StopError


def _block(done: list[str], *signals: signal.Signals, after: dict[int, Handler] | None = None) -> None:
    with held(after=after):
        for sig in signals:
            signal.raise_signal(sig)
        done.append("the rest of the block")


def test_a_signal_within_the_block_is_raised_to_its_handler_once_the_block_ends() -> None:
    previous = signal.signal(signal.SIGTERM, _stop)
    done: list[str] = []
    try:
        with pytest.raises(_StopError):
            _block(done, signal.SIGTERM, signal.SIGTERM)  # twice: raised once
        assert done == ["the rest of the block"]
        assert signal.getsignal(signal.SIGTERM) is _stop  # the handler from before is back
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_an_ignored_signal_stays_ignored_and_after_names_the_handler_to_raise_it_to() -> None:
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGHUP, signal.SIGTERM)}
    done: list[str] = []
    try:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # nohup's
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with pytest.raises(_StopError):
            _block(done, signal.SIGHUP, signal.SIGTERM, after={signal.SIGTERM: _stop})  # SIGTERM to _stop, not SIG_DFL
        assert done == ["the rest of the block"] and signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
