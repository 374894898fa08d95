"""TensorBoard's trace-viewer JSON (``<host>.trace.json.gz``): the lossy fallback for a TF2 profile.

TensorBoard's profile plugin (``tensorboard_plugin_profile`` / ``xprof``) turns each host's ``.xplane.pb`` into a
Chrome trace for its trace viewer; older TensorFlow versions wrote that file, ``<host>.trace.json.gz``, beside or
instead of the XSpace. It is the XSpace's host plane flattened:

- a ``process_name`` metadata event names the plane (``/host:CPU``; devices' planes have names of their own),
  ``thread_name`` events the lines (``tf_Compute/<id>``: the line's name, then its id);
- every complete event (``ph: "X"``) is an XSpace event: ``name`` its op type or event name, ``args`` its stats,
  with ``long_name`` the full event name (``node/name:OpType``) where it differs; ``ts``/``dur`` in µs;
- instant events (``ph: "i"``: thread-pool records), counters and flow events carry nothing a step model uses.

So it is read by turning it back into the XSpace reader's events (:func:`parsers.xplane.trace_from_events`): ops,
``_Send`` transfers with their rendezvous keys, steps from the ``tf_function_call`` events. What it lost, beyond
what an XSpace already lacks, goes into ``Trace.lost``: times are relative to each host's profile start, so the
hosts' clocks are put onto one as an XSpace's are, as far as causality requires (:mod:`parsers.xplane`: each
tensor received after it was sent, each step run within its call), and what is left of their offsets lies within
what causality cannot tell; and the plugin drops ``MemoryAllocation`` events, so a transfer's size can come only
from the step function's registration.

Input: one such file (plain or gzipped), or a profile run directory / TensorBoard logdir holding them (when a run
also holds ``.xplane.pb`` files, those are read instead: they carry more).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from parsers.chrome import _PID_BOUNDS, _integer, _span, _text, load_events
from parsers.errors import TraceContentError, quoted
from parsers.trace import Trace
from parsers.xplane import trace_from_events
from parsers.xspace import HOST_PLANE, Event, host_name

HOST_CLOCKS_LOST = ("absolute times: each host's events count from its own profile start (the hosts are put onto "
                    "one clock as far as causality requires)")
VIEWER_LOST = (
    HOST_CLOCKS_LOST,
    "allocation events (the trace viewer drops MemoryAllocation): sizes only from variable shapes",
)


def clock_note(lost: Sequence[str]) -> str | None:
    """The one line a reader of a trace whose ``lost`` holds :data:`HOST_CLOCKS_LOST` is told (``inspect``,
    ``predict``), else None: the hosts' times were put onto one clock by causality alone, and what that leaves.
    ``Trace.lost`` alone said it as a property of the format, not as an assumption the numbers printed rest on
    (merged as they were, the bundled profile's steps read 11.0 and 9.8 ms, against 4.4 and 4.0 ms in its
    ``.xplane.pb``; put onto one clock, 4.3 and 4.0)."""
    if HOST_CLOCKS_LOST not in lost:
        return None
    return ("trace-viewer JSON: each host's times count from its own profile start, and were put onto one clock only "
            "as far as each tensor received after it was sent and each step run within its call require: a transfer "
            "between hosts may be timed short by what causality cannot tell (up to the shortest transfer each way); "
            "the hosts' .xplane.pb files, where there are any, keep epoch times: give those instead")


def is_trace_viewer(events: Sequence[Any]) -> bool:
    """Whether Chrome trace ``events`` are TensorBoard's trace viewer's: a process named ``/host:CPU``."""
    return any(isinstance(e, dict) and e.get("ph") == "M" and e.get("name") == "process_name"
               and isinstance(e.get("args"), dict) and e["args"].get("name") == HOST_PLANE for e in events)


def read_trace_viewer(contents: Sequence[tuple[str, bytes]], source: str) -> Trace:
    """Merge the hosts' trace-viewer files ``contents`` (path, bytes) of one profile into a Trace."""
    skipped: dict[str, int] = {}
    lanes: dict[tuple[str, int], int] = {}
    events: list[Event] = []
    for path, data in sorted(contents, key=lambda c: host_name(c[0])):
        events.extend(viewer_events(load_events(data, path)[0], host_name(path), path, lanes, skipped))
    return trace_from_events(events, source, skipped, source_format="trace-viewer", lost=VIEWER_LOST,
                             host_files={host_name(p): p for p, _ in contents})


def trace_from_viewer_events(events: Sequence[Any], source: str) -> Trace:
    """One trace-viewer file's parsed ``traceEvents`` (the file ``source``) as a Trace."""
    skipped: dict[str, int] = {}
    found = viewer_events(events, host_name(source), source, {}, skipped)
    return trace_from_events(found, source, skipped, source_format="trace-viewer", lost=VIEWER_LOST)


def viewer_events(raw: Sequence[Any], host: str, source: str, lanes: dict[tuple[str, int], int],
                  skipped: dict[str, int]) -> list[Event]:
    """The host-plane complete events of one trace-viewer file as XSpace events (module docstring)."""
    planes: dict[int, str] = {}
    lines: dict[tuple[int, int], str] = {}
    for i, e in enumerate(raw):
        if not isinstance(e, dict):
            raise TraceContentError(f"{source}: traceEvents[{i}] is not an object (got {type(e).__name__})")
        if e.get("ph") != "M" or e.get("name") not in ("process_name", "thread_name"):
            continue
        where = f"{source}: traceEvents[{i}]"
        args = e.get("args")
        if not isinstance(args, dict):
            raise TraceContentError(f"{where}.args must be an object holding 'name' (got {quoted(args)})")
        name = _text(args.get("name"), where, ".args.name")
        pid = _integer(e.get("pid"), _PID_BOUNDS, where, ".pid")
        if e["name"] == "process_name":
            planes[pid] = name
        else:
            lines[(pid, _integer(e.get("tid"), (0, 2**63 - 1), where, ".tid"))] = name.split("/", 1)[0]
    out: list[Event] = []
    for i, e in enumerate(raw):
        if e.get("ph") != "X":
            continue
        where = f"{source}: traceEvents[{i}]"
        pid = _integer(e.get("pid"), _PID_BOUNDS, where, ".pid")
        if planes.get(pid) != HOST_PLANE:
            reason = f"events on planes other than {HOST_PLANE} (devices)"
            skipped[reason] = skipped.get(reason, 0) + 1
            continue
        tid = _integer(e.get("tid"), (0, 2**63 - 1), where, ".tid")
        args = e.get("args", {})
        if not isinstance(args, dict):
            raise TraceContentError(f"{where}.args must be an object (got {quoted(args)})")
        stats = {k: v for k, v in args.items() if k != "long_name"}
        name = _text(args.get("long_name", e.get("name")), where, ".name")
        span = _span(e, where)
        lane = lanes.setdefault((host, pid * 2**63 + tid), len(lanes))
        out.append(Event(host=host, lane=lane, line_name=lines.get((pid, tid), ""), name=name,
                         start_ns=span["start_ns"], dur_ns=span["dur_ns"], stats=stats,
                         where=f"{where} ({quoted(name)})"))
    return out
