"""The testbed: option parsing, config checks, the window arithmetic, and short real runs (root, TensorFlow)."""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import pathlib
import re
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from parsers import read_trace
from parsers.singleworker import read_single_worker
from tracegen.model import build_model
from validation import testbed, testbed_tf2
from validation.cluster import NodeProcess
from validation.cluster_config import ClusterConfig
from validation.cluster_host import leftovers
from validation.errors import ConfigError
from validation.testbed import run_testbed, window_for
from validation.testbed_config import TestbedConfig
from validation.testbed_files import MEASURED_COLUMNS
from validation.testbed_single import AT_CAP_SHARE, measure_at_cap, write_single_worker_json
from validation.testbed_window import Measurement
from validation.windowcpu import WindowCpu

from validation_support import TESTBED_SUBNET, make_testbed_config

RUN_ID = re.compile(r"cluster ([0-9a-f]{6}) is up")




def _nodes() -> list[tuple[int, str]]:
    """(pid, command line) of the node processes of these tests still alive: their job JSON names an address in
    TESTBED_SUBNET."""
    prefix = TESTBED_SUBNET.rsplit(".", 1)[0] + "."
    found = []
    for cmdline in pathlib.Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # the process ended while we looked
        if ("validation.node" in text or "validation.tf2node" in text) and prefix in text:
            found.append((int(cmdline.parent.name), text))
    return sorted(found)


def _node_processes() -> list[str]:
    """The node processes of these tests still alive, one line each."""
    return [f"{pid}: {text[:80]}" for pid, text in _nodes()]


def _worker_pids() -> list[int]:
    """The TF1 worker node processes of these tests (their job JSON names the role "worker")."""
    return [pid for pid, text in _nodes() if "validation.node" in text and '"role": "worker"' in text]


def _assert_nothing_left(run_ids: list[str]) -> None:
    assert run_ids, "no cluster was reported up"
    left = [item for item in leftovers() if any(f"_{r}_" in item for r in run_ids)]
    assert left == []
    deadline = time.monotonic() + 5.0
    while _node_processes() and time.monotonic() < deadline:  # killed processes are reaped asynchronously
        time.sleep(0.05)
    assert _node_processes() == []


# ----- parsing and checks


@pytest.mark.parametrize(("earlier", "held"), [
    ("measured.csv", "measured.csv"),
    ("trace/step_000.pb", "trace/"),
    # an earlier run's staleness was overwritten (--staleness) or, without it, read by validate beside the new
    # measurements as theirs; its workers' traces were mixed with the new run's
    ("staleness.csv", "staleness.csv"),
    ("workers/n2/w0/step_000.pb", "workers/"),
])
def test_refuses_an_output_folder_that_holds_an_earlier_runs_outputs(tmp_path: pathlib.Path, earlier: str, held: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(testbed, "check_host", _no_cluster)
    (tmp_path / earlier).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / earlier).write_text("precious\n")
    with pytest.raises(ConfigError) as info:
        run_testbed(make_testbed_config(tmp_path, staleness=True))
    assert str(info.value) == (f"{tmp_path}: already holds {held} of an earlier run; choose an empty directory or "
                               "move them away")
    assert (tmp_path / earlier).read_text() == "precious\n"
    (tmp_path / "notes.txt").write_text("mine\n")  # files of the user's own are no reason to refuse, nor the
    (tmp_path / earlier).unlink()                  # empty folders an interrupted run left
    with pytest.raises(AssertionError, match="checked the host"):
        run_testbed(make_testbed_config(tmp_path, staleness=True))


def _no_cluster(*_args: object) -> None:
    raise AssertionError("checked the host: went on to measure")


def test_refuses_a_file_as_its_output_folder_before_it_checks_the_host(tmp_path: pathlib.Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(testbed, "check_host", _no_cluster)
    (tmp_path / "out").write_text("precious\n")
    with pytest.raises(ConfigError, match=r"out: a file, not a directory; --out names the directory to measure into"):
        run_testbed(make_testbed_config(tmp_path / "out"))


def test_both_two_host_measurements_are_refused_before_either_runs(tmp_path: pathlib.Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """--only-link-profile --only-single-worker with a single-worker.json there: the link profile was measured for
    minutes, and then the run refused."""
    monkeypatch.setattr(testbed, "check_host", _no_cluster)
    (tmp_path / "trace").mkdir()
    (tmp_path / "trace" / "single-worker.json").write_text("{}\n")
    with pytest.raises(ConfigError, match=r"trace/single-worker\.json: already exists; move it away"):
        run_testbed(make_testbed_config(tmp_path, only_link_profile=True, only_single_worker=True))


@pytest.mark.parametrize("api", ["tf1", "tf2"])
def test_the_link_profile_of_several_ps_tasks_is_measured_on_one_ps_link(tmp_path: pathlib.Path, api: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Every PS link has the same shape, so netbench measures one: with --ps 2 on 2 cores its cluster had both PS
    tasks beside a client host that takes the cores one PS leaves ('CPU caps must total less than the 2 available
    cores (got 2.2: 2 PS * 0.3 + 1 workers: 1.6)'), before any run."""
    handed: list[ClusterConfig] = []
    monkeypatch.setattr(testbed, "measure_link_profile", lambda config, *_a, **_k: handed.append(config))
    config = make_testbed_config(tmp_path, api=api, trace_workers=api == "tf1", ps_tasks=2, cpu_cap_ps=0.3)
    testbed._measure_profile(config, tmp_path, lambda _message: None)  # the step under test
    (cluster,) = handed
    assert (cluster.n_ps, cluster.n_workers, cluster.coordinator, cluster.cpu_cap_ps) == (1, 1, False, 0.3)


def test_the_single_worker_record_is_the_median_of_every_run_of_one_worker(tmp_path: pathlib.Path) -> None:
    """One job's rate moves between jobs by more than a window's noise, so every run of one worker counts."""
    runs = [Measurement(n_workers=1, repeat=r, steps_per_s=rate, worker_steps_per_s=(rate,),
                        global_steps_per_s=rate, window_s=10.0, qdisc_drops=0, tcp_retrans_segs=0,
                        ps_cpu_cores=cores)
            for r, (rate, cores) in enumerate([(10.99, 0.1307), (9.45, 0.144), (10.2, None)])]
    write_single_worker_json(tmp_path, make_testbed_config(tmp_path), runs)
    single = read_single_worker(tmp_path / "single-worker.json")
    assert single.steps_per_s == pytest.approx(10.2)
    assert single.ps_cpu_s_per_step == pytest.approx((0.1307 / 10.99 + 0.144 / 9.45) / 2)  # of the runs that had it
    assert single.window_s == pytest.approx(30.0)
    assert any("median of 3 runs" in note and "9.450" in note for note in single.notes)
    assert single.link_bits_per_s == make_testbed_config(tmp_path).bandwidth_bits_per_s  # where it was measured
    write_single_worker_json(tmp_path, make_testbed_config(tmp_path), runs[:1])  # one run: itself
    assert read_single_worker(tmp_path / "single-worker.json").steps_per_s == pytest.approx(10.99)


def test_at_cap_is_recorded_only_when_the_worker_held_the_ps_at_its_cap(tmp_path: pathlib.Path) -> None:
    """The cap is half of what the PS used alone; a run where the PS stayed under it is not its work per step."""
    alone = [Measurement(n_workers=1, repeat=0, steps_per_s=8.0, worker_steps_per_s=(8.0,), global_steps_per_s=8.0,
                         window_s=10.0, qdisc_drops=0, tcp_retrans_segs=0, ps_cpu_cores=0.16)]
    asked: list[float] = []
    messages: list[str] = []

    def measure(used_share: float) -> object:
        def one(config: TestbedConfig, n: int, *, repeat: int, progress: object) -> Measurement:
            del n, repeat, progress
            asked.append(config.cpu_cap_ps)
            return dataclasses.replace(alone[0], steps_per_s=6.0, ps_cpu_cores=used_share * config.cpu_cap_ps)
        return one

    at_cap = measure_at_cap(make_testbed_config(tmp_path, repeats=2), alone, measure(0.98), messages.append)
    assert asked == [AT_CAP_SHARE * 0.16] * 2
    assert at_cap is not None and at_cap.ps_cores == pytest.approx(0.08)
    assert at_cap.ps_cpu_s_per_step == pytest.approx(0.98 * 0.08 / 6.0) and at_cap.window_s == 20.0
    assert measure_at_cap(make_testbed_config(tmp_path), alone, measure(0.7), messages.append) is None
    assert messages[-1] == "PS at its cap: not recorded (it used 0.056 of 0.08 cores)"
    write_single_worker_json(tmp_path, make_testbed_config(tmp_path), alone, at_cap)
    assert read_single_worker(tmp_path / "single-worker.json").ps_at_cap == at_cap
    unknown = measure(0.98)

    def no_cpu(config: TestbedConfig, n: int, *, repeat: int, progress: object) -> Measurement:
        return dataclasses.replace(unknown(config, n, repeat=repeat, progress=progress), ps_cpu_cores=None)

    assert measure_at_cap(make_testbed_config(tmp_path), alone, no_cpu, messages.append) is None
    assert messages[-1] == "PS at its cap: not recorded (the PS's CPU in those runs is unknown)"
    idle = [dataclasses.replace(alone[0], ps_cpu_cores=0.0008)]  # half of it is under what a quota enforces
    asked.clear()
    assert measure_at_cap(make_testbed_config(tmp_path), idle, measure(0.98), messages.append) is None
    assert asked == [] and "under 0.001 cores" in messages[-1]


# ----- real runs


@pytest.mark.slow
@pytest.mark.root
def test_short_run_measures_n1_and_n2_and_leaves_nothing(tmp_path: pathlib.Path) -> None:
    messages: list[str] = []
    result = run_testbed(make_testbed_config(tmp_path), progress=messages.append)

    assert [(m.n_workers, m.repeat) for m in result.measurements] == [(1, 0), (2, 0)]
    for m in result.measurements:
        assert len(m.worker_steps_per_s) == m.n_workers
        assert all(rate > 0.0 for rate in m.worker_steps_per_s)
        # the sum of the workers' rates (m.steps_per_s is that sum by construction), against global_step, read by
        # worker 0 over nearly the same window: a count that shares none of the per-worker windows' code
        assert m.global_steps_per_s == pytest.approx(m.steps_per_s, rel=0.25)

    with result.csv_path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == MEASURED_COLUMNS
    assert [int(r["n_workers"]) for r in rows] == [1, 2]
    assert len(rows[1]["worker_steps_per_s"].split(";")) == 2
    assert rows[0]["widths"] == "32"
    assert rows[0]["bandwidth_bits_per_s"] == "100000000"
    assert rows[1]["worker_links"] == "0;0"  # no --worker-links: every worker unshaped
    config = make_testbed_config(tmp_path)
    for row in rows:  # each node within its cap; the host ran at least the nodes, on at most its cores
        ps, workers = float(row["ps_cpu_cores"]), float(row["worker_cpu_cores"])
        assert 0.0 < ps <= config.cpu_cap_ps * 1.1  # the PS's cgroup, capped
        assert 0.0 < workers <= config.cpu_cap_worker * int(row["n_workers"]) * 1.1
        busy, softirq, steal = (float(row[c]) for c in ("host_busy_cores", "host_softirq_cores", "host_steal_cores"))
        assert (ps + workers) * 0.9 <= busy <= (os.cpu_count() or 1) * 1.01
        assert 0.0 <= softirq <= busy and steal >= 0.0
        wakeups, preemptions = float(row["ps_wakeups_per_s"]), float(row["ps_preemptions_per_s"])
        assert wakeups >= float(row["steps_per_s"])  # each step's requests wake the PS
        assert preemptions >= 0.0
    # the progress line says where the host's CPU went and how often the PS woke
    assert any(" cores busy, " in m and " times per step" in m for m in messages)
    assert rows[0]["tensorflow_version"] != ""
    assert float(rows[1]["steps_per_s"]) > 0.0

    traced = sorted(p.name for p in result.trace_dir.iterdir())
    assert traced == ["meta.json", "single-worker.json", "step_000.json", "step_000.pb", "step_001.json",
                      "step_001.pb", "step_002.json", "step_002.pb"]
    meta = json.loads((result.trace_dir / "meta.json").read_text())
    assert meta["bandwidth_bits_per_s"] == 100_000_000
    assert meta["tool"] == "tracegen testbed"
    # the N = 1 run's own rate, and a PS that did some work per step but no more than its cap allows
    single = read_single_worker(result.trace_dir / "single-worker.json")
    assert single.steps_per_s == pytest.approx(result.measurements[0].steps_per_s)
    assert single.ps_cpu_s_per_step is not None
    assert 0.0 < single.ps_cpu_s_per_step * single.steps_per_s <= make_testbed_config(tmp_path).cpu_cap_ps * 1.1

    _assert_nothing_left(RUN_ID.findall("\n".join(messages)))


@pytest.mark.slow
@pytest.mark.root
def test_the_ps_at_its_cap_is_measured_with_its_cap_halved(tmp_path: pathlib.Path) -> None:
    messages: list[str] = []
    config = make_testbed_config(tmp_path, workers=(1,), only_single_worker=True, ps_at_cap=True)
    run_testbed(config, progress=messages.append)
    single = read_single_worker(tmp_path / "trace" / "single-worker.json")
    assert single.ps_cpu_s_per_step is not None and single.ps_at_cap is not None, messages
    at_cap = single.ps_at_cap
    assert at_cap.ps_cores == pytest.approx(round(AT_CAP_SHARE * single.ps_cpu_s_per_step * single.steps_per_s, 3),
                                            abs=0.002)
    assert at_cap.ps_cpu_quota is not None and round(at_cap.ps_cores * at_cap.ps_cpu_quota.period_us) >= 1_000
    # the reader checked that the PS used at least HELD_SHARE of its cores; a held PS runs its worker no faster
    assert at_cap.steps_per_s <= single.steps_per_s * 1.1
    _assert_nothing_left(RUN_ID.findall("\n".join(messages)))


@pytest.mark.slow
@pytest.mark.root
def test_a_worker_that_crashes_gets_its_run_done_again_once(tmp_path: pathlib.Path) -> None:
    """A real TensorFlow worker killed by SIGSEGV in the N = 2 run (as TensorFlow's own crashes are): the run is
    done again, once, the progress says so, and nothing is left behind."""
    messages: list[str] = []
    crashed: list[str] = []

    def progress(line: str) -> None:
        messages.append(line)
        if line.startswith("N=2:") and "measuring" in line and not crashed:
            crashed.append(_worker_pids()[0])
            os.kill(crashed[0], signal.SIGSEGV)

    result = run_testbed(make_testbed_config(tmp_path, workers=(2,)), progress=progress)
    assert crashed and [(m.n_workers, m.repeat) for m in result.measurements] == [(2, 0)]
    assert any("exited with code -11" in m and "running it again (once)" in m for m in messages)
    _assert_nothing_left(RUN_ID.findall("\n".join(messages)))


@pytest.mark.slow
@pytest.mark.root
def test_a_tf2_run_measures_the_coordinators_counter_and_profiles_n1(tmp_path: pathlib.Path) -> None:
    messages: list[str] = []
    config = make_testbed_config(tmp_path, api="tf2", trace_workers=False, cpu_cap_ps=0.4, cpu_cap_worker=0.4)
    result = run_testbed(config, progress=messages.append)
    assert [(m.n_workers, m.worker_steps_per_s) for m in result.measurements] == [(1, ()), (2, ())]
    assert all(m.steps_per_s > 0 for m in result.measurements)
    with result.csv_path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["api"] for r in rows] == ["tf2", "tf2"] and rows[1]["worker_steps_per_s"] == ""
    hosts = sorted(p.name for p in result.trace_dir.glob("plugins/profile/*/*.xplane.pb"))
    assert len(hosts) == 3  # the coordinator, the PS and the worker, each profiled
    trace = read_trace(result.trace_dir)
    assert len(trace.steps) == config.traced_steps  # the first call left out
    assert build_model(trace).step_gap_ns > 0
    single = read_single_worker(result.trace_dir / "single-worker.json")
    assert single.steps_per_s == pytest.approx(result.measurements[0].steps_per_s)
    _assert_nothing_left(RUN_ID.findall("\n".join(messages)))


@pytest.mark.slow
@pytest.mark.root
def test_a_tf2_run_on_two_ps_tasks_uses_and_profiles_both(tmp_path: pathlib.Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``--api tf2 --ps 2`` (refused before): the strategy puts variables on both PS tasks, the window's PS CPU is
    both PS nodes', each of which worked in it, and the N = 1 trace profiled both."""
    per_ps: dict[str, list[tuple[str, float | None]]] = {}
    last: dict[str, float | None] = {}  # each node's latest CPU reading: the very ones the window's sum is made of
    read_cpu = NodeProcess.cpu_s

    def recording_cpu_s(self: NodeProcess) -> float | None:
        last[self.node] = used = read_cpu(self)
        return used

    class Recording(WindowCpu):  # each PS process's own CPU at both ends of the window, beside the sum
        def _take(self, key: str) -> None:  # (read again here, a PS at its quota had moved on: 0.292 against 0.3)
            super()._take(key)
            per_ps[key] = [(p.node, last[p.node]) for p in self.pss]  # type: ignore[attr-defined]

    monkeypatch.setattr(NodeProcess, "cpu_s", recording_cpu_s)
    monkeypatch.setattr(testbed_tf2, "WindowCpu", Recording)
    messages: list[str] = []
    config = make_testbed_config(tmp_path, api="tf2", trace_workers=False, workers=(1,), ps_tasks=2,
                                 cpu_cap_ps=0.3, cpu_cap_worker=0.4)
    result = run_testbed(config, progress=messages.append)
    (m,) = result.measurements
    assert m.steps_per_s > 0 and len(m.ps_bytes) == 2 and min(m.ps_bytes) > 0 and sum(m.ps_bytes) == m.param_bytes
    with result.csv_path.open(newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["api"], row["ps_tasks"], row["placement"]) == ("tf2", "2", "round-robin")
    (start, end) = (per_ps["start"], per_ps["end"])
    assert [node for node, _ in start] == [node for node, _ in end] == ["ps", "ps1"]
    used = [(b or 0.0) - (a or 0.0) for (_, a), (_, b) in zip(start, end, strict=True)]
    assert min(used) > 0.0  # both PS tasks served the window
    assert float(row["ps_cpu_cores"]) == pytest.approx(sum(used) / m.window_s, rel=1e-5)  # written to 6 digits
    hosts = list(result.trace_dir.glob("plugins/profile/*/*.xplane.pb"))
    assert len(hosts) == 4  # the coordinator, both PS tasks and the worker, each profiled
    trace = read_trace(result.trace_dir)
    assert sorted(set(trace.variables["device"])) == [f"/job:ps/replica:0/task:{k}/device:CPU:0" for k in (0, 1)]
    assert json.loads((result.trace_dir / "meta.json").read_text())["ps_tasks"] == 2
    _assert_nothing_left(RUN_ID.findall("\n".join(messages)))


@pytest.mark.slow
@pytest.mark.root
def test_staleness_comes_from_the_global_step_each_step_reads_and_bumps(tmp_path: pathlib.Path) -> None:
    """One worker is never stale; of two, each sees the other's steps between its read and its apply."""
    messages: list[str] = []
    result = run_testbed(make_testbed_config(tmp_path, staleness=True), progress=messages.append)
    alone, pair = result.measurements
    assert alone.staleness and set(alone.staleness) == {0}
    assert pair.staleness and min(pair.staleness) >= 0 and max(pair.staleness) >= 1
    with (tmp_path / "staleness.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert sum(int(r["steps"]) for r in rows if r["n_workers"] == "2") == len(pair.staleness)
    _assert_nothing_left(RUN_ID.findall("\n".join(messages)))


@pytest.mark.slow
@pytest.mark.root
@pytest.mark.parametrize("placement", ["round-robin", "greedy"])
def test_two_ps_tasks_each_serve_part_of_the_parameters(tmp_path: pathlib.Path, placement: str) -> None:
    """``--ps 2``: both PS tasks hold parameters, all of them between the two, and training runs."""
    messages: list[str] = []
    result = run_testbed(make_testbed_config(tmp_path, workers=(1,), ps_tasks=2, placement=placement),
                         progress=messages.append)
    (m,) = result.measurements
    assert m.steps_per_s > 0.0
    assert len(m.ps_bytes) == 2 and min(m.ps_bytes) > 0 and sum(m.ps_bytes) == m.param_bytes
    with result.csv_path.open(newline="") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["ps_tasks"], row["placement"]) == ("2", placement)
    assert [int(b) for b in row["ps_bytes"].split(";")] == list(m.ps_bytes)
    _assert_nothing_left(RUN_ID.findall("\n".join(messages)))


_RUNNER = r"""
import pathlib, sys, traceback
from validation.errors import TerminatedError
from validation.testbed import run_testbed
from validation.testbed_config import TestbedConfig
config = TestbedConfig(out_dir=pathlib.Path(sys.argv[1]), model="mlp", widths=(32,), batch_size=16, workers=(1,),
                       bandwidth_bits_per_s=100_000_000, repeats=1, window_s=300.0, warmup_steps=3,
                       cpu_cap_ps=0.5, cpu_cap_worker=0.6, subnet=sys.argv[2], link_profile=False, traced_steps=3)
try:
    run_testbed(config, progress=lambda message: print(message, flush=True))
except TerminatedError as exc:  # ended as the tracegen command ends on it: 128 + its signum
    traceback.print_exc()
    sys.exit(128 + exc.signum)
"""


@pytest.mark.slow
@pytest.mark.root
@pytest.mark.parametrize(
    ("signum", "when", "expected"),
    [
        (signal.SIGINT, "starting TensorFlow", "KeyboardInterrupt"),
        (signal.SIGTERM, "measuring", "TerminatedError: received SIGTERM"),
        (signal.SIGHUP, "measuring", "TerminatedError: received SIGHUP"),
    ],
)
def test_an_interrupted_run_leaves_nothing(tmp_path: pathlib.Path, signum: int, when: str, expected: str,
                                           default_signals: Callable[[], None], process_tree: Any) -> None:
    seen: list[str] = []
    with process_tree.started([sys.executable, "-c", _RUNNER, str(tmp_path), TESTBED_SUBNET],
                              default_signals) as runner:
        assert runner.stdout is not None
        for line in runner.stdout:
            seen.append(line)
            if when in line:
                break
        else:
            err = runner.stderr.read() if runner.stderr else ""
            pytest.fail(f"the run ended before {when!r}: {''.join(seen)} {err}")
        if signum != signal.SIGINT:
            time.sleep(1.0)  # well inside the window
        runner.send_signal(signum)
        _, err = runner.communicate(timeout=60)
    # the status each signal is documented to give (non-zero alone let a SIGHUP reported as SIGTERM pass): 128 +
    # TerminatedError's signum, as the tracegen command exits, and Python's own end by SIGINT on Ctrl-C
    assert runner.returncode == (-signal.SIGINT if signum == signal.SIGINT else 128 + signum), err[-2000:]
    assert expected in err
    _assert_nothing_left(RUN_ID.findall("".join(seen)))
    assert not (tmp_path / "measured.csv").exists()  # nothing was measured, so nothing was written


def test_windows_grow_with_workers_from_the_first_single_worker_rate(tmp_path: pathlib.Path) -> None:
    config = TestbedConfig(out_dir=tmp_path, model="mlp", workers=(1, 2, 5), bandwidth_bits_per_s=10**8,
                           window_s=20.0, window_steps=60, max_window_s=60.0)
    assert window_for(config, 1, []) == 20.0  # no N = 1 rate yet
    first = Measurement(n_workers=1, repeat=0, steps_per_s=4.0, worker_steps_per_s=(4.0,), global_steps_per_s=4.0,
                        window_s=20.0, qdisc_drops=0, tcp_retrans_segs=0)
    assert window_for(config, 2, [first]) == pytest.approx(1.15 * 60 * 2 / 4.0, abs=0.05)  # 34.5 s
    assert window_for(config, 5, [first]) == 60.0  # capped
    fast = dataclasses.replace(first, steps_per_s=100.0, worker_steps_per_s=(100.0,))
    assert window_for(config, 2, [fast]) == 20.0  # never shorter than window_s
