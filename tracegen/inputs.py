"""The files a prediction reads beside its trace when it is not given them: ``link-profile.json``
(:mod:`parsers.linkprofile`), ``single-worker.json`` (:mod:`parsers.singleworker`) and the batch size of
``meta.json`` (:func:`parsers.read.read_meta`), found where :func:`parsers.read.beside_dir` says.
"""

from __future__ import annotations

import os
import pathlib

from parsers.errors import quoted
from parsers.linkprofile import PROFILE_NAME, LinkProfile, read_link_profile
from parsers.read import beside_dir, is_there, meta_path, read_meta
from parsers.singleworker import SINGLE_WORKER_NAME, SingleWorker, read_single_worker
from tracegen.config import MAX_BATCH_SIZE
from tracegen.errors import ConfigError


def batch_size_of(trace_path: str, given: int | None) -> int:
    """The given batch size, else ``batch_size`` of ``meta.json`` beside the trace (:func:`parsers.read.read_meta`),
    else 1."""
    if given is not None:
        return given
    meta = read_meta(trace_path)
    value = None if meta is None else meta.get("batch_size")
    if value is None:
        return 1
    if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_BATCH_SIZE):
        raise ConfigError(f"{meta_path(trace_path)}: 'batch_size' must be an integer from 1 to 10^9 "
                          f"(got {quoted(value)}); or give the batch size (--batch-size; to validate, a batch_size "
                          "column in the measurements)")
    return value


def beside(trace_path: str | os.PathLike[str], name: str) -> pathlib.Path | None:
    """The file ``name`` in the trace's folder (the folder itself for a directory of steps; a TF2 profile's logdir:
    :func:`parsers.read.beside_dir`), if there."""
    found = beside_dir(trace_path) / name
    # not a file (a folder of that name, a link that leads nowhere): its reader says so
    return found if is_there(found) else None


def profile_beside(trace_path: str | os.PathLike[str]) -> pathlib.Path | None:
    """``link-profile.json`` beside the trace, if there."""
    return beside(trace_path, PROFILE_NAME)


def single_worker_beside(trace_path: str | os.PathLike[str]) -> pathlib.Path | None:
    """``single-worker.json`` beside the trace, if there."""
    return beside(trace_path, SINGLE_WORKER_NAME)


def load_profile(path: str | os.PathLike[str] | None) -> LinkProfile | None:
    """The profile at ``path`` (None for None)."""
    return None if path is None else read_link_profile(path)


def load_single_worker(path: str | os.PathLike[str] | None) -> SingleWorker | None:
    """The single-worker measurement at ``path`` (None for None)."""
    return None if path is None else read_single_worker(path)

