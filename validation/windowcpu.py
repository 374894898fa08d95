"""Where the CPU went during a testbed window: the PS processes', the workers', and the whole machine's.

The emulated cluster's nodes share one host. Their caps bound each node, but not what they take together, nor
the kernel's network work (softirq, charged to no node's cgroup), nor what a virtual machine's hypervisor takes
away (steal). A measurement that does not say these is hard to trust: the same configuration measured on a day
when the host's hypervisor stole half a core is another machine. So every window records, read by two timers at
its start and end:

- the PS processes' and the workers' CPU (user and system time of each process, :func:`process_cpu_s`), in
  cores over the window;
- how often the PS's threads stopped (:func:`process_switches`, summed over every thread): *wake-ups*, the
  voluntary context switches (a thread blocked, waiting for work, a lock or a socket, and was woken again), and
  *preemptions*, the involuntary ones (a thread taken off its core: the CFS quota running out, another task's
  turn). With the rate, the PS's wake-ups per step: whether each step costs the PS less CPU at larger N because
  its threads find work waiting instead of sleeping and being woken for it;
- the host's (``/proc/stat``'s first line, all CPUs): *busy* = user + nice + system + irq + softirq (what this
  machine ran; not idle, not iowait, not steal), *softirq* its share spent in softirq (packets), and *steal*
  the time the hypervisor ran something else while this machine wanted to run.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import threading
import time
from collections.abc import Sequence
from typing import Protocol

PROC_STAT = pathlib.Path("/proc/stat")


class Process(Protocol):
    """A node's process, as :class:`~validation.cluster.NodeProcess` is."""

    def cpu_s(self) -> float | None:
        """CPU seconds used so far; None once it is gone."""
        ...

    def switches(self) -> tuple[int, int] | None:
        """(voluntary, involuntary) context switches of all its threads so far; None once it is gone."""
        ...


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds (user and system, all threads) process ``pid`` has used so far; None once it is gone."""
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14, 15
    except (OSError, IndexError, ValueError):
        return None


def process_switches(pid: int, proc: pathlib.Path = pathlib.Path("/proc")) -> tuple[int, int] | None:
    """(voluntary, involuntary) context switches of every thread of process ``pid`` so far (``/proc/<pid>/task/
    */status``; a process's own ``status`` counts only its first thread); None once it is gone. A thread that
    ended since an earlier reading takes its switches with it: a later sum can be smaller."""
    voluntary = involuntary = 0
    try:
        tasks = list((proc / str(pid) / "task").iterdir())
    except OSError:
        return None
    for task in tasks:
        try:
            text = (task / "status").read_text()
        except OSError:
            continue  # the thread ended meanwhile
        for line in text.splitlines():
            key, _, value = line.partition(":")
            if key == "voluntary_ctxt_switches":
                voluntary += int(value)
            elif key == "nonvoluntary_ctxt_switches":
                involuntary += int(value)
    return (voluntary, involuntary) if tasks else None


@dataclasses.dataclass(frozen=True, slots=True)
class HostCpu:
    """Cumulative CPU seconds of the whole machine (all CPUs) since boot."""

    busy_s: float
    softirq_s: float
    steal_s: float


def read_host_cpu(path: pathlib.Path = PROC_STAT) -> HostCpu | None:
    """The machine's CPU so far from ``/proc/stat`` (module docstring); None when it cannot be read."""
    try:
        with path.open() as f:
            fields = f.readline().split()
        if not fields or fields[0] != "cpu":
            return None
        ticks = [int(x) for x in fields[1:9]] + [0] * max(0, 9 - len(fields))
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = ticks[:8]
    hz = os.sysconf("SC_CLK_TCK")
    return HostCpu(busy_s=(user + nice + system + irq + softirq) / hz, softirq_s=softirq / hz, steal_s=steal / hz)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class WindowFigures:
    """Cores used over a window (None: a reading is missing)."""

    ps_cores: float | None
    worker_cores: float | None
    host_busy_cores: float | None
    host_softirq_cores: float | None
    host_steal_cores: float | None
    ps_wakeups_per_s: float | None = None  # the PS processes' voluntary context switches, per second
    ps_preemptions_per_s: float | None = None  # their involuntary ones, per second


@dataclasses.dataclass(frozen=True, slots=True)
class _Reading:
    ps_s: float | None
    worker_s: float | None
    host: HostCpu | None
    ps_switches: tuple[int, int] | None = None


def _switches(processes: Sequence[Process]) -> tuple[int, int] | None:
    read = [p.switches() for p in processes]
    if not read or any(r is None for r in read):
        return None
    return sum(r[0] for r in read if r is not None), sum(r[1] for r in read if r is not None)


def _total(processes: Sequence[Process]) -> float | None:
    used = [p.cpu_s() for p in processes]
    return None if not used or any(u is None for u in used) else sum(u for u in used if u is not None)


class WindowCpu:
    """Reads the CPU of ``pss``, ``workers`` and the host at ``start_s`` and ``end_s`` (monotonic clock), by two
    timers started here."""

    def __init__(self, pss: Sequence[Process], workers: Sequence[Process], start_s: float, end_s: float,
                 proc_stat: pathlib.Path = PROC_STAT) -> None:
        self.pss, self.workers, self.start_s, self.end_s = pss, workers, start_s, end_s
        self.proc_stat = proc_stat
        self.read: dict[str, _Reading] = {}
        self.timers = [threading.Timer(max(0.0, at - time.monotonic()), self._take, args=(key,))
                       for key, at in (("start", start_s), ("end", end_s))]
        for timer in self.timers:
            timer.daemon = True
            timer.start()

    def _take(self, key: str) -> None:
        self.read[key] = _Reading(_total(self.pss), _total(self.workers), read_host_cpu(self.proc_stat),
                                  _switches(self.pss))

    def join(self) -> None:
        """Wait for the end's reading (the window is over)."""
        for timer in self.timers:
            timer.join(timeout=max(0.0, self.end_s - time.monotonic()) + 1.0)

    def figures(self, window_s: float) -> WindowFigures:
        """Cores used over the window of ``window_s`` seconds, and the PS's context switches per second."""
        start, end = self.read.get("start"), self.read.get("end")

        def per_s(a: float | None, b: float | None) -> float | None:
            return None if a is None or b is None or b < a else (b - a) / window_s

        if start is None or end is None:
            return WindowFigures(ps_cores=None, worker_cores=None, host_busy_cores=None, host_softirq_cores=None,
                                 host_steal_cores=None)
        h0, h1 = start.host, end.host
        s0, s1 = start.ps_switches, end.ps_switches
        return WindowFigures(
            ps_cores=per_s(start.ps_s, end.ps_s), worker_cores=per_s(start.worker_s, end.worker_s),
            host_busy_cores=None if h0 is None or h1 is None else per_s(h0.busy_s, h1.busy_s),
            host_softirq_cores=None if h0 is None or h1 is None else per_s(h0.softirq_s, h1.softirq_s),
            host_steal_cores=None if h0 is None or h1 is None else per_s(h0.steal_s, h1.steal_s),
            ps_wakeups_per_s=None if s0 is None or s1 is None else per_s(s0[0], s1[0]),
            ps_preemptions_per_s=None if s0 is None or s1 is None else per_s(s0[1], s1[1]))
