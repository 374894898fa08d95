"""The partition graphs of a TF2 step function, rebuilt from what a profile of its first call registers.

A ParameterServerStrategy step is one ``tf.function`` that the coordinator dispatches to a worker. When a host
first runs it, the profile records its registration (``EagerService:Enqueue`` requests, :mod:`parsers.registration`):
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
  that PS's grouped control edge (the one ``_Send`` of ``GroupCrossDeviceControlEdges`` the partitioner adds
  per pair of devices);
- a worker node that a PS component receives (its ``_Recv`` of the tensor) feeds the worker's ``_Send`` of that
  rendezvous.

A PS component's arguments (the variables' resource handles) become nodes of op ``_Arg`` on its device, feeding
the reads and updates of their variable as a TF1 graph's ``VarHandleOp`` does. A rendezvous whose ``_Recv`` the
profile did not show gets a ``_Recv`` node named after its ``_Send``. What could not be joined is counted, not
guessed. A step function that calls another ``tf.function`` shows that call as one node of the whole function
while its component holds the callee's nodes (``StatefulPartitionedCall/...``): such a step is not rebuilt
(its worker ops join no node and are counted as runtime events).
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Sequence
from typing import Any

PARTITIONED = "_partitioned_"


def _node(tensor: str) -> tuple[str, bool]:
    """(node, is a control input) of a FunctionDef input (``node:output:0``, ``node``, ``^node``)."""
    return tensor.lstrip("^").split(":", 1)[0], tensor.startswith("^")


Rows = list[dict[str, Any]]


@dataclasses.dataclass(slots=True)
class _Components:
    """What the PS components hold: their nodes and edges, and where each rendezvous starts or ends."""

    nodes: Rows = dataclasses.field(default_factory=list)
    edges: Rows = dataclasses.field(default_factory=list)
    on_ps: dict[str, str] = dataclasses.field(default_factory=dict)  # PS node -> its device
    pulled: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # PS producer -> its rendezvous
    control: dict[str, Rows] = dataclasses.field(  # PS device -> its grouped control rendezvous
        default_factory=lambda: collections.defaultdict(list))
    pushed: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)  # worker producer -> rendezvous


def partition_tables(fdefs: Sequence[Any], rendezvous: Sequence[dict[str, Any]], worker: str | None,
                     skipped: dict[str, int]) -> tuple[Rows, Rows]:
    """(graph_nodes, graph_edges) rows of the step function ``fdefs`` (the whole function and its registered
    components), given the profile's ``rendezvous`` rows (keyed by ``tensor_name``; their ``recv_node`` is set
    here where the graph says it, or named after the ``_Send`` where nothing does); empty when the profile lacks
    the whole function, every PS component, or the worker's device."""
    whole = next((f for f in fdefs if PARTITIONED not in f.signature.name), None)
    parts = [f for f in fdefs if PARTITIONED in f.signature.name and f.node_def and f.node_def[0].device]
    if whole is None or not parts or worker is None:
        return [], []
    ps = _ps_components(parts, {r["tensor_name"]: r for r in rendezvous})
    for row in rendezvous:
        if row["recv_node"] is None:
            row["recv_node"] = f"{row['send_node']}/_recv"
    nodes, edges = _worker_component(whole, worker, ps, skipped)
    return ps.nodes + nodes, _unique(ps.edges + edges)


def _ps_components(parts: Sequence[Any], by_tensor: dict[str, dict[str, Any]]) -> _Components:
    """The PS components' nodes (their arguments, the variables' handles, as ``_Arg`` nodes) and edges, and
    which rendezvous each ``_Send``/``_Recv`` node is."""
    out = _Components()
    for part in parts:
        names = {n.name for n in part.node_def}
        args = {a.name for a in part.signature.input_arg}
        device = part.node_def[0].device
        for arg in sorted(args):  # a variable's handle: the node its reads and updates share, as a VarHandleOp
            out.on_ps[arg] = device
            out.nodes.append({"device": device, "node_name": arg, "op_type": "_Arg"})
        for n in part.node_def:
            out.on_ps[n.name] = n.device
            out.nodes.append({"device": n.device, "node_name": n.name, "op_type": n.op})
            out.edges += [_edge(n.device, src, n.name, control) for src, control in map(_node, n.input)
                          if src in names or src in args]
            row = by_tensor.get(n.attr["tensor_name"].s.decode("utf-8", "replace") if "tensor_name" in n.attr else "")
            if row is None or n.op not in ("_Send", "_Recv"):
                continue
            if n.op == "_Recv":  # a push: the PS's _Recv node, fed by the worker's producer
                row["recv_node"] = n.name
                out.pushed.setdefault(row["tensor_name"].split("_", 2)[-1], row)
            elif n.input and _node(n.input[0])[0].startswith(GROUPED):
                out.control[n.device].append(row)
            elif n.input:
                out.pulled.setdefault(_node(n.input[0])[0], row)
    return out


def _worker_component(whole: Any, worker: str, ps: _Components, skipped: dict[str, int]) -> tuple[Rows, Rows]:
    """The worker's component: the whole function's nodes no PS component holds, inputs from PS nodes through
    their rendezvous (module docstring)."""
    nodes: Rows = []
    edges: Rows = []
    whole_names = {n.name for n in whole.node_def}
    for n in whole.node_def:
        if n.name in ps.on_ps:
            continue
        nodes.append({"device": worker, "node_name": n.name, "op_type": n.op})
        for src, control in map(_node, n.input):
            if src not in whole_names:
                continue  # a function argument: a variable's handle
            if src not in ps.on_ps:
                edges.append(_edge(worker, src, n.name, control))
                continue
            rows = ps.control[ps.on_ps[src]] if control else [ps.pulled[src]] if src in ps.pulled else []
            if not rows:
                reason = "inputs from a PS node that no rendezvous carries (left out of the rebuilt graph)"
                skipped[reason] = skipped.get(reason, 0) + 1
            edges += [_edge(worker, r["recv_node"], n.name, control) for r in rows]
        if n.name in ps.pushed:
            edges.append(_edge(worker, n.name, ps.pushed[n.name]["send_node"], False))
    return nodes, edges


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
