"""What the testbed writes (``validation/testbed_files.py``): ``measured.csv`` with its documented schema,
``staleness.csv`` and the trace's ``meta.json``, worked out by hand from hand-made measurements."""

from __future__ import annotations

import csv
import json
import pathlib
import re

from validation import testbed_files
from validation.testbed_config import TestbedConfig
from validation.testbed_files import MEASURED_COLUMNS, MEASURED_SCHEMA
from validation.testbed_window import Measurement


def test_schema_is_documented_in_order() -> None:
    doc = testbed_files.__doc__ or ""
    documented = [m.group(1) for m in re.finditer(r"^    (\w+) +(int|float|str) ", doc, flags=re.MULTILINE)]
    assert documented == list(MEASURED_COLUMNS)
    assert [t for _, t in MEASURED_SCHEMA] == re.findall(r"^    \w+ +(int|float|str) ", doc, flags=re.MULTILINE)


def _config(out_dir: pathlib.Path, **changes: object) -> TestbedConfig:
    base: dict[str, object] = {"out_dir": out_dir, "model": "mlp", "widths": (32, 16), "batch_size": 16,
                               "workers": (1, 2), "bandwidth_bits_per_s": 100_000_000, "cpu_cap_ps": 0.5,
                               "cpu_cap_worker": 0.6, "learning_rate": 0.125, "warmup_steps": 3, "traced_steps": 4}
    base.update(changes)
    return TestbedConfig(**base)  # type: ignore[arg-type]


def _run(n_workers: int, repeat: int, **changes: object) -> Measurement:
    base: dict[str, object] = {"n_workers": n_workers, "repeat": repeat, "steps_per_s": 2.0 / 3.0,
                               "worker_steps_per_s": (0.25, 5 / 12), "global_steps_per_s": 0.5, "window_s": 10.0,
                               "qdisc_drops": 3, "tcp_retrans_segs": 7}
    base.update(changes)
    return Measurement(**base)  # type: ignore[arg-type]


def test_staleness_csv_counts_each_staleness_per_run(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "staleness.csv"
    testbed_files.write_staleness(path, [_run(2, 0, staleness=(1, 0, 1, 3, 1)), _run(2, 1), _run(3, 0, staleness=(2,))])
    assert path.read_text() == "n_workers,repeat,staleness,steps\n2,0,0,1\n2,0,1,3\n2,0,3,1\n3,0,2,1\n"


def test_measured_csv_rows_by_hand(tmp_path: pathlib.Path) -> None:
    config = _config(tmp_path, workers=(1, 2, 3), worker_caps=(0.25,), worker_links=(0, 2_000_000), ps_tasks=2,
                     placement="greedy")
    rows = [_run(2, 0, ps_bytes=(100, 28), ps_cpu_cores=0.123456789), _run(1, 1, worker_steps_per_s=(0.5,)),
            _run(3, 0, worker_steps_per_s=(1.0, 1.0, 1.0))]
    path = tmp_path / "measured.csv"
    testbed_files.write_measured_csv(path, config, rows, "2.21.0")
    with path.open() as fh:
        got = list(csv.DictReader(fh))
    assert list(got[0]) == list(MEASURED_COLUMNS)
    assert {k: got[0][k] for k in ("n_workers", "repeat", "steps_per_s", "worker_steps_per_s", "window_s",
                                   "widths", "learning_rate", "ps_tasks", "placement", "ps_bytes", "worker_caps",
                                   "worker_links", "api", "cpu_cap_coordinator", "ps_cpu_cores",
                                   "worker_cpu_cores", "tensorflow_version", "qdisc_drops")} == {
        "n_workers": "2", "repeat": "0", "steps_per_s": "0.666667", "worker_steps_per_s": "0.25;0.416667",
        "window_s": "10", "widths": "32;16", "learning_rate": "0.125", "ps_tasks": "2", "placement": "greedy",
        "ps_bytes": "100;28", "worker_caps": "0.25;0.6", "worker_links": "0;2000000", "api": "tf1",
        "cpu_cap_coordinator": "", "ps_cpu_cores": "0.123457", "worker_cpu_cores": "", "tensorflow_version": "2.21.0",
        "qdisc_drops": "3"}
    assert (got[1]["worker_caps"], got[1]["worker_links"], got[1]["ps_bytes"]) == ("0.25", "0", "")
    assert (got[2]["worker_caps"], got[2]["worker_links"]) == ("0.25;0.6;0.6", "0;2000000;0")
    tf2 = _config(tmp_path, api="tf2", trace_workers=False, cpu_cap_coordinator=0.4)
    testbed_files.write_measured_csv(path, tf2, rows[1:2], "2.21.0")
    with path.open() as fh:
        assert next(csv.DictReader(fh))["cpu_cap_coordinator"] == "0.4"


def test_trace_meta_names_the_traced_workers_settings(tmp_path: pathlib.Path) -> None:
    testbed_files.write_trace_meta(tmp_path, _config(tmp_path, worker_caps=(0.25,)), "2.21.0")
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert {k: meta[k] for k in ("tool", "model", "batch_size", "widths", "learning_rate", "warmup_steps",
                                 "traced_steps", "bandwidth_bits_per_s", "cpu_cap_ps", "cpu_cap_worker",
                                 "tensorflow")} == {
        "tool": "tracegen testbed", "model": "mlp", "batch_size": 16, "widths": [32, 16], "learning_rate": 0.125,
        "warmup_steps": 3, "traced_steps": 4, "bandwidth_bits_per_s": 100_000_000, "cpu_cap_ps": 0.5,
        "cpu_cap_worker": 0.25, "tensorflow": "2.21.0"}
