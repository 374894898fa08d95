"""The testbed's settings (``validation/testbed_config.py``): every option checked before a cluster starts, named as
the option is, and the emulated cluster each run gets. Needs no root."""

from __future__ import annotations

import pathlib

import pytest

from validation.cluster_config import LinkShape
from validation.errors import ConfigError

from validation_support import TESTBED_SUBNET, make_testbed_config


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"workers": ()}, "'workers' must name at least one worker count (got none)"),
        ({"workers": (0, 1)}, "'workers' must all be >= 1 (got [0, 1])"),
        ({"workers": (1, 1)}, "'workers' must not repeat a count (got [1, 1])"),
        ({"repeats": 0}, "'repeats' must be >= 1 (got 0)"),
        ({"window_s": 0.0}, "'window_s' must be > 0 (got 0.0)"),
        # accepted, they started the cluster and TensorFlow, then waited for ever or failed in a thread's sleep
        ({"window_s": 1e300}, "'window_s' must be at most 86400 s (a day) (got 1e+300)"),
        ({"max_window_s": 1e6}, "'max_window_s' must be at most 86400 s (a day) (got 1e+06)"),
        ({"timeout_s": 1e300}, "'timeout_s' must be at most 86400 s (a day) (got 1e+300)"),
        ({"warmup_steps": 0}, "'warmup_steps' must be >= 1 (got 0)"),
        ({"traced_steps": 0}, "'traced_steps' must be >= 1 (got 0)"),
        # accepted, they started the cluster, then ran into --timeout or filled the disk; profile refused them
        ({"warmup_steps": 10**11}, "'warmup_steps' must be at most 10000 (got 100000000000)"),
        ({"traced_steps": 10**8}, "'traced_steps' must be at most 1000 (got 100000000)"),
        ({"model": "vgg"}, "unknown model 'vgg'"),
        # found by the TF process, after the link profile's minutes of measuring, until ModelSpec checked it
        ({"model": "cnn", "widths": (16, 32)}, "cnn takes 3 widths (conv1, conv2, dense) (got [16, 32])"),
        ({"model": "deep", "widths": (64, 64, 64)}, "deep takes 2 widths (width, layers) (got [64, 64, 64])"),
        ({"batch_size": 0}, "'batch_size' must be >= 1 (got 0)"),
        ({"burst_bytes": 100}, "'burst_bytes' must be >= 1514"),
        # 'rate_bits_per_s' named no option (testbed --bandwidth 1kbit/s)
        ({"bandwidth_bits_per_s": 1000}, "'bandwidth' must be at least 8 kbit/s, tc tbf's lowest rate (got 1000 "
                                         "bits/s)"),
        ({"worker_links": (0, 1000)}, "'worker_links' must be at least 8 kbit/s, tc tbf's lowest rate (got 1000 "
                                      "bits/s)"),
        ({"latency_ms": -1.0}, "'latency_ms' must be > 0 and <= 10000 (got -1.0)"),
        ({"cpu_cap_worker": 0.0}, "'cpu_cap_worker' must be > 0 cores (got 0.0)"),
        ({"subnet": "10.79.4.0/29", "workers": (1, 8)}, "'subnet' 10.79.4.0/29 is too small for 1 PS + 8 workers"),
        ({"placement": "random"}, "'placement' must be one of round-robin, greedy (got 'random')"),
        ({"ps_tasks": 0}, "'n_ps' must be from 1 to 8 (got 0)"),
        ({"api": "tf3"}, "'api' must be tf1 or tf2 (got 'tf3')"),
        # ParameterServerStrategy places the variables itself, round robin in creation order
        ({"api": "tf2", "trace_workers": False, "ps_tasks": 2, "placement": "greedy"},
         "'placement' must be round-robin with --api tf2, ParameterServerStrategy's own in creation order (got "
         "'greedy')"),
    ],
)
def test_config_refuses_bad_values(tmp_path: pathlib.Path, changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        make_testbed_config(tmp_path, **changes)
    assert str(info.value).startswith(message)


def test_each_run_gets_the_cluster_the_options_describe(tmp_path: pathlib.Path) -> None:
    config = make_testbed_config(tmp_path, workers=(1, 3), ps_tasks=2, placement="greedy", worker_caps=(0.25,),
                                 worker_links=(0, 2_000_000), burst_bytes=20_000, latency_ms=7.5)
    assert config.link() == LinkShape(rate_bits_per_s=100_000_000, burst_bytes=20_000, latency_ms=7.5)
    cluster = config.cluster_config(3)
    assert (cluster.n_workers, cluster.n_ps, cluster.coordinator, cluster.subnet) == (3, 2, False, TESTBED_SUBNET)
    assert (cluster.cpu_cap_ps, [cluster.worker_cap(i) for i in range(3)]) == (0.5, [0.25, 0.6, 0.6])
    assert cluster.worker_link(0) is None and cluster.worker_link(1) == LinkShape(
        rate_bits_per_s=2_000_000, burst_bytes=20_000, latency_ms=7.5)
    tf2 = make_testbed_config(tmp_path, api="tf2", trace_workers=False, cpu_cap_coordinator=0.4).cluster_config(1)
    assert tf2.coordinator and tf2.cpu_cap_coordinator == 0.4
    config = make_testbed_config(tmp_path, model="cnn", widths=(4, 8, 16), batch_size=7)
    assert config.model_spec().resolved_widths() == (4, 8, 16)


@pytest.mark.parametrize("changes", [{"staleness": True}, {"worker_caps": (0.3,)}, {"worker_links": (10**6,)},
                                     {"trace_workers": True}])
def test_tf2_refuses_what_only_tf1_workers_do(tmp_path: pathlib.Path, changes: dict[str, object]) -> None:
    make_testbed_config(tmp_path, api="tf2", trace_workers=False)
    with pytest.raises(ConfigError, match="--api tf2 runs workers alike, without staleness"):
        make_testbed_config(tmp_path, api="tf2", **{"trace_workers": False, **changes})


def test_tf2_runs_on_several_ps_tasks(tmp_path: pathlib.Path) -> None:
    """``--api tf2 --ps 2`` was refused ('--api tf2 runs one PS'): its cluster has both PS tasks and the coordinator,
    the variables placed round robin, as the strategy does."""
    config = make_testbed_config(tmp_path, api="tf2", trace_workers=False, ps_tasks=2)
    cluster = config.cluster_config(2)
    assert (cluster.n_ps, cluster.n_workers, cluster.coordinator, config.placement) == (2, 2, True, "round-robin")
