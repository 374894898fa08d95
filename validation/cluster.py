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
(``KeyboardInterrupt``) or by SIGTERM or a closed terminal's SIGHUP (turned into
:class:`~validation.errors.TerminatedError` while the cluster is up, unless the caller ignores it, as ``nohup``
does SIGHUP; the previous handlers are restored afterwards) — kills every process group it started and every
process left in its cgroups and namespaces, then removes its cgroups and namespaces (which takes the veths, the
bridge and the qdiscs with them). SIGINT, SIGTERM and SIGHUP are held back while it removes things and raised
afterwards (:func:`tracegen.signals.held`): a terminal closed during a Ctrl-C's removal left namespaces and
cgroups behind.

What a cluster is made of is :mod:`validation.cluster_config`; checking the host, removing what a killed run left
and the commands both use are :mod:`validation.cluster_host`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pathlib
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from types import FrameType, TracebackType
from typing import IO, Any

from tracegen.signals import Handler, held
from validation.cluster_config import COORDINATOR_INDEX, MIN_QUOTA_US, PS_HOST_INDEX, ClusterConfig, parse_subnet
from validation.cluster_host import (
    CGROUP_CPU_ROOT,
    CGROUP_PREFIX,
    COMMAND_TIMEOUT_S,
    NAMESPACE_PREFIX,
    RUN_ID_LENGTH,
    check_host,
    hold_run_lock,
    kill_pids,
    namespace_pids,
    read_pids,
    release_run_lock,
    remove_cgroup,
    run_command,
)
from validation.errors import ClusterError, ConfigError, TerminatedError
from validation.signals import ENDING_SIGNALS
from validation.stderr import NO_OUTPUT, summarize_stderr
from validation.windowcpu import process_cpu_s, process_switches


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
        """What the process's stderr says, in one line (:func:`~validation.stderr.summarize_stderr`)."""
        try:
            return summarize_stderr(self.stderr_path.read_text(errors="replace"))
        except FileNotFoundError:
            return NO_OUTPUT


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
        self._old_handlers: dict[int, Handler] = {}
        self._lock_fd: int | None = None  # hold_run_lock's, while the cluster stands
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
            self._old_handlers = {sig: signal.signal(sig, self._on_signal) for sig in ENDING_SIGNALS
                                  if signal.getsignal(sig) is not signal.SIG_IGN}  # nohup's SIGHUP stays ignored
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

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        raise TerminatedError(f"received {signal.Signals(signum).name} (signal {signum}); removing the emulated "
                              f"cluster {self.run_id}", signum)

    def _build(self) -> None:
        self._lock_fd = hold_run_lock(self.run_id)  # before anything it marks as this run's
        self._log_dir = pathlib.Path(tempfile.mkdtemp(prefix=f"tracegen_{self.run_id}_"))
        br = self.bridge_namespace
        self._add_namespace(br)
        run_command(["ip", "-n", br, "link", "add", "br0", "type", "bridge"])
        run_command(["ip", "-n", br, "link", "set", "br0", "up"])
        for node in self.nodes:
            ns = self.namespace(node)
            self._add_namespace(ns)
            port = f"p_{node}"
            run_command(["ip", "-n", br, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns])
            run_command(["ip", "-n", br, "link", "set", port, "master", "br0", "up"])
            run_command(["ip", "-n", ns, "addr", "add", f"{self.address(node)}/{self._network.prefixlen}",
                         "dev", "eth0"])
            run_command(["ip", "-n", ns, "link", "set", "eth0", "up"])
            run_command(["ip", "-n", ns, "link", "set", "lo", "up"])
        shape = self.config.link.tbf_args()
        for node in self.ps_nodes:
            run_command(["tc", "-n", self.namespace(node), "qdisc", "replace", "dev", "eth0", "root", "tbf", *shape])
            run_command(["tc", "-n", br, "qdisc", "replace", "dev", f"p_{node}", "root", "tbf", *shape])
        for i, node in enumerate(self.worker_nodes):
            own = self.config.worker_link(i)
            if own is not None:
                run_command(["tc", "-n", self.namespace(node), "qdisc", "replace", "dev", "eth0", "root", "tbf",
                             *own.tbf_args()])
                run_command(["tc", "-n", br, "qdisc", "replace", "dev", f"p_{node}", "root", "tbf", *own.tbf_args()])
        for node in self.nodes:
            self._add_cgroup(node)

    def _add_namespace(self, name: str) -> None:
        self._namespaces.append(name)  # recorded first: an interrupted add is still removed
        run_command(["ip", "netns", "add", name])
        # No IPv6 inside the cluster: no router solicitations or DAD probes on the shaped link.
        run_command(["ip", "netns", "exec", name, "sh", "-c",
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

    def run(self, node: str, argv: Sequence[str], timeout_s: float = COMMAND_TIMEOUT_S) -> str:
        """Run a short command inside ``node``'s namespace (not capped) and return its stdout."""
        if not self._up:
            raise ClusterError("the cluster is not up; run commands inside 'with Cluster(...) as cluster:'")
        return run_command(["ip", "netns", "exec", self.namespace(node), *argv], timeout_s=timeout_s)

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
        before, self._old_handlers = self._old_handlers, {}
        with held(after=before):  # a signal held back is raised once all is removed, to the handler from before
            try:                  # the cluster, which held() puts back
                problems = self._remove_everything()
            finally:
                self._up = False
            if self._lock_fd is not None and not problems:  # kept where something is left: once this process
                release_run_lock(self.run_id, self._lock_fd)  # ends, the next run reaps it (reap_dead_runs)
                self._lock_fd = None
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
            kill_pids(read_pids(path / "cgroup.procs"))
        for ns in self._namespaces:
            kill_pids(namespace_pids(ns))
        for path in reversed(self._cgroups):
            problem = remove_cgroup(path)
            if problem:
                problems.append(problem)
        for ns in reversed(self._namespaces):  # node namespaces first, the bridge's last
            try:
                run_command(["ip", "netns", "del", ns], missing_ok=True)
            except ClusterError as err:
                problems.append(str(err))
        self._procs.clear()
        self._cgroups.clear()
        self._namespaces.clear()
        if self._log_dir is not None:
            shutil.rmtree(self._log_dir, ignore_errors=True)
            self._log_dir = None
        return problems


def _qdisc_counters(namespace: str, dev: str) -> tuple[int, int]:
    shown = json.loads(run_command(["tc", "-n", namespace, "-s", "-j", "qdisc", "show", "dev", dev]) or "[]")
    for qdisc in shown:
        if qdisc.get("kind") == "tbf":
            return int(qdisc.get("bytes", 0)), int(qdisc.get("drops", 0))
    raise ClusterError(f"namespace {namespace}: no tbf qdisc on {dev} (found {[q.get('kind') for q in shown]})")


def _tcp_retrans_segs(snmp: str) -> int:
    rows = [line.split() for line in snmp.splitlines() if line.startswith("Tcp:")]
    if len(rows) < 2 or "RetransSegs" not in rows[0]:
        raise ClusterError("/proc/net/snmp: no Tcp RetransSegs counter")
    return int(rows[1][rows[0].index("RetransSegs")])
