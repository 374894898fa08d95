"""Chrome trace JSON (chrome://tracing, Perfetto), both ways.

Reading understands two dialects:
- TensorFlow's timeline (``timeline.Timeline(step_stats).generate_chrome_trace_format()``): one step per file,
  ``pid`` resolved through ``process_name`` metadata (``"<device> Compute"``), ops as ``ph: "X"`` with
  ``args.name``/``args.op``/``args.inputN``. It is lossy: ``RecvTensor`` events carry no tensor name, size or
  source, so those stay ``<NA>`` and ``Trace.lost`` says so; op inputs become graph edges of the ops that ran.
- Our own (written by :func:`write_trace`): every value of the Trace in ``args`` and a top-level ``tracegen``
  object with the graph tables, so reading it back gives an equal Trace.

Writing streams events to disk through :class:`ChromeWriter` (memory does not grow with the trace); the
caller puts slices on named tracks and must not overlap slices on one track (Perfetto drops them):
:func:`assign_lanes` spreads overlapping intervals over the fewest tracks. Times are integer ns inside and
exact decimal microseconds (three decimals) in the file.
"""

from __future__ import annotations

import contextlib
import gzip
import heapq
import io
import json
import os
import pathlib
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from types import TracebackType
from typing import IO, Any

import pandas as pd

from parsers.atomic import open_atomic
from parsers.errors import TraceContentError, TraceFormatError, quoted
from parsers.jsondoc import load_json
from parsers.labels import split_input
from parsers.limits import MAX_RECORDS
from parsers.trace import (
    BOUNDS,
    DIRECTIONS,
    MAX_DUR_NS,
    MAX_STEP,
    MAX_TIME_NS,
    NULLABLE_TEXT,
    ONCE_EACH,
    SCHEMAS,
    Locate,
    Trace,
    device_role,
    direction_of,
    make_table,
    outside_step,
    printable,
    read_once,
    repeated_record,
    row_contradiction,
    source_of,
    step_fault,
    trace_from,
)

OWN_FORMAT_VERSION = 1
TF_LOST = (
    "transfer tensor names (TF timeline RecvTensor events carry none)",
    "transfer sizes in bytes",
    "transfer source devices (direction inferred from the receiving device's job)",
    "variables and their shapes",
    "rendezvous (_Send/_Recv) pairs linking transfers to the ops that wait for them",
    "graph nodes that did not run in the traced step",
    "some control dependencies (the timeline lists data inputs and only part of the control inputs)",
)
_MAX_US = Decimal(MAX_TIME_NS) / 1000  # exact: 4611686018427387.904
_PID_BOUNDS = (-(2**31), 2**31 - 1)
_INT64 = 2**63


# ----------------------------------------------------------------------------------------------- writing


def format_us(ns: int) -> str:
    """Integer ns as an exact decimal microsecond literal: 1234567 → ``1234.567``."""
    sign = "-" if ns < 0 else ""
    q, r = divmod(abs(int(ns)), 1000)
    return f"{sign}{q}.{r:03d}"


def json_text(value: Any) -> str:
    """``value`` as JSON text, spelled as every event is (``json.dumps``: ASCII, ``\\uXXXX`` escapes, ``", "``
    and ``": "`` separators): a pre-encoded name for :meth:`ChromeWriter.encoded_slice` and ``encoded_flow``."""
    return json.dumps(value)


def json_members(args: Mapping[str, Any]) -> str:
    """The members of the object ``args``, without its braces, in its order: ``"step": 3, "lane": 0`` (empty for
    none). Pre-encoded args for :meth:`ChromeWriter.encoded_slice`, which joins several such parts."""
    return json.dumps(dict(args))[1:-1]


class ChromeWriter:
    """Stream Chrome trace events to ``path``; the file appears atomically when the block ends cleanly, gzipped
    when its name ends in ``.gz`` (the same bytes for the same events: no time in the gzip header).

    Processes and tracks are named; their ``pid``/``tid`` are given in order of first use, with
    ``process_name``/``thread_name`` metadata and sort indexes so viewers keep that order.

    :meth:`slice` and :meth:`flow` take plain values. A writer of many alike events (a synthetic trace: the same
    names every step) may encode each constant once and hand over the JSON text instead, through
    :meth:`track_ids`, :meth:`encoded_slice` and :meth:`encoded_flow` with :func:`json_text` and
    :func:`json_members`; both routes spell an event the same, byte for byte.
    """

    _FLUSH_EVENTS = 4096  # events held before one write: a write per event was a tenth of the time

    def __init__(self, path: str | os.PathLike[str], *, extra: Mapping[str, Any] | None = None) -> None:
        self._path = pathlib.Path(path)
        self._extra = extra
        self._pids: dict[str, int] = {}
        self._tracks: dict[str, int] = {}  # tracks per process so far: the next one's tid (counting was quadratic)
        self._ids: dict[tuple[str, str], str] = {}  # (process, track) → its encoded '"pid": P, "tid": T'
        self._fh: IO[str] | None = None
        self._cm = contextlib.ExitStack()
        self._first = True
        self._held: list[str] = []  # events not yet written

    def __enter__(self) -> ChromeWriter:
        fh: IO[str]
        if self._path.name.endswith(".gz"):  # named gzip, read back as gzip: plain JSON there was refused by gunzip
            raw = self._cm.enter_context(open_atomic(self._path, "wb"))
            fh = self._cm.enter_context(io.TextIOWrapper(gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0),
                                                         encoding="utf-8"))
        else:
            fh = self._cm.enter_context(open_atomic(self._path, "w"))
        fh.write('{"displayTimeUnit": "ns", "traceEvents": [\n')
        self._fh = fh
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if kind is None and self._fh is not None:
            self._flush()
            self._fh.write("\n]")
            if self._extra is not None:
                # a source path that is not UTF-8 as its escape: a lone surrogate would not read back
                self._fh.write(', "tracegen": ' + json.dumps(printable(self._extra), sort_keys=True))
            self._fh.write("}\n")
        self._cm.__exit__(kind, exc, tb)

    def _flush(self) -> None:
        """Write the held events, one per line, separated by commas."""
        assert self._fh is not None  # noqa: S101 - internal invariant: used inside the with block
        if self._held:
            self._fh.write(("" if self._first else ",\n") + ",\n".join(self._held))
            self._first = False
            self._held.clear()

    def _emit(self, event: str) -> None:
        held = self._held
        held.append(event)
        if len(held) >= self._FLUSH_EVENTS:
            self._flush()

    def track_ids(self, process: str, track: str) -> str:
        """The encoded ``"pid": P, "tid": T`` of ``process``/``track`` for :meth:`encoded_slice`. A new process or
        track is numbered and its metadata written now: ask for it just before its first event."""
        ids = self._ids.get((process, track))
        if ids is not None:
            return ids
        pid = self._pids.get(process)
        if pid is None:
            pid = self._pids[process] = len(self._pids) + 1
            self._emit(json.dumps({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                                   "args": {"name": process}}))
            self._emit(json.dumps({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                                   "args": {"sort_index": pid}}))
        tid = self._tracks[process] = self._tracks.get(process, 0) + 1
        self._emit(json.dumps({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                               "args": {"name": track}}))
        self._emit(json.dumps({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                               "args": {"sort_index": tid}}))
        ids = self._ids[(process, track)] = json_members({"pid": pid, "tid": tid})
        return ids

    def slice(self, *, process: str, track: str, name: str, start_ns: int, dur_ns: int, cat: str = "op",
              args: Mapping[str, Any] | None = None) -> None:
        """A complete event (``ph: "X"``) on ``process``/``track``."""
        self.encoded_slice(self.track_ids(process, track), json.dumps(name), int(start_ns), int(dur_ns),
                           json.dumps(cat), (json_members(args or {}),))

    def encoded_slice(self, ids: str, name: str, start_ns: int, dur_ns: int, cat: str, args: Sequence[str]) -> None:
        """:meth:`slice` from JSON text: ``ids`` from :meth:`track_ids`, ``name`` and ``cat`` from
        :func:`json_text`, ``args`` the parts of the args object from :func:`json_members` (empty ones left out);
        the times are ``int``."""
        if start_ns >= 0 and dur_ns >= 0:  # format_us's digits, a third faster: this runs for every event
            ts, dur = "%d.%03d" % divmod(start_ns, 1000), "%d.%03d" % divmod(dur_ns, 1000)  # noqa: UP031
        else:
            ts, dur = format_us(start_ns), format_us(dur_ns)
        held = self._held
        held.append(f'{{"ts": {ts}, "dur": {dur}, "ph": "X", "cat": {cat}, "name": {name}, {ids}, '
                    f'"args": {{{", ".join(args)}}}}}')
        if len(held) >= self._FLUSH_EVENTS:
            self._flush()

    def flow(self, *, flow_id: int, name: str, src: tuple[str, str, int], dst: tuple[str, str, int]) -> None:
        """A flow arrow from the slice enclosing ``src`` = (process, track, ts_ns) to the one at ``dst`` (a new
        track at either end is numbered before either end is written)."""
        src_ids = self.track_ids(src[0], src[1])
        self.encoded_flow(int(flow_id), json.dumps(name), (src_ids, int(src[2])),
                          (self.track_ids(dst[0], dst[1]), int(dst[2])))

    def encoded_flow(self, flow_id: int, name: str, src: tuple[str, int], dst: tuple[str, int]) -> None:
        """:meth:`flow` from JSON text: ``name`` from :func:`json_text`, ``src`` and ``dst`` as (ids from
        :meth:`track_ids`, ts_ns), ``flow_id`` an ``int``."""
        (src_ids, src_ns), (dst_ids, dst_ns) = src, dst
        if src_ns >= 0 and dst_ns >= 0:
            src_ts, dst_ts = "%d.%03d" % divmod(src_ns, 1000), "%d.%03d" % divmod(dst_ns, 1000)  # noqa: UP031
        else:
            src_ts, dst_ts = format_us(src_ns), format_us(dst_ns)
        head = f'"cat": "flow", "name": {name}, "id": {flow_id}'
        held = self._held
        held.append(f'{{"ts": {src_ts}, "ph": "s", {head}, {src_ids}}}')
        held.append(f'{{"ts": {dst_ts}, "ph": "f", {head}, {dst_ids}, "bp": "e"}}')
        if len(held) >= self._FLUSH_EVENTS:
            self._flush()


def transfer_track(direction: str, lane: int, link: str = "") -> str:
    """Name of a transfer track: ``pulls 0``, ``pushes 1``, ``others 0``; with ``link`` (e.g. ``ps1``) between, one
    set per link: ``pulls ps1 0``."""
    plural = "pushes" if direction == "push" else f"{direction}s"
    return f"{plural} {link} {lane}" if link else f"{plural} {lane}"


def assign_lanes(starts_ns: Sequence[int], ends_ns: Sequence[int]) -> list[int]:
    """Lane per interval so that intervals on one lane never overlap, using the fewest lanes (greedy)."""
    order = sorted(range(len(starts_ns)), key=lambda i: (starts_ns[i], ends_ns[i], i))
    lanes = [0] * len(starts_ns)
    busy: list[tuple[int, int]] = []  # (end_ns, lane)
    free: list[int] = []
    n_lanes = 0
    for i in order:
        while busy and busy[0][0] <= starts_ns[i]:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane = heapq.heappop(free)
        else:
            lane, n_lanes = n_lanes, n_lanes + 1
        lanes[i] = lane
        heapq.heappush(busy, (ends_ns[i], lane))
    return lanes


def _none_if_na(value: Any) -> Any:
    """A JSON-ready scalar: ``None`` for a missing value, plain ``int``/``str`` for numpy and pandas ones."""
    if value is None or value is pd.NA:
        return None
    return value.item() if hasattr(value, "item") else value


def _table_json(frame: pd.DataFrame) -> dict[str, Any]:
    rows = [[_none_if_na(v) for v in row] for row in frame.itertuples(index=False, name=None)]
    return {"columns": list(frame.columns), "rows": rows}


def write_trace(trace: Trace, path: str | os.PathLike[str]) -> None:
    """Write ``trace`` as Chrome JSON that Perfetto loads and that :func:`read_chrome` reads back equal."""
    extra = {
        "format_version": OWN_FORMAT_VERSION, "source": trace.source, "source_format": trace.source_format,
        "lost": list(trace.lost), "skipped": dict(trace.skipped),
        "tables": {n: _table_json(getattr(trace, n)) for n in ("graph_nodes", "graph_edges", "rendezvous",
                                                               "variables", "steps")},
    }
    ops, transfers = trace.ops, trace.transfers
    op_lanes = _display_lanes(ops, ["device"])
    transfer_lanes = _display_lanes(transfers, ["dst_device", "direction"])
    with ChromeWriter(path, extra=extra) as out:  # rows in table order, so reading back gives equal tables
        for lane, op in zip(op_lanes, ops.to_dict("records"), strict=True):
            out.slice(process=str(op["device"]), track=f"ops {lane}", name=str(_none_if_na(op["op_type"]) or "?"),
                      start_ns=int(op["start_ns"]), dur_ns=int(op["dur_ns"]), cat="op",
                      args={k: _none_if_na(op[k]) for k in ("node_name", "op_type", "step", "lane")})
        for lane, xfer in zip(transfer_lanes, transfers.to_dict("records"), strict=True):
            out.slice(process=str(xfer["dst_device"]), track=transfer_track(str(xfer["direction"]), lane),
                      name=str(_none_if_na(xfer["tensor_name"]) or "RecvTensor"),
                      start_ns=int(xfer["start_ns"]), dur_ns=int(xfer["dur_ns"]), cat="transfer",
                      args={k: _none_if_na(xfer[k]) for k in ("tensor_name", "src_device", "dst_device",
                                                               "direction", "size_bytes", "step")})


def _display_lanes(frame: pd.DataFrame, keys: list[str]) -> list[int]:
    """Per row, a lane within its ``keys`` group such that rows on one lane never overlap in time.

    Trace tables have a RangeIndex (``make_table`` resets it), so index labels are row positions.
    """
    lanes = [0] * len(frame)
    for _, group in frame.groupby(keys, sort=False):
        positions = [int(i) for i in group.index]
        ends = group["start_ns"] + group["dur_ns"]
        for pos, lane in zip(positions, assign_lanes(list(group["start_ns"]), list(ends)), strict=True):
            lanes[pos] = lane
    return lanes


# ----------------------------------------------------------------------------------------------- reading


def load_events(data: bytes, source: str) -> tuple[list[Any], dict[str, Any]]:
    """Parse Chrome JSON bytes into (events, top-level object); errors name the line and column."""
    doc = load_json(data, source)
    if isinstance(doc, list):
        events, top = doc, {}
    elif isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        events, top = doc["traceEvents"], doc
    else:
        raise TraceFormatError(f"{source}: JSON is not a Chrome trace (no 'traceEvents' list at the top)")
    if len(events) > MAX_RECORDS:
        raise TraceFormatError(f"{source}: {len(events)} trace events, more than the limit of {MAX_RECORDS}")
    return events, top


def _integer(value: Any, bounds: tuple[int, int], where: str, key: str = "") -> int:
    """``value`` if it is a JSON integer within ``bounds``; else TraceContentError naming ``where`` + ``key``."""
    if isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
        raise TraceContentError(f"{where}{key} must be an integer from {bounds[0]} to {bounds[1]} "
                                f"(got {quoted(value)})")
    return value


def _text(value: Any, where: str, key: str = "", *, nullable: bool = False) -> Any:
    """``value`` if it is a JSON string (or null, when ``nullable``); else TraceContentError naming ``where``
    + ``key`` (the key is joined only on error: this runs for every event)."""
    if not isinstance(value, str) and not (nullable and value is None):
        raise TraceContentError(f"{where}{key} must be a string{' or null' if nullable else ''} "
                                f"(got {quoted(value)})")
    return value


def _ns(value: Any, what: str, where: str) -> int:
    """A Chrome ``ts``/``dur`` in µs (an integer or a decimal) as integer ns in ``[0, MAX_TIME_NS)``."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise TraceContentError(f"{where}: '{what}' must be a number (got {quoted(value)})")
    if not 0 <= value < _MAX_US:  # compared before scaling: 1e999999999 µs must not become an integer
        raise TraceContentError(f"{where}: '{what}' out of range: from 0 to below 2**62 ns expected "
                                f"(got {quoted(value)} µs)")
    return int(value * 1000)


def _span(event: dict[str, Any], where: str) -> dict[str, int]:
    """The event's ``start_ns`` and ``dur_ns``: ending before 2**62 ns, lasting at most 2**52 ns."""
    start_ns, dur_ns = _ns(event.get("ts"), "ts", where), _ns(event.get("dur"), "dur", where)
    if dur_ns > MAX_DUR_NS or start_ns + dur_ns >= MAX_TIME_NS:
        raise TraceContentError(f"{where}: 'dur' out of range: at most 2**52 ns, ending before 2**62 ns expected "
                                f"(got ts {quoted(event.get('ts'))}, dur {quoted(event.get('dur'))} µs)")
    return {"start_ns": start_ns, "dur_ns": dur_ns}


def read_chrome(data: bytes, source: str) -> Trace:
    """Read one Chrome JSON trace (TensorFlow's timeline or our own) into a Trace."""
    events, doc = load_events(data, source)
    return chrome_from_events(events, doc, source)


def chrome_from_events(events: list[Any], doc: dict[str, Any], source: str) -> Trace:
    """:func:`read_chrome` of an already parsed file: its ``traceEvents`` and top-level object."""
    if "tracegen" in doc:
        return _read_own(events, doc["tracegen"], source)
    return _read_tf(events, source)


def _process_names(events: Sequence[Any], source: str) -> dict[int, str]:
    """``pid`` → name, from the ``process_name`` metadata events."""
    names: dict[int, str] = {}
    for i, e in enumerate(events):
        if isinstance(e, dict) and e.get("ph") == "M" and e.get("name") == "process_name":
            where = f"{source}: traceEvents[{i}]"
            pid = _integer(e.get("pid"), _PID_BOUNDS, where, ".pid")
            args = e.get("args")
            if not isinstance(args, dict):
                raise TraceContentError(f"{where}.args must be an object holding 'name' (got {quoted(args)})")
            names[pid] = _text(args.get("name"), where, ".args.name")
    return names


_TF_PHASES = frozenset({"X", "M", "s", "t", "f"})  # what TF's timeline writes: ops, metadata, flow arrows
_NO_PHASE = "events without a phase ('ph')"
_OTHER_PHASE = "events of phases other than complete ('X'), metadata ('M') and flows ('s', 't', 'f')"


def _complete_events(events: Sequence[Any], source: str,
                     skipped: dict[str, int] | None = None) -> Iterable[tuple[dict[str, Any], str]]:
    """The complete ('X') events, each with where it is. A 'ph' that is not text is refused: an op whose 'ph' was
    null was dropped without a word. With ``skipped``, events of no phase (the empty ``{}`` a trace viewer's file
    ends with) or of a phase TF's timeline does not write ('B', 'i') are counted there, as other events not read
    are."""
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            raise TraceContentError(f"{source}: traceEvents[{i}] is not an object (got {type(e).__name__})")
        ph = e.get("ph")
        if "ph" in e and not isinstance(ph, str):
            raise TraceContentError(f"{source}: traceEvents[{i}].ph must be a string naming the event's phase, 'X' "
                                    f"for an op (got {quoted(ph)})")
        if ph == "X":
            yield e, f"{source}: traceEvents[{i}]"
        elif skipped is not None and ph not in _TF_PHASES:
            reason = _NO_PHASE if ph is None else _OTHER_PHASE
            skipped[reason] = skipped.get(reason, 0) + 1


def _args(event: dict[str, Any], where: str) -> dict[str, Any]:
    args = event.get("args", {})
    if not isinstance(args, dict):
        raise TraceContentError(f"{where}.args must be an object (got {quoted(args)})")
    return args


def _read_tf(events: Sequence[Any], source: str) -> Trace:
    processes = _process_names(events, source)
    ops: list[dict[str, Any]] = []
    transfers: list[dict[str, Any]] = []
    nodes: dict[tuple[str, str], str] = {}
    edges: dict[tuple[str, str, int, str], str] = {}
    skipped: dict[str, int] = {}
    n_complete = 0
    for e, where in _complete_events(events, source, skipped):
        n_complete += 1
        process = processes.get(_integer(e.get("pid"), _PID_BOUNDS, where, ".pid"), "")
        if not process.endswith(" Compute"):
            skipped["events outside '<device> Compute' processes"] = (
                skipped.get("events outside '<device> Compute' processes", 0) + 1)
            continue
        device = process[: -len(" Compute")]
        span = _span(e, where)
        args = _args(e, where)
        name = _text(e.get("name"), where, ".name")
        lane = _integer(e.get("tid", 0), BOUNDS["ops"]["lane"], where, ".tid")
        if name == "RecvTensor":
            transfers.append({"step": 0, "tensor_name": None, "src_device": None, "dst_device": device,
                              "direction": direction_of(None, device), "size_bytes": None, "lane": lane} | span)
            continue
        node_name = _text(args.get("name", name), where, ".args.name")
        op_type = _text(args.get("op", name), where, ".args.op")
        ops.append({"step": 0, "device": device, "node_name": node_name, "op_type": op_type, "lane": lane} | span)
        nodes.setdefault((device, node_name), op_type)
        for src, slot in _inputs(args, where):
            edges.setdefault((device, src, slot, node_name), "control" if slot < 0 else "data")
    if n_complete == 0:
        raise TraceContentError(f"{source}: Chrome trace has no complete ('X') events")
    if not ops and not transfers:
        raise TraceContentError(f"{source}: no events in any '<device> Compute' process: not a TF timeline")
    # an event repeated exactly is read once; two transfers of one moment on two threads are two ('lane' is
    # no column of the transfers table, and is left out of it)
    ops, transfers = read_once(ops, skipped), read_once(transfers, skipped)
    starts = [r["start_ns"] for r in ops + transfers]
    ends = [r["start_ns"] + r["dur_ns"] for r in ops + transfers]
    trace = trace_from(
        source, _locator(events, source), source=source, source_format="tf-timeline-json",
        ops=make_table("ops", ops, where=source), transfers=make_table("transfers", transfers, where=source),
        graph_nodes=make_table("graph_nodes", [{"device": d, "node_name": n, "op_type": t}
                                               for (d, n), t in nodes.items()], where=source),
        graph_edges=make_table("graph_edges", [{"device": d, "src_node": s, "src_output": o, "dst_node": n,
                                                "kind": k} for (d, s, o, n), k in edges.items()], where=source),
        rendezvous=make_table("rendezvous", []), variables=make_table("variables", []),
        steps=make_table("steps", [{"step": 0, "source": source, "start_ns": min(starts), "end_ns": max(ends)}],
                         where=source),
        lost=TF_LOST, skipped=skipped,
    )
    if not any(device_role(d) == "worker" for d in trace.devices):
        raise TraceContentError(f"{source}: no device of job 'worker' in the trace (devices: "
                                f"{quoted(', '.join(trace.devices), 120)})")
    return trace


def _locator(events: Sequence[Any], source: str) -> Locate:
    """Where in ``events`` a TF timeline's op or transfer row was read from: ``SOURCE: traceEvents[22]``."""
    def locate(table: str, record: Mapping[str, Any]) -> str | None:
        wanted = record["node_name"] if table == "ops" else "RecvTensor"
        for e, where in _complete_events(events, source):
            args = e.get("args")
            if not isinstance(args, dict):
                args = {}
            if (args.get("name", e.get("name")) if table == "ops" else e.get("name")) != wanted:
                continue
            with contextlib.suppress(TraceContentError):  # an event not read (another process's): not this one
                if _span(e, where) == {"start_ns": record["start_ns"], "dur_ns": record["dur_ns"]}:
                    return where
        return None
    return locate


def _inputs(args: dict[str, Any], where: str) -> Iterable[tuple[str, int]]:
    """The op's inputs, ``args.input0``, ``args.input1``, ... as (node, slot); slot -1 for a control input."""
    k = 0
    while f"input{k}" in args:
        text = _text(args[f"input{k}"], where, f".args.input{k}")
        parsed = split_input(text)
        if parsed is None:
            raise TraceContentError(f"{where}.args.input{k} {quoted(text)} is not NAME, NAME:SLOT or ^NAME")
        yield parsed
        k += 1


# Our own dialect: what each event's args and each table's cells must hold, by the schema's dtypes.
_OP_ARGS = ("node_name", "op_type", "step", "lane")
_TRANSFER_ARGS = ("tensor_name", "src_device", "dst_device", "direction", "size_bytes", "step")
_ARG_KEYS = {k: f".args.{k}" for k in _OP_ARGS + _TRANSFER_ARGS}
_NULLABLE = {(table, column) for table, columns in NULLABLE_TEXT.items() for column in columns} | {
    ("transfers", "size_bytes")}


def _cell(table: str, column: str, value: Any, where: str, key: str) -> Any:
    """``value`` checked against ``table.column``'s dtype and bounds: a string, or an integer in range."""
    dtype = SCHEMAS[table][column]
    nullable = (table, column) in _NULLABLE
    if dtype == "string":
        return _text(value, where, key, nullable=nullable)
    if nullable and value is None:
        return None
    return _integer(value, BOUNDS[table].get(column, (-_INT64, _INT64 - 1)), where, key)


def _read_own(events: Sequence[Any], extra: Any, source: str) -> Trace:
    if isinstance(extra, dict) and "format_version" not in extra:  # not 'format_version None': the file has none
        raise TraceFormatError(f"{source}: tracegen.format_version is missing (this reader knows format_version "
                               f"{OWN_FORMAT_VERSION})")
    version = extra.get("format_version") if isinstance(extra, dict) else extra
    if isinstance(version, bool) or version != OWN_FORMAT_VERSION:
        raise TraceFormatError(f"{source}: unsupported tracegen Chrome format_version {quoted(version)}")
    processes = _process_names(events, source)
    ops: list[dict[str, Any]] = []
    transfers: list[dict[str, Any]] = []
    at: dict[str, list[str]] = {"ops": [], "transfers": []}  # each row's event
    for e, where in _complete_events(events, source):
        args = e.get("args")
        if not isinstance(args, dict):
            raise TraceContentError(f"{where}: tracegen event without 'args'")
        if e.get("cat") in ("op", "transfer"):
            at["ops" if e.get("cat") == "op" else "transfers"].append(where)
        if e.get("cat") == "op":
            pid = _integer(e.get("pid"), _PID_BOUNDS, where, ".pid")
            if pid not in processes:
                raise TraceContentError(f"{where}: pid {pid} has no process_name event naming its device")
            ops.append({k: _cell("ops", k, args.get(k), where, _ARG_KEYS[k]) for k in _OP_ARGS}
                       | {"device": processes[pid]} | _span(e, where))
        elif e.get("cat") == "transfer":
            row = {k: _cell("transfers", k, args.get(k), where, _ARG_KEYS[k]) for k in _TRANSFER_ARGS}
            if row["direction"] not in DIRECTIONS:
                raise TraceContentError(f"{where}.args.direction must be one of {', '.join(DIRECTIONS)} "
                                        f"(got {quoted(row['direction'])})")
            transfers.append(row | _span(e, where))
    tables = extra.get("tables") if isinstance(extra, dict) else None
    if not isinstance(tables, dict):
        raise TraceFormatError(f"{source}: 'tracegen.tables' missing")
    built = {name: _own_table(name, tables.get(name), source)
             for name in ("graph_nodes", "graph_edges", "rendezvous", "variables", "steps")}
    records = {"ops": make_table("ops", ops, where=source),
               "transfers": make_table("transfers", transfers, where=source)}
    header = {"source": source_of(source, _text(extra.get("source", source), f"{source}: tracegen.source")),
              "source_format": _text(extra.get("source_format", ""), f"{source}: tracegen.source_format"),
              "lost": _own_lost(extra.get("lost"), source), "skipped": _own_skipped(extra.get("skipped"), source)}
    _check_records(records, built, at, source)  # once the header is known good: its faults are named first
    return trace_from(source, **header, **records, **built)


def _check_records(records: dict[str, pd.DataFrame], built: dict[str, pd.DataFrame], at: dict[str, list[str]],
                   source: str) -> None:
    """Refuse what the tables' reader (:mod:`parsers.tables`) refuses, naming the event (``at``: each op's and
    transfer's) or the row: a record written twice, a transfer whose direction its devices contradict, a record
    of a step the steps table lacks or outside its step's span."""
    for name, frame in records.items():  # tracegen writes each record once
        if (repeat := repeated_record(name, frame)) is not None:
            first = at[name][repeat[1]].removeprefix(f"{source}: ")
            raise TraceContentError(f"{at[name][repeat[0]]}: repeats {first} exactly (tracegen writes each record "
                                    "once: was the file edited?)")
        if (contradiction := row_contradiction(name, frame)) is not None:  # a pull from a worker to the PS, ...
            raise TraceContentError(f"{at[name][contradiction[0]]}: {contradiction[1]}")
    for check in (step_fault, outside_step):  # the second once each step is listed once
        if (fault := check(records | built)) is not None:
            name, row, why = fault
            where = at[name][row] if name in at else f"{source}: tracegen.tables.{name}.rows[{row}]"
            raise TraceContentError(f"{where}: {why}")


def _own_table(name: str, table: Any, source: str) -> pd.DataFrame:
    """Table ``name`` from ``tracegen.tables``: its columns as documented, every cell of its column's type."""
    where = f"{source}: tracegen.tables.{name}"
    columns = list(SCHEMAS[name])
    if not isinstance(table, dict) or table.get("columns") != columns:
        raise TraceFormatError(f"{where} does not have the columns {columns}")
    rows = table.get("rows", [])
    if not isinstance(rows, list) or len(rows) > MAX_RECORDS:
        raise TraceFormatError(f"{where}.rows must be a list of at most {MAX_RECORDS} rows (got {quoted(rows)})")
    keys = [f" ({column})" for column in columns]
    for r, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(columns):
            raise TraceFormatError(f"{where}.rows[{r}] must be a list of {len(columns)} values (got {quoted(row)})")
        at = f"{where}.rows[{r}]"
        for column, key, value in zip(columns, keys, row, strict=True):
            _cell(name, column, value, at, key)
    frame = make_table(name, pd.DataFrame(rows, columns=columns), where=source,
                       position=lambda r: f"tracegen.tables.{name}.rows[{r}]")
    if name in ONCE_EACH and (repeat := repeated_record(name, frame)) is not None:
        raise TraceFormatError(f"{where}.rows[{repeat[0]}]: repeats rows[{repeat[1]}] exactly (tracegen writes each "
                               "record once: was the file edited?)")
    if (contradiction := row_contradiction(name, frame)) is not None:  # columns that say two things
        raise TraceContentError(f"{where}.rows[{contradiction[0]}]: {contradiction[1]}")
    return frame


def _own_lost(lost: Any, source: str) -> tuple[str, ...]:
    if lost is None:
        return ()
    if not isinstance(lost, list) or not all(isinstance(x, str) for x in lost):
        raise TraceFormatError(f"{source}: tracegen.lost must be a list of strings (got {quoted(lost)})")
    return tuple(lost)


def _own_skipped(skipped: Any, source: str) -> dict[str, int]:
    if skipped is None:
        return {}
    if not isinstance(skipped, dict):
        raise TraceFormatError(f"{source}: tracegen.skipped must be an object of counts (got {quoted(skipped)})")
    return {k: _integer(v, (0, MAX_STEP), f"{source}: tracegen.skipped.", k) for k, v in skipped.items()}
