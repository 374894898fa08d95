"""The partition graphs of a TF2 step function, rebuilt from what a profile of its first call registers.

A ParameterServerStrategy step is one ``tf.function`` that the coordinator dispatches to a worker. When a host
first runs it, the profile records its registration (``EagerService:Enqueue`` requests, :mod:`parsers.xplane`):
the whole function (every node with its inputs, no devices) everywhere, and, on each PS, the PS's component
(``__inference_<f>_partitioned_<id>_<k>``: its nodes on its device, with the ``_Send``/``_Recv`` nodes that
TensorFlow's partitioner added). The worker's own component is not sent to any other host, so it is not in
the profile; it is the whole function less the PS components' nodes. Together they give what a TF1 RunMetadata's
partition graphs give, and :func:`partition_tables` writes them as the same tables (``graph_nodes``,
``graph_edges``) so that a step model is built the same way:

- a PS component's nodes and edges as registered;
- the worker's nodes are the whole function's nodes that no PS component holds; an input from a worker node is
  an edge; an input from a PS node arrives through the rendezvous whose ``_Send`` that PS node feeds (its
  ``from``), i.e. from that transfer's ``_Recv`` on the worker; a control input from a PS node arrives through
  the grouped control edge whose ``_Send`` names the worker node as its consumer (``to``);
- a worker node that a PS component receives (its ``_Recv`` of the tensor) feeds the worker's ``_Send`` of that
  rendezvous.

A PS component's arguments (the variables' resource handles) become nodes of op ``_Arg`` on its device, feeding
the reads and updates of their variable as a TF1 graph's ``VarHandleOp`` does. A rendezvous whose ``_Recv`` the profile did
not show gets a ``_Recv`` node named after its ``_Send``. What could not be joined is counted, not guessed.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

PARTITIONED = "_partitioned_"


def _node(tensor: str) -> tuple[str, bool]:
    """(node, is a control input) of a FunctionDef input (``node:output:0``, ``node``, ``^node``)."""
    return tensor.lstrip("^").split(":", 1)[0], tensor.startswith("^")


def partition_tables(fdefs: Sequence[Any], rendezvous: Sequence[dict[str, Any]], worker: str | None,
                     skipped: dict[str, int]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(graph_nodes, graph_edges) rows of the step function ``fdefs`` (the whole function and its registered
    components), given the profile's ``rendezvous`` rows (keyed by ``tensor_name``; their ``recv_node`` is set
    here where the graph says it, or named after the ``_Send`` where nothing does); empty when the profile lacks
    the whole function, every PS component, or the worker's device."""
    whole = next((f for f in fdefs if PARTITIONED not in f.signature.name), None)
    parts = [f for f in fdefs if PARTITIONED in f.signature.name and f.node_def and f.node_def[0].device]
    if whole is None or not parts or worker is None:
        return [], []
    by_tensor = {r["tensor_name"]: r for r in rendezvous}
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    on_ps: dict[str, str] = {}  # PS node -> its device
    pulled: dict[str, dict[str, Any]] = {}  # PS producer -> the rendezvous that takes it to the worker
    control: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)  # PS device -> its control rendezvous
    pushed: dict[str, dict[str, Any]] = {}  # worker producer -> the rendezvous that takes it to a PS
    for part in parts:
        names = {n.name for n in part.node_def}
        args = {a.name for a in part.signature.input_arg}
        device = part.node_def[0].device
        for arg in sorted(args):  # a variable's handle: the node its reads and updates share, as a VarHandleOp
            on_ps[arg] = device
            nodes.append({"device": device, "node_name": arg, "op_type": "_Arg"})
        for n in part.node_def:
            on_ps[n.name] = n.device
            nodes.append({"device": n.device, "node_name": n.name, "op_type": n.op})
            for tensor in n.input:
                src, is_control = _node(tensor)
                if src in names or src in args:
                    edges.append(_edge(n.device, src, n.name, is_control))
            row = by_tensor.get(n.attr["tensor_name"].s.decode() if "tensor_name" in n.attr else "")
            if row is None or n.op not in ("_Send", "_Recv"):
                continue
            if n.op == "_Recv":  # a push: the PS's _Recv node, fed by the worker's producer
                row["recv_node"] = n.name
                pushed.setdefault(row["tensor_name"].split("_", 2)[-1], row)
            elif n.input and _node(n.input[0])[0].startswith(GROUPED):
                control[n.device].append(row)
            elif n.input:
                pulled.setdefault(_node(n.input[0])[0], row)
    for row in rendezvous:
        if row["recv_node"] is None:
            row["recv_node"] = f"{row['send_node']}/_recv"
    whole_names = {n.name for n in whole.node_def}
    for n in whole.node_def:
        if n.name in on_ps:
            continue
        nodes.append({"device": worker, "node_name": n.name, "op_type": n.op})
        for tensor in n.input:
            src, is_control = _node(tensor)
            if src not in whole_names:
                continue  # a function argument: a variable's handle
            if src not in on_ps:
                edges.append(_edge(worker, src, n.name, is_control))
                continue
            rows = control[on_ps[src]] if is_control else [pulled[src]] if src in pulled else []
            if not rows:
                reason = "inputs from a PS node that no rendezvous carries (left out of the rebuilt graph)"
                skipped[reason] = skipped.get(reason, 0) + 1
            edges += [_edge(worker, r["recv_node"], n.name, is_control) for r in rows]
        if n.name in pushed:
            edges.append(_edge(worker, n.name, pushed[n.name]["send_node"], False))
    return nodes, _unique(edges)


GROUPED = "GroupCrossDeviceControlEdges"  # the partitioner's one control signal per pair of devices


def _edge(device: str, src: str, dst: str, control: bool) -> dict[str, Any]:
    return {"device": device, "src_node": src, "src_output": -1 if control else 0, "dst_node": dst,
            "kind": "control" if control else "data"}


def _unique(edges: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``edges`` without repeats, in order."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for e in edges:
        key = tuple(e.values())
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out
