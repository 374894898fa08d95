"""The emulated cluster's configuration (``validation/cluster_config.py``): link shapes and CPU caps checked, in
the units tc and the CFS read; needs no root (the cluster itself is tested in test_cluster.py)."""

from __future__ import annotations

import pytest

from validation.cluster_config import LinkShape, parse_subnet
from validation.errors import ConfigError

from validation_support import make_cluster_config


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rate_bits_per_s": 0}, "'rate_bits_per_s' must be >= 8000 (got 0)"),
        ({"burst_bytes": 1000}, "'burst_bytes' must be >= 1514 (one full Ethernet frame) (got 1000)"),
        ({"latency_ms": 0.0}, "'latency_ms' must be > 0 and <= 10000 (got 0.0)"),
        # tc wraps a queue past 32 bits: 10 Gbit/s at 4 s would have queued 564 ms, and said nothing
        ({"rate_bits_per_s": 10**10, "latency_ms": 4000.0},
         "a queue latency of 4000 ms at 10000000000 bit/s with a burst of 16384 bytes makes a queue of 5000016384 "
         "bytes, more than tc tbf holds (4294967295); ask for a shorter latency or a smaller burst"),
        ({"burst_bytes": 2**32}, "a queue latency of 5 ms at 100000000 bit/s with a burst of 4294967296 bytes makes a "
         "queue of 4295029796 bytes, more than tc tbf holds (4294967295); ask for a shorter latency or a smaller "
         "burst"),
    ],
)
def test_link_shape_refuses_bad_values(changes: dict[str, object], message: str) -> None:
    fields: dict[str, object] = {"rate_bits_per_s": 10**8, "burst_bytes": 16_384, "latency_ms": 5.0}
    fields.update(changes)
    with pytest.raises(ConfigError) as info:
        LinkShape(**fields)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_link_shape_speaks_tc_units_exactly() -> None:
    link = LinkShape(rate_bits_per_s=200_000_000, burst_bytes=16_384, latency_ms=2.5)
    assert link.tbf_args() == ["rate", "200000000bit", "burst", "16384", "latency", "2500us"]
    assert link.queue_limit_bytes() == 25_000_000 * 25 // 10_000 + 16_384


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"n_workers": 0}, "'n_workers' must be >= 1 (got 0)"),
        ({"cpu_cap_ps": 0.0}, "'cpu_cap_ps' must be > 0 cores (got 0.0)"),
        ({"cpu_cap_worker": -1.0}, "'cpu_cap_worker' must be > 0 cores (got -1.0)"),
        ({"cfs_period_us": 10}, "'cfs_period_us' must be between 1000 and 1000000 (got 10)"),
        ({"cpu_cap_ps": 0.0005}, "a CPU cap of 0.0005 cores is below what a CFS quota can enforce (0.001 cores"),
        ({"subnet": "10.77.0.1/24"}, "'subnet' must be an IPv4 network like 10.77.0.0/24 (got '10.77.0.1/24')"),
        ({"subnet": "8.8.8.0/24"}, "'subnet' must be a private IPv4 network like 10.77.0.0/24 (got '8.8.8.0/24')"),
        ({"subnet": "10.77.0.0/29"}, "'subnet' 10.77.0.0/29 is too small for 1 PS + 2 workers"),
    ],
)
def test_cluster_config_refuses_bad_values(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        make_cluster_config(**changes)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(("cap", "period_us"), [(0.3, 10_000), (0.1, 10_000), (0.05, 20_000), (0.03, 33_334),
                                               (0.001, 1_000_000)])
def test_a_cap_under_a_1_ms_quota_gets_a_longer_period(cap: float, period_us: int) -> None:
    # The kernel refuses a quota under 1 ms: at 10 ms periods 0.05 cores was silently enforced as 0.1.
    config = make_cluster_config()
    assert config.period_us_for(cap) == period_us
    assert round(cap * period_us) >= 1_000


def test_each_worker_has_its_own_cap_and_link_or_the_default() -> None:
    config = make_cluster_config(n_workers=3, worker_caps=(0.5,), worker_links=(0, 50_000_000), n_ps=2,
                                 coordinator=True, cpu_cap_coordinator=0.25)
    assert [config.worker_cap(i) for i in range(3)] == [0.5, 0.2, 0.2]
    assert config.total_cpu_cores() == pytest.approx(2 * 0.2 + 0.5 + 0.2 + 0.2 + 0.25)
    assert config.worker_link(0) is None and config.worker_link(2) is None
    assert config.worker_link(1) == LinkShape(rate_bits_per_s=50_000_000, burst_bytes=16_384, latency_ms=20.0)
    with pytest.raises(ConfigError, match="'rate_bits_per_s' must be >= 8000"):
        make_cluster_config(worker_links=(1000,))


@pytest.mark.parametrize(("changes", "message"), [
    ({"n_ps": 0}, "'n_ps' must be from 1 to 8 (got 0)"),
    ({"n_ps": 9}, "'n_ps' must be from 1 to 8 (got 9)"),
    ({"port": 0}, "'port' must be between 1 and 65535 (got 0)"),
    ({"port": 65_536}, "'port' must be between 1 and 65535 (got 65536)"),
    ({"cpu_cap_coordinator": 0.0}, "'cpu_cap_coordinator' must be > 0 cores (got 0.0)"),
])
def test_cluster_config_refuses_bad_counts_and_ports(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        make_cluster_config(**changes)
    assert str(info.value) == message
    make_cluster_config(**{k: {"n_ps": 8, "port": 65_535, "cpu_cap_coordinator": 0.001}[k] for k in changes})


def test_parse_subnet_takes_private_ipv4_networks_only() -> None:
    assert parse_subnet("192.168.4.0/22").num_addresses == 1024
    # the option, the rule and the value given (the rule's words alone passed a message without the value)
    with pytest.raises(ConfigError, match=r"^'subnet' must be a private IPv4 network like .* \(got 'fd00::/64'\)$"):
        parse_subnet("fd00::/64")
    with pytest.raises(ConfigError, match=r"^'subnet' must be an IPv4 network like .* \(got '10\.0\.0\.0/33'\)"):
        parse_subnet("10.0.0.0/33")
