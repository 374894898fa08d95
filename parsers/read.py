"""``read_trace``: one entry point for every supported input, the format told from content.

Accepted: a RunMetadata or bare StepStats protobuf (binary or text format); a TF timeline or tracegen Chrome
JSON, plain or gzipped; a directory or glob of several traced steps (RunMetadata files are preferred over
Chrome JSON of the same steps, which is lossy); a table directory written by ``tracegen convert``.
Sizes are bounded: a file (or what a gzip file expands to) larger than ``max_bytes`` is refused unread.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import pathlib
import zlib

from parsers.chrome import read_chrome
from parsers.errors import TraceContentError, TraceFormatError
from parsers.runmetadata import StepFile, is_text_format, parse_step, read_steps
from parsers.tables import is_table_dir, read_tables
from parsers.trace import Trace

MAX_BYTES = 1 << 30  # 1 GiB: far above any real single-step trace, far below this machine's memory
GZIP_MAGIC = b"\x1f\x8b"
PROTO_SUFFIXES = (".pb", ".pbtxt", ".txt", ".runmeta", ".stepstats", ".pb.gz", ".pbtxt.gz")
JSON_SUFFIXES = (".json", ".json.gz", ".trace", ".trace.gz")
META_NAME = "meta.json"  # the capture settings ``tracegen profile`` writes beside the steps: not a trace


def read_bytes(path: pathlib.Path, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's content, gunzipped when it is gzip; refuses empty, unreadable or oversized input."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise TraceFormatError(f"{path}: file is {size} bytes, more than the limit of {max_bytes}")
        data = path.read_bytes()
    except OSError as exc:
        raise TraceFormatError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if not data.strip():
        raise TraceFormatError(f"{path}: file is empty")
    if data.startswith(GZIP_MAGIC):
        data = _gunzip(data, path, max_bytes)
        if not data.strip():
            raise TraceFormatError(f"{path}: gzip content is empty")
    return data


def _gunzip(data: bytes, path: pathlib.Path, max_bytes: int) -> bytes:
    decomp = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        out = decomp.decompress(data, max_bytes + 1)
    except zlib.error as exc:
        raise TraceFormatError(f"{path}: corrupt gzip data: {exc}") from exc
    if len(out) > max_bytes:
        raise TraceFormatError(f"{path}: gzip content expands beyond the limit of {max_bytes} bytes")
    if not decomp.eof:
        raise TraceFormatError(f"{path}: gzip data is truncated (stream ends before its end marker)")
    return out


def looks_like_json(data: bytes) -> bool:
    """Whether the content starts like a JSON document (after whitespace and a UTF-8 byte-order mark)."""
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1] in (b"{", b"[")


def read_trace(path: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES) -> Trace:
    """Read a trace file, a directory of traced steps or a glob pattern into one Trace."""
    text = os.fspath(path)
    target = pathlib.Path(text)
    if is_table_dir(target):
        return read_tables(target)
    if target.is_dir():
        return _read_many(sorted(p for p in target.iterdir() if p.is_file() and not p.name.startswith(".")),
                          text, max_bytes)
    if not target.exists() and glob.has_magic(text):
        matches = (pathlib.Path(p) for p in glob.glob(text))  # noqa: PTH207 - the pattern may be absolute
        return _read_many(sorted(p for p in matches if p.is_file()), text, max_bytes)
    if not target.exists():
        raise TraceFormatError(f"{text}: no such file or directory")
    data = read_bytes(target, max_bytes)
    if looks_like_json(data):
        return read_chrome(data, text)
    step = parse_step(data, text)
    return read_steps([step], text, "runmetadata-text" if is_text_format(data) else "runmetadata")


def _read_many(paths: list[pathlib.Path], source: str, max_bytes: int) -> Trace:
    candidates = [p for p in paths if p.name.endswith(PROTO_SUFFIXES + JSON_SUFFIXES) and p.name != META_NAME]
    if not candidates:
        raise TraceFormatError(f"{source}: no trace files (*.pb, *.pbtxt, *.json, each maybe .gz) found")
    protos = [p for p in candidates if p.name.endswith(PROTO_SUFFIXES)]
    if not protos:
        if len(candidates) > 1:
            raise TraceContentError(f"{source}: {len(candidates)} Chrome JSON files; Chrome JSON holds one step "
                                    "without tensor names, so steps cannot be merged: pass one file")
        return read_trace(candidates[0], max_bytes=max_bytes)
    steps: list[StepFile] = []
    formats = set()
    for p in protos:
        data = read_bytes(p, max_bytes)
        if looks_like_json(data):
            raise TraceFormatError(f"{p}: JSON content in a protobuf-named file")
        steps.append(parse_step(data, str(p)))
        formats.add("runmetadata-text" if is_text_format(data) else "runmetadata")
    trace = read_steps(steps, source, "+".join(sorted(formats)))
    ignored = len(candidates) - len(protos)
    if ignored:
        skipped = dict(trace.skipped)
        skipped["Chrome JSON files ignored in favour of RunMetadata of the same steps"] = ignored
        trace = dataclasses.replace(trace, skipped=skipped)
    return trace
