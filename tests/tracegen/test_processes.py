"""Simulations side by side in local processes: the same curve and the same files as in one process, errors
raised as themselves, and no process left behind after an error, Ctrl-C or SIGTERM."""

from __future__ import annotations

import contextlib
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from parsers import read_trace
from tracegen.cli import main
from tracegen.curve import scaling_curve, simulate_job
from tracegen.errors import ConfigError, ProcessDiedError
from tracegen.model import build_model
from tracegen.processes import MAX_JOBS, Processes
from tracegen.simulate import SimConfig, resolve_link

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXE = pathlib.Path(sys.executable).parent / "tracegen"


def _pid_of(x: int) -> tuple[int, int]:
    return x, os.getpid()


def _refuse(x: int) -> int:
    if x == 3:
        raise ConfigError(f"item {x} is bad")
    return x


def _die(x: int) -> int:
    if x == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer would
    time.sleep(0.2)
    return x


def test_results_come_back_in_the_items_order_from_other_processes() -> None:
    seen: list[int] = []
    with Processes(_pid_of, 2) as pool:
        out = pool.map(list(range(20)), lambda index, _result: seen.append(index))
    assert [x for x, _ in out] == list(range(20)) and sorted(seen) == list(range(20))
    assert os.getpid() not in {pid for _, pid in out}


def test_an_error_in_a_process_is_raised_as_itself_and_the_processes_go(process_tree: Any) -> None:
    with pytest.raises(ConfigError, match="item 3 is bad"), Processes(_refuse, 2) as pool:
        pool.map(list(range(10)))
    assert process_tree.wait_gone(process_tree.spawned(os.getpid()), timeout_s=10) == []
    with pytest.raises(ConfigError, match=f"'jobs' must be from 1 to {MAX_JOBS} "):
        Processes(_refuse, 0)


def test_a_worker_that_dies_is_one_error_and_the_others_go(process_tree: Any) -> None:
    with pytest.raises(ProcessDiedError, match="a worker process of 2 ended abruptly"), Processes(_die, 2) as pool:
        pool.map(list(range(8)))
    assert process_tree.wait_gone(process_tree.spawned(os.getpid()), timeout_s=10) == []


class _StopError(Exception):
    pass


def test_a_signal_while_the_workers_are_stopped_is_raised_once_they_are_gone(process_tree: Any,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGTERM that lands while an error stops the workers (they died of the same SIGTERM sent to the process
    group) raised its handler's exception in the middle of the stop: workers not joined, the pool not shut down,
    and the interpreter's exit then waited on the pool's thread. It is held until the stop is done."""
    import multiprocessing.process

    def stop(_signum: int, _frame: object) -> None:
        raise _StopError

    terminate = multiprocessing.process.BaseProcess.terminate
    sent: list[int] = []

    def terminate_and_signal(self: multiprocessing.process.BaseProcess) -> None:
        if not sent:  # the stop lands just as the first worker is told to go (once: the pool's own thread may
            sent.append(signal.SIGTERM)  # terminate workers too, with the handler put back)
            signal.raise_signal(signal.SIGTERM)
        terminate(self)

    previous = signal.signal(signal.SIGTERM, stop)
    pool = Processes(_refuse, 2)
    try:
        monkeypatch.setattr(multiprocessing.process.BaseProcess, "terminate", terminate_and_signal)
        with pytest.raises(_StopError) as info:
            pool.map(list(range(10)))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert isinstance(info.value.__context__, ConfigError)  # raised after the error's stop, not within it
    assert pool._pool is None  # the stop ran to its end: the pool is shut down
    assert process_tree.wait_gone(process_tree.spawned(os.getpid()), timeout_s=10) == []


def _square(x: int) -> int:
    return x * x


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP], ids=["SIGINT", "SIGHUP"])
def test_a_stop_that_reaches_a_worker_while_it_starts_is_ignored_there(sig: signal.Signals,
                                                                       process_tree: Any) -> None:
    """Ctrl-C (or a closed terminal's SIGHUP) reaches the whole process group. One that reached a worker still
    starting, before it ignores them (Python importing what it will run), killed it: a KeyboardInterrupt traceback
    over the caller's one line ('tracegen sweep: interrupted', 2026-12-06), and a broken pool. Here each worker
    is sent the signal the moment it exists; it ignores it, and the work is done."""
    before = set(process_tree.children(os.getpid()))  # the resource tracker, if running: not a worker
    sent: set[int] = set()
    done = threading.Event()

    def signal_each_new_child() -> None:
        while not done.is_set():
            for pid in set(process_tree.children(os.getpid())) - before - sent:
                sent.add(pid)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            time.sleep(0.001)  # the GIL to the pool between looks: a worker takes tens of ms to start

    watcher = threading.Thread(target=signal_each_new_child, daemon=True)
    watcher.start()
    try:
        with Processes(_square, 2) as pool:
            out = pool.map(list(range(8)))
    finally:
        done.set()
        watcher.join()
    assert out == [x * x for x in range(8)]
    assert sent


def test_a_worker_whose_caller_died_while_it_started_exits_at_once() -> None:
    """The death signal is asked for when a worker starts; a caller killed before that never sends it, and the
    worker would wait on the pool's queues forever (CI saw one hold a killed sweep's pipes). A real process told
    a caller that is not its parent exits with 1 before running anything; told its real parent, it runs on."""
    code = ("import sys; from tracegen.processes import _start_worker; "
            "_start_worker(int(sys.argv[1]), print, ('started',))")
    orphan = subprocess.run([sys.executable, "-c", code, "-1"], capture_output=True, text=True, timeout=60,
                            check=False)
    assert (orphan.returncode, orphan.stdout, orphan.stderr) == (1, "", "")  # it ran nothing, said nothing
    child = subprocess.run([sys.executable, "-c", code, str(os.getpid())], capture_output=True, text=True,
                           timeout=60, check=False)
    assert (child.returncode, child.stdout) == (0, "started\n")


def test_a_curve_in_two_processes_is_the_curve_in_one(mlp_trace_dir: pathlib.Path) -> None:
    model = build_model(read_trace(mlp_trace_dir))
    config = SimConfig(steps=6, warmup_steps=1, link_spec=resolve_link(model, SimConfig()))
    alone = scaling_curve(model, config, (1, 2, 3), seeds=3)
    with Processes(simulate_job, 2) as pool:
        side_by_side = scaling_curve(model, config, (1, 2, 3), seeds=3, processes=pool)
    assert side_by_side == alone and alone.saturation_workers > 3  # the plateau's point went through it too


def test_predict_writes_the_same_bytes_with_two_processes(mlp_trace_dir: pathlib.Path, tmp_path: pathlib.Path,
                                                          capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """predict's defaults on a bundled trace, in one process and in two. A curve this short (about 1.5 million
    events) runs in one by default, where starting processes costs what they save (PARALLEL_S): the
    threshold is lowered here so that --jobs 2 is used, and the files must be the same bytes."""
    import tracegen.processes

    monkeypatch.setattr(tracegen.processes, "PARALLEL_S", 0)
    for jobs in ("1", "2"):
        assert main(["predict", str(mlp_trace_dir), "--bandwidth", "1Gbit/s", "--jobs", jobs,
                     "--out", str(tmp_path / jobs)]) == 0
        said = capsys.readouterr().err
        assert ("in 2 processes" in said) == (jobs == "2"), said
    names = sorted(p.name for p in (tmp_path / "1").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "2").iterdir()) and "curve.csv" in names
    for name in names:
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes(), name


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code", "said"), [(signal.SIGINT, 130, "interrupted"),
                                                   (signal.SIGTERM, 143, "stopped by SIGTERM")])
def test_a_signal_stops_predict_and_its_processes(sig: signal.Signals, code: int, said: str, tmp_path: pathlib.Path,
                                                  default_signals: Callable[[], None], process_tree: Any) -> None:
    """Ctrl-C or SIGTERM while the simulations run in two processes: the command says so, exits with the usual
    code, its processes are gone and no file of the unfinished prediction is written."""
    out = tmp_path / "out"
    trace = ROOT / "data/validation/dev/resnet_100mbit_q20_b128k_ps05/trace"
    workers: list[int] = []
    # long enough, with any engine, to run in processes and still be running when the signal comes
    with process_tree.started([str(EXE), "predict", str(trace), "--workers", "1-64", "--every-n", "--steps", "100",
                               "--jobs", "2", "--out", str(out)], default_signals) as proc:
        deadline = time.monotonic() + 120
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            workers = [p for p in process_tree.spawned(proc.pid) if process_tree.alive(p)]
        assert len(workers) >= 2, "predict did not start its processes"
        time.sleep(1)  # into the simulations
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == code and f"tracegen predict: {said}" in err, err[-3000:]
    assert process_tree.wait_gone(workers) == []
    assert not out.exists()  # the run made it, and leaves nothing of its own behind: not even its lock


_CUT_SHORT = r"""
import os, signal, struct, sys, time
from tracegen.errors import ProcessDiedError
from tracegen.processes import Processes

def work(x):
    if x == 1 and sys.argv[1] == "killed":
        time.sleep(1)
        os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer would
    if x:
        time.sleep(300)
    return x

def main():
    pool = Processes(work, 2)

    def done(key, result):
        # a result cut short, as a worker killed while it sends one leaves it: a header and part of the bytes
        os.write(pool._pool._result_queue._writer.fileno(), struct.pack("!i", 1 << 20) + b"partial")
        if sys.argv[1] == "interrupted":
            raise KeyboardInterrupt

    try:
        with pool:
            pool.map([0, 1, 2, 3], done)
    except (KeyboardInterrupt, ProcessDiedError) as exc:
        print(type(exc).__name__)

if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize(("how", "said"), [("interrupted", "KeyboardInterrupt"), ("killed", "ProcessDiedError")])
def test_a_result_cut_short_in_the_pipe_does_not_hang_the_stop(how: str, said: str, tmp_path: pathlib.Path) -> None:
    """A worker killed while it sent a result (SIGTERM from the stop itself, the out-of-memory killer) leaves
    part of a message in the pipe, and the pool's thread waits for the rest forever: Ctrl-C in predict --jobs 2
    then hung (a hardening pass reproduced it once in about 20 tries). The stop now ends it, and a worker that died
    while the pool's thread was stuck so is a ProcessDiedError, not a wait without end."""
    script = tmp_path / "cut_short.py"
    script.write_text(_CUT_SHORT, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script), how], capture_output=True, text=True, timeout=120,
                          check=False, cwd=ROOT)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{said}\n", "")
