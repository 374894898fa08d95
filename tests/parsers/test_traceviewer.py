"""TensorBoard's trace-viewer JSON (``<host>.trace.json.gz``), the lossy fallback for TF2 profiles: the bundled
profile as TensorBoard's own converter wrote it reads with what its XSpace gives (variables, pulls and pushes per
step, op names and devices), its losses listed; broken files are refused in one line naming the event."""

from __future__ import annotations

import gzip
import json
import pathlib
from typing import Any

import pytest

from parsers import TraceContentError, TraceError, read_trace
from tracegen.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]
VIEWER = ROOT / "data" / "traces" / "tf2_pss_viewer"
XSPACE = ROOT / "data" / "traces" / "tf2_pss"


def _counts(trace: Any) -> dict[tuple[int, str], int]:
    return {(int(s), str(d)): len(g) for (s, d), g in trace.transfers.groupby(["step", "direction"])}


def test_the_viewer_files_read_as_their_xspaces_do_less_what_they_lost() -> None:
    viewer, xspace = read_trace(VIEWER), read_trace(XSPACE)
    assert viewer.source_format == "trace-viewer"
    assert list(viewer.steps["step"]) == list(xspace.steps["step"]) == [1, 2, 3]
    assert _counts(viewer) == _counts(xspace)  # 5 pulls (4 variables + a control signal), 4 pushes per step
    assert sorted(viewer.variables["size_bytes"]) == sorted(xspace.variables["size_bytes"])
    assert set(viewer.ops["device"]) == set(xspace.ops["device"])
    for device in set(xspace.ops["device"]):
        kinds = [set(t.ops.loc[t.ops["device"] == device, "op_type"]) for t in (viewer, xspace)]
        assert kinds[0] == kinds[1], device
    assert sorted(viewer.transfers["size_bytes"].dropna()) == sorted(xspace.transfers["size_bytes"].dropna())
    assert any("absolute times" in line for line in viewer.lost)
    assert any("MemoryAllocation" in line for line in viewer.lost)


def _content(path: pathlib.Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()


def _host_with(folder: pathlib.Path, suffix: str, *, eager: bool) -> pathlib.Path:
    """The file of ``folder``'s profile of a host that ran the step's ops (``ReluGrad``), with EagerExecute
    events or without."""
    return next(p for p in sorted(folder.rglob(f"*{suffix}"))
                if b"ReluGrad" in _content(p) and (b"EagerExecute" in _content(p)) == eager)


def test_one_host_alone_reads_as_its_xspace_does() -> None:
    # the worker's host alone has no tf.function call on a python line (the coordinator's); its steps are its
    # EagerExecute events of the step function, whose is_func the viewer writes as the string "1"
    viewer = read_trace(_host_with(VIEWER, ".trace.json.gz", eager=True))
    xspace = read_trace(_host_with(XSPACE, ".xplane.pb", eager=True))
    assert len(viewer.steps) == len(xspace.steps) == 3
    assert len(viewer.ops) == len(xspace.ops)
    assert _counts(viewer) == _counts(xspace)


def test_a_host_without_step_events_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    ps = _host_with(VIEWER, ".trace.json.gz", eager=False)
    with pytest.raises(TraceError, match="no step events"):
        read_trace(ps)
    assert main(["inspect", str(ps)]) != 0
    err = capsys.readouterr().err.strip()
    assert str(ps) in err and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize(("change", "message"), [
    (lambda e: e.update(ts="soon"), "'ts' must be a number (got 'soon')"),
    (lambda e: e.update(dur=-1), "'dur' out of range"),
    (lambda e: e.update(args=[1]), ".args must be an object (got [1])"),
    (lambda e: e.update(tid="x"), ".tid must be an integer"),
    (lambda e: e["args"].update(long_name=7), ".name must be a string (got 7)"),
])
def test_a_broken_event_is_named(tmp_path: pathlib.Path, change: Any, message: str) -> None:
    coordinator = next(p for p in sorted(VIEWER.rglob("*.trace.json.gz"))
                       if b"train_step" in gzip.decompress(p.read_bytes()))
    doc = json.loads(gzip.decompress(coordinator.read_bytes()))
    index = next(i for i, e in enumerate(doc["traceEvents"]) if e.get("ph") == "X" and isinstance(e.get("args"), dict))
    change(doc["traceEvents"][index])
    path = tmp_path / "host.trace.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    with pytest.raises(TraceContentError) as info:
        read_trace(path)
    text = str(info.value)
    assert text.startswith(f"{path}: traceEvents[{index}]") and message in text and "\n" not in text


def test_convert_writes_the_viewer_profile_as_our_chrome_json(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "tf2.json"
    assert main(["convert", str(VIEWER), "--to", "chrome", str(out)]) == 0
    back = read_trace(out)
    assert _counts(back) == _counts(read_trace(VIEWER))
