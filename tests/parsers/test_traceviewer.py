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


def test_one_host_alone_has_no_steps_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    worker = next(p for p in sorted(VIEWER.rglob("*.trace.json.gz")) if b"ReluGrad" in gzip.decompress(p.read_bytes()))
    with pytest.raises(TraceError, match="no step events"):
        read_trace(worker)
    assert main(["inspect", str(worker)]) != 0
    err = capsys.readouterr().err.strip()
    assert str(worker) in err and "\n" not in err and "Traceback" not in err


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
