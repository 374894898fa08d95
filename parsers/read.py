"""``read_trace``: one entry point for every supported input, the format told from content.

Accepted: a RunMetadata or bare StepStats protobuf (binary or text format); a TF timeline or tracegen Chrome
JSON, plain or gzipped (any number of gzip members); a directory or glob of several traced steps (RunMetadata
files are preferred over Chrome JSON of the same steps, which is lossy); a table directory written by
``tracegen convert``; a TF2 profile (``<host>.xplane.pb``, a profile run directory or a TensorBoard logdir: see
:mod:`parsers.xplane`), or TensorBoard's trace-viewer JSON of one (:mod:`parsers.traceviewer`).
Sizes are bounded by bytes actually read: a file, what a gzip file expands to, and all the files of a
directory together may hold at most ``max_bytes``; see :mod:`parsers.limits` for the rest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import itertools
import json
import os
import pathlib
import re
from collections.abc import Callable, Iterable
from typing import Any

from parsers.chrome import chrome_from_events, load_events
from parsers.errors import TraceContentError, TraceFormatError, counted, quoted
from parsers.files import GZIP_MAGIC, expand, read_file, refuse_unreadable
from parsers.jsondoc import finite_float, load_json
from parsers.limits import MAX_BYTES, MAX_FILES, SCAN_BYTES
from parsers.linkprofile import PROFILE_NAME
from parsers.runmetadata import StepFile, is_text_format, move_away_hint, parse_step, read_steps
from parsers.singleworker import SINGLE_WORKER_NAME
from parsers.tables import MANIFEST, is_table_dir, read_tables, table_files
from parsers.trace import Trace
from parsers.traceviewer import is_trace_viewer, read_trace_viewer, trace_from_viewer_events
from parsers.xplane import read_xplane_files, read_xspaces
from parsers.xspace import (
    PROFILE_SUFFIXES,
    XPLANE_SUFFIXES,
    host_name,
    is_profile_dir,
    looks_like_xspace,
    profile_files,
    profile_runs,
    read_profile_files,
)

PROTO_SUFFIXES = (".pb", ".pbtxt", ".txt", ".runmeta", ".stepstats", ".pb.gz", ".pbtxt.gz")
JSON_SUFFIXES = (".json", ".json.gz", ".trace", ".trace.gz")
UTF8_BOM = b"\xef\xbb\xbf"
META_NAME = "meta.json"  # the capture settings ``tracegen profile`` writes beside the steps: not a trace
BESIDE = (META_NAME, PROFILE_NAME, SINGLE_WORKER_NAME)  # what sits beside a trace and is not one
MAX_META_BYTES = 1 << 20  # a few hundred bytes as written
# what holds nothing; matched, not stripped, since strip() copies a file that ends in a newline whole
_BLANK = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\n\r\x0b\x0c]*")


def beside_dir(trace: str | os.PathLike[str]) -> pathlib.Path:
    """The folder of the files that sit beside ``trace`` (:data:`BESIDE`): its directory of steps, or the folder of
    the file (or glob); for a TF2 profile's run directory, or a file in one (``LOGDIR/plugins/profile/RUN``), the
    TensorBoard logdir, where they sit beside ``plugins/``."""
    path = pathlib.Path(trace)
    folder = path if path.is_dir() else path.parent
    if folder.parent.name == "profile" and folder.parent.parent.name == "plugins":
        return folder.parent.parent.parent
    return folder


def side_files(trace: str | os.PathLike[str]) -> list[pathlib.Path]:
    """The files of :data:`BESIDE` that are there beside ``trace`` (:func:`beside_dir`), in that order: what the
    commands that read the trace read with it (its batch size, its measured link, its untraced worker's rate)."""
    folder = beside_dir(trace)
    return [folder / name for name in BESIDE if is_there(folder / name)]


def is_there(path: pathlib.Path) -> bool:
    """Whether ``path`` names something, a symbolic link that leads nowhere included: ``exists()`` says False for
    one, and a ``link-profile.json`` linked round a loop or to a moved file was passed over as if absent, the
    prediction made from the trace's own link without a word; read, it is refused saying what the link is."""
    return os.path.lexists(path)


def meta_path(trace: str | os.PathLike[str]) -> pathlib.Path:
    """Where the capture settings of ``trace`` are: ``meta.json`` beside it (:func:`beside_dir`)."""
    return beside_dir(trace) / META_NAME


def read_meta(trace: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The capture settings beside ``trace`` (:func:`meta_path`) as a JSON object, plain or gzipped as the other
    files beside it are (a gzipped one was refused as 'line 1, byte 1: JSON is not valid UTF-8'), read strictly
    (:func:`parsers.jsondoc.load_json`); None when there is no such file."""
    path = meta_path(trace)
    if not is_there(path):
        return None
    doc = load_json(expand(read_file(path, MAX_META_BYTES), str(path), MAX_META_BYTES), str(path),
                    parse_float=finite_float)
    if not isinstance(doc, dict):
        raise TraceFormatError(f"{path}: capture settings must be a JSON object (got {quoted(doc)})")
    return doc


def read_bytes(path: pathlib.Path, max_bytes: int = MAX_BYTES) -> bytes:
    """The file's content, gunzipped when it is gzip; refuses empty, unreadable, non-regular or oversized
    input (at most ``max_bytes`` read, and at most ``max_bytes`` expanded)."""
    data = read_file(path, max_bytes)
    if _BLANK.fullmatch(data):  # white space, or a byte-order mark and white space, holds nothing
        raise TraceFormatError(f"{path}: file is empty")
    gzipped = data.startswith(GZIP_MAGIC)
    data = expand(data, str(path), max_bytes)
    if gzipped:
        if not data or data.isspace():
            raise TraceFormatError(f"{path}: gzip content is empty")
        if data.startswith(GZIP_MAGIC):
            raise TraceFormatError(f"{path}: gzip inside gzip; gunzip it once and read what that gives")
    for magic, what in _NOT_A_TRACE:  # else parsed as a protobuf's fields: 'byte 10: field 662 has wire type 3'
        if data.startswith(magic):
            raise TraceFormatError(f"{path}: {what}, not a trace (it begins with {data[:len(magic)]!r})"
                                   + ("; decompress it: a trace is read plain or gzipped" if "compressed" in what
                                      else "; converted tables are read as their folder: give the folder"
                                      if "Parquet" in what else ""))
    return data


# what a file given as a trace often is instead, by its first bytes; no TensorFlow trace begins so (a binary
# RunMetadata or XSpace begins with a field of number 1 to 5, a text-format one with a field's name)
_NOT_A_TRACE = ((b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
                (b"%PDF-", "a PDF document"), (b"PK\x03\x04", "a zip archive"), (b"\x7fELF", "an executable (ELF)"),
                (b"BZh", "bzip2-compressed data"), (b"\xfd7zXZ\x00", "xz-compressed data"),
                (b"\x28\xb5\x2f\xfd", "zstd-compressed data"), (b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
                (b"PAR1", "a Parquet file"))  # one of convert's tables, or a sweep's part


def looks_like_json(data: bytes) -> bool:
    """Whether the content starts like a JSON document (after whitespace and a UTF-8 byte-order mark)."""
    head = data[:64].lstrip(b" \t\r\n").removeprefix(UTF8_BOM).lstrip(b" \t\r\n")
    return head[:1] in (b"{", b"[")


def _json_scalar(data: bytes) -> str | None:
    """What the content is when the whole of it is one JSON value that is neither an object nor an array (``5``,
    ``"text"``, ``null``, ``true``): 'a number (5)', "a string ('text')", 'null', ...; None when it is anything else
    (:func:`parsers.jsondoc.load_json`'s JSON). Only looked at once the content has been refused as a step: no
    text-format step begins so."""
    head = data[:8].removeprefix(UTF8_BOM).lstrip(b" \t\r\n")
    if not head[:1] or head[:1] not in b'-0123456789"ntf':
        return None
    try:
        value = load_json(data, "", parse_float=str)  # a decimal number not made a float: 1e999 is no error
    except TraceFormatError:
        return None
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, str) and head[:1] == b'"':
        return f"a string ({quoted(value)})"
    if isinstance(value, int | str):  # the whole content is the number: quoted as written ('-0', '1e999')
        written = data.decode("utf-8").removeprefix("\ufeff").strip()
        return f"a number ({written if len(written) <= 40 else written[:37] + '...'})"
    return None


def _refuse_json_scalar(data: bytes, source: str, hint: str = "") -> None:
    """TraceFormatError when the whole of ``data``, refused as a step, is one JSON number, string, ``true``,
    ``false`` or ``null`` (:func:`_json_scalar`): neither of the kinds of trace it could have been, in any name."""
    if (what := _json_scalar(data)) is not None:
        raise TraceFormatError(f"{source}: not a trace but {what} alone: no RunMetadata or StepStats (binary or "
                               f"text), nor a timeline JSON object{hint}") from None


def read_trace(path: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES) -> Trace:
    """Read a trace file, a directory of traced steps or a glob pattern into one Trace."""
    text = os.fspath(path)
    if not text:
        raise TraceFormatError("'': an empty path names no trace (use '.' for the current directory)")
    if "\0" in text:
        raise TraceFormatError(f"{quoted(text, 200)}: a path cannot hold a NUL character")
    target = pathlib.Path(text)
    try:
        if is_table_dir(target):
            if beside := trace_files_in(target):  # which one the user meant, nothing tells
                raise TraceFormatError(f"{text}: holds converted tables ({MANIFEST}) and trace files too (e.g. "
                                       f"{beside[0].name}); move one or the other to a directory of its own")
            return read_tables(target, max_bytes=max_bytes)
        if is_profile_dir(target):
            trace = _read_profile(profile_files(target), text, max_bytes)
            if (older := len(profile_runs(target)) - 1) > 0:  # a logdir profiled more than once
                trace = dataclasses.replace(trace, skipped={
                    **trace.skipped, "older profile runs in the logdir, not read (the newest is)": older})
            return trace
        if target.is_dir():
            return _read_many(_files(target.iterdir(), text, lambda p: not p.name.startswith(".")), text, max_bytes,
                              lambda: _nested_trace(target))
        exists = target.exists() or target.is_symlink()
    except OSError as exc:
        raise TraceFormatError(f"{text}: cannot read: {exc.strerror or exc}") from None
    if not exists and glob.has_magic(text):
        matches = (pathlib.Path(p) for p in glob.iglob(text))  # noqa: PTH207 - the pattern may be absolute
        return _read_many(_files(matches, text, lambda _: True), text, max_bytes)
    if not exists:
        raise TraceFormatError(f"{text}: no such file or directory")
    return _read_one(read_bytes(target, max_bytes), text)


def trace_files_in(directory: pathlib.Path) -> list[pathlib.Path]:
    """The files of ``directory`` that :func:`read_trace` takes for a trace's (steps, Chrome JSON, a TF2
    profile's), sorted; not the files beside them (:data:`BESIDE`) nor a table directory's manifest. A table
    directory that holds any of them is refused by :func:`read_trace`: which the user meant, nothing tells."""
    if (directory / "plugins" / "profile").is_dir():  # a TensorBoard logdir
        try:
            return profile_files(directory)
        except TraceFormatError:  # none of its runs holds a profile
            return []
    return [p for p in _files(directory.iterdir(), str(directory), lambda p: not p.name.startswith("."))
            if p.name.endswith(PROTO_SUFFIXES + JSON_SUFFIXES + XPLANE_SUFFIXES) and p.name not in (*BESIDE, MANIFEST)]


def trace_inputs(path: str | os.PathLike[str]) -> list[pathlib.Path]:
    """The files :func:`read_trace` reads ``path``'s trace from, sorted, chosen as it chooses them: a table
    directory's tables and manifest; a TF2 profile's host files; the steps of a directory or a glob's matches (its
    RunMetadata when it holds any, else its Chrome JSON); the file itself. Not the files it lists and passes over
    (Chrome JSON beside RunMetadata of the same steps, a profile's other tools' files, anything else in the
    folder), nor those beside the trace (:func:`side_files`): what a trace is, for a content hash, so that a file
    written into its folder (a prediction's ``curve.csv``) does not change it. None when ``path`` names nothing;
    TraceFormatError where :func:`read_trace` refuses what it lists."""
    text = os.fspath(path)
    target = pathlib.Path(text)
    found: list[pathlib.Path] = []
    try:
        if not text or "\0" in text:
            pass  # names nothing: read_trace says why
        elif is_table_dir(target):
            found = table_files(target)
        elif is_profile_dir(target):
            found = profile_files(target)
        elif target.is_dir():
            found = _chosen(_files(target.iterdir(), text, lambda p: not p.name.startswith(".")))
        elif target.exists() or target.is_symlink():
            found = [target]
        elif glob.has_magic(text):
            found = _chosen(_files((pathlib.Path(p) for p in glob.iglob(text)), text, lambda _: True))  # noqa: PTH207
    except OSError as exc:
        raise TraceFormatError(f"{text}: cannot read: {exc.strerror or exc}") from None
    return sorted(found)


def would_join(path: pathlib.Path, trace: str | os.PathLike[str]) -> bool:
    """Whether a new file at ``path`` would change what :func:`read_trace` reads of ``trace``, a folder or a glob
    pattern: written where the folder's trace files are (:func:`trace_inputs`), or where the pattern matches it, it
    would be read as one more of them (a Chrome JSON beside the folder's one Chrome JSON step, a RunMetadata file
    beside its RunMetadata steps), or have the trace refused (a trace file of no profiled host beside a TF2
    profile's, any trace file beside converted tables). A Chrome JSON beside RunMetadata steps is passed over for
    them, as a file named after a profiled host is: no."""
    if path.name in (*BESIDE, MANIFEST) or not path.name.endswith(PROTO_SUFFIXES + JSON_SUFFIXES + XPLANE_SUFFIXES):
        return False
    if is_pattern(trace):
        return _would_match(path, os.fspath(trace))
    folder = os.path.realpath(path.parent)
    read_here = [p for p in trace_inputs(trace) if os.path.realpath(p.parent) == folder] if pathlib.Path(
        trace).is_dir() else []  # a file: nothing joins it
    if not read_here:
        return False
    if is_table_dir(read_here[0].parent):
        return True
    if profiles := [p for p in read_here if p.name.endswith(PROFILE_SUFFIXES)]:
        return _joins_profile(path, profiles)
    there = read_here[0].parent
    listed = _files(there.iterdir(), str(there), lambda p: not p.name.startswith("."))
    return there / path.name in _chosen(sorted({*listed, there / path.name}))


def is_pattern(trace: str | os.PathLike[str]) -> bool:
    """Whether :func:`read_trace` reads ``trace`` as a glob pattern: it names nothing as it is, and holds magic."""
    text = os.fspath(trace)
    return bool(text) and "\0" not in text and not os.path.lexists(text) and glob.has_magic(text)


def _would_match(path: pathlib.Path, pattern: str) -> bool:
    """:func:`would_join` of a glob ``pattern``: whether ``path`` matches it (``*`` matching no leading dot, as
    glob's does not) and would be chosen among its matches, or have them refused beside a TF2 profile's."""
    if path.name.startswith(".") and not pathlib.PurePath(pattern).name.startswith("."):
        return False
    if not pathlib.PurePath(os.path.abspath(path)).match(os.path.abspath(pattern)):  # noqa: PTH100 - a pattern
        return False
    matches = _files((pathlib.Path(p) for p in glob.iglob(pattern)), pattern, lambda _: True)  # noqa: PTH207
    if profiles := [p for p in matches if p.name.endswith(XPLANE_SUFFIXES)]:  # as _read_many tells a profile
        return _joins_profile(path, profiles)
    return path in _chosen(sorted({*matches, path}))


def _joins_profile(path: pathlib.Path, profiles: list[pathlib.Path]) -> bool:
    """Whether a trace file at ``path`` would be read with a TF2 profile's host files ``profiles``, or have them
    refused: a host's file is; one named after a profiled host (its other tools' files) is passed over."""
    hosts = {host_name(str(p)) for p in profiles}
    return path.name.endswith(PROFILE_SUFFIXES) or not any(path.name.startswith(f"{h}.") for h in hosts)


def _chosen(paths: list[pathlib.Path]) -> list[pathlib.Path]:
    """Which of a folder's files or a glob's matches (:func:`_files`) :func:`_read_many` reads: the TF2 profile's,
    when there are any; else the RunMetadata steps, when there are any; else the Chrome JSON."""
    if profiles := [p for p in paths if p.name.endswith(XPLANE_SUFFIXES)]:
        return profiles
    candidates = [p for p in paths if p.name.endswith(PROTO_SUFFIXES + JSON_SUFFIXES) and p.name not in BESIDE]
    return [p for p in candidates if p.name.endswith(PROTO_SUFFIXES)] or candidates


def _read_one(data: bytes, text: str) -> Trace:
    """One file's bytes, in whichever format they are: Chrome or trace-viewer JSON, xplane, RunMetadata."""
    if looks_like_json(data):
        events, doc = load_events(data, text)
        if "tracegen" not in doc and is_trace_viewer(events):
            return trace_from_viewer_events(events, text)
        return chrome_from_events(events, doc, text)
    if text.endswith(XPLANE_SUFFIXES):
        return read_xspaces([(text, data)], text)
    try:
        step = parse_step(data, text)
    except TraceFormatError:
        if looks_like_xspace(data):
            return read_xspaces([(text, data)], text)
        _refuse_json_scalar(data, text)  # else 'its first line '5' starts no field of one'
        raise
    return read_steps([step], text, "runmetadata-text" if is_text_format(data) else "runmetadata")


def _read_profile(files: list[pathlib.Path], source: str, max_bytes: int,
                  around: list[pathlib.Path] | None = None) -> Trace:
    """A TF2 profile's host files: XSpaces, or TensorBoard's trace-viewer JSON (:mod:`parsers.traceviewer`).

    The other trace files ``around`` them (default: their directory's) are TensorFlow's own or someone else's.
    Everything TensorFlow's profiler and TensorBoard write into a run directory is named after the host it
    profiled: ``HOST.xplane.pb`` and, beside it, that host's other tools' files (``HOST.trace.json.gz``,
    ``HOST.overview_page.pb``, ``HOST.memory_profile.json.gz``, ...). Those are not read, and counted as skipped,
    so that the summary says so. A trace file named after no profiled host (``step_000.pb``: TF1 steps, as
    ``tracegen profile`` writes them) is another trace in the same place: which of the two the user meant, nothing
    tells, and the directory is refused before either is read, as :func:`read_trace` refuses a table directory
    that holds trace files."""
    read = set(files)
    if around is None:
        around = _files(files[0].parent.iterdir(), source, lambda p: not p.name.startswith("."))
    others = [p for p in around
              if p not in read and p.name not in BESIDE and p.name.endswith(PROTO_SUFFIXES + JSON_SUFFIXES)]
    hosts = {host_name(str(p)) for p in files}
    if foreign := [p for p in others if not any(p.name.startswith(f"{host}.") for host in hosts)]:
        kind = ".xplane.pb" if files[0].name.endswith(XPLANE_SUFFIXES) else ".trace.json.gz"
        raise TraceFormatError(f"{source}: holds a TF2 profile ({counted(len(files), kind + ' file')}, e.g. "
                               f"{files[0].name}) and {counted(len(foreign), 'trace file')} of no profiled host "
                               f"(e.g. {foreign[0].name}); "
                               "which is meant, nothing tells: move one or the other to a directory of its own")
    if files[0].name.endswith(XPLANE_SUFFIXES):
        trace = read_xplane_files(files, source, max_bytes)
    else:
        trace = read_trace_viewer(read_profile_files(files, source, max_bytes), source)
    if not others:
        return trace
    return dataclasses.replace(trace, skipped={**trace.skipped,
                                               "other files beside the TF2 profile, not read": len(others)})


def _files(paths: Iterable[pathlib.Path], source: str, keep: Callable[[pathlib.Path], bool]) -> list[pathlib.Path]:
    """The regular files among ``paths`` that ``keep`` accepts, sorted; at most ``MAX_FILES`` are looked at. One
    named as a trace's file that is no regular file (a link to nothing, a FIFO) is refused, not left out."""
    try:
        found = list(itertools.islice(paths, MAX_FILES + 1))
        if len(found) > MAX_FILES:
            raise TraceFormatError(f"{source}: more than {MAX_FILES} entries; pass a smaller directory or pattern")
        kept = sorted(p for p in found if keep(p))
        for p in kept:
            if p.name.endswith(PROTO_SUFFIXES + JSON_SUFFIXES + XPLANE_SUFFIXES) and p.name not in BESIDE:
                refuse_unreadable(p)
        return [p for p in kept if p.is_file()]
    except OSError as exc:
        raise TraceFormatError(f"{source}: cannot list: {exc.strerror or exc}") from None


MAX_NESTED_LOOKS = 20  # subfolders looked into for a trace, where a folder holds none: each is listed


def _nested_trace(directory: pathlib.Path) -> str:
    """Where a folder holding no trace has a subfolder that reads as one (a testbed's or ``validate --measured``'s
    run folder, whose trace is ``trace/``): "; its folder trace/ holds one: pass that", else ''."""
    with contextlib.suppress(OSError, TraceFormatError):  # a hint only: the refusal stands without it
        subs = sorted(p for p in itertools.islice(directory.iterdir(), MAX_FILES)
                      if not p.name.startswith(".") and p.is_dir())
        for sub in subs[:MAX_NESTED_LOOKS]:
            if is_table_dir(sub) or is_profile_dir(sub) or trace_files_in(sub):
                return f"; its folder {sub.name}/ holds one: pass that"
    return ""


def _read_many(paths: list[pathlib.Path], source: str, max_bytes: int,
               elsewhere: Callable[[], str] = lambda: "") -> Trace:
    """The trace of ``paths`` (a folder's files, a glob's matches); ``elsewhere``: where one may be instead, said
    when they hold none."""
    profiles = [p for p in paths if p.name.endswith(XPLANE_SUFFIXES)]
    if profiles:
        return _read_profile(profiles, source, max_bytes, paths)
    candidates = [p for p in paths if p.name.endswith(PROTO_SUFFIXES + JSON_SUFFIXES) and p.name not in BESIDE]
    if not candidates:
        raise TraceFormatError(f"{source}: no trace files (*.pb, *.pbtxt, *.json, each maybe .gz) found{elsewhere()}")
    protos = [p for p in _chosen(paths) if p.name.endswith(PROTO_SUFFIXES)]  # the choice trace_inputs reports
    if not protos:
        if len(candidates) > 1:
            raise TraceContentError(f"{source}: {len(candidates)} Chrome JSON files; Chrome JSON holds one step "
                                    "without tensor names, so steps cannot be merged: pass one file")
        return read_trace(candidates[0], max_bytes=max_bytes)
    contents: list[tuple[pathlib.Path, bytes]] = []
    total = 0
    for p in protos:
        data = read_bytes(p, max_bytes)
        if looks_like_json(data):
            raise TraceFormatError(f"{p}: JSON content in a protobuf-named file")
        contents.append((p, data))
        total += len(data)
        if total > max_bytes:
            raise TraceFormatError(f"{source}: the trace files hold more than the limit of {max_bytes} bytes "
                                   "together")
    # Small inputs are parsed blindly; once the steps together are large, each is walked before parsing.
    check_shape = total > SCAN_BYTES
    steps: list[StepFile] = []
    for p, data in contents:
        try:
            steps.append(parse_step(data, str(p), check_shape=check_shape, among_steps=True))
        except TraceFormatError:
            _refuse_json_scalar(data, str(p), move_away_hint(str(p)))
            raise
    formats = {"runmetadata-text" if is_text_format(data) else "runmetadata" for _, data in contents}
    del contents
    trace = read_steps(steps, source, "+".join(sorted(formats)))
    ignored = len(candidates) - len(protos)
    if ignored:
        skipped = dict(trace.skipped)
        skipped["Chrome JSON files ignored in favour of RunMetadata of the same steps"] = ignored
        trace = dataclasses.replace(trace, skipped=skipped)
    return trace
