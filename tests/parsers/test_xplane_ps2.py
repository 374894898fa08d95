"""A TF2 ParameterServerStrategy profile of a job with two PS tasks (the bundled ``tf2_ps2``, TensorFlow 2.21's own
profiler): each variable read on the PS task its pulls come from, as the partition graphs place its handle; a
variable pulled from two PS devices refused in one line naming the file. Read on one PS device alone, every
variable was given none ('device' must not be empty)."""

from __future__ import annotations

import json
import pathlib
import shutil
from collections.abc import Callable
from typing import Any

import pytest

from parsers import TraceContentError, read_trace
from parsers.proto import xplane_pb2 as pb
from tests.parsers_support import check_message

TF2_PS2 = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces" / "tf2_ps2"
RUN = next((TF2_PS2 / "plugins" / "profile").iterdir())
PS = tuple(f"/job:ps/replica:0/task:{k}/device:CPU:0" for k in range(2))


def _host_with(name: str) -> pathlib.Path:
    """The bundled run's file whose bytes hold ``name`` (host files are named by random profiler ports)."""
    return next(p for p in sorted(RUN.iterdir()) if name.encode() in p.read_bytes())


def test_each_variable_is_on_the_ps_task_its_pulls_come_from() -> None:
    assert json.loads((TF2_PS2 / "meta.json").read_text())["ps_tasks"] == 2
    trace = read_trace(TF2_PS2)
    variables, moved = trace.variables, trace.transfers
    assert set(moved.loc[moved["direction"] == "pull", "src_device"]) == set(PS)
    assert sorted(set(variables["device"])) == list(PS)  # both PS tasks hold variables, and nothing else does
    # where the partition graphs put each variable's handle, which the step model joins its size on
    args = trace.graph_nodes[trace.graph_nodes["op_type"] == "_Arg"]
    assert dict(zip(variables["name"], variables["device"], strict=True)) == {
        name: device for name, device in zip(args["node_name"], args["device"], strict=True)
        if name in set(variables["name"])}
    # each step pulls every variable from its PS task, and pushes its gradient there: bytes per PS task add up
    held = variables.groupby("device")["size_bytes"].sum()
    assert held.sum() == variables["size_bytes"].sum() and (held > 0).all()
    for step, in_step in moved.groupby("step"):
        sized = in_step.dropna(subset=["size_bytes"])  # the PS tasks' 'updates applied' control edges have none
        pulled = sized[sized["direction"] == "pull"].groupby("src_device")["size_bytes"].sum()
        pushed = sized[sized["direction"] == "push"].groupby("dst_device")["size_bytes"].sum()
        assert pulled.to_dict() == held.to_dict() == pushed.to_dict(), step


def _edited(tmp_path: pathlib.Path, host: pathlib.Path, edit: Callable[[Any, str, dict[int, str]], bool | None]
            ) -> pathlib.Path:
    """A copy of the bundled run with ``edit(event, name, stat_names)`` applied to every event of ``host``'s
    CPU plane; an event it returns False for is dropped."""
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    space = pb.XSpace()
    space.ParseFromString(host.read_bytes())
    for plane in space.planes:
        stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
        names = {k: v.name for k, v in plane.event_metadata.items()}
        for line in plane.lines:
            kept = [e for e in line.events if edit(e, names[e.metadata_id], stat_names) is not False]
            del line.events[:]
            line.events.extend(kept)
    (run / host.name).write_bytes(space.SerializeToString())
    return run


def test_a_variable_pulled_from_two_ps_devices_is_refused_naming_the_file(tmp_path: pathlib.Path) -> None:
    """One of PS task 1's pulls edited to come from the read of a variable PS task 0 holds (its ``from``)."""
    host = _host_with("BiasAdd/ReadVariableOp/_3:_Send")

    def from_matmul(event: Any, name: str, stat_names: dict[int, str]) -> None:
        if name == "BiasAdd/ReadVariableOp/_3:_Send":
            for stat in event.stats:
                if stat_names[stat.metadata_id] == "from":
                    stat.ClearField("ref_value")
                    stat.str_value = "MatMul/ReadVariableOp"

    run = _edited(tmp_path, host, from_matmul)
    with pytest.raises(TraceContentError) as caught:
        read_trace(run)
    message = str(caught.value)
    named = next(p for p in sorted(run.iterdir()) if str(p) in message)  # the file of either pull
    check_message(message, named, "argument 'matmul_readvariableop_resource' is pulled from two PS devices")
    assert PS[0] in message and PS[1] in message


def test_a_variable_whose_pulls_were_cut_off_is_on_its_component_s_ps_task(tmp_path: pathlib.Path) -> None:
    """No pull of a variable left (its host's profile cut them off): its device is its partition's, the PS task's
    whose component holds its argument, not none."""
    host = _host_with("BiasAdd_2/ReadVariableOp/_11:_Send")
    run = _edited(tmp_path, host, lambda _event, name, _stats: name != "BiasAdd_2/ReadVariableOp/_11:_Send")
    trace = read_trace(run)
    assert "edge_20_BiasAdd_2/ReadVariableOp" not in set(trace.transfers["tensor_name"])
    devices = dict(zip(trace.variables["name"], trace.variables["device"], strict=True))
    assert devices == dict(zip(read_trace(TF2_PS2).variables["name"], read_trace(TF2_PS2).variables["device"],
                               strict=True))
    assert devices["biasadd_2_readvariableop_resource"] == PS[1]
