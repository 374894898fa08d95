"""TF2 profiles (XSpace, ``<host>.xplane.pb``): the bundled ParameterServerStrategy capture read with the right
variables, pulls and pushes per step; sizes the profile does not carry listed, not guessed; hand-built XSpaces
read exactly, and broken ones refused in one line; a fresh capture with real TensorFlow (slow)."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest

from parsers import TraceContentError, TraceFormatError, read_trace
from parsers.proto import xplane_pb2 as pb
from tracegen.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
TF2 = ROOT / "data" / "traces" / "tf2_pss"
RUN = next((TF2 / "plugins" / "profile").iterdir())
WORKER = "/job:worker/replica:0/task:0/device:CPU:0"
PS = "/job:ps/replica:0/task:0/device:CPU:0"
# The capture's model (validation.capture_tf2.MODEL): float32 w1 256x320, b1 320, w2 320x10, b2 10.
VARIABLE_BYTES = sorted(4 * n for n in (256 * 320, 320, 320 * 10, 10))
CONTROL = "edge_58_GroupCrossDeviceControlEdges_0/Identity"  # PS → worker: "the updates are done", no size


def _host_with(name: str) -> pathlib.Path:
    """The bundled run's file whose bytes hold ``name`` (host files are named by random profiler ports)."""
    return next(p for p in sorted(RUN.iterdir()) if name.encode() in p.read_bytes())


def test_bundled_capture_reads_variables_pulls_and_pushes_per_step() -> None:
    trace = read_trace(TF2)
    assert trace.source_format == "xplane"
    assert list(trace.steps["step"]) == [1, 2, 3]  # step 0, the first call (registration), left out
    assert trace.skipped["steps that were the step function's first call (its registration: one-time costs)"] == 1
    assert sorted(trace.variables["size_bytes"]) == VARIABLE_BYTES
    assert set(trace.variables["dtype"]) == {"float32"} and set(trace.variables["device"]) == {PS}
    assert sorted(trace.variables["shape"]) == ["10", "256x320", "320", "320x10"]
    # transfers in each step read, and in no other: the checks per step below hold for every one
    assert sorted(set(trace.transfers["step"])) == [1, 2, 3]
    for step, moved in trace.transfers.groupby("step"):
        pulls = moved[moved["direction"] == "pull"]
        pushes = moved[moved["direction"] == "push"]
        assert (pulls["src_device"] == PS).all() and (pulls["dst_device"] == WORKER).all()
        assert (pushes["src_device"] == WORKER).all() and (pushes["dst_device"] == PS).all()
        # Four variable reads and the PS's "updates applied" control signal; one gradient per variable.
        reads = pulls[pulls["tensor_name"] != CONTROL]
        assert len(reads) == 4 and sorted(reads["size_bytes"].astype(int)) == VARIABLE_BYTES, step
        assert pulls.loc[pulls["tensor_name"] == CONTROL, "size_bytes"].isna().all()
        assert len(pushes) == 4 and sorted(pushes["size_bytes"].astype(int)) == VARIABLE_BYTES, step
        assert (moved["dur_ns"] > 0).all()
    ops = trace.ops
    assert set(ops["device"]) == {WORKER, PS}
    for step in range(1, 4):
        on_ps = set(ops.loc[(ops["step"] == step) & (ops["device"] == PS), "op_type"])
        on_worker = set(ops.loc[(ops["step"] == step) & (ops["device"] == WORKER), "op_type"])
        assert {"ReadVariableOp", "AssignSubVariableOp"} <= on_ps
        assert "ReluGrad" in on_worker and "ReadVariableOp" not in on_worker
        assert (ops.loc[ops["step"] == step, "node_name"] == "AssignSubVariableOp_1").sum() == 1
    # Steps are the coordinator's train_step calls, one after the other: their records do not interleave.
    steps = trace.steps
    assert (steps["end_ns"].iloc[:-1].to_numpy() <= steps["start_ns"].iloc[1:].to_numpy()).all()
    # Epoch nanoseconds: the capture was made in 2026.
    assert 1.7e18 < trace.steps["start_ns"].min() < 1.9e18
    lost = " | ".join(trace.lost)
    assert "sizes of 3 of 27 transfers" in lost and CONTROL in lost and "byte counts" in lost
    assert f"27 transfers (1 tensor: {CONTROL})" in lost, lost  # said '(1 tensors: ...)'


def test_without_the_registration_sizes_come_only_from_allocations(tmp_path: pathlib.Path) -> None:
    worker = _host_with("ReluGrad")
    shutil.copyfile(worker, tmp_path / worker.name)
    trace = read_trace(tmp_path)  # the worker alone: pushes only, no function shapes
    assert trace.variables.empty
    pushes = trace.transfers[trace.transfers["direction"] == "push"]
    assert len(pushes) == 3 * 4  # the worker's profile holds the function's first call too: left out
    # w1's gradient is large enough for TensorFlow to record its allocation; the others are not sized.
    known = pushes.dropna(subset=["size_bytes"])
    assert set(known["tensor_name"]) == {"edge_50_mul"} and set(known["size_bytes"]) == {256 * 320 * 4}
    lost = " | ".join(trace.lost)
    assert "sizes of 9 of 12 transfers" in lost and "variables and their shapes" in lost


def test_inspect_and_convert_work_on_a_profile(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--json", str(TF2)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n_steps"] == 3 and summary["lost"]
    out = tmp_path / "t.json"
    assert main(["convert", str(TF2), "--to", "chrome", str(out)]) == 0
    assert json.loads(out.read_text())["traceEvents"]
    assert main(["convert", str(RUN), "--to", "parquet", str(tmp_path / "tables")]) == 0
    tables = read_trace(tmp_path / "tables")
    assert tables.equals(read_trace(RUN))


# ----------------------------------------------------------------------------------- hand-built XSpaces

def _space(*, send_key: str = f"{WORKER};1;{PS};edge_7_grad;0:0", event_meta: int = 2, stat_meta: int = 11,
           ref: int = 17, host_plane: str = "/host:CPU") -> pb.XSpace:
    """One worker host: a python line with two calls of ``step``, a compute line with one op and one _Send each."""
    space = pb.XSpace()
    env = space.planes.add(name="Task Environment")
    env.stat_metadata[1].name = "profile_start_time"
    env.stats.add(metadata_id=1, uint64_value=1_000_000_000)
    plane = space.planes.add(name=host_plane)
    for i, name in enumerate(("step", "grad:Mul", "grad/_1:_Send"), start=1):
        plane.event_metadata[i].name = name
    for i, name in enumerate(("tf_function_call", "from", "to", "key", "concrete", "grad", "apply", send_key),
                             start=10):
        plane.stat_metadata[i].name = name
    python = plane.lines.add(id=5, name="python", timestamp_ns=1000)
    compute = plane.lines.add(id=-9, name="tf_Compute/-9", timestamp_ns=2000)
    for k in range(2):
        call = python.events.add(metadata_id=1, offset_ps=k * 10_000_000, duration_ps=5_000_000)
        call.stats.add(metadata_id=10, ref_value=14)
        compute.events.add(metadata_id=event_meta, offset_ps=k * 10_000_000 + 1_500, duration_ps=2_999)
        send = compute.events.add(metadata_id=3, offset_ps=k * 10_000_000 + 4_000_000, duration_ps=7_000)
        send.stats.add(metadata_id=stat_meta, ref_value=15)  # from: grad
        send.stats.add(metadata_id=12, ref_value=16)  # to: apply
        send.stats.add(metadata_id=13, ref_value=ref)  # key
    return space


def test_hand_built_xspace_reads_exactly(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "host_a.xplane.pb"
    path.write_bytes(_space().SerializeToString())
    trace = read_trace(path)
    # 1e9 ns (profile start) + 2000 ns (line) + 1500 ps → 1_000_002_001 ns; 2999 ps end at 4499 ps → 3 ns.
    ops = trace.ops[trace.ops["op_type"] == "Mul"]
    assert list(ops["start_ns"]) == [1_000_002_001, 1_000_012_001]
    assert list(ops["dur_ns"]) == [3, 3] and list(ops["node_name"]) == ["grad", "grad"]
    assert list(ops["step"]) == [0, 1] and set(trace.ops["device"]) == {WORKER}
    # The _Send nodes ran too: they are ops as well as the start of a transfer.
    assert list(trace.ops["op_type"]).count("_Send") == 2
    assert list(trace.steps["start_ns"]) == [1_000_002_001, 1_000_012_001]
    moved = trace.transfers
    assert list(moved["direction"]) == ["push", "push"] and list(moved["tensor_name"]) == ["edge_7_grad"] * 2
    assert moved["size_bytes"].isna().all() and list(moved["dur_ns"]) == [7, 7]
    assert "sizes of 2 of 2 transfers" in " | ".join(trace.lost)
    # Named .pb, it is still told from its content.
    other = tmp_path / "profile.pb"
    other.write_bytes(path.read_bytes())
    assert read_trace(other).equals(trace)


def _absurd() -> bytes:
    return b"\x0a" + bytes([0x80, 0x80, 0x80, 0x80, 0x80, 0x20]) + b"\x12\x01x"


BAD = {
    "empty": (lambda: b"", TraceFormatError, "file is empty"),
    "truncated": (lambda: _space().SerializeToString()[:-9], TraceFormatError, "not an XSpace protobuf"),
    "absurd_length": (_absurd, TraceFormatError, "not an XSpace protobuf"),
    "garbage": (lambda: bytes(range(256)) * 4, TraceFormatError, "not an XSpace protobuf"),
    "no_host_plane": (lambda: _space(host_plane="/device:GPU:0").SerializeToString(), TraceFormatError,
                      "no '/host:CPU' plane"),
    "unknown_event_metadata": (lambda: _space(event_meta=99).SerializeToString(), TraceFormatError,
                               "event metadata id 99 is not defined"),
    "unknown_stat_metadata": (lambda: _space(stat_meta=77).SerializeToString(), TraceFormatError,
                              "stat metadata id 77 is not defined"),
    "unknown_ref_value": (lambda: _space(ref=55).SerializeToString(), TraceFormatError,
                          "refers to stat metadata id 55"),
    "bad_key": (lambda: _space(send_key="nonsense").SerializeToString(), TraceContentError,
                "rendezvous key does not read"),
    # protobuf's own words were 'String field had bad UTF-8', with no byte and no field
    "not_utf8": (lambda: _space().SerializeToString().replace(b"/host:CPU", b"/host:\xffPU"), TraceFormatError,
                 "string field 'name' (field 2 of XPlane) is not UTF-8: b'/host:\\xffPU'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_xspace_is_one_line_naming_the_file(case: str, tmp_path: pathlib.Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    make, error, why = BAD[case]
    path = tmp_path / f"{case}.xplane.pb"
    path.write_bytes(make())
    with pytest.raises(error) as caught:
        read_trace(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and why in message, message
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err and "Traceback" not in err


def test_no_step_events_and_no_worker_are_refused(tmp_path: pathlib.Path) -> None:
    space = _space()
    del space.planes[1].lines[0]  # the python line: no step
    path = tmp_path / "a.xplane.pb"
    path.write_bytes(space.SerializeToString())
    with pytest.raises(TraceContentError, match="no step events"):
        read_trace(path)
    path.write_bytes(_space(send_key=f"{PS};1;/job:chief/replica:0/task:0/device:CPU:0;e;0:0").SerializeToString())
    with pytest.raises(TraceContentError, match="no device of job 'worker'"):
        read_trace(path)


def test_older_runs_of_a_logdir_are_counted_as_not_read(tmp_path: pathlib.Path) -> None:
    """A logdir profiled twice: the newest run was read and the older one passed over without a word; the
    summary now says so, as it does of other files it does not read (a hardening pass)."""
    runs = tmp_path / "plugins" / "profile"
    shutil.copytree(RUN, runs / "2026_12_01_12_50_54")
    assert "older profile runs in the logdir, not read (the newest is)" not in read_trace(tmp_path).skipped
    shutil.copytree(RUN, runs / "2026_11_30_09_00_00")
    (runs / "2026_11_29_09_00_00").mkdir()  # no profile in it: no run
    trace = read_trace(tmp_path)
    assert trace.skipped["older profile runs in the logdir, not read (the newest is)"] == 1
    assert trace.ops.equals(read_trace(RUN).ops)


@pytest.mark.slow
def test_fresh_capture_with_tensorflow_reads_the_known_model(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("tensorflow")
    from validation.capture_tf2 import capture

    files = capture(tmp_path / "logdir", steps=3)
    assert len(files) == 3  # coordinator, worker, PS
    trace = read_trace(tmp_path / "logdir")
    # the first call (its registration, which gives the shapes) is left out of the steps
    assert len(trace.steps) == 2 and sorted(trace.variables["size_bytes"]) == VARIABLE_BYTES
    for _, moved in trace.transfers.groupby("step"):
        pushes = moved[moved["direction"] == "push"]
        assert sorted(pushes["size_bytes"].astype(int)) == VARIABLE_BYTES
        assert (moved["direction"] == "pull").sum() == 5
    meta = json.loads((tmp_path / "logdir" / "meta.json").read_text())
    assert meta["tensorflow"].startswith("2.") and len(meta["losses"]) == 3
    # Every process the capture started is gone.
    left = [p for p in pathlib.Path("/proc").glob("[0-9]*/cmdline")
            if _cmdline(p).count(str(tmp_path)) and "validation.capture_tf2" in _cmdline(p)]
    assert not left


def _cmdline(path: pathlib.Path) -> str:
    try:
        return path.read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
