"""The Perfetto checker must find what Perfetto would drop: tests that it can fail."""

from __future__ import annotations

from parsers.perfetto import check_perfetto


def test_check_perfetto_finds_overlaps_and_unnamed_tracks() -> None:
    events = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "p"}},
        {"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "name": "a"},
        {"ph": "X", "pid": 1, "tid": 1, "ts": 5, "dur": 10, "name": "b"},
        {"ph": "s", "pid": 1, "tid": 1, "ts": 1, "id": 9, "name": "f"},
    ]
    problems = check_perfetto(events)
    assert any("partly overlaps" in p for p in problems)
    assert any("no thread_name" in p for p in problems)
    assert any("flow id 9" in p for p in problems)


def test_nested_slices_and_bound_flows_are_clean() -> None:
    events = [
        {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "p"}},
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "t"}},
        {"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "name": "outer"},
        {"ph": "X", "pid": 1, "tid": 1, "ts": 2, "dur": 3, "name": "inner"},
        {"ph": "X", "pid": 1, "tid": 1, "ts": 10, "dur": 1.5, "name": "next"},
        {"ph": "s", "pid": 1, "tid": 1, "ts": 1, "id": 9, "name": "f"},
        {"ph": "f", "pid": 1, "tid": 1, "ts": 10.5, "id": 9, "name": "f", "bp": "e"},
    ]
    assert check_perfetto(events) == []
