"""Where a window's CPU went: /proc/stat read right, and real processes' CPU over a real window."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

import pytest

from validation.windowcpu import HostCpu, WindowCpu, process_cpu_s, process_switches, read_host_cpu

HZ = os.sysconf("SC_CLK_TCK")


def test_reads_busy_softirq_and_steal_from_the_first_line(tmp_path: pathlib.Path) -> None:
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text("cpu  100 5 40 9000 70 3 12 25 0 0\ncpu0 50 2 20 4500 35 1 6 12 0 0\nintr 1 2 3\n")
    assert read_host_cpu(stat) == HostCpu(busy_s=(100 + 5 + 40 + 3 + 12) / HZ, softirq_s=12 / HZ, steal_s=25 / HZ)


def test_an_old_kernels_line_without_steal_reads_as_none_stolen(tmp_path: pathlib.Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 5 40 9000 70 3 12\n")
    assert read_host_cpu(stat) == HostCpu(busy_s=160 / HZ, softirq_s=12 / HZ, steal_s=0.0)


@pytest.mark.parametrize("text", ["", "intr 1 2 3\n", "cpu  a b c\n"])
def test_an_unreadable_stat_gives_none(tmp_path: pathlib.Path, text: str) -> None:
    stat = tmp_path / "stat"
    stat.write_text(text)
    assert read_host_cpu(stat) is None
    assert read_host_cpu(tmp_path / "missing") is None


class _Proc:
    """A real child process, read the way the testbed reads its nodes."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen

    def cpu_s(self) -> float | None:
        return process_cpu_s(self.popen.pid)

    def switches(self) -> tuple[int, int] | None:
        return process_switches(self.popen.pid)


@pytest.mark.skipif(not pathlib.Path("/proc/stat").is_file(), reason="needs Linux's /proc")
def test_a_busy_and_an_idle_process_over_a_real_window() -> None:
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.5)  # both started
        start = time.monotonic() + 0.2
        window = WindowCpu([_Proc(spin)], [_Proc(idle)], start, start + 1.5)
        window.join()
        figures = window.figures(1.5)
    finally:
        for p in (spin, idle):
            p.kill()
            p.wait()
    assert figures.ps_cores is not None and figures.worker_cores is not None
    assert 0.2 < figures.ps_cores <= 1.05  # one spinning thread: up to a core (less on a shared host)
    assert figures.worker_cores < 0.05
    assert figures.host_busy_cores is not None and figures.host_busy_cores >= figures.ps_cores * 0.9
    assert figures.host_steal_cores is not None and figures.host_steal_cores >= 0.0
    assert figures.ps_wakeups_per_s is not None and figures.ps_preemptions_per_s is not None
    assert figures.ps_wakeups_per_s < 50  # a spinning thread never sleeps


@pytest.mark.skipif(not pathlib.Path("/proc/stat").is_file(), reason="needs Linux's /proc")
def test_a_process_that_sleeps_often_wakes_often_and_every_thread_counts() -> None:
    code = ("import threading, time\n"
            "def nap():\n    while True: time.sleep(0.005)\n"
            "threading.Thread(target=nap, daemon=True).start()\n"
            "time.sleep(60)\n")  # the main thread sleeps once: the naps are the other thread's
    napper = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(0.5)
        start = time.monotonic() + 0.1
        window = WindowCpu([_Proc(napper)], [], start, start + 1.0)
        window.join()
        figures = window.figures(1.0)
    finally:
        napper.kill()
        napper.wait()
    assert figures.ps_wakeups_per_s is not None and 50 < figures.ps_wakeups_per_s < 1000  # ~200 naps a second
    assert process_switches(napper.pid) is None  # gone


def test_switches_are_summed_over_every_threads_status(tmp_path: pathlib.Path) -> None:
    for tid, (vol, invol) in {"41": (7, 1), "42": (30, 5)}.items():
        task = tmp_path / "41" / "task" / tid
        task.mkdir(parents=True)
        (task / "status").write_text(f"Name:\tps\nvoluntary_ctxt_switches:\t{vol}\n"
                                     f"nonvoluntary_ctxt_switches:\t{invol}\n")
    assert process_switches(41, tmp_path) == (37, 6)
    assert process_switches(99, tmp_path) is None


def test_a_gone_process_or_a_missing_reading_gives_none() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    start = time.monotonic()
    window = WindowCpu([_Proc(gone)], [], start, start + 0.1)
    window.join()
    figures = window.figures(0.1)
    assert figures.ps_cores is None and figures.worker_cores is None  # gone; no workers at all
    assert figures.ps_wakeups_per_s is None
    never = WindowCpu([], [], time.monotonic() + 60, time.monotonic() + 61)
    assert never.figures(1.0).host_busy_cores is None  # asked before either reading
    for timer in never.timers:
        timer.cancel()
