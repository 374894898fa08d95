"""The emulated cluster: config checks, refusals, and real namespaces, tc and cgroups (as root)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from validation import cluster_host
from validation.cluster import Cluster
from validation.cluster_host import CGROUP_CPU_ROOT, available_cores, check_host, leftovers
from validation.errors import ClusterError, ConfigError

from validation_support import CLUSTER_SUBNET, make_cluster_config


def _gone(run_id: str) -> list[str]:
    """What of run ``run_id`` is still on this machine (namespaces, cgroups)."""
    return [item for item in leftovers() if f"_{run_id}_" in item]


# ----- configuration


def test_addresses_and_names_follow_the_layout() -> None:
    cluster = Cluster(make_cluster_config(n_workers=3))
    assert cluster.nodes == ("ps", "w0", "w1", "w2")
    assert cluster.tf_cluster() == {
        "ps": ["10.79.3.10:2222"], "worker": ["10.79.3.11:2222", "10.79.3.12:2222", "10.79.3.13:2222"],
    }
    assert cluster.namespace("w1") == f"tg_{cluster.run_id}_w1"
    assert cluster.cgroup("ps") == CGROUP_CPU_ROOT / f"tracegen_{cluster.run_id}_ps"
    assert Cluster(make_cluster_config()).run_id != cluster.run_id
    with pytest.raises(ConfigError, match="no node 'w3'"):
        cluster.address("w3")


def test_several_ps_tasks_get_their_own_names_addresses_and_caps() -> None:
    cluster = Cluster(make_cluster_config(n_workers=2, n_ps=3))
    assert cluster.ps_nodes == ("ps", "ps1", "ps2")
    assert cluster.nodes == ("ps", "ps1", "ps2", "w0", "w1")
    assert cluster.tf_cluster() == {
        "ps": ["10.79.3.10:2222", "10.79.3.9:2222", "10.79.3.8:2222"],
        "worker": ["10.79.3.11:2222", "10.79.3.12:2222"],
    }
    assert cluster.cpu_cap("ps2") == cluster.config.cpu_cap_ps
    assert cluster.config.total_cpu_cores() == pytest.approx(3 * cluster.config.cpu_cap_ps
                                                             + 2 * cluster.config.cpu_cap_worker)
    with pytest.raises(ConfigError, match=re.escape("'n_ps' must be from 1 to 8 (got 9)")):
        make_cluster_config(n_ps=9)


def test_a_tf2_cluster_has_a_coordinator_node() -> None:
    cluster = Cluster(make_cluster_config(n_workers=2, coordinator=True, cpu_cap_coordinator=0.3))
    assert cluster.nodes == ("ps", "w0", "w1", "chief")
    assert cluster.address("chief") == "10.79.3.2" and cluster.cpu_cap("chief") == 0.3
    assert cluster.tf_cluster() == {"ps": ["10.79.3.10:2222"], "worker": ["10.79.3.11:2222", "10.79.3.12:2222"]}
    assert cluster.config.total_cpu_cores() == pytest.approx(0.2 + 2 * 0.2 + 0.3)


def test_workers_may_have_caps_of_their_own() -> None:
    cluster = Cluster(make_cluster_config(n_workers=3, worker_caps=(0.1, 0.3)))
    assert [cluster.cpu_cap(n) for n in ("w0", "w1", "w2")] == [0.1, 0.3, cluster.config.cpu_cap_worker]
    assert cluster.config.total_cpu_cores() == pytest.approx(cluster.config.cpu_cap_ps + 0.4
                                                             + cluster.config.cpu_cap_worker)
    with pytest.raises(ConfigError, match=re.escape("'worker_caps' must all be > 0 cores (got [0.2, 0.0])")):
        make_cluster_config(worker_caps=(0.2, 0.0))


# ----- refusals


def test_refuses_without_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster_host.os, "geteuid", lambda: 1000)
    with pytest.raises(ClusterError, match=r"needs root .* running as uid 1000"):
        check_host(make_cluster_config())


@pytest.mark.root  # the root check comes first
def test_refuses_without_ip_and_tc(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ClusterError, match=r"needs 'ip' \(iproute2\) on PATH"):
        check_host(make_cluster_config())


@pytest.mark.root  # the root check comes first
def test_refuses_without_cgroup_cpu_controller(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    monkeypatch.setattr(cluster_host, "CGROUP_CPU_ROOT", tmp_path)
    with pytest.raises(ClusterError, match="cgroup v1 cpu controller"):
        check_host(make_cluster_config())


@pytest.mark.root
def test_refuses_caps_that_fill_the_machine() -> None:
    cores = available_cores()
    config = make_cluster_config(n_workers=1, cpu_cap_ps=cores / 2, cpu_cap_worker=cores / 2)
    with pytest.raises(ClusterError, match=f"must total less than the {cores} available cores"):
        check_host(config)


@pytest.mark.root
def test_refuses_a_subnet_in_use_on_the_host() -> None:
    with pytest.raises(ClusterError, match=r"subnet 127\.0\.0\.0/24 is already in use on this host: 127\.0\.0\.1/8"):
        check_host(make_cluster_config(subnet="127.0.0.0/24"))


# ----- the real thing

_SERVER = r"""
import socket, sys
s = socket.socket(); s.bind(("0.0.0.0", 2222)); s.listen()
print("listening", flush=True)
conn, _ = s.accept(); n = 0
while chunk := conn.recv(1 << 20):
    n += len(chunk)
print(n, flush=True)
"""
_CLIENT = "import socket, sys; c = socket.create_connection((sys.argv[1], 2222)); c.sendall(b'x' * 2_000_000)"


@pytest.mark.root
def test_builds_shapes_caps_and_removes_everything() -> None:
    with Cluster(make_cluster_config()) as cluster:
        run_id = cluster.run_id
        names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
        for node in cluster.nodes:
            assert cluster.namespace(node) in names
            assert (cluster.cgroup(node) / "cpu.cfs_period_us").read_text().strip() == "10000"
            assert (cluster.cgroup(node) / "cpu.cfs_quota_us").read_text().strip() == "2000"
        assert cluster.bridge_namespace in names
        with Cluster(make_cluster_config(cpu_cap_ps=0.05)) as small:  # under 1 ms a period at 10 ms: a longer period
            assert (small.cgroup("ps") / "cpu.cfs_period_us").read_text().strip() == "20000"
            assert (small.cgroup("ps") / "cpu.cfs_quota_us").read_text().strip() == "1000"
        for ns, dev in ((cluster.namespace("ps"), "eth0"), (cluster.bridge_namespace, "p_ps")):
            shown = json.loads(subprocess.run(["tc", "-n", ns, "-j", "qdisc", "show", "dev", dev],
                                              capture_output=True, text=True, check=True).stdout)
            assert shown[0]["kind"] == "tbf"
            assert shown[0]["options"]["rate"] == 100_000_000 // 8  # tc reports bytes per second
        # The host namespace gains nothing: the addresses exist only inside the cluster.
        host = subprocess.run(["ip", "-4", "addr"], capture_output=True, text=True, check=True).stdout
        assert "10.79.3." not in host

        server = cluster.start("ps", [sys.executable, "-c", _SERVER], stdout=subprocess.PIPE)
        assert server.popen.stdout is not None
        assert server.popen.stdout.readline().strip() == "listening"
        cgroup_line = pathlib.Path(f"/proc/{server.popen.pid}/cgroup").read_text()
        assert f"cpu:/tracegen_{run_id}_ps" in cgroup_line.replace("cpu,cpuacct", "cpu")
        own_netns = pathlib.Path("/proc/self/ns/net").readlink()
        assert pathlib.Path(f"/proc/{server.popen.pid}/ns/net").readlink() != own_netns
        cluster.run("w1", [sys.executable, "-c", _CLIENT, cluster.address("ps")])
        assert server.popen.stdout.readline().strip() == "2000000"
        stats = cluster.link_stats()
        assert stats.push_bytes > 2_000_000  # the bytes crossed the shaped port facing the PS
        assert stats.pull_bytes > 0  # ACKs went out through the PS's own shaped interface
        sleeper = cluster.start("w0", ["sleep", "600"])
    assert _gone(run_id) == []
    assert sleeper.popen.returncode == -signal.SIGKILL


@pytest.mark.root
def test_workers_may_have_links_of_their_own() -> None:
    with Cluster(make_cluster_config(n_workers=2, worker_links=(50_000_000,))) as cluster:
        run_id = cluster.run_id

        def qdisc(ns: str, dev: str) -> dict[str, object]:
            shown = json.loads(subprocess.run(["tc", "-n", ns, "-j", "qdisc", "show", "dev", dev],
                                              capture_output=True, text=True, check=True).stdout)
            return shown[0]

        for ns, dev in ((cluster.namespace("w0"), "eth0"), (cluster.bridge_namespace, "p_w0")):
            shown = qdisc(ns, dev)
            assert shown["kind"] == "tbf" and shown["options"]["rate"] == 50_000_000 // 8  # type: ignore[index]
        assert qdisc(cluster.namespace("w1"), "eth0")["kind"] != "tbf"  # no rate of its own: unshaped
    assert _gone(run_id) == []
    with pytest.raises(ConfigError, match="'rate_bits_per_s' must be >= 8000"):
        make_cluster_config(worker_links=(100,))


@pytest.mark.root
def test_removes_everything_when_the_body_raises() -> None:
    with pytest.raises(RuntimeError, match="boom"), Cluster(make_cluster_config(n_workers=1)) as cluster:  # noqa: PT012
        run_id = cluster.run_id
        sleeper = cluster.start("w0", ["sleep", "600"])
        raise RuntimeError("boom")
    assert _gone(run_id) == []
    assert sleeper.popen.returncode == -signal.SIGKILL


@pytest.mark.root
def test_a_failed_start_is_quoted_and_cleaned_up() -> None:
    with Cluster(make_cluster_config(n_workers=1)) as cluster:
        run_id = cluster.run_id
        proc = cluster.start("w0", [sys.executable, "-c", "import sys; sys.exit('node says: cannot bind')"])
        proc.popen.wait(timeout=30)
        assert proc.stderr_tail() == "node says: cannot bind"
    assert _gone(run_id) == []


_HOLDER = r"""
import sys, time, traceback
from validation.cluster import Cluster
from validation.cluster_config import ClusterConfig, LinkShape
from validation.errors import TerminatedError
config = ClusterConfig(n_workers=1, link=LinkShape(rate_bits_per_s=10**8, burst_bytes=16384, latency_ms=20.0),
                       cpu_cap_ps=0.2, cpu_cap_worker=0.2, subnet=sys.argv[1])
try:
    with Cluster(config) as cluster:
        sleeper = cluster.start("w0", ["sleep", "600"])
        print(cluster.run_id, sleeper.popen.pid, flush=True)
        for _ in range(1200):  # slices, not one sleep(600): a signal that came before the sleep began would
            time.sleep(0.5)    # have its handler run only when the sleep ended (validation.signals.wait_readable)
except TerminatedError as exc:  # ended as the tracegen command ends on it: 128 + its signum
    traceback.print_exc()
    sys.exit(128 + exc.signum)
"""


@pytest.mark.root
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_removes_everything_on_a_signal(signum: int, default_signals: Callable[[], None],
                                        process_tree: Any) -> None:
    """A closed terminal's SIGHUP too: a script holding a cluster died of it at once, leaving its namespaces,
    cgroups and node processes behind (only the tracegen command turned it into an exception).

    The exit status is the one each signal is documented to give: SIGTERM and SIGHUP end in TerminatedError,
    whose ``signum`` the tracegen command exits with as 128 + it (143, 129; the holder does the same), and
    Ctrl-C's KeyboardInterrupt, left uncaught, ends Python by SIGINT itself (-2 here, 130 in a shell). The
    old check, non-zero, let a SIGHUP reported as SIGTERM pass (the command would have exited 143 for it),
    and any other error that ended the script instead of the signal's own."""
    with process_tree.started([sys.executable, "-c", _HOLDER, CLUSTER_SUBNET], default_signals) as holder:
        assert holder.stdout is not None
        run_id, pid = holder.stdout.readline().split()
        assert _gone(run_id) != []
        log_dirs = sorted(pathlib.Path(tempfile.gettempdir()).glob(f"tracegen_{run_id}_*"))
        holder.send_signal(signum)
        _, err = holder.communicate(timeout=30)
    leftovers = _gone(run_id)
    if leftovers:
        cluster_host.clean(run_id)  # not left on the machine for the next test, whatever this one says
    assert log_dirs != [] and not any(d.exists() for d in log_dirs)  # the nodes' stderr logs went too
    assert holder.returncode == (-signal.SIGINT if signum == signal.SIGINT else 128 + signum), err[-2000:]
    expected = ("KeyboardInterrupt" if signum == signal.SIGINT
                else f"TerminatedError: received {signal.Signals(signum).name}")
    assert expected in err
    assert leftovers == []
    deadline = time.monotonic() + 5
    while pathlib.Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:  # reaped by init
        time.sleep(0.05)
    assert not pathlib.Path(f"/proc/{pid}").exists()


@pytest.mark.root
def test_a_killed_runs_cluster_is_reaped_and_a_live_ones_is_not(process_tree: Any) -> None:
    """SIGKILL runs no handler: the run's namespaces, cgroups, node processes and logs stayed until someone ran
    ``tracegen testbed --clean RUNID`` (a CI job killed at its time limit left seven namespaces). Its lock is
    dropped by the kernel, so the next run's reap removes all of it, and leaves a run that is still going alone."""
    with process_tree.started([sys.executable, "-c", _HOLDER, CLUSTER_SUBNET]) as live, \
            process_tree.started([sys.executable, "-c", _HOLDER, "10.79.5.0/24"]) as killed:
        assert live.stdout is not None and killed.stdout is not None
        live_id, _ = live.stdout.readline().split()
        dead_id, sleeper = killed.stdout.readline().split()
        killed.kill()
        killed.wait()
        left = _gone(dead_id)
        logs = sorted(pathlib.Path(tempfile.gettempdir()).glob(f"tracegen_{dead_id}_*"))
        try:
            assert left != [] and logs != [] and pathlib.Path(f"/proc/{sleeper}").exists()
            dead = cluster_host.dead_runs()  # (and any other killed run's on this machine)
            assert dead_id in dead and live_id not in dead
            reaped = cluster_host.reap_dead_runs()
            assert live_id not in reaped and sorted(reaped[dead_id]) == sorted(left)
            assert _gone(dead_id) == [] and not any(d.exists() for d in logs)
            assert not (cluster_host.RUN_LOCK_DIR / f"{dead_id}.lock").exists()
            assert process_tree.wait_gone([int(sleeper)], timeout_s=5) == []
            assert _gone(live_id) != [] and (cluster_host.RUN_LOCK_DIR / f"{live_id}.lock").exists()
        finally:
            live.terminate()  # ends as a run does on SIGTERM: its cluster removed
            live.communicate(timeout=30)
            for run_id in (dead_id, live_id):
                if _gone(run_id):
                    cluster_host.clean(run_id)
    assert _gone(live_id) == [] and not (cluster_host.RUN_LOCK_DIR / f"{live_id}.lock").exists()


class _Hangup(BaseException):
    """What the tracegen command's SIGHUP handler raises (tracegen.cli.Terminated), in a test."""


@pytest.mark.root
def test_a_hangup_while_the_cluster_is_removed_waits_until_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C, then the terminal closed while the cluster was being removed: the SIGHUP's exception stopped the
    removal half-way and left namespaces and cgroups behind. It is held back until all is removed, as SIGINT and
    SIGTERM are."""
    from validation import cluster as cluster_module

    kill = cluster_module.kill_pids

    def kill_then_hang_up(pids: list[int]) -> None:
        os.kill(os.getpid(), signal.SIGHUP)  # the terminal closes while the removal runs: to the process, which
        kill(pids)                           # the kernel hands to any thread of it that takes it (below)

    def hang_up(_signum: int, _frame: object) -> None:
        raise _Hangup

    monkeypatch.setattr(cluster_module, "kill_pids", kill_then_hang_up)
    previous = signal.signal(signal.SIGHUP, hang_up)
    run_id = ""
    done = threading.Event()
    reader = threading.Thread(target=done.wait, args=(60,), daemon=True)  # a run's pipe reader: the removal's
    reader.start()  # signal mask, its own thread's, left this thread to take the SIGHUP, and Python ran the handler
    try:
        with pytest.raises(_Hangup), Cluster(make_cluster_config(n_workers=1)) as cluster:  # noqa: PT012
            run_id = cluster.run_id
            cluster.start("w0", ["sleep", "600"])
        leftovers = _gone(run_id)
    finally:
        done.set()
        signal.signal(signal.SIGHUP, previous)
        if run_id and _gone(run_id):
            cluster_host.clean(run_id)
    assert leftovers == []


_CRASHER = r"""
import os, signal, sys
from validation.cluster import Cluster
from validation.cluster_config import ClusterConfig, LinkShape
config = ClusterConfig(n_workers=1, link=LinkShape(rate_bits_per_s=10**8, burst_bytes=16384, latency_ms=20.0),
                       cpu_cap_ps=0.2, cpu_cap_worker=0.2, subnet=sys.argv[1])
cluster = Cluster(config).__enter__()
cluster.start("w0", ["sleep", "600"])
print(cluster.run_id, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # a crash: nothing of the cluster is removed
"""


@pytest.mark.root
def test_clean_removes_what_a_killed_run_left(capsys: pytest.CaptureFixture[str]) -> None:
    from tracegen.cli import main

    crasher = subprocess.run([sys.executable, "-c", _CRASHER, CLUSTER_SUBNET], capture_output=True, text=True,
                             timeout=60, check=False)
    run_id = crasher.stdout.split()[0]
    assert crasher.returncode == -signal.SIGKILL and _gone(run_id) != []
    assert main(["testbed", "--clean", run_id]) == 0
    assert f"removed netns tg_{run_id}_w0" in capsys.readouterr().out
    assert _gone(run_id) == []
    assert main(["testbed", "--clean", "nothing"]) == 2  # not a run id: refused, nothing touched
