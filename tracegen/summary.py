"""What one worker's trace says about a step: ``summarize(trace) -> dict`` (``tracegen inspect``).

Keys and their meaning (per-step quantities are the median over traced steps unless the key ends in
``_per_step``, which lists one value per step; ``None`` where the input format cannot tell):

- ``n_steps``, ``devices``, ``ops_per_step``: traced steps, devices seen, median executed ops per step.
- ``n_variables``, ``param_elements``, ``param_bytes``: the trained parameters — variables that are input 0
  (the variable updated) of an optimizer ``*Apply*`` op in the partition graphs; ``parameters``: their names
  (what a placement file names, :mod:`tracegen.placement`). ``n_other_variables`` and
  ``other_variable_bytes`` count the rest the PS holds (``global_step``, optimizer slots).
- ``pull_count``, ``pull_bytes`` (PS → worker) and ``push_count``, ``push_bytes`` (worker → PS): the tensors a
  step moves, from the partition graphs' ``_Send``/``_Recv`` pairs (exact per step even when a traced step
  missed records), their bytes as recorded (``None`` when any of them never was). Without graphs: the median of
  what was recorded, bytes ``None``. ``pull_unsized``, ``push_unsized``: with graphs, how many of those tensors were
  never recorded with a size, and ``pull_sized_bytes``, ``push_sized_bytes`` the bytes of the rest (a TF2 profile's
  control edge has no size: ``predict`` takes an unsized tensor's variable's size, or 0 bytes where none is near);
  ``None`` without graphs.
- ``gradient_push_count``, ``gradient_push_bytes``: pushes that flow into exactly one optimizer apply op (a
  shared input such as the learning rate feeds all of them; a sparse gradient counts its values and indices).
- ``pull_count_recorded_per_step``, ``push_count_recorded_per_step``: records actually present per step.
- ``step_time_ns`` (median), ``step_time_ns_per_step``: first record start to last record end of a step.
- ``transfer_time_ns``: time at least one transfer was in flight; ``compute_time_ns``: time at least one
  worker op ran (not counting ``_Recv``/``_Send``, whose spans are waits for the network);
  ``ps_compute_time_ns``: summed duration of the PS's ops (apply ops, reads; not transfers) in a step;
  ``overlap_ns``: transfers and worker compute at once; ``overlap_fraction`` = overlap / transfer time.
- ``pull_rate_bytes_per_s``, ``push_rate_bytes_per_s``: bytes moved ÷ time any transfer of that direction
  was in flight (the observed rate of that direction of the link).
- ``link_estimate``: what ``tracegen predict`` uses when no ``--bandwidth`` is given
  (the trace's estimate as :func:`tracegen.selfreplay.replayed_model` holds it to the traced steps:
  ``pull_bandwidth_bytes_per_s``, ``push_bandwidth_bytes_per_s``, ``latency_ns``, ``method``, which says by how much
  it was raised, if at all); ``None`` when the trace cannot be modelled (no partition graphs).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

import pandas as pd
from intervaltree import IntervalTree

from parsers.trace import PULL, PUSH, Trace, device_role
from tracegen.errors import ModelError
from tracegen.selfreplay import step_model

# Rendezvous ops: their recorded span covers waiting for the network, so they are not computation.
TRANSFER_OPS = ("_Recv", "_Send", "_HostRecv", "_HostSend", "_Retval", "_Arg")


def is_apply_op(op_type: str) -> bool:
    """Whether an op type is an optimizer's variable update (``ApplyAdam``, ``ResourceApplyGradientDescent``; in
    TF2's plain SGD, ``AssignSubVariableOp`` and, for a sparse gradient, ``ResourceScatterSub``)."""
    return "Apply" in op_type or op_type in ("AssignSubVariableOp", "ResourceScatterSub")


def parameter_names(trace: Trace) -> set[str]:
    """Variables that are input 0 of an optimizer apply op: the trained parameters."""
    nodes, edges = trace.graph_nodes, trace.graph_edges
    applies = set(nodes.loc[nodes["op_type"].map(is_apply_op), "node_name"])
    data = edges[(edges["kind"] == "data") & edges["dst_node"].isin(applies)]
    first_inputs = set(data.drop_duplicates("dst_node")["src_node"])  # input 0 is the first edge written
    return first_inputs & set(trace.variables["name"])


def gradient_tensors(trace: Trace) -> set[str]:
    """Pushed tensors that flow, through ops on the PS, into exactly one optimizer apply op.

    A dense gradient feeds its apply op directly; a sparse one (values and indices of an embedding's
    IndexedSlices) passes through ``Unique``/``UnsortedSegmentSum`` first. Hyper-parameters sent by the worker
    (learning rate, momentum) reach every apply op, and inputs pushed for a PS-side lookup reach none.
    """
    nodes, edges = trace.graph_nodes, trace.graph_edges
    applies = set(nodes.loc[nodes["op_type"].map(is_apply_op), "node_name"])
    data = edges[edges["kind"] == "data"]
    consumers: dict[tuple[str, str], list[str]] = {}
    for device, src, dst in zip(data["device"], data["src_node"], data["dst_node"], strict=True):
        consumers.setdefault((device, src), []).append(dst)
    pushes = trace.rendezvous[trace.rendezvous["direction"] == PUSH]
    gradients = set()
    for tensor, device, recv in zip(pushes["tensor_name"], pushes["recv_device"], pushes["recv_node"], strict=True):
        seen, frontier, reached = {recv}, [recv], set()
        while frontier:
            for nxt in consumers.get((device, frontier.pop()), []):
                if nxt in applies:
                    reached.add(nxt)
                elif nxt not in seen:
                    seen.add(nxt)
                    frontier.append(nxt)
        if len(reached) == 1:
            gradients.add(tensor)
    return gradients


def _union_length(intervals: Iterable[tuple[int, int]]) -> tuple[int, IntervalTree]:
    tree = IntervalTree.from_tuples((s, e) for s, e in intervals if e > s)
    tree.merge_overlaps()
    return sum(iv.length() for iv in tree), tree


def _overlap_length(a: IntervalTree, b: IntervalTree) -> int:
    total = 0
    for iv in a:
        for other in b.overlap(iv.begin, iv.end):
            total += min(iv.end, other.end) - max(iv.begin, other.begin)
    return total


def _median(values: list[int] | list[float]) -> Any:
    return statistics.median(values) if values else None


def _tensor_bytes(transfers: pd.DataFrame) -> dict[str, int]:
    known = transfers.dropna(subset=["tensor_name", "size_bytes"])
    return {str(k): int(v) for k, v in known.groupby("tensor_name")["size_bytes"].median().items()}


def _moved(trace: Trace, direction: str, only: set[str] | None = None) -> tuple[int, int | None]:
    """(count, bytes) of one direction per step, from the graph when present, else recorded medians: the bytes
    only when every recorded transfer has its size (a synthetic trace's do; TF's timeline JSON's do not)."""
    count, sized, unsized = _moved_sized(trace, direction, only)
    return count, None if unsized else sized


def _moved_sized(trace: Trace, direction: str, only: set[str] | None = None) -> tuple[int, int | None, int | None]:
    """(count, bytes of the tensors recorded with a size, how many never were) of one direction per step: from the
    graph when present; else the recorded medians, with (bytes, None) when every record has its size and
    (None, None) when one lacks it."""
    recorded = trace.transfers[trace.transfers["direction"] == direction]
    if trace.rendezvous.empty:
        counts = recorded.groupby("step").size().reindex(trace.steps["step"], fill_value=0)
        if recorded["size_bytes"].isna().any():
            return int(statistics.median(counts)), None, None
        sums = recorded.groupby("step")["size_bytes"].sum().reindex(trace.steps["step"], fill_value=0)
        return int(statistics.median(counts)), int(statistics.median(sums)), None
    tensors = set(trace.rendezvous.loc[trace.rendezvous["direction"] == direction, "tensor_name"])
    if only is not None:
        tensors &= only
    sizes = _tensor_bytes(recorded)
    known = tensors & set(sizes)
    return len(tensors), sum(sizes[t] for t in known), len(tensors - known)


def summarize(trace: Trace) -> dict[str, Any]:
    """The summary ``tracegen inspect`` prints; keys documented in this module's docstring."""
    variables = trace.variables
    params = parameter_names(trace)
    is_param = variables["name"].isin(params)
    pull_count, pull_sized, pull_unsized = _moved_sized(trace, PULL)
    push_count, push_sized, push_unsized = _moved_sized(trace, PUSH)
    grad_count, grad_bytes = _moved(trace, PUSH, gradient_tensors(trace)) if not trace.rendezvous.empty else (
        None, None)
    per_step = [_step_figures(trace, int(s)) for s in trace.steps["step"]]
    step_times = [int(e - s) for s, e in zip(trace.steps["start_ns"], trace.steps["end_ns"], strict=True)]
    return {
        "source": trace.source,
        "source_format": trace.source_format,
        "n_steps": len(trace.steps),
        "devices": list(trace.devices),
        "ops_per_step": _median([f["ops"] for f in per_step]),
        "n_variables": int(is_param.sum()) if trace.has_graph and not variables.empty else None,
        "parameters": sorted(variables.loc[is_param, "name"]) if trace.has_graph and not variables.empty else None,
        "param_elements": int(variables.loc[is_param, "n_elements"].sum()) if not variables.empty else None,
        "param_bytes": int(variables.loc[is_param, "size_bytes"].sum()) if not variables.empty else None,
        "n_other_variables": int((~is_param).sum()) if not variables.empty else None,
        "other_variable_bytes": int(variables.loc[~is_param, "size_bytes"].sum()) if not variables.empty else None,
        "pull_count": pull_count,
        "pull_bytes": None if pull_unsized else pull_sized,
        "pull_unsized": pull_unsized,
        "pull_sized_bytes": None if pull_unsized is None else pull_sized,
        "push_count": push_count,
        "push_bytes": None if push_unsized else push_sized,
        "push_unsized": push_unsized,
        "push_sized_bytes": None if push_unsized is None else push_sized,
        "gradient_push_count": grad_count,
        "gradient_push_bytes": grad_bytes,
        "pull_count_recorded_per_step": [f["pulls"] for f in per_step],
        "push_count_recorded_per_step": [f["pushes"] for f in per_step],
        "step_time_ns": _median(step_times),
        "step_time_ns_per_step": step_times,
        "transfer_time_ns": _median([f["transfer_ns"] for f in per_step]),
        "compute_time_ns": _median([f["compute_ns"] for f in per_step]),
        "ps_compute_time_ns": _median([f["ps_compute_ns"] for f in per_step]),
        "overlap_ns": _median([f["overlap_ns"] for f in per_step]),
        "overlap_fraction": _median([f["overlap_ns"] / f["transfer_ns"] for f in per_step if f["transfer_ns"]]),
        "pull_rate_bytes_per_s": _median([f["pull_rate"] for f in per_step if f["pull_rate"] is not None]),
        "push_rate_bytes_per_s": _median([f["push_rate"] for f in per_step if f["push_rate"] is not None]),
        "link_estimate": _link_estimate(trace),
        "lost": list(trace.lost),
        "skipped": dict(trace.skipped),
    }


def _link_estimate(trace: Trace) -> dict[str, Any] | None:
    if trace.rendezvous.empty:
        return None
    try:
        link = step_model(trace).link
    except ModelError:
        return None
    return {"pull_bandwidth_bytes_per_s": link.pull_bandwidth_bytes_per_s,
            "push_bandwidth_bytes_per_s": link.push_bandwidth_bytes_per_s, "latency_ns": link.latency_ns,
            "method": link.method}


def _step_figures(trace: Trace, step: int) -> dict[str, Any]:
    ops = trace.ops[trace.ops["step"] == step]
    xfers = trace.transfers[trace.transfers["step"] == step]
    roles = ops["device"].map(device_role).astype(object)  # (a step without ops: an empty column of any dtype)
    computing = ~ops["op_type"].isin(TRANSFER_OPS)
    worker_ops = ops[(roles == "worker") & computing]
    ps_ops = ops[(roles == "ps") & computing]
    transfer_ns, transfer_tree = _union_length(zip(xfers["start_ns"], xfers["start_ns"] + xfers["dur_ns"],
                                                    strict=True))
    compute_ns, compute_tree = _union_length(zip(worker_ops["start_ns"],
                                                 worker_ops["start_ns"] + worker_ops["dur_ns"], strict=True))
    rates: dict[str, float | None] = {}
    for direction in (PULL, PUSH):
        part = xfers[xfers["direction"] == direction]
        busy_ns, _ = _union_length(zip(part["start_ns"], part["start_ns"] + part["dur_ns"], strict=True))
        known = part["size_bytes"].notna().all() and not part.empty
        rates[direction] = float(part["size_bytes"].sum()) * 1e9 / busy_ns if known and busy_ns else None
    return {"ops": len(ops), "pulls": int((xfers["direction"] == PULL).sum()),
            "pushes": int((xfers["direction"] == PUSH).sum()), "transfer_ns": transfer_ns,
            "compute_ns": compute_ns, "ps_compute_ns": int(ps_ops["dur_ns"].sum()),
            "overlap_ns": _overlap_length(transfer_tree, compute_tree),
            "pull_rate": rates[PULL], "push_rate": rates[PUSH]}
