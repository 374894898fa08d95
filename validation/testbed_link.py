"""The link profile of a testbed condition, measured as a user would before buying nodes: ``tracegen netbench``
between the PS and *one* client host, inside the emulated cluster.

A cluster of two nodes is built with the condition's PS link shape and PS CPU cap: ``ps`` runs
``tracegen netbench serve --once`` and ``w0`` — the client host — runs ``tracegen netbench run`` with all its
client processes, under a CPU cap of its own (``client_cores``, default: what the PS leaves of the machine less
a margin), so that the clients are not what limits the rates. Never the N-worker cluster: what it measures is
the answer the prediction is judged against, not an input.

The PS's cap is a CFS quota (:mod:`validation.cluster`). ``netbench serve`` records one it can see in its own
cgroup, but inside a node's network namespace ``ip netns exec`` gives it a sysfs without the cgroup mounts, so
the testbed, which set the quota, records it (``ps.cpu_quota``, and a note saying so). Profiles the testbed
measured from 2026-12-01 14:09 to 2026-12-02 13:45 lack it (``data/README.md``).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import subprocess
import sys
import time

from parsers.linkprofile import CpuQuota, LinkProfile, read_link_profile, write_link_profile
from validation import Progress
from validation.cluster import Cluster
from validation.cluster_config import ClusterConfig
from validation.cluster_host import available_cores
from validation.errors import ConfigError, JobError

CONTROL_PORT = 7070
TF_PORT = 2222
CLIENT_MARGIN_CORES = 0.1


def ps_quota(cluster_config: ClusterConfig) -> CpuQuota | None:
    """How the testbed enforces the PS's cap: a CFS quota on this machine's cores (None when the cap is all of
    them)."""
    host = float(available_cores())
    return (CpuQuota(host_cores=host, period_us=cluster_config.period_us_for(cluster_config.cpu_cap_ps))
            if cluster_config.cpu_cap_ps < host else None)


def with_quota(profile: LinkProfile, quota: CpuQuota | None) -> LinkProfile:
    """``profile`` with the PS's ``quota`` recorded, when it has none of its own (module docstring)."""
    if quota is None or profile.cpu_quota is not None:
        return profile
    return dataclasses.replace(
        profile, cpu_quota=quota,
        ps={**profile.ps, "cpu_quota": {"host_cores": quota.host_cores, "period_us": quota.period_us}},
        notes=(*profile.notes, "ps.cpu_quota recorded by tracegen testbed, which set it: the PS's process cannot see "
                               "its cgroup from inside its network namespace"))


def default_client_cores(ps_cores: float) -> float:
    """The client host's cap: the machine's cores less the PS's cap and a margin, at most 2 cores."""
    return round(min(2.0, available_cores() - ps_cores - CLIENT_MARGIN_CORES), 2)


def measure_link_profile(cluster_config: ClusterConfig, out_path: pathlib.Path, *, max_connections: int = 8,
                         window_s: float = 3.0, timeout_s: float = 600.0,
                         progress: Progress | None = None, tensors: int | None = None,
                         tensor_bytes: int | None = None) -> LinkProfile:
    """Run netbench between the PS and one client host of ``cluster_config`` (its ``n_workers`` must be 1 and
    its worker cap is the client host's) and write the profile to ``out_path``; ``tensors`` and ``tensor_bytes``
    (when given) are ``netbench run``'s ``--tensors`` and ``--tensor-bytes``."""
    report = progress or (lambda _line: None)
    if cluster_config.n_workers != 1:
        raise ConfigError(f"a link profile is measured with one client host (got n_workers={cluster_config.n_workers})")
    if out_path.exists():
        raise ConfigError(f"{out_path}: already exists; move it away to measure again")
    with Cluster(cluster_config) as cluster:
        ps_ip, client_ip = cluster.address("ps"), cluster.address("w0")
        report(f"netbench: cluster {cluster.run_id} is up: PS {ps_ip} ({cluster_config.cpu_cap_ps:g} cores), client "
               f"host {client_ip} ({cluster_config.cpu_cap_worker:g} cores)")
        server = cluster.start("ps", [sys.executable, "-m", "tracegen", "netbench", "serve", "--once", "--bind",
                                      ps_ip, "--port", str(CONTROL_PORT), "--tf-port", str(TF_PORT), "--cores",
                                      str(cluster_config.cpu_cap_ps)],
                               stdout=subprocess.DEVNULL)
        time.sleep(0.5)
        if server.popen.poll() is not None:
            raise JobError(f"netbench serve exited with code {server.popen.returncode}: {server.stderr_tail()}")
        tmp = out_path.with_name(f".{out_path.name}.partial")
        tmp.unlink(missing_ok=True)
        client = cluster.start("w0", [sys.executable, "-m", "tracegen", "netbench", "run", "--ps",
                                      f"{ps_ip}:{CONTROL_PORT}", "--out", str(tmp), "--force", "--connect-timeout",
                                      "120", "--max-connections", str(max_connections), "--window", str(window_s),
                                      *(["--tensors", str(tensors)] if tensors is not None else []),
                                      *(["--tensor-bytes", str(tensor_bytes)] if tensor_bytes is not None else [])],
                               stdout=subprocess.PIPE)
        assert client.popen.stdout is not None  # noqa: S101 - started with a pipe
        deadline = time.monotonic() + timeout_s
        for line in client.popen.stdout:
            report(line.rstrip().replace(str(tmp), str(out_path)))  # it is renamed once read back
            if time.monotonic() > deadline:
                break
        try:
            code = client.popen.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise JobError(f"netbench run did not finish within {timeout_s:g} s") from None
        if code != 0:
            raise JobError(f"netbench run exited with code {code}: {client.stderr_tail()}")
    profile = dataclasses.replace(with_quota(read_link_profile(tmp), ps_quota(cluster_config)),
                                  source=os.fspath(out_path))
    write_link_profile(profile, out_path)
    tmp.unlink()
    return profile
