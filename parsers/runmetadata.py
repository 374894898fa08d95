"""Read TensorFlow RunMetadata and StepStats protobufs, binary or text format, into a :class:`Trace`.

The schema is our own ``proto/tf_trace.proto`` (TensorFlow's field numbers, only the fields we read), so
TensorFlow need not be installed. One RunMetadata is one traced step; several are merged by ``read_steps``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from google.protobuf import message, text_format

from parsers.errors import TraceContentError, TraceFormatError
from parsers.labels import parse_op_type, parse_recv_label, split_input
from parsers.proto import tf_trace_pb2 as pb
from parsers.trace import Trace, direction_of, make_table

RECV_TENSOR = "RecvTensor"
VARIABLE_OPS = frozenset({"VarHandleOp", "VariableV2", "Variable"})
SEND_OPS = frozenset({"_Send", "_HostSend"})
RECV_OPS = frozenset({"_Recv", "_HostRecv"})
# Bytes per element of the dtypes a variable can have; others (string, resource, variant) are skipped.
DTYPE_BYTES = {
    "float32": 4, "float64": 8, "int32": 4, "uint8": 1, "int16": 2, "int8": 1, "complex64": 8, "int64": 8,
    "bool": 1, "bfloat16": 2, "uint16": 2, "complex128": 16, "float16": 2, "uint32": 4, "uint64": 8,
}
_DTYPE_NAMES = {
    "DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_INT32": "int32", "DT_UINT8": "uint8", "DT_INT16": "int16",
    "DT_INT8": "int8", "DT_COMPLEX64": "complex64", "DT_INT64": "int64", "DT_BOOL": "bool",
    "DT_BFLOAT16": "bfloat16", "DT_UINT16": "uint16", "DT_COMPLEX128": "complex128", "DT_HALF": "float16",
    "DT_UINT32": "uint32", "DT_UINT64": "uint64",
}
TEXT_FORMAT_STARTS = ("step_stats", "dev_stats", "partition_graphs", "cost_graph", "function_graphs", "#")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StepFile:
    """One traced step read from one file: its protobuf and where it came from."""

    source: str
    metadata: Any  # pb.RunMetadata


def is_text_format(data: bytes) -> bool:
    """Whether ``data`` looks like a text-format RunMetadata/StepStats (not binary)."""
    head = data[:256].lstrip()
    return any(head.startswith(s.encode()) for s in TEXT_FORMAT_STARTS)


def parse_step(data: bytes, source: str) -> StepFile:
    """Parse one RunMetadata or bare StepStats (binary or text) from ``data`` read from ``source``."""
    if is_text_format(data):
        return StepFile(source=source, metadata=_parse_text(data, source))
    md = _parse_binary(pb.RunMetadata(), data)
    if isinstance(md, message.Message) and _has_devices(md.step_stats):
        return StepFile(source=source, metadata=md)
    stats = _parse_binary(pb.StepStats(), data)  # a bare StepStats misparses as RunMetadata: try it too
    if isinstance(stats, message.Message) and _has_devices(stats):
        md = pb.RunMetadata()
        md.step_stats.CopyFrom(stats)
        return StepFile(source=source, metadata=md)
    why = md if isinstance(md, str) else "it holds no step_stats with named devices"
    raise TraceFormatError(f"{source}: not a RunMetadata or StepStats protobuf: {why}")


def _parse_binary(msg: Any, data: bytes) -> Any:
    """The parsed message, or the parser's complaint as a string."""
    try:
        msg.ParseFromString(data)
    except message.DecodeError as exc:
        return str(exc)
    return msg


def _has_devices(stats: Any) -> bool:
    return len(stats.dev_stats) > 0 and all(d.device.startswith("/") for d in stats.dev_stats)


def _parse_text(data: bytes, source: str) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"{source}: byte {exc.start}: text-format protobuf is not UTF-8") from exc
    starts_with_stats = text.lstrip().startswith("dev_stats")
    msg = pb.StepStats() if starts_with_stats else pb.RunMetadata()
    try:
        text_format.Parse(text, msg, allow_unknown_field=True)
    except text_format.ParseError as exc:
        detail = str(exc).split(" : ", 1)[-1]
        raise TraceFormatError(f"{source}:{exc.GetLine()}:{exc.GetColumn()}: invalid text-format protobuf: "
                               f"{detail}") from exc
    if starts_with_stats:
        md = pb.RunMetadata()
        md.step_stats.CopyFrom(msg)
        return md
    return msg


def _times_ns(node: Any) -> tuple[int, int]:
    """Start and duration in ns: TF's nanosecond fields when set, else its microsecond fields."""
    if node.all_start_nanos > 0:
        return int(node.all_start_nanos), int(node.all_end_rel_nanos)
    return int(node.all_start_micros) * 1000, int(node.all_end_rel_micros) * 1000


def read_steps(steps: Sequence[StepFile], source: str, source_format: str) -> Trace:
    """Merge traced steps (one RunMetadata each, in order) into one Trace."""
    ops: list[dict[str, Any]] = []
    transfers: list[dict[str, Any]] = []
    step_rows: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    for index, step in enumerate(steps):
        first, last = _read_records(step, index, ops, transfers, skipped)
        if first is None or last is None:
            raise TraceContentError(f"{step.source}: step_stats holds no records")
        step_rows.append({"step": index, "source": step.source, "start_ns": first, "end_ns": last})
    graphs = [g for s in steps for g in _partition_graphs(s.metadata)]
    nodes, edges, rendezvous, variables = _read_graphs(graphs, skipped)
    trace = Trace(
        source=source, source_format=source_format,
        ops=make_table("ops", ops), transfers=make_table("transfers", transfers),
        graph_nodes=make_table("graph_nodes", nodes), graph_edges=make_table("graph_edges", edges),
        rendezvous=make_table("rendezvous", rendezvous), variables=make_table("variables", variables),
        steps=make_table("steps", step_rows),
        lost=() if graphs else ("partition graphs (dependencies, variable shapes): not in the input",),
        skipped=skipped,
    )
    check_has_worker(trace)
    return trace


def check_has_worker(trace: Trace) -> None:
    """Raise TraceContentError unless some record ran on a worker device."""
    if not any("/job:worker" in d for d in trace.devices):
        raise TraceContentError(f"{trace.source}: no device of job 'worker' in the trace (devices: "
                                f"{', '.join(trace.devices) or 'none'})")


def _read_records(step: StepFile, index: int, ops: list[dict[str, Any]], transfers: list[dict[str, Any]],
                  skipped: dict[str, int]) -> tuple[int | None, int | None]:
    first: int | None = None
    last: int | None = None
    for d, dev in enumerate(step.metadata.step_stats.dev_stats):
        if not dev.device:
            raise TraceContentError(f"{step.source}: dev_stats[{d}] has no device name")
        for n, node in enumerate(dev.node_stats):
            start_ns, dur_ns = _times_ns(node)
            where = f"{step.source}: dev_stats[{d}].node_stats[{n}] ({node.node_name or 'unnamed'})"
            if start_ns <= 0 or dur_ns < 0:
                raise TraceContentError(f"{where}: bad times (start {start_ns} ns, duration {dur_ns} ns)")
            first = start_ns if first is None else min(first, start_ns)
            last = start_ns + dur_ns if last is None else max(last, start_ns + dur_ns)
            if node.node_name == RECV_TENSOR:
                transfers.append(_transfer_row(node, dev.device, index, start_ns, dur_ns, where))
            elif node.node_name:
                op_type = parse_op_type(node.timeline_label)
                ops.append({"step": index, "device": dev.device, "node_name": node.node_name,
                            "op_type": op_type, "start_ns": start_ns, "dur_ns": dur_ns,
                            "lane": int(node.thread_id)})
            else:
                skipped["unnamed node_stats"] = skipped.get("unnamed node_stats", 0) + 1
    return first, last


def _transfer_row(node: Any, device: str, index: int, start_ns: int, dur_ns: int, where: str) -> dict[str, Any]:
    label = parse_recv_label(node.timeline_label)
    if label is None:
        raise TraceContentError(f"{where}: RecvTensor label does not read '[size] [rate] TENSOR from SRC to DST' "
                                f"(got {node.timeline_label[:120]!r})")
    if label.dst_device != device:
        raise TraceContentError(f"{where}: RecvTensor to {label.dst_device!r} recorded on device {device!r}")
    requested = [o.tensor_description.allocation_description.requested_bytes for o in node.output]
    size = requested[0] if requested and requested[0] > 0 else label.size_bytes
    return {"step": index, "tensor_name": label.tensor_name, "src_device": label.src_device,
            "dst_device": label.dst_device, "direction": direction_of(label.src_device, label.dst_device),
            "size_bytes": size, "start_ns": start_ns, "dur_ns": dur_ns}


def _partition_graphs(md: Any) -> Iterable[Any]:
    yield from md.partition_graphs
    for fg in md.function_graphs:
        yield from fg.partition_graphs


def _read_graphs(graphs: Sequence[Any], skipped: dict[str, int]) -> tuple[list[dict[str, Any]], ...]:
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    variables: list[dict[str, Any]] = []
    sends: dict[str, tuple[str, str, str]] = {}
    recvs: dict[str, tuple[str, str, str]] = {}
    seen: set[tuple[str, str]] = set()
    for graph in graphs:
        for node in graph.node:
            key = (node.device, node.name)
            if key in seen:  # the same partition graph comes with every traced step
                continue
            seen.add(key)
            nodes.append({"device": node.device, "node_name": node.name, "op_type": node.op})
            edges.extend(_edges(node))
            if node.op in VARIABLE_OPS:
                row = _variable_row(node)
                if row is None:
                    skipped["variables of unsized dtype or unknown shape"] = (
                        skipped.get("variables of unsized dtype or unknown shape", 0) + 1)
                else:
                    variables.append(row)
            elif node.op in SEND_OPS or node.op in RECV_OPS:
                tensor = node.attr["tensor_name"].s.decode("utf-8", "replace")
                ends = (node.attr["send_device"].s.decode("utf-8", "replace"),
                        node.attr["recv_device"].s.decode("utf-8", "replace"), node.name)
                (sends if node.op in SEND_OPS else recvs)[tensor] = ends
    rendezvous = []
    for tensor, (send_dev, recv_dev, send_node) in sends.items():
        if tensor not in recvs or send_dev == recv_dev:
            continue
        rendezvous.append({"tensor_name": tensor, "send_device": send_dev, "recv_device": recv_dev,
                           "send_node": send_node, "recv_node": recvs[tensor][2],
                           "direction": direction_of(send_dev, recv_dev)})
    return nodes, edges, rendezvous, variables


def _edges(node: Any) -> Iterable[dict[str, Any]]:
    for inp in node.input:
        src, slot = split_input(inp)
        yield {"device": node.device, "src_node": src, "src_output": slot, "dst_node": node.name,
               "kind": "control" if slot < 0 else "data"}


def _variable_row(node: Any) -> dict[str, Any] | None:
    code = node.attr["dtype"].type
    dtype = _DTYPE_NAMES.get(pb.DataType.Name(code)) if code in pb.DataType.values() else None
    shape = node.attr["shape"].shape
    dims = [int(d.size) for d in shape.dim]
    if dtype is None or shape.unknown_rank or any(d < 0 for d in dims):
        return None
    n_elements = 1
    for d in dims:
        n_elements *= d
    return {"name": node.name, "device": node.device, "dtype": dtype,
            "shape": "x".join(str(d) for d in dims) if dims else "scalar",
            "n_elements": n_elements, "size_bytes": n_elements * DTYPE_BYTES[dtype]}

