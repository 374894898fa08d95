"""``parsers.limits``: the JSON and text-format shape checks count values (messages) and depth outside strings (and
comments) exactly, chunk by chunk, so that a file is refused for what it holds and an accepted one reads as it did."""

from __future__ import annotations

import gzip
import json
import pathlib
from typing import Any

import pytest
from google.protobuf import text_format
from hypothesis import given
from hypothesis import strategies as st

import parsers.limits
from parsers import TraceFormatError, read_trace
from parsers.limits import check_json_shape, check_text_shape
from parsers.proto import tf_trace_pb2 as pb

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


# ------------------------------------------------------------------------------------------- text format


def _text_reference(data: bytes, limit: int) -> tuple[int, int | None]:
    """(messages, offset where nesting first passes ``limit``) of text-format ``data``, byte by byte, as protobuf's
    tokenizer reads it: a string in double or single quotes runs to its closing quote, a backslash in it escaping
    the byte after it unless that ends the line, and a string or a ``#`` comment ends with its line."""
    messages, depth, deep_at = 0, 0, None
    inside, escaped = b"", False  # inside: b"" in code, else the quote or b"#" that opened what the byte is in
    for at, byte in enumerate(data):
        char = bytes([byte])
        if char == b"\n":
            inside, escaped = b"", False
        elif escaped:
            escaped = False
        elif inside == b"#":
            pass
        elif inside:
            escaped = char == b"\\"
            inside = b"" if char == inside else inside
        elif char in b"\"'#":
            inside = char
        elif char in b"{<":
            messages += 1
            depth += 1
            if depth > limit and deep_at is None:
                deep_at = at
        elif char in b"}>":
            depth -= 1
    return messages, deep_at


# what moves the lexer, in runs that split anywhere: quotes, escapes, comments, ends of lines and brackets
_TEXT_PIECES = st.sampled_from([b'"', b"'", b"#", b"\n", b"\\", b"\\\\", b'\\"', b"\\'", b"{", b"}", b"<", b">",
                                b"a", b" ", b"x {", b'name: "a{"', "é".encode()])


@given(pieces=st.lists(_TEXT_PIECES, max_size=60), chunk=st.integers(1, 9) | st.just(1 << 20),
       block=st.sampled_from([2, 3, 16]), limit=st.integers(0, 5))
def test_text_scan_counts_what_a_byte_by_byte_reader_counts_wherever_the_chunks_end(
        pieces: list[bytes], chunk: int, block: int, limit: int) -> None:
    data = b"".join(pieces)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parsers.limits, "_CHUNK", chunk)
        patch.setattr(parsers.limits, "_BLOCK", block)  # small blocks: the blocks' runs are scanned too
        patch.setattr(parsers.limits, "MAX_NESTING", limit)
        assert parsers.limits._text_scan(data) == _text_reference(data, limit)


@pytest.mark.parametrize(("scan", "data"), [
    ("_json_scan", b'["' + b"\\\\" * 7 + b'", "[[[", "\\"]]"]'),  # an even run of backslashes ends before the quote
    ("_json_scan", b'["\\\\\\"[[", 1]'),                           # an odd run escapes the quote after it
    ("_json_scan", b'["' + b"\\" * 3),                            # unterminated: the string runs to the end
    ("_text_scan", b'a { s: "' + b"\\\\" * 5 + b'" b { c {} } }'),
    ("_text_scan", b"a { s: '\\\\\\'{' b { c { } } }"),
    ("_text_scan", b'a { s: "x\\\n b { c { } } }'),               # a backslash ending a line escapes nothing
    ("_text_scan", b"a { # it's {{ \"\n b { c { } } }"),          # a comment's quotes open nothing
    ("_text_scan", b'a\\"{ b { c { } } }'),                       # in code a backslash escapes nothing
])
def test_scan_of_escapes_and_comments_split_at_every_byte(scan: str, data: bytes) -> None:
    reference = {"_json_scan": _reference, "_text_scan": _text_reference}[scan]
    for chunk in range(1, len(data) + 1):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(parsers.limits, "_CHUNK", chunk)
            patch.setattr(parsers.limits, "MAX_NESTING", 1)
            assert getattr(parsers.limits, scan)(data) == reference(data, 1), chunk


@pytest.mark.parametrize("model", ["mlp", "cnn", "resnet"])
def test_a_text_step_at_the_message_limit_reads_as_its_binary(
        model: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bundled step written as text under a comment with a brace: the raw count is over a limit of exactly its
    messages, so the precise scan runs and lets it through, read as the binary step is; one message fewer allowed,
    it is refused in one line naming the file, the count and the limit."""
    binary = TRACES / model / "step_000.pb"
    data = b"# a step {written as text}\n" + text_format.MessageToString(pb.RunMetadata.FromString(binary.read_bytes())
                                                                  ).encode()
    path = tmp_path / "step.pbtxt"
    path.write_bytes(data)
    messages, _ = _text_reference(data, parsers.limits.MAX_NESTING)
    assert data.count(b"{") + data.count(b"<") > messages
    monkeypatch.setattr(parsers.limits, "MAX_VALUES", messages)
    got, expected = read_trace(path), read_trace(binary)
    assert got.equals(expected) and got.skipped == expected.skipped
    monkeypatch.setattr(parsers.limits, "MAX_VALUES", messages - 1)
    with pytest.raises(TraceFormatError) as info:
        read_trace(path)
    assert str(info.value) == (f"{path}: text-format protobuf holds {messages} messages, more than the limit of "
                               f"{messages - 1}")


def test_text_depth_past_escapes_split_across_chunks_is_found_at_its_line_and_column(
        monkeypatch: pytest.MonkeyPatch) -> None:
    data = (b'step_stats {\n  # {{ "\n  x: "' + b"\\\\" * 40 + b'\\"{{"\n  y: \'}}\\\n' + b"  z {" * 70
            + b"}" * 71 + b"\n")
    monkeypatch.setattr(parsers.limits, "_CHUNK", 3)
    with pytest.raises(TraceFormatError) as info:
        check_text_shape(data, "x.pbtxt")
    # step_stats is level 1, so the 64th z of line 5 is the 65th level; its brace is the 5th byte of its 5
    assert str(info.value) == f"x.pbtxt:5:{63 * 5 + 5}: text-format messages nested more than 64 deep"


def test_a_binary_step_cut_short_is_told_so(step_pb: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """A step copied only in part was refused as 'field 1 has length 13927, more than the 1997 bytes left in its
    message', which reads as a fault of the format, not of the copy; bytes that are no step are not told so."""
    data = step_pb.read_bytes()
    cut = tmp_path / "cut.pb"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFormatError, match=r"^.*cut\.pb: .*byte \d+: field [1-4] has length \d+, more than the \d+ "
                                               r"bytes left in its message; the file ends first: cut short\?$"):
        read_trace(cut)
    other = tmp_path / "other.pb"
    other.write_bytes(b"\xea\x14\x84\x1e" + bytes(100))  # field 333, of length 3844: of no step
    with pytest.raises(TraceFormatError) as info:
        read_trace(other)
    assert "field 333 has length 3844" in str(info.value) and "cut short" not in str(info.value)
