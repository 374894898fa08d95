"""A TF2 profile from hosts whose clocks disagree (``parsers/xplane.py``): the bundled three-host capture (one
clock) with one host's clock set ahead or behind reads as it does with a skew small enough for causality not to
tell, and says what it moved; a profile that no offset makes causal is refused in one line naming the files; a
_Send whose _Recv is missing is not matched with another step's."""

from __future__ import annotations

import dataclasses
import pathlib

import pandas as pd
import pytest

from parsers import Trace, TraceContentError, read_trace
from parsers.proto import xplane_pb2 as pb
from parsers.xplane import trace_from_events
from parsers.xspace import Event, host_events, host_name, parse_xspace
from tracegen.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUN = next((ROOT / "data" / "traces" / "tf2_pss" / "plugins" / "profile").iterdir())
MS = 1_000_000
MOVED = "one clock for all hosts"
BY_SEND = "transfers timed by their _Send alone (no matching _Recv done on the receiving host)"


def _space(path: pathlib.Path) -> pb.XSpace:
    space = pb.XSpace()
    space.ParseFromString(path.read_bytes())
    return space


def _role(path: pathlib.Path) -> str:
    """``coordinator`` (the step calls), ``worker`` (the gradients) or ``ps`` of a bundled host file."""
    names = {m.name for plane in _space(path).planes for m in plane.event_metadata.values()}
    stats = {m.name for plane in _space(path).planes for m in plane.stat_metadata.values()}
    if "tf_function_call" in stats:
        return "coordinator"
    return "worker" if "gradient_tape/ReluGrad:ReluGrad" in names else "ps"


HOSTS = {_role(p): p for p in sorted(RUN.iterdir())}


def _skewed(root: pathlib.Path, shifts_ns: dict[str, int], *, lines: bool = False) -> pathlib.Path:
    """A copy of the bundled run whose hosts (by role) read their clocks ``shifts_ns`` ahead: each one's
    ``profile_start_time`` moved, or (``lines``) each line's ``timestamp_ns`` of its host plane."""
    run = root / "run"
    run.mkdir(parents=True)
    for role, path in HOSTS.items():
        shift = shifts_ns.get(role, 0)
        space = _space(path)
        for plane in space.planes:
            if lines and plane.name == "/host:CPU":
                for line in plane.lines:
                    line.timestamp_ns += shift
            elif not lines and plane.name == "Task Environment":
                start = next(s for s in plane.stats if plane.stat_metadata[s.metadata_id].name == "profile_start_time")
                start.uint64_value += shift
        (run / path.name).write_bytes(space.SerializeToString())
    return run


def _residual_ns(skewed: pd.DataFrame, plain: pd.DataFrame) -> dict[str, int]:
    """How far each device's ops in ``skewed`` lie from the same ops in ``plain`` (one figure per device)."""
    assert list(skewed["node_name"]) == list(plain["node_name"]) and list(skewed["step"]) == list(plain["step"])
    moved = (skewed["start_ns"] - plain["start_ns"]).groupby(skewed["device"]).unique()
    assert all(len(m) == 1 for m in moved), moved  # a host's events move together
    assert list(skewed["dur_ns"]) == list(plain["dur_ns"])
    return {str(device): int(m[0]) for device, m in moved.items()}


def test_the_bundled_profile_reads_as_it_did_before_clocks_were_checked() -> None:
    """One clock (localhost): causality holds with every clock as it is, so nothing is moved, and every _Send is
    matched by order with the _Recv that the first _Recv done after it started was."""
    checked = read_trace(RUN)
    events: list[Event] = []
    lanes: dict[tuple[str, int], int] = {}
    skipped: dict[str, int] = {}
    for path in sorted(RUN.iterdir(), key=lambda p: host_name(str(p))):
        events.extend(host_events(parse_xspace(path.read_bytes(), str(path)), str(path), lanes, skipped))
    as_recorded = trace_from_events(events, str(RUN), skipped)  # no host files: no clock check, matched by time
    assert checked.equals(as_recorded)
    assert checked.lost == as_recorded.lost and dict(checked.skipped) == dict(as_recorded.skipped)
    assert not any(MOVED in line for line in checked.lost)


@pytest.mark.parametrize(("role", "shift_ms", "lines"), [
    ("ps", 40, True), ("ps", -40, False), ("ps", 0.3, True), ("ps", -0.3, False),
    ("worker", 40, True), ("worker", -40, False), ("worker", 0.3, True),
    ("coordinator", 40, True), ("coordinator", -40, False),
])
def test_a_host_whose_clock_is_off_is_moved_back(tmp_path: pathlib.Path, role: str, shift_ms: float,
                                                  lines: bool) -> None:
    """The skewed profile reads exactly as the bundled one with each host off by what causality cannot tell (the
    skew less the move), which is read as it is; that is far less than the skew, and the move is said."""
    shift = round(shift_ms * MS)
    plain = read_trace(RUN)
    skewed = read_trace(_skewed(tmp_path / "skewed", {role: shift}, lines=lines))
    assert BY_SEND not in skewed.skipped and len(skewed.transfers) == len(plain.transfers)
    said = [line for line in skewed.lost if MOVED in line]
    assert said and all("its events were moved by" in line for line in said), skewed.lost
    # How far each host's times still lie from the true ones. The step calls' host is the reference: it is never
    # moved, so its skew is all left; the others' is what their ops show.
    coordinator = shift if role == "coordinator" else 0
    left = _residual_ns(skewed.ops, plain.ops)
    rest = {"coordinator": coordinator, "worker": left["/job:worker/replica:0/task:0/device:CPU:0"],
            "ps": left["/job:ps/replica:0/task:0/device:CPU:0"]}
    for host in ("worker", "ps"):  # left within the transfers' and calls' slack (under 0.5 ms on this profile)
        assert abs(rest[host] - coordinator) < 0.5 * MS, (host, rest)
        assert abs(rest[host] - coordinator) <= abs(shift), (host, rest)
    within = read_trace(_skewed(tmp_path / "within", rest))
    assert not any(MOVED in line for line in within.lost), within.lost
    assert skewed.equals(within)


def test_a_moved_host_is_said_by_inspect(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _skewed(tmp_path, {"ps": 40 * MS})
    assert main(["inspect", str(run)]) == 0
    out = capsys.readouterr().out
    assert f"{host_name(str(HOSTS['ps']))}'s clock reads 39." in out and "its events were moved by -39." in out, out


def test_clocks_that_no_offset_reconciles_are_refused_naming_the_files(tmp_path: pathlib.Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """One gradient's _Send moved 5 ms later on the worker's clock: its _Recv on the PS is then done before it was
    sent unless the PS's clock is 4.8 ms behind, while the pulls need it at most 0.1 ms behind."""
    run = _skewed(tmp_path, {})
    path = run / HOSTS["worker"].name
    space = _space(path)
    plane = next(p for p in space.planes if p.name == "/host:CPU")
    send = next(k for k, m in plane.event_metadata.items() if m.name == "mul_3/_11:_Send")
    events = [e for line in plane.lines for e in line.events if e.metadata_id == send]
    events[2].offset_ps += 5 * MS * 1000
    path.write_bytes(space.SerializeToString())
    with pytest.raises(TraceContentError) as caught:
        read_trace(run)
    message = str(caught.value)
    # the files (the second beside the first, by its name), the rule, and the two bounds that contradict
    assert "\n" not in message and message.startswith(str(run)), message
    assert HOSTS["worker"].name in message and HOSTS["ps"].name in message, message
    assert "no clock offset has every tensor received after it was sent" in message
    # the worker's file sorts first: the PS's clock at least 4.8 ms behind it (the moved push), at most 0.1 ms
    # behind (the pulls); it read 'at least 0.104 ms ahead', a lower bound's sign dropped
    assert message.endswith("put the second's clock at least 4.885 ms behind the first's and at most 0.104 ms "
                            "behind"), message
    assert main(["inspect", str(run)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_send_whose_recv_is_missing_is_not_matched_with_another_steps(tmp_path: pathlib.Path) -> None:
    """A pull's _Recv done left out of the worker's profile: its _Send was matched with the next step's _Recv (a
    transfer as long as a step) and that step's _Send with none; each is now matched within its own step."""
    run = _skewed(tmp_path, {})
    path = run / HOSTS["worker"].name
    space = _space(path)
    plane = next(p for p in space.planes if p.name == "/host:CPU")
    done = next(k for k, m in plane.event_metadata.items() if m.name == "ExecutorState::ProcessAsync::Done")
    names = {k: m.name for k, m in plane.stat_metadata.items()}

    def recv_of(event: pb.XEvent) -> bool:
        return event.metadata_id == done and any(
            names[s.metadata_id] == "name" and names.get(s.ref_value) == "MatMul/ReadVariableOp/_2"
            for s in event.stats)

    found = sorted((line.timestamp_ns * 1000 + e.offset_ps, li, i) for li, line in enumerate(plane.lines)
                   for i, e in enumerate(line.events) if recv_of(e))
    assert len(found) == 4  # the first call's, then steps 1 to 3
    _, li, i = found[2]
    del plane.lines[li].events[i]
    path.write_bytes(space.SerializeToString())
    plain, trace = read_trace(RUN), read_trace(run)
    read = trace.transfers["tensor_name"] == "edge_9_MatMul/ReadVariableOp"
    assert read.sum() == 3
    assert trace.skipped[BY_SEND] == 1
    assert trace.transfers.loc[read & (trace.transfers["step"] == 2), "dur_ns"].item() < 0.1 * MS  # its _Send alone
    others = trace.transfers[~(read & (trace.transfers["step"] == 2))]
    same = plain.transfers[~((plain.transfers["tensor_name"] == "edge_9_MatMul/ReadVariableOp")
                             & (plain.transfers["step"] == 2))]
    assert others.reset_index(drop=True).equals(same.reset_index(drop=True))
    assert "transfers matched with a _Recv by time, not order" in " | ".join(trace.skipped)


def _two_workers(coordinator_shift_ns: int) -> tuple[Trace, dict[str, str]]:
    """The bundled run as the coordinator of two workers would record it: every other run of the step function
    (``EagerLocalExecute: __inference_train_step_N``) on a second worker host, and the coordinator's clock read
    ``coordinator_shift_ns`` ahead; with the hosts' names by role."""
    events: list[Event] = []
    lanes: dict[tuple[str, int], int] = {}
    skipped: dict[str, int] = {}
    files: dict[str, str] = {}
    for path in sorted(RUN.iterdir(), key=lambda p: host_name(str(p))):
        files[host_name(str(path))] = str(path)
        events.extend(host_events(parse_xspace(path.read_bytes(), str(path)), str(path), lanes, skipped))
    names = {role: host_name(str(path)) for role, path in HOSTS.items()} | {"worker2": "worker2"}
    files["worker2"] = str(RUN / "worker2.xplane.pb")
    runs = sorted((e for e in events if e.host == names["worker"] and e.name.startswith("EagerLocalExecute: "
                                                                                       "__inference_train_step")),
                  key=lambda e: e.start_ns)
    assert len(runs) == 4
    second = {id(run) for run in runs[1::2]}
    moved = [dataclasses.replace(e, host="worker2") if id(e) in second
             else dataclasses.replace(e, start_ns=e.start_ns + coordinator_shift_ns) if e.host == names["coordinator"]
             else e for e in events]
    return trace_from_events(moved, str(RUN), skipped, host_files=files), names


@pytest.mark.parametrize("shift_ms", [40, -40])
def test_a_coordinator_of_several_workers_whose_clock_is_off_is_put_onto_theirs(shift_ms: int) -> None:
    """The step calls bounded the coordinator's clock only where one worker ran them all: with two, which runs
    which call is not recorded, the coordinator (joined to the workers by its calls alone) was left as recorded,
    and its steps' windows, 40 ms off, took the wrong ops or none. Each worker's runs, each within a call of its
    own, bound it; every host is moved to within a millisecond of the skew (a step is some 7 ms)."""
    plain, _ = _two_workers(0)
    assert plain.ops.equals(read_trace(RUN).ops)  # clocks that agree: read as the one worker's profile, none moved
    assert not any(MOVED in line for line in plain.lost), plain.lost
    skewed, names = _two_workers(shift_ms * MS)
    assert not any("merged as recorded" in line for line in skewed.lost), skewed.lost
    said = {host: line for line in skewed.lost if MOVED in line for host in names.values() if
            line.startswith(f"{MOVED}: {host}'s clock")}
    assert set(said) == {names["worker"], names["ps"], "worker2"}, skewed.lost
    for host, line in said.items():
        moved_ms = float(line.split("its events were moved by ")[1].split(" ms")[0])
        assert abs(moved_ms - shift_ms) < 1, (host, line)
