"""The machine that hosts emulated clusters (:mod:`validation.cluster`), seen from outside any one cluster.

Whether it can host one (:func:`check_host`: root, ``ip`` and ``tc``, the cgroup v1 ``cpu`` controller, CPU to
spare, a subnet none of its addresses or routes overlaps); what runs left on it and their removal
(:func:`leftovers`, :func:`clean`: ``tracegen testbed --clean``); the lock each running cluster holds
(:func:`hold_run_lock`), by which what a killed run left is told from what a live one holds
(:func:`reap_dead_runs`); and the steps that building and removing a cluster share with that removal: short
``ip``/``tc`` commands, killing processes, removing a cgroup.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import ipaddress
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence

from validation.cluster_config import ClusterConfig, parse_subnet
from validation.errors import ClusterError, ConfigError
from validation.stderr import summarize_stderr

CGROUP_CPU_ROOT = pathlib.Path("/sys/fs/cgroup/cpu")
NAMESPACE_PREFIX = "tg_"
CGROUP_PREFIX = "tracegen_"
COMMAND_TIMEOUT_S = 30.0
RUN_ID_LENGTH = 6
# One file per cluster, locked (flock) by the process that built it for as long as it stands. The kernel drops
# the lock when that process dies, SIGKILL included, so a run whose namespaces remain but whose lock is free is
# dead. /run is a tmpfs: the files go at a reboot, as namespaces and cgroups do.
RUN_LOCK_DIR = pathlib.Path("/run/tracegen")


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
    addrs = json.loads(run_command(["ip", "-j", "-4", "addr", "show"]) or "[]")
    for link in addrs:
        for info in link.get("addr_info", []):
            iface = ipaddress.ip_interface(f"{info['local']}/{info.get('prefixlen', 32)}")
            if iface.network.overlaps(network):
                raise ClusterError(
                    f"subnet {network} is already in use on this host: {info['local']}/{info.get('prefixlen')} "
                    f"on {link.get('ifname')}; choose another subnet"
                )
    routes = json.loads(run_command(["ip", "-j", "-4", "route", "show", "table", "all"]) or "[]")
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
        for line in run_command(["ip", "netns", "list"]).splitlines():
            name = line.split()[0] if line.strip() else ""
            if name.startswith(NAMESPACE_PREFIX):
                found.append(f"netns {name}")
    if CGROUP_CPU_ROOT.is_dir():
        found.extend(f"cgroup {p}" for p in sorted(CGROUP_CPU_ROOT.glob(f"{CGROUP_PREFIX}*")) if p.is_dir())
    return found


def hold_run_lock(run_id: str) -> int:
    """Create and lock run ``run_id``'s lock file; the open descriptor, to keep until the cluster is removed
    (:func:`release_run_lock`). Not inherited by the processes the cluster starts (Python's descriptors are not),
    so an orphaned node process does not keep a dead run looking alive."""
    path = RUN_LOCK_DIR / f"{run_id}.lock"
    while True:
        try:
            RUN_LOCK_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise ClusterError(f"{RUN_LOCK_DIR}: cannot create the lock of cluster {run_id}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise ClusterError(f"{path}: held by another process ({exc.strerror})") from exc
        try:
            if path.stat().st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)  # another run's reap took the file for a dead run's between its creation and its lock: anew
    os.write(fd, f"{os.getpid()}\n".encode())
    return fd


def release_run_lock(run_id: str, fd: int) -> None:
    """Remove run ``run_id``'s lock file, then let go of the lock ``fd`` holds."""
    with contextlib.suppress(FileNotFoundError):
        (RUN_LOCK_DIR / f"{run_id}.lock").unlink()
    os.close(fd)


def leftover_name(leftover: str) -> str:
    """The namespace's or cgroup's own name in a :func:`leftovers` entry (``netns tg_3fa9c1_w0``: ``tg_3fa9c1_w0``;
    ``cgroup /sys/fs/cgroup/cpu/tracegen_3fa9c1_ps``: ``tracegen_3fa9c1_ps``)."""
    return leftover.rsplit("/", 1)[-1].rsplit(" ", maxsplit=1)[-1]


def _run_id(leftover: str) -> str:
    """The run id in a :func:`leftovers` entry, or "" where its name holds none."""
    name = leftover_name(leftover)
    return name.split("_")[1] if name.count("_") >= 2 else ""


def _is_run_id(text: str) -> bool:
    """Whether ``text`` is a run id as :class:`validation.cluster.Cluster` makes them: RUN_ID_LENGTH hex digits."""
    return len(text) == RUN_ID_LENGTH and all(c in "0123456789abcdef" for c in text)


def dead_runs() -> list[str]:
    """The runs whose namespaces or cgroups are on this machine and whose process is gone: their lock file is
    there and nobody holds it. A run with no lock file (one from before the locks, or whose file was removed by
    hand) is not among them: whether it still runs cannot be told, and ``tracegen testbed --clean`` removes it."""
    dead = []
    locked = {p.stem for p in RUN_LOCK_DIR.glob("*.lock")}  # and the locks of runs that died having removed all
    for run_id in sorted({_run_id(x) for x in leftovers()} | locked):
        if not _is_run_id(run_id):
            continue  # not a run's name (a file put there by hand)
        try:
            fd = os.open(RUN_LOCK_DIR / f"{run_id}.lock", os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # held: the run is alive
        finally:
            os.close(fd)
        dead.append(run_id)
    return dead


def reap_dead_runs() -> dict[str, list[str]]:
    """Remove what each dead run (:func:`dead_runs`: one killed with SIGKILL, whose handlers never ran) left:
    ``{run_id: what was removed}`` (empty where only its lock file was left). ClusterError lists what could not
    be removed."""
    return {run_id: clean(run_id) for run_id in dead_runs()}


def clean(run_id: str) -> list[str]:
    """Remove what the run ``run_id`` left (``all``: every run's): its node processes, cgroups and namespaces
    (which take its veths, bridge and qdiscs). For a crashed run: a run still going is stopped. Returns what was
    removed; ClusterError lists what could not be."""
    if run_id != "all" and not _is_run_id(run_id):
        raise ConfigError(f"'run_id' must be the 6 hex digits a run printed ('cluster 3fa9c1 is up') or 'all' "
                          f"(got {run_id!r})")
    tag = "" if run_id == "all" else f"{run_id}_"
    removed, problems = [], []
    namespaces = [x.split(" ", 1)[1] for x in leftovers() if x.startswith(f"netns {NAMESPACE_PREFIX}{tag}")]
    cgroups = [pathlib.Path(x.split(" ", 1)[1]) for x in leftovers()
               if x.startswith(f"cgroup {CGROUP_CPU_ROOT / (CGROUP_PREFIX + tag)}")]
    for path in cgroups:
        kill_pids(read_pids(path / "cgroup.procs"))
    for ns in namespaces:
        kill_pids(namespace_pids(ns))
    for path in cgroups:
        problem = remove_cgroup(path)
        (problems.append(problem) if problem else removed.append(f"cgroup {path}"))
    for ns in sorted(namespaces, key=lambda n: n.endswith("_br")):  # node namespaces first, the bridge's last
        try:
            run_command(["ip", "netns", "del", ns], missing_ok=True)
            removed.append(f"netns {ns}")
        except ClusterError as err:
            problems.append(str(err))
    if problems:
        raise ClusterError("could not remove " + "; ".join(problems))
    for lock in sorted(RUN_LOCK_DIR.glob(f"{run_id}.lock" if tag else "*.lock")):  # the run is gone: so is its lock
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
    if tag:  # and the nodes' stderr logs (validation.cluster: a temporary directory tracegen_RUNID_*)
        for logs in pathlib.Path(tempfile.gettempdir()).glob(f"tracegen_{tag}*"):
            shutil.rmtree(logs, ignore_errors=True)
    return removed


def run_command(argv: Sequence[str], timeout_s: float = COMMAND_TIMEOUT_S, missing_ok: bool = False) -> str:
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
        raise ClusterError(f"'{' '.join(argv)}' failed with code {done.returncode}: {summarize_stderr(err)}")
    return done.stdout


def read_pids(path: pathlib.Path) -> list[int]:
    """The pids listed in a cgroup's ``cgroup.procs`` file ``path``; none when it is gone."""
    try:
        return [int(line) for line in path.read_text().split()]
    except FileNotFoundError:
        return []


def namespace_pids(namespace: str) -> list[int]:
    """The pids of the processes inside network namespace ``namespace``; none when it is gone."""
    try:
        out = run_command(["ip", "netns", "pids", namespace], missing_ok=True)
    except ClusterError:
        return []
    return [int(word) for word in out.split()]


def kill_pids(pids: Sequence[int]) -> None:
    """SIGKILL each of ``pids`` that still runs."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def remove_cgroup(path: pathlib.Path) -> str | None:
    """Remove the cgroup ``path``, killing what is left in it, for up to 5 s; what could not be removed, or None."""
    deadline = time.monotonic() + 5.0
    while True:
        try:
            path.rmdir()
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                return f"cgroup {path} ({exc.strerror}; tasks: {read_pids(path / 'cgroup.procs')})"
            kill_pids(read_pids(path / "cgroup.procs"))
            time.sleep(0.05)
        else:
            return None
