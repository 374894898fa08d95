"""The format-neutral trace (``parsers/trace.py``): tables built to their schemas, checked against them, and the
device-name helpers that tell a transfer's direction."""

from __future__ import annotations

import pytest

from parsers import SchemaError
from parsers.trace import (
    OTHER,
    PULL,
    PUSH,
    check_table,
    device_role,
    direction_of,
    make_table,
    printable,
    source_of,
    task_index,
)


def test_tables_enforce_their_ranges() -> None:
    row = {"step": 0, "device": "d", "node_name": "n", "op_type": "t", "start_ns": 1, "dur_ns": 2**60, "lane": 0}
    with pytest.raises(SchemaError, match=r"x\.pb: table 'ops' row 0: 'dur_ns' must be from 0 to 4503599627370496"):
        make_table("ops", [row], where="x.pb")
    with pytest.raises(SchemaError, match="does not fit its type"):
        make_table("ops", [row | {"start_ns": 2**64}])


def test_printable_escapes_lone_surrogates_inside_containers() -> None:
    assert printable("a\udcffb") == "a\\udcffb"
    assert printable({"k\udc80": ["x\udc81", ("y",)]}) == {"k\\udc80": ["x\\udc81", ("y",)]}
    assert printable(("z\udc82",)) == ("z\\udc82",)
    assert printable(7) == 7


@pytest.mark.parametrize(("src", "dst", "direction"), [
    ("/job:ps/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:1/device:CPU:0", PULL),
    ("/job:worker/replica:0/task:1/device:CPU:0", "/job:ps/replica:0/task:0/device:CPU:0", PUSH),
    (None, "/job:worker/replica:0/task:0/device:CPU:0", PULL),
    (None, "/job:ps/replica:0/task:0/device:CPU:0", PUSH),
    ("/job:worker/task:0", "/job:worker/task:1", OTHER),
    ("/job:chief/task:0", "/job:worker/task:0", OTHER),
    ("/job:ps/task:0", "/job:ps/task:1", OTHER),
])
def test_direction_of(src: str | None, dst: str, direction: str) -> None:
    assert direction_of(src, dst) == direction


def test_device_role_and_task_index_read_the_device_name() -> None:
    assert device_role("/job:ps/replica:0/task:2/device:CPU:0") == "ps"
    assert device_role("/job:chief/replica:0/task:0") == "other"
    assert device_role("/device:CPU:0") == "other"
    assert task_index("/job:ps/replica:0/task:12/device:CPU:0") == 12
    assert task_index("/job:ps/replica:0/device:CPU:0") == 0
    assert task_index("/job:ps/task:x") == 0


def test_check_table_refuses_columns_out_of_order() -> None:
    frame = make_table("steps", [{"step": 0, "source": "s", "start_ns": 0, "end_ns": 5}])
    check_table("steps", frame)
    with pytest.raises(SchemaError, match="table 'steps' has columns"):
        check_table("steps", frame[["source", "step", "start_ns", "end_ns"]])
    with pytest.raises(SchemaError, match="table 'steps' has columns"):
        check_table("steps", frame.astype({"step": "int32"}))


def test_make_table_refuses_a_step_that_ends_before_it_starts() -> None:
    with pytest.raises(SchemaError, match=r"table 'steps' row 1: ends before it starts \(start_ns 9, end_ns 8\)"):
        make_table("steps", [{"step": 0, "source": "s", "start_ns": 0, "end_ns": 5},
                             {"step": 1, "source": "s", "start_ns": 9, "end_ns": 8}])


def test_source_of_names_the_file_read_then_where_it_came_from() -> None:
    assert source_of("a.json", "") == "a.json"
    assert source_of("a.json", "a.json") == "a.json"
    assert source_of("a.json", "mlp/trace") == "a.json (from mlp/trace)"
