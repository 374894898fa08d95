"""Atomic file writes: a reader sees the old file or the whole new one, never a half-written file."""

from __future__ import annotations

import contextlib
import os
import pathlib
import secrets
from collections.abc import Iterator
from typing import IO, Any


@contextlib.contextmanager
def open_atomic(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on a clean exit it is synced and renamed onto ``path``.

    On an exception the temporary file is removed and ``path`` is left as it was. The new file gets the
    permissions a plain ``open`` would give it (0666 less the umask). The temporary file's name is chosen before
    it is created, inside the ``try``: a KeyboardInterrupt that lands just after the file exists (a sweep's Ctrl-C
    while it writes a part) still removes it.
    """
    target = pathlib.Path(path)
    tmp: pathlib.Path | None = None
    try:
        for _ in range(100):
            tmp = target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies, as for open()
                break
            except FileExistsError:
                tmp = None  # another writer's: not ours to remove
            except OSError as exc:  # a folder missing or not writable: named as the path the caller asked for
                tmp = None
                raise _about(exc, target) from None
        else:
            raise FileExistsError(f"{target}: no free temporary name beside it in 100 tries")
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        try:
            tmp.replace(target)
        except OSError as exc:  # a directory where the file should go, say
            raise _about(exc, target) from None
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)


def _about(exc: OSError, target: pathlib.Path) -> OSError:
    """``exc`` naming ``target``, not the temporary file beside it, which the user never asked for (``OSError``
    with an errno makes the same subclass: PermissionError, IsADirectoryError, ...)."""
    return OSError(exc.errno, exc.strerror, os.fspath(target)) if exc.errno else exc


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`open_atomic`)."""
    with open_atomic(path, "wb") as fh:
        fh.write(data)
