"""Tests marked ``root`` (network namespaces, tc, cgroups) are skipped, with the reason, when not run as root."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable

import pytest


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip ``@pytest.mark.root`` tests for a user who cannot build an emulated cluster."""
    if item.get_closest_marker("root") is not None and os.geteuid() != 0:
        pytest.skip("needs root: network namespaces, tc and cgroups")


def _default_signals() -> None:
    """In a child before exec: SIGINT and SIGTERM back to their defaults. A suite started in the background
    (``bash scripts/test.sh &``) inherits SIGINT *ignored*, and Python then never turns it into
    KeyboardInterrupt; the tests that interrupt a run must not depend on how the suite was started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@pytest.fixture
def default_signals() -> Callable[[], None]:
    """A ``preexec_fn`` for child processes that will be sent SIGINT or SIGTERM."""
    return _default_signals
