"""``parsers.jsondoc``: what every JSON input (link profile, single-worker.json, meta.json, Chrome trace) is
refused for, said the same way whichever file it is."""

from __future__ import annotations

import pathlib
from collections.abc import Callable
from typing import Any

import pytest

from parsers import TraceFormatError, read_trace
from parsers.linkprofile import ProfileError, read_link_profile
from parsers.read import read_meta
from parsers.singleworker import SingleWorkerError, read_single_worker


def json_readers(folder: pathlib.Path) -> list[tuple[pathlib.Path, Callable[[pathlib.Path], Any], type[Exception]]]:
    """Each JSON input's reader, the file it reads in ``folder`` and the error it raises: every one goes through
    :func:`parsers.jsondoc.load_json`. A Chrome trace's numbers are read exactly (Decimal): it said "'dur' out of
    range ... (got Decimal('1E+400') µs)", not the number as written nor its line."""
    return [(folder / "link-profile.json", read_link_profile, ProfileError),
            (folder / "single-worker.json", read_single_worker, SingleWorkerError),
            (folder / "meta.json", lambda _path: read_meta(folder), TraceFormatError),
            (folder / "trace.json", read_trace, TraceFormatError)]


@pytest.mark.parametrize("data", [b"", b" \n\t\n", b"\xef\xbb\xbf\n"])
def test_an_empty_json_input_says_so_not_invalid_json(tmp_path: pathlib.Path, data: bytes) -> None:
    """An empty link profile said 'invalid JSON: Expecting value' at 1:1, as if its content were wrong."""
    for path, read, error in json_readers(tmp_path):
        path.write_bytes(data)
        with pytest.raises(error) as info:
            read(path)
        assert str(info.value) == f"{path}: file is empty"
    chrome = tmp_path / "trace.json"
    chrome.write_bytes(data)
    with pytest.raises(TraceFormatError) as info:
        read_trace(chrome)
    assert str(info.value) == f"{chrome}: file is empty"


@pytest.mark.parametrize("literal", ["1e400", "-2.5E+309"])
def test_a_number_beyond_a_float_is_quoted_as_written_with_its_position(tmp_path: pathlib.Path,
                                                                        literal: str) -> None:
    """It was read as infinity, and a later range check said '(got inf)', naming neither the text nor where."""
    readers = [(tmp_path / "link-profile.json", read_link_profile, ProfileError),
               (tmp_path / "single-worker.json", read_single_worker, SingleWorkerError),
               (tmp_path / "meta.json", lambda _path: read_meta(tmp_path), TraceFormatError),
               # a Chrome trace's numbers are read exactly (Decimal): it said "'dur' out of range ... (got
               # Decimal('1E+400') µs)", not the number as written nor its line
               (tmp_path / "trace.json", read_trace, TraceFormatError)]
    for path, read, error in readers:
        path.write_text('{"format": "x", "note": "1e400 in a string is text",\n  "window_s": ' + literal + "}")
        with pytest.raises(error) as info:
            read(path)
        assert str(info.value) == f"{path}:2:15: number {literal} is too large (beyond a float's range)"


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_json_that_is_not_utf8_names_the_line_and_the_byte_of_the_file(tmp_path: pathlib.Path, bom: bytes) -> None:
    """It said only 'byte N': in a timeline of tens of megabytes and a line per field, which line was left to
    count."""
    data = bom + b'{\n  "traceEvents": [\n    {"name": "caf\xe9"}\n  ]\n}\n'
    path = tmp_path / "trace.json"
    path.write_bytes(data)
    with pytest.raises(TraceFormatError) as info:
        read_trace(path)
    bad = data.index(b"\xe9")
    assert str(info.value) == f"{path}: line 3, byte {bad}: JSON is not valid UTF-8"


@pytest.mark.parametrize(("text", "where", "what"), [
    ('{"format": "x",\n  "tool": "cut off', "2:11", "a string that does not end"),
    ('{"format": "x",\n  "tool": "a\tb"}', "2:13", "a control character (a tab or a line end) inside a string"),
])
def test_json_broken_inside_a_string_says_what_is_there_not_a_dangling_at(tmp_path: pathlib.Path, text: str,
                                                                        where: str, what: str) -> None:
    """Python's messages for these end in 'at', its position cut off for the file's own: a truncated Chrome trace
    ended in 'invalid JSON: Unterminated string starting at', a tab in a link profile's string in 'Invalid control
    character at' (a hardening pass)."""
    for path, read, error in json_readers(tmp_path):
        path.write_text(text)
        with pytest.raises(error) as info:
            read(path)
        assert str(info.value) == f"{path}:{where}: invalid JSON: {what}"
