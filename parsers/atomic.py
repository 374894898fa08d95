"""Atomic file writes: a reader sees the old file or the whole new one, never a half-written file."""

from __future__ import annotations

import contextlib
import os
import pathlib
import secrets
from collections.abc import Iterator, Sequence
from typing import IO, Any


def _create_beside(target: pathlib.Path, created: list[pathlib.Path]) -> int:
    """The descriptor of a new temporary file beside ``target`` (``.NAME.<16 hex digits>.tmp``), its path
    appended to ``created`` before it is made: a KeyboardInterrupt that lands just after the file exists still
    leaves it in the caller's list to remove (a sweep's Ctrl-C while it writes a part)."""
    for _ in range(100):
        created.append(target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp"))
        try:
            return os.open(created[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
        except FileExistsError:
            created.pop()  # another writer's: not ours to remove
        except OSError as exc:  # a folder missing or not writable: named as the path the caller asked for
            created.pop()
            raise _about(exc, target) from None
    raise FileExistsError(f"{target}: no free temporary name beside it in 100 tries")


def _replace(tmp: pathlib.Path, target: pathlib.Path) -> None:
    try:
        tmp.replace(target)
    except OSError as exc:  # a directory where the file should go, say
        raise _about(exc, target) from None


@contextlib.contextmanager
def open_atomic(path: str | os.PathLike[str], mode: str = "wb") -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on a clean exit it is synced and renamed onto ``path``.

    On an exception the temporary file is removed and ``path`` is left as it was. The new file gets the
    permissions a plain ``open`` would give it (0666 less the umask); the temporary file never outlives the
    block, however it ends (:func:`_create_beside`).
    """
    target = pathlib.Path(path)
    created: list[pathlib.Path] = []
    try:
        fd = _create_beside(target, created)
        with _writing(target), os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        _replace(created[0], target)
    finally:
        for tmp in created:
            tmp.unlink(missing_ok=True)


def write_set_atomic(files: Sequence[tuple[pathlib.Path, bytes]]) -> None:
    """Write several files as one set: every one into a synced temporary file beside it first, then each renamed
    into place; a failure before the renames (a full disk, an interrupt) leaves every old file as it was and
    removes the temporary ones. Only a failing rename, which moves no data, can leave the set half replaced."""
    with staged_set(files):
        pass


@contextlib.contextmanager
def staged_set(files: Sequence[tuple[pathlib.Path, bytes]]) -> Iterator[None]:
    """Write ``files`` as :func:`write_set_atomic` does, but rename them into place only once the block has ended
    cleanly: what the block writes atomically itself (a Chrome trace streamed to its file) joins the set, and a
    failure in it leaves every file of the set as it was."""
    created: list[pathlib.Path] = []
    try:
        for target, data in files:
            with _writing(target), os.fdopen(_create_beside(target, created), "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        yield
        for tmp, (target, _) in zip(created, files, strict=True):
            _replace(tmp, target)
    finally:
        for tmp in created:
            tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def _writing(target: pathlib.Path) -> Iterator[None]:
    """An error that names no file while ``target``'s temporary file is written (a full disk, a quota, a size
    limit: ``write`` and ``fsync`` name none) is raised naming ``target``: the command line said only 'cannot
    write its output'."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise _about(exc, target) from None


def _about(exc: OSError, target: pathlib.Path) -> OSError:
    """``exc`` naming ``target``, not the temporary file beside it, which the user never asked for (``OSError``
    with an errno makes the same subclass: PermissionError, IsADirectoryError, ...)."""
    return OSError(exc.errno, exc.strerror, os.fspath(target)) if exc.errno else exc


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`open_atomic`)."""
    with open_atomic(path, "wb") as fh:
        fh.write(data)
