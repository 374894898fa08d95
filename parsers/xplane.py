"""Read TensorFlow 2's profiler output, XSpace protobufs (``<host>.xplane.pb``), into a :class:`Trace`.

Input: one ``.xplane.pb`` file, a profile run directory (``plugins/profile/<run>/``, one file per profiled host)
or a TensorBoard logdir (its newest run); :mod:`parsers.xspace` finds the files and decodes each into its host's
events (times in integer nanoseconds on the epoch clock, stats resolved to values). The hosts of one run are
merged, in the order of their names (the file name without ``.xplane.pb``; ``client.trace`` names them
``<address>_<port>``).

What is read, from the events of each host's ``/host:CPU`` plane:

- ops: events named ``node/name:OpType``, on the TensorFlow device the host serves (the sending device of its
  ``_Send`` events' rendezvous keys);
- transfers: ``_Send`` events whose rendezvous ``key`` (``src;incarnation;dst;edge_N_tensor;frame``) joins two
  tasks; the direction follows from the devices (PS → worker = pull, worker → PS = push). A transfer starts with
  its ``_Send`` and ends when the receiving host's matching ``_Recv`` (``<producer>/_N``) is done; without one
  it lasts as long as the ``_Send``. The k-th ``_Send`` of a (receiving device, producer), in its host's time
  order, is matched with the k-th such ``_Recv`` done, in the receiving host's, which compares no two hosts'
  clocks; where the two counts differ (a host's profile cut some off) a ``_Send`` is matched, once the clocks are
  one (below), with the first unused ``_Recv`` done after it starts within its step, and ``skipped`` counts it;
- steps: the events of the step function's ``tf.function`` calls on a ``python`` line (stat
  ``tf_function_call``; the most frequent such function), else the ``EagerExecute`` events of the most frequent
  ``__inference_*`` function; every record is assigned to the step whose call it starts in;
- sizes: XSpace records no byte counts. A transfer's size is the ``requested_bytes`` of a ``MemoryAllocation``
  by the op that produced the tensor (TensorFlow records only large allocations), else, for a variable read or a
  dense update (``ReadVariableOp``; ``Assign*VariableOp``, ``ResourceApplyGradientDescent``), the variable's
  dtype and shape from the step function's registration (its ``FunctionDef`` in the text of an
  ``EagerService:Enqueue`` event, which only a profile of the function's first call holds). Whatever is left
  stays ``<NA>`` and ``Trace.lost`` lists it; no size is guessed;
- variables: the step function's resource arguments whose dtype and shape its registration records, each on the
  PS device its pulls come from (a ``_Send`` from a PS whose producer takes the variable's handle as input 0), else
  (no pull of it in the profile) on the device of the PS component that holds its argument: with several PS tasks
  each keeps its own; a variable pulled from two PS devices is refused (TraceContentError naming the file);
- graphs: from the same registrations, the partition graphs (:mod:`parsers.xgraph`): ``graph_nodes`` and
  ``graph_edges`` as a TF1 RunMetadata's, so that a step model can be built; op events of no graph node
  (runtime events named like ops, ``EagerService:Enqueue``) are then left out;
- the first call: a profile that holds the registration holds the step function's first call, with its tracing
  and registration (one-time costs, often ten times a later step); that step is left out (counted in
  ``skipped``). A transfer starts when its ``_Recv`` starts on the receiving host, if that is after the
  ``_Send`` (the receiver asks for the tensor when its executor reaches the ``_Recv``).

The hosts' clocks: each host times its events on its own clock, and hosts apart agree only as well as NTP keeps
them (0.1 to 10 ms), as long as a step's transfers. So they are put onto one, the clock of the host of the step
calls (the coordinator's; the reference), as far as causality requires and no further:

- what bounds them: a tensor is received (its ``_Recv`` done) after it was sent (its ``_Send`` started), so each
  matched pair bounds how far the receiver's clock reads ahead of the sender's from above; pulls (PS → worker) and
  pushes (worker → PS) bound a worker and a PS from both sides. A step call starts before the worker runs it
  (``EagerLocalExecute: __inference_<step>_N``) and ends after (the coordinator waits for the result; every
  bundled profile shows it), which bounds the coordinator and each worker from both sides, where the profile holds
  one run a call: with one worker matched by order; with several, whose runs of which calls are not recorded, by
  the offsets that put each of a worker's runs in some call at least as long, its k-th run starting after the k-th
  call to start and its k-th from the last ending before the k-th call from the last ends;
- the rule: where every bound holds with the clocks as they are (one machine, or clocks that agree within the
  slack, the shortest transfer each way: 0.1 to 0.5 ms on the bundled profiles), nothing moves. Else each host's
  events move by the least offset that has every bound hold, hosts nearest the reference first, and
  ``Trace.lost`` says by how much and in what range its clock read: what is left of a skew is within the slack,
  which causality cannot tell from transfer time (the transfer that bounded the move then lasts 0 ns). Where no
  offsets satisfy them all (a clock that stepped during the profile, events edited, ``_Send``s and ``_Recv``s
  cut off so that order pairs the wrong ones), the profile is refused: TraceContentError names the two files and
  the two bounds that contradict each other. A host no bound joins to the reference keeps its times, and
  ``Trace.lost`` says so. Where a host moved earlier would start before 0 (a trace viewer's hosts,
  :mod:`parsers.traceviewer`, count from each one's profile start), every host moves later by as much, which
  changes no time between two events, and ``Trace.lost`` says that too.

The step function's registration, and the variables it describes, are read by :mod:`parsers.registration`.
"""

from __future__ import annotations

import collections
import dataclasses
import pathlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from parsers.errors import TraceContentError, counted, quoted
from parsers.hostclocks import contradiction, least_offsets, linked, span
from parsers.limits import MAX_BYTES, MAX_RECORDS
from parsers.registration import (
    INFERENCE,
    Variable,
    function_variables,
    node_name,
    registered_functions,
    step_functions,
)
from parsers.runmetadata import check_has_worker
from parsers.spans import intersection, union
from parsers.trace import (
    DTYPE_BYTES,
    MAX_DUR_NS,
    MAX_SIZE_BYTES,
    MAX_TIME_NS,
    Trace,
    device_role,
    direction_of,
    make_table,
    read_once,
    trace_from,
)
from parsers.xgraph import partition_tables
from parsers.xspace import Event, host_events, host_name, parse_xspace, read_profile_files, tally

SEND_OPS = frozenset({"_Send", "_HostSend"})
# Ops whose input ``value_input`` has the shape of the variable their resource input 0 holds.
DENSE_UPDATES = {"AssignSubVariableOp": 1, "AssignAddVariableOp": 1, "AssignVariableOp": 1,
                 "ResourceApplyGradientDescent": 2}
_RUN = "EagerLocalExecute: "  # a worker's run of a function the coordinator called
_OP_EVENT = re.compile(r"^(?P<node>[\w.][\w.\-/>]*):(?P<op>[A-Za-z_][\w>]*)$")
PS_LOST = (
    "byte counts of transfers (an XSpace records none: sizes come from allocation events and variable shapes)",
    "partition graphs (dependencies between ops): an XSpace holds no graph",
)


def read_xplane_files(files: Sequence[pathlib.Path], source: str, max_bytes: int = MAX_BYTES) -> Trace:
    """Read and merge the hosts ``files`` (at most ``max_bytes`` together)."""
    return read_xspaces(read_profile_files(files, source, max_bytes), source)


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
    files: dict[str, str] = {}
    for path, data in sorted(contents, key=lambda c: host_name(c[0])):
        files[host_name(path)] = path
        space = parse_xspace(data, path)
        n = sum(len(line.events) for plane in space.planes for line in plane.lines)
        if len(events) + n > MAX_RECORDS:
            raise TraceContentError(f"{source}: more than {MAX_RECORDS} events in the profile")
        events.extend(host_events(space, path, lanes, skipped))
        del space
    return trace_from_events(events, source, skipped, host_files=files)


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
            tally(skipped, "op events on a host whose TensorFlow device is not known (no _Send names it)")
        elif step is None:
            tally(skipped, "op events outside every step")
        else:
            ops.append({"step": step, "device": device, "node_name": m["node"], "op_type": m["op"],
                        "start_ns": event.start_ns, "dur_ns": event.dur_ns, "lane": event.lane})
    return ops


def trace_from_events(events: Sequence[Event], source: str, skipped: dict[str, int], *,
                      source_format: str = "xplane", lost: Sequence[str] = (),
                      host_files: Mapping[str, str] | None = None) -> Trace:
    """The Trace the hosts' CPU-plane ``events`` make (module docstring), whatever file they came from;
    ``lost``: what the format lost beyond an XSpace's own losses. ``host_files``, the file each host's events came
    from: given, the hosts' clocks are checked against each other and put onto one (module docstring); None (one
    trace-viewer file read alone) merges the hosts' times as they are, and matches a ``_Send`` with the first
    ``_Recv`` done after it starts."""
    sends, host_devices = _sends(events, skipped)
    step_name, calls = _step_calls(events, source)
    recvs, asked = _received(events, host_devices)
    found = _Found(sends=sends, calls=calls, recvs=recvs, asked=asked,
                   paired=_pairs(sends, recvs) if host_files is not None else {})
    clock_lost: list[str] = []
    if host_files is not None:
        aligned, clock_lost, shifts = _align_clocks(events, found, step_name, host_files)
        if aligned is not events:  # some host's events moved: what was found in them must hold the moved ones
            found = found.moved(events, aligned, shifts)
            events = aligned
    windows = sorted((e.start_ns, e.end_ns) for e in found.calls)
    functions = registered_functions(events, skipped)
    step_fdefs = step_functions(functions, step_name)
    variables: dict[str, Variable] = {}
    nodes: dict[str, Any] = {}
    for fdef in step_fdefs:
        for arg, variable in function_variables(fdef, source).items():
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
    transfers, rendezvous, unsized = _transfers(found, step_of,
                                                (allocations, nodes, variables), skipped,
                                                by_order=host_files is not None)
    workers = {d for d in host_devices.values() if device_role(d) == "worker"}
    graph_nodes, graph_edges = partition_tables(step_fdefs, rendezvous, next(iter(workers)) if len(workers) == 1
                                                else None, skipped)
    if graph_nodes:  # runtime events named like ops (EagerService:Enqueue, ...) are no node of the step
        known = {(r["device"], r["node_name"]) for r in graph_nodes}
        kept = [r for r in ops if (r["device"], r["node_name"]) in known]
        if len(kept) < len(ops):
            tally(skipped, "op events of no node of the step function's graphs (runtime events)", len(ops) - len(kept))
        ops = kept
    ops, transfers = read_once(ops, skipped), read_once(transfers, skipped)
    first = {s: min((r["start_ns"] for r in ops + transfers if r["step"] == s), default=w[0])
             for s, w in enumerate(windows)}
    last = {s: max((r["start_ns"] + r["dur_ns"] for r in ops + transfers if r["step"] == s), default=w[1])
            for s, w in enumerate(windows)}
    steps = [{"step": s, "source": source, "start_ns": first[s], "end_ns": last[s]} for s in range(len(windows))
             if s != first_call]
    if first_call >= 0:
        tally(skipped, "steps that were the step function's first call (its registration: one-time costs)")
    ps_device = {r["src_device"] for r in transfers if r["direction"] == "pull"}
    device_of = _variable_devices(variables, found.sends, nodes, step_fdefs, host_files or {}, source)
    variable_rows = [{"name": v.arg, "device": device_of.get(v.arg, next(iter(ps_device)) if len(ps_device) == 1
                                                             else None),
                      "dtype": v.dtype, "shape": "x".join(map(str, v.dims)) or "scalar",
                      "n_elements": v.size_bytes // DTYPE_BYTES[v.dtype], "size_bytes": v.size_bytes}
                     for v in variables.values()]
    lost = [*(PS_LOST if not graph_nodes else PS_LOST[:1]), *lost, *clock_lost]
    if not variables:
        lost.append(f"variables and their shapes: no host's profile holds the registration of the step function "
                    f"{quoted(step_name)} with its arguments' shapes (the PS's profile of its first call does)")
    else:
        lost.append("variable names (the profile names the step function's resource arguments, not variables)")
    if unsized:
        lost.append(f"sizes of {sum(unsized.values())} of {counted(len(transfers), 'transfer')} "
                    f"({counted(len(unsized), 'tensor')}: "
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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Found:
    """What the reading takes from the events more than once, found in them once: the cross-task ``_Send``s
    (:func:`_sends`), the step function's calls (:func:`_step_calls`), the ``_Recv`` done events and starts
    (:func:`_received`) and the ``_Recv`` done of each ``_Send`` that order matches (:func:`_pairs`, by ``id`` of
    the ``_Send``'s event; where the hosts' clocks are checked)."""

    sends: list[_Send]
    calls: list[Event]
    recvs: dict[tuple[str, str], list[Event]]
    asked: dict[tuple[str, str], list[int]]
    paired: dict[int, Event]

    def moved(self, events: Sequence[Event], aligned: Sequence[Event], shifts: Mapping[str, int]) -> _Found:
        """The same found in ``aligned``, ``events`` with each host's moved by ``shifts`` (ns): as found in
        ``aligned`` afresh. Order matches the same pairs: a host's events move together, keeping their order."""
        new = {id(old): event for old, event in zip(events, aligned, strict=True)}
        place = {id(event): i for i, event in enumerate(aligned)}  # ties in time stay in the events' order
        return _Found(
            sends=[dataclasses.replace(send, event=new[id(send.event)]) for send in self.sends],
            calls=[new[id(call)] for call in self.calls],
            recvs={key: sorted((new[id(r)] for r in done), key=lambda r: (r.end_ns, place[id(r)]))
                   for key, done in self.recvs.items()},
            asked={(host, name): [t + shifts.get(host, 0) for t in starts]
                   for (host, name), starts in self.asked.items()},
            paired={id(new[old]): new[id(done)] for old, done in self.paired.items()})


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
            tally(skipped, "_Send events within one task")
            continue
        devices[event.host].add(src)
        producer, consumer = event.stats.get("from"), event.stats.get("to")
        sends.append(_Send(event=event, node=m["node"], src=src, dst=dst, tensor=tensor,
                           producer=producer if isinstance(producer, str) else "",
                           consumer=consumer if isinstance(consumer, str) else ""))
    several = [h for h, d in devices.items() if len(d) > 1]
    if several:
        tally(skipped, "hosts serving several TensorFlow tasks (their ops are not attributed)", len(several))
    return sends, {h: next(iter(d)) for h, d in devices.items() if len(d) == 1}


def _variable_devices(variables: Mapping[str, Variable], sends: Sequence[_Send], nodes: Mapping[str, Any],
                      fdefs: Sequence[Any], host_files: Mapping[str, str], source: str) -> dict[str, str]:
    """The PS device of each variable (by its argument): the one its pulls come from, a pull being a ``_Send``
    from a PS whose producer takes the variable's handle as input 0 (``ReadVariableOp``, ``ResourceGather``);
    for a variable no pull reads, the device of the component that holds its argument. TraceContentError naming
    the file (``host_files``, else ``source``) where a variable is pulled from two PS devices."""
    pulled: dict[str, _Send] = {}
    for send in sends:
        producer = nodes.get(send.producer)
        if device_role(send.src) != "ps" or producer is None or not producer.input:
            continue
        arg = node_name(producer.input[0])
        if arg not in variables:
            continue
        first = pulled.setdefault(arg, send)
        if first.src != send.src:
            raise TraceContentError(f"{host_files.get(send.event.host, source)}: argument {quoted(arg)} is pulled "
                                    f"from two PS devices, {send.src} here and {first.src} elsewhere: a variable "
                                    "lives on one")
    out = {arg: send.src for arg, send in pulled.items()}
    for fdef in fdefs:  # a PS component: its nodes are on its device, and so are its arguments' variables
        device = fdef.node_def[0].device if fdef.node_def else ""
        if device_role(device) == "ps":
            for arg in fdef.signature.input_arg:
                if arg.name in variables:
                    out.setdefault(arg.name, device)
    return out


def _step_calls(events: Sequence[Event], source: str) -> tuple[str, list[Event]]:
    """The step function's name and the events of its calls (module docstring)."""
    calls = [e for e in events if "tf_function_call" in e.stats]
    if calls:
        counts = collections.Counter(e.name for e in calls)
        name = max(counts, key=lambda n: (counts[n], -min(e.start_ns for e in calls if e.name == n)))
        return name, [e for e in calls if e.name == name]
    executes = [(m["name"], e) for e in events if e.name == "EagerExecute" and e.stats.get("is_func") in (1, "1")
                and isinstance(e.stats.get("eager_op"), str) and (m := INFERENCE.match(e.stats["eager_op"]))]
    if executes:
        counts = collections.Counter(n for n, _ in executes)
        name = max(counts, key=lambda n: counts[n])
        return name, [e for n, e in executes if n == name]
    raise TraceContentError(f"{source}: no step events: no tf.function call on a python line (stat "
                            "'tf_function_call') and no EagerExecute of a function")


# ------------------------------------------------------------------------------------------ the hosts' clocks

def _align_clocks(events: Sequence[Event], found: _Found, step_name: str, host_files: Mapping[str, str]
                  ) -> tuple[Sequence[Event], list[str], dict[str, int]]:
    """``events`` with each host's times put onto the clock of the host of the step calls, where causality
    requires it (module docstring), what ``Trace.lost`` says of it, and how far each host's events moved (ns);
    TraceContentError when no offsets between the hosts' clocks have every tensor received after it was sent.
    ``found``: the ``_Send``s, the calls of the step function ``step_name`` and the pairs in ``events``."""
    calls = found.calls
    hosts = sorted({e.host for e in events})
    if len(hosts) < 2:
        return events, [], {}
    by_host = collections.Counter(e.host for e in calls)
    reference = min(by_host, key=lambda h: (-by_host[h], h))
    bounds = _clock_bounds(events, found.sends, found.paired, step_name, [e for e in calls if e.host == reference])
    for a, b in sorted(bounds):
        if (b, a) in bounds and bounds[(a, b)][0] + bounds[(b, a)][0] < 0:
            raise TraceContentError(contradiction(a, b, bounds, host_files))
    offsets: dict[str, tuple[int, float, float]] = {}
    if any(ahead_ns < 0 for ahead_ns, _ in bounds.values()):  # else every clock as it is satisfies them all
        offsets = least_offsets(hosts, reference, {k: v[0] for k, v in bounds.items()}, host_files)
    lost = [f"one clock for all hosts: {host}'s clock reads {span(lo, hi)} {reference}'s (so that each tensor is "
            f"received after it was sent, and each step runs within its call); its events were moved by "
            f"{-ahead_ns / 1e6:+.3f} ms, the least move that has it so"
            for host, (ahead_ns, lo, hi) in sorted(offsets.items()) if ahead_ns]
    joined = linked(reference, bounds)
    if len(joined) < len(hosts):
        lost.append(f"the offset between the clocks of {reference} (the step calls) and of "
                    f"{', '.join(h for h in hosts if h not in joined)}: no transfer or step call between them bounds "
                    "it; their times are merged as recorded")
    if not any(ahead_ns for ahead_ns, _, _ in offsets.values()):
        return events, lost, {}
    # a host whose times count from its profile's start (a trace viewer's) moved earlier would start before 0:
    # then every host's events move later by as much, which changes no time between two events
    lift_ns = max((offsets.get(e.host, (0, 0, 0))[0] - e.start_ns for e in events), default=0)
    lift_ns = max(0, lift_ns)
    if lift_ns:
        lost.append(f"the hosts' common clock: every host's events were moved {lift_ns / 1e6:.3f} ms later, so that "
                    "none starts before 0 once the clocks are one")
    shifts = {host: lift_ns - offsets.get(host, (0, 0, 0))[0] for host in hosts}
    moved = []
    for event in events:
        shift_ns = shifts[event.host]
        if shift_ns and event.start_ns + shift_ns > MAX_TIME_NS - 1 - event.dur_ns:
            raise TraceContentError(f"{event.where}: moved by {shift_ns / 1e6:+.3f} ms onto {reference}'s clock, "
                                    "it would end after 2**62 ns")
        moved.append(dataclasses.replace(event, start_ns=event.start_ns + shift_ns) if shift_ns else event)
    return moved, lost, shifts


def _clock_bounds(events: Sequence[Event], sends: Sequence[_Send], paired: Mapping[int, Event], step_name: str,
                  calls: Sequence[Event]) -> dict[tuple[str, str], tuple[int, str]]:
    """For each (host a, host b) that some events bound: how far b's clock reads ahead of a's at most, in ns, and
    what says so. A tensor is received (its ``_Recv`` done) after it was sent (its ``_Send`` started); a step call
    starts before, and ends after, the worker's run of it (where the profile holds one run of the step function a
    call: with one worker matched by order, with several :func:`_within_calls`)."""
    bounds: dict[tuple[str, str], tuple[int, str]] = {}

    def bound(a: str, b: str, ahead_ns: int, why: str) -> None:
        if a != b and ((a, b) not in bounds or ahead_ns < bounds[(a, b)][0]):
            bounds[(a, b)] = (ahead_ns, why)

    for send in sends:
        done = paired.get(id(send.event))
        if done is not None:
            bound(send.event.host, done.host, done.end_ns - send.event.start_ns, "transfers")
    coordinator = calls[0].host if calls else None
    runs = [e for e in events if e.host != coordinator and e.name.startswith(_RUN)
            and (m := INFERENCE.match(e.name.removeprefix(_RUN))) and m["name"] == step_name and not m["part"]]
    if coordinator is None or len(runs) != len(calls):  # some call's run, or some run's call, is not in the profile
        return bounds
    by_host: dict[str, list[Event]] = collections.defaultdict(list)
    for run in runs:
        by_host[run.host].append(run)
    if len(by_host) == 1:  # one worker: its k-th run is the k-th call's
        for call, run in zip(sorted(calls, key=lambda e: e.start_ns), sorted(runs, key=lambda e: e.start_ns),
                             strict=True):
            bound(call.host, run.host, run.start_ns - call.start_ns, "step calls")
            bound(run.host, call.host, call.end_ns - run.end_ns, "step calls")
        return bounds
    for host, mine in sorted(by_host.items()):
        lo, hi = _within_calls(mine, calls)
        bound(coordinator, host, hi, "step calls")
        bound(host, coordinator, -lo, "step calls")
    return bounds


def _within_calls(runs: Sequence[Event], calls: Sequence[Event]) -> tuple[int, int]:
    """How far a worker's clock may read ahead of the coordinator's (ns, from the first to the second) where its
    ``runs`` each lie in a step call of their own, the worker's among several (which runs which call is not
    recorded). A worker's k-th run (by start) lies in a call of its own, as do its k - 1 before it, each starting no
    later: so at least k calls start by its start, and the k-th call to start does; likewise its k-th run from the
    last (by end) ends by the k-th call from the last's end. Within that range, the offsets that put every run in
    some call at least as long as it (the range's hull: a run may fit more than one call)."""
    starts = sorted(call.start_ns for call in calls)
    ends = sorted((call.end_ns for call in calls), reverse=True)
    hi = min(run.start_ns - start for run, start in zip(sorted(runs, key=lambda e: e.start_ns), starts, strict=False))
    lo = max(run.end_ns - end for run, end in zip(sorted(runs, key=lambda e: -e.end_ns), ends, strict=False))
    feasible = [(lo, hi)]
    for run in runs:  # each run in a call: the coordinator's start <= the run's start, the run's end <= its end
        fits = [(run.end_ns - call.end_ns, run.start_ns - call.start_ns) for call in calls
                if call.dur_ns >= run.dur_ns]
        feasible = intersection(feasible, union(fits))
        if not feasible:  # no offset puts every run in a call: the order's range alone, which the transfers check
            return lo, hi
    return feasible[0][0], feasible[-1][1]


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
        variable = variables.get(node_name(producer.input[0]))
        if variable is not None:
            return variable.size_bytes
    if consumer is not None and consumer.op in DENSE_UPDATES:
        slot = DENSE_UPDATES[consumer.op]
        if len(consumer.input) > slot and node_name(consumer.input[slot]) == send.producer:
            variable = variables.get(node_name(consumer.input[0]))
            if variable is not None:
                return variable.size_bytes
    return None


def _received(events: Sequence[Event], host_devices: Mapping[str, str]
              ) -> tuple[dict[tuple[str, str], list[Event]], dict[tuple[str, str], list[int]]]:
    """The ``_Recv`` done events on each (receiving device, producer), in the order they were done; and the
    starts of each (host, ``_Recv`` node)'s ``_Recv``s."""
    recvs: dict[tuple[str, str], list[Event]] = collections.defaultdict(list)
    asked: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    for event in events:
        name = event.stats.get("name")
        if event.stats.get("kernel_type") != "_Recv" or not isinstance(name, str) or event.host not in host_devices:
            continue
        if event.name == "ExecutorState::ProcessAsync::Done":
            recvs[(host_devices[event.host], name.rsplit("/_", 1)[0])].append(event)
        elif event.name == "ExecutorState::ProcessAsync::Start":
            asked[(event.host, name)].append(event.start_ns)
    for done in recvs.values():
        done.sort(key=lambda r: r.end_ns)
    return recvs, asked


def _pairs(sends: Sequence[_Send], recvs: Mapping[tuple[str, str], Sequence[Event]]) -> dict[int, Event]:
    """The ``_Recv`` done event of each ``_Send`` (by ``id`` of its event) that order alone matches: the k-th
    ``_Send`` of a (receiving device, producer), on its host's clock, with the k-th ``_Recv`` done, on the
    receiving host's; only where both come from one host each and their counts agree."""
    keyed: dict[tuple[str, str], list[_Send]] = collections.defaultdict(list)
    for send in sends:
        keyed[(send.dst, send.producer)].append(send)
    out: dict[int, Event] = {}
    for key, sent in keyed.items():
        done = recvs.get(key, [])
        if len(done) != len(sent) or len({s.event.host for s in sent}) != 1 or len({r.host for r in done}) != 1:
            continue
        for send, recv in zip(sorted(sent, key=lambda s: s.event.start_ns), done, strict=True):
            out[id(send.event)] = recv
    return out


def _transfers(found: _Found, step_of: Any, sizes: Any, skipped: dict[str, int], *, by_order: bool
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    """The transfers, rendezvous and unsized tensors (module docstring) of the ``_Send``s, ``_Recv``s and pairs
    ``found``. A ``_Send`` is matched with the first unused ``_Recv`` done after it starts (the hosts' clocks must
    agree); ``by_order`` (the clocks were put onto one): by order (``found.paired``) where it can be, else by time
    within its step."""
    sends, recvs, asked, paired = found.sends, found.recvs, found.asked, found.paired
    used = {id(r) for r in paired.values()}
    rows: list[dict[str, Any]] = []
    pairs: dict[tuple[str, str, str], dict[str, Any]] = {}
    unsized: dict[str, int] = collections.Counter()
    for send in sorted(sends, key=lambda s: s.event.start_ns):
        step = step_of(send.event.start_ns)
        if step is None:
            tally(skipped, "_Send events outside every step")
            continue
        start = send.event.start_ns
        done = paired.get(id(send.event))
        if done is None:
            done = next((r for r in recvs.get((send.dst, send.producer), []) if r.end_ns >= start
                         and id(r) not in used and (not by_order or step_of(r.end_ns) == step)), None)
            if done is not None and by_order:
                tally(skipped, "transfers matched with a _Recv by time, not order (their tensor's _Send and _Recv "
                               "counts differ: a host's profile cut some off)")
        if done is None:
            tally(skipped, "transfers timed by their _Send alone (no matching _Recv done on the receiving host)")
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
