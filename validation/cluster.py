"""A private emulated cluster on one Linux machine: network namespaces, one bridge, a shaped PS link, CPU caps.

For a run id ``3fa9c1`` (random, so that concurrent runs never share a name) and N workers::

    namespace tg_3fa9c1_br   bridge br0 with one port per node: p_ps, p_w0, p_w1, ...
                             tbf on p_ps: traffic *into* the PS (gradient pushes)
    namespace tg_3fa9c1_ps   eth0 = 10.77.0.10/24; tbf on eth0: traffic *out of* the PS (parameter pulls)
    namespace tg_3fa9c1_psJ  with ``n_ps`` > 1, PS task J (1 .. n_ps - 1): eth0 = 10.77.0.(10 - J)/24, its own
                             link shaped the same way (tbf on its eth0 and on the bridge's p_psJ)
    namespace tg_3fa9c1_chief  with ``coordinator`` (a TF2 ParameterServerStrategy job's coordinator): eth0 =
                             10.77.0.2/24, unshaped
    namespace tg_3fa9c1_wI   eth0 = 10.77.0.(11 + I)/24; with a rate of its own (``worker_links``), its link
                             shaped like the PS's but at that rate (tbf on its eth0 and on the bridge's p_wI)
    cgroup    /sys/fs/cgroup/cpu/tracegen_3fa9c1_<node>: cpu.cfs_quota_us = cap * cpu.cfs_period_us (the
                             period lengthened where that quota would be under the kernel's 1 ms)

Each veth pair is created inside the bridge namespace and its node end is moved straight into the node's
namespace, so nothing of the cluster ever appears in the host's own network namespace; the addresses exist
only inside these namespaces and no route leads out of them, so traffic can only reach the cluster's own
nodes. Concurrent runs may use the same subnet: each run's addresses live in its own namespaces. The host is
still refused when one of its own addresses or routes overlaps the subnet, so that an address in the cluster
can never be mistaken for a host one.

Both directions of the PS link are shaped with ``tc qdisc replace ... root tbf rate R burst B latency L``.
Each node's process is started with ``ip netns exec`` inside its namespace, already inside its cgroup (a
``sh`` wrapper writes its own pid to ``cgroup.procs`` and then ``exec``s), in a process group of its own.

:class:`Cluster` is a context manager. Leaving it — normally, by an exception, by Ctrl-C
(``KeyboardInterrupt``) or by SIGTERM (turned into :class:`~validation.errors.TerminatedError` while the
cluster is up; the previous handler is restored afterwards) — kills every process group it started and every process
left in its cgroups and namespaces, then removes its cgroups and namespaces (which takes the veths, the bridge
and the qdiscs with them). SIGINT and SIGTERM are held back while it removes things and delivered afterwards.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import ipaddress
import json
import math
import os
import pathlib
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from types import FrameType, TracebackType
from typing import IO, Any

from validation.errors import ClusterError, ConfigError, TerminatedError
from validation.windowcpu import process_cpu_s, process_switches

CGROUP_CPU_ROOT = pathlib.Path("/sys/fs/cgroup/cpu")
NAMESPACE_PREFIX = "tg_"
CGROUP_PREFIX = "tracegen_"
MIN_BURST_BYTES = 1514  # one full Ethernet frame: tbf drops every packet larger than its bucket
PS_HOST_INDEX = 10  # the PS gets the subnet's 10th address, PS task J the (10 - J)th, worker I the (11 + I)th
COORDINATOR_INDEX = 2  # a TF2 job's coordinator, below every PS task (MAX_PS of them)
MAX_PS = 8
MIN_QUOTA_US = 1_000  # the least cpu.cfs_quota_us the kernel accepts
MAX_PERIOD_US = 1_000_000  # the longest cpu.cfs_period_us it accepts
_COMMAND_TIMEOUT_S = 30.0


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
        if self.rate_bits_per_s < 8_000:
            raise ConfigError(f"'rate_bits_per_s' must be >= 8000 (got {self.rate_bits_per_s})")
        if self.burst_bytes < MIN_BURST_BYTES:
            raise ConfigError(
                f"'burst_bytes' must be >= {MIN_BURST_BYTES} (one full Ethernet frame) (got {self.burst_bytes})"
            )
        if not 0.0 < self.latency_ms <= 10_000.0:
            raise ConfigError(f"'latency_ms' must be > 0 and <= 10000 (got {self.latency_ms})")

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


def available_cores() -> int:
    """The number of CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def check_host(config: ClusterConfig) -> None:
    """Raise ClusterError unless this machine can host ``config``'s cluster; changes nothing.

    Checks: running as root, ``ip`` and ``tc`` on PATH, the cgroup v1 ``cpu`` controller mounted at
    ``/sys/fs/cgroup/cpu``, CPU caps whose total stays below the available cores, and a subnet that none of
    the host's own addresses or routes overlaps.
    """
    if os.geteuid() != 0:
        raise ClusterError(
            f"the emulated cluster needs root (network namespaces, tc, cgroups); running as uid {os.geteuid()}"
        )
    for tool in ("ip", "tc"):
        if shutil.which(tool) is None:
            raise ClusterError(f"the emulated cluster needs '{tool}' (iproute2) on PATH; it was not found")
    if not (CGROUP_CPU_ROOT / "cpu.cfs_quota_us").is_file():
        raise ClusterError(
            f"the emulated cluster needs the cgroup v1 cpu controller at {CGROUP_CPU_ROOT} "
            "(no cpu.cfs_quota_us there)"
        )
    cores = available_cores()
    total = config.total_cpu_cores()
    if total >= cores:
        raise ClusterError(
            f"CPU caps must total less than the {cores} available cores (got {total:g}: "
            f"{config.n_ps} PS * {config.cpu_cap_ps:g} + {config.n_workers} workers: "
            f"{', '.join(format(config.worker_cap(i), 'g') for i in range(config.n_workers))}"
            + (f" + a coordinator * {config.cpu_cap_coordinator:g})" if config.coordinator else ")")
        )
    _check_subnet_free(parse_subnet(config.subnet))


def _check_subnet_free(network: ipaddress.IPv4Network) -> None:
    addrs = json.loads(_run(["ip", "-j", "-4", "addr", "show"]) or "[]")
    for link in addrs:
        for info in link.get("addr_info", []):
            iface = ipaddress.ip_interface(f"{info['local']}/{info.get('prefixlen', 32)}")
            if iface.network.overlaps(network):
                raise ClusterError(
                    f"subnet {network} is already in use on this host: {info['local']}/{info.get('prefixlen')} "
                    f"on {link.get('ifname')}; choose another subnet"
                )
    routes = json.loads(_run(["ip", "-j", "-4", "route", "show", "table", "all"]) or "[]")
    for route in routes:
        dst = route.get("dst", "default")
        if dst == "default" or route.get("type") in ("local", "broadcast", "anycast", "multicast"):
            continue  # a host's own addresses were checked above; these kinds route nothing to the subnet
        try:
            routed = ipaddress.ip_network(dst, strict=False)
        except ValueError:
            continue  # route kinds without a plain destination (e.g. multicast tables) cannot overlap
        if routed.overlaps(network) and not routed.is_loopback:
            raise ClusterError(
                f"subnet {network} is already in use on this host: route to {dst} via {route.get('dev', '?')}; "
                "choose another subnet"
            )


def leftovers() -> list[str]:
    """Network namespaces ``tg_*`` and cgroups ``tracegen_*`` on this machine (from any run, this one or not)."""
    found: list[str] = []
    if shutil.which("ip") is not None:
        for line in _run(["ip", "netns", "list"]).splitlines():
            name = line.split()[0] if line.strip() else ""
            if name.startswith(NAMESPACE_PREFIX):
                found.append(f"netns {name}")
    if CGROUP_CPU_ROOT.is_dir():
        found.extend(f"cgroup {p}" for p in sorted(CGROUP_CPU_ROOT.glob(f"{CGROUP_PREFIX}*")) if p.is_dir())
    return found


RUN_ID_LENGTH = 6


def clean(run_id: str) -> list[str]:
    """Remove what the run ``run_id`` left (``all``: every run's): its node processes, cgroups and namespaces
    (which take its veths, bridge and qdiscs). For a crashed run: a run still going is stopped. Returns what was
    removed; ClusterError lists what could not be."""
    if run_id != "all" and (len(run_id) != RUN_ID_LENGTH or not all(c in "0123456789abcdef" for c in run_id)):
        raise ConfigError(f"'run_id' must be the 6 hex digits a run printed ('cluster 3fa9c1 is up') or 'all' "
                          f"(got {run_id!r})")
    tag = "" if run_id == "all" else f"{run_id}_"
    removed, problems = [], []
    namespaces = [x.split(" ", 1)[1] for x in leftovers() if x.startswith(f"netns {NAMESPACE_PREFIX}{tag}")]
    cgroups = [pathlib.Path(x.split(" ", 1)[1]) for x in leftovers()
               if x.startswith(f"cgroup {CGROUP_CPU_ROOT / (CGROUP_PREFIX + tag)}")]
    for path in cgroups:
        _kill_pids(_read_pids(path / "cgroup.procs"))
    for ns in namespaces:
        _kill_pids(_namespace_pids(ns))
    for path in cgroups:
        problem = _remove_cgroup(path)
        (problems.append(problem) if problem else removed.append(f"cgroup {path}"))
    for ns in sorted(namespaces, key=lambda n: n.endswith("_br")):  # node namespaces first, the bridge's last
        try:
            _run(["ip", "netns", "del", ns], missing_ok=True)
            removed.append(f"netns {ns}")
        except ClusterError as err:
            problems.append(str(err))
    if problems:
        raise ClusterError("could not remove " + "; ".join(problems))
    return removed


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NodeProcess:
    """A process started inside one node's namespace and cgroup; its stderr goes to ``stderr_path``."""

    node: str
    popen: subprocess.Popen[str]
    stderr_path: pathlib.Path

    def cpu_s(self) -> float | None:
        """CPU seconds (user and system, all threads) the process has used so far; None once it is gone."""
        return process_cpu_s(self.popen.pid)

    def switches(self) -> tuple[int, int] | None:
        """(voluntary, involuntary) context switches of all the process's threads so far; None once it is gone."""
        return process_switches(self.popen.pid)

    def stderr_tail(self) -> str:
        """The last non-empty line the process wrote to stderr, or ``(no output)``."""
        try:
            text = self.stderr_path.read_text(errors="replace")
        except FileNotFoundError:
            return "(no output)"
        lines = [line for line in text.splitlines() if line.strip()]
        return lines[-1].strip() if lines else "(no output)"


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LinkStats:
    """Counters of the PS link's two tbf qdiscs (since the cluster was built) and TCP retransmissions."""

    pull_bytes: int
    pull_drops: int
    push_bytes: int
    push_drops: int
    tcp_retrans_segs: int


class Cluster:
    """The emulated cluster ``config`` describes, built on ``__enter__`` and removed entirely on ``__exit__``.

    Nodes are named ``ps`` and ``w0`` .. ``w{N-1}``. Use :meth:`start` to run a process in a node.
    """

    def __init__(self, config: ClusterConfig) -> None:
        self.config = config
        self.run_id = secrets.token_hex(RUN_ID_LENGTH // 2)
        self.ps_nodes: tuple[str, ...] = ("ps", *(f"ps{j}" for j in range(1, config.n_ps)))
        self.worker_nodes: tuple[str, ...] = tuple(f"w{i}" for i in range(config.n_workers))
        self.nodes: tuple[str, ...] = (*self.ps_nodes, *self.worker_nodes, *(("chief",) if config.coordinator else ()))
        self._network = parse_subnet(config.subnet)
        self._namespaces: list[str] = []
        self._cgroups: list[pathlib.Path] = []
        self._procs: list[NodeProcess] = []
        self._log_dir: pathlib.Path | None = None
        self._old_sigterm: Callable[[int, FrameType | None], Any] | int | None = None
        self._sigterm_installed = False
        self._up = False

    # ----- names and addresses
    @property
    def bridge_namespace(self) -> str:
        """The namespace that holds the bridge."""
        return f"{NAMESPACE_PREFIX}{self.run_id}_br"

    def namespace(self, node: str) -> str:
        """The network namespace of ``node``."""
        self._check_node(node)
        return f"{NAMESPACE_PREFIX}{self.run_id}_{node}"

    def cgroup(self, node: str) -> pathlib.Path:
        """The cgroup v1 cpu group of ``node``."""
        self._check_node(node)
        return CGROUP_CPU_ROOT / f"{CGROUP_PREFIX}{self.run_id}_{node}"

    def address(self, node: str) -> str:
        """The IPv4 address of ``node`` inside the cluster."""
        self._check_node(node)
        if node == "chief":
            index = COORDINATOR_INDEX
        elif node == "ps":
            index = PS_HOST_INDEX
        elif node.startswith("ps"):
            index = PS_HOST_INDEX - int(node[2:])
        else:
            index = PS_HOST_INDEX + 1 + int(node[1:])
        return str(self._network.network_address + index)

    def tf_cluster(self) -> dict[str, list[str]]:
        """The TensorFlow cluster definition: ``{"ps": ["ip:port", ...], "worker": [...]}``, PS task J at
        ``ps_nodes[J]``."""
        port = self.config.port
        return {
            "ps": [f"{self.address(n)}:{port}" for n in self.ps_nodes],
            "worker": [f"{self.address(n)}:{port}" for n in self.worker_nodes],
        }

    def cpu_cap(self, node: str) -> float:
        """The CPU cap of ``node`` in cores."""
        self._check_node(node)
        if node == "chief":
            return self.config.cpu_cap_coordinator
        return self.config.cpu_cap_ps if node in self.ps_nodes else self.config.worker_cap(int(node[1:]))

    def _check_node(self, node: str) -> None:
        if node not in self.nodes:
            raise ConfigError(f"no node {node!r} in this cluster (nodes: {', '.join(self.nodes)})")

    # ----- building
    def __enter__(self) -> Cluster:
        check_host(self.config)
        if threading.current_thread() is threading.main_thread():
            self._old_sigterm = signal.signal(signal.SIGTERM, self._on_sigterm)
            self._sigterm_installed = True
        try:
            self._build()
        except BaseException as exc:
            self._teardown(exc)
            raise
        self._up = True
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._teardown(exc)

    def _on_sigterm(self, signum: int, _frame: FrameType | None) -> None:
        raise TerminatedError(f"received SIGTERM (signal {signum}); removing the emulated cluster {self.run_id}")

    def _build(self) -> None:
        self._log_dir = pathlib.Path(tempfile.mkdtemp(prefix=f"tracegen_{self.run_id}_"))
        br = self.bridge_namespace
        self._add_namespace(br)
        _run(["ip", "-n", br, "link", "add", "br0", "type", "bridge"])
        _run(["ip", "-n", br, "link", "set", "br0", "up"])
        for node in self.nodes:
            ns = self.namespace(node)
            self._add_namespace(ns)
            port = f"p_{node}"
            _run(["ip", "-n", br, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns])
            _run(["ip", "-n", br, "link", "set", port, "master", "br0", "up"])
            _run(["ip", "-n", ns, "addr", "add", f"{self.address(node)}/{self._network.prefixlen}", "dev", "eth0"])
            _run(["ip", "-n", ns, "link", "set", "eth0", "up"])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
        shape = self.config.link.tbf_args()
        for node in self.ps_nodes:
            _run(["tc", "-n", self.namespace(node), "qdisc", "replace", "dev", "eth0", "root", "tbf", *shape])
            _run(["tc", "-n", br, "qdisc", "replace", "dev", f"p_{node}", "root", "tbf", *shape])
        for i, node in enumerate(self.worker_nodes):
            own = self.config.worker_link(i)
            if own is not None:
                _run(["tc", "-n", self.namespace(node), "qdisc", "replace", "dev", "eth0", "root", "tbf",
                      *own.tbf_args()])
                _run(["tc", "-n", br, "qdisc", "replace", "dev", f"p_{node}", "root", "tbf", *own.tbf_args()])
        for node in self.nodes:
            self._add_cgroup(node)

    def _add_namespace(self, name: str) -> None:
        self._namespaces.append(name)  # recorded first: an interrupted add is still removed
        _run(["ip", "netns", "add", name])
        # No IPv6 inside the cluster: no router solicitations or DAD probes on the shaped link.
        _run(["ip", "netns", "exec", name, "sh", "-c",
              "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && "
              "echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6"])

    def _add_cgroup(self, node: str) -> None:
        path = self.cgroup(node)
        self._cgroups.append(path)
        try:
            path.mkdir()
            cap = self.cpu_cap(node)
            period_us = self.config.period_us_for(cap)
            (path / "cpu.cfs_period_us").write_text(f"{period_us}\n")
            quota_us = max(MIN_QUOTA_US, round(cap * period_us))
            (path / "cpu.cfs_quota_us").write_text(f"{quota_us}\n")
        except OSError as exc:
            raise ClusterError(f"{path}: cannot create the cpu cgroup of node {node}: {exc}") from exc

    # ----- running
    def start(
        self,
        node: str,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        stdin: int | IO[Any] | None = subprocess.DEVNULL,
        stdout: int | IO[Any] | None = subprocess.DEVNULL,
    ) -> NodeProcess:
        """Start ``argv`` inside ``node``'s namespace and cgroup, in a process group of its own (text mode).

        The process is killed when the cluster is removed. Its stderr goes to a file (see
        :meth:`NodeProcess.stderr_tail`).
        """
        if not self._up or self._log_dir is None:
            raise ClusterError("the cluster is not up; start processes inside 'with Cluster(...) as cluster:'")
        self._check_node(node)
        stderr_path = self._log_dir / f"{node}.{len(self._procs)}.stderr"
        wrapper = ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.cgroup(node) / "cgroup.procs"),
                   "ip", "netns", "exec", self.namespace(node), *argv]
        with stderr_path.open("wb") as err:
            popen = subprocess.Popen(
                wrapper, stdin=stdin, stdout=stdout, stderr=err, env=None if env is None else dict(env),
                text=True, start_new_session=True,
            )
        proc = NodeProcess(node=node, popen=popen, stderr_path=stderr_path)
        self._procs.append(proc)
        return proc

    def run(self, node: str, argv: Sequence[str], timeout_s: float = _COMMAND_TIMEOUT_S) -> str:
        """Run a short command inside ``node``'s namespace (not capped) and return its stdout."""
        if not self._up:
            raise ClusterError("the cluster is not up; run commands inside 'with Cluster(...) as cluster:'")
        return _run(["ip", "netns", "exec", self.namespace(node), *argv], timeout_s=timeout_s)

    def link_stats(self) -> LinkStats:
        """The PS links' qdisc counters (all PS tasks together) and the TCP retransmissions of all nodes, since
        the cluster was built."""
        pulls = [_qdisc_counters(self.namespace(node), "eth0") for node in self.ps_nodes]
        pushes = [_qdisc_counters(self.bridge_namespace, f"p_{node}") for node in self.ps_nodes]
        retrans = sum(_tcp_retrans_segs(self.run(node, ["cat", "/proc/net/snmp"])) for node in self.nodes)
        return LinkStats(pull_bytes=sum(p[0] for p in pulls), pull_drops=sum(p[1] for p in pulls),
                         push_bytes=sum(p[0] for p in pushes), push_drops=sum(p[1] for p in pushes),
                         tcp_retrans_segs=retrans)

    # ----- removing
    def _teardown(self, exc: BaseException | None) -> None:
        main = threading.current_thread() is threading.main_thread()
        held = {signal.SIGINT, signal.SIGTERM}
        if main:
            signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            problems = self._remove_everything()
        finally:
            self._up = False
            if self._sigterm_installed:
                old = signal.SIG_DFL if self._old_sigterm is None else self._old_sigterm
                signal.signal(signal.SIGTERM, old)
                self._sigterm_installed = False
            if main:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, held)  # a held signal is delivered now
        if problems:
            message = f"emulated cluster {self.run_id}: could not remove " + "; ".join(problems)
            if exc is None:
                raise ClusterError(message)
            exc.add_note(message)

    def _remove_everything(self) -> list[str]:
        problems: list[str] = []
        for proc in self._procs:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.popen.pid, signal.SIGKILL)
        for proc in self._procs:
            try:
                proc.popen.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                problems.append(f"process {proc.popen.pid} of node {proc.node} (still running after SIGKILL)")
            for stream in (proc.popen.stdin, proc.popen.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        # Anything else still in our cgroups or namespaces was started from our processes: end it too.
        for path in self._cgroups:
            _kill_pids(_read_pids(path / "cgroup.procs"))
        for ns in self._namespaces:
            _kill_pids(_namespace_pids(ns))
        for path in reversed(self._cgroups):
            problem = _remove_cgroup(path)
            if problem:
                problems.append(problem)
        for ns in reversed(self._namespaces):  # node namespaces first, the bridge's last
            try:
                _run(["ip", "netns", "del", ns], missing_ok=True)
            except ClusterError as err:
                problems.append(str(err))
        self._procs.clear()
        self._cgroups.clear()
        self._namespaces.clear()
        if self._log_dir is not None:
            shutil.rmtree(self._log_dir, ignore_errors=True)
            self._log_dir = None
        return problems


def _run(argv: Sequence[str], timeout_s: float = _COMMAND_TIMEOUT_S, missing_ok: bool = False) -> str:
    """Run a short command; return its stdout or raise ClusterError quoting the command and its stderr."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError as exc:
        raise ClusterError(f"'{argv[0]}' not found on PATH (needed for: {' '.join(argv)})") from exc
    except subprocess.TimeoutExpired as exc:
        raise ClusterError(f"'{' '.join(argv)}' did not finish within {timeout_s:g} s") from exc
    if done.returncode != 0:
        err = done.stderr.strip()
        if missing_ok and ("No such file" in err or "not found" in err.lower()):
            return ""
        tail = (err.splitlines() or ["(no output)"])[-1]
        raise ClusterError(f"'{' '.join(argv)}' failed with code {done.returncode}: {tail}")
    return done.stdout


def _qdisc_counters(namespace: str, dev: str) -> tuple[int, int]:
    shown = json.loads(_run(["tc", "-n", namespace, "-s", "-j", "qdisc", "show", "dev", dev]) or "[]")
    for qdisc in shown:
        if qdisc.get("kind") == "tbf":
            return int(qdisc.get("bytes", 0)), int(qdisc.get("drops", 0))
    raise ClusterError(f"namespace {namespace}: no tbf qdisc on {dev} (found {[q.get('kind') for q in shown]})")


def _tcp_retrans_segs(snmp: str) -> int:
    rows = [line.split() for line in snmp.splitlines() if line.startswith("Tcp:")]
    if len(rows) < 2 or "RetransSegs" not in rows[0]:
        raise ClusterError("/proc/net/snmp: no Tcp RetransSegs counter")
    return int(rows[1][rows[0].index("RetransSegs")])


def _read_pids(path: pathlib.Path) -> list[int]:
    try:
        return [int(line) for line in path.read_text().split()]
    except FileNotFoundError:
        return []


def _namespace_pids(namespace: str) -> list[int]:
    try:
        out = _run(["ip", "netns", "pids", namespace], missing_ok=True)
    except ClusterError:
        return []
    return [int(word) for word in out.split()]


def _kill_pids(pids: Sequence[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _remove_cgroup(path: pathlib.Path) -> str | None:
    deadline = time.monotonic() + 5.0
    while True:
        try:
            path.rmdir()
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                return f"cgroup {path} ({exc.strerror}; tasks: {_read_pids(path / 'cgroup.procs')})"
            _kill_pids(_read_pids(path / "cgroup.procs"))
            time.sleep(0.05)
        else:
            return None
