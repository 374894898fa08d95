"""The link-profile reader and writer (``parsers/linkprofile.py``): a profile reads back as written, and every
malformed value, unknown key or file that is no regular file ends in one line of ``ProfileError`` naming the file and
what was wrong."""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from parsers.linkprofile import (
    LinkProfile,
    ProfileError,
    ProfilePoint,
    profile_json,
    read_link_profile,
)

from parsers_support import check_message, profile_file, refused_after_edit, refused_without_key

DEV_TRACE = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"






@contextlib.contextmanager
def _fifo(path: pathlib.Path) -> Iterator[pathlib.Path]:
    """A FIFO at ``path`` whose only writer, should a reader open it, writes nothing and closes: a reader that
    wrongly opens it sees an empty file instead of blocking the test run."""
    os.mkfifo(path)

    def write_nothing() -> None:
        with path.open("wb"):
            pass

    writer = threading.Thread(target=write_nothing, daemon=True)
    writer.start()
    try:
        yield path
    finally:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer's open return if nobody read
        writer.join(5)
        os.close(fd)


@pytest.mark.parametrize(("old", "new", "why"), [
    (b'"pull_bytes_per_s": 50000000.0', b'"pull_bytes_per_s": 1' + b"0" * 400, "must be a number"),
    (b'"pull_bytes_per_s": 50000000.0', b'"pull_bytes_per_s": NaN', "NaN is not a JSON number"),
    (b'"notes": []', b'"notes": ["\\ud800"]', "notes[0]: string '\\ud800' holds a lone UTF-16 surrogate"),
    (b'"notes": []', b'"notes": ' + b"[" * 5000 + b"]" * 5000, "JSON nested more than 64 deep"),
    (b'"connections": 1', b'"connections": 1e999999999', "number 1e999999999 is too large (beyond a float's range)"),
    # the PS's cores feed the model's PS CPU: a bad figure was once taken for "unknown" and silently replaced
    (b'"cores": 2.0', b'"cores": -1', "ps.cores must be a number from 0.001 to 4096 (got -1)"),
    (b'"cores": 2.0', b'"cores": "two"', "ps.cores must be a number from 0.001 to 4096 (got 'two')"),
    # read, and the PS's work per step became 1e+300 times its traced time: predict ran on without end
    (b'"cores": 2.0', b'"cores": 1e-300', "ps.cores must be a number from 0.001 to 4096 (got 1e-300)"),
    (b'"cores": 2.0', b'"cores": 0.0009', "ps.cores must be a number from 0.001 to 4096 (got 0.0009)"),
    # read, and predict said 'the simulation is too short ... with 256 workers', naming neither file nor rate
    (b'"pull_bytes_per_s": 50000000.0', b'"pull_bytes_per_s": 5e-324',
     "points[0].pull_bytes_per_s must be at least 125 (1 kbit/s) in a pull point, the direction it measured (got "
     "5e-324)"),
    (b'"pull_bytes_per_s": 50000000.0', b'"pull_bytes_per_s": 124', "(1 kbit/s) in a pull point, the direction it "
                                                                   "measured (got 124)"),
    (b'"pull_bytes_per_s": 50000000.0', b'"pull_bytes_per_s": 0', "(1 kbit/s) in a pull point, the direction it "
                                                                 "measured (got 0)"),  # was 'moved nothing'
    (b'"mode": "pull"', b'"mode": "push"', "points[0].push_bytes_per_s must be at least 125 (1 kbit/s) in a push "
                                           "point, the direction it measured (got 0.0)"),
    (b'"mode": "pull"', b'"mode": "cycle"', "points[0].push_bytes_per_s must be at least 125 (1 kbit/s) in a cycle "
                                            "point"),
    # quoted as the file wrote them: '(got True)' and '(got None)' named values no JSON holds
    (b'"connections": 1', b'"connections": true', "connections must be an integer from 1 to 10000 (got true)"),
    (b'"window_s": 2.0', b'"window_s": null', "window_s must be a number > 0 and <= 86400 (got null)"),
    (b'"tensors": 4', b'"tensors": false', "payload.tensors must be an integer from 1 to 1000000 (got false)"),
])
def test_link_profile_values(tmp_path: pathlib.Path, old: bytes, new: bytes, why: str) -> None:
    path = profile_file(tmp_path)
    check_message(refused_after_edit(path, old, new, read_link_profile, ProfileError), path, why)


def _renamed(obj: dict[str, Any], old: str, new: str) -> None:
    obj[new] = obj.pop(old)


@pytest.mark.parametrize(("edit", "why"), [
    # each was read as if the key were absent: the queueing delays, a point's CPU, the PS's cores went missing
    (lambda d: _renamed(d, "idle_rtt_ns", "idle_rtt_us"), "the document has unknown key 'idle_rtt_us'"),
    (lambda d: _renamed(d["points"][3], "probe_rtt_ns", "probe_rtt"), "points[3] has unknown key 'probe_rtt'"),
    (lambda d: _renamed(d["ps"], "cores", "core"), "ps has unknown key 'core'"),
    (lambda d: d["ps"]["cpu_quota"].update(quota_us=3000), "ps.cpu_quota has unknown key 'quota_us'"),
    # a required key misspelt is missing, said first
    (lambda d: _renamed(d["ps"]["cpu_quota"], "period_us", "period_ms"), "ps.cpu_quota.period_us is missing"),
    (lambda d: _renamed(d["points"][0], "connections", "conns"), "points[0].connections is missing"),
    (lambda d: d["payload"].update(tensor_size=4), "payload has unknown key 'tensor_size'"),
])
def test_link_profile_unknown_keys_are_refused(tmp_path: pathlib.Path, edit: Callable[[Any], None], why: str) -> None:
    doc = json.loads((DEV_TRACE / "link-profile.json").read_bytes())
    read_link_profile(DEV_TRACE / "link-profile.json")  # the real profile is read as it is
    edit(doc)
    path = tmp_path / "link-profile.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ProfileError) as info:
        read_link_profile(path)
    check_message(str(info.value), path, why)


def test_a_repeated_point_of_one_connection_is_said_in_the_singular(tmp_path: pathlib.Path) -> None:
    doc = json.loads((DEV_TRACE / "link-profile.json").read_bytes())
    doc["points"].append(dict(doc["points"][0]))  # pull, one connection: said 'with 1 connections'
    path = tmp_path / "link-profile.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ProfileError) as info:
        read_link_profile(path)
    assert str(info.value).endswith("repeats mode 'pull' with 1 connection"), str(info.value)


def test_link_profile_quota_on_fewer_cores_than_it_gives_is_refused(tmp_path: pathlib.Path) -> None:
    """0.3 cores as a quota on a host of 0.1 cores cannot be: it was modelled as given (the PS ran at 0.1 cores,
    the quota's note dropped, tracing's undoing at its 4x limit: dev mlp N=2 19.55 -> 17.68), a hardening pass."""
    doc = json.loads((DEV_TRACE / "link-profile.json").read_bytes())
    assert doc["ps"]["cores"] == 0.3
    for host_cores, ok in ((0.3, True), (0.1, False)):
        doc["ps"]["cpu_quota"]["host_cores"] = host_cores
        path = tmp_path / "link-profile.json"
        path.write_text(json.dumps(doc))
        if ok:
            assert read_link_profile(path).cpu_quota is not None
            continue
        with pytest.raises(ProfileError) as info:
            read_link_profile(path)
        check_message(str(info.value), path, "ps.cpu_quota.host_cores 0.1 is fewer than the 0.3 cores of ps.cores")


@pytest.mark.parametrize(("rate", "said"), [("5e-324", "5e-324 at 0.2833 cores is inf s"),
                                            ("0.25", "0.25 at 0.2833 cores is 1.13 s")])
def test_an_rpc_point_of_more_than_a_second_of_ps_cpu_per_request_is_refused(tmp_path: pathlib.Path, rate: str,
                                                                             said: str) -> None:
    """5e-324 transfers/s was read, and predict (without a single-worker measurement, the PS's CPU per request from
    the profile's rpc points) said "'rpc_cpu_ns' must be from 0 to 1e+09 (got (inf, inf))": no file, no point."""
    doc = json.loads((DEV_TRACE / "link-profile.json").read_bytes())
    assert doc["points"][4]["mode"] == "rpc_pull" and doc["points"][4]["ps_cpu_cores"] == 0.2833
    doc["points"][4]["transfers_per_s"] = float(rate)
    path = tmp_path / "link-profile.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ProfileError) as info:
        read_link_profile(path)
    check_message(str(info.value), path, f"points[4].transfers_per_s {said} of PS CPU per request; a small tensor's "
                                         "request costs at most 1 s")
    doc["points"][4]["transfers_per_s"] = 0.2833  # a second of CPU a request: as much as the model takes
    path.write_text(json.dumps(doc))
    assert read_link_profile(path).points[4].transfers_per_s == 0.2833


def test_a_probe_round_trip_longer_than_its_window_is_refused(tmp_path: pathlib.Path) -> None:
    """10^12 ns (1000 s) at the first pull point of a 3 s window was read, and predict said 'the simulation is too
    short ... simulate more steps', of a round trip netbench cannot measure: it counts those inside the window."""
    doc = json.loads((DEV_TRACE / "link-profile.json").read_bytes())
    assert doc["points"][0]["window_s"] == 3.0 and doc["points"][19]["window_s"] > 8
    doc["points"][0]["probe_rtt_ns"] = 10**12
    path = tmp_path / "link-profile.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ProfileError) as info:
        read_link_profile(path)
    assert str(info.value) == (f"{path}: points[0].probe_rtt_ns 1000000000000 is longer than the point's 3 s window: "
                               "a round trip measured in it ends inside it")
    doc["points"][0]["probe_rtt_ns"] = 3 * 10**9  # the whole window: read
    doc["points"][19]["probe_rtt_ns"] = 8 * 10**9  # a point's own longer window counts, not the profile's 3 s
    del doc["points"][1]["window_s"]
    doc["points"][1]["probe_rtt_ns"] = 3 * 10**9 + 1  # a point without one has the profile's
    path.write_text(json.dumps(doc))
    with pytest.raises(ProfileError, match=r"points\[1\]\.probe_rtt_ns 3000000001 is longer than the point's 3 s"):
        read_link_profile(path)
    doc["points"][1]["probe_rtt_ns"] = 3 * 10**9
    path.write_text(json.dumps(doc))
    assert read_link_profile(path).points[19].probe_rtt_ns == 8 * 10**9


def test_link_profile_client_may_say_more(tmp_path: pathlib.Path) -> None:
    """``client`` describes the other host and nothing reads it: a key of one's own there is no error."""
    doc = json.loads((DEV_TRACE / "link-profile.json").read_bytes())
    doc["client"]["region"] = "eu-west-1"
    path = tmp_path / "link-profile.json"
    path.write_text(json.dumps(doc))
    assert read_link_profile(path).client["region"] == "eu-west-1"


@pytest.mark.parametrize(("target", "why"), [("/dev/zero", "character device"), ("fifo", "FIFO")])
def test_link_profile_refuses_devices_and_pipes(tmp_path: pathlib.Path, target: str, why: str) -> None:
    path = tmp_path / "link-profile.json"
    with contextlib.ExitStack() as stack:
        if target == "fifo":
            stack.enter_context(_fifo(path))
        else:
            path.symlink_to(target)
        with pytest.raises(ProfileError) as info:
            read_link_profile(path)
    check_message(str(info.value), path, why)  # the profile named, one line (the kind alone passed without it)


def test_link_profile_size_is_bounded(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "link-profile.json"
    path.write_bytes(b" " * (2 << 20))
    with pytest.raises(ProfileError) as info:
        read_link_profile(path)
    check_message(str(info.value), path, "file is more than the limit of 1048576 bytes")


def test_link_profile_idle_round_trip_longer_than_every_loaded_one_is_refused(tmp_path: pathlib.Path) -> None:
    """An idle_rtt_ns above every probe_rtt_ns (a unit slip, say) made every queueing delay nought, without a
    word (a hardening pass); the real profile's idle round trip is well below its shortest loaded one."""
    doc = json.loads((DEV_TRACE / "link-profile.json").read_bytes())
    longest = max(p["probe_rtt_ns"] for p in doc["points"] if p.get("probe_rtt_ns"))
    for idle, ok in ((longest, True), (longest + 1, False)):
        doc["idle_rtt_ns"] = idle
        path = tmp_path / "link-profile.json"
        path.write_text(json.dumps(doc))
        if ok:
            assert read_link_profile(path).idle_rtt_ns == longest
            continue
        with pytest.raises(ProfileError) as info:
            read_link_profile(path)
        check_message(str(info.value), path, f"idle_rtt_ns {longest + 1} is longer than every point's "
                                              f"probe_rtt_ns (the longest {longest})")


def test_of_mode_keeps_one_mode_ordered_by_connections() -> None:
    points = tuple(ProfilePoint(mode=mode, connections=k, pull_bytes_per_s=float(k), push_bytes_per_s=0.0)
                   for mode, k in (("pull", 4), ("push", 1), ("pull", 1), ("cycle", 2), ("pull", 2)))
    profile = LinkProfile(tool="t", date="d", ps={}, client={}, tensors=1, tensor_bytes=1, window_s=1.0,
                          points=points)
    assert [(p.mode, p.connections) for p in profile.of_mode("pull")] == [("pull", 1), ("pull", 2), ("pull", 4)]
    assert profile.of_mode("both") == ()


def test_profile_json_writes_keys_in_schema_order_and_rounds_rates() -> None:
    point = ProfilePoint(mode="pull", connections=1, pull_bytes_per_s=1.26, push_bytes_per_s=0.04,
                         ps_cpu_cores=0.123456)
    profile = LinkProfile(tool="t", date="d", ps={"host": "p"}, client={}, tensors=2, tensor_bytes=8,
                          window_s=1.5, points=(point,))
    doc = json.loads(profile_json(profile))
    assert list(doc) == ["format", "version", "tool", "date", "ps", "client", "payload", "window_s", "idle_rtt_ns",
                         "points", "notes"]
    assert doc["payload"] == {"tensors": 2, "tensor_bytes": 8}
    assert (doc["points"][0]["pull_bytes_per_s"], doc["points"][0]["push_bytes_per_s"]) == (1.3, 0.0)
    assert doc["points"][0]["ps_cpu_cores"] == 0.1235
    assert profile_json(profile).endswith(b"}\n")


@pytest.mark.parametrize(("key", "said"), [
    ("version", "'version' is missing (this reader knows version 1)"),  # it said "'version' None is not supported"
    ("format", "'format' is missing (must be 'tracegen-link-profile')"),
])
def test_link_profile_missing_format_or_version_is_said_to_be_missing(tmp_path: pathlib.Path, key: str,
                                                                       said: str) -> None:
    path = profile_file(tmp_path)
    assert refused_without_key(path, key, read_link_profile, ProfileError) == f"{path}: {said}"
