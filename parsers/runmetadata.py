"""Read TensorFlow RunMetadata and StepStats protobufs, binary or text format, into a :class:`Trace`.

The schema is our own ``proto/tf_trace.proto`` (TensorFlow's field numbers, only the fields we read), so
TensorFlow need not be installed. One RunMetadata is one traced step; several are merged by ``read_steps``.
"""

from __future__ import annotations

import codecs
import contextlib
import dataclasses
import itertools
import pathlib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from google.protobuf import message, text_format

from parsers.errors import TraceContentError, TraceFormatError, counted, one_line, quoted
from parsers.files import not_utf8_at
from parsers.labels import parse_op_type, parse_recv_label, split_input
from parsers.limits import MAX_RECORDS, SCAN_BYTES, check_text_shape, check_wire_shape, check_wire_text
from parsers.proto import tf_trace_pb2 as pb
from parsers.trace import (
    DTYPE_BYTES,
    MAX_DUR_NS,
    MAX_SIZE_BYTES,
    MAX_TIME_NS,
    Locate,
    Trace,
    direction_of,
    make_table,
    read_once,
    trace_from,
)

RECV_TENSOR = "RecvTensor"
UNGRAPHED = ("", RECV_TENSOR, "_SOURCE")  # records that name no partition-graph node
PLAIN_DEVICE = re.compile(r"/job:[^/]+/replica:\d+/task:\d+/device:[^/:]+:\d+")  # not a stream of one
VARIABLE_OPS = frozenset({"VarHandleOp", "VariableV2", "Variable"})
SEND_OPS = frozenset({"_Send", "_HostSend"})
RECV_OPS = frozenset({"_Recv", "_HostRecv"})
_DTYPE_NAMES = {
    "DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_INT32": "int32", "DT_UINT8": "uint8", "DT_INT16": "int16",
    "DT_INT8": "int8", "DT_COMPLEX64": "complex64", "DT_INT64": "int64", "DT_BOOL": "bool",
    "DT_BFLOAT16": "bfloat16", "DT_UINT16": "uint16", "DT_COMPLEX128": "complex128", "DT_HALF": "float16",
    "DT_UINT32": "uint32", "DT_UINT64": "uint64",
}
TEXT_FORMAT_STARTS = ("step_stats", "dev_stats", "partition_graphs", "cost_graph", "function_graphs", "#")
_TEXT_HEAD_BYTES = 4096  # how much of a file is looked at to tell prose from a step


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class StepFile:
    """One traced step read from one file: its protobuf and where it came from."""

    source: str
    metadata: Any  # pb.RunMetadata


def is_text_format(data: bytes) -> bool:
    """Whether ``data`` looks like a text-format RunMetadata/StepStats (not binary)."""
    head = data[:256].lstrip()
    return any(head.startswith(s.encode()) for s in TEXT_FORMAT_STARTS)


def not_a_step(data: bytes) -> str | None:
    """Why ``data`` is plainly no traced step, in words for a message: it is text (printable UTF-8, where a binary
    protobuf has control bytes within its first few) whose first line that is not a ``#`` comment starts no field of
    a text-format RunMetadata or StepStats (``notes.txt``, a README), or that holds comments only. None otherwise:
    binary, or text that starts as a step does, which the parser judges, naming the line and column of a fault (a
    truncated step is refused as truncated, not as prose)."""
    head = codecs.getincrementaldecoder("utf-8")()
    try:
        text = head.decode(data[:_TEXT_HEAD_BYTES].removeprefix(b"\xef\xbb\xbf"), final=len(data) <= _TEXT_HEAD_BYTES)
    except UnicodeDecodeError:
        return None
    if not all(c.isprintable() or c in "\t\n\r" for c in text):
        return None
    first = _first_line(text)
    if first is None:
        return "it holds comments only"
    if first.startswith(TEXT_FORMAT_STARTS[:-1]):
        return None
    return f"its first line {quoted(first, 40)} starts no field of one (step_stats, dev_stats, ...)"


def move_away_hint(source: str) -> str:
    """The end of a refusal of ``source`` read among a directory's or a pattern's steps: every file named as it is
    there is read as a step."""
    return f"; move it away: among steps, every *{pathlib.PurePath(source).suffix} file is read as one"


def parse_step(data: bytes, source: str, *, check_shape: bool = False, among_steps: bool = False) -> StepFile:
    """Parse one RunMetadata or bare StepStats (binary or text) from ``data`` read from ``source``; text that is
    plainly no step (:func:`not_a_step`) is refused as such, and, read ``among_steps`` of a directory or pattern,
    with the hint to move it away.

    Binary input larger than ``SCAN_BYTES`` (or any, with ``check_shape``) is walked first, so that its size
    in memory is known bounded before the parser builds it (see :mod:`parsers.limits`)."""
    if (why := not_a_step(data)) is not None:
        hint = move_away_hint(source) if among_steps else ""
        raise TraceFormatError(f"{source}: not a text-format RunMetadata or StepStats step: {why}{hint}")
    if is_text_format(data):
        return StepFile(source=source, metadata=_parse_text(data, source))
    check_shape = check_shape or len(data) > SCAN_BYTES
    try:
        md = _parse_binary(pb.RunMetadata, data, source, check_shape=check_shape)
        why = "it holds no step_stats with named devices"
    except TraceFormatError as exc:
        md, why = pb.RunMetadata(), str(exc).removeprefix(one_line(f"{source}: "))  # as the message escaped it
    if not _has_devices(md.step_stats):  # a bare StepStats misparses as RunMetadata: try it too
        md = pb.RunMetadata()
        with contextlib.suppress(TraceFormatError):
            md.step_stats.CopyFrom(_parse_binary(pb.StepStats, data, source, check_shape=check_shape))
    if not _has_devices(md.step_stats):
        raise TraceFormatError(f"{source}: not a RunMetadata or StepStats protobuf: {why}")
    return StepFile(source=source, metadata=md)


def _parse_binary(kind: Any, data: bytes, source: str, *, check_shape: bool) -> Any:
    """``data`` parsed as message class ``kind``; TraceFormatError with the byte where the wire format breaks
    (found by walking it, when the parser does not say) or the parser's complaint."""
    if check_shape:
        check_wire_shape(data, kind.DESCRIPTOR, source)
    msg = kind()
    try:
        msg.ParseFromString(data)
    except message.DecodeError as exc:
        if not check_shape and len(data) <= SCAN_BYTES:
            check_wire_shape(data, kind.DESCRIPTOR, source)  # raises at the broken byte, if it finds one
        if "UTF-8" in str(exc):
            check_wire_text(data, kind.DESCRIPTOR, source)  # the same, for a string that is not text
        complaint = str(exc).split("': ", 1)[-1]  # upb: "Error parsing message with type 'X': what"
        raise TraceFormatError(f"{source}: {complaint[:1].lower()}{complaint[1:]}") from None
    return msg


def _has_devices(stats: Any) -> bool:
    return len(stats.dev_stats) > 0 and all(d.device.startswith("/") for d in stats.dev_stats)


# a line's characters: any run of them between the line boundaries str.splitlines knows
_LINE = re.compile("[^\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]+")


def _first_line(text: str) -> str | None:
    """The first line that is neither blank nor a ``#`` comment, stripped; None when there is none. Found lazily:
    ``splitlines`` made a list of every line of the text, twice per file, to read its first."""
    return next((line for m in _LINE.finditer(text) if (line := m.group().strip()) and not line.startswith("#")),
                None)


def _parse_text(data: bytes, source: str) -> Any:
    check_text_shape(data, source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # the line too: a text step is thousands of lines
        line, at = not_utf8_at(data, exc)
        raise TraceFormatError(f"{source}: line {line}, byte {at}: text-format protobuf is not UTF-8") from None
    starts_with_stats = (_first_line(text) or "").startswith("dev_stats")  # a bare StepStats, maybe under comment lines
    msg = pb.StepStats() if starts_with_stats else pb.RunMetadata()
    try:
        text_format.Parse(text, msg, allow_unknown_field=True)
    except text_format.ParseError as exc:
        detail = str(exc).split(" : ", 1)[-1]
        raise TraceFormatError(f"{source}:{exc.GetLine()}:{exc.GetColumn()}: invalid text-format protobuf: "
                               f"{detail}") from None
    except RecursionError:  # behind check_text_shape, for nesting hidden by brackets inside strings
        raise TraceFormatError(f"{source}: text-format messages nested too deeply to be read") from None
    stats = msg if starts_with_stats else msg.step_stats
    if not _usable(stats):  # a field TensorFlow has not (a typo: 'devic:') is skipped: name it, not what it left out
        _refuse_unknown_field(text, msg, source)
    if starts_with_stats:
        md = pb.RunMetadata()
        md.step_stats.CopyFrom(msg)
        return md
    return msg


def _usable(stats: Any) -> bool:
    """Whether a text-format step read with its unknown fields skipped has what :func:`read_steps` needs first:
    devices, each named, and records on them."""
    return all(d.device for d in stats.dev_stats) and any(len(d.node_stats) for d in stats.dev_stats)


def _refuse_unknown_field(text: str, msg: Any, source: str) -> None:
    """TraceFormatError at the first field of ``text`` that ``msg``'s type does not have, if it has one. Unknown
    fields are skipped, not refused, so that a step written by a newer TensorFlow reads; once the step read so
    lacks what a step needs, the field skipped is the likelier fault (a misspelt name), and the message names it
    and its line and column rather than the device or records it left out."""
    try:
        text_format.Parse(text, type(msg)())
    except text_format.ParseError as exc:
        detail = str(exc).split(" : ", 1)[-1]
        raise TraceFormatError(f"{source}:{exc.GetLine()}:{exc.GetColumn()}: invalid text-format protobuf: "
                               f"{detail}") from None


def _times_ns(node: Any, where: str) -> tuple[int, int]:
    """Start and duration in ns (TF's nanosecond fields when set, else its microsecond fields), checked to be
    a start after 0 and a duration that ends before 2**62 ns."""
    if node.all_start_nanos > 0:
        start, dur, unit, scale = int(node.all_start_nanos), int(node.all_end_rel_nanos), "ns", 1
    else:
        start, dur, unit, scale = int(node.all_start_micros), int(node.all_end_rel_micros), "µs", 1000
    start_ns, dur_ns = start * scale, dur * scale
    if not (0 < start_ns < MAX_TIME_NS and 0 <= dur_ns <= MAX_DUR_NS and start_ns + dur_ns < MAX_TIME_NS):
        raise TraceContentError(f"{where}: bad times (start {start} {unit}, duration {dur} {unit}): a start after 0 "
                                f"and a duration of at most 2**52 ns ending before 2**62 ns expected")
    return start_ns, dur_ns


def read_steps(steps: Sequence[StepFile], source: str, source_format: str) -> Trace:
    """Merge traced steps (one RunMetadata each, in order) into one Trace."""
    _check_counts(steps, source)
    ops: list[dict[str, Any]] = []
    transfers: list[dict[str, Any]] = []
    step_rows: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    for index, step in enumerate(steps):
        first, last = _read_records(step, index, ops, transfers, skipped)
        if first is None or last is None:
            raise TraceContentError(f"{step.source}: step_stats holds no records")
        step_rows.append({"step": index, "source": step.source, "start_ns": first, "end_ns": last})
    _check_one_graph(steps, [_check_graphs(step) for step in steps])
    _check_steps_follow(step_rows)
    graphs = [(f"{s.source}: {label}", g) for s in steps for label, g in _partition_graphs(s.metadata)]
    nodes, edges, rendezvous, variables = _read_graphs(graphs, skipped)
    ops, transfers = read_once(ops, skipped), read_once(transfers, skipped)
    trace = trace_from(
        source, _locator(steps), source=source, source_format=source_format,
        ops=make_table("ops", ops, where=source), transfers=make_table("transfers", transfers, where=source),
        graph_nodes=make_table("graph_nodes", nodes, where=source),
        graph_edges=make_table("graph_edges", edges, where=source),
        rendezvous=make_table("rendezvous", rendezvous, where=source),
        variables=make_table("variables", variables, where=source),
        steps=make_table("steps", step_rows, where=source),
        lost=() if graphs else ("partition graphs (dependencies, variable shapes): not in the input",),
        skipped=skipped,
    )
    check_has_worker(trace)
    return trace


def _locator(steps: Sequence[StepFile]) -> Locate:
    """Where an op or transfer row was read from: ``step_000.pb: dev_stats[1].node_stats[4]``."""
    def locate(table: str, record: Mapping[str, Any]) -> str | None:
        step = steps[int(record["step"])]
        device, name = (record["device"], record["node_name"]) if table == "ops" else (record["dst_device"],
                                                                                       RECV_TENSOR)
        for d, dev in enumerate(step.metadata.step_stats.dev_stats):
            for n, node in enumerate(dev.node_stats if dev.device == device else ()):
                if node.node_name == name and _times_ns(node, "") == (record["start_ns"], record["dur_ns"]):
                    return f"{step.source}: dev_stats[{d}].node_stats[{n}]"
        return None
    return locate


def _check_graphs(step: StepFile) -> frozenset[tuple[str, str]]:
    """The (device, name) of every node of the step's partition graphs, once the step is checked: refused if its
    graphs repeat one another (RunMetadata files joined by ``cat`` parse as one message: two steps' records would
    be read as one step of twice the ops) or leave out a device or an op its records show (graphs cut short: that
    op's dependencies would be lost). Records on a device's stream (a GPU's ``.../stream:all``) name kernels, not
    graph nodes, and a step without graphs has nothing to check."""
    seen: dict[frozenset[tuple[str, str]], str] = {}
    for label, graph in _partition_graphs(step.metadata):
        key = frozenset((node.device, node.name) for node in graph.node)
        if key and key in seen:
            raise TraceContentError(f"{step.source}: {label} repeats {seen[key]} ({len(key)} nodes): two "
                                    "RunMetadata joined into one file? keep one traced step per file")
        seen.setdefault(key, label)
    nodes: frozenset[tuple[str, str]] = frozenset().union(*seen)
    if not nodes:
        return nodes
    devices = {device for device, _ in nodes}
    for d, dev in enumerate(step.metadata.step_stats.dev_stats):
        if dev.device not in devices:
            if PLAIN_DEVICE.fullmatch(dev.device) and dev.node_stats:
                raise TraceContentError(f"{step.source}: dev_stats[{d}] ({quoted(dev.device)}) has records but no "
                                        "partition graph: the graphs are cut short; trace the step again")
            continue
        for n, node in enumerate(dev.node_stats):
            if node.node_name not in UNGRAPHED and (dev.device, node.node_name) not in nodes:
                raise TraceContentError(f"{step.source}: dev_stats[{d}].node_stats[{n}] "
                                        f"({quoted(node.node_name)}) is in no partition graph: the graphs are cut "
                                        "short or the records are another step's; trace the step again")
    return nodes


def _check_one_graph(steps: Sequence[StepFile], node_sets: Sequence[frozenset[tuple[str, str]]]) -> None:
    """Refuse steps whose partition graphs (``node_sets``, per step: :func:`_check_graphs`) differ: steps of two
    jobs (two models' step files in one directory) would merge into a graph neither ran. Steps without graphs are
    not compared."""
    first: tuple[str, frozenset[tuple[str, str]]] | None = None
    for step, keys in zip(steps, node_sets, strict=True):
        if not keys:
            continue
        if first is None:
            first = (step.source, keys)
        elif keys != first[1]:
            other = sorted(keys ^ first[1])
            raise TraceContentError(f"{step.source}: its partition graphs differ from {first[0]}'s "
                                    f"({counted(len(other), 'node')} in one only, e.g. {quoted(other[0][1])}): the "
                                    "steps of one job, one session.run, belong in one trace")


def _check_steps_follow(step_rows: Sequence[dict[str, Any]]) -> None:
    """Refuse a step that starts before another has ended: one worker's steps follow each other, so it is the same
    step read twice (``gunzip -k`` leaves step_001.pb beside step_001.pb.gz) or another process's."""
    by_start = sorted(step_rows, key=lambda r: (r["start_ns"], r["end_ns"], r["step"]))
    for before, after in itertools.pairwise(by_start):
        if (after["start_ns"], after["end_ns"]) == (before["start_ns"], before["end_ns"]):
            raise TraceContentError(f"{after['source']}: records the same step as {before['source']} (its records "
                                    "start at the same moment and end at the same moment); read each step once")
        if after["start_ns"] < before["end_ns"]:
            raise TraceContentError(f"{after['source']}: its step starts {before['end_ns'] - after['start_ns']} ns "
                                    f"before the step of {before['source']} ends; one worker's steps follow each "
                                    "other: read one worker's steps, each once")


def _check_counts(steps: Sequence[StepFile], source: str) -> None:
    """Refuse more than ``MAX_RECORDS`` devices, node_stats, graphs or graph nodes before any row is built."""
    devices = sum(len(s.metadata.step_stats.dev_stats) for s in steps)
    graphs = sum(len(s.metadata.partition_graphs) + len(s.metadata.function_graphs) for s in steps)
    if devices > MAX_RECORDS or graphs > MAX_RECORDS:
        raise TraceContentError(f"{source}: {devices} dev_stats and {graphs} graphs, more than the limit of "
                                f"{MAX_RECORDS}")
    records = sum(len(d.node_stats) for s in steps for d in s.metadata.step_stats.dev_stats)
    nodes = sum(len(g.node) for s in steps for _, g in _partition_graphs(s.metadata))
    for count, what in ((records, "node_stats records"), (nodes, "partition graph nodes")):
        if count > MAX_RECORDS:
            raise TraceContentError(f"{source}: {count} {what}, more than the limit of {MAX_RECORDS}")


def check_has_worker(trace: Trace) -> None:
    """Raise TraceContentError unless some record ran on a worker device."""
    if not any("/job:worker" in d for d in trace.devices):
        raise TraceContentError(f"{trace.source}: no device of job 'worker' in the trace (devices: "
                                f"{quoted(', '.join(trace.devices) or 'none', 120)})")


def _read_records(step: StepFile, index: int, ops: list[dict[str, Any]], transfers: list[dict[str, Any]],
                  skipped: dict[str, int]) -> tuple[int | None, int | None]:
    first: int | None = None
    last: int | None = None
    for d, dev in enumerate(step.metadata.step_stats.dev_stats):
        if not dev.device:
            raise TraceContentError(f"{step.source}: dev_stats[{d}] has no device name")
        for n, node in enumerate(dev.node_stats):
            where = f"{step.source}: dev_stats[{d}].node_stats[{n}] ({quoted(node.node_name or 'unnamed')})"
            start_ns, dur_ns = _times_ns(node, where)
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
                                f"(got {quoted(node.timeline_label)})")
    if label.dst_device != device:
        raise TraceContentError(f"{where}: RecvTensor to {quoted(label.dst_device)} recorded on device "
                                f"{quoted(device)}")
    requested = [o.tensor_description.allocation_description.requested_bytes for o in node.output]
    size = requested[0] if requested and requested[0] > 0 else label.size_bytes
    if size is not None and size > MAX_SIZE_BYTES:
        raise TraceContentError(f"{where}: RecvTensor of {size} bytes, more than 2**44 (16 TiB)")
    return {"step": index, "tensor_name": label.tensor_name, "src_device": label.src_device,
            "dst_device": label.dst_device, "direction": direction_of(label.src_device, label.dst_device),
            "size_bytes": size, "start_ns": start_ns, "dur_ns": dur_ns}


def _partition_graphs(md: Any) -> Iterable[tuple[str, Any]]:
    """Every partition graph of ``md`` with its field path."""
    for g, graph in enumerate(md.partition_graphs):
        yield f"partition_graphs[{g}]", graph
    for f, fg in enumerate(md.function_graphs):
        for g, graph in enumerate(fg.partition_graphs):
            yield f"function_graphs[{f}].partition_graphs[{g}]", graph


def _read_graphs(graphs: Sequence[tuple[str, Any]], skipped: dict[str, int]) -> tuple[list[dict[str, Any]], ...]:
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    variables: list[dict[str, Any]] = []
    sends: dict[str, tuple[str, str, str]] = {}
    recvs: dict[str, tuple[str, str, str]] = {}
    seen: set[tuple[str, str]] = set()
    for label, graph in graphs:
        for n, node in enumerate(graph.node):
            key = (node.device, node.name)
            if key in seen:  # the same partition graph comes with every traced step
                continue
            seen.add(key)
            where = f"{label}.node[{n}] ({quoted(node.name)})"
            nodes.append({"device": node.device, "node_name": node.name, "op_type": node.op})
            edges.extend(_edges(node, where))
            if len(edges) > MAX_RECORDS:
                raise TraceContentError(f"{where}: more than {MAX_RECORDS} graph edges")
            if node.op in VARIABLE_OPS:
                row = _variable_row(node, where)
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


def _edges(node: Any, where: str) -> Iterable[dict[str, Any]]:
    for i, inp in enumerate(node.input):
        parsed = split_input(inp)
        if parsed is None:
            raise TraceContentError(f"{where}: input[{i}] {quoted(inp)} is not NAME, NAME:SLOT or ^NAME")
        src, slot = parsed
        yield {"device": node.device, "src_node": src, "src_output": slot, "dst_node": node.name,
               "kind": "control" if slot < 0 else "data"}


def _variable_row(node: Any, where: str) -> dict[str, Any] | None:
    code = node.attr["dtype"].type
    dtype = _DTYPE_NAMES.get(pb.DataType.Name(code)) if code in pb.DataType.values() else None
    shape = node.attr["shape"].shape
    dims = [int(d.size) for d in shape.dim]
    if dtype is None or shape.unknown_rank or any(d < 0 for d in dims):
        return None
    n_elements = 1
    for d in dims:
        n_elements *= d
        if n_elements * DTYPE_BYTES[dtype] > MAX_SIZE_BYTES:
            raise TraceContentError(f"{where}: variable of shape {quoted(dims, 120)} ({dtype}) holds more than "
                                    "2**44 bytes (16 TiB)")
    return {"name": node.name, "device": node.device, "dtype": dtype,
            "shape": "x".join(str(d) for d in dims) if dims else "scalar",
            "n_elements": n_elements, "size_bytes": n_elements * DTYPE_BYTES[dtype]}
