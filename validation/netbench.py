"""``tracegen netbench``: measure the PS link the way TensorFlow uses it, between two hosts.

``serve`` runs on the host that will be the PS. It listens on a control port and, when ``run`` asks, starts a
real TensorFlow PS task (:mod:`validation.netbench_node`) for a cluster whose workers are ``run``'s client
processes. ``run`` runs on one other host: it starts client processes there — each a TensorFlow worker task
with its own gRPC connection to the PS — and measures, in one common window per point, for k = 1, 2, 4, ...
connections per direction:

- ``pull``: k clients reading PS variables back to back (PS -> clients, as parameter reads), two steps in
  flight per client so that its connection never idles between steps;
- ``push``: k clients assigning PS variables (clients -> PS, as gradient pushes), likewise;
- ``both``: k clients pulling and k more pushing at once (the PS link busy both ways);
- ``cycle``: k clients each pulling then pushing, one step at a time (a worker's step without its
  computation): not an input of the link model but a check of it (:func:`tracegen.linkspec.check_profile`);
- ``rpc_pull`` / ``rpc_push``: k clients reading / assigning 64 tensors of 1 KiB per step: how many requests
  per second the PS serves, which bounds a model with many small tensors;
- meanwhile one more client reads a 4-byte variable back to back: the round trip of a small request under
  each load, and once on the idle link.

Steps are sized so that one takes about ``target_step_s`` at the first point's rate, and a window is
lengthened until every client completes enough steps inside it. Doubling k stops once no mode's rate changes
by more than ``tolerance`` (or at ``max_connections``). ``run`` writes ``link-profile.json``
(:mod:`parsers.linkprofile`), with the CPU the PS process used (read by ``serve`` from ``/proc``). The control
protocol is JSON lines over TCP (``hello``, ``start``, ``cpu``, ``stop``); like TensorFlow's own gRPC servers it
has no authentication: use it on a network you trust. Every process either side starts is killed when the
session ends, however it ends.

This module is ``run``, its measurement and the profile it writes; ``serve`` is :mod:`validation.netbench_server`,
the control connection between the two :mod:`validation.netbench_control`, and the TensorFlow processes either side
starts :mod:`validation.netbench_child`.
"""

from __future__ import annotations

import dataclasses
import datetime
import pathlib
import socket
import time
from collections.abc import Sequence
from typing import Any

from parsers.linkprofile import LinkProfile, ProfilePoint
from tracegen import own_version
from tracegen.address import join_address, unmapped
from tracegen.metrics import fraction_in_window
from validation import Progress
from validation.cpucap import cpu_allowance
from validation.errors import ConfigError
from validation.netbench_child import START_LIMIT, Child, child_processes
from validation.netbench_control import MAX_WORKERS, Control, split_address
from validation.netbench_node import SMALL_BYTES, SMALL_TENSORS, TENSOR_BYTES, TENSORS, payload_fault, step_sizes
from validation.ports import free_ports


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NetbenchConfig:
    """What ``netbench run`` measures. ``ps``: the ``serve`` control address, ``HOST:PORT`` (``[IPV6]:PORT``)."""

    ps: str
    max_connections: int = 8
    window_s: float = 3.0
    tensors: int = TENSORS
    tensor_bytes: int = TENSOR_BYTES
    target_step_s: float = 0.15
    tolerance: float = 0.05
    timeout_s: float = 120.0
    connect_timeout_s: float = 10.0  # how long a 'serve' that refuses or does not answer is waited for

    def __post_init__(self) -> None:
        split_address(self.ps, "ps")
        if not 1 <= self.max_connections <= MAX_WORKERS // 2:
            raise ConfigError(f"'max_connections' must be from 1 to {MAX_WORKERS // 2} (got {self.max_connections})")
        if not 0.2 <= self.window_s <= 600:
            raise ConfigError(f"'window_s' must be from 0.2 to 600 seconds (got {self.window_s})")
        if fault := payload_fault(self.tensors, self.tensor_bytes):
            raise ConfigError(fault)
        if not 0.01 <= self.target_step_s <= 10:
            raise ConfigError(f"'target_step_s' must be from 0.01 to 10 seconds (got {self.target_step_s})")
        if not 0 < self.tolerance < 1:
            raise ConfigError(f"'tolerance' must be between 0 and 1 (got {self.tolerance})")
        if not self.timeout_s > 0:
            raise ConfigError(f"'timeout_s' must be > 0 (got {self.timeout_s})")
        if not 0 < self.connect_timeout_s <= 3600:
            raise ConfigError(f"'connect_timeout_s' must be > 0 and at most 3600 seconds "
                              f"(got {self.connect_timeout_s})")


def connection_counts(max_connections: int) -> list[int]:
    """1, 2, 4, ... up to ``max_connections`` (which ends the list even when it is not a power of two)."""
    counts = [1]
    while counts[-1] * 2 <= max_connections:
        counts.append(counts[-1] * 2)
    if counts[-1] != max_connections:
        counts.append(max_connections)
    return counts


def run_netbench(config: NetbenchConfig, progress: Progress | None = None) -> LinkProfile:
    """Measure the link profile against a ``serve`` at ``config.ps`` (module docstring)."""
    report = progress or (lambda _line: None)
    control = Control(config.ps, config.timeout_s, config.connect_timeout_s, report)
    try:
        hello = control.hello()
        client_ip = unmapped(control.sock.getsockname()[0])
        slots = 2 * config.max_connections + 1  # the last slot is the probe's
        workers = [join_address(client_ip, p) for p in free_ports(slots)]
        ps_address = control.ask({"op": "start", "workers": workers})["ps"]
        report(f"netbench: PS task at {ps_address} ({hello['cores']:g} cores, TensorFlow {hello['tensorflow']}); "
               f"clients on {client_ip}")
        with child_processes() as (children, log_dir):
            bench = _Bench(config, control, {"ps": [ps_address], "worker": workers}, children, log_dir, report)
            idle_rtt_ns = bench.idle_rtt_ns()
            points = bench.measure_all()
    finally:
        control.close()
    step_bytes = config.tensors * (config.tensor_bytes // 4) * 4
    return LinkProfile(
        tool=f"tracegen netbench {own_version()}",
        date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        ps={"address": ps_address, "host": hello["host"], "cores": hello["cores"], "tensorflow": hello["tensorflow"],
            **({"cpu_quota": hello["cpu_quota"]} if hello.get("cpu_quota") else {})},
        client={"address": client_ip, "host": socket.gethostname(), "cores": cpu_allowance(),
                "processes": 2 * max(p.connections for p in points) + 1},
        tensors=config.tensors, tensor_bytes=step_bytes // config.tensors, window_s=config.window_s,
        idle_rtt_ns=idle_rtt_ns, points=tuple(points))


STREAMS = 2  # steps in flight per loading client: its connection never idles between steps, as a worker's
# does not while it has many tensors to move
MIN_STEPS_IN_WINDOW = 4  # every loading client completes this many steps inside a window, else it is lengthened
MAX_WINDOW_S = 40.0


class _Bench:
    """The client processes of one ``run`` and the measurement of each point."""

    def __init__(self, config: NetbenchConfig, control: Control, cluster: dict[str, list[str]],
                 children: list[Child], log_dir: pathlib.Path, report: Progress) -> None:
        self.config, self.control, self.cluster = config, control, cluster
        self.children, self.log_dir, self.report = children, log_dir, report
        self.tensor_bytes = (config.tensor_bytes // 4) * 4
        self.rate_1 = 0.0  # one connection's pull rate, once measured: sizes every later point's steps
        first, self.probe = self._start([0, len(cluster["worker"]) - 1])  # client 0 initialises the variables
        self._loaders = [first]

    def _start(self, indices: Sequence[int]) -> list[Child]:
        started = []
        for i in indices:
            job = {"role": "client", "index": i, "cluster": self.cluster, "tensors": self.config.tensors,
                   "tensor_bytes": self.config.tensor_bytes}
            started.append(Child(job, self.log_dir, f"client {i}"))
            self.children.append(started[-1])
        until = time.monotonic() + START_LIMIT * self.config.timeout_s
        for child in started:  # they start side by side: later ones are mostly ready by the time they are read
            child.receive_started("ready", self.config.timeout_s, until)
        return started

    def loaders(self, count: int) -> list[Child]:
        """The first ``count`` loading clients, started as needed (client 0 first: it initialises)."""
        if len(self._loaders) < count:
            self._loaders += self._start(range(len(self._loaders), count))
        return self._loaders[:count]

    def idle_rtt_ns(self) -> int | None:
        """The small request's round trip with nothing else moving (median over one window); None when none
        completed inside it (the profile then records it as unknown)."""
        start_s = time.monotonic() + 0.2
        end_s = start_s + min(self.config.window_s, 2.0)
        self.probe.send({"mode": "probe", "start_s": start_s, "end_s": end_s})
        rtt = _median_step_ns(self.probe.receive("done", end_s + self.config.timeout_s), start_s, end_s)
        if rtt is None:
            self.report(f"netbench: no small request completed in {end_s - start_s:.1f} s on the idle link; its round "
                        "trip is recorded as unknown")
        else:
            self.report(f"netbench: small request round trip, link idle: {rtt / 1e6:.2f} ms")
        return rtt

    def measure_all(self) -> list[ProfilePoint]:
        """Every point, doubling k until no mode's total rate moves by more than the tolerance."""
        points: list[ProfilePoint] = []
        previous: dict[str, float] = {}
        lead_s = 1.0
        for k in connection_counts(self.config.max_connections):
            current: dict[str, float] = {}
            for mode in ("pull", "push", "both", "cycle"):
                roles = {"pull": ["pull"] * k, "push": ["push"] * k, "both": ["pull"] * k + ["push"] * k,
                         "cycle": ["cycle"] * k}[mode]
                point, lead_s = self.point(mode, k, roles, lead_s)
                points.append(point)
                current[mode] = point.pull_bytes_per_s + point.push_bytes_per_s
                cpu = "" if point.ps_cpu_cores is None else f", PS CPU {point.ps_cpu_cores:.2f} cores"
                self.report(f"netbench: {mode:5s} k={k}: pull {point.pull_bytes_per_s / 1e6:7.1f} MB/s, push "
                            f"{point.push_bytes_per_s / 1e6:7.1f} MB/s, small request "
                            f"{(point.probe_rtt_ns or 0) / 1e6:.1f} ms{cpu}")
            for mode in ("rpc_pull", "rpc_push"):
                point, lead_s = self.point(mode, k, [mode] * k, lead_s)
                points.append(point)
                current[mode] = point.pull_bytes_per_s + point.push_bytes_per_s
                self.report(f"netbench: {mode:5s} k={k}: {point.transfers_per_s:8.0f} tensors of "
                            f"{SMALL_BYTES} B per second, small request {(point.probe_rtt_ns or 0) / 1e6:.1f} ms")
            tol = self.config.tolerance
            if previous and all(abs(current[m] - previous[m]) <= tol * previous[m] for m in current):
                self.report(f"netbench: no rate moved by more than {tol:.0%} from k={k // 2} to k={k}; done")
                break
            previous = current
        return points

    def tensors_for(self, k: int) -> int:
        """Tensors per step so that a step of one of k connections takes about ``target_step_s``."""
        if not self.rate_1:
            return self.config.tensors
        fit = self.rate_1 / k * self.config.target_step_s / self.tensor_bytes
        return max((n for n in step_sizes(self.config.tensors) if n <= fit), default=1)

    def point(self, mode: str, k: int, roles: Sequence[str], lead_s: float) -> tuple[ProfilePoint, float]:
        """One measurement, its window lengthened until every client completes enough steps in it."""
        clients = self.loaders(len(roles))
        window_s = self.config.window_s
        small = mode.startswith("rpc_")
        n = SMALL_TENSORS if small else self.tensors_for(k)
        step_bytes = n * (SMALL_BYTES if small else self.tensor_bytes)
        while True:
            start_s = time.monotonic() + lead_s
            end_s = start_s + window_s
            for child, role in zip(clients, roles, strict=True):
                streams = 1 if role == "cycle" else STREAMS  # a cycle is a worker's own sequence: one at a time
                child.send({"mode": role, "tensors": n, "start_s": start_s, "end_s": end_s, "streams": streams})
            self.probe.send({"mode": "probe", "start_s": start_s, "end_s": end_s})
            time.sleep(max(0.0, start_s - time.monotonic()))
            cpu_a = self.control.ask({"op": "cpu"})
            time.sleep(max(0.0, end_s - time.monotonic()))
            cpu_b = self.control.ask({"op": "cpu"})
            deadline = end_s + self.config.timeout_s
            done = [child.receive("done", deadline) for child in clients]
            rtt = _median_step_ns(self.probe.receive("done", deadline), start_s, end_s)
            inside = [sum(1 for s, e in d["steps"] if s >= start_s and e <= end_s) for d in done]
            longest_s = max(max((e - s for s, e in d["steps"]), default=0.0) for d in done)
            if min(inside) >= MIN_STEPS_IN_WINDOW or window_s >= MAX_WINDOW_S:
                break
            window_s = min(MAX_WINDOW_S, max(2 * window_s, (MIN_STEPS_IN_WINDOW + 1) * longest_s))
            self.report(f"netbench: {mode} k={k}: a client completed only {min(inside)} steps; measuring again "
                        f"over {window_s:.1f} s")
        rates = {"pull": 0.0, "push": 0.0}
        for d, role in zip(done, roles, strict=True):
            steps = [(float(s), float(e)) for s, e in d["steps"]]
            moved = fraction_in_window(steps, start_s, end_s) * step_bytes / window_s
            carries = {"cycle": ("pull", "push"), "rpc_pull": ("pull",), "rpc_push": ("push",)}
            for direction in carries.get(role, (role,)):
                rates[direction] += moved
        span = cpu_b["at_s"] - cpu_a["at_s"]
        cpu = (cpu_b["cpu_s"] - cpu_a["cpu_s"]) / span if span > 0 else None
        moved = rates["pull"] + rates["push"]
        point = ProfilePoint(mode=mode, connections=k, pull_bytes_per_s=rates["pull"],
                             push_bytes_per_s=rates["push"], ps_cpu_cores=cpu, probe_rtt_ns=rtt, window_s=window_s,
                             step_bytes=step_bytes, transfers_per_s=moved / (step_bytes / n))
        if mode == "pull" and k == 1:
            self.rate_1 = rates["pull"]
        return point, max(1.0, min(5.0, longest_s))


def _median_step_ns(done: dict[str, Any], start_s: float, end_s: float) -> int | None:
    inside = sorted(e - s for s, e in done["steps"] if s >= start_s and e <= end_s)
    return round(inside[len(inside) // 2] * 1e9) if inside else None
