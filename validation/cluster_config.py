"""What an emulated cluster (:mod:`validation.cluster`) is made of: the PS link's shape and the nodes' CPU caps.

Both are checked when made, against what ``tc tbf`` and a CFS quota can enforce; nothing here touches the machine.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math

from validation.errors import ConfigError

MIN_BURST_BYTES = 1514  # one full Ethernet frame: tbf drops every packet larger than its bucket
MIN_RATE_BITS_PER_S = 8_000  # tc tbf's lowest rate: 1000 bytes/s
# tbf keeps its burst and its queue limit in 32 bits, and tc wraps a larger queue without a word (10 Gbit/s with a
# queue latency of 4 s showed "lat 564ms"; measured 2026-12-06, iproute2 6.1)
MAX_TBF_BYTES = 2**32 - 1
PS_HOST_INDEX = 10  # the PS gets the subnet's 10th address, PS task J the (10 - J)th, worker I the (11 + I)th
COORDINATOR_INDEX = 2  # a TF2 job's coordinator, below every PS task (MAX_PS of them)
MAX_PS = 8
MIN_QUOTA_US = 1_000  # the least cpu.cfs_quota_us the kernel accepts
MAX_PERIOD_US = 1_000_000  # the longest cpu.cfs_period_us it accepts


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LinkShape:
    """How the PS's link is shaped, the same in both directions (``tc tbf``).

    ``latency_ms`` is tbf's queue latency: the longest a packet may wait in the token bucket's queue, which
    sets the queue limit to ``rate * latency + burst`` bytes (the buffer of a switch port).
    """

    rate_bits_per_s: int
    burst_bytes: int
    latency_ms: float

    def __post_init__(self) -> None:
        if self.rate_bits_per_s < MIN_RATE_BITS_PER_S:
            raise ConfigError(f"'rate_bits_per_s' must be >= {MIN_RATE_BITS_PER_S} (got {self.rate_bits_per_s})")
        if self.burst_bytes < MIN_BURST_BYTES:
            raise ConfigError(
                f"'burst_bytes' must be >= {MIN_BURST_BYTES} (one full Ethernet frame) (got {self.burst_bytes})"
            )
        if not 0.0 < self.latency_ms <= 10_000.0:
            raise ConfigError(f"'latency_ms' must be > 0 and <= 10000 (got {self.latency_ms})")
        if self.queue_limit_bytes() > MAX_TBF_BYTES:
            raise ConfigError(f"a queue latency of {self.latency_ms:g} ms at {self.rate_bits_per_s} bit/s with a burst "
                              f"of {self.burst_bytes} bytes makes a queue of {self.queue_limit_bytes()} bytes, more "
                              f"than tc tbf holds ({MAX_TBF_BYTES}); ask for a shorter latency or a smaller burst")

    def queue_limit_bytes(self) -> int:
        """The queue limit tbf derives from the latency: ``rate * latency + burst``."""
        return int(self.rate_bits_per_s / 8 * self.latency_ms / 1000) + self.burst_bytes

    def tbf_args(self) -> list[str]:
        """The ``tc qdisc ... tbf`` arguments, in units tc reads exactly (bit/s, bytes, microseconds)."""
        latency_us = max(1, round(self.latency_ms * 1000))
        return ["rate", f"{self.rate_bits_per_s}bit", "burst", str(self.burst_bytes), "latency", f"{latency_us}us"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ClusterConfig:
    """One emulated cluster: ``n_ps`` PS tasks (each with its own link of the same shape and the same CPU cap)
    and ``n_workers`` workers, the PS link's shape and each node's CPU cap.

    CPU caps are in cores (0.5 = half a core), enforced with the cgroup v1 ``cpu`` controller over a period
    of ``cfs_period_us``; their total must stay below the cores this process may run on.
    """

    n_workers: int
    link: LinkShape
    cpu_cap_ps: float
    cpu_cap_worker: float
    subnet: str = "10.77.0.0/24"
    cfs_period_us: int = 10_000
    port: int = 2222
    n_ps: int = 1
    worker_caps: tuple[float, ...] = ()  # worker I's cap: worker_caps[I] when given, else cpu_cap_worker
    # worker I's own link rate, bits/s (tbf like the PS link's, at that rate): worker_links[I] when given and
    # > 0, else unshaped (the bridge's speed)
    worker_links: tuple[int, ...] = ()
    coordinator: bool = False  # a node "chief" for a TF2 job's coordinator, capped at cpu_cap_coordinator
    cpu_cap_coordinator: float = 0.3

    def period_us_for(self, cap: float) -> int:
        """The CFS period a cap of ``cap`` cores is enforced over: ``cfs_period_us``, lengthened when the quota
        would fall below the kernel's least (1 ms; it refuses less), so that the cap is what was asked for and
        not silently raised to 1 ms a period."""
        period = max(self.cfs_period_us, math.ceil(MIN_QUOTA_US / cap - 1e-9))
        if period > MAX_PERIOD_US:
            raise ConfigError(f"a CPU cap of {cap:g} cores is below what a CFS quota can enforce "
                              f"({MIN_QUOTA_US / MAX_PERIOD_US:g} cores: 1 ms per 1 s period)")
        return period

    def __post_init__(self) -> None:
        if self.n_workers < 1:
            raise ConfigError(f"'n_workers' must be >= 1 (got {self.n_workers})")
        if not 1 <= self.n_ps <= MAX_PS:
            raise ConfigError(f"'n_ps' must be from 1 to {MAX_PS} (got {self.n_ps})")
        for name in ("cpu_cap_ps", "cpu_cap_worker", "cpu_cap_coordinator"):
            cap = getattr(self, name)
            if not cap > 0.0:
                raise ConfigError(f"'{name}' must be > 0 cores (got {cap})")
        if not all(cap > 0.0 for cap in self.worker_caps):
            raise ConfigError(f"'worker_caps' must all be > 0 cores (got {list(self.worker_caps)})")
        for rate in self.worker_links:
            if rate:
                dataclasses.replace(self.link, rate_bits_per_s=rate)  # checks the rate like the PS link's
        if not MIN_QUOTA_US <= self.cfs_period_us <= MAX_PERIOD_US:
            raise ConfigError(f"'cfs_period_us' must be between 1000 and 1000000 (got {self.cfs_period_us})")
        for cap in (self.cpu_cap_ps, self.cpu_cap_worker, self.cpu_cap_coordinator, *self.worker_caps):
            self.period_us_for(cap)
        if not 1 <= self.port <= 65_535:
            raise ConfigError(f"'port' must be between 1 and 65535 (got {self.port})")
        network = parse_subnet(self.subnet)
        needed = PS_HOST_INDEX + self.n_workers + 2  # network address .. last worker, plus broadcast
        if network.num_addresses < needed:
            raise ConfigError(
                f"'subnet' {self.subnet} is too small for {self.n_ps} PS + {self.n_workers} workers "
                f"(needs at least {needed} addresses)"
            )

    def total_cpu_cores(self) -> float:
        """The sum of all nodes' CPU caps, in cores."""
        return (self.n_ps * self.cpu_cap_ps + sum(self.worker_cap(i) for i in range(self.n_workers))
                + (self.cpu_cap_coordinator if self.coordinator else 0.0))

    def worker_cap(self, index: int) -> float:
        """Worker ``index``'s CPU cap, in cores."""
        return self.worker_caps[index] if index < len(self.worker_caps) else self.cpu_cap_worker

    def worker_link(self, index: int) -> LinkShape | None:
        """Worker ``index``'s own link shape (the PS link's burst and queue latency at its own rate), or None
        when it is not shaped."""
        rate = self.worker_links[index] if index < len(self.worker_links) else 0
        return dataclasses.replace(self.link, rate_bits_per_s=rate) if rate else None


def parse_subnet(text: str) -> ipaddress.IPv4Network:
    """``text`` as a private IPv4 network, or raise ConfigError."""
    try:
        network = ipaddress.ip_network(text, strict=True)
    except ValueError as exc:
        raise ConfigError(f"'subnet' must be an IPv4 network like 10.77.0.0/24 (got {text!r}): {exc}") from exc
    if not isinstance(network, ipaddress.IPv4Network) or not network.is_private:
        raise ConfigError(f"'subnet' must be a private IPv4 network like 10.77.0.0/24 (got {text!r})")
    return network
