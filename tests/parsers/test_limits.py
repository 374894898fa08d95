"""``parsers.limits``: the JSON shape check counts values and depth outside strings exactly, chunk by chunk, so that
a file is refused for what it holds and an accepted one reads as it did."""

from __future__ import annotations

import gzip
import json
import pathlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import parsers.limits
from parsers import TraceFormatError, read_trace
from parsers.limits import check_json_shape

TRACES = pathlib.Path(__file__).resolve().parents[2] / "data" / "traces"
VIEWER = TRACES / "tf2_pss_viewer" / "plugins" / "profile" / "2026_12_01_12_50_54"


def _reference(data: bytes, limit: int) -> tuple[int, int | None]:
    """(values, offset where nesting first passes ``limit``) of ``data``, byte by byte: the obvious way."""
    values, depth, deep_at = 1, 0, None
    in_string = escaped = False
    for at, byte in enumerate(data):
        char = chr(byte)
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{,":
            values += 1
            depth += char != ","
            if depth > limit and deep_at is None:
                deep_at = at
        elif char in "]}":
            depth -= 1
    return values, deep_at


# strings full of what the scan must not count: brackets, commas, quotes and backslashes (escaped when written)
_TEXT = st.text(alphabet='[]{},"\\ aé\n', max_size=12)
_DOCS = st.recursive(st.none() | st.integers() | _TEXT,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                     max_leaves=40)


@given(doc=_DOCS, ascii_only=st.booleans(), chunk=st.integers(1, 9), limit=st.integers(0, 6))
def test_scan_counts_what_a_byte_by_byte_reader_counts_wherever_the_chunks_end(
        doc: Any, ascii_only: bool, chunk: int, limit: int) -> None:
    data = json.dumps(doc, ensure_ascii=ascii_only).encode()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parsers.limits, "_CHUNK", chunk)
        patch.setattr(parsers.limits, "MAX_NESTING", limit)
        assert parsers.limits._json_scan(data) == _reference(data, limit)


@pytest.mark.parametrize("data", [
    b'["' + b"\\\\" * 7 + b'", "[[[", "\\"]]"]',  # an even run of backslashes ends before the closing quote
    b'["\\\\\\"[[", 1]',                           # an odd run escapes the quote after it
    b'["' + b"\\" * 3,                            # unterminated: the string runs to the end
])
def test_scan_of_backslash_runs_split_at_every_byte(data: bytes) -> None:
    for chunk in range(1, len(data) + 1):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(parsers.limits, "_CHUNK", chunk)
            patch.setattr(parsers.limits, "MAX_NESTING", 1)
            assert parsers.limits._json_scan(data) == _reference(data, 1), chunk


def test_a_trace_at_the_value_limit_reads_as_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The precise count runs (the raw one is over: the events' arguments hold commas) and lets a trace holding
    exactly the limit through, unchanged; one value over the limit is refused in one line naming the file, the
    count and the limit."""
    path = VIEWER / "127.0.0.1_47463.trace.json.gz"
    data = gzip.decompress(path.read_bytes())
    values, _ = _reference(data, parsers.limits.MAX_NESTING)
    expected = read_trace(path)
    monkeypatch.setattr(parsers.limits, "MAX_VALUES", values)
    assert data.count(b"[") + data.count(b"{") + data.count(b",") + 1 > values
    got = read_trace(path)
    assert got.equals(expected) and got.source == expected.source and got.skipped == expected.skipped
    monkeypatch.setattr(parsers.limits, "MAX_VALUES", values - 1)
    with pytest.raises(TraceFormatError) as info:
        read_trace(path)
    assert str(info.value) == (f"{path}: JSON holds about {values} values, more than the limit of {values - 1}")


def test_many_small_events_are_refused_naming_the_file_and_limit(tmp_path: pathlib.Path) -> None:
    event = b'{"ph":"X","ts":1,"dur":1,"pid":1,"tid":1,"name":"a,[b]"}'
    n = parsers.limits.MAX_VALUES // 7 + 1
    path = tmp_path / "many.json"
    path.write_bytes(b'{"traceEvents":[' + b",".join([event] * n) + b"]}")
    with pytest.raises(TraceFormatError) as info:
        read_trace(path)
    # per event its object and 5 more values, and a comma before the next; the document, its object and list
    assert str(info.value) == (f"{path}: JSON holds about {7 * n + 2} values, more than the limit of "
                               f"{parsers.limits.MAX_VALUES}")


def test_depth_hidden_in_a_chunk_boundary_is_found_at_its_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b'{"a": "' + b"\\\\" * 40 + b'\\"[", "b": ' + b"[" * 70 + b"]" * 70 + b"}"
    monkeypatch.setattr(parsers.limits, "_CHUNK", 3)
    with pytest.raises(TraceFormatError) as info:
        check_json_shape(data, "x.json")
    # the object is level 1, so the 64th bracket of the run is the 65th level
    assert str(info.value) == f"x.json: byte {data.index(b'[' * 70) + 63}: JSON nested more than 64 deep"
