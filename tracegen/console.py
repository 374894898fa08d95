"""The standard streams a command prints to, made safe to print to whatever the caller connected.

- A closed standard descriptor (a service or cron job started with ``2>&-``) gets ``/dev/null``: Python sets
  ``sys.stderr`` to None then, and ``print(..., file=None)`` writes to standard output, so every note and
  warning went into the summary a script reads; and the next file opened (a lock, a staged output) would take
  descriptor 2, where a C library's warnings would land in it. With the caller's stderr closed, they are dropped.
- Standard error that cannot be written (``2> /dev/full``) is as good as closed: what goes to it is dropped, where
  the first progress line ended the command with an error it could not print either (exit code 1).
- Standard output that cannot be written (a full disk under ``> file``, ``> /dev/full``) raises
  :class:`StdoutError`, which names it, where Python's own error named no file; and what is still buffered is
  discarded, so that the interpreter's last flush does not add "Exception ignored" lines and exit code 120.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import IO, Any


class StdoutError(OSError):
    """Standard output could not be written (not a closed pipe: that is :class:`BrokenPipeError`)."""


def _write(stream: IO[str], text: str) -> int:
    """``stream.write(text)``; what the stream's encoding cannot hold (a path's byte that is not UTF-8, kept by
    ``os.fsdecode`` as a lone surrogate, on a stream with strict errors) as its escape, ``\\udcfe``."""
    try:
        return stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "utf-8"
        return stream.write(text.encode(encoding, "backslashreplace").decode(encoding))


class _NamedStdout:
    """``stream`` with its write errors raised as :class:`StdoutError`."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        with _named():
            return _write(self._stream, text)

    def flush(self) -> None:
        with _named():
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _QuietStderr:
    """``stream`` with its write errors dropped: nowhere is left to report them."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return _write(self._stream, text)
        except OSError:
            _discard(self._stream)
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            _discard(self._stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def _named() -> Iterator[None]:
    try:
        yield
    except BrokenPipeError:  # the reader went away: the command line stops quietly, as other Unix tools do
        raise
    except StdoutError:
        raise
    except OSError as exc:
        raise StdoutError(exc.errno, exc.strerror or str(exc)) from None


def _open_closed_descriptors() -> None:
    for fd, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, mode | os.O_CLOEXEC)
            if null != fd:
                os.dup2(null, fd)  # inheritable, as a standard descriptor is
                os.close(null)
            else:
                os.set_inheritable(fd, True)


@contextlib.contextmanager
def standard_streams() -> Iterator[None]:
    """For the duration of a command: closed standard descriptors on ``/dev/null``, ``sys.stdout``'s errors
    named, ``sys.stderr``'s dropped (module docstring); the streams as they were afterwards."""
    _open_closed_descriptors()
    stdout, stderr = sys.stdout, sys.stderr
    if sys.stderr is None:
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115 - closed below
    if sys.stdout is None:
        sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115 - closed below
    opened = [s for s, was in ((sys.stdout, stdout), (sys.stderr, stderr)) if was is None]
    sys.stdout, sys.stderr = _NamedStdout(sys.stdout), _QuietStderr(sys.stderr)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            for stream in opened:
                stream.close()
        sys.stdout, sys.stderr = stdout, stderr


def discard_stdout() -> None:
    """What is left of standard output goes nowhere (:func:`_discard`)."""
    _discard(sys.stdout)


def _discard(stream: IO[str] | None) -> None:
    """``stream``'s descriptor on ``/dev/null``: after it failed, the interpreter's last flush would try the
    buffered text again and fail ("Exception ignored ...", exit code 120)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())  # type: ignore[union-attr]  # None: AttributeError, suppressed
        os.close(null)
