"""Read TensorFlow 2's profiler output, XSpace protobufs (``<host>.xplane.pb``), into a :class:`Trace`.

Input: one ``.xplane.pb`` file, a profile run directory (``plugins/profile/<run>/``, one file per profiled host)
or a TensorBoard logdir (its newest run). The hosts of one run are merged, in the order of their names (the
file name without ``.xplane.pb``; ``client.trace`` names them ``<address>_<port>``). The schema is our own
``proto/xplane.proto`` (TensorFlow's field numbers), so TensorFlow need not be installed.

What is read, from each host's ``/host:CPU`` plane (planes → lines, one per thread → events):

- times: an event starts ``offset_ps`` after its line's ``timestamp_ns``, which counts from the session's
  ``profile_start_time`` (a stat of the ``Task Environment`` plane, ns since the epoch; 0 when absent); both are
  converted here to integer nanoseconds on the epoch clock, the clock of every other reader;
- stats: resolved through the plane's ``stat_metadata`` (names, and ``ref_value`` strings), events' names through
  its ``event_metadata``; an id that the plane does not define is an error;
- ops: events named ``node/name:OpType``, on the TensorFlow device the host serves (the sending device of its
  ``_Send`` events' rendezvous keys);
- transfers: ``_Send`` events whose rendezvous ``key`` (``src;incarnation;dst;edge_N_tensor;frame``) joins two
  tasks; the direction follows from the devices (PS → worker = pull, worker → PS = push). A transfer starts with
  its ``_Send`` and ends when the receiving host's matching ``_Recv`` (``<producer>/_N``) is done; without one
  it lasts as long as the ``_Send``;
- steps: the events of the step function's ``tf.function`` calls on a ``python`` line (stat
  ``tf_function_call``; the most frequent such function), else the ``EagerExecute`` events of the most frequent
  ``__inference_*`` function; every record is assigned to the step whose call it starts in;
- sizes: XSpace records no byte counts. A transfer's size is the ``requested_bytes`` of a ``MemoryAllocation``
  by the op that produced the tensor (TensorFlow records only large allocations), else, for a variable read or a
  dense update (``ReadVariableOp``; ``Assign*VariableOp``, ``ResourceApplyGradientDescent``), the variable's
  dtype and shape from the step function's registration (its ``FunctionDef`` in the text of an
  ``EagerService:Enqueue`` event, which only a profile of the function's first call holds). Whatever is left
  stays ``<NA>`` and ``Trace.lost`` lists it; no size is guessed;
- graphs: from the same registrations, the partition graphs (:mod:`parsers.xgraph`): ``graph_nodes`` and
  ``graph_edges`` as a TF1 RunMetadata's, so that a step model can be built; op events of no graph node
  (runtime events named like ops, ``EagerService:Enqueue``) are then left out;
- the first call: a profile that holds the registration holds the step function's first call, with its tracing
  and registration (one-time costs, often ten times a later step); that step is left out (counted in
  ``skipped``). A transfer starts when its ``_Recv`` starts on the receiving host, if that is after the
  ``_Send`` (the receiver asks for the tensor when its executor reaches the ``_Recv``).
"""

from __future__ import annotations

import collections
import dataclasses
import pathlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from google.protobuf import message, text_format

from parsers.errors import TraceContentError, TraceFormatError, quoted
from parsers.files import GZIP_MAGIC, gunzip, read_file
from parsers.limits import MAX_BYTES, MAX_FILES, MAX_RECORDS, SCAN_BYTES, check_text_shape, check_wire_shape
from parsers.proto import tf_trace_pb2 as tfpb
from parsers.proto import xplane_pb2 as pb
from parsers.runmetadata import DTYPE_BYTES, check_has_worker
from parsers.trace import (
    MAX_DUR_NS,
    MAX_SIZE_BYTES,
    MAX_TIME_NS,
    Trace,
    device_role,
    direction_of,
    make_table,
    trace_from,
)
from parsers.xgraph import partition_tables

XPLANE_SUFFIXES = (".xplane.pb", ".xplane.pb.gz")
VIEWER_SUFFIXES = (".trace.json.gz", ".trace.json")  # TensorBoard's trace viewer's files (parsers.traceviewer)
# what a run directory's files end with: a plain .trace.json in a directory may as well be a TF1 timeline
PROFILE_SUFFIXES = (*XPLANE_SUFFIXES, VIEWER_SUFFIXES[0])
HOST_PLANE = "/host:CPU"
ENV_PLANE = "Task Environment"
SEND_OPS = frozenset({"_Send", "_HostSend"})
# Ops whose input ``value_input`` has the shape of the variable their resource input 0 holds.
DENSE_UPDATES = {"AssignSubVariableOp": 1, "AssignAddVariableOp": 1, "AssignVariableOp": 1,
                 "ResourceApplyGradientDescent": 2}
_OP_EVENT = re.compile(r"^(?P<node>[\w.][\w.\-/>]*):(?P<op>[A-Za-z_][\w>]*)$")
# A traced tf.function as the runtime names it, and its per-device components after partitioning.
_INFERENCE = re.compile(r"^__inference_(?P<name>.+?)_(?P<uid>[0-9]+)(?P<part>_partitioned_[0-9]+_[0-9]+)?$")
_DTYPES = {"DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_INT32": "int32", "DT_UINT8": "uint8",
           "DT_INT16": "int16", "DT_INT8": "int8", "DT_COMPLEX64": "complex64", "DT_INT64": "int64",
           "DT_BOOL": "bool", "DT_BFLOAT16": "bfloat16", "DT_UINT16": "uint16", "DT_COMPLEX128": "complex128",
           "DT_HALF": "float16", "DT_UINT32": "uint32", "DT_UINT64": "uint64"}
PS_LOST = (
    "byte counts of transfers (an XSpace records none: sizes come from allocation events and variable shapes)",
    "partition graphs (dependencies between ops): an XSpace holds no graph",
)


def is_profile_dir(path: pathlib.Path) -> bool:
    """Whether ``path`` is a TensorBoard logdir with profiles or a run directory holding ``.xplane.pb`` (or
    trace-viewer ``.trace.json.gz``) files."""
    try:
        if not path.is_dir():
            return False
        if (path / "plugins" / "profile").is_dir():
            return True
        return any(p.name.endswith(PROFILE_SUFFIXES) for p in _limited(path.iterdir(), str(path)))
    except OSError:
        return False


def looks_like_xspace(data: bytes) -> bool:
    """Whether ``data`` parses as an XSpace with a plane named as TensorFlow's profiler names them."""
    if len(data) > SCAN_BYTES:
        try:
            check_wire_shape(data, pb.XSpace.DESCRIPTOR, "")
        except TraceFormatError:
            return False
    space = pb.XSpace()
    try:
        space.ParseFromString(data)
    except message.DecodeError:
        return False
    return any(p.name in (HOST_PLANE, ENV_PLANE) or p.name.startswith("/device:") for p in space.planes)


def profile_files(directory: pathlib.Path) -> list[pathlib.Path]:
    """The profile files of a run directory, or of a logdir's newest run (run names are timestamps): its
    ``.xplane.pb`` files, or its trace-viewer files when it has none."""
    runs_dir = directory / "plugins" / "profile"
    if runs_dir.is_dir():
        runs = sorted(p for p in _limited(runs_dir.iterdir(), str(runs_dir)) if p.is_dir())
        runs = [r for r in runs if any(p.name.endswith(PROFILE_SUFFIXES) for p in _limited(r.iterdir(), str(r)))]
        if not runs:
            raise TraceFormatError(f"{runs_dir}: no profile run holds a .xplane.pb or .trace.json.gz file")
        directory = runs[-1]
    found = [p for p in _limited(directory.iterdir(), str(directory)) if p.is_file()]
    for suffixes in (XPLANE_SUFFIXES, VIEWER_SUFFIXES[:1]):
        files = sorted(p for p in found if p.name.endswith(suffixes))
        if files:
            return files
    raise TraceFormatError(f"{directory}: no .xplane.pb or .trace.json.gz file")


def _limited(paths: Iterable[pathlib.Path], source: str) -> list[pathlib.Path]:
    found = []
    for p in paths:
        found.append(p)
        if len(found) > MAX_FILES:
            raise TraceFormatError(f"{source}: more than {MAX_FILES} entries")
    return found


def read_xplane_files(files: Sequence[pathlib.Path], source: str, max_bytes: int = MAX_BYTES) -> Trace:
    """Read and merge the hosts ``files`` (at most ``max_bytes`` together)."""
    return read_xspaces(read_profile_files(files, source, max_bytes), source)


def read_profile_files(files: Sequence[pathlib.Path], source: str, max_bytes: int) -> list[tuple[str, bytes]]:
    """(path, content) of each of a profile's ``files``, gunzipped; at most ``max_bytes`` together."""
    contents: list[tuple[str, bytes]] = []
    total = 0
    for path in files:
        data = read_file(path, max_bytes)
        if data.startswith(GZIP_MAGIC):
            data = gunzip(data, str(path), max_bytes)
        total += len(data)
        if total > max_bytes:
            raise TraceFormatError(f"{source}: the profile's files hold more than the limit of {max_bytes} bytes "
                                   "together")
        contents.append((str(path), data))
    return contents


def host_name(path: str) -> str:
    """The host a profile file describes: its file name without ``.xplane.pb`` (or ``.trace.json[.gz]``)."""
    name = pathlib.PurePath(path).name
    for suffix in (*XPLANE_SUFFIXES, *VIEWER_SUFFIXES):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def parse_xspace(data: bytes, source: str) -> Any:
    """``data`` parsed as an XSpace; TraceFormatError on an empty file or broken wire format (with its byte)."""
    if not data:
        raise TraceFormatError(f"{source}: file is empty")
    walked = len(data) > SCAN_BYTES
    if walked:
        _check_wire(data, source)
    space = pb.XSpace()
    try:
        space.ParseFromString(data)
    except message.DecodeError as exc:
        if not walked:
            _check_wire(data, source)
        complaint = str(exc).split("': ", 1)[-1]
        raise TraceFormatError(f"{source}: not an XSpace protobuf: {complaint}") from None
    if not any(p.name == HOST_PLANE for p in space.planes):
        names = ", ".join(p.name for p in space.planes) or "none"
        raise TraceFormatError(f"{source}: not a TensorFlow profile: no {HOST_PLANE!r} plane (planes: "
                               f"{quoted(names, 120)})")
    return space


def _check_wire(data: bytes, source: str) -> None:
    """check_wire_shape, its complaint (with the byte) said to be about an XSpace."""
    try:
        check_wire_shape(data, pb.XSpace.DESCRIPTOR, source)
    except TraceFormatError as exc:
        raise TraceFormatError(f"{source}: not an XSpace protobuf: {str(exc).removeprefix(source + ': ')}") from None


# ------------------------------------------------------------------------------------------- events


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One event of a host's CPU plane, times in ns on the epoch clock, stats resolved to values."""

    host: str
    lane: int
    line_name: str
    name: str
    start_ns: int
    dur_ns: int
    stats: dict[str, Any]
    where: str

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.dur_ns


def _profile_start_ns(space: Any, source: str) -> int:
    for plane in space.planes:
        if plane.name != ENV_PLANE:
            continue
        names = {k: v.name for k, v in plane.stat_metadata.items()}
        for stat in plane.stats:
            if names.get(stat.metadata_id) == "profile_start_time":
                value = _number(stat)
                if value is None or not 0 <= value < MAX_TIME_NS:
                    raise TraceContentError(f"{source}: profile_start_time {quoted(value)} is not a time in ns "
                                            "from 0 to 2**62")
                return int(value)
    return 0


def _number(stat: Any) -> int | float | None:
    kind = stat.WhichOneof("value")
    return getattr(stat, kind) if kind in ("uint64_value", "int64_value", "double_value") else None


def _stats(stats: Iterable[Any], names: dict[int, str], where: str, into: dict[str, Any]) -> None:
    for s, stat in enumerate(stats):
        name = names.get(stat.metadata_id)
        if name is None:
            raise TraceFormatError(f"{where}.stats[{s}]: stat metadata id {stat.metadata_id} is not defined by "
                                   "its plane")
        kind = stat.WhichOneof("value")
        if kind == "ref_value":
            value: Any = names.get(stat.ref_value)
            if value is None:
                raise TraceFormatError(f"{where}.stats[{s}] ({quoted(name)}): refers to stat metadata id "
                                       f"{stat.ref_value}, which its plane does not define")
        else:
            value = getattr(stat, kind) if kind else None
        into[name] = value


def _events(space: Any, source: str, lanes: dict[tuple[str, int], int], skipped: dict[str, int]) -> list[Event]:
    host = host_name(source)
    base_ns = _profile_start_ns(space, source)
    out: list[Event] = []
    for p, plane in enumerate(space.planes):
        if plane.name != HOST_PLANE:
            n = sum(len(line.events) for line in plane.lines)
            if n:
                _count(skipped, f"events on planes other than {HOST_PLANE} (devices)", n)
            continue
        stat_names = {int(k): v.name for k, v in plane.stat_metadata.items()}
        for li, line in enumerate(plane.lines):
            lane = lanes.setdefault((host, int(line.id)), len(lanes))
            line_where = f"{source}: planes[{p}].lines[{li}]"
            if not 0 <= line.timestamp_ns < MAX_TIME_NS - base_ns:
                raise TraceContentError(f"{line_where}: timestamp_ns {line.timestamp_ns} is not a time from 0 to "
                                        "2**62 ns")
            line_ps = (base_ns + line.timestamp_ns) * 1000
            for e, event in enumerate(line.events):
                where = f"{line_where}.events[{e}]"
                if event.metadata_id not in plane.event_metadata:
                    raise TraceFormatError(f"{where}: event metadata id {event.metadata_id} is not defined by its "
                                           "plane")
                meta = plane.event_metadata[event.metadata_id]
                if event.WhichOneof("data") == "num_occurrences":
                    _count(skipped, "aggregated events (num_occurrences, no time)")
                    continue
                if event.offset_ps < 0 or event.duration_ps < 0 or event.duration_ps > MAX_DUR_NS * 1000:
                    raise TraceContentError(f"{where} ({quoted(meta.name)}): bad times (offset {event.offset_ps} "
                                            f"ps, duration {event.duration_ps} ps)")
                start_ns = (line_ps + event.offset_ps) // 1000
                end_ns = (line_ps + event.offset_ps + event.duration_ps) // 1000
                if end_ns >= MAX_TIME_NS:
                    raise TraceContentError(f"{where} ({quoted(meta.name)}): ends at or after 2**62 ns")
                stats: dict[str, Any] = {}
                _stats(meta.stats, stat_names, f"{source}: planes[{p}].event_metadata[{meta.id}]", stats)
                _stats(event.stats, stat_names, where, stats)
                out.append(Event(host=host, lane=lane, line_name=line.name, name=meta.name, start_ns=start_ns,
                                 dur_ns=end_ns - start_ns, stats=stats, where=f"{where} ({quoted(meta.name)})"))
    return out


def _count(skipped: dict[str, int], reason: str, n: int = 1) -> None:
    skipped[reason] = skipped.get(reason, 0) + n


# ---------------------------------------------------------------------------------- registrations


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Variable:
    """A resource argument of the step function with its handle's dtype and shape."""

    arg: str
    dtype: str
    dims: tuple[int, ...]
    size_bytes: int


def _function_texts(text: str) -> Iterable[str]:
    """The body of every ``function_def { ... }`` block of an Enqueue request's text (strings skipped)."""
    start = 0
    while (at := text.find("function_def {", start)) >= 0:
        pos = at + len("function_def {")
        depth, quote = 1, ""
        body_start = pos
        while pos < len(text) and depth:
            c = text[pos]
            if quote:
                if c == "\\":
                    pos += 1
                elif c == quote:
                    quote = ""
            elif c in "\"'":
                quote = c
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            pos += 1
        if depth:
            return  # cut off: TensorFlow did not record the whole request
        yield text[body_start : pos - 1]
        start = pos


def _functions(events: Sequence[Event], skipped: dict[str, int]) -> dict[str, Any]:
    """Every FunctionDef registered in the profile, by name (the first registration of each)."""
    found: dict[str, Any] = {}
    for event in events:
        text = event.stats.get("debug_str")
        if not isinstance(text, str) or "register_function" not in text:
            continue
        for body in _function_texts(text):
            data = body.encode()
            check_text_shape(data, event.where)
            fdef = tfpb.FunctionDef()
            try:
                text_format.Parse(body, fdef, allow_unknown_field=True)
            except (text_format.ParseError, RecursionError):
                _count(skipped, "function registrations whose text does not parse")
                continue
            found.setdefault(fdef.signature.name, fdef)
    return found


def _variables(fdef: Any, where: str) -> dict[str, Variable]:
    """The resource arguments of ``fdef`` whose handle dtype and shape its ``arg_attr`` records."""
    out: dict[str, Variable] = {}
    for index, arg in enumerate(fdef.signature.input_arg):
        if arg.type != tfpb.DT_RESOURCE:
            continue
        attrs = fdef.arg_attr[index].attr if index in fdef.arg_attr else {}
        types = list(attrs["_handle_dtypes"].list.type) if "_handle_dtypes" in attrs else []
        shapes = list(attrs["_handle_shapes"].list.shape) if "_handle_shapes" in attrs else []
        dtype = _DTYPES.get(tfpb.DataType.Name(types[0])) if len(types) == 1 and types[0] in tfpb.DataType.values() \
            else None
        if dtype is None or len(shapes) != 1 or shapes[0].unknown_rank or any(d.size < 0 for d in shapes[0].dim):
            continue  # the whole function's arguments carry no handle shapes; its components' do
        dims = tuple(int(d.size) for d in shapes[0].dim)
        size = DTYPE_BYTES[dtype]
        for d in dims:
            size *= d
            if size > MAX_SIZE_BYTES:
                raise TraceContentError(f"{where}: argument {quoted(arg.name)} of shape {quoted(dims, 120)} holds more "
                                        "than 2**44 bytes")
        out[arg.name] = Variable(arg=arg.name, dtype=dtype, dims=dims, size_bytes=size)
    return out


def _node_name(tensor: str) -> str:
    """The node of a FunctionDef input (``node:output:0``, ``node``, ``^node``)."""
    return tensor.lstrip("^").split(":", 1)[0]


# ------------------------------------------------------------------------------------------- reading


@dataclasses.dataclass(slots=True)
class _Send:
    event: Event
    node: str
    producer: str
    consumer: str
    src: str
    dst: str
    tensor: str


def read_xspaces(contents: Sequence[tuple[str, bytes]], source: str) -> Trace:
    """Merge the hosts ``contents`` (file name, bytes) of one profile into a Trace."""
    skipped: dict[str, int] = {}
    lanes: dict[tuple[str, int], int] = {}
    events: list[Event] = []
    for path, data in sorted(contents, key=lambda c: host_name(c[0])):
        space = parse_xspace(data, path)
        n = sum(len(line.events) for plane in space.planes for line in plane.lines)
        if len(events) + n > MAX_RECORDS:
            raise TraceContentError(f"{source}: more than {MAX_RECORDS} events in the profile")
        events.extend(_events(space, path, lanes, skipped))
        del space
    return trace_from_events(events, source, skipped)


def _op_rows(events: Sequence[Event], host_devices: Mapping[str, str], step_of: Callable[[int], int | None],
             skipped: dict[str, int]) -> list[dict[str, Any]]:
    """The ``ops`` rows of the op events on a known device within a step; the others are counted in ``skipped``."""
    ops: list[dict[str, Any]] = []
    for event in events:
        m = _OP_EVENT.match(event.name)
        if m is None:
            continue
        device = host_devices.get(event.host)
        step = step_of(event.start_ns)
        if device is None:
            _count(skipped, "op events on a host whose TensorFlow device is not known (no _Send names it)")
        elif step is None:
            _count(skipped, "op events outside every step")
        else:
            ops.append({"step": step, "device": device, "node_name": m["node"], "op_type": m["op"],
                        "start_ns": event.start_ns, "dur_ns": event.dur_ns, "lane": event.lane})
    return ops


def trace_from_events(events: Sequence[Event], source: str, skipped: dict[str, int], *,
                      source_format: str = "xplane", lost: Sequence[str] = ()) -> Trace:
    """The Trace the hosts' CPU-plane ``events`` make (module docstring), whatever file they came from;
    ``lost``: what the format lost beyond an XSpace's own losses."""
    sends, host_devices = _sends(events, skipped)
    step_name, windows = _steps(events, source)
    functions = _functions(events, skipped)
    step_fdefs = _step_functions(functions, step_name)
    variables: dict[str, Variable] = {}
    nodes: dict[str, Any] = {}
    for fdef in step_fdefs:
        for arg, variable in _variables(fdef, source).items():
            variables.setdefault(arg, variable)
        for node in fdef.node_def:
            nodes.setdefault(node.name, node)
    allocations = _allocations(events)

    # A profile that holds the step function's registration holds its first call: tracing, registration and
    # warm-up, one-time costs that no later step has. That call is left out of the steps.
    first_call = 0 if step_fdefs else -1

    def step_of(t: int) -> int | None:
        for i, (start, end) in enumerate(windows):
            if start <= t <= end:
                return None if i == first_call else i
        return None

    ops = _op_rows(events, host_devices, step_of, skipped)
    transfers, rendezvous, unsized = _transfers(sends, events, host_devices, step_of, (allocations, nodes,
                                                                                       variables), skipped)
    workers = {d for d in host_devices.values() if device_role(d) == "worker"}
    graph_nodes, graph_edges = partition_tables(step_fdefs, rendezvous, next(iter(workers)) if len(workers) == 1
                                                else None, skipped)
    if graph_nodes:  # runtime events named like ops (EagerService:Enqueue, ...) are no node of the step
        known = {(r["device"], r["node_name"]) for r in graph_nodes}
        kept = [r for r in ops if (r["device"], r["node_name"]) in known]
        if len(kept) < len(ops):
            _count(skipped, "op events of no node of the step function's graphs (runtime events)", len(ops) - len(kept))
        ops = kept
    first = {s: min((r["start_ns"] for r in ops + transfers if r["step"] == s), default=w[0])
             for s, w in enumerate(windows)}
    last = {s: max((r["start_ns"] + r["dur_ns"] for r in ops + transfers if r["step"] == s), default=w[1])
            for s, w in enumerate(windows)}
    steps = [{"step": s, "source": source, "start_ns": first[s], "end_ns": last[s]} for s in range(len(windows))
             if s != first_call]
    if first_call >= 0:
        _count(skipped, "steps that were the step function's first call (its registration: one-time costs)")
    ps_device = {r["src_device"] for r in transfers if r["direction"] == "pull"}
    variable_rows = [{"name": v.arg, "device": next(iter(ps_device)) if len(ps_device) == 1 else None,
                      "dtype": v.dtype, "shape": "x".join(map(str, v.dims)) or "scalar",
                      "n_elements": v.size_bytes // DTYPE_BYTES[v.dtype], "size_bytes": v.size_bytes}
                     for v in variables.values()]
    lost = [*(PS_LOST if not graph_nodes else PS_LOST[:1]), *lost]
    if not variables:
        lost.append(f"variables and their shapes: no host's profile holds the registration of the step function "
                    f"{quoted(step_name)} with its arguments' shapes (the PS's profile of its first call does)")
    else:
        lost.append("variable names (the profile names the step function's resource arguments, not variables)")
    if unsized:
        lost.append(f"sizes of {sum(unsized.values())} of {len(transfers)} transfers ({len(unsized)} tensors: "
                    f"{', '.join(sorted(unsized)[:6])}{', ...' if len(unsized) > 6 else ''}): no allocation event "
                    "or variable shape covers them")
    trace = trace_from(
        source, source=source, source_format=source_format,
        ops=make_table("ops", ops, where=source), transfers=make_table("transfers", transfers, where=source),
        graph_nodes=make_table("graph_nodes", graph_nodes, where=source),
        graph_edges=make_table("graph_edges", graph_edges, where=source),
        rendezvous=make_table("rendezvous", rendezvous, where=source),
        variables=make_table("variables", variable_rows, where=source),
        steps=make_table("steps", steps, where=source), lost=tuple(lost), skipped=skipped,
    )
    check_has_worker(trace)
    return trace


def _sends(events: Sequence[Event], skipped: dict[str, int]) -> tuple[list[_Send], dict[str, str]]:
    """The cross-task ``_Send`` events, and the TensorFlow device each host serves (when only one)."""
    sends: list[_Send] = []
    devices: dict[str, set[str]] = collections.defaultdict(set)
    for event in events:
        m = _OP_EVENT.match(event.name)
        if m is None or m["op"] not in SEND_OPS:
            continue
        key = event.stats.get("key")
        parts = key.split(";") if isinstance(key, str) else []
        if len(parts) != 5:
            raise TraceContentError(f"{event.where}: rendezvous key does not read 'SRC;INCARNATION;DST;TENSOR;"
                                    f"FRAME' (got {quoted(key)})")
        src, _, dst, tensor, _ = parts
        if "/job:" not in src or "/job:" not in dst or src == dst:
            _count(skipped, "_Send events within one task")
            continue
        devices[event.host].add(src)
        producer, consumer = event.stats.get("from"), event.stats.get("to")
        sends.append(_Send(event=event, node=m["node"], src=src, dst=dst, tensor=tensor,
                           producer=producer if isinstance(producer, str) else "",
                           consumer=consumer if isinstance(consumer, str) else ""))
    several = [h for h, d in devices.items() if len(d) > 1]
    if several:
        _count(skipped, "hosts serving several TensorFlow tasks (their ops are not attributed)", len(several))
    return sends, {h: next(iter(d)) for h, d in devices.items() if len(d) == 1}


def _steps(events: Sequence[Event], source: str) -> tuple[str, list[tuple[int, int]]]:
    """The step function's name and its calls' [start, end] windows, in time order."""
    calls = [e for e in events if "tf_function_call" in e.stats]
    if calls:
        counts = collections.Counter(e.name for e in calls)
        name = max(counts, key=lambda n: (counts[n], -min(e.start_ns for e in calls if e.name == n)))
        return name, sorted((e.start_ns, e.end_ns) for e in calls if e.name == name)
    executes = [(m["name"], e) for e in events if e.name == "EagerExecute" and e.stats.get("is_func") == 1
                and isinstance(e.stats.get("eager_op"), str) and (m := _INFERENCE.match(e.stats["eager_op"]))]
    if executes:
        counts = collections.Counter(n for n, _ in executes)
        name = max(counts, key=lambda n: counts[n])
        return name, sorted((e.start_ns, e.end_ns) for n, e in executes if n == name)
    raise TraceContentError(f"{source}: no step events: no tf.function call on a python line (stat "
                            "'tf_function_call') and no EagerExecute of a function")


def _step_functions(functions: dict[str, Any], step_name: str) -> list[Any]:
    """The registered FunctionDefs of the step function: the whole function first, then its components."""
    found = [(m["part"] or "", name) for name in functions if (m := _INFERENCE.match(name)) and m["name"] == step_name]
    return [functions[name] for _, name in sorted(found)]


def _allocations(events: Sequence[Event]) -> dict[tuple[str, str], set[int]]:
    """``requested_bytes`` of the output allocations of each (host, op) that TensorFlow recorded."""
    out: dict[tuple[str, str], set[int]] = collections.defaultdict(set)
    for event in events:
        if event.name != "MemoryAllocation":
            continue
        op, requested = event.stats.get("tf_op"), event.stats.get("requested_bytes")
        if isinstance(op, str) and op and isinstance(requested, int) and 0 < requested <= MAX_SIZE_BYTES \
                and event.stats.get("region_type", "output") == "output":
            out[(event.host, op)].add(requested)
    return out


def _size(send: _Send, sizes: tuple[dict[tuple[str, str], set[int]], dict[str, Any], dict[str, Variable]]
          ) -> int | None:
    """Bytes of the tensor ``send`` carries, from what the profile holds; None when nothing says."""
    allocations, nodes, variables = sizes
    seen = allocations.get((send.event.host, send.producer), set())
    if len(seen) == 1:
        return next(iter(seen))
    producer, consumer = nodes.get(send.producer), nodes.get(send.consumer)
    if producer is not None and producer.op == "ReadVariableOp" and producer.input:
        variable = variables.get(_node_name(producer.input[0]))
        if variable is not None:
            return variable.size_bytes
    if consumer is not None and consumer.op in DENSE_UPDATES:
        slot = DENSE_UPDATES[consumer.op]
        if len(consumer.input) > slot and _node_name(consumer.input[slot]) == send.producer:
            variable = variables.get(_node_name(consumer.input[0]))
            if variable is not None:
                return variable.size_bytes
    return None


def _transfers(sends: Sequence[_Send], events: Sequence[Event], host_devices: dict[str, str], step_of: Any,
               sizes: Any, skipped: dict[str, int]) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                             dict[str, int]]:
    recvs: dict[tuple[str, str], list[Event]] = collections.defaultdict(list)
    asked: dict[tuple[str, str], list[int]] = collections.defaultdict(list)  # (host, _Recv node) -> its starts
    for event in events:
        name = event.stats.get("name")
        if event.stats.get("kernel_type") != "_Recv" or not isinstance(name, str) or event.host not in host_devices:
            continue
        if event.name == "ExecutorState::ProcessAsync::Done":
            recvs[(host_devices[event.host], name.rsplit("/_", 1)[0])].append(event)
        elif event.name == "ExecutorState::ProcessAsync::Start":
            asked[(event.host, name)].append(event.start_ns)
    used: set[int] = set()
    rows: list[dict[str, Any]] = []
    pairs: dict[tuple[str, str, str], dict[str, Any]] = {}
    unsized: dict[str, int] = collections.Counter()
    for send in sorted(sends, key=lambda s: s.event.start_ns):
        step = step_of(send.event.start_ns)
        if step is None:
            _count(skipped, "_Send events outside every step")
            continue
        start = send.event.start_ns
        done = next((r for r in sorted(recvs.get((send.dst, send.producer), []), key=lambda r: r.end_ns)
                     if r.end_ns >= start and id(r) not in used), None)
        if done is None:
            _count(skipped, "transfers timed by their _Send alone (no matching _Recv done on the receiving host)")
            dur = send.event.dur_ns
        else:
            used.add(id(done))
            # the tensor moves once the receiver asks for it (its _Recv starts), not when the sender has it
            begun = [t for t in asked.get((done.host, done.stats["name"]), []) if t <= done.start_ns]
            start = max(start, max(begun, default=start))
            dur = done.end_ns - start
        size = _size(send, sizes)
        if size is None:
            unsized[send.tensor] += 1
        rows.append({"step": step, "tensor_name": send.tensor, "src_device": send.src, "dst_device": send.dst,
                     "direction": direction_of(send.src, send.dst), "size_bytes": size, "start_ns": start,
                     "dur_ns": min(dur, MAX_DUR_NS)})
        pair = pairs.setdefault((send.tensor, send.src, send.dst), {
            "tensor_name": send.tensor, "send_device": send.src, "recv_device": send.dst, "send_node": send.node,
            "recv_node": None, "direction": direction_of(send.src, send.dst)})
        if done is not None:
            pair["recv_node"] = done.stats["name"]
    return rows, list(pairs.values()), dict(unsized)
