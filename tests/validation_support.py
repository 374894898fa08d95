"""Helpers shared by the validation tests (``pythonpath`` in pyproject.toml puts ``tests/`` on the path): the
configurations the emulated-cluster and testbed tests start from. Each of those two gets a subnet of its own, which
only its tests use, so that the node processes a test run leaves can be told apart."""

from __future__ import annotations

import pathlib

from validation.cluster_config import ClusterConfig, LinkShape
from validation.testbed_config import TestbedConfig

CLUSTER_SUBNET = "10.79.3.0/24"
TESTBED_SUBNET = "10.79.4.0/24"
LINK = LinkShape(rate_bits_per_s=100_000_000, burst_bytes=16_384, latency_ms=20.0)


def make_cluster_config(**changes: object) -> ClusterConfig:
    """Two workers behind a 100 Mbit/s link, every node capped at 0.2 cores, in the cluster tests' subnet."""
    base: dict[str, object] = {"n_workers": 2, "link": LINK, "cpu_cap_ps": 0.2, "cpu_cap_worker": 0.2,
                               "subnet": CLUSTER_SUBNET}
    base.update(changes)
    return ClusterConfig(**base)  # type: ignore[arg-type]


def make_testbed_config(out_dir: pathlib.Path, **changes: object) -> TestbedConfig:
    """A short mlp testbed run at N = 1 and 2 behind a 100 Mbit/s link, in the testbed tests' subnet."""
    base: dict[str, object] = {
        "out_dir": out_dir, "model": "mlp", "widths": (32,), "batch_size": 16, "workers": (1, 2),
        "bandwidth_bits_per_s": 100_000_000, "repeats": 1, "window_s": 2.5, "warmup_steps": 3,
        "cpu_cap_ps": 0.5, "cpu_cap_worker": 0.6, "subnet": TESTBED_SUBNET, "link_profile": False, "traced_steps": 3,
    }
    base.update(changes)
    return TestbedConfig(**base)  # type: ignore[arg-type]
