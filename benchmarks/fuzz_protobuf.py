"""The ``protobuf`` mutation family of ``fuzz_parsers.py``: structure-aware edits of the binary RunMetadata.

On the wire (``mutate_wire``): huge varints and lengths written into fields (with the enclosing lengths fixed, or
not), truncations and deletions at field boundaries, fields spliced in from other traces, wire types changed.
Through the protobuf API (``mutate_api``): values TensorFlow would never write, in a valid message (times, sizes,
labels, graph inputs, variable shapes, many records).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

from fuzz_corpus import Corpus, Edit, Rng, pick, pick_seed

# ----------------------------------------------------------------------------------- protobuf, by structure


def varint(n: int) -> bytes:
    """Protobuf varint of ``n`` (negative numbers as their 64-bit two's complement, 10 bytes)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


@dataclasses.dataclass(frozen=True)
class WireField:
    """One field in wire format: [start, end) in the buffer; for a length-delimited field, where its length
    varint is and where the payload starts."""

    start: int
    end: int
    number: int
    kind: int
    length_at: int = -1
    length_size: int = 0
    payload: int = -1


def _read_varint(data: bytes, pos: int, end: int) -> tuple[int, int] | None:
    value = shift = 0
    while pos < end and shift < 70:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
    return None


def wire_fields(data: bytes, start: int, end: int) -> list[WireField]:
    """The fields of the message in ``data[start:end]``, up to the first that does not parse."""
    fields = []
    pos = start
    while pos < end:
        key = _read_varint(data, pos, end)
        if key is None:
            break
        number, kind, after = key[0] >> 3, key[0] & 7, key[1]
        if kind == 0:
            value = _read_varint(data, after, end)
            if value is None:
                break
            fields.append(WireField(pos, value[1], number, kind))
        elif kind in (1, 5):
            if after + (8 if kind == 1 else 4) > end:
                break
            fields.append(WireField(pos, after + (8 if kind == 1 else 4), number, kind))
        elif kind == 2:
            length = _read_varint(data, after, end)
            if length is None or length[1] + length[0] > end:
                break
            fields.append(WireField(pos, length[1] + length[0], number, kind, after, length[1] - after, length[1]))
        else:
            break
        pos = fields[-1].end
    return fields


def descend(data: bytes, rng: Rng) -> tuple[list[WireField], WireField] | None:
    """A random field of the RunMetadata in ``data`` and the message fields enclosing it (outermost first),
    walking down through submessages of the schema."""
    from parsers.proto import tf_trace_pb2 as pb

    descriptor: Any = pb.RunMetadata.DESCRIPTOR
    path: list[WireField] = []
    start, end = 0, len(data)
    while True:
        fields = wire_fields(data, start, end)
        if not fields:
            return (path[:-1], path[-1]) if path else None
        field = pick(rng, fields)
        sub = descriptor.fields_by_number.get(field.number) if descriptor is not None else None
        is_message = sub is not None and sub.message_type is not None and field.kind == 2
        if not is_message or rng.random() < 0.3:
            return path, field
        path.append(field)
        descriptor, start, end = sub.message_type, field.payload, field.end


def replace(data: bytes, path: Sequence[WireField], start: int, end: int, new: bytes, *, fix: bool) -> bytes:
    """``data`` with ``[start, end)`` replaced by ``new``; with ``fix``, the lengths of the enclosing fields in
    ``path`` are rewritten to match, innermost first."""
    out = data[:start] + new + data[end:]
    delta = len(new) - (end - start)
    if not fix:
        return out
    for field in reversed(path):
        length = field.end - field.payload + delta
        encoded = varint(length)
        out = out[: field.length_at] + encoded + out[field.length_at + field.length_size :]
        delta += len(encoded) - field.length_size
    return out


BIG_VARINTS = (2**31, 2**32, 2**44 + 1, 2**52 + 1, 2**62, 2**63 - 1, 2**63, 2**64 - 1, -1)
BIG_LENGTHS = (2**31 - 1, 2**32, 2**40, 2**62, 2**64 - 1)


@dataclasses.dataclass(frozen=True)
class WireSpot:
    """Where a wire edit happens: the buffer, the field, the message fields enclosing it, and whether the
    enclosing lengths are to be fixed after the edit."""

    data: bytes
    path: Sequence[WireField]
    field: WireField
    fix: bool

    def replace(self, start: int, end: int, new: bytes, *, fix: bool | None = None) -> bytes:
        return replace(self.data, self.path, start, end, new, fix=self.fix if fix is None else fix)


def wire_varint(spot: WireSpot, rng: Rng, corpus: Corpus) -> Edit:
    """A huge varint as the field's value (a varint field) or as its length (a length-delimited one)."""
    f = spot.field
    if f.kind == 2:
        length = pick(rng, (*BIG_LENGTHS, f.end - f.payload + 1, max(0, f.end - f.payload - 1), 0))
        return (spot.replace(f.length_at, f.length_at + f.length_size, varint(length)),
                f"wire length {length} field {f.number}")
    key = _read_varint(spot.data, f.start, f.end)
    if f.kind != 0 or key is None:
        return wire_retag(spot, rng, corpus)
    value = pick(rng, BIG_VARINTS)
    return spot.replace(key[1], f.end, varint(value)), f"wire varint {value} field {f.number}"


def wire_truncate(spot: WireSpot, rng: Rng, _corpus: Corpus) -> Edit:
    """Cut the data at the field's start, end or middle; with fixing, cut only the enclosing message."""
    f = spot.field
    cut = pick(rng, (f.start, f.end, (f.start + f.end) // 2))
    if spot.path and spot.fix:
        return spot.replace(cut, spot.path[-1].end, b""), f"wire truncate message at {cut}"
    return spot.data[:cut], f"wire truncate at {cut}"


def wire_splice(spot: WireSpot, rng: Rng, corpus: Corpus) -> Edit:
    """Insert a random field of another trace before the field."""
    donor = corpus.read(pick(rng, corpus.names("pb_")))
    other = descend(donor, rng)
    piece = donor[other[1].start : other[1].end] if other else donor[:64]
    return spot.replace(spot.field.start, spot.field.start, piece), f"wire splice {len(piece)} bytes"


def wire_duplicate(spot: WireSpot, _rng: Rng, _corpus: Corpus) -> Edit:
    f = spot.field
    return spot.replace(f.start, f.start, spot.data[f.start : f.end]), f"wire duplicate field {f.number}"


def wire_delete(spot: WireSpot, _rng: Rng, _corpus: Corpus) -> Edit:
    f = spot.field
    return spot.replace(f.start, f.end, b""), f"wire delete field {f.number}"


def wire_retag(spot: WireSpot, rng: Rng, _corpus: Corpus) -> Edit:
    """Give the field another wire type (its bytes then read as something else)."""
    f, kind = spot.field, int(rng.integers(0, 8))
    retagged = bytes([(spot.data[f.start] & ~7) | kind])
    return spot.replace(f.start, f.start + 1, retagged, fix=False), f"wire retag field {f.number} as type {kind}"


WIRE_EDITS = (wire_varint, wire_varint, wire_truncate, wire_splice, wire_duplicate, wire_delete, wire_retag)


def mutate_wire(data: bytes, rng: Rng, corpus: Corpus) -> Edit:
    """One structure-aware edit of the wire bytes of a RunMetadata."""
    found = descend(data, rng)
    if found is None:
        return data[: len(data) // 2], "wire truncate-half"
    spot = WireSpot(data, found[0], found[1], fix=bool(rng.random() < 0.7))
    edit: Callable[[WireSpot, Rng, Corpus], Edit] = pick(rng, WIRE_EDITS)
    return edit(spot, rng, corpus)


# The reader's own bounds (2**44 bytes, 2**52 ns, 2**62 ns; in us fields /1000) and either side of them, int64's.
INT64_EXTREMES = (-(2**63), -1, 0, 1, 2**31, 2**44, 2**44 + 1, 2**52 // 1000, 2**52 + 1, 2**53,
                  2**62 // 1000 - 1, 2**62 - 1, 2**62, 2**63 - 1, 9_223_372_036_854_775, 9_223_372_036_854_776)
TIME_FIELDS = ("all_start_micros", "all_end_rel_micros", "op_end_rel_micros", "all_start_nanos",
               "all_end_rel_nanos")
BAD_INPUTS = ("a:\u00b2", "a:\u0663", "^", "", ":1", "a:99999999999", "^a:1", "a::1", "a:-1", "a:1:2")
ODD_NAMES = ("", "RecvTensor", "\u00e9", "\u2028", "x" * 100_000, "a\nb")
BAD_SIZES = ("9" * 12, "9" * 20, "9" * 29, "\u00b2", "\u0663", "-5", "0", "")
BAD_LABELS = ("", "[1KB] garbled", "x" * 1_000_000, "[0B] [0b/s] a from b to c")
BAD_DEVICES = ("", "job:worker/task:0", "/job:ps/replica:0/task:0/device:CPU:0", "/" + "x" * 5000)
BAD_DIMS = ([2**62, 2**62], [-1], [2] * 1000, [2**31] * 3, [0, 2**63 - 1], [])


def _random_node(md: Any, rng: Rng) -> Any:
    devs = [d for d in md.step_stats.dev_stats if len(d.node_stats)]
    dev = pick(rng, devs)
    return dev.node_stats[int(rng.integers(len(dev.node_stats)))]


def _random_graph_node(md: Any, rng: Rng) -> Any:
    graphs = [g for g in md.partition_graphs if len(g.node)]
    graph = pick(rng, graphs) if graphs else md.partition_graphs.add()
    return graph.node[int(rng.integers(len(graph.node)))] if len(graph.node) else graph.node.add(name="added")


def api_time(md: Any, rng: Rng) -> str:
    field, value = pick(rng, TIME_FIELDS), pick(rng, INT64_EXTREMES)
    setattr(_random_node(md, rng), field, value)
    return f"{field}={value}"


def api_thread(md: Any, rng: Rng) -> str:
    _random_node(md, rng).thread_id = value = pick(rng, (0, 2**31, 2**32 - 1))
    return f"thread_id={value}"


def api_bytes(md: Any, rng: Rng) -> str:
    node = _random_node(md, rng)
    out = node.output[0] if len(node.output) else node.output.add()
    out.tensor_description.allocation_description.requested_bytes = value = pick(rng, INT64_EXTREMES)
    return f"requested_bytes={value}"


def api_label(md: Any, rng: Rng) -> str:
    node = _random_node(md, rng)
    if rng.random() < 0.7:
        size = pick(rng, BAD_SIZES)
        node.timeline_label = re.sub(r"^\[[^\]]*\]", f"[{size}B]", node.timeline_label)
        return f"timeline_label size {size!r}"
    node.timeline_label = pick(rng, BAD_LABELS)
    return "timeline_label replaced"


def api_name(md: Any, rng: Rng) -> str:
    _random_node(md, rng).node_name = pick(rng, ODD_NAMES)
    return "node_name"


def api_device(md: Any, rng: Rng) -> str:
    dev = pick(rng, md.step_stats.dev_stats)
    dev.device = pick(rng, BAD_DEVICES)
    return f"device={dev.device[:40]!r}"


def api_input(md: Any, rng: Rng) -> str:
    _random_graph_node(md, rng).input.append(value := pick(rng, BAD_INPUTS))
    return f"input {value!r}"


def api_shape(md: Any, rng: Rng) -> str:
    node = _random_graph_node(md, rng)
    node.op = "VarHandleOp"
    node.attr["dtype"].type = int(pick(rng, (1, 2, 7, 20, 23, 133, 99)))
    dims = pick(rng, BAD_DIMS)
    shape = node.attr["shape"].shape
    del shape.dim[:]
    for d in dims:
        shape.dim.add().size = d
    shape.unknown_rank = bool(rng.random() < 0.1)
    return f"variable shape {dims[:4]}"


def api_tensor_attr(md: Any, rng: Rng) -> str:
    node = _random_graph_node(md, rng)
    node.op = pick(rng, ("_Send", "_Recv"))
    node.attr["tensor_name"].s = pick(rng, (b"\xff\xfe", b"", b"x" * 10000))
    return "tensor_name attr"


def api_no_graphs(md: Any, _rng: Rng) -> str:
    del md.partition_graphs[:]
    return "no partition graphs"


def api_many_records(md: Any, rng: Rng, *, quick: bool = False) -> str:
    """Many more node_stats: empty ones parse blindly; copies of a real one (25 MB) are walked first, which
    takes seconds, so they are rarer (and left out when ``quick``)."""
    from parsers.proto import tf_trace_pb2 as pb

    dev = pick(rng, md.step_stats.dev_stats)
    count = int(pick(rng, (1000, 250_000)))
    real = len(dev.node_stats) > 0 and rng.random() < 0.2 and not quick
    dev.node_stats.extend([dev.node_stats[0] if real else pb.NodeExecStats()] * count)
    return f"{count} more {'copied' if real else 'empty'} node_stats"


def api_no_worker(md: Any, _rng: Rng) -> str:
    for dev in md.step_stats.dev_stats:
        dev.device = dev.device.replace("/job:worker", "/job:chief")
    return "no worker device"


API_EDITS = (api_time, api_thread, api_bytes, api_label, api_name, api_device, api_input, api_shape,
             api_tensor_attr, api_no_graphs, api_many_records, api_no_worker)


def mutate_api(data: bytes, rng: Rng, *, quick: bool = False) -> Edit:
    """One semantic edit through the protobuf API: a value TensorFlow would never write, in a valid message."""
    from parsers.proto import tf_trace_pb2 as pb

    md = pb.RunMetadata()
    md.ParseFromString(data)
    edit = pick(rng, API_EDITS)
    what = api_many_records(md, rng, quick=quick) if edit is api_many_records else edit(md, rng)
    return md.SerializeToString(deterministic=True), f"api {what}"  # maps in one order, whatever the process


def mutate_protobuf(rng: Rng, corpus: Corpus) -> tuple[str, bytes, str]:
    seed = pick_seed(rng, corpus, corpus.names("pb_"))
    data = corpus.read(seed)
    if rng.random() < 0.4:
        data, what = mutate_api(data, rng, quick=corpus.quick)
    else:
        data, what = mutate_wire(data, rng, corpus)
        if rng.random() < 0.3:
            data, more = mutate_wire(data, rng, corpus)
            what += "; " + more
    return ".pb", data, f"{seed}: {what}"
