"""``tracegen sweep`` on the command line: one-line refusals of bad grids, options and --out before any work,
where the points run (this process, local processes chosen for the points left, a real Ray head) with
the same bytes either way, and what it says on stderr (a large grid's search, stderr closed)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

import pandas as pd
import pytest

from parsers.sweepdata import part_paths, read_rows
from tracegen.cli import main
from tracegen.inputs import batch_size_of
from tracegen.sweep import build_inputs
from validation.ports import free_port

from tracegen_support import SWEEP_COMPUTED as COMPUTED
from tracegen_support import SWEEP_SMALL as SMALL
from tracegen_support import SWEEP_TRACE as TRACE

EXE = pathlib.Path(sys.executable).parent / "tracegen"
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


@pytest.mark.parametrize(("option", "value", "rule"), [
    ("--worker-speed", "1," + "9" * 5000, "; write e.g. 0.5,1,2"),
    ("--worker-speed", "0.5,1," + "1" * 300 + ".5", "must be from 0.001 to 1000"),
    ("--bandwidth", "1" * 5000 + "Gbit/s,1Gbit/s", "must be between 1 kbit/s and 8000 Tbit/s"),
    ("--policy", "tf,tictac,tf," + "t" * 5000, "'tf' is given twice in"),
])
def test_a_value_of_thousands_of_characters_is_quoted_short(option: str, value: str, rule: str,
                                                             tmp_path: pathlib.Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """'--worker-speed 1,999...9' was quoted whole, twice: the line ran to its 300 characters of digits."""
    assert main(["sweep", str(TRACE), option, value, "--out", str(tmp_path / "sweep")]) == 2
    err = capsys.readouterr().err
    assert rule in err and err.count("\n") == 1 and len(err) < 250


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
    import tracegen.processes

    monkeypatch.setattr(tracegen.processes, "PARALLEL_S", 0)  # --jobs 2 in two processes, however short the grid
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
    import tracegen.processes

    grid = [str(TRACE), "--workers", "1-6", "--policy", "tf,tictac", *SMALL, "--part-points", "5"]
    alone, said = _parts(tmp_path, grid, "alone", "2", capsys)
    assert "; in this process (too short to gain from 2 local processes);" in said, said
    monkeypatch.setattr(tracegen.processes, "PARALLEL_S", 0)  # the same grid, as if long enough
    side_by_side, said = _parts(tmp_path, grid, "side-by-side", "2", capsys)
    assert "; on 2 local processes;" in said, said
    assert len(alone) == 3 and side_by_side == alone  # 12 points in parts of 5


def test_a_resumed_sweep_picks_its_processes_for_the_points_left(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A resumed sweep chose its local processes from the whole grid's seconds, the points left not known there:
    2 points left of a grid long enough for processes started --jobs of them (about a second each) and said 'on 2
    local processes'. The points left decide now: those 2 run in this process, and the grid line says so; the
    same grid fresh still runs in processes, and the resumed part is the same bytes either way."""
    import tracegen.processes
    import tracegen.sweeprunner
    from tracegen.cli_sweep import grid_seconds

    grid = [str(TRACE), "--policy", "tf,tictac", *SMALL, "--part-points", "5"]
    whole = build_inputs(TRACE, workers=range(1, 13), policies=("tf", "tictac"), steps=4, warmup_steps=1,
                         batch_size=batch_size_of(str(TRACE), None))
    # the whole grid (24 points) long enough for processes, its 2 points at N = 12 alone not
    monkeypatch.setattr(tracegen.processes, "PARALLEL_S", 0.999 * grid_seconds(whole))
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
    monkeypatch.setattr(tracegen.processes, "PARALLEL_S", 0)  # the same points left, as if long enough
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
    from tracegen.processes import PARALLEL_S
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


def test_a_resumed_sweep_with_nothing_left_needs_no_ray_head(tmp_path: pathlib.Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Every point already in --out: the grid line said "on Ray at X" of work that never ran, and a head that no
    longer answered refused the rerun. Here nothing listens at the address (a port closed just now), so the
    rerun succeeding shows Ray was never asked; with a point added to the grid, the same address is refused."""
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    out = tmp_path / "sweep"
    grid = ["sweep", str(TRACE), "--workers", "1", *SMALL, "--jobs", "1", "--out", str(out)]
    assert main(grid) == 0
    rows = read_rows(out)
    capsys.readouterr()
    assert main([*grid, "--ray", f"127.0.0.1:{port}"]) == 0
    printed = capsys.readouterr().out
    assert f"; every point already done: nothing left to run on Ray at 127.0.0.1:{port};" in printed, printed
    assert "on Ray at" not in printed.replace("nothing left to run on Ray at", "")
    assert COMPUTED.search(printed).groups() == ("0", "1")  # type: ignore[union-attr]
    pd.testing.assert_frame_equal(read_rows(out), rows)
    grid[grid.index("--workers") + 1] = "1,2"  # a point left: Ray is needed, and the head is asked, before any work
    assert main([*grid, "--ray", f"127.0.0.1:{port}"]) == 2
    printed = capsys.readouterr()
    assert printed.err == (f"tracegen sweep: error: --ray '127.0.0.1:{port}': no Ray head answers there "
                           "(Connection refused)\n")
    assert printed.out == ""  # refused before the grid line
    pd.testing.assert_frame_equal(read_rows(out), rows)


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
