"""What ``tracegen testbed`` runs with: :class:`TestbedConfig`, one field per command-line option, checked when
made (the cluster of the largest run included)."""

from __future__ import annotations

import dataclasses
import pathlib

from tracegen.placement import PLACEMENTS
from validation.capture import MAX_TRACED_STEPS, MAX_WARMUP_STEPS
from validation.cluster_config import MIN_RATE_BITS_PER_S, ClusterConfig, LinkShape
from validation.errors import ConfigError
from validation.netbench_node import TENSOR_BYTES, TENSORS, payload_fault
from validation.zoo import ModelSpec

MAX_SECONDS = 86_400  # the longest window or timeout: a day


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class TestbedConfig:
    """Everything ``tracegen testbed`` runs with; one field per command-line option.

    The default queue, ``burst_bytes`` 16384 and ``latency_ms`` 50, was chosen by measurement so that the
    link behaves like a switch port (fair sharing, no loss) rather than a lossy emulation artefact. With
    mlp 512-512 (2.7 MB of parameters), batch 32, 200 Mbit/s, caps 0.3 cores, 10 s windows, two repeats:
    ``latency_ms`` 5 (a 141 KB queue) dropped 16 000 - 55 000 packets per run with 26 000 - 84 000 TCP
    retransmissions and gave N = 1, 2, 3: 4.28/4.22, 5.58/6.52, 5.87/6.42 steps/s; ``latency_ms`` 50 (a
    1.27 MB queue) dropped 0 - 88 packets (1 - 94 retransmissions) and gave 4.17/4.27, 6.05/5.89, 6.04/6.44
    steps/s. Two plain TCP flows of 25 MB pushed at once into the PS finished after 1.96 s and 2.24 s at
    5 ms (1.60 s and 2.32 s at 1 ms: unfair, lossy) and both after 2.12 s at 50 ms (fair, at line rate).
    """

    __test__ = False  # not a pytest test class, despite its name

    out_dir: pathlib.Path
    model: str
    workers: tuple[int, ...]
    bandwidth_bits_per_s: int
    batch_size: int = 32
    widths: tuple[int, ...] = ()
    burst_bytes: int = 16_384
    latency_ms: float = 50.0
    repeats: int = 3
    window_s: float = 30.0
    window_steps: int = 0
    max_window_s: float = 120.0
    trace_workers: bool = True
    warmup_steps: int = 10
    cpu_cap_ps: float = 0.3
    cpu_cap_worker: float = 0.3
    traced_steps: int = 10
    learning_rate: float = 0.01
    subnet: str = "10.77.0.0/24"
    timeout_s: float = 300.0
    link_profile: bool = True
    netbench_client_cores: float | None = None
    netbench_tensors: int | None = None  # netbench's tensors per client step and their size (None: its defaults)
    netbench_tensor_bytes: int | None = None
    only_link_profile: bool = False
    only_single_worker: bool = False
    ps_at_cap: bool = False  # also the single worker against a PS capped so that it holds it at its cap
    staleness: bool = False  # workers also report each step's staleness (validation.node); staleness.csv
    ps_tasks: int = 1
    placement: str = "round-robin"
    worker_caps: tuple[float, ...] = ()  # worker I's CPU cap when given (a mixed cluster), else cpu_cap_worker
    worker_links: tuple[int, ...] = ()  # worker I's own link rate, bits/s, when given and > 0, else unshaped
    api: str = "tf1"  # tf1: graph-mode workers (validation.node); tf2: ParameterServerStrategy (testbed_tf2)
    cpu_cap_coordinator: float = 0.3  # the TF2 coordinator node's CPU cap

    def __post_init__(self) -> None:
        self.model_spec()
        if self.api not in ("tf1", "tf2"):
            raise ConfigError(f"'api' must be tf1 or tf2 (got {self.api!r})")
        if self.api == "tf2" and (self.staleness or self.worker_caps or self.worker_links or self.trace_workers):
            raise ConfigError("--api tf2 runs workers alike, without staleness or per-worker traces")
        if self.placement not in PLACEMENTS:
            raise ConfigError(f"'placement' must be one of {', '.join(PLACEMENTS)} (got {self.placement!r})")
        if self.api == "tf2" and self.placement != "round-robin":  # the strategy places them; no option of its own
            raise ConfigError(f"'placement' must be round-robin with --api tf2, ParameterServerStrategy's own in "
                              f"creation order (got {self.placement!r})")
        if not self.workers:
            raise ConfigError("'workers' must name at least one worker count (got none)")
        if any(n < 1 for n in self.workers):
            raise ConfigError(f"'workers' must all be >= 1 (got {list(self.workers)})")
        if len(set(self.workers)) != len(self.workers):
            raise ConfigError(f"'workers' must not repeat a count (got {list(self.workers)})")
        for name, low in (("repeats", 1), ("window_steps", 0), ("warmup_steps", 1), ("traced_steps", 1)):
            if getattr(self, name) < low:
                raise ConfigError(f"{name!r} must be >= {low} (got {getattr(self, name)})")
        for name, high in (("warmup_steps", MAX_WARMUP_STEPS), ("traced_steps", MAX_TRACED_STEPS)):  # as profile's
            if getattr(self, name) > high:  # else the cluster started, then ran into timeout_s or filled the disk
                raise ConfigError(f"{name!r} must be at most {high} (got {getattr(self, name)})")
        self._check_netbench()
        self._check_quantities()
        self.cluster_config(max(self.workers))  # checks the link, the caps and the subnet

    def _check_netbench(self) -> None:
        """netbench's payload, by ``netbench run``'s rule (:func:`validation.netbench_node.payload_fault`), before any
        namespace is made; and only where a link profile is measured."""
        if self.netbench_tensors is None and self.netbench_tensor_bytes is None:
            return
        if not self.link_profile:
            raise ConfigError("--netbench-tensors and --netbench-tensor-bytes shape the link profile's payload, and "
                              "--no-link-profile measures none")
        fault = payload_fault(TENSORS if self.netbench_tensors is None else self.netbench_tensors,
                              TENSOR_BYTES if self.netbench_tensor_bytes is None else self.netbench_tensor_bytes,
                              ("--netbench-tensors", "--netbench-tensor-bytes"))
        if fault:
            raise ConfigError(fault)

    def _check_quantities(self) -> None:
        """Durations, the learning rate and the links' rates, each named as its option is."""
        for name in ("window_s", "max_window_s", "learning_rate", "timeout_s"):
            if not getattr(self, name) > 0.0:  # a NaN fails too
                raise ConfigError(f"{name!r} must be > 0 (got {getattr(self, name)})")
        for name in ("window_s", "max_window_s", "timeout_s"):  # 1e300 s started the cluster and TensorFlow, then
            if getattr(self, name) > MAX_SECONDS:  # failed in a thread's sleep (a traceback) or waited for ever
                raise ConfigError(f"{name!r} must be at most {MAX_SECONDS} s (a day) (got {getattr(self, name):g})")
        shaped = [("bandwidth", self.bandwidth_bits_per_s), *(("worker_links", r) for r in self.worker_links if r)]
        for what, rate in shaped:  # 'rate_bits_per_s', the cluster's word, was no option's name
            if rate < MIN_RATE_BITS_PER_S:
                raise ConfigError(f"'{what}' must be at least 8 kbit/s, tc tbf's lowest rate (got {rate} bits/s)")

    def model_spec(self) -> ModelSpec:
        """The zoo model to train."""
        return ModelSpec(name=self.model, batch_size=self.batch_size, widths=self.widths)

    def link(self) -> LinkShape:
        """The PS link's shape."""
        return LinkShape(rate_bits_per_s=self.bandwidth_bits_per_s, burst_bytes=self.burst_bytes,
                         latency_ms=self.latency_ms)

    def cluster_config(self, n_workers: int) -> ClusterConfig:
        """The emulated cluster of one run with ``n_workers`` workers."""
        return ClusterConfig(n_workers=n_workers, link=self.link(), cpu_cap_ps=self.cpu_cap_ps,
                             cpu_cap_worker=self.cpu_cap_worker, subnet=self.subnet, n_ps=self.ps_tasks,
                             worker_caps=self.worker_caps, worker_links=self.worker_links,
                             coordinator=self.api == "tf2", cpu_cap_coordinator=self.cpu_cap_coordinator)
