"""The link profile: what ``tracegen netbench`` measured between a PS host and a client host, as JSON.

``link-profile.json`` (format ``tracegen-link-profile``, version 1) — every key is required unless marked::

    format      "tracegen-link-profile"
    version     1
    tool        what wrote it, e.g. "tracegen netbench 0.2.0"
    date        when, ISO 8601 UTC ("2026-12-01T10:00:00Z")
    ps          {"address": "10.0.0.1:2222", "host": "...", "cores": 2.0, "tensorflow": "2.21.0"}
                (``cores``: the CPU the PS may use, from 0.001 (what a CFS quota can enforce) to 4096, or null
                when unknown)
                (optional in ps: "cpu_quota": {"host_cores": 2.0, "period_us": 10000} when ``cores`` is a CFS
                quota -- cfs_quota_us / cfs_period_us of the PS's cgroup -- below the cores it may run on)
    client      {"address": "10.0.0.2", "host": "...", "cores": 2.0, "processes": 8}
    payload     {"tensors": 32, "tensor_bytes": 262144}     the most tensors a client step moves each way, and
                                                            their size (a point's steps may move fewer)
    window_s    the shortest measurement window, seconds (a point's own may be longer)
    idle_rtt_ns (optional, null when unknown) round trip of one small request (a 4-byte read) on the idle link
    points      a list, one per measurement:
                  mode              "pull" (k connections pulling), "push" (k pushing), "both"
                                    (k pulling and k more pushing, all at once), "cycle" (k pulling then
                                    pushing in turn, as workers do), "rpc_pull" / "rpc_push" (k moving
                                    many small tensors: requests, not bytes, count)
                  connections       k, >= 1: client processes per direction, each its own gRPC connection
                  pull_bytes_per_s  tensor bytes per second PS -> clients, summed over connections (>= 0;
                                    at least 125, 1 kbit/s, in the direction the mode measures: pull for
                                    pull and rpc_pull, push for push and rpc_push, both for both and cycle)
                  push_bytes_per_s  tensor bytes per second clients -> PS (>= 0; as pull_bytes_per_s)
                  ps_cpu_cores      (optional, null when unknown) CPU the PS process used, in cores
                  probe_rtt_ns      (optional, null when unknown) the small request's round trip meanwhile,
                                    at most the point's window (``window_s``, else the profile's)
                  window_s          (optional) this point's window, seconds
                  step_bytes        (optional) bytes one client step moved each way at this point
                  transfers_per_s   (optional) tensors moved per second, both directions together; at an
                                    rpc point the PS's CPU (ps_cpu_cores, else ps.cores) over it is its CPU
                                    per request, at most 1 s
    notes       (optional) list of strings

Rates are tensor payload: what TensorFlow's ``RecvTensor`` moved, not what the wire carried with headers.
Readers check every value and name the file and the key path of the first bad one. A key the schema does not name
is refused, in every object but ``client`` (which nothing reads): a misspelt optional key (``idle_rtt_us``) would
otherwise read as absent, and the link would be modelled without it, without a word.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping
from typing import Any

from parsers.atomic import write_bytes_atomic
from parsers.errors import TraceFormatError, counted, quoted
from parsers.files import read_expanded
from parsers.jsondoc import finite_float, load_json

FORMAT = "tracegen-link-profile"
VERSION = 1
MODES = ("pull", "push", "both", "cycle", "rpc_pull", "rpc_push")
PROFILE_NAME = "link-profile.json"  # the name a profile has beside a trace
MAX_PROFILE_BYTES = 1 << 20  # a profile is a few kB; anything this large is not one
MAX_POINTS = 1000
MAX_RATE_BYTES_PER_S = 10**15
MAX_CPU_CORES = 10_000.0  # of a host: the largest machines have a few thousand; more is a unit mixed up
# a PS's CPU: 1 ms per 1 s period, the least a CFS quota enforces; 1e-300 cores was read, and the PS's work per
# step became 1e+300 times its traced time: predict ran on without end
MIN_CPU_CORES = 0.001
# a point's rate in the direction it measured: 1 kbit/s, the least --bandwidth takes (tracegen.units); 5e-324 was
# read, and predict said 'the simulation is too short ... with 256 workers', naming neither the file nor the rate
MIN_RATE_BYTES_PER_S = 125.0
MAX_REQUEST_CPU_S = 1.0  # the PS's CPU per small-tensor request an rpc point implies (tracegen.link's bound too)
KEYS = ("format", "version", "tool", "date", "ps", "client", "payload", "window_s", "idle_rtt_ns", "points", "notes")
REQUIRED_KEYS = ("tool", "date", "ps", "client", "payload", "window_s", "points")
PS_KEYS = ("address", "host", "cores", "tensorflow", "cpu_quota")
PAYLOAD_KEYS = ("tensors", "tensor_bytes")
POINT_KEYS = ("mode", "connections", "pull_bytes_per_s", "push_bytes_per_s", "ps_cpu_cores", "probe_rtt_ns", "window_s",
              "step_bytes", "transfers_per_s")
QUOTA_KEYS = ("host_cores", "period_us")


class ProfileError(TraceFormatError):
    """A link profile that cannot be read or does not follow the schema."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ProfilePoint:
    """One measurement: ``connections`` clients per direction in ``mode``, and the rates they moved."""

    mode: str
    connections: int
    pull_bytes_per_s: float
    push_bytes_per_s: float
    ps_cpu_cores: float | None = None
    probe_rtt_ns: int | None = None
    window_s: float | None = None
    step_bytes: int | None = None
    transfers_per_s: float | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CpuQuota:
    """How a host's fractional CPU cap was enforced: a CFS quota renewed every ``period_us``, usable on up to
    ``host_cores`` cores at once."""

    host_cores: float
    period_us: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LinkProfile:
    """A whole ``link-profile.json`` (see the module docstring)."""

    tool: str
    date: str
    ps: Mapping[str, Any]
    client: Mapping[str, Any]
    tensors: int
    tensor_bytes: int
    window_s: float
    points: tuple[ProfilePoint, ...]
    idle_rtt_ns: int | None = None
    notes: tuple[str, ...] = ()
    source: str = ""
    cpu_quota: CpuQuota | None = None  # from ps.cpu_quota

    def of_mode(self, mode: str) -> tuple[ProfilePoint, ...]:
        """The points of ``mode``, by number of connections."""
        return tuple(sorted((p for p in self.points if p.mode == mode), key=lambda p: p.connections))


def profile_json(profile: LinkProfile) -> bytes:
    """The profile as JSON text (keys in schema order, so equal profiles give equal bytes)."""
    doc = {
        "format": FORMAT, "version": VERSION, "tool": profile.tool, "date": profile.date,
        "ps": dict(profile.ps), "client": dict(profile.client),
        "payload": {"tensors": profile.tensors, "tensor_bytes": profile.tensor_bytes},
        "window_s": profile.window_s, "idle_rtt_ns": profile.idle_rtt_ns,
        "points": [{"mode": p.mode, "connections": p.connections, "pull_bytes_per_s": round(p.pull_bytes_per_s, 1),
                    "push_bytes_per_s": round(p.push_bytes_per_s, 1),
                    "ps_cpu_cores": None if p.ps_cpu_cores is None else round(p.ps_cpu_cores, 4),
                    "probe_rtt_ns": p.probe_rtt_ns, "window_s": p.window_s, "step_bytes": p.step_bytes,
                    "transfers_per_s": None if p.transfers_per_s is None else round(p.transfers_per_s, 1)}
                   for p in profile.points],
        "notes": list(profile.notes),
    }
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def write_link_profile(profile: LinkProfile, path: str | os.PathLike[str]) -> None:
    """Write ``profile`` to ``path`` atomically."""
    write_bytes_atomic(path, profile_json(profile))


def read_link_profile(path: str | os.PathLike[str]) -> LinkProfile:
    """Read and check a ``link-profile.json`` (plain or gzipped); :class:`ProfileError` names the file and the bad
    key."""
    source = os.fspath(path)
    data = read_expanded(source, MAX_PROFILE_BYTES, ProfileError)
    return _profile_from(load_json(data, source, parse_float=finite_float, error=ProfileError), source)


def _profile_from(doc: Any, source: str) -> LinkProfile:
    c = Checker(source)
    c.header(doc, FORMAT, VERSION)
    c.known(doc, KEYS, "", REQUIRED_KEYS)
    payload = c.known(c.mapping(c.key(doc, "payload", ""), "payload"), PAYLOAD_KEYS, "payload", PAYLOAD_KEYS)
    points_raw = c.key(doc, "points", "")
    if not isinstance(points_raw, list) or not points_raw or len(points_raw) > MAX_POINTS:
        raise ProfileError(f"{source}: 'points' must be a list of 1 to {MAX_POINTS} measurements "
                           f"(got {_short(points_raw)})")
    points = []
    for i, raw in enumerate(points_raw):
        where = f"points[{i}]"
        c.known(c.mapping(raw, where), POINT_KEYS, where, POINT_KEYS[:4])
        mode = c.key(raw, "mode", where)
        if mode not in MODES:
            raise ProfileError(f"{source}: {where}.mode must be one of {', '.join(MODES)} (got {_short(mode)})")
        cpu, rtt, win = raw.get("ps_cpu_cores"), raw.get("probe_rtt_ns"), raw.get("window_s")
        sb, tps = raw.get("step_bytes"), raw.get("transfers_per_s")
        points.append(ProfilePoint(
            mode=mode, connections=c.integer(c.key(raw, "connections", where), f"{where}.connections", low=1,
                                             high=10_000),
            pull_bytes_per_s=c.number(c.key(raw, "pull_bytes_per_s", where), f"{where}.pull_bytes_per_s"),
            push_bytes_per_s=c.number(c.key(raw, "push_bytes_per_s", where), f"{where}.push_bytes_per_s"),
            ps_cpu_cores=None if cpu is None else c.number(cpu, f"{where}.ps_cpu_cores", high=MAX_CPU_CORES),
            probe_rtt_ns=None if rtt is None else c.integer(rtt, f"{where}.probe_rtt_ns", low=0, high=10**12),
            window_s=None if win is None else c.number(win, f"{where}.window_s", positive=True, high=86_400.0),
            step_bytes=None if sb is None else c.integer(sb, f"{where}.step_bytes", low=1, high=1 << 50),
            transfers_per_s=None if tps is None else c.number(tps, f"{where}.transfers_per_s")))
    seen: set[tuple[str, int]] = set()
    for i, pt in enumerate(points):
        if (pt.mode, pt.connections) in seen:
            raise ProfileError(f"{source}: points[{i}] repeats mode {pt.mode!r} with "
                               f"{counted(pt.connections, 'connection')}")
        seen.add((pt.mode, pt.connections))
        measured = {"pull": ("pull_bytes_per_s",), "rpc_pull": ("pull_bytes_per_s",), "push": ("push_bytes_per_s",),
                    "rpc_push": ("push_bytes_per_s",)}.get(pt.mode, ("pull_bytes_per_s", "push_bytes_per_s"))
        key = next((k for k in measured if getattr(pt, k) < MIN_RATE_BYTES_PER_S), None)
        if key is not None:
            raise ProfileError(f"{source}: points[{i}].{key} must be at least {MIN_RATE_BYTES_PER_S:g} (1 kbit/s) "
                               f"in a {pt.mode} point, the direction it measured (got {_short(points_raw[i][key])})")
    notes = c.notes(doc)
    ps = c.known(c.mapping(c.key(doc, "ps", ""), "ps"), PS_KEYS, "ps")
    # the model takes the PS's CPU from it: a bad figure is an error, not unknown
    cores = None if ps.get("cores") is None else c.number(ps["cores"], "ps.cores", low=MIN_CPU_CORES, high=4096.0)
    idle = None if doc.get("idle_rtt_ns") is None else c.integer(doc["idle_rtt_ns"], "idle_rtt_ns", low=0,
                                                                 high=10**12)
    probes = [pt.probe_rtt_ns for pt in points if pt.probe_rtt_ns]
    if idle is not None and probes and idle > max(probes):  # every queueing delay would be nought
        raise ProfileError(f"{source}: idle_rtt_ns {idle} is longer than every point's probe_rtt_ns (the longest "
                           f"{max(probes)}): an idle link's round trip cannot exceed every loaded one")
    _check_request_cpu(points, points_raw, cores, source)
    window_s = c.number(c.key(doc, "window_s", ""), "window_s", positive=True, high=86_400.0)
    for i, pt in enumerate(points):  # netbench takes the median of the round trips that start and end in the window
        if pt.probe_rtt_ns is not None and pt.probe_rtt_ns > (pt.window_s or window_s) * 1e9:
            raise ProfileError(f"{source}: points[{i}].probe_rtt_ns {pt.probe_rtt_ns} is longer than the point's "
                               f"{pt.window_s or window_s:g} s window: a round trip measured in it ends inside it")
    return LinkProfile(
        tool=c.text(c.key(doc, "tool", ""), "tool"), date=c.text(c.key(doc, "date", ""), "date"),
        ps=ps, client=c.mapping(c.key(doc, "client", ""), "client"),
        tensors=c.integer(c.key(payload, "tensors", "payload"), "payload.tensors", low=1, high=1_000_000),
        tensor_bytes=c.integer(c.key(payload, "tensor_bytes", "payload"), "payload.tensor_bytes", low=1,
                               high=1 << 40),
        window_s=window_s, points=tuple(points), notes=notes, source=source,
        cpu_quota=c.cpu_quota(ps, "ps.cpu_quota", cores, "ps.cores"), idle_rtt_ns=idle)


def _check_request_cpu(points: list[ProfilePoint], raw: list[Any], cores: float | None, source: str) -> None:
    """ProfileError for an rpc point whose CPU over its requests per second (the PS's CPU per request, as
    :func:`tracegen.linkspec.rpc_cpu_ns` takes it: the point's ``ps_cpu_cores``, else ``ps.cores``) is more than
    :data:`MAX_REQUEST_CPU_S`: 5e-324 transfers/s was read, and predict said "'rpc_cpu_ns' must be from 0 to 1e+09
    (got (inf, inf))", naming neither the file nor the point."""
    for i, pt in enumerate(points):
        used = pt.ps_cpu_cores if pt.ps_cpu_cores is not None else cores
        if (pt.mode in ("rpc_pull", "rpc_push") and used and pt.transfers_per_s
                and used / pt.transfers_per_s > MAX_REQUEST_CPU_S):
            raise ProfileError(f"{source}: points[{i}].transfers_per_s {_short(raw[i]['transfers_per_s'])} at "
                               f"{used:g} cores is {used / pt.transfers_per_s:.3g} s of PS CPU per request; a small "
                               f"tensor's request costs at most {MAX_REQUEST_CPU_S:g} s")


def _short(value: Any) -> str:
    """``value`` quoted for a message; ``true``, ``false`` and ``null`` as the file wrote them, not as Python's
    ``True`` and ``None``, which no JSON holds."""
    return json.dumps(value) if value is None or isinstance(value, bool) else quoted(value)


@dataclasses.dataclass(frozen=True, slots=True)
class Checker:
    """Checks a JSON document's values, raising ``error`` with the file and the key path of the first bad one."""

    source: str
    error: type[TraceFormatError] = ProfileError

    def header(self, doc: Any, fmt: str, version: int) -> None:
        """``doc`` is a JSON object of format ``fmt`` at ``version``."""
        self.mapping(doc, "")
        if "format" not in doc:  # said as missing: 'must be ... (got None)' read as a null written there
            raise self.error(f"{self.source}: 'format' is missing (must be {fmt!r})")
        if doc["format"] != fmt:
            raise self.error(f"{self.source}: 'format' must be {fmt!r} (got {_short(doc['format'])})")
        if "version" not in doc:  # "'version' None is not supported" named a value the file does not hold
            raise self.error(f"{self.source}: 'version' is missing (this reader knows version {version})")
        got = doc["version"]
        if type(got) is not int or got != version:  # 1.0 and true equal 1 in Python, not in the format
            shown = json.dumps(got) if isinstance(got, int | float) else _short(got)  # as the file wrote it
            raise self.error(f"{self.source}: 'version' {shown} is not supported (this reader "
                             f"knows version {version})")

    def notes(self, doc: Mapping[str, Any]) -> tuple[str, ...]:
        """The optional ``notes``: a list of strings."""
        notes = doc.get("notes", [])
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise self.error(f"{self.source}: 'notes' must be a list of strings (got {_short(notes)})")
        return tuple(notes)

    def known(self, obj: Mapping[str, Any], keys: tuple[str, ...], where: str,
              required: tuple[str, ...] = ()) -> Mapping[str, Any]:
        """``obj``, refused if it lacks a key of ``required`` (said first: a misspelt required key is missing)
        or holds a key not in ``keys`` (a misspelt optional key would read as absent)."""
        for name in required:
            self.key(obj, name, where)
        extra = next((k for k in obj if k not in keys), None)
        if extra is not None:
            raise self.error(f"{self.source}: {where or 'the document'} has unknown key {_short(extra)} (known: "
                             f"{', '.join(keys)})")
        return obj

    def key(self, obj: Mapping[str, Any], name: str, where: str) -> Any:
        if name not in obj:
            raise self.error(f"{self.source}: {where + '.' if where else ''}{name} is missing")
        return obj[name]

    def mapping(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.error(f"{self.source}: {where or 'the document'} must be a JSON object "
                               f"(got {_short(value)})")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or len(value) > 1000:
            raise self.error(f"{self.source}: {where} must be a string of at most 1000 characters "
                               f"(got {_short(value)})")
        return value

    def integer(self, value: Any, where: str, *, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.error(f"{self.source}: {where} must be an integer from {low} to {high} (got {_short(value)})")
        return value

    def cpu_quota(self, parent: Any, where: str, cores: float | None = None, cores_where: str = "") -> CpuQuota | None:
        """The optional ``cpu_quota`` object of ``parent`` (None when absent or null), of the ``cores`` (read at
        ``cores_where``) it enforces, when known: a quota gives at most the cores it may run on."""
        raw = parent.get("cpu_quota") if isinstance(parent, Mapping) else None
        if raw is None:
            return None
        raw = self.known(self.mapping(raw, where), QUOTA_KEYS, where, QUOTA_KEYS)
        quota = CpuQuota(host_cores=self.number(self.key(raw, "host_cores", where), f"{where}.host_cores",
                                                low=MIN_CPU_CORES, high=4096.0),
                         period_us=self.integer(self.key(raw, "period_us", where), f"{where}.period_us", low=1_000,
                                                high=1_000_000))
        if cores is not None and quota.host_cores < cores:
            raise self.error(f"{self.source}: {where}.host_cores {quota.host_cores:g} is fewer than the {cores:g} "
                             f"cores of {cores_where}: a quota cannot give more cores than it may run on")
        return quota

    def number(self, value: Any, where: str, *, positive: bool = False,
               high: float = MAX_RATE_BYTES_PER_S, low: float | None = None) -> float:
        """``value`` as a float: a JSON number, finite, > 0 (``positive``) or >= 0, or from ``low`` where given,
        and <= ``high``."""
        ok = (not isinstance(value, bool) and isinstance(value, int | float)
              and not (isinstance(value, float) and not math.isfinite(value))
              and (value >= low if low is not None else value > 0 if positive else value >= 0) and value <= high)
        if not ok:
            least = f"from {low:g} to" if low is not None else f"{'>' if positive else '>='} 0 and <="
            raise self.error(f"{self.source}: {where} must be a number {least} {high:g} (got {_short(value)})")
        return float(value)
