"""Bytes from disk, bounded: regular files only, at most a limit counted in bytes actually read, gzip expanded
member by member under the same limit.

A file's reported size is not trusted (``/proc`` files report 0, a file can grow while it is read); devices and
pipes are refused before they are opened, since ``/dev/zero`` never ends and opening a FIFO with no writer
blocks forever.
"""

from __future__ import annotations

import errno
import io
import os
import pathlib
import stat
import zlib

from parsers.errors import TraceFormatError, counted, quoted

GZIP_MAGIC = b"\x1f\x8b"
_OUT_CHUNK = 1 << 20  # gzip output taken at a time
_FEED_CHUNK = 1 << 16
MAX_GZIP_MEMBERS = 10_000
_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFSOCK: "a socket"}


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def broken_link(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it is a symbolic link that leads to nothing (to itself, round a loop, or to a path
    that does not exist), in words for a message; None when it is no such link."""
    link = pathlib.Path(path)
    if not link.is_symlink():
        return None
    try:
        link.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "a symbolic link that loops"
        try:
            return f"a symbolic link to {quoted(str(link.readlink()))}, which does not exist"
        except OSError:
            return "a symbolic link that leads nowhere"
    return None


def not_regular(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is, in words for a message, when it is no regular file that can be read (a FIFO, a device, a
    directory, a symbolic link to nothing, a path that cannot be looked at); None for a regular file."""
    try:
        mode = pathlib.Path(path).stat().st_mode
    except OSError as exc:
        return broken_link(path) or f"cannot be looked at ({exc.strerror or exc})"
    return None if stat.S_ISREG(mode) else _kind(mode)


def refuse_unreadable(path: pathlib.Path) -> None:
    """TraceFormatError when ``path``, named as one of a trace's files (in a directory or a pattern's matches), is
    no regular file: left out without a word, the trace would be read without the step or host it stands for."""
    if (what := not_regular(path)) is not None:
        raise TraceFormatError(f"{path}: {what}: named as one of the trace's files, but cannot be read; fix or "
                               "remove it")


def read_file(source: str | os.PathLike[str], max_bytes: int, error: type[Exception] = TraceFormatError) -> bytes:
    """The bytes of regular file ``source``; ``error`` if it is anything else, unreadable, longer than
    ``max_bytes`` (counted while reading, at most ``max_bytes + 1`` bytes are read), or an empty path (which
    ``pathlib`` would take for the current directory: an unset shell variable given as the file)."""
    if not os.fspath(source):
        raise error("'': an empty path names no file")
    path = pathlib.Path(source)
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise error(f"{path}: {_kind(mode)}, not a regular file: refused")
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            mode = os.fstat(fd).st_mode  # what was opened, should the path have changed since stat()
            if not stat.S_ISREG(mode):
                raise error(f"{path}: {_kind(mode)}, not a regular file: refused")
            chunks: list[bytes] = []
            total = 0
            while total <= max_bytes:
                # all that is allowed at once: a regular file comes in one read, into one buffer that shrinks to
                # fit, which the join returns as it is (1 MiB reads held every byte twice while they were joined)
                chunk = os.read(fd, max_bytes + 1 - total)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        finally:
            os.close(fd)
    except OSError as exc:
        raise error(f"{path}: cannot read: {broken_link(path) or exc.strerror or exc}") from None
    except ValueError as exc:  # a path holding a NUL character
        raise error(f"{path!r}: cannot read: {exc}") from None
    if total > max_bytes:
        raise error(f"{path}: file is more than the limit of {max_bytes} bytes")
    return b"".join(chunks)


def expand(data: bytes, source: str, max_bytes: int) -> bytes:
    """``data`` gunzipped (:func:`gunzip`) when it is gzip, else as it is; a ``source`` named ``.gz`` that is not
    gzip is refused saying so: read as what it held, it failed as that ('its first line ... starts no field') or
    was taken without a word where gunzip and every other tool refuse it."""
    if data.startswith(GZIP_MAGIC):
        return gunzip(data, source, max_bytes)
    if source.lower().endswith(".gz"):
        raise TraceFormatError(f"{source}: named .gz but is not gzip (gzip begins with bytes 1f 8b; this begins "
                               f"with {data[:8]!r}); gzip it, or drop .gz from its name if it is plain")
    return data


def read_expanded(source: str | os.PathLike[str], max_bytes: int,
                  error: type[Exception] = TraceFormatError) -> bytes:
    """:func:`read_file` then :func:`expand`: a file a user names, read gzipped or plain as a trace is, every
    problem raised as ``error``."""
    data = read_file(source, max_bytes, error)
    try:
        return expand(data, os.fspath(source), max_bytes)
    except TraceFormatError as exc:
        if isinstance(exc, error):
            raise
        raise error(str(exc)) from None


def not_utf8_at(data: bytes, exc: UnicodeDecodeError, *, lone_cr: bool = False) -> tuple[int, int]:
    """Where ``data`` stops being UTF-8, from ``exc``, what ``data.decode("utf-8-sig")`` raised: (line, byte of the
    file). The codec counts ``exc.start`` in the bytes after a byte-order mark (``exc.object``), so counted in
    ``data`` it named a byte 3 early and could miss the line break before it, or cut a character in two and fail
    decoding the lines before it. Lines end at ``\\n`` (with ``lone_cr``, at a ``\\r`` alone too, as a CSV reader's
    do)."""
    seen = exc.object if isinstance(exc.object, bytes) else data
    before = seen[: exc.start]
    breaks = before.count(b"\n") + (before.count(b"\r") - before.count(b"\r\n") if lone_cr else 0)
    return 1 + breaks, len(data) - len(seen) + exc.start


def gunzip(data: bytes, source: str, max_bytes: int) -> bytes:
    """Expand every member of gzip ``data``, stopping as soon as the output passes ``max_bytes``; refuses
    corrupt or truncated members, more than ``MAX_GZIP_MEMBERS`` of them, and bytes after the last member that
    do not start another one."""
    out = io.BytesIO()  # grows in place and gives its buffer back uncopied: a list joined held the output twice
    total = 0
    start = 0
    for _ in range(MAX_GZIP_MEMBERS):
        end, produced = _gunzip_member(data, start, source, (max_bytes - total, max_bytes), out)
        total += produced
        if end == len(data):
            return out.getvalue()
        if not data.startswith(GZIP_MAGIC, end):
            raise TraceFormatError(f"{source}: byte {end}: {counted(len(data) - end, 'byte')} of trailing data after "
                                   "the last gzip member")
        start = end
    raise TraceFormatError(f"{source}: more than {MAX_GZIP_MEMBERS} gzip members")


def _gunzip_member(data: bytes, start: int, source: str, limits: tuple[int, int],
                   out: io.BytesIO) -> tuple[int, int]:
    """Expand the gzip member at byte ``start`` into ``out``, giving at most ``limits[0]`` bytes of the whole
    content's ``limits[1]``: (where the member ends, bytes it gave).

    Input is fed in small pieces so that what zlib copies aside (its unused and unconsumed input) stays small, and
    output is taken ``_OUT_CHUNK`` at a time, so that a piece of input that expands a thousandfold is not held
    whole beside ``out``."""
    budget, max_bytes = limits
    view = memoryview(data)
    decomp = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    fed = start
    pending: bytes | memoryview = b""
    produced = 0
    try:
        while not decomp.eof:
            if not pending:
                pending = view[fed : fed + _FEED_CHUNK]
                fed += len(pending)
            chunk = decomp.decompress(pending, min(_OUT_CHUNK, budget + 1 - produced))
            produced += len(chunk)
            out.write(chunk)
            if produced > budget:
                raise TraceFormatError(f"{source}: gzip content expands beyond the limit of {max_bytes} bytes")
            pending = decomp.unconsumed_tail
            if not (chunk or pending or decomp.eof or fed < len(data)):  # all input taken, nothing more comes
                raise TraceFormatError(f"{source}: gzip member at byte {start} is truncated (the data ends "
                                       "before its end marker)")
    except zlib.error as exc:
        raise TraceFormatError(f"{source}: corrupt gzip member at byte {start}: {exc}") from None
    return fed - len(decomp.unused_data), produced
