"""One testbed run's window (``validation/testbed_window.py``), in the parts that need no cluster: worker output
forwarded line by line, the protocol events collected until every worker has sent one, a node that ends early
refused in one line, the nodes' environment and the window's CPU figures as a Measurement's fields."""

from __future__ import annotations

import io
import json
import pathlib
import queue
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from validation.cluster import NodeProcess
from validation.errors import JobError
from validation.testbed_window import Measurement, collect, cpu_fields, node_env, pump
from validation.windowcpu import WindowFigures


def _exited(tmp_path: pathlib.Path, name: str, code: int, stderr: str = "") -> NodeProcess:
    """A node process that has already ended with ``code``, having said ``stderr``."""
    path = tmp_path / f"{name}.stderr"
    path.write_text(stderr)
    popen = subprocess.Popen([sys.executable, "-c", f"raise SystemExit({code})"], text=True)
    popen.wait(timeout=60)
    return NodeProcess(node=name, popen=popen, stderr_path=path)


@pytest.fixture
def running_ps(tmp_path: pathlib.Path) -> Iterator[NodeProcess]:
    """A PS process that runs until the test ends (it reads its stdin, closed then)."""
    popen = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, text=True)
    try:
        yield NodeProcess(node="ps", popen=popen, stderr_path=tmp_path / "ps.stderr")
    finally:
        assert popen.stdin is not None
        popen.stdin.close()
        popen.wait(timeout=60)


def test_pump_forwards_every_line_then_marks_the_end() -> None:
    events: queue.Queue[tuple[int, str | None]] = queue.Queue()
    pump(4, io.StringIO("a\nb\n"), events)
    closed = io.StringIO("x\n")
    closed.close()
    pump(5, closed, events)  # closed under it: only the end
    assert [events.get_nowait() for _ in range(4)] == [(4, "a\n"), (4, "b\n"), (4, None), (5, None)]
    assert events.empty()


def test_collect_waits_for_every_workers_event_and_skips_the_rest(tmp_path: pathlib.Path,
                                                                  running_ps: NodeProcess) -> None:
    events: queue.Queue[tuple[int, str | None]] = queue.Queue()
    warm = {"event": "warm", "step": 3}
    for item in [(1, "TensorFlow says hello\n"), (1, json.dumps({"event": "ready"}) + "\n"), (0, json.dumps(warm)),
                 (1, json.dumps(dict(warm, step=4))), (0, json.dumps(dict(warm, step=9)))]:
        events.put(item)
    workers = [_exited(tmp_path, "w0", 0), _exited(tmp_path, "w1", 0)]
    got = collect(events, pss=[running_ps], workers=workers, want="warm", deadline_s=time.monotonic() + 60,
                  timeout_s=1.0)
    assert got == {0: warm, 1: dict(warm, step=4)}
    assert events.get_nowait() == (0, json.dumps(dict(warm, step=9)))  # every worker had reported: left for later


def test_collect_refuses_a_worker_that_ends_before_its_event(tmp_path: pathlib.Path, running_ps: NodeProcess) -> None:
    events: queue.Queue[tuple[int, str | None]] = queue.Queue()
    events.put((0, None))
    workers = [_exited(tmp_path, "w0", 3, "ValueError: bad batch\n")]
    with pytest.raises(JobError, match=r"worker 0 exited with code 3 before it reported 'done': .*bad batch"):
        collect(events, pss=[running_ps], workers=workers, want="done", deadline_s=time.monotonic() + 60, timeout_s=1.0)


def test_collect_refuses_a_ps_that_ended_and_a_deadline_that_passed(tmp_path: pathlib.Path) -> None:
    events: queue.Queue[tuple[int, str | None]] = queue.Queue()
    workers = [_exited(tmp_path, "w0", 0)]
    with pytest.raises(JobError, match="PS task 0 exited with code 2 while workers waited for 'warm'"):
        collect(events, pss=[_exited(tmp_path, "ps", 2)], workers=workers, want="warm",
                deadline_s=time.monotonic() + 60, timeout_s=1.0)
    with pytest.raises(JobError, match=r"no 'warm' from worker 0 within 7 s \(worker 0: "):
        collect(events, pss=[], workers=workers, want="warm", deadline_s=0.0, timeout_s=7.0)
    workers.append(_exited(tmp_path, "w1", 0))  # 'from worker(s) [0, 1]'
    with pytest.raises(JobError, match=r"no 'warm' from workers 0, 1 within 7 s \(worker 0: .*; worker 1: "):
        collect(events, pss=[], workers=workers, want="warm", deadline_s=0.0, timeout_s=7.0)


def test_node_env_drops_proxies_whatever_their_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("no_proxy", "localhost")
    monkeypatch.setenv("TRACEGEN_KEEP", "1")
    env = node_env()
    assert "HTTPS_PROXY" not in env and "no_proxy" not in env and env["TRACEGEN_KEEP"] == "1"
    assert (env["TF_CPP_MIN_LOG_LEVEL"], env["CUDA_VISIBLE_DEVICES"]) == ("2", "")


def test_cpu_fields_are_measurement_fields() -> None:
    figures = WindowFigures(ps_cores=0.1, worker_cores=0.2, host_busy_cores=0.3, host_softirq_cores=0.4,
                            host_steal_cores=0.5, ps_wakeups_per_s=6.0, ps_preemptions_per_s=7.0)
    m = Measurement(n_workers=1, repeat=0, steps_per_s=1.0, worker_steps_per_s=(1.0,), global_steps_per_s=1.0,
                    window_s=1.0, qdisc_drops=0, tcp_retrans_segs=0, **cpu_fields(figures))
    assert (m.ps_cpu_cores, m.worker_cpu_cores, m.host_busy_cores, m.host_softirq_cores, m.host_steal_cores,
            m.ps_wakeups_per_s, m.ps_preemptions_per_s) == (0.1, 0.2, 0.3, 0.4, 0.5, 6.0, 7.0)
