"""Fuzz the trace readers with mutated real traces, each input in a child process with time and memory limits.

Run: ``python benchmarks/fuzz_parsers.py [N]`` (default 3000 inputs); ``--help`` lists the options. On two
cores 1,000 inputs take about 30 s (``--quick`` leaves out the few that take seconds each), so 100,000 take
40-60 minutes; the table's last column is the CPU time the children spent per input, by family.

Mutation families, reported separately:

- ``protobuf`` — structure-aware edits of the binary RunMetadata: huge varints and lengths written into fields
  (with the enclosing lengths fixed, or not), truncations and deletions at field boundaries, fields spliced in
  from other traces, wire types changed, and semantic edits through the protobuf API (times, sizes, labels,
  graph inputs, variable shapes, many records);
- ``text`` — text-format protobuf: deep nesting, bad escapes in strings, huge and malformed numbers, broken
  brackets, truncation;
- ``json`` — TensorFlow's timeline and our own Chrome JSON: type swaps, huge numbers, NaN and Infinity, lone
  surrogates, deep nesting, dropped keys, very many events;
- ``gzip`` — bombs (``--bomb-bytes``, 1 GiB by default, and just under the reader's limit), several members,
  trailing garbage, truncation, corruption, gzip inside gzip, thousands of members;
- ``bitflip`` — blind bit flips, byte edits and truncations of every seed.

Each input is made and run in a child forked by a worker process (``--jobs`` of them): the child writes the
input to a file, limits its address space (``--memory``, 2 GiB) and CPU time, and calls ``parsers.read_trace``;
on a Trace it also runs ``tracegen.model.build_model``, a two-worker ``simulate`` and ``steps_per_s`` (skip
with ``--no-model``). The worker kills a child that runs a stage for longer than ``--time-limit`` seconds.
Outcomes per stage: package errors (``TraceError``; on the model stage ``TracegenError`` too), results,
tracebacks (any other exception), hangs, memory blow-ups (MemoryError), crashes (killed by a signal), and on
the read stage error messages that are not one line of at most 300 characters naming the file.

Input ``k`` is of family ``k mod 5`` and made from ``numpy.random.default_rng([--seed, k, family])``, so a run
is the same however the work is scheduled, and ``--only K`` remakes input ``K`` alone. Inputs whose outcome is
a problem are kept in ``--repro`` (``fuzz_repro`` in the temp directory). Exits non-zero when any input had a
problem in any stage. ``--self-check`` shows that the harness tells each kind of problem apart.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import gzip
import itertools
import json
import math
import os
import pathlib
import re
import resource
import selectors
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Any

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
TRACES = ROOT / "data" / "traces"
FAMILIES = ("protobuf", "text", "json", "gzip", "bitflip")
READ_OUTCOMES = ("error", "read", "traceback", "hang", "memory", "crash", "bad message")
MODEL_OUTCOMES = ("ok", "error", "traceback", "hang", "memory", "crash", "odd")
PROBLEMS = frozenset({"traceback", "hang", "memory", "crash", "bad message", "odd"})
MAX_MESSAGE_CHARS = 300
REPROS_PER_KIND = 5

Rng = np.random.Generator


def pick(rng: Rng, items: Sequence[Any]) -> Any:
    """One of ``items``, uniformly."""
    return items[int(rng.integers(len(items)))]


def pick_seed(rng: Rng, corpus: Corpus, names: Sequence[str]) -> str:
    """One of the seed files ``names``, larger ones less often (weights 1/sqrt(size)): reading and modelling
    cost grows with size, and the large resnet trace would otherwise take most of a run's time."""
    weights = np.array([corpus.size(name) ** -0.5 for name in names])
    return names[int(rng.choice(len(names), p=weights / weights.sum()))]


# ----------------------------------------------------------------------------------------------- the corpus


@dataclasses.dataclass(frozen=True)
class Corpus:
    """Seed files made once per run from the bundled real traces, and gzip bombs; ``quick`` leaves out the
    edits that take seconds to read (very many events or records), for runs that must be short."""

    root: pathlib.Path
    quick: bool = False

    def read(self, name: str) -> bytes:
        return (self.root / name).read_bytes()

    def names(self, prefix: str) -> list[str]:
        return sorted(p.name for p in self.root.iterdir() if p.name.startswith(prefix))

    def size(self, name: str) -> int:
        return (self.root / name).stat().st_size


def build_corpus(root: pathlib.Path, bomb_bytes: int, *, quick: bool = False) -> Corpus:
    """Write the seeds into ``root``: binary, text and JSON forms of each bundled model's traced steps."""
    from google.protobuf import text_format

    from parsers import read_trace
    from parsers.chrome import write_trace
    from parsers.limits import MAX_BYTES
    from parsers.proto import tf_trace_pb2 as pb

    root.mkdir(parents=True, exist_ok=True)
    for model in sorted(p.name for p in TRACES.iterdir() if (p / "step_000.pb").is_file()):
        for step in ("000", "001"):
            shutil.copyfile(TRACES / model / f"step_{step}.pb", root / f"pb_{model}_{step}.pb")
        shutil.copyfile(TRACES / model / "step_000.json", root / f"tfjson_{model}.json")
        write_trace(read_trace(TRACES / model / "step_000.pb"), root / f"ownjson_{model}.json")
        if model != "resnet":  # text format parses at ~1 MB/s: the small models keep inputs quick
            md = pb.RunMetadata()
            md.ParseFromString((TRACES / model / "step_000.pb").read_bytes())
            (root / f"text_{model}.pbtxt").write_text(text_format.MessageToString(md))
    tf2 = sorted((TRACES / "tf2_pss").rglob("*.xplane.pb"))  # TF2 profiles: XSpaces, and as the trace viewer shows them
    for i, path in enumerate(tf2):
        shutil.copyfile(path, root / f"xplane_{i}.xplane.pb")
    for i, path in enumerate(sorted((TRACES / "tf2_pss_viewer").rglob("*.trace.json.gz"))):
        (root / f"viewer_{i}.json").write_bytes(gzip.decompress(path.read_bytes()))
    heads = {"zeros": b"", "json": b'{"traceEvents": [', "text": b"step_stats {\n"}
    for size_name, mib in (("big", bomb_bytes >> 20), ("under", (MAX_BYTES >> 20) - 1)):
        for head_name, head in heads.items():
            data = bomb(head, b" " if head else b"\0", mib, valid=size_name == "under")
            (root / f"bomb_{size_name}_{head_name}.gz").write_bytes(data)
    return Corpus(root, quick=quick)


def bomb(head: bytes, fill: bytes, mib: int, *, valid: bool = True) -> bytes:
    """A gzip file of ``head`` then ``fill`` bytes, ``mib`` MiB in all, made in milliseconds: after a full
    flush deflate forgets what came before, so every further MiB of ``fill`` compresses to the same block,
    written ``mib - 1`` times; then an empty last block and the trailer (CRC-32 and size), whose CRC is left 0
    unless ``valid`` (computing it takes a second per GiB, and a reader stopping at its limit never sees it)."""
    chunk = fill * (1 << 20)
    first = head + chunk[len(head) :]
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    start = comp.compress(first) + comp.flush(zlib.Z_FULL_FLUSH)
    block = comp.compress(chunk) + comp.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(first)
    for _ in range(mib - 1 if valid else 0):
        crc = zlib.crc32(chunk, crc)
    return start + block * (mib - 1) + b"\x03\x00" + struct.pack("<II", crc, (mib << 20) & 0xFFFFFFFF)


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
Edit = tuple[bytes, str]


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
    return md.SerializeToString(), f"api {what}"


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


# ----------------------------------------------------------------------------------------------- text format

BAD_ESCAPES = (rb"\x", rb"\xZZ", rb"\u12", rb"\ud800", rb"\udc00", rb"\U00110000", rb"\777", rb"\q", b"\\",
               rb"\xed\xa0\x80", b"\xed\xa0\x80", b"\xff", b"\x00", b"\n", b"\\\n")
BAD_NUMBERS = (b"9223372036854775808", b"18446744073709551616", b"-9223372036854775809", b"1e400", b"9" * 50,
               b"0x" + b"f" * 20, b"inf", b"nan", b"-0", b"1.5", b"99999999999999999999999999999999",
               b"4611686018427387904")
NESTS = ((b"x {\n", b"}\n"), (b"dev_stats {\n", b"}\n"), (b"node_stats <\n", b">\n"), (b"step_stats {", b"}"))
_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
_NUMBER = re.compile(rb"(?<=: )-?[0-9]+")


def _random_match(pattern: re.Pattern[bytes], data: bytes, rng: Rng) -> re.Match[bytes] | None:
    start = int(rng.integers(len(data)))
    return pattern.search(data, start) or pattern.search(data)


def _line_start(data: bytes, rng: Rng) -> int:
    newline = data.find(b"\n", int(rng.integers(len(data))))
    return newline + 1 if newline >= 0 else 0


def text_nest(data: bytes, rng: Rng) -> Edit:
    at = _line_start(data, rng)
    opening, closing = pick(rng, NESTS)
    depth = int(pick(rng, (65, 200, 1000, 5000, 100_000)))
    close = closing * depth if rng.random() < 0.8 else b""
    return data[:at] + opening * depth + close + data[at:], f"nest {depth}"


def text_escape(data: bytes, rng: Rng) -> Edit:
    m = _random_match(_STRING, data, rng)
    bad = pick(rng, BAD_ESCAPES)
    pos = m.start() + 1 if m else _line_start(data, rng)
    return data[:pos] + bad + data[pos:], f"escape {bad!r}"


def text_number(data: bytes, rng: Rng) -> Edit:
    m = _random_match(_NUMBER, data, rng)
    bad = pick(rng, BAD_NUMBERS)
    if m is None:
        return data + b"all_start_micros: " + bad, f"number {bad!r}"
    return data[: m.start()] + bad + data[m.end() :], f"number {bad!r}"


def text_brace(data: bytes, rng: Rng) -> Edit:
    at = _line_start(data, rng)
    brace = pick(rng, (b"}", b"{", b">", b"<", b":", b"[", b"]"))
    return data[:at] + brace + data[at:], f"brace {brace!r}"


def text_truncate(data: bytes, rng: Rng) -> Edit:
    cut = int(rng.integers(len(data)))
    return data[:cut], f"truncate at {cut}"


def text_duplicate(data: bytes, rng: Rng) -> Edit:
    lo, hi = sorted((_line_start(data, rng), _line_start(data, rng)))
    return data[:hi] + data[lo:hi] + data[hi:], f"duplicate lines {lo}:{hi}"


TEXT_EDITS = (text_nest, text_escape, text_number, text_brace, text_truncate, text_duplicate)


def mutate_text(rng: Rng, corpus: Corpus) -> tuple[str, bytes, str]:
    seed = pick_seed(rng, corpus, corpus.names("text_"))
    edit: Callable[[bytes, Rng], Edit] = pick(rng, TEXT_EDITS)
    data, what = edit(corpus.read(seed), rng)
    return ".pbtxt", data, f"{seed}: {what}"


# ------------------------------------------------------------------------------------------------------ JSON

RAW = "@@raw@@"
JSON_VALUES: tuple[Any, ...] = ([], {}, [1], {"a": 1}, "x", "", None, True, False, 0, -1, 1.5, 2**31, 2**63,
                                2**64, 10**30, "\u2028", "\u00e9" * 3)
RAW_TOKENS = (b"NaN", b"Infinity", b"-Infinity", b"1e999999999", b"-1e999999999", b"1e-999999999", b"9" * 4000,
              b"9" * 5000, b'"\\ud800"', b'"\\udc00x"', b'"a\\ud83d"', b"-0", b"1E400", b"0.0000001",
              b"4611686018427387.904", b"4611686018427387.903")
NUMBER_TOKENS = RAW_TOKENS[:8] + RAW_TOKENS[11:]
EVENT_KEYS = ("pid", "tid", "ts", "dur", "ph", "name", "args", "cat", "id")
ARG_KEYS = ("name", "op", "input0", "input1", "step", "lane", "size_bytes", "tensor_name", "src_device",
            "dst_device", "direction", "node_name", "op_type")
TRACEGEN_KEYS = ("format_version", "source", "lost", "skipped", "tables", "cell", "columns")
SURROGATES = (rb"\ud800", rb"\udfff", rb"\ud83d", rb"\ud83d\ud83d", rb"\udc00\ud800")
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_JSON_NUMBER = re.compile(rb"(?<=[:\[,] )-?[0-9]+(?:\.[0-9]+)?|(?<=[:\[,])-?[0-9]+(?:\.[0-9]+)?")


def _swap_tracegen(doc: Any, rng: Rng, value: Any) -> str:
    """Put ``value`` in a field of the ``tracegen`` object of our own dialect; where it went."""
    extra = doc["tracegen"]
    target = pick(rng, TRACEGEN_KEYS)
    if target not in ("cell", "columns"):
        extra[target] = value
        return f"tracegen.{target}"
    name = pick(rng, sorted(extra["tables"]))
    table = extra["tables"][name]
    if target == "columns" or not table["rows"]:
        table["columns"] = value
        return f"tracegen.tables.{name}.columns"
    row = pick(rng, table["rows"])
    row[int(rng.integers(len(row)))] = value
    return f"tracegen.tables.{name} cell"


def _swap_event(doc: Any, rng: Rng, value: Any) -> str:
    """Put ``value`` under a key of a random event (or of its args); where it went."""
    events = doc["traceEvents"]
    i = int(rng.integers(len(events)))
    event = events[i]
    if rng.random() < 0.5 and isinstance(event.get("args"), dict):
        key = pick(rng, ARG_KEYS)
        event["args"][key] = value
        return f"traceEvents[{i}].args.{key}"
    key = pick(rng, EVENT_KEYS)
    event[key] = value
    return f"traceEvents[{i}].{key}"


def _swap(doc: Any, rng: Rng, value: Any) -> str:
    if "tracegen" in doc and rng.random() < 0.3:
        return _swap_tracegen(doc, rng, value)
    return _swap_event(doc, rng, value)


def json_swap(data: bytes, rng: Rng) -> Edit:
    """A value of another type in place of one of the trace's (RAW stands for a token json never writes)."""
    doc = json.loads(data)
    raw = pick(rng, RAW_TOKENS) if rng.random() < 0.4 else None
    value = RAW if raw is not None else pick(rng, JSON_VALUES)
    where = _swap(doc, rng, value)
    text = json.dumps(doc, ensure_ascii=bool(rng.random() < 0.5)).encode()
    if raw is not None:
        text = text.replace(json.dumps(RAW).encode(), raw, 1)
    return text, f"swap {where} = {(raw or repr(value))[:40]!r}"


def json_number(data: bytes, rng: Rng) -> Edit:
    m = _random_match(_JSON_NUMBER, data, rng)
    token = pick(rng, NUMBER_TOKENS)
    if m is None:
        return data, "no number"
    return data[: m.start()] + token + data[m.end() :], f"number {token[:20]!r}"


def json_surrogate(data: bytes, rng: Rng) -> Edit:
    m = _random_match(_JSON_STRING, data, rng)
    bad = pick(rng, SURROGATES)
    pos = (m.start() + 1) if m else 1
    return data[:pos] + bad + data[pos:], f"surrogate {bad!r}"


def json_deep(data: bytes, rng: Rng) -> Edit:
    doc = json.loads(data)
    depth = int(pick(rng, (65, 1000, 100_000, 1_000_000)))
    nest = b"[" * depth + b"]" * depth if rng.random() < 0.5 else b'{"a":' * depth + b"1" + b"}" * depth
    where = _swap(doc, rng, RAW)
    text = json.dumps(doc).encode()
    token = json.dumps(RAW).encode()
    if token not in text:  # the slot it went to was overwritten
        return nest, f"deep {depth} alone"
    return text.replace(token, nest, 1), f"deep {depth} at {where}"


def json_drop(data: bytes, rng: Rng) -> Edit:
    doc = json.loads(data)
    event = pick(rng, doc["traceEvents"])
    if event:
        del event[pick(rng, sorted(event))]
    if rng.random() < 0.3:
        doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("ph") != "M"]
    return json.dumps(doc).encode(), "drop"


def json_truncate(data: bytes, rng: Rng) -> Edit:
    cut = int(rng.integers(len(data)))
    return data[:cut], f"truncate at {cut}"


def json_many(data: bytes, rng: Rng, corpus: Corpus) -> Edit:
    """100,000 to 250,000 events (seconds to read each: one JSON input in 450 or so)."""
    if rng.random() >= 0.02 or corpus.quick:
        return json_swap(data, rng)
    doc = json.loads(data)
    events = doc["traceEvents"]
    complete = [json.dumps(e).encode() for e in events if e.get("ph") == "X"]
    others = [json.dumps(e).encode() for e in events if e.get("ph") != "X"]
    n = int(rng.integers(100_000, 250_001))
    body = b",\n".join(others + [complete[k % len(complete)] for k in range(n)])
    doc["traceEvents"] = []
    head = json.dumps(doc).encode()
    cut = head.index(b'"traceEvents": [') + len(b'"traceEvents": [')
    return head[:cut] + body + head[cut:], f"{n} events"


JSON_EDITS = (json_swap, json_swap, json_swap, json_number, json_surrogate, json_deep, json_drop, json_truncate,
              json_many)


def mutate_json(rng: Rng, corpus: Corpus) -> tuple[str, bytes, str]:
    seed = pick_seed(rng, corpus, corpus.names("tfjson_") + corpus.names("ownjson_") + corpus.names("viewer_"))
    edit = pick(rng, JSON_EDITS)
    data, what = json_many(corpus.read(seed), rng, corpus) if edit is json_many else edit(corpus.read(seed), rng)
    return ".json", data, f"{seed}: {what}"


# ------------------------------------------------------------------------------------------------------ gzip


def gzip_members(content: bytes, rng: Rng) -> Edit:
    cuts = sorted(int(c) for c in rng.integers(0, len(content) + 1, int(rng.integers(1, 5))))
    pieces = [content[a:b] for a, b in zip([0, *cuts], [*cuts, len(content)], strict=True)]
    return b"".join(gzip.compress(p, mtime=0) for p in pieces), f"{len(pieces)} members"


def gzip_trailing(content: bytes, rng: Rng) -> Edit:
    noise = bytes(rng.integers(0, 256, 100, dtype=np.uint8))
    tail = pick(rng, (b"\0" * 8, b"garbage", b"\x1f\x8b", b"\x1f", noise))
    return gzip.compress(content, mtime=0) + tail, f"trailing {tail[:8]!r}"


def gzip_truncate(content: bytes, rng: Rng) -> Edit:
    whole = gzip.compress(content, mtime=0)
    cut = int(rng.integers(1, len(whole)))
    return whole[:cut], f"gzip truncated at {cut}"


def gzip_corrupt(content: bytes, rng: Rng) -> Edit:
    buf = bytearray(gzip.compress(content, mtime=0))
    pos = pick(rng, (int(rng.integers(10, len(buf))), len(buf) - 8, len(buf) - 4, 3))
    buf[pos] ^= int(rng.integers(1, 256))
    return bytes(buf), f"gzip byte {pos} corrupted"


def gzip_nested(content: bytes, _rng: Rng) -> Edit:
    return gzip.compress(gzip.compress(content, mtime=0), mtime=0), "gzip in gzip"


def gzip_empty_members(content: bytes, rng: Rng) -> Edit:
    count = int(pick(rng, (100, 20_000)))
    return gzip.compress(b"", mtime=0) * count + gzip.compress(content, mtime=0), f"{count} empty members first"


GZIP_EDITS = (gzip_members, gzip_members, gzip_members, gzip_trailing, gzip_trailing, gzip_truncate, gzip_corrupt,
              gzip_nested, gzip_empty_members)


def mutate_gzip(rng: Rng, corpus: Corpus) -> tuple[str, bytes, str]:
    if rng.random() < 0.1:  # bombs: a third of a second each
        name = pick(rng, corpus.names("bomb_"))
        data = corpus.read(name)
        if rng.random() < 0.3:
            data += gzip.compress(corpus.read(pick(rng, corpus.names("tfjson_"))), mtime=0)
            return ".gz", data, f"{name} then a member"
        return ".gz", data, name
    seed = pick_seed(rng, corpus, corpus.names("pb_") + corpus.names("tfjson_") + corpus.names("ownjson_")
                     + corpus.names("text_"))
    edit: Callable[[bytes, Rng], Edit] = pick(rng, GZIP_EDITS)
    data, what = edit(corpus.read(seed), rng)
    return ".gz", data, f"{seed}: {what}"


# --------------------------------------------------------------------------------------------------- bitflip


def mutate(data: bytes, rng: Rng) -> bytes:
    """Up to four random bit flips, byte flips, truncations, deletions or insertions."""
    buf = bytearray(data)
    for _ in range(int(rng.integers(1, 5))):
        if not buf:
            break
        i = int(rng.integers(0, len(buf)))
        kind = int(rng.integers(0, 5))
        if kind == 0:
            buf[i] ^= 1 << int(rng.integers(0, 8))
        elif kind == 1:
            buf[i] ^= int(rng.integers(1, 256))
        elif kind == 2:
            del buf[i:]
        elif kind == 3:
            del buf[i : i + int(rng.integers(1, 64))]
        else:
            buf.insert(i, int(rng.integers(0, 256)))
    return bytes(buf)


def mutate_bitflip(rng: Rng, corpus: Corpus) -> tuple[str, bytes, str]:
    if rng.random() < 0.1:
        seed = pick_seed(rng, corpus, corpus.names("tfjson_"))
        data, suffix = gzip.compress(corpus.read(seed), mtime=0), ".json.gz"
    else:
        seed = pick_seed(rng, corpus, corpus.names("pb_") + corpus.names("tfjson_") + corpus.names("ownjson_")
                         + corpus.names("text_") + corpus.names("xplane_") + corpus.names("viewer_"))
        data, suffix = corpus.read(seed), "".join(pathlib.Path(seed).suffixes)
    return suffix, mutate(data, rng), f"{seed}: bit flips"


MUTATORS: dict[str, Callable[[Rng, Corpus], tuple[str, bytes, str]]] = {
    "protobuf": mutate_protobuf, "text": mutate_text, "json": mutate_json, "gzip": mutate_gzip,
    "bitflip": mutate_bitflip,
}


def make_input(family: str, seed: int, k: int, corpus: Corpus) -> tuple[str, bytes, str]:
    """Input ``k`` of ``family`` for run seed ``seed``: (file suffix, bytes, what was done)."""
    return MUTATORS[family](np.random.default_rng([seed, k, FAMILIES.index(family)]), corpus)


# ------------------------------------------------------------------------------------------- the child


@dataclasses.dataclass(frozen=True)
class Job:
    """One input to make and run: input ``k`` of ``family``, or the file at ``path`` as it is."""

    k: int
    family: str
    seed: int = 0
    path: str | None = None
    stages: tuple[str, ...] = ("read", "model")


def _classify(exc: BaseException) -> str:
    return "memory" if isinstance(exc, MemoryError) else "traceback"


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    inner = [f for f in frames if "site-packages" not in f.filename] or frames
    return f"{pathlib.Path(inner[-1].filename).name}:{inner[-1].lineno}" if inner else "?"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__} at {_where(exc)}: {str(exc)[:200]}"


def _message_ok(message: str, path: str) -> bool:
    return "\n" not in message and len(message.splitlines()) <= 1 and len(message) <= MAX_MESSAGE_CHARS \
        and path in message


def _raise_bad_message(path: str) -> None:
    from parsers import TraceFormatError

    exc = TraceFormatError(path)
    exc.args = ("a message on\ntwo lines that names no file",)  # past the class's own guard, on purpose
    raise exc


# Readers that fail on purpose, one way each: the harness must tell every way apart (``--self-check``).
SELF_CHECKS: dict[str, Callable[[str], Any]] = {
    "selfcheck-traceback": lambda path: {}[path],
    "selfcheck-memory": lambda _path: bytearray(8 << 30),
    "selfcheck-hang": lambda _path: time.sleep(3600),
    "selfcheck-crash": lambda _path: os.kill(os.getpid(), signal.SIGSEGV),
    "selfcheck-bad-message": _raise_bad_message,
}


def run_read(path: str, family: str = "") -> tuple[dict[str, str], Any]:
    """The read stage: (outcome, the Trace or None)."""
    from parsers import TraceError, read_trace

    try:
        trace = SELF_CHECKS.get(family, read_trace)(path)
    except TraceError as exc:
        outcome = "error" if _message_ok(str(exc), path) else "bad message"
        return {"outcome": outcome, "detail": f"{type(exc).__name__}: {str(exc)[:400]}"}, None
    except BaseException as exc:  # noqa: BLE001 - finding these is the point
        return {"outcome": _classify(exc), "detail": _describe(exc)}, None
    return {"outcome": "read", "detail": f"{len(trace.ops)} ops, {len(trace.transfers)} transfers"}, trace


def run_model(trace: Any) -> dict[str, str]:
    """The model stage: build the step model, simulate two workers for a few steps, take the throughput."""
    from parsers import TraceError
    from tracegen.errors import TracegenError
    from tracegen.metrics import steps_per_s
    from tracegen.model import build_model
    from tracegen.simulate import SimConfig, simulate

    try:
        model = build_model(trace)
        result = simulate(model, SimConfig(n_workers=2, steps=3, warmup_steps=1))
        rate = steps_per_s(result)
    except (TracegenError, TraceError) as exc:
        return {"outcome": "error", "detail": f"{type(exc).__name__}: {str(exc)[:300]}"}
    except BaseException as exc:  # noqa: BLE001 - finding these is the point
        return {"outcome": _classify(exc), "detail": _describe(exc)}
    if not (isinstance(rate, float | int) and math.isfinite(rate) and rate > 0):
        return {"outcome": "odd", "detail": f"steps_per_s = {rate!r}"}
    return {"outcome": "ok", "detail": f"{rate:.3f} steps/s"}


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def run_input(job: Job, corpus: Corpus, work: pathlib.Path, out: IO[str]) -> None:
    """Make one input and run its stages, reporting each stage's start (so a hang is pinned on it) and the
    outcome."""
    if job.family in SELF_CHECKS:
        path, what = work / f"in_{job.k}.selfcheck", job.family
        path.write_bytes(b"")
    elif job.path is None:
        suffix, data, what = make_input(job.family, job.seed, job.k, corpus)
        path = work / f"in_{job.k}{suffix}"
        path.write_bytes(data)
        del data
    else:
        path, what = pathlib.Path(job.path), "given file"
    result: dict[str, Any] = {"k": job.k, "family": job.family, "input": str(path), "what": what,
                              "size": path.stat().st_size}
    _send(out, {"stage": "read", **result})
    t0 = time.process_time()
    read, trace = run_read(str(path), job.family)
    result["read"] = read | {"cpu_s": round(time.process_time() - t0, 4),
                             "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10}
    if trace is not None and "model" in job.stages:
        _send(out, {"stage": "model", "k": job.k, "read": result["read"]})
        t0 = time.process_time()
        result["model"] = run_model(trace) | {"cpu_s": round(time.process_time() - t0, 4)}
    del trace
    _send(out, {"done": True, **result})


def child(jobs: Sequence[Job], corpus: Corpus, work: pathlib.Path, limits: Limits, out: IO[str]) -> None:
    """Limit this process's address space (and core files), then run ``jobs`` one after another; stop early
    once the process has grown past half its limit, so that what one input left behind cannot make the next
    run out."""
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a child that crashes leaves no core file behind
    for job in jobs:
        run_input(job, corpus, work, out)
        if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10 > limits.memory_bytes // 2:
            break


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one child may use: wall time per stage of an input, and address space."""

    time_s: float = 10.0
    memory_bytes: int = 2 << 30


# ------------------------------------------------------------------------------------------- the worker


def _fork_child(jobs: Sequence[Job], corpus: Corpus, work: pathlib.Path, limits: Limits) -> tuple[int, int]:
    """Fork a child running ``jobs``: (its pid, the pipe it reports on)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_fd)
        code = 0
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            with os.fdopen(write_fd, "w") as out:
                child(jobs, corpus, work, limits, out)
        except BaseException:  # noqa: BLE001 - a child must end here, whatever happened
            code = 3
        os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def run_jobs(jobs: Sequence[Job], corpus: Corpus, work: pathlib.Path, limits: Limits) -> list[dict[str, Any]]:
    """Run ``jobs`` in children, a child for as many as it gets through: one that hangs is killed, one that dies
    is replaced, and the rest go to a new child. An input that gave a traceback or a memory blow-up in a child
    that had run others is run again in a child of its own, and that outcome counts."""
    results: dict[int, dict[str, Any]] = {}
    pending = list(jobs)
    while pending:
        results.update(_watch(pending, *_fork_child(pending, corpus, work, limits), limits))
        pending = [job for job in pending if job.k not in results]
    if len(jobs) > 1:
        for job in jobs:
            if any(results[job.k].get(s, {}).get("outcome") in ("traceback", "memory") for s in ("read", "model")):
                results.update(_watch([job], *_fork_child([job], corpus, work, limits), limits))
    return [results[job.k] for job in jobs]


def _watch(jobs: Sequence[Job], pid: int, read_fd: int, limits: Limits) -> dict[int, dict[str, Any]]:
    """Follow a child's reports; kill it when a stage runs past the time limit. Results by input, including
    the one it hung or died on (but not those it never started)."""
    results: dict[int, dict[str, Any]] = {}
    current: dict[str, Any] = {"k": jobs[0].k, "family": jobs[0].family}
    stage = "start"
    killed = False
    buf = b""
    deadline = time.monotonic() + limits.time_s + 30  # making an input comes first: a generous start
    with selectors.DefaultSelector() as sel:
        sel.register(read_fd, selectors.EVENT_READ)
        while True:
            if not sel.select(max(0.0, deadline - time.monotonic())):
                os.kill(pid, signal.SIGKILL)
                killed = True
                break
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                message = json.loads(line)
                if message.get("done"):
                    results[message["k"]] = {k: v for k, v in message.items() if k != "done"}
                    stage = "between"
                    deadline = time.monotonic() + limits.time_s + 30
                    continue
                if message["stage"] == "read":
                    current = {k: v for k, v in message.items() if k != "stage"}
                else:
                    current["read"] = message["read"]
                stage = message["stage"]
                deadline = time.monotonic() + limits.time_s
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if stage in ("read", "model"):  # it stopped inside an input
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        outcome = {"outcome": "hang", "detail": f"no answer in {limits.time_s:g} s"} if killed else {
            "outcome": "crash", "detail": f"signal {sig}" if sig else f"exit {os.WEXITSTATUS(status)}"}
        results[current["k"]] = current | {stage: outcome}
    elif not results:  # it died before starting anything: blame the first, so that the run moves on
        results[jobs[0].k] = current | {"read": {"outcome": "crash", "detail": f"child ended ({status})"}}
    return results


def serve(corpus: Corpus, work: pathlib.Path, limits: Limits) -> None:
    """Worker loop: a list of jobs per line of stdin (JSON), their results as one line of stdout."""
    for line in sys.stdin:
        jobs = [Job(k=spec["k"], family=spec["family"], seed=spec["seed"], path=spec.get("path"),
                    stages=tuple(spec["stages"])) for spec in json.loads(line)]
        sys.stdout.write(json.dumps(run_jobs(jobs, corpus, work, limits)) + "\n")
        sys.stdout.flush()


class Pool:
    """``jobs`` worker processes, each running batches of inputs in children it forks; results come back in
    any order."""

    def __init__(self, corpus: Corpus, work: pathlib.Path, limits: Limits, jobs: int, *, model: bool,
                 batch: int = 25) -> None:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        self.batch = batch
        self.workers = [
            subprocess.Popen([sys.executable, __file__, "--serve", "--corpus", str(corpus.root), "--work",
                              str(work), "--time-limit", str(limits.time_s), "--memory", str(limits.memory_bytes),
                              *(() if model else ("--no-model",)), *(("--quick",) if corpus.quick else ())],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
            for _ in range(jobs)
        ]

    def run(self, specs: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        """Run every spec; yield each result as its batch comes back. A worker has one batch at a time, so at
        most one line waits in its pipe and a buffered ``readline`` never hides a second from the selector."""
        pending = iter(specs)
        busy: dict[int, bool] = {}
        with selectors.DefaultSelector() as sel:
            for i, worker in enumerate(self.workers):
                assert worker.stdout is not None
                sel.register(worker.stdout, selectors.EVENT_READ, i)
                busy[i] = self._feed(worker, pending)
            while any(busy.values()):
                for key, _ in sel.select():
                    i = key.data
                    line = self.workers[i].stdout.readline()  # type: ignore[union-attr]
                    if not line:
                        raise RuntimeError(f"fuzz worker {i} died")
                    yield from json.loads(line)
                    busy[i] = self._feed(self.workers[i], pending)

    def _feed(self, worker: subprocess.Popen[str], pending: Iterator[dict[str, Any]]) -> bool:
        batch = list(itertools.islice(pending, self.batch))
        if not batch:
            return False
        assert worker.stdin is not None
        worker.stdin.write(json.dumps(batch) + "\n")
        worker.stdin.flush()
        return True

    def close(self) -> None:
        """End the workers (their input ends) and close the pipes."""
        for worker in self.workers:
            if worker.stdin is not None:
                worker.stdin.close()
        for worker in self.workers:
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()
            if worker.stdout is not None:
                worker.stdout.close()


@contextlib.contextmanager
def pool(corpus: Corpus, work: pathlib.Path, limits: Limits, jobs: int, *, model: bool = True) -> Iterator[Pool]:
    """A :class:`Pool`, closed (workers ended) when the block ends."""
    p = Pool(corpus, work, limits, jobs, model=model)
    try:
        yield p
    finally:
        p.close()


# --------------------------------------------------------------------------------------------- reporting


@dataclasses.dataclass
class Tally:
    """Outcomes by family and stage, and the inputs kept as reproducers."""

    read: dict[str, collections.Counter[str]] = dataclasses.field(
        default_factory=lambda: {f: collections.Counter() for f in FAMILIES})
    model: dict[str, collections.Counter[str]] = dataclasses.field(
        default_factory=lambda: {f: collections.Counter() for f in FAMILIES})
    problems: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    cpu_s: dict[str, float] = dataclasses.field(default_factory=lambda: dict.fromkeys(FAMILIES, 0.0))

    def add(self, result: dict[str, Any]) -> None:
        family = result["family"]
        self.cpu_s[family] += sum((result.get(stage) or {}).get("cpu_s", 0.0) for stage in ("read", "model"))
        read = result.get("read", {"outcome": "crash", "detail": "no result"})
        self.read[family][read["outcome"]] += 1
        model = result.get("model")
        if model is not None:
            self.model[family][model["outcome"]] += 1
        for stage, outcome in (("read", read), ("model", model)):
            if outcome is not None and outcome["outcome"] in PROBLEMS:
                self.problems.append({"stage": stage, **outcome, **{k: result.get(k) for k in
                                                                    ("k", "family", "input", "what", "size")}})

    def total(self, stage: str) -> collections.Counter[str]:
        counts: collections.Counter[str] = collections.Counter()
        for c in (self.read if stage == "read" else self.model).values():
            counts.update(c)
        return counts


def table(tally: Tally) -> str:
    """The per-family table and a final totals line."""
    lines = []
    head = (f"{'family':<9} | " + " ".join(f"{o:>9}" for o in READ_OUTCOMES) + " || model: "
            + " ".join(f"{o:>9}" for o in MODEL_OUTCOMES) + " || cpu ms/input")
    lines.append(head)
    lines.append("-" * len(head))
    for family in (*FAMILIES, "total"):
        read = tally.total("read") if family == "total" else tally.read[family]
        model = tally.total("model") if family == "total" else tally.model[family]
        cpu = sum(tally.cpu_s.values()) if family == "total" else tally.cpu_s[family]
        lines.append(f"{family:<9} | " + " ".join(f"{read[o]:>9}" for o in READ_OUTCOMES) + " ||        "
                     + " ".join(f"{model[o]:>9}" for o in MODEL_OUTCOMES)
                     + f" || {1000 * cpu / max(1, sum(read.values())):12.1f}")
    read, model = tally.total("read"), tally.total("model")
    bad_read = sum(read[o] for o in PROBLEMS)
    bad_model = sum(model[o] for o in PROBLEMS)
    lines.append(f"TOTAL inputs {sum(read.values())}: read stage {read['error']} package errors, {read['read']} "
                 f"read, {bad_read} problems ({read['traceback']} tracebacks, {read['hang']} hangs, "
                 f"{read['memory']} memory, {read['crash']} crashes, {read['bad message']} bad messages); model "
                 f"stage {model['ok']} ok, {model['error']} errors, {bad_model} problems ({model['traceback']} "
                 f"tracebacks, {model['hang']} hangs, {model['memory']} memory, {model['crash']} crashes, "
                 f"{model['odd']} odd)")
    return "\n".join(lines)


def keep_reproducers(tally: Tally, repro: pathlib.Path) -> list[str]:
    """Copy a few inputs of each kind of problem into ``repro``; lines describing them."""
    repro.mkdir(parents=True, exist_ok=True)
    kept: collections.Counter[tuple[str, str, str, str]] = collections.Counter()
    lines = []
    for p in sorted(tally.problems, key=lambda p: (p["stage"], p["family"], p["outcome"], p.get("size") or 0)):
        signature = (p["stage"], p["family"], p["outcome"], p["detail"].split(":")[0])
        kept[signature] += 1
        if kept[signature] > REPROS_PER_KIND or not p.get("input") or not pathlib.Path(p["input"]).exists():
            continue
        source = pathlib.Path(p["input"])
        kind = p["outcome"].replace(" ", "_")
        target = repro / f"{p['stage']}_{p['family']}_{kind}_{p['k']}{''.join(source.suffixes)}"
        shutil.copyfile(source, target)
        lines.append(f"  {target}  ({p['what']}): {p['detail'][:160]}")
    return lines


def fuzz(n: int, *, seed: int, jobs: int, limits: Limits, stages: tuple[str, ...], bomb_bytes: int,
         repro: pathlib.Path, only: int | None = None, quick: bool = False) -> Tally:
    """Run ``n`` inputs (or just input ``only``) round-robin over the families; the tally of outcomes."""
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="fuzz_parsers_") as tmp:
        corpus = build_corpus(pathlib.Path(tmp) / "corpus", bomb_bytes, quick=quick)
        work = pathlib.Path(tmp) / "inputs"
        work.mkdir()
        ks = [only] if only is not None else range(n)
        specs = ({"k": k, "family": FAMILIES[k % len(FAMILIES)], "seed": seed, "stages": list(stages)} for k in ks)
        with pool(corpus, work, limits, jobs, model="model" in stages) as p:
            for result in p.run(specs):
                tally.add(result)
                path = pathlib.Path(result.get("input", ""))
                problem = any(result.get(s, {}).get("outcome") in PROBLEMS for s in ("read", "model"))
                if problem or only is not None:
                    print(f"input {result['k']} ({result['family']}, {result.get('what')}): "
                          f"read {result.get('read')}, model {result.get('model')}", file=sys.stderr)
                if not problem and path.name:
                    path.unlink(missing_ok=True)
        kept = keep_reproducers(tally, repro) if tally.problems else []
    if kept:
        print(f"reproducers in {repro}:", *kept, sep="\n")
    return tally


def self_check(pool: Pool) -> dict[str, str]:
    """Run each failing-on-purpose reader through ``pool``: the outcome the harness saw, by way of failing
    (``selfcheck-hang`` -> ``hang`` and so on when the harness works)."""
    specs = [{"k": k, "family": family, "seed": 0, "stages": ["read"]} for k, family in enumerate(SELF_CHECKS)]
    return {r["family"]: r["read"]["outcome"] for r in pool.run(specs)}


def expected_outcome(family: str) -> str:
    """The outcome self-check reader ``family`` must get: ``selfcheck-bad-message`` -> ``bad message``."""
    return family.removeprefix("selfcheck-").replace("-", " ")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=3000, help="number of inputs (default 3000)")
    parser.add_argument("--seed", type=int, default=20261130, help="run seed: the same seed makes the same inputs")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: CPUs)")
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per stage per input (default 10)")
    parser.add_argument("--memory", type=int, default=2 << 30, help="address-space limit in bytes (default 2 GiB)")
    parser.add_argument("--bomb-bytes", type=int, default=1 << 30,
                        help="what the big gzip bombs expand to, in bytes, whole MiB (default 1 GiB)")
    parser.add_argument("--no-model", action="store_true", help="only read; skip build_model and simulate")
    parser.add_argument("--quick", action="store_true",
                        help="leave out the edits that take seconds each (very many events or records)")
    parser.add_argument("--only", type=int, help="run just input K (as numbered in a run of this seed)")
    parser.add_argument("--repro", type=pathlib.Path, default=pathlib.Path(tempfile.gettempdir()) / "fuzz_repro",
                        help="where inputs with problems are kept (default: fuzz_repro in the temp directory)")
    parser.add_argument("--self-check", action="store_true",
                        help="check that the harness tells a traceback, a hang, a memory blow-up, a crash and a "
                             "bad message apart (readers that fail on purpose; takes --time-limit seconds)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=pathlib.Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=pathlib.Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    limits = Limits(time_s=args.time_limit, memory_bytes=args.memory)
    if args.serve:
        corpus = Corpus(args.corpus, quick=args.quick)
        _preload(corpus, model=not args.no_model)
        serve(corpus, args.work, limits)
        return 0
    if args.self_check:
        with tempfile.TemporaryDirectory(prefix="fuzz_parsers_") as tmp, \
                pool(Corpus(pathlib.Path(tmp)), pathlib.Path(tmp), limits, 1, model=False) as p:
            seen = self_check(p)
        for family, outcome in seen.items():
            print(f"{family}: {outcome} ({'as expected' if outcome == expected_outcome(family) else 'WRONG'})")
        return 0 if all(outcome == expected_outcome(family) for family, outcome in seen.items()) else 1
    stages = ("read",) if args.no_model else ("read", "model")
    t0 = time.perf_counter()
    tally = fuzz(args.n, seed=args.seed, jobs=args.jobs, limits=limits, stages=stages, bomb_bytes=args.bomb_bytes,
                 repro=args.repro, only=args.only, quick=args.quick)
    print(f"inputs: {sum(tally.total('read').values())} in {time.perf_counter() - t0:.0f} s, seed {args.seed}, "
          f"{args.jobs} jobs, {limits.time_s:g} s and {limits.memory_bytes >> 20} MiB per child")
    print(table(tally))
    return 1 if tally.problems else 0


def _preload(corpus: Corpus, *, model: bool) -> None:
    """Import and run once what the children run, so that they start warm (imports done, caches filled), and
    freeze what exists so that the children's garbage collector leaves those pages shared; quiet the warning
    Python 3.12+ gives on forking a process with threads (the children only run single-threaded Python)."""
    import gc
    import warnings

    warnings.filterwarnings("ignore", message=".*fork.*", category=DeprecationWarning)
    for name in (*corpus.names("pb_"), *corpus.names("ownjson_"), *corpus.names("tfjson_"), *corpus.names("text_")):
        _, trace = run_read(str(corpus.root / name))
        if model and trace is not None and name.startswith("pb_mlp"):
            run_model(trace)
    gc.collect()
    gc.freeze()


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
