"""Helpers shared by the parsers tests (``pythonpath`` in pyproject.toml puts ``tests/`` on the path): the bundled
mlp trace's files, the check of a one-line refusal, and a small link profile on disk."""

from __future__ import annotations

import dataclasses
import json
import pathlib
from collections.abc import Callable
from typing import Any

import pytest

from parsers import TraceError, read_trace
from parsers.errors import MAX_MESSAGE_CHARS
from parsers.linkprofile import LinkProfile, ProfilePoint, read_link_profile, write_link_profile

TRACES = pathlib.Path(__file__).resolve().parents[1] / "data" / "traces"
REAL_PB = TRACES / "mlp" / "step_000.pb"
REAL_JSON = TRACES / "mlp" / "step_000.json"


def check_message(text: str, path: pathlib.Path | str, why: str) -> None:
    """``text`` is one line of at most MAX_MESSAGE_CHARS naming ``path`` and saying ``why``."""
    assert "\n" not in text and len(text.splitlines()) == 1, text
    assert len(text) <= MAX_MESSAGE_CHARS, text
    assert str(path) in text and why in text, text


def fails(tmp_path: pathlib.Path, name: str, data: bytes, why: str, **kwargs: Any) -> str:
    """Write ``data`` to ``name``, read it: a package error, one bounded line naming the file and ``why``."""
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(TraceError) as info:
        read_trace(path, **kwargs)
    check_message(str(info.value), path, why)
    return str(info.value)


def profile_file(tmp_path: pathlib.Path) -> pathlib.Path:
    """A one-point link profile written to ``tmp_path/link-profile.json``, checked to read back equal."""
    profile = LinkProfile(tool="test", date="2026-12-01T10:00:00Z", ps={"host": "ps", "cores": 2.0},
                          client={"host": "c"}, tensors=4, tensor_bytes=1024, window_s=2.0, points=(
                              ProfilePoint(mode="pull", connections=1, pull_bytes_per_s=5e7, push_bytes_per_s=0.0),))
    path = tmp_path / "link-profile.json"
    write_link_profile(profile, path)
    assert read_link_profile(path) == dataclasses.replace(profile, source=str(path))
    return path


def refused_after_edit(path: pathlib.Path, old: bytes, new: bytes, read: Callable[[pathlib.Path], object],
                       error: type[Exception]) -> str:
    """The one-line refusal of ``read`` once ``old`` (which the file must hold) is replaced by ``new`` in ``path``."""
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new))
    with pytest.raises(error) as info:
        read(path)
    return str(info.value)


def refused_without_key(path: pathlib.Path, key: str, read: Callable[[pathlib.Path], object],
                        error: type[Exception]) -> str:
    """The one-line refusal of ``read`` once the JSON document in ``path`` has lost its top-level ``key``."""
    doc = json.loads(path.read_text())
    del doc[key]
    path.write_text(json.dumps(doc))
    with pytest.raises(error) as info:
        read(path)
    return str(info.value)
