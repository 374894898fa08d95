"""The measurements CSV: its contract, and malformed files refused with the file, the line and the value."""

from __future__ import annotations

import pathlib

import pytest

from validation.errors import ConfigError
from validation.measured import read_measured


def _csv(tmp_path: pathlib.Path, text: str) -> pathlib.Path:
    path = tmp_path / "m.csv"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "message"), [
    ("n_workers,throughput\n1,2\n", "missing column 'steps_per_s'"),
    ("n_workers,steps_per_s\n", "no measurement rows"),
    ("n_workers,steps_per_s\n1,2\n2,fast\n", "m.csv:3: 'steps_per_s' must be a number (got 'fast')"),
    ("n_workers,steps_per_s\n0,2\n", "m.csv:2: 'n_workers' must be > 0 (got '0')"),
    ("n_workers,steps_per_s\n1.5,2\n", "'n_workers' must be an integer (got '1.5')"),
    ("n_workers,steps_per_s\n1,nan\n", "'steps_per_s' must be > 0 (got 'nan')"),
    ("n_workers,steps_per_s,bandwidth\n1,2,fast\n", "m.csv:2: 'bandwidth': cannot read 'fast' as a rate"),
    ('n_workers,steps_per_s\n1,"2\n', "not a readable CSV"),
    ("n_workers,steps_per_s,host_steal_cores\n1,2,-0.5\n", "m.csv:2: 'host_steal_cores' must be >= 0 (got '-0.5')"),
])
def test_malformed_measurements_name_file_line_and_value(tmp_path: pathlib.Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        read_measured(_csv(tmp_path, text))
    assert message in str(info.value) and str(tmp_path / "m.csv") in str(info.value)
