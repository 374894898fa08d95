from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import re
from decimal import Decimal

import pytest

import parsers.chrome
import tracegen.synth
from parsers import TraceError, read_trace
from parsers.chrome import format_us
from parsers.perfetto import check_perfetto
from tracegen.model import TaskKind, build_model
from tracegen.placement import place
from tracegen.simulate import SimConfig
from tracegen.synth import size_warning, write_synthetic_trace
from tracegen.synthetic import synthetic_model

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"


def test_synthetic_trace_reads_back_and_is_perfetto_clean(tmp_path: pathlib.Path) -> None:
    model = synthetic_model(n_params=3, n_layers_ops=2, latency_ns=20_000)
    config = SimConfig(n_workers=3, steps=2, warmup_steps=0, link="fair", seed=4)
    path = tmp_path / "n3.json"
    result = write_synthetic_trace(model, config, path)
    doc = json.loads(path.read_bytes())
    assert check_perfetto(doc["traceEvents"]) == []
    flows = [e for e in doc["traceEvents"] if e.get("ph") == "s"]
    assert flows  # producer -> consumer arrows exist
    trace = read_trace(path)
    assert len(trace.transfers) == 3 * 2 * 6
    pulls = trace.transfers[trace.transfers["direction"] == "pull"]
    assert int(pulls["size_bytes"].sum()) == 3 * 2 * model.bytes_of(TaskKind.PULL)
    assert set(pulls["tensor_name"]) == {model.names[t] for t in range(model.n_tasks)
                                         if model.kinds[t] == TaskKind.PULL}
    workers = {d for d in trace.ops["device"] if "/job:worker" in d}
    assert len(workers) == 3
    assert len(trace.steps) == 6
    assert max(trace.steps["end_ns"]) == result.end_ns


def test_synthetic_trace_is_deterministic(tmp_path: pathlib.Path) -> None:
    model = synthetic_model(n_params=2, n_layers_ops=2)
    config = SimConfig(n_workers=2, steps=2, warmup_steps=0, link="conn", seed=7)
    write_synthetic_trace(model, config, tmp_path / "a.json")
    write_synthetic_trace(model, config, tmp_path / "b.json")
    a, b = (tmp_path / "a.json").read_bytes(), (tmp_path / "b.json").read_bytes()
    assert a.replace(b"a.json", b"b.json") == b


def test_a_synthetic_trace_shows_each_ps_shard_and_its_link(tmp_path: pathlib.Path) -> None:
    model = synthetic_model(n_params=4, n_layers_ops=2, latency_ns=20_000)
    placed = place(model, 2, "round-robin")
    config = SimConfig(n_workers=2, steps=2, warmup_steps=0, seed=3, ps_shard_of_task=placed.shard_of_task)
    path = tmp_path / "n2.json"
    write_synthetic_trace(model, config, path)
    doc = json.loads(path.read_bytes())
    assert check_perfetto(doc["traceEvents"]) == []
    trace = read_trace(path)
    for row in trace.transfers.itertuples():
        task = model.names.index(row.tensor_name)
        ps = row.src_device if row.direction == "pull" else row.dst_device
        assert ps == f"/job:ps/replica:0/task:{placed.shard_of_task[task]}/device:CPU:0"
    ps_ops = trace.ops[trace.ops["device"].str.startswith("/job:ps")]
    assert set(ps_ops["device"]) == {f"/job:ps/replica:0/task:{k}/device:CPU:0" for k in (0, 1)}
    slices = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "transfer"]
    assert {e["args"]["shard"] for e in slices} == {0, 1}


def test_the_size_warning_speaks_exactly_when_tracegen_cannot_read_the_trace_back(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether ``read_trace`` takes a synthetic trace is what the warning says: none for one it reads; one naming
    ``inspect`` when the reader's event limit (lowered here below this trace's count, in both modules) refuses it."""
    model = synthetic_model(n_params=3, n_layers_ops=2)
    path = tmp_path / "n2.json"
    write_synthetic_trace(model, SimConfig(n_workers=2, steps=2, warmup_steps=0), path)
    assert size_warning(path) is None
    read_trace(path)
    events = len(json.loads(path.read_bytes())["traceEvents"])
    for module in (parsers.chrome, tracegen.synth):
        monkeypatch.setattr(module, "MAX_RECORDS", events)
    assert size_warning(path) is None
    read_trace(path)
    for module in (parsers.chrome, tracegen.synth):
        monkeypatch.setattr(module, "MAX_RECORDS", events - 1)
    warning = size_warning(path)
    assert warning is not None and f"n2.json is 0 MiB with {events} events" in warning and "tracegen inspect" in warning
    assert "chrome://tracing" not in warning  # a few kB
    with pytest.raises(TraceError) as info:  # the file named (the rule alone passed a message without it)
        read_trace(path)
    assert str(info.value).startswith(f"{path}") and "more than the limit" in str(info.value), info.value


@pytest.mark.parametrize("shards", [1, 2])
def test_transfer_tracks_are_named_pulls_and_pushes(tmp_path: pathlib.Path, shards: int) -> None:
    """Each worker's transfer tracks read ``pulls L``/``pushes L`` (``pulls psK L``/``pushes psK L`` per shard
    link), as the module documents: a push track once read ``pushs 0``."""
    model = synthetic_model(n_params=4, n_layers_ops=2, latency_ns=20_000)
    placed = place(model, shards, "round-robin").shard_of_task if shards > 1 else ()
    config = SimConfig(n_workers=2, steps=2, warmup_steps=0, seed=3, ps_shard_of_task=placed)
    path = tmp_path / "n2.json"
    write_synthetic_trace(model, config, path)
    events = json.loads(path.read_bytes())["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    link = r"ps[01] " if shards > 1 else ""
    expected = {"pull": re.compile(rf"pulls {link}\d+"), "push": re.compile(rf"pushes {link}\d+")}
    transfers = [e for e in events if e.get("ph") == "X" and e["cat"] == "transfer"]
    assert {e["args"]["direction"] for e in transfers} == {"pull", "push"}
    for e in transfers:
        assert expected[e["args"]["direction"]].fullmatch(names[(e["pid"], e["tid"])]), names[(e["pid"], e["tid"])]


@pytest.mark.parametrize("shards", [1, 2])
def test_the_synthetic_trace_of_a_bundled_trace_matches_golden(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                                                shards: int) -> None:
    """Byte for byte what the writer wrote when each event was a json.dumps of its own dict (the golden files were
    written then; UPDATE_GOLDEN=1 writes them anew, for a change of layout or simulation made on purpose)."""
    monkeypatch.chdir(ROOT)  # the trace names its source: keep it relative and stable
    model = build_model(read_trace("data/traces/mlp"))
    placed = place(model, shards, "round-robin").shard_of_task if shards > 1 else ()
    name = f"synth_mlp_n2_ps{shards}.json"
    write_synthetic_trace(model, SimConfig(n_workers=2, steps=1, warmup_steps=0, ps_shard_of_task=placed),
                          tmp_path / name)
    # rewritten, the file would be compared with itself: a run with UPDATE_GOLDEN set passed whatever was written
    fresh, golden = (tmp_path / name).read_bytes(), GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") and (not golden.is_file() or fresh != golden.read_bytes()):
        golden.write_bytes(fresh)
        pytest.fail(f"{golden}: rewritten (UPDATE_GOLDEN): review its diff, then run again without UPDATE_GOLDEN")
    assert (tmp_path / name).read_text().splitlines() == (GOLDEN / name).read_text().splitlines()
    trace = read_trace(tmp_path / name)
    assert {"pull", "push"} == set(trace.transfers["direction"]) and len(trace.ops) > 0


def _json_dumps_spelling(line: str) -> str:
    """An event line as json.dumps of the parsed event spells it, with ``ts`` and ``dur`` first as exact µs."""
    event = json.loads(line, parse_float=Decimal)
    times = [f'"{key}": {format_us(int(event.pop(key) * 1000))}' for key in ("ts", "dur") if key in event]
    body = json.dumps(event)
    return "{" + ", ".join(times) + ", " + body[1:] if times else body


def test_names_in_a_synthetic_trace_are_escaped_as_json_dumps_escapes_them(tmp_path: pathlib.Path) -> None:
    """Every event line of a trace whose names hold quotes, backslashes, controls and non-ASCII is what json.dumps
    writes for it, and the names read back as they were (a lone surrogate, which JSON can write but no reader takes
    for text, is refused when the model is built: test_model.py; the writer's escaping of one: test_chrome.py)."""
    odd = '"q\\b/é✓\u0001\t'
    model = synthetic_model(n_params=3, n_layers_ops=2, latency_ns=20_000)
    model = dataclasses.replace(model, names=tuple(f"{n}{odd}" if t % 2 else n for t, n in enumerate(model.names)))
    path = tmp_path / "n2.json"
    write_synthetic_trace(model, SimConfig(n_workers=2, steps=2, warmup_steps=0, seed=1), path)
    lines = path.read_text().split("\n")[1:-2]
    assert lines and all(line.removesuffix(",") == _json_dumps_spelling(line.removesuffix(",")) for line in lines)
    trace = read_trace(path)
    written = set(trace.ops["node_name"]) | set(trace.transfers["tensor_name"])
    assert written <= set(model.names) and sum(odd in n for n in written) > len(written) // 3
