"""Tests marked ``root`` (network namespaces, tc, cgroups) are skipped, with the reason, when not run as root."""

from __future__ import annotations

import os

import pytest


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip ``@pytest.mark.root`` tests for a user who cannot build an emulated cluster."""
    if item.get_closest_marker("root") is not None and os.geteuid() != 0:
        pytest.skip("needs root: network namespaces, tc and cgroups")


