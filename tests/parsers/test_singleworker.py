"""``single-worker.json``: written and read back unchanged; every bad value refused in one line naming it."""

from __future__ import annotations

import dataclasses
import json
import pathlib
from collections.abc import Callable
from typing import Any

import pytest

from parsers.linkprofile import CpuQuota
from parsers.singleworker import AtCap, SingleWorker, SingleWorkerError, read_single_worker, write_single_worker

from parsers_support import refused_after_edit, refused_without_key

RECORD = SingleWorker(steps_per_s=5.5, window_s=40.0, ps_cpu_s_per_step=0.045, ps_cores=0.5,
                      ps_cpu_quota=CpuQuota(host_cores=2.0, period_us=10_000), link_bits_per_s=500e6,
                      tool="tracegen testbed 0.1.0", date="2026-12-01T10:00:00Z", notes=("one worker",))


def _written(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "single-worker.json"
    write_single_worker(RECORD, path)
    return path


def test_round_trip(tmp_path: pathlib.Path) -> None:
    path = _written(tmp_path)
    assert read_single_worker(path) == dataclasses.replace(RECORD, source=str(path))


def test_unknown_ps_cpu_is_allowed(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.json"
    write_single_worker(dataclasses.replace(RECORD, ps_cpu_s_per_step=None, ps_cores=None, ps_cpu_quota=None), path)
    assert read_single_worker(path).ps_cpu_s_per_step is None
    assert b"ps_cpu_quota" not in path.read_bytes() and read_single_worker(path).ps_cpu_quota is None


def test_the_link_it_was_measured_on_may_be_unknown(tmp_path: pathlib.Path) -> None:
    """Files written before ``link_bits_per_s`` existed, and a user's own measurement, need not name it."""
    path = tmp_path / "s.json"
    write_single_worker(dataclasses.replace(RECORD, link_bits_per_s=None), path)
    assert b"link_bits_per_s" not in path.read_bytes() and read_single_worker(path).link_bits_per_s is None


@pytest.mark.parametrize(("old", "new", "why"), [
    (b'"steps_per_s": 5.5', b'"steps_per_s": 0', "steps_per_s must be a number > 0"),
    (b'"steps_per_s": 5.5', b'"steps_per_s": "fast"', "steps_per_s must be a number > 0"),
    (b'"ps_cpu_s_per_step": 0.045', b'"ps_cpu_s_per_step": -1', "ps_cpu_s_per_step must be a number >= 0"),
    (b'"ps_cores": 0.5', b'"ps_cores": 1e9', "ps_cores must be a number from 0.001 to 4096 (got 1000000000.0)"),
    (b'"version": 1', b'"version": 2', "'version' 2 is not supported"),
    (b'"link_bits_per_s": 500000000.0', b'"link_bits_per_s": 0',
     "link_bits_per_s must be a number from 1000 to 1e+13"),
    (b'"link_bits_per_s": 500000000.0', b'"link_bits_per_s": "500Mbit/s"',
     "link_bits_per_s must be a number from 1000 to 1e+13"),
    (b'"link_bits_per_s": 500000000.0', b'"link_bits_per_s": 1e14',
     "link_bits_per_s must be a number from 1000 to 1e+13"),
    # a unit slip: 1e-9 bits/s was read, became a link of 0 bytes/s, and tracing's cost its bound (4x), unsaid
    (b'"link_bits_per_s": 500000000.0', b'"link_bits_per_s": 1e-9',
     "link_bits_per_s must be a number from 1000 to 1e+13 (got 1e-09)"),
    (b'"link_bits_per_s": 500000000.0', b'"link_bits_per_s": 999', "from 1000 to 1e+13 (got 999)"),
    (b'"version": 1', b'"version": 1.0', "'version' 1.0 is not supported"),  # 1.0 == True == 1 in Python
    (b'"version": 1', b'"version": true', "'version' true is not supported"),
    (b'"period_us": 10000', b'"period_us": 5', "ps_cpu_quota.period_us must be"),
    (b'"host_cores": 2.0', b'"host_cores": -2', "ps_cpu_quota.host_cores must be a number from 0.001 to 4096"),
    (b'"host_cores": 2.0,', b'', "ps_cpu_quota"),
    (b'"format": "tracegen-single-worker"', b'"format": "tracegen-link-profile"', "'format' must be"),
    (b'"window_s": 40.0', b'"window_s": NaN', "NaN is not a JSON number"),
    # 1e-300 steps/s was read, and predict warned that the replay was a 300-digit percentage faster
    (b'"steps_per_s": 5.5', b'"steps_per_s": 1e-300', "steps_per_s 1e-300 over window_s 40 is 4e-299 steps"),
    # 5 s of PS CPU a step at 5.5 steps/s is 27.5 cores from a PS capped at 0.5: once replayed as is (N = 1 at
    # 0.06 steps/s for a measured 10.8)
    (b'"ps_cpu_s_per_step": 0.045', b'"ps_cpu_s_per_step": 5',
     "ps_cpu_s_per_step 5 at steps_per_s 5.5 is 27.5 cores of CPU, more than ps_cores 0.5"),
])
def test_bad_values_are_named(tmp_path: pathlib.Path, old: bytes, new: bytes, why: str) -> None:
    path = _written(tmp_path)
    message = refused_after_edit(path, old, new, read_single_worker, SingleWorkerError)
    assert str(path) in message and why in message and "\n" not in message and len(message) < 300


DEV = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace"


def _renamed(obj: dict[str, Any], old: str, new: str) -> None:
    obj[new] = obj.pop(old)


@pytest.mark.parametrize(("edit", "why"), [
    # read as if the PS's CPU were unknown: the dev mlp's plateau 19.1 -> 12.6 steps/s, without a word
    (lambda d: _renamed(d, "ps_cpu_s_per_step", "ps_cpu_ms_per_step"),
     "the document has unknown key 'ps_cpu_ms_per_step'"),
    (lambda d: _renamed(d, "ps_cpu_quota", "cpu_quota"), "the document has unknown key 'cpu_quota'"),
    (lambda d: d.update(ps_at_cap={"ps_cores": 0.05, "steps_per_s": 5.1, "ps_cpu_s_per_step": 0.0098,
                                   "window_s": 30.0, "ps_cpu_quota": None, "ps_core": 0.05}),
     "ps_at_cap has unknown key 'ps_core'"),
])
def test_unknown_keys_are_refused(tmp_path: pathlib.Path, edit: Callable[[Any], None], why: str) -> None:
    _refused_after(edit, tmp_path, why)


def _refused_after(edit: Callable[[Any], None], tmp_path: pathlib.Path, why: str) -> None:
    """The dev single-worker.json, edited, is refused in one line that names the file and says ``why``."""
    doc = json.loads((DEV / "single-worker.json").read_bytes())
    edit(doc)
    path = tmp_path / "single-worker.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SingleWorkerError) as info:
        read_single_worker(path)
    message = str(info.value)
    assert str(path) in message and why in message and "\n" not in message and len(message) < 300, message


@pytest.mark.parametrize(("edit", "why"), [
    (lambda d: d["ps_cpu_quota"].update(host_cores=0.1), "ps_cpu_quota.host_cores 0.1 is fewer than the 0.3 cores of "
                                                         "ps_cores"),
    (lambda d: d.update(ps_at_cap={"ps_cores": 0.05, "steps_per_s": 5.1, "ps_cpu_s_per_step": 0.0098,
                                   "window_s": 30.0, "ps_cpu_quota": {"host_cores": 0.01, "period_us": 10000}}),
     "ps_at_cap.ps_cpu_quota.host_cores 0.01 is fewer than the 0.05 cores of ps_at_cap.ps_cores"),
])
def test_a_quota_on_fewer_cores_than_it_gives_is_refused(tmp_path: pathlib.Path, edit: Callable[[Any], None],
                                                         why: str) -> None:
    """A quota of 0.3 cores on a host of 0.1 cannot be; it was modelled as given (a hardening pass)."""
    _refused_after(edit, tmp_path, why)


def test_every_bundled_measurement_reads() -> None:
    """The consistency check holds for every measurement in ``data/`` (at most 0.66 of the cap there)."""
    found = sorted((pathlib.Path(__file__).resolve().parents[2] / "data").rglob("single-worker.json"))
    assert len(found) >= 20
    for path in found:
        assert read_single_worker(path).steps_per_s > 0


def test_missing_key_and_not_json(tmp_path: pathlib.Path) -> None:
    path = _written(tmp_path)
    path.write_bytes(path.read_bytes().replace(b'"steps_per_s"', b'"steps"'))
    with pytest.raises(SingleWorkerError) as info:  # the file named (the key alone passed a message without it)
        read_single_worker(path)
    assert str(info.value) == f"{path}: steps_per_s is missing"
    path.write_bytes(b"\x00garbage")
    with pytest.raises(SingleWorkerError, match=str(path)):
        read_single_worker(path)


HELD = SingleWorker(steps_per_s=7.4, window_s=30.0, ps_cpu_s_per_step=0.019, ps_cores=0.3,
                    ps_at_cap=AtCap(ps_cores=0.05, steps_per_s=5.1, ps_cpu_s_per_step=0.0098, window_s=30.0,
                                    ps_cpu_quota=CpuQuota(host_cores=2.0, period_us=20_000)))


def test_a_ps_below_what_a_cfs_quota_enforces_is_refused(tmp_path: pathlib.Path) -> None:
    """1e-300 cores, with no CPU per step to check them against, was read, and the PS's work per step became
    1e+300 times its traced time: predict ran on without end."""
    path = tmp_path / "s.json"
    write_single_worker(dataclasses.replace(RECORD, ps_cpu_s_per_step=None, ps_cpu_quota=None), path)
    message = refused_after_edit(path, b'"ps_cores": 0.5', b'"ps_cores": 1e-300', read_single_worker,
                                 SingleWorkerError)
    assert message == f"{path}: ps_cores must be a number from 0.001 to 4096 (got 1e-300)"
    path.write_bytes(path.read_bytes().replace(b'"ps_cores": 1e-300', b'"ps_cores": 0.001'))
    assert read_single_worker(path).ps_cores == 0.001


def test_at_cap_round_trip(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "s.json"
    write_single_worker(HELD, path)
    assert read_single_worker(path) == dataclasses.replace(HELD, source=str(path))


@pytest.mark.parametrize(("old", "new", "why"), [
    # 0.03 cores of 0.05: the one worker did not hold the PS at its cap, so its CPU per step has spare in it
    (b'"ps_cpu_s_per_step": 0.0098', b'"ps_cpu_s_per_step": 0.006',
     "ps_at_cap used 0.0306 cores (ps_cpu_s_per_step 0.006 at steps_per_s 5.1) of ps_cores 0.05: not at its cap"),
    (b'"ps_cpu_s_per_step": 0.0098', b'"ps_cpu_s_per_step": 0.1', "ps_at_cap used 0.51 cores"),
    (b'"ps_cores": 0.05', b'"ps_cores": 0', "ps_at_cap.ps_cores must be a number from 0.001 to 4096 (got 0)"),
    (b'"window_s": 30.0,\n    "ps_cpu_quota"', b'"ps_cpu_quota"', "ps_at_cap.window_s is missing"),
    (b'"period_us": 20000', b'"period_us": 5', "ps_at_cap.ps_cpu_quota.period_us must be"),
])
def test_bad_at_cap_is_named(tmp_path: pathlib.Path, old: bytes, new: bytes, why: str) -> None:
    path = tmp_path / "s.json"
    write_single_worker(HELD, path)
    data = path.read_bytes()
    assert old in data, data
    path.write_bytes(data.replace(old, new))
    with pytest.raises(SingleWorkerError) as info:
        read_single_worker(path)
    assert why in str(info.value) and str(path) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(("key", "said"), [
    ("version", "'version' is missing (this reader knows version 1)"),  # it said "'version' None is not supported"
    ("format", "'format' is missing (must be 'tracegen-single-worker')"),  # and "must be ... (got None)"
])
def test_a_missing_format_or_version_is_said_to_be_missing(tmp_path: pathlib.Path, key: str, said: str) -> None:
    path = _written(tmp_path)
    assert refused_without_key(path, key, read_single_worker, SingleWorkerError) == f"{path}: {said}"
