"""TensorBoard's trace-viewer JSON (``<host>.trace.json.gz``), the lossy fallback for TF2 profiles: the bundled
profile as TensorBoard's own converter wrote it reads with what its XSpace gives (variables, pulls and pushes per
step, op names and devices), its losses listed; broken files are refused in one line naming the event."""

from __future__ import annotations

import gzip
import json
import pathlib
from typing import Any

import pytest

from parsers import TraceContentError, TraceError, read_trace
from tracegen.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
VIEWER = ROOT / "data" / "traces" / "tf2_pss_viewer"
XSPACE = ROOT / "data" / "traces" / "tf2_pss"


def _counts(trace: Any) -> dict[tuple[int, str], int]:
    return {(int(s), str(d)): len(g) for (s, d), g in trace.transfers.groupby(["step", "direction"])}


def test_the_viewer_files_read_as_their_xspaces_do_less_what_they_lost() -> None:
    viewer, xspace = read_trace(VIEWER), read_trace(XSPACE)
    assert viewer.source_format == "trace-viewer"
    assert list(viewer.steps["step"]) == list(xspace.steps["step"]) == [1, 2, 3]
    assert _counts(viewer) == _counts(xspace)  # 5 pulls (4 variables + a control signal), 4 pushes per step
    assert sorted(viewer.variables["size_bytes"]) == sorted(xspace.variables["size_bytes"])
    assert set(viewer.ops["device"]) == set(xspace.ops["device"])
    for device in set(xspace.ops["device"]):
        kinds = [set(t.ops.loc[t.ops["device"] == device, "op_type"]) for t in (viewer, xspace)]
        assert kinds[0] == kinds[1], device
    assert sorted(viewer.transfers["size_bytes"].dropna()) == sorted(xspace.transfers["size_bytes"].dropna())
    assert any("absolute times" in line for line in viewer.lost)
    assert any("MemoryAllocation" in line for line in viewer.lost)


def _content(path: pathlib.Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()


def _host_with(folder: pathlib.Path, suffix: str, *, eager: bool) -> pathlib.Path:
    """The file of ``folder``'s profile of a host that ran the step's ops (``ReluGrad``), with EagerExecute
    events or without."""
    return next(p for p in sorted(folder.rglob(f"*{suffix}"))
                if b"ReluGrad" in _content(p) and (b"EagerExecute" in _content(p)) == eager)


def test_the_viewer_hosts_are_put_onto_one_clock_as_far_as_causality_requires() -> None:
    """Each host's times count from its own profile start: merged as they were, the steps read 11.0, 9.8 and 3.7 ms
    (the XSpace's: 4.4, 4.0, 3.8) and 3 of the 27 transfers found no _Recv done after their _Send. Put onto one
    clock by causality, every transfer ends with its _Recv, and each step lies within what the clocks' remaining
    freedom allows of the XSpace's (the hosts' moves are said in Trace.lost, each within its range)."""
    viewer, xspace = read_trace(VIEWER), read_trace(XSPACE)
    lengths = [(s.end_ns - s.start_ns) / 1e6 for s in viewer.steps.itertuples()]
    truth = [(s.end_ns - s.start_ns) / 1e6 for s in xspace.steps.itertuples()]
    moves = [line for line in viewer.lost if line.startswith("one clock for all hosts:")]
    assert moves, viewer.lost
    freedom_ms = max(float(m.split(" reads ")[1].split(" to ")[1].split(" ms")[0]) for m in moves)
    assert all(abs(a - b) <= freedom_ms for a, b in zip(lengths, truth, strict=True)), (lengths, truth, freedom_ms)
    assert not any("timed by their _Send alone" in k for k in viewer.skipped), viewer.skipped
    assert len(viewer.transfers) == len(xspace.transfers) == 27


def test_hosts_moved_before_their_profiles_start_move_all_later_alike(tmp_path: pathlib.Path) -> None:
    """The coordinator's profile cut to start after the other hosts' began (its first call's tracing, which the
    trace leaves out anyway, dropped) and its times counted from 0: the others must then move earlier than their own
    profile starts, so every host moves later by as much, which changes no time between two events (refused as
    'would start before 0' before, though nothing was wrong with the files)."""
    run = tmp_path / "run"
    run.mkdir()
    docs = {p: json.loads(gzip.decompress(p.read_bytes()))
            for p in sorted(next((VIEWER / "plugins" / "profile").iterdir()).iterdir())}
    calls = {p for p, d in docs.items() if any("tf_function_call" in e.get("args", {}) for e in d["traceEvents"])}
    others = min(e["ts"] for p, d in docs.items() if p not in calls for e in d["traceEvents"] if "ts" in e)
    for path, doc in docs.items():
        if path in calls:
            doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("ts", others) >= others]
            first = min(e["ts"] for e in doc["traceEvents"] if "ts" in e)
            for e in doc["traceEvents"]:
                if "ts" in e:
                    e["ts"] -= first
        (run / path.name).write_bytes(gzip.compress(json.dumps(doc).encode(), mtime=0))
    moved, viewer = read_trace(run), read_trace(VIEWER)
    assert len(calls) == 1
    assert any(line.startswith("the hosts' common clock: every host's events were moved") for line in moved.lost)
    assert moved.transfers[["step", "tensor_name", "dur_ns"]].equals(viewer.transfers[["step", "tensor_name",
                                                                                     "dur_ns"]])
    assert ((moved.steps["end_ns"] - moved.steps["start_ns"]).tolist()
            == (viewer.steps["end_ns"] - viewer.steps["start_ns"]).tolist())


def test_one_host_alone_reads_as_its_xspace_does() -> None:
    # the worker's host alone has no tf.function call on a python line (the coordinator's); its steps are its
    # EagerExecute events of the step function, whose is_func the viewer writes as the string "1"
    viewer = read_trace(_host_with(VIEWER, ".trace.json.gz", eager=True))
    xspace = read_trace(_host_with(XSPACE, ".xplane.pb", eager=True))
    assert len(viewer.steps) == len(xspace.steps) == 3
    assert len(viewer.ops) == len(xspace.ops)
    assert _counts(viewer) == _counts(xspace)


def test_a_host_without_step_events_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    ps = _host_with(VIEWER, ".trace.json.gz", eager=False)
    with pytest.raises(TraceError, match="no step events"):
        read_trace(ps)
    assert main(["inspect", str(ps)]) != 0
    err = capsys.readouterr().err.strip()
    assert str(ps) in err and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize(("change", "message"), [
    (lambda e: e.update(ts="soon"), "'ts' must be a number (got 'soon')"),
    (lambda e: e.update(dur=-1), "'dur' out of range"),
    (lambda e: e.update(args=[1]), ".args must be an object (got [1])"),
    (lambda e: e.update(tid="x"), ".tid must be an integer"),
    (lambda e: e["args"].update(long_name=7), ".name must be a string (got 7)"),
])
def test_a_broken_event_is_named(tmp_path: pathlib.Path, change: Any, message: str) -> None:
    coordinator = next(p for p in sorted(VIEWER.rglob("*.trace.json.gz"))
                       if b"train_step" in gzip.decompress(p.read_bytes()))
    doc = json.loads(gzip.decompress(coordinator.read_bytes()))
    index = next(i for i, e in enumerate(doc["traceEvents"]) if e.get("ph") == "X" and isinstance(e.get("args"), dict))
    change(doc["traceEvents"][index])
    path = tmp_path / "host.trace.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    with pytest.raises(TraceContentError) as info:
        read_trace(path)
    text = str(info.value)
    assert text.startswith(f"{path}: traceEvents[{index}]") and message in text and "\n" not in text


def test_convert_writes_the_viewer_profile_as_our_chrome_json(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "tf2.json"
    assert main(["convert", str(VIEWER), "--to", "chrome", str(out)]) == 0
    back = read_trace(out)
    assert _counts(back) == _counts(read_trace(VIEWER))
