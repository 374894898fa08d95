"""A TF2 profile's files and their XSpace protobufs (``<host>.xplane.pb``), decoded into each host's events.

Input: one ``.xplane.pb`` file, a profile run directory (``plugins/profile/<run>/``, one file per profiled host)
or a TensorBoard logdir (its newest run). The schema is our own ``proto/xplane.proto`` (TensorFlow's field
numbers), so TensorFlow need not be installed.

Each host's ``/host:CPU`` plane (planes → lines, one per thread → events) becomes a list of :class:`Event`
(:mod:`parsers.xplane` turns the events into a Trace):

- times: an event starts ``offset_ps`` after its line's ``timestamp_ns``, which counts from the session's
  ``profile_start_time`` (a stat of the ``Task Environment`` plane, ns since the epoch; 0 when absent); both are
  converted here to integer nanoseconds on the epoch clock, the clock of every other reader;
- stats: resolved through the plane's ``stat_metadata`` (names, and ``ref_value`` strings), events' names through
  its ``event_metadata``; an id that the plane does not define is an error.
"""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from google.protobuf import message

from parsers.errors import TraceContentError, TraceFormatError, quoted
from parsers.files import expand, read_file, refuse_unreadable
from parsers.limits import MAX_FILES, SCAN_BYTES, check_wire_shape, check_wire_text
from parsers.proto import xplane_pb2 as pb
from parsers.trace import MAX_DUR_NS, MAX_TIME_NS

XPLANE_SUFFIXES = (".xplane.pb", ".xplane.pb.gz")
VIEWER_SUFFIXES = (".trace.json.gz", ".trace.json")  # TensorBoard's trace viewer's files (parsers.traceviewer)
# what a run directory's files end with: a plain .trace.json in a directory may as well be a TF1 timeline
PROFILE_SUFFIXES = (*XPLANE_SUFFIXES, VIEWER_SUFFIXES[0])
HOST_PLANE = "/host:CPU"
ENV_PLANE = "Task Environment"


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


def profile_runs(directory: pathlib.Path) -> list[pathlib.Path]:
    """The run directories of logdir ``directory`` that hold profile files, oldest first (run names are
    timestamps); none when ``directory`` is no logdir (no ``plugins/profile``), and an error when none of its runs
    holds a profile."""
    runs_dir = directory / "plugins" / "profile"
    if not runs_dir.is_dir():
        return []
    runs = sorted(p for p in _limited(runs_dir.iterdir(), str(runs_dir)) if p.is_dir())
    runs = [r for r in runs if any(p.name.endswith(PROFILE_SUFFIXES) for p in _limited(r.iterdir(), str(r)))]
    if not runs:
        raise TraceFormatError(f"{runs_dir}: no profile run holds a .xplane.pb or .trace.json.gz file")
    return runs


def profile_files(directory: pathlib.Path) -> list[pathlib.Path]:
    """The profile files of a run directory, or of a logdir's newest run (run names are timestamps): its
    ``.xplane.pb`` files, or its trace-viewer files when it has none."""
    runs = profile_runs(directory)
    if runs:
        directory = runs[-1]
    found = _limited(directory.iterdir(), str(directory))
    for p in found:
        if p.name.endswith(PROFILE_SUFFIXES):  # a host's profile left out would drop the host without a word
            refuse_unreadable(p)
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


def read_profile_files(files: Sequence[pathlib.Path], source: str, max_bytes: int) -> list[tuple[str, bytes]]:
    """(path, content) of each of a profile's ``files``, gunzipped; at most ``max_bytes`` together."""
    contents: list[tuple[str, bytes]] = []
    total = 0
    for path in files:
        data = read_file(path, max_bytes)
        data = expand(data, str(path), max_bytes)
        total += len(data)
        if total > max_bytes:
            raise TraceFormatError(f"{source}: the profile's files hold more than the limit of {max_bytes} bytes "
                                   "together")
        contents.append((str(path), data))
    hosts: dict[str, str] = {}
    for path_text, _ in contents:  # the same host twice (plain and gzipped) would count its every event twice
        if (host := host_name(path_text)) in hosts:
            raise TraceContentError(f"{source}: {hosts[host]} and {path_text} are both the profile of host "
                                    f"{host!r}; keep one of them")
        hosts[host] = path_text
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
        if "UTF-8" in str(exc):
            _check_wire(data, source, check_wire_text)  # the byte, the field and the bytes
        complaint = str(exc).split("': ", 1)[-1]
        raise TraceFormatError(f"{source}: not an XSpace protobuf: {complaint}") from None
    if not any(p.name == HOST_PLANE for p in space.planes):
        names = ", ".join(p.name for p in space.planes) or "none"
        raise TraceFormatError(f"{source}: not a TensorFlow profile: no {HOST_PLANE!r} plane (planes: "
                               f"{quoted(names, 120)})")
    return space


def _check_wire(data: bytes, source: str, check: Callable[[bytes, Any, str], None] = check_wire_shape) -> None:
    """``check`` (check_wire_shape, or check_wire_text), its complaint (with the byte) said to be about an XSpace."""
    try:
        check(data, pb.XSpace.DESCRIPTOR, source)
    except TraceFormatError as exc:
        raise TraceFormatError(f"{source}: not an XSpace protobuf: {str(exc).removeprefix(source + ': ')}") from None


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


def host_events(space: Any, source: str, lanes: dict[tuple[str, int], int], skipped: dict[str, int]) -> list[Event]:
    """The events of ``space``'s ``/host:CPU`` plane (the host is ``source``'s file name; ``lanes`` numbers each
    of its lines as it is first met); events on other planes are counted in ``skipped``."""
    host = host_name(source)
    base_ns = _profile_start_ns(space, source)
    out: list[Event] = []
    for p, plane in enumerate(space.planes):
        if plane.name != HOST_PLANE:
            n = sum(len(line.events) for line in plane.lines)
            if n:
                tally(skipped, f"events on planes other than {HOST_PLANE} (devices)", n)
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
                    tally(skipped, "aggregated events (num_occurrences, no time)")
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


def tally(skipped: dict[str, int], reason: str, n: int = 1) -> None:
    """Count ``n`` more records skipped for ``reason``."""
    skipped[reason] = skipped.get(reason, 0) + n
