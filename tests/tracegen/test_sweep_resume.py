"""``tracegen sweep`` resumed and stopped: stale temporary files removed, resume after SIGKILL, clean stops
on SIGINT/SIGTERM and Ctrl-C mid-write, damaged or duplicated parts named, and a rerun of another trace
or other settings refused rather than mixed in."""

from __future__ import annotations

import pathlib
import re
import shutil
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import parsers.sweepdata
from parsers.sweepdata import part_paths, read_point_ids, read_rows
from tracegen.cli import main
from tracegen.inputs import batch_size_of
from tracegen.sweep import build_inputs, run_chunk, sweep

from tracegen_support import ROOT
from tracegen_support import SWEEP_COMPUTED as COMPUTED
from tracegen_support import SWEEP_SMALL as SMALL
from tracegen_support import SWEEP_TRACE as TRACE

# long enough that a signal sent when the first part appears arrives well before the end
LONG = [str(TRACE), "--workers", "1-40", "--policy", "tf,tictac", "--seeds", "2", *SMALL, "--part-points", "4",
        "--jobs", "2"]
# the command as the installed tracegen runs it, with the grid's points in --jobs processes however short it is
# (PARALLEL_S): a signal must stop the workers too
IN_PROCESSES = [sys.executable, "-c", "import sys, tracegen.processes; tracegen.processes.PARALLEL_S = 0; "
                "from tracegen.entry import main; sys.exit(main(sys.argv[1:]))"]


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
                                    "worker_speed=1.0 seed=0 from other"),
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
    # what to do, at the end, was cut off where the path was long, as it is here
    assert err.endswith("sweep into a new directory") and len(err) <= len("tracegen sweep: error: ") + 300, err
    pd.testing.assert_frame_equal(read_rows(out), before)
    if change[0] == "--profile":
        shutil.copyfile(TRACE / "link-profile.json", profile)
    grown = argv("--workers", "1-3", "--bandwidth", "200Mbit/s,1Gbit/s", "--link-profile", str(profile),
                 "--seeds", "2")
    assert main(grown) == 0
    assert COMPUTED.search(capsys.readouterr().out).groups() == ("14", "4")  # type: ignore[union-attr]
