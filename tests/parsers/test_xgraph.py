"""A TF2 step's partition graphs rebuilt from its registration (``parsers/xgraph.py``), worked out by hand on a
one-variable step: the PS component as registered, the worker's as the whole function less the PS's nodes, PS
inputs through their rendezvous, and what cannot be joined counted."""

from __future__ import annotations

from typing import Any

from parsers.proto import tf_trace_pb2 as tfpb
from parsers.xgraph import partition_tables

PS = "/job:ps/replica:0/task:0/device:CPU:0"
WORKER = "/job:worker/replica:0/task:0/device:CPU:0"


def _function(name: str, nodes: list[tuple[str, str, list[str], str]], args: tuple[str, ...] = (),
              tensors: dict[str, str] | None = None) -> Any:
    """A FunctionDef ``name`` of (node, op, inputs, device) nodes; ``tensors``: a _Send/_Recv's tensor_name."""
    fdef = tfpb.FunctionDef()
    fdef.signature.name = name
    for arg in args:
        fdef.signature.input_arg.add(name=arg, type=tfpb.DT_RESOURCE)
    for node, op, inputs, device in nodes:
        n = fdef.node_def.add(name=node, op=op, input=inputs, device=device)
        if node in (tensors or {}):
            n.attr["tensor_name"].s = (tensors or {})[node].encode()
    return fdef


def _step() -> list[Any]:
    whole = _function("__inference_step_1", [("read", "ReadVariableOp", ["w"], ""), ("x", "Const", [], ""),
                                             ("matmul", "MatMul", ["read:value:0", "x:output:0", "x:output:1"], ""),
                                             ("grad", "Mul", ["matmul:product:0"], ""),
                                             ("apply", "ResourceApplyGradientDescent", ["w", "grad:z:0"], ""),
                                             ("done", "NoOp", ["^apply"], "")], args=("w",))
    part = _function("__inference_step_1_partitioned_2_0", [
        ("read", "ReadVariableOp", ["w"], PS), ("send", "_Send", ["read:value:0"], PS), ("recv", "_Recv", [], PS),
        ("apply", "ResourceApplyGradientDescent", ["w", "recv:tensor:0"], PS)],
        args=("w",), tensors={"send": "edge_1_read", "recv": "edge_2_grad"})
    return [whole, part]


def _edge(device: str, src: str, dst: str, control: bool = False) -> dict[str, Any]:
    return {"device": device, "src_node": src, "src_output": -1 if control else 0, "dst_node": dst,
            "kind": "control" if control else "data"}


def test_a_one_variable_step_by_hand() -> None:
    rendezvous: list[dict[str, Any]] = [{"tensor_name": "edge_1_read", "send_node": "send", "recv_node": None},
                                        {"tensor_name": "edge_2_grad", "send_node": "grad/_send", "recv_node": None}]
    skipped: dict[str, int] = {}
    nodes, edges = partition_tables(_step(), rendezvous, WORKER, skipped)
    assert [(n["device"], n["node_name"], n["op_type"]) for n in nodes] == [
        (PS, "w", "_Arg"), (PS, "read", "ReadVariableOp"), (PS, "send", "_Send"), (PS, "recv", "_Recv"),
        (PS, "apply", "ResourceApplyGradientDescent"),
        (WORKER, "x", "Const"), (WORKER, "matmul", "MatMul"), (WORKER, "grad", "Mul"), (WORKER, "done", "NoOp")]
    assert edges == [
        _edge(PS, "w", "read"), _edge(PS, "read", "send"), _edge(PS, "w", "apply"), _edge(PS, "recv", "apply"),
        _edge(WORKER, "send/_recv", "matmul"),  # the pull: no _Recv shown, one named after its _Send
        _edge(WORKER, "x", "matmul"), _edge(WORKER, "matmul", "grad"),  # x's two outputs: one edge, once
        _edge(WORKER, "grad", "grad/_send"),  # the push: the worker's producer feeds its _Send
    ]
    assert [r["recv_node"] for r in rendezvous] == ["send/_recv", "recv"]
    # done's control input from the PS's apply: no grouped control rendezvous carries it here
    assert skipped == {"inputs from a PS node that no rendezvous carries (left out of the rebuilt graph)": 1}


def test_nothing_is_rebuilt_without_the_whole_function_a_ps_component_or_the_worker() -> None:
    whole, part = _step()
    rows = [{"tensor_name": "edge_1_read", "send_node": "send", "recv_node": None}]
    for fdefs, worker in (([part], WORKER), ([whole], WORKER), ([whole, part], None)):
        assert partition_tables(fdefs, rows, worker, {}) == ([], [])
    assert rows[0]["recv_node"] is None
