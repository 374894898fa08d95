"""``tracegen sweep``: rows equal direct simulations, resume after SIGKILL, clean stops on SIGINT/SIGTERM, a real
Ray head, and one-line errors for bad grids."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import parsers.sweepdata
from parsers import read_trace
from parsers.linkprofile import read_link_profile
from parsers.singleworker import read_single_worker
from parsers.sweepdata import COLUMNS, part_paths, read_point_ids, read_rows
from tracegen.cli import main
from tracegen.instance import on_instances
from tracegen.metrics import link_utilisation, ps_cpu_utilisation, steps_per_s
from tracegen.model import build_model
from tracegen.predict import PredictConfig, batch_size_of, prepared
from tracegen.simulate import SimConfig, simulate
from tracegen.sweep import build_inputs, run_chunk, sweep
from tracegen.units import parse_rate
from validation.ports import free_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRACE = ROOT / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"
SMALL = ["--steps", "4", "--warmup-steps", "1"]
# long enough that a signal sent when the first part appears arrives well before the end
LONG = [str(TRACE), "--workers", "1-40", "--policy", "tf,tictac", "--seeds", "2", *SMALL, "--part-points", "4",
        "--jobs", "2"]
EXE = pathlib.Path(sys.executable).parent / "tracegen"
# the command as EXE runs it, with the grid's points in --jobs processes however short it is (PARALLEL_S): a signal
# must stop the workers too
IN_PROCESSES = [sys.executable, "-c", "import sys, tracegen.predict; tracegen.predict.PARALLEL_S = 0; "
                "from tracegen.entry import main; sys.exit(main(sys.argv[1:]))"]
COMPUTED = re.compile(r"computed (\d+) points, (\d+) were already in")


def _direct(n: int, link: str, policy: str, speed: float, seed: int) -> tuple[float, ...]:
    """What simulate() gives for one point, built here from the pieces predict and plan use."""
    model = build_model(read_trace(TRACE))
    single = read_single_worker(TRACE / "single-worker.json")
    if link.endswith(".json"):
        config = PredictConfig(link_profile=read_link_profile(link), single_worker=single)
    else:
        config = PredictConfig(bandwidth_bytes_per_s=parse_rate(link), single_worker=single)
    prep = prepared(model, config)  # tracing's cost undone, as predict does
    model, spec = prep.model, prep.links["mid"]
    if speed != 1.0:
        model = on_instances(model, dataclasses.replace(spec, ps_quota=None), worker_speed=speed, ps_speed=1.0)
    r = simulate(model, SimConfig(n_workers=n, steps=4, warmup_steps=1, seed=seed, link_spec=spec, policy=policy))
    return (steps_per_s(r), link_utilisation(r, "pull"), link_utilisation(r, "push"), ps_cpu_utilisation(r),
            r.n_events, r.end_ns)


def test_rows_equal_direct_simulations(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import tracegen.predict

    monkeypatch.setattr(tracegen.predict, "PARALLEL_S", 0)  # the points in the two processes asked for
    profile = str(TRACE / "link-profile.json")
    out = tmp_path / "o'sweep"  # a quote: the DuckDB query printed must escape it as SQL does ('')
    argv = ["sweep", str(TRACE), "--workers", "1,3", "--bandwidth", "200Mbit/s", "--link-profile", profile,
            "--policy", "tf,tictac", "--worker-speed", "1,2", "--seeds", "2", *SMALL, "--part-points", "5",
            "--jobs", "2", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "; on 2 local processes;" in printed, printed
    assert COMPUTED.search(printed).groups() == ("32", "0")  # type: ignore[union-attr]
    assert f"read_parquet('{tmp_path}/o''sweep/*.parquet')" in printed, printed
    rows = read_rows(out)
    assert list(rows.columns) == [name for name, _ in COLUMNS]
    assert len(rows) == 32 and rows.point_id.is_unique
    assert [len(pd.read_parquet(p)) for p in part_paths(out)] == [5] * 6 + [2]
    assert len(pd.read_parquet(out)) == 32  # the directory reads as one dataset
    for row in rows.itertuples():
        got = (row.steps_per_s, row.pull_link_utilisation, row.push_link_utilisation, row.ps_cpu_utilisation,
               row.n_events, row.sim_end_ns)
        assert got == _direct(row.n_workers, row.link, row.policy, row.worker_speed, row.seed), row
        assert row.samples_per_s == row.steps_per_s * batch_size_of(str(TRACE), None)
    one = rows[(rows.n_workers == 1) & (rows.policy == "tf") & (rows.seed == 0) & (rows.link == profile)]
    assert one.set_index("worker_speed").steps_per_s[2.0] > one.set_index("worker_speed").steps_per_s[1.0]
    # the same command again: every point is recognised, nothing is recomputed or added
    assert main(argv) == 0
    assert COMPUTED.search(capsys.readouterr().out).groups() == ("0", "32")  # type: ignore[union-attr]
    pd.testing.assert_frame_equal(read_rows(out), rows)


def test_stale_temporary_files_are_removed_and_foreign_parts_refused(tmp_path: pathlib.Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sweep"
    out.mkdir()
    (out / ".part-000000.parquet.0123456789abcdef.tmp").write_bytes(b"half a part")
    argv = ["sweep", str(TRACE), "--workers", "1", *SMALL, "--jobs", "1", "--out", str(out)]
    assert main(argv) == 0
    assert not list(out.glob("*.tmp")) and len(pd.read_parquet(out)) == 1
    capsys.readouterr()
    pd.DataFrame({"n_workers": [1]}).to_parquet(out / "part-000001.parquet")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "part-000001.parquet: no column 'point_id' (nor 27 more of the sweep's 29): not the sweep schema" in err
    assert err.count("\n") == 1
    (out / "part-000001.parquet").rename(out / "data.parquet")  # a user's own table: read with the parts
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "data.parquet: not a part of a sweep" in err and err.count("\n") == 1


def _start_and_stop(out: pathlib.Path, sig: signal.Signals, tree: Any,
                    preexec: Callable[[], None] | None = None) -> tuple[int, str, list[int]]:
    """Start a sweep, send ``sig`` to it once a part exists; (exit code, stderr, workers still alive after).
    ``preexec``: the tests conftest's ``default_signals``, so that SIGINT works however the suite was started."""
    with tree.started([*IN_PROCESSES, "sweep", *LONG, "--out", str(out)], preexec) as proc:
        deadline = time.monotonic() + 120
        while not part_paths(out) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        workers = tree.children(proc.pid)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    return proc.returncode, err, tree.wait_gone(workers)


def _resume_and_check(out: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Rerun the interrupted sweep: only the points missing are computed, and every point is there once."""
    before = read_point_ids(out)
    inputs = build_inputs(TRACE, workers=range(1, 41), policies=("tf", "tictac"), seeds=(0, 1), steps=4,
                          warmup_steps=1, batch_size=batch_size_of(str(TRACE), None))
    expected = {inputs.point_id(p) for p in inputs.grid.points()}
    assert before < expected and before  # stopped half-way: some parts, not all
    assert main(["sweep", *LONG, "--out", str(out)]) == 0
    computed, resumed = map(int, COMPUTED.search(capsys.readouterr().out).groups())  # type: ignore[union-attr]
    assert (computed, resumed) == (len(expected) - len(before), len(before))
    ids = read_rows(out).point_id
    assert ids.is_unique and set(ids) == expected


@pytest.mark.slow
def test_resume_after_sigkill_computes_no_point_twice(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                                      process_tree: Any) -> None:
    code, _, left = _start_and_stop(tmp_path / "sweep", signal.SIGKILL, process_tree)
    assert code == -signal.SIGKILL
    assert left == []  # the worker processes died with their driver
    _resume_and_check(tmp_path / "sweep", capsys)


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code", "said"), [(signal.SIGINT, 130, "interrupted"),
                                                   (signal.SIGTERM, 143, "stopped by SIGTERM")])
def test_signals_stop_workers_and_keep_the_dataset_whole(sig: signal.Signals, code: int, said: str,
                                                         tmp_path: pathlib.Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         default_signals: Callable[[], None],
                                                         process_tree: Any) -> None:
    out = tmp_path / "sweep"
    got, err, left = _start_and_stop(out, sig, process_tree, default_signals)
    assert got == code and f"tracegen sweep: {said}" in err, err[-3000:]  # a failure shows what it said
    assert left == []
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    _resume_and_check(out, capsys)


class _InProcess:
    """A runner of one slot that runs each chunk here, in this process, as the local processes would."""

    slots = 1

    def __init__(self) -> None:
        self.finished: set[str] = set()  # the points whose rows were handed over

    def run(self, inputs: Any, chunks: Any, on_rows: Callable[[list[Any]], None]) -> None:
        for chunk in chunks:
            rows = run_chunk(inputs, chunk)
            self.finished |= {row["point_id"] for row in rows}
            on_rows(rows)


def test_ctrl_c_while_a_part_is_written_keeps_that_parts_rows(tmp_path: pathlib.Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C that landed while a full part was being written lost its rows (taken from the buffer, never
    written), and the stop wrote only the rows after them: 8 points computed, not kept (a stopped CLI sweep
    left part-000001.parquet alone, 2026-12-06). The rows finished before a stop are kept, as the docstring
    says, and the stop still ends the run."""
    inputs = build_inputs(TRACE, workers=(1, 2, 3), policies=("tf", "tictac"), seeds=(0,), steps=4,
                          warmup_steps=1, batch_size=1)
    real_write = parsers.sweepdata.write_bytes_atomic
    writes: list[str] = []

    def interrupted_once(path: pathlib.Path, data: bytes) -> None:
        writes.append(path.name)
        if len(writes) == 1:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C, while the first part is being written
        real_write(path, data)

    monkeypatch.setattr(parsers.sweepdata, "write_bytes_atomic", interrupted_once)
    out, runner = tmp_path / "sweep", _InProcess()
    # as in a foreground run: a background job, or CI, inherits SIGINT ignored, and the Ctrl-C would do nothing
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            sweep(inputs, out, runner, part_points=2)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert writes and runner.finished
    assert read_point_ids(out) == runner.finished, writes
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


RAY_LOWEST_PORT = 20_000


@pytest.mark.slow
def test_a_sweep_through_a_real_ray_head_gives_the_local_rows(tmp_path: pathlib.Path) -> None:
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}  # a throw-away head on localhost: no token to share
    # outside the ephemeral range, so no outgoing connection takes it before Ray binds it, and above Ray's own
    # worker ports (10002-19999), which its head refuses to share
    port = free_port(lowest=RAY_LOWEST_PORT)
    temp = pathlib.Path(tempfile.mkdtemp(prefix="tg-ray-", dir="/tmp"))  # Ray's socket paths must stay short
    with (tmp_path / "head.log").open("w") as log:
        head = subprocess.Popen([str(EXE.parent / "ray"), "start", "--head", "--block", f"--port={port}",
                                 "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats",
                                 f"--temp-dir={temp}"], stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while head.poll() is None and time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        assert head.poll() is None, (tmp_path / "head.log").read_text()[-2000:]
        grid = [str(TRACE), "--workers", "1,4", "--policy", "tf,tictac", "--seeds", "2", *SMALL, "--part-points", "3"]
        done = subprocess.run([str(EXE), "sweep", *grid, "--ray", f"127.0.0.1:{port}", "--out",
                               str(tmp_path / "ray-rows")], capture_output=True, text=True, env=env, timeout=300,
                              check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert COMPUTED.search(done.stdout).groups() == ("8", "0")  # type: ignore[union-attr]
        assert main(["sweep", *grid, "--jobs", "2", "--out", str(tmp_path / "local-rows")]) == 0
        pd.testing.assert_frame_equal(read_rows(tmp_path / "ray-rows"), read_rows(tmp_path / "local-rows"))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGTERM)  # `ray start --block` stops the processes it started
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _group_alive(head.pid):
            time.sleep(0.2)
        if _group_alive(head.pid):
            os.killpg(head.pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)
    assert not _group_alive(head.pid)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize(("argv", "message"), [
    (["--workers", "0"], "'--workers': '0' must be N or LO-HI"),
    (["--bandwidth", "fast"], "'--bandwidth': cannot read 'fast' as a rate"),
    (["--bandwidth", "0Mbit/s"], "'--bandwidth' must be between 1 kbit/s and 8000 Tbit/s (1000 TB/s) (got '0Mbit/s'"),
    (["--bandwidth", "1G,1Gbit/s"], "'--bandwidth': '1G' and '1Gbit/s' are the same rate; give each link once"),
    (["--policy", "tf,no-such-order.txt"], "'--policy': cannot read order file 'no-such-order.txt'"),
    (["--policy", "tf,tictac,tf"], "'--policy': 'tf' is given twice in 'tf,tictac,tf'; give each once"),
    (["--worker-speed", "1,2,1.0"], "'--worker-speed': '1.0' in '1,2,1.0' is a speed given before; give each once"),
    (["--payload-fraction", "2", "--bandwidth", "1Gbit/s"], "'--payload-fraction' must be from 0.01 to 1 (got 2)"),
    (["--ray", ""], "'--ray' must be a cluster address such as HOST:6379, auto or local (got '')"),
    (["--link-profile", str(TRACE / "link-profile.json"), "--link-profile", str(TRACE / "link-profile.json")],
     f"'--link-profile': {str(TRACE / 'link-profile.json')!r} and {str(TRACE / 'link-profile.json')!r} are the "
     "same profile"),
    (["--policy", "tf,"], "'--policy': 'tf,' has an empty entry"),
    (["--worker-speed", "1,0"], "'--worker-speed': '0' in '1,0' must be from 0.001 to 1000"),
    (["--worker-speed", "1e-300"], "'--worker-speed': '1e-300' in '1e-300' must be from 0.001 to 1000"),
    (["--worker-speed", "1,fast"], "'--worker-speed': cannot read 'fast' in '1,fast'"),
    (["--seeds", "0"], "'--seeds' must be at least 1 (got 0)"),
    # a seed per point: a billion of them were made into a tuple, 24 GB, until the kernel killed the command
    (["--seeds", "1000000000"], "'--seeds' must be at most 10000000, the most points a grid may have (got 1000000000)"),
    (["--steps", "0"], "'--steps' must be from 3"),
    # predict's fewest: a window of 1 step read the mlp trace at 146 steps/s, its link's bound 96
    (["--steps", "2"], "'--steps' must be from 3 to 1000000 (got 2), as for predict"),
    (["--warmup-steps", "0"], "'--warmup-steps' must be from 1"),
    (["--part-points", "0"], "'--part-points' must be from 1"),
    (["--jobs", "0"], "'--jobs' must be from 1"),
    (["--batch-size", "0"], "'--batch-size' must be from 1"),
    # a typo, not a job: it ran (a helper's finding) where predict refuses anything past its own limit
    (["--workers", "1-100000", "--steps", "1000000"], "years on one core (more than the 1e+14 allowed)"),
    (["--bandwidth", "1Gbit/s,"], "'--bandwidth': '1Gbit/s,' has an empty entry"),
    # a thousands separator, split as two rates: it said "'1' has no unit", of a value the user never wrote
    (["--bandwidth", "200Mbit/s,1,000Mbit/s"], "'--bandwidth': '200Mbit/s,1,000Mbit/s': a comma separates rates, so "
                                               "'1' is one, with no unit; write 1000Mbit/s (no thousands separator), "
                                               "or give each rate its unit"),
    (["--bandwidth", "1,5Gbit/s"], "'--bandwidth': '1,5Gbit/s': a comma separates rates, so '1' is one, with no "
                                   "unit; write 1.5Gbit/s (a decimal point), or give each rate its unit"),
    # "cannot read '' in '1,,2'", of an entry that is not there: as --bandwidth and --policy say it
    (["--worker-speed", "1,,2"], "'--worker-speed': '1,,2' has an empty entry; give speeds comma-separated"),
    (["--worker-speed", ""], "'--worker-speed': '' has an empty entry"),
    (["--ray", "127.0.0.1:1"], "--ray '127.0.0.1:1': no Ray head answers there"),
    # Ray reads only the bracketed form; this one was tried at ::1 port 1, and Ray would then refuse it
    (["--ray", "::1:6379"], "'--ray': an IPv6 address goes in brackets before its port: write [::1]:6379"),
    (["--ray", "ray-head:x"], "'--ray' must be HOST:PORT"),  # was left to Ray: 'Malformed address port x'
    (["--link", "conn", "--link-profile", "missing.json"], "missing.json"),
    (["--bandwidth", "1Gbit/s,200Mbit/s", "--bandwidth", "1Gbit/s"], "'--bandwidth': '1Gbit/s' is given twice"),
    # the share of a --bandwidth or of a catalogue's rates: without either it went unused (a hardening pass)
    (["--payload-fraction", "0.5"], "'--payload-fraction' 0.5 is the share of a --bandwidth"),
])
def test_a_bad_grid_is_one_line_and_no_part(argv: list[str], message: str, tmp_path: pathlib.Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sweep"
    assert main(["sweep", str(TRACE), *argv, "--out", str(out)]) == 2
    printed = capsys.readouterr()
    err = printed.err
    assert err.startswith("tracegen sweep: error: ") and message in err and err.count("\n") == 1
    assert printed.out == ""  # no grid line before the refusal
    assert part_paths(out) == []


@pytest.mark.usefixtures("ipv6_loopback")
def test_a_ray_head_at_an_ipv6_address_is_asked_for_there(tmp_path: pathlib.Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """--ray [::1]:PORT, the form Ray reads: the check looked '[::1]' up as a host name and said 'Name or service
    not known', as if the address were wrong."""
    with socket.create_server(("::1", 0), family=socket.AF_INET6) as closed:
        port = closed.getsockname()[1]
    assert main(["sweep", str(TRACE), "--ray", f"[::1]:{port}", "--out", str(tmp_path / "sweep")]) == 2
    assert capsys.readouterr().err == (f"tracegen sweep: error: --ray '[::1]:{port}': no Ray head answers there "
                                       "(Connection refused)\n")


@pytest.mark.parametrize("where", ["file", "under a file", "manifest a folder"])
def test_an_unusable_out_is_refused_before_the_grid_is_said(where: str, tmp_path: pathlib.Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """sweep printed its grid line, then refused --out; and with a folder where tracegen keeps its list of a run's
    files (.tracegen-run.json), it ran every point and failed at the end."""
    (tmp_path / "notes.txt").write_text("mine")
    out = {"file": tmp_path / "notes.txt", "under a file": tmp_path / "notes.txt" / "sweep",
           "manifest a folder": tmp_path / "sweep"}[where]
    if where == "manifest a folder":
        (out / ".tracegen-run.json").mkdir(parents=True)
    assert main(["sweep", str(TRACE), "--workers", "1", *SMALL, "--jobs", "1", "--out", str(out)]) == 2
    printed = capsys.readouterr()
    named = ".tracegen-run.json: is not a file" if where == "manifest a folder" else "notes.txt"
    assert printed.out == "" and printed.err.count("\n") == 1 and named in printed.err, printed
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert not list(tmp_path.rglob("*.parquet"))


@pytest.mark.parametrize("where", ["manifest a folder", "a user's file", "another run's"])
def test_an_unusable_out_is_refused_before_the_trace_is_read(where: str, tmp_path: pathlib.Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """--out was opened only after the trace was read and the grid built: a folder where tracegen lists a run's
    files, or a directory another sweep was writing into, was refused after the trace's warnings ('8, 9, ...
    PS shards left out'), two lines; a user's file in it after the grid line. Each is now the one line, before
    the trace is read: a trace that is not there is not what the refusal names."""
    out = tmp_path / "sweep"
    out.mkdir()
    if where == "manifest a folder":
        (out / ".tracegen-run.json").mkdir()
    elif where == "a user's file":
        (out / "notes.txt").write_text("mine\n")
    argv = ["sweep", "--workers", "1", "--ps-shards", "1-60", *SMALL, "--jobs", "1", "--out", str(out)]
    named = {"manifest a folder": ".tracegen-run.json: is not a file", "a user's file": "notes.txt: not a part",
             "another run's": "another tracegen run is writing into this directory"}[where]
    with contextlib.ExitStack() as stack:
        if where == "another run's":
            lock = stack.enter_context((out / ".tracegen.lock").open("a"))
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        for trace in (TRACE, tmp_path / "no-such-trace"):
            assert main(["sweep", str(trace), *argv[1:]]) == 2
            printed = capsys.readouterr()
            assert printed.out == "" and printed.err.count("\n") == 1 and named in printed.err, printed
    assert not part_paths(out)


@pytest.mark.parametrize("inside", ["sweep", "plugins/sweep"])
def test_a_sweep_inside_the_trace_directory_resumes(inside: str, tmp_path: pathlib.Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Every file under a trace directory was hashed into the points' ids: a sweep into TRACE/sweep wrote its part,
    and its rerun found none of its points done, each part changing the ids again; such an --out was refused. Only
    the files the trace is read from are hashed now: its parts there are no part of the trace."""
    trace = tmp_path / "trace"
    shutil.copytree(TRACE, trace)
    out = trace / inside
    argv = ["sweep", str(trace), "--workers", "1", *SMALL, "--jobs", "1", "--out", str(out)]
    assert main(argv) == 0
    assert COMPUTED.search(capsys.readouterr().out).groups() == ("1", "0")  # type: ignore[union-attr]
    assert main(argv) == 0
    assert COMPUTED.search(capsys.readouterr().out).groups() == ("0", "1")  # type: ignore[union-attr]
    assert main([*argv[:-1], str(trace)]) == 2  # the trace's own folder: its steps are no sweep's parts
    printed = capsys.readouterr()
    assert printed.out == "" and printed.err.count("\n") == 1 and "not a part of a sweep" in printed.err, printed
    top = pathlib.PurePath(inside).parts[0]  # the folder the sweep went into, and nothing else new
    assert sorted(p.name for p in trace.iterdir()) == sorted([*(p.name for p in TRACE.iterdir()), top])


def test_a_job_traced_with_two_ps_tasks_is_swept_on_both(tmp_path: pathlib.Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """mlp traced with two PS tasks (real TF, data/shards/): every point keeps each parameter on its traced PS and
    link, as predict does; on one PS the same point is far slower."""
    trace = ROOT / "data/shards/test/mlp_200mbit_k2_greedy/trace"
    out = tmp_path / "sweep"
    assert main(["sweep", str(trace), "--workers", "1,2", "--bandwidth", "200Mbit/s", *SMALL, "--jobs", "1",
                 "--out", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err  # tracing's cost undone on both PS, as predict does
    rows = read_rows(out).set_index("n_workers")
    traced = build_model(read_trace(trace))
    config = PredictConfig(bandwidth_bytes_per_s=parse_rate("200Mbit/s"),
                           single_worker=read_single_worker(trace / "single-worker.json"))
    prep = prepared(traced, config.on_traced_ps_tasks(traced))
    model, spec = prep.model, prep.links["mid"]
    assert model.traced_ps_task
    for n in (1, 2):
        config = SimConfig(n_workers=n, steps=4, warmup_steps=1, seed=0, link_spec=spec)
        on_both = simulate(model, dataclasses.replace(config, ps_shard_of_task=model.traced_ps_task))
        assert rows.steps_per_s[n] == steps_per_s(on_both)
        assert steps_per_s(simulate(model, config)) < 0.8 * steps_per_s(on_both)


def test_a_single_worker_measurement_the_replay_cannot_reach_is_warned_of(tmp_path: pathlib.Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A single-worker.json four times faster than the link lets one worker go: the sweep says so, per link, as
    predict and plan do, and still runs."""
    from parsers.singleworker import SINGLE_WORKER_NAME, write_single_worker

    trace = tmp_path / "trace"
    shutil.copytree(TRACE, trace)
    single = read_single_worker(TRACE / SINGLE_WORKER_NAME)
    write_single_worker(dataclasses.replace(single, steps_per_s=single.steps_per_s * 4,
                                            ps_cpu_s_per_step=(single.ps_cpu_s_per_step or 0) / 4),
                        trace / SINGLE_WORKER_NAME)
    assert main(["sweep", str(trace), "--workers", "1", "--bandwidth", "500Mbit/s", *SMALL, "--jobs", "1",
                 "--out", str(tmp_path / "sweep")]) == 0
    err = capsys.readouterr().err
    assert f"warning: link 500Mbit/s: {trace / SINGLE_WORKER_NAME}: one worker replays at" in err
    assert "not pinned" in err


@pytest.mark.parametrize("what", ["trace", "link-profile"])
def test_a_fifo_is_refused_not_waited_on(what: str, tmp_path: pathlib.Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    argv = [str(EXE), "sweep", str(fifo) if what == "trace" else str(TRACE), "--workers", "1", *SMALL, "--jobs", "1",
            *(["--link-profile", str(fifo)] if what == "link-profile" else []), "--out", str(tmp_path / "out")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and str(fifo) in done.stderr and "Traceback" not in done.stderr


def _parts(tmp_path: pathlib.Path, grid: list[str], name: str, jobs: str,
           capsys: pytest.CaptureFixture[str]) -> tuple[list[bytes], str]:
    """The parts a sweep of ``grid`` in ``jobs`` writes into ``tmp_path / name``, and its grid line."""
    capsys.readouterr()
    assert main(["sweep", *grid, "--jobs", jobs, "--out", str(tmp_path / name)]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if line.startswith("grid: ")]
    assert len(said) == 1
    return [p.read_bytes() for p in part_paths(tmp_path / name)], said[0]


def test_an_uninterrupted_sweep_writes_the_same_bytes_whatever_its_processes(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts held rows in the order points finished: two processes gave other bytes from run to run."""
    import tracegen.predict

    monkeypatch.setattr(tracegen.predict, "PARALLEL_S", 0)  # --jobs 2 in two processes, however short the grid
    grid = [str(TRACE), "--workers", "1-12", "--policy", "tf,tictac", *SMALL, "--part-points", "5"]
    one, said = _parts(tmp_path, grid, "one", "1", capsys)
    assert len(one) == 5 and "; in this process;" in said  # 24 points in parts of 5
    for name in ("two", "two-again"):
        two, said = _parts(tmp_path, grid, name, "2", capsys)
        assert two == one and "; on 2 local processes;" in said


def test_a_sweep_too_short_to_gain_from_processes_runs_in_this_one(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """sweep started all --jobs processes whatever the grid, about a second each, for a grid of a fraction of a
    second (and one process for --jobs 1). Its points now go to processes only when the grid would take
    PARALLEL_S on one core, as predict's curves and plan's pairs do, else run in the sweep's own process; the
    parts are the same bytes."""
    import tracegen.predict

    grid = [str(TRACE), "--workers", "1-6", "--policy", "tf,tictac", *SMALL, "--part-points", "5"]
    alone, said = _parts(tmp_path, grid, "alone", "2", capsys)
    assert "; in this process (too short to gain from 2 local processes);" in said, said
    monkeypatch.setattr(tracegen.predict, "PARALLEL_S", 0)  # the same grid, as if long enough
    side_by_side, said = _parts(tmp_path, grid, "side-by-side", "2", capsys)
    assert "; on 2 local processes;" in said, said
    assert len(alone) == 3 and side_by_side == alone  # 12 points in parts of 5


def test_a_resumed_sweep_picks_its_processes_for_the_points_left(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A resumed sweep chose its local processes from the whole grid's seconds, the points left not known there:
    2 points left of a grid long enough for processes started --jobs of them (about a second each) and said 'on 2
    local processes'. The points left decide now: those 2 run in this process, and the grid line says so; the
    same grid fresh still runs in processes, and the resumed part is the same bytes either way."""
    import tracegen.predict
    import tracegen.sweeprunner
    from tracegen.cli_sweep import grid_seconds

    grid = [str(TRACE), "--policy", "tf,tictac", *SMALL, "--part-points", "5"]
    whole = build_inputs(TRACE, workers=range(1, 13), policies=("tf", "tictac"), steps=4, warmup_steps=1,
                         batch_size=batch_size_of(str(TRACE), None))
    # the whole grid (24 points) long enough for processes, its 2 points at N = 12 alone not
    monkeypatch.setattr(tracegen.predict, "PARALLEL_S", 0.999 * grid_seconds(whole))
    assert main(["sweep", *grid, "--workers", "1-11", "--jobs", "1", "--out", str(tmp_path / "in-process")]) == 0
    shutil.copytree(tmp_path / "in-process", tmp_path / "in-processes")
    fresh, said = _parts(tmp_path, [*grid, "--workers", "1-12"], "fresh", "2", capsys)
    assert "; on 2 local processes;" in said, said

    def no_processes(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("2 points left started local processes")

    with monkeypatch.context() as patched:
        patched.setattr(tracegen.sweeprunner, "Processes", no_processes)
        resumed, said = _parts(tmp_path, [*grid, "--workers", "1-12"], "in-process", "2", capsys)
    assert "; the 2 points left in this process (too short to gain from 2 local processes);" in said, said
    monkeypatch.setattr(tracegen.predict, "PARALLEL_S", 0)  # the same points left, as if long enough
    side_by_side, said = _parts(tmp_path, [*grid, "--workers", "1-12"], "in-processes", "2", capsys)
    assert "; the 2 points left on 2 local processes;" in said, said
    assert side_by_side == resumed and len(resumed) == 5 + 1  # 22 points in parts of 5, then the 2 left
    pd.testing.assert_frame_equal(read_rows(tmp_path / "in-process").sort_values("point_id", ignore_index=True),
                                  read_rows(tmp_path / "fresh").sort_values("point_id", ignore_index=True))
    assert len(fresh) == 5


def test_processes_are_picked_for_the_seconds_of_the_points_left() -> None:
    """The choice itself: a fresh grid long enough gets every --jobs process, a resumed one's few cheap points left
    this process, its many costly ones the processes, and a grid with nothing left starts none."""
    from tracegen.cli_sweep import local_runner
    from tracegen.predict import PARALLEL_S
    from tracegen.sweep import SweepProgress

    def start(todo: int, resumed: int, seconds: float) -> SweepProgress:
        return SweepProgress(done=0, todo=todo, resumed=resumed, parts_written=0, seconds_todo=seconds)

    runner, where = local_runner(start(2000, 0, 10 * PARALLEL_S), 4)
    assert (runner.slots, where) == (4, "on 4 local processes")
    runner, where = local_runner(start(3, 1997, PARALLEL_S / 100), 4)
    assert (runner.slots, where) == (1, "the 3 points left in this process (too short to gain from 4 local processes)")
    runner, where = local_runner(start(1500, 500, 10 * PARALLEL_S), 4)
    assert (runner.slots, where) == (4, "the 1500 points left on 4 local processes")
    runner, where = local_runner(start(1, 1999, PARALLEL_S / 100), 1)
    assert (runner.slots, where) == (1, "the 1 point left in this process")
    runner, where = local_runner(start(0, 2000, 0.0), 4)
    assert (runner.slots, where) == (1, "every point already done")


def test_ps_shards_are_an_axis_placed_as_predict_places_them(tmp_path: pathlib.Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Each K of --ps-shards is the simulation predict's shard table runs for K (the parameters placed on K
    shards); K = 1 of a one-PS trace is the traced PS, the same point as a sweep without shards."""
    from tracegen.placement import creation_order, place

    plain, sharded = tmp_path / "plain", tmp_path / "sharded"
    assert main(["sweep", str(TRACE), "--workers", "3", "--bandwidth", "500Mbit/s", *SMALL, "--jobs", "1",
                 "--out", str(plain)]) == 0
    assert main(["sweep", str(TRACE), "--workers", "3", "--bandwidth", "500Mbit/s", "--ps-shards", "1-3",
                 "--placement", "greedy", *SMALL, "--jobs", "1", "--out", str(sharded)]) == 0
    out = capsys.readouterr().out
    assert "3 PS shard counts" in out and "computed 3 points" in out
    rows = read_rows(sharded).set_index("ps_shards")
    assert list(rows.placement) == ["as traced", "greedy", "greedy"]  # K = 1 is the traced PS, whichever run
    assert rows.point_id[1] == read_rows(plain).point_id[0]
    assert read_point_ids(plain) < read_point_ids(sharded)  # so resuming into the plain dataset skips K = 1
    trace = read_trace(TRACE)
    prep = prepared(build_model(trace), PredictConfig(bandwidth_bytes_per_s=parse_rate("500Mbit/s"),
                                                      single_worker=read_single_worker(TRACE / "single-worker.json")))
    config = SimConfig(n_workers=3, steps=4, warmup_steps=1, seed=0, link_spec=prep.links["mid"])
    rates = []
    for k in (1, 2, 3):
        of_task = place(prep.model, k, "greedy", creation_order(trace)).shard_of_task if k > 1 else ()
        rates.append(steps_per_s(simulate(prep.model, dataclasses.replace(config, ps_shard_of_task=of_task))))
        assert rows.steps_per_s[k] == rates[-1]
        assert 0 <= rows.busiest_shard[k] < k and rows.busiest_shard_utilisation[k] >= rows.pull_link_utilisation[k]
    assert rates[0] < rates[1]  # three workers saturate one PS's link; a second shard relieves it


def test_a_job_traced_with_two_ps_tasks_swept_on_one_is_the_one_ps_simulation(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = ROOT / "data/shards/test/mlp_200mbit_k2_greedy/trace"
    out = tmp_path / "sweep"
    assert main(["sweep", str(trace), "--workers", "2", "--bandwidth", "200Mbit/s", "--ps-shards", "1,2", *SMALL,
                 "--jobs", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    rows = read_rows(out).set_index("ps_shards")
    prep = prepared(build_model(read_trace(trace)),
                    PredictConfig(bandwidth_bytes_per_s=parse_rate("200Mbit/s"),
                                  single_worker=read_single_worker(trace / "single-worker.json")))
    config = SimConfig(n_workers=2, steps=4, warmup_steps=1, seed=0, link_spec=prep.links["mid"])
    assert rows.steps_per_s[1] == steps_per_s(simulate(prep.model, config))
    assert rows.busiest_shard[1] == 0 and rows.steps_per_s[1] < rows.steps_per_s[2]


@pytest.mark.parametrize(("argv", "message"), [
    (["--placement", "greedy"], "'--placement' 'greedy' places parameters on the shards of --ps-shards"),
    (["--ps-shards", "0"], "'--ps-shards': '0' must be N or LO-HI"),
    (["--ps-shards", ""], "'--ps-shards': cannot read ''"),
    (["--ps-shards", "2", "--placement", "nowhere.csv"],
     "'--placement' must be round-robin, greedy or a placement file (got 'nowhere.csv': no such file)"),
])
def test_bad_ps_shards_are_one_line_and_no_part(argv: list[str], message: str, tmp_path: pathlib.Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sweep"
    assert main(["sweep", str(TRACE), "--workers", "1", *SMALL, *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tracegen sweep: error: ") and message in err and err.count("\n") == 1
    assert part_paths(out) == []


def test_a_catalogue_sweeps_its_pairs_as_plan_moves_the_step_onto_them(tmp_path: pathlib.Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Each worker type x PS type of the example catalogue is a link of the grid: its row is the simulation plan
    runs for that pair (the PS type's link, the types' speeds), with the types and the cluster's $/hour."""
    from parsers.catalogue import read_catalogue
    from tracegen.instance import instance_links
    from tracegen.plan import traced_hosts

    catalogue = read_catalogue(ROOT / "data/catalogue/example.csv")
    out = tmp_path / "sweep"
    assert main(["sweep", str(TRACE), "--workers", "2,6", "--catalogue", str(ROOT / "data/catalogue/example.csv"),
                 "--ps-shards", "1,2", "--worker-speed", "1,2", *SMALL, "--jobs", "2", "--out", str(out)]) == 0
    pairs = len(catalogue.workers) * len(catalogue.servers)
    assert f"x {pairs} links x 2 PS shard counts" in capsys.readouterr().out
    rows = read_rows(out)
    assert len(rows) == 2 * pairs * 2 * 2 and set(rows.link_kind) == {"instances"}
    model, traced, _ = traced_hosts(build_model(read_trace(TRACE)), read_link_profile(TRACE / "link-profile.json"),
                                    read_single_worker(TRACE / "single-worker.json"))
    checked = 0
    for worker in catalogue.workers[:2]:
        for ps in catalogue.servers[-1:]:
            spec = instance_links(model, traced, worker=worker, ps=ps, measured_rpc=True)["mid"]
            for speed in (1.0, 2.0):
                moved = on_instances(model, traced, worker_speed=worker.compute_speed * speed,
                                     ps_speed=ps.compute_speed)
                want = steps_per_s(simulate(moved, SimConfig(n_workers=6, steps=4, warmup_steps=1, seed=0,
                                                             link_spec=spec)))
                row = rows[(rows.worker_type == worker.name) & (rows.ps_type == ps.name) & (rows.n_workers == 6)
                           & (rows.ps_shards == 1) & (rows.worker_speed == speed)]
                assert len(row) == 1 and row.steps_per_s.iloc[0] == want
                assert row.link.iloc[0] == f"{worker.name}+{ps.name}"
                checked += 1
    assert checked == 4
    two = rows[rows.ps_shards == 2].iloc[0]
    price = {i.name: i.usd_per_hour for i in catalogue.instances}
    assert two.usd_per_hour == pytest.approx(two.n_workers * price[two.worker_type] + 2 * price[two.ps_type])
    assert main(["sweep", str(TRACE), "--workers", "1", "--catalogue", str(ROOT / "data/catalogue/example.csv"),
                 "--bandwidth", "1Gbit/s", *SMALL, "--out", str(tmp_path / "both")]) == 2
    assert "a catalogue gives each pair's PS link" in capsys.readouterr().err


def test_a_point_twice_in_the_dataset_is_refused(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A part copied in again (part-000000.parquet as part-000005.parquet) held every one of its points twice: the
    resumed sweep took it as done and said nothing, and every reader of the dataset counted those rows twice
    (a hardening pass). A point's id is unique in a dataset: a second row of it names both parts."""
    out = tmp_path / "sweep"
    args = ["sweep", str(TRACE), "--workers", "1-2", *SMALL, "--jobs", "1", "--out", str(out)]
    assert main(args) == 0
    shutil.copyfile(out / "part-000000.parquet", out / "part-000005.parquet")
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert re.search(r"part-000005\.parquet: point '[0-9a-f]{12}\.\.\.' is in .*part-000000\.parquet too", err), err
    assert sorted(p.name for p in out.glob("*.parquet")) == ["part-000000.parquet", "part-000005.parquet"]


def test_a_large_grid_says_it_is_finding_the_points_left(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten million points printed nothing for about 90 s after the grid line (every point's id hashed, the parts'
    ids read) before the first progress line (a hardening pass). A grid of LARGE_GRID_POINTS says what it is
    doing first; a small one, done in a blink, does not."""
    from tracegen import cli_sweep

    args = ["sweep", str(TRACE), "--workers", "1-2", *SMALL, "--jobs", "1", "--out", str(tmp_path / "sweep")]
    assert main(args) == 0
    assert "finding the points" not in capsys.readouterr().err
    monkeypatch.setattr(cli_sweep, "LARGE_GRID_POINTS", 2)
    assert main([*args[:-1], str(tmp_path / "large")]) == 0
    err = capsys.readouterr().err.splitlines()
    said = f"sweep: finding the points not yet in {tmp_path / 'large'}: the id of each of 2 points, and the ids in "
    first = next(i for i, line in enumerate(err) if line.startswith("sweep: 0/2 points"))
    assert [line for line in err[:first] if line.startswith(said)], err


@pytest.mark.parametrize("cut", [0, 5000])
def test_a_damaged_part_is_named_with_what_to_do_and_deleting_it_recomputes_its_points(
        cut: int, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A part cut short (a full disk, a copy stopped half-way) ended the resume in pyarrow's words alone
    ("Parquet magic bytes not found in footer"), with no word of what to do (a hardening pass). It names the part
    and says to delete it; the part is left as it was, and the rerun after deleting it computes its points again."""
    out = tmp_path / "sweep"
    args = ["sweep", str(TRACE), "--workers", "1-4", *SMALL, "--jobs", "1", "--part-points", "2", "--out", str(out)]
    assert main(args) == 0
    before = read_rows(out)
    damaged = out / "part-000001.parquet"
    damaged.write_bytes(damaged.read_bytes()[:cut])
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{damaged}: a damaged Parquet part (" in err, err
    assert err.endswith("delete it and rerun the same sweep: it computes that part's points again\n"), err
    assert len(damaged.read_bytes()) == cut
    damaged.unlink()
    assert main(args) == 0
    assert COMPUTED.search(capsys.readouterr().out).groups() == ("2", "2")  # type: ignore[union-attr]
    pd.testing.assert_frame_equal(read_rows(out), before)


def test_a_resume_reads_each_part_once(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A resume read every part twice: once for the ids in it, then again for the rows of another sweep it might
    hold (refuse_mixing), doubling the time a large dataset took before the first point ran. One read now gives
    both; the rows and the parts written are those of the old two reads."""
    out = tmp_path / "sweep"
    args = ["sweep", str(TRACE), "--workers", "1-6", *SMALL, "--jobs", "1", "--part-points", "2", "--out", str(out)]
    assert main(args) == 0
    whole = read_rows(out)
    (out / "part-000001.parquet").unlink()
    opened: list[str] = []
    real_open = pathlib.Path.open

    def counting_open(self: pathlib.Path, *args: Any, **kwargs: Any) -> Any:
        opened.append(self.name)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "open", counting_open)
    capsys.readouterr()
    assert main(args) == 0
    assert COMPUTED.search(capsys.readouterr().out).groups() == ("2", "4")  # type: ignore[union-attr]
    assert sorted(name for name in opened if name.endswith(".parquet")) == ["part-000000.parquet",
                                                                            "part-000002.parquet"]
    monkeypatch.undo()
    pd.testing.assert_frame_equal(read_rows(out), whole)


@pytest.mark.parametrize("other", ["curve.csv", "notes.txt", "traces/n1.json"])
def test_a_directory_holding_other_files_is_refused_before_any_part(other: str, tmp_path: pathlib.Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """pandas.read_parquet(DIR) and pyarrow's dataset read every file and folder of DIR not starting with '.' or
    '_' as Parquet: a sweep into a prediction's folder wrote its parts and printed a read that then failed
    ("Could not read schema from 'DIR/curve.csv'")."""
    out = tmp_path / "sweep"
    (out / other).parent.mkdir(parents=True, exist_ok=True)
    (out / other).write_text("a user's file\n")
    argv = ["sweep", str(TRACE), "--workers", "1", *SMALL, "--jobs", "1", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{out / other.split('/', 1)[0]}: not a part of a sweep" in err and err.count("\n") == 1
    assert not part_paths(out) and (out / other).read_text() == "a user's file\n"
    (out / other).rename(tmp_path / "moved")
    if "/" in other:
        (out / other).parent.rmdir()
    (out / "_notes.txt").write_text("skipped by every reader\n")
    (out / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")  # what macOS's Finder leaves in a folder it showed
    assert main(argv) == 0
    assert len(pd.read_parquet(out)) == 1


def _close_stderr() -> None:
    os.close(2)


def test_a_sweep_started_with_stderr_closed_runs(tmp_path: pathlib.Path) -> None:
    """A sweep started with no stderr at all (a service or cron job run with 2>&-) exited 1 at once: its progress
    line asked None whether it was a terminal ("AttributeError: 'NoneType' object has no attribute 'isatty'", a
    traceback nobody saw) and no point was computed. Every other command ran."""
    out = tmp_path / "sweep"
    done = subprocess.run([str(EXE), "sweep", str(TRACE), "--workers", "1-2", *SMALL, "--jobs", "1", "--out",
                           str(out)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True, check=False,
                          preexec_fn=_close_stderr, timeout=120)
    assert done.returncode == 0 and "computed 2 points" in done.stdout
    assert len(pd.read_parquet(out)) == 2


OTHER_PROFILE = ROOT / "data/remeasured/deep_replay/deep_150mbit_q5_b128k_ps03/trace/link-profile.json"


def test_files_written_into_the_trace_folder_leave_a_resumed_sweep_resumed(tmp_path: pathlib.Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Every file under a trace's folder was hashed into the points' ids: a prediction written there (curve.csv),
    a Chrome file converted beside the steps or anything in a subfolder changed them all, and the resumed sweep
    refused its own dataset as 'rows of another trace'. Only the files the trace is read from, and those beside
    it, are its content; a step changed is still another trace."""
    trace = tmp_path / "trace"
    shutil.copytree(TRACE, trace)
    out = tmp_path / "sweep"
    argv = ["sweep", str(trace), "--workers", "1-2", *SMALL, "--jobs", "1", "--out", str(out)]
    assert main(argv) == 0
    before = read_rows(out)
    capsys.readouterr()
    (trace / "curve.csv").write_text("n_workers,steps_per_s\n1,2.0\n")
    assert main(["convert", str(trace), "--to", "chrome", str(trace / "chrome.json")]) == 0  # passed over for .pb
    (trace / "notes").mkdir()
    shutil.copyfile(trace / "step_000.pb.gz", trace / "notes" / "step_000.pb.gz")  # a subfolder is not read
    capsys.readouterr()
    assert main(argv) == 0
    assert COMPUTED.search(capsys.readouterr().out).groups() == ("0", "2")  # type: ignore[union-attr]
    pd.testing.assert_frame_equal(read_rows(out), before)
    (trace / "step_011.pb.gz").unlink()  # one step fewer: another trace
    assert main(argv) == 2
    assert "rows of another trace (its files or those beside it differ" in capsys.readouterr().err
    assert main([*argv[:-1], str(tmp_path / "again")]) == 0
    assert COMPUTED.search(capsys.readouterr().out).groups() == ("2", "0")  # type: ignore[union-attr]


@pytest.mark.parametrize(("change", "message"), [
    (["--steps", "5"], "rows at --steps 4, not 5; rerun with --steps 4, or sweep into a new directory"),
    (["--link", "fifo"], "rows at --link conn, not fifo; rerun with --link conn"),
    (["--batch-size", "7"], "rows at --batch-size 32, not 7"),
    (["--trace", str(ROOT / "data/traces/mlp")], "rows of another trace (its files or those beside it differ"),
    (["--payload-fraction", "0.5"], "holds the point n_workers=1 link='200Mbit/s' ps_shards=1 policy='tf' "
                                    "worker_speed=1.0 seed=0 from other inputs (a changed profile, order"),
    (["--profile", str(OTHER_PROFILE)], "holds the point n_workers=1 link="),
])
def test_a_rerun_of_another_trace_or_settings_is_refused_not_mixed_in(change: list[str], message: str,
                                                                     tmp_path: pathlib.Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A rerun into a dataset with another trace, --steps, --link, --batch-size or --payload-fraction, or after the
    link profile it names changed, added its rows beside the earlier ones (a hardening pass): with another
    --payload-fraction or profile, two rows with the same parameter columns held two different rates, and the
    README's own query read both. It is refused, naming what differs, and the dataset is left as it was; a rerun
    that adds points to the grid (more worker counts, another link, another seed) still adds them."""
    profile = tmp_path / "link.json"
    shutil.copyfile(TRACE / "link-profile.json", profile)
    out = tmp_path / "sweep"

    def argv(*more: str, trace: pathlib.Path = TRACE) -> list[str]:
        return ["sweep", str(trace), *SMALL, "--jobs", "1", "--out", str(out), *more]

    assert main(argv("--workers", "1-2", "--bandwidth", "200Mbit/s", "--link-profile", str(profile))) == 0
    before = read_rows(out)
    capsys.readouterr()
    if change[0] == "--profile":  # the same path, other bytes
        shutil.copyfile(change[1], profile)
        again = argv("--workers", "1-2", "--bandwidth", "200Mbit/s", "--link-profile", str(profile))
    elif change[0] == "--trace":
        again = argv("--workers", "1-2", "--bandwidth", "200Mbit/s", trace=pathlib.Path(change[1]))
    else:
        again = argv("--workers", "1-2", "--bandwidth", "200Mbit/s", "--link-profile", str(profile), *change)
    assert main(again) == 2  # a repeated option's last value is the one taken
    err = capsys.readouterr().err.splitlines()[-1]  # after the warnings the trace's single-worker.json gives
    assert err.startswith(f"tracegen sweep: error: {out / 'part-000000.parquet'}: ") and message in err, err
    pd.testing.assert_frame_equal(read_rows(out), before)
    if change[0] == "--profile":
        shutil.copyfile(TRACE / "link-profile.json", profile)
    grown = argv("--workers", "1-3", "--bandwidth", "200Mbit/s,1Gbit/s", "--link-profile", str(profile),
                 "--seeds", "2")
    assert main(grown) == 0
    assert COMPUTED.search(capsys.readouterr().out).groups() == ("14", "4")  # type: ignore[union-attr]


def test_the_readme_sweep_runs_without_a_warning(
        readme_command: Callable[[str], list[str]], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The README's sweep, as written, began with 'warning: link 200Mbit/s: ...single-worker.json: one worker
    replays at 4.44 steps/s, 59% slower than the untraced single-worker measurement (10.82)': the trace's
    single-worker rate was measured on a 500 Mbit/s link, and one worker cannot reach it on 200 Mbit/s. Its trace,
    links and policies as written; its grid cut to one N, seed and speed (the warning is the links')."""
    argv = readme_command("### Sweeps that outgrow one machine: `tracegen sweep`")
    assert argv[0] == "sweep"
    cut = {"--workers": "1", "--seeds": "1", "--worker-speed": "1", "--out": str(tmp_path / "sweep")}
    argv = [cut.get(argv[i - 1], word) for i, word in enumerate(argv)]
    monkeypatch.chdir(ROOT)
    assert main([*argv, "--jobs", "1"]) == 0
    output = capsys.readouterr()
    assert "warning" not in output.err + output.out, output.err


def test_the_time_left_is_paced_by_each_points_priced_run_not_by_the_points(tmp_path: pathlib.Path) -> None:
    """A point costs about its N, and on the C core more (tracegen.cost): '--workers 1-3000' said '77 s left' after
    its first 128 points, the cheapest, of a grid its own grid line put at 10 minutes; paced by the workers alone,
    a point at N = 3000 weighed 300 times one at N = 10, where the C core takes about 600 times as long. A resumed
    sweep's later points weigh the same."""
    import io

    from tracegen.cli_sweep import ProgressLine, grid_seconds
    from tracegen.sweep import SweepProgress, run_seconds, sweep
    from tracegen.sweeprunner import LocalRunner

    seen: list[SweepProgress] = []
    inputs = build_inputs(str(TRACE), workers=[1, 3, 8], policies=["tf", "tictac"], steps=4, warmup_steps=1)
    price = run_seconds(inputs)
    sweep(inputs, tmp_path / "s", LocalRunner(1), progress=seen.append)
    assert (seen[0].seconds_done, seen[0].seconds_todo) == (0, pytest.approx(grid_seconds(inputs)))
    assert seen[0].seconds_todo == pytest.approx(2 * sum(price(n, 1) for n in (1, 3, 8)))
    done = [p.seconds_done for p in seen[1:]]
    assert done == sorted(done) and seen[-1].seconds_done == pytest.approx(seen[-1].seconds_todo)
    inputs = build_inputs(str(TRACE), workers=[1, 3, 8, 20], policies=["tf", "tictac"], steps=4, warmup_steps=1)
    resumed: list[SweepProgress] = []
    sweep(inputs, tmp_path / "s", LocalRunner(1), progress=resumed.append)
    assert (resumed[0].resumed, resumed[0].todo) == (6, 2)
    assert resumed[0].seconds_todo == pytest.approx(2 * price(20, 1))  # N = 20's two points only

    now = [100.0]
    stream = io.StringIO()
    line = ProgressLine(stream, clock=lambda: now[0])
    now[0] += 10.0  # 1 of 2 points done in 10 s, but a third of the work: the other point takes 20 s more, not 10
    line(SweepProgress(done=1, todo=2, resumed=0, parts_written=0, seconds_done=1.0, seconds_todo=3.0))
    assert "1/2 points (0 already done), 0.1 points/s, 20 s left" in stream.getvalue(), stream.getvalue()


def test_a_points_price_is_the_one_n_aware_price_of_tracegen_cost() -> None:
    """sweep's time left and its grid line price a point as predict and plan price a run
    (:func:`tracegen.cost.task_s`): on the C core a task instance of a run of N = 3000 costs (1 + 3000 / 1500) /
    (1 + 10 / 1500) times one of N = 10 (WORKERS_PER_COST, on the compiled engine too)."""
    from tracegen import native
    from tracegen.cost import WORKERS_PER_COST, busy_tasks, task_s
    from tracegen.sweep import run_seconds

    inputs = build_inputs(str(TRACE), workers=[10, 3000], steps=4, warmup_steps=1)
    price, engine = run_seconds(inputs), native.engine()
    per_instance = {n: price(n, 1) / (n * busy_tasks(inputs.model) * 5) for n in (10, 3000)}
    assert per_instance[10] == pytest.approx(task_s(engine, 10))
    per_cost = WORKERS_PER_COST.get(engine)
    growth = (1 + 3000 / per_cost) / (1 + 10 / per_cost) if per_cost else 1
    assert per_instance[3000] / per_instance[10] == pytest.approx(growth)


def test_a_sweep_of_a_trace_with_no_batch_size_says_samples_are_steps(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Its rows' samples_per_s were steps/s with no word, where predict on the same trace says so."""
    trace = tmp_path / "trace"
    trace.mkdir()
    for step in TRACE.glob("step_00[0-3].pb.gz"):
        (trace / step.name).write_bytes(step.read_bytes())
    argv = ["sweep", str(trace), "--workers", "1", *SMALL, "--jobs", "1"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"note: samples/s are steps/s (a batch of 1): no --batch-size, and {trace / 'meta.json'} is not there" in out
    assert main([*argv, "--batch-size", "32", "--out", str(tmp_path / "b")]) == 0
    assert "samples/s are steps/s" not in capsys.readouterr().out


def test_a_points_price_counts_the_busy_tasks_as_predicts_does() -> None:
    """A TF2 trace's ops of no duration cost the engine no event of their own: predict prices the busy tasks
    (:func:`tracegen.cost.busy_tasks`), and sweep and plan priced every task, twice as many on ``tf2_pss``."""
    from tracegen import native
    from tracegen.cost import busy_tasks, run_s
    from tracegen.sweep import run_seconds

    inputs = build_inputs(str(ROOT / "data/traces/tf2_pss"), workers=[4], steps=4, warmup_steps=1)
    assert busy_tasks(inputs.model) < inputs.model.n_tasks  # what makes the two counts differ
    assert run_seconds(inputs)(4, 1) == pytest.approx(run_s(busy_tasks(inputs.model), 4, 5, native.engine()))
