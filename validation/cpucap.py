"""The CPU this process may use, as ``tracegen netbench`` records it for the PS host: its CPU affinity, lowered by
a CFS quota on its cgroup or any cgroup above it, and how that quota is enforced.

Both cgroup versions are read, because a PS limited in a container is the common case: cgroup v1's ``cpu``
controller (``cpu.cfs_quota_us`` and ``cpu.cfs_period_us``, -1 for none) and cgroup v2's ``cpu.max``
(``QUOTA PERIOD``, or ``max PERIOD`` for none). A limit on an ancestor binds its children (a pod's limit above its
containers'), so every cgroup from this process's up to the hierarchy's root counts, and the tightest wins.
Without a readable hierarchy (no cgroup mount, or a sysfs that does not show it: inside a network namespace made
by ``ip netns exec``) nothing is found and the affinity stands.
"""

from __future__ import annotations

import os
import pathlib

CGROUP_ROOT = pathlib.Path("/sys/fs/cgroup")
PROC_CGROUP = pathlib.Path("/proc/self/cgroup")


def _ancestors(base: pathlib.Path, path: str) -> list[pathlib.Path]:
    """``base/path`` and each directory above it up to ``base``, deepest first."""
    parts = [p for p in path.split("/") if p and p not in (".", "..")]
    return [base.joinpath(*parts[:i]) for i in range(len(parts), -1, -1)]


def _fields(path: pathlib.Path) -> list[str] | None:
    try:
        return path.read_text().split()
    except OSError:
        return None


def _limit(quota: str, period: str) -> tuple[int, int] | None:
    """(quota_us, period_us) when both are positive integers (a quota of -1 or "max" is none)."""
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    return (q, p) if q > 0 and p > 0 else None


def _v1_limit(directory: pathlib.Path) -> tuple[int, int] | None:
    quota, period = _fields(directory / "cpu.cfs_quota_us"), _fields(directory / "cpu.cfs_period_us")
    return _limit(quota[0], period[0]) if quota and period else None


def _v2_limit(directory: pathlib.Path) -> tuple[int, int] | None:
    fields = _fields(directory / "cpu.max")
    return _limit(fields[0], fields[1]) if fields and len(fields) == 2 else None


def cfs_quota(proc_cgroup: str | None = None, root: pathlib.Path = CGROUP_ROOT) -> tuple[int, int] | None:
    """(quota_us, period_us) of the tightest CFS quota over this process's cgroups and their ancestors (module
    docstring); ``proc_cgroup`` is ``/proc/self/cgroup``'s text (read when None). None when there is none."""
    if proc_cgroup is None:
        try:
            proc_cgroup = PROC_CGROUP.read_text()
        except OSError:
            return None
    found: list[tuple[int, int]] = []
    for line in proc_cgroup.splitlines():
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        hierarchy, controllers, path = fields
        if hierarchy == "0" and not controllers:  # cgroup v2
            found += [q for d in _ancestors(root, path) if (q := _v2_limit(d)) is not None]
        elif "cpu" in controllers.split(","):  # cgroup v1, mounted as cpu or as cpu,cpuacct
            for base in dict.fromkeys((root / "cpu", root / controllers)):
                found += [q for d in _ancestors(base, path) if (q := _v1_limit(d)) is not None]
    return min(found, key=lambda q: q[0] / q[1], default=None)


def affinity_cores() -> float:
    """Cores this process may run on (its CPU affinity)."""
    return float(len(os.sched_getaffinity(0)))


def cpu_allowance() -> float:
    """Cores this process may use: its CPU affinity, lowered by a CFS quota (module docstring)."""
    affinity = affinity_cores()
    quota = cfs_quota()
    return round(affinity if quota is None else min(affinity, quota[0] / quota[1]), 3)


def cpu_quota() -> dict[str, float] | None:
    """How this process's CPU cap is enforced, as ``link-profile.json`` records it (``ps.cpu_quota``): the cores
    it may run on and the CFS period, when a quota holds it below them; None otherwise."""
    affinity = affinity_cores()
    quota = cfs_quota()
    if quota is None or quota[0] / quota[1] >= affinity:
        return None
    return {"host_cores": affinity, "period_us": quota[1]}
