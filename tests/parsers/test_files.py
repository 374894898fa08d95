"""Reading a file a user names (``parsers/files.py``): only regular files, bounded by the bytes actually read,
and gzip member by member, each refusal one line naming the file."""

from __future__ import annotations

import gzip
import os
import pathlib
from typing import Any

import pytest

from parsers import TraceFormatError, read_trace
from parsers.files import (
    _OUT_CHUNK,
    MAX_GZIP_MEMBERS,
    broken_link,
    expand,
    gunzip,
    not_regular,
    read_expanded,
    read_file,
    refuse_unreadable,
)
from parsers.limits import MAX_BYTES

from parsers_support import REAL_JSON, REAL_PB, check_message, fails


def test_dev_zero_is_refused_unread() -> None:
    with pytest.raises(TraceFormatError) as info:
        read_trace("/dev/zero")
    check_message(str(info.value), "/dev/zero", "a character device, not a regular file: refused")


def test_symlink_to_a_device_is_refused(tmp_path: pathlib.Path) -> None:
    (tmp_path / "zero.pb").symlink_to("/dev/zero")
    with pytest.raises(TraceFormatError) as info:  # the link named, the path the user gave
        read_trace(tmp_path / "zero.pb")
    check_message(str(info.value), tmp_path / "zero.pb", "a character device, not a regular file: refused")


def test_fifo_without_a_writer_does_not_block(child_runner: Any, tmp_path: pathlib.Path) -> None:
    fifo = tmp_path / "pipe.pb"
    os.mkfifo(fifo)
    read = child_runner.read_file(fifo)["read"]
    assert read["outcome"] == "error", read
    assert "a FIFO (named pipe), not a regular file: refused" in read["detail"], read


def test_limit_counts_bytes_read_not_the_reported_size() -> None:
    assert pathlib.Path("/proc/self/status").stat().st_size == 0
    with pytest.raises(TraceFormatError, match="/proc/self/status: file is more than the limit of 10 bytes"):
        read_trace("/proc/self/status", max_bytes=10)


def test_multi_member_gzip_reads_whole(tmp_path: pathlib.Path) -> None:
    data = REAL_PB.read_bytes()
    path = tmp_path / "multi.pb.gz"
    path.write_bytes(gzip.compress(data[:1000]) + gzip.compress(b"") + gzip.compress(data[1000:]))
    assert read_trace(path).equals(read_trace(REAL_PB))


@pytest.mark.parametrize("tail", [b"garbage", b"\0" * 8])  # one byte: the test below
def test_trailing_data_after_the_last_member(tmp_path: pathlib.Path, tail: bytes) -> None:
    whole = gzip.compress(REAL_JSON.read_bytes())
    fails(tmp_path, "tail.json.gz", whole + tail, f"byte {len(whole)}: {len(tail)} bytes of trailing data")


def test_one_byte_of_trailing_data_is_one_byte(tmp_path: pathlib.Path) -> None:
    whole = gzip.compress(REAL_JSON.read_bytes())  # said '1 bytes of trailing data'
    fails(tmp_path, "tail.json.gz", whole + b"\x1f", f"byte {len(whole)}: 1 byte of trailing data after the last gzip")


def test_truncated_second_member(tmp_path: pathlib.Path) -> None:
    first = gzip.compress(REAL_JSON.read_bytes()[:100])
    fails(tmp_path, "cut.json.gz", first + gzip.compress(REAL_JSON.read_bytes()[100:])[:50],
          f"gzip member at byte {len(first)} is truncated")


def test_members_that_expand_past_an_output_piece_read_whole_and_truncation_is_still_seen() -> None:
    """Output is taken a piece at a time (``_OUT_CHUNK``); members whose one input piece expands to several
    output pieces come out whole and in order, and a member cut off where its output was pending is refused."""
    first = bytes(range(256)) * (_OUT_CHUNK // 100)  # 2.5 pieces, a few kB packed
    second = b"{" * (3 * _OUT_CHUNK + 7)
    packed = gzip.compress(first) + gzip.compress(second)
    assert gunzip(packed, "x.gz", MAX_BYTES) == first + second
    cut = gzip.compress(first)
    with pytest.raises(TraceFormatError, match=r"^x\.gz: gzip member at byte 0 is truncated"):
        gunzip(cut[: len(cut) // 2], "x.gz", MAX_BYTES)
    with pytest.raises(TraceFormatError, match=f"expands beyond the limit of {2 * _OUT_CHUNK} bytes"):
        gunzip(packed, "x.gz", 2 * _OUT_CHUNK)


def test_too_many_members(tmp_path: pathlib.Path) -> None:
    fails(tmp_path, "members.gz", gzip.compress(b"", mtime=0) * (MAX_GZIP_MEMBERS + 1) + gzip.compress(b"x"),
          f"more than {MAX_GZIP_MEMBERS} gzip members")


@pytest.mark.parametrize(("name", "data"), [("junk.json.gz", b"hello world"), ("step.pb.gz", REAL_PB.read_bytes()),
                                            ("plain.json.gz", REAL_JSON.read_bytes())])
def test_a_gz_name_that_is_not_gzip_says_so(tmp_path: pathlib.Path, name: str, data: bytes) -> None:
    """A file named .gz but holding something else was read as whatever it held, and failed as a text-format
    RunMetadata ('its first line ... starts no field'), never saying the name promised gzip; gunzip refuses it."""
    fails(tmp_path, name, data, "named .gz but is not gzip (gzip begins with bytes 1f 8b; this begins with")


class _OwnError(Exception):
    pass


def test_what_is_no_regular_file_is_named(tmp_path: pathlib.Path) -> None:
    plain, loop, gone = tmp_path / "plain", tmp_path / "loop", tmp_path / "gone"
    plain.write_bytes(b"x")
    loop.symlink_to(loop)
    gone.symlink_to("absent")
    assert not_regular(plain) is None and broken_link(plain) is None
    assert not_regular(tmp_path) == "a directory"
    assert not_regular("/dev/null") == "a character device"
    assert not_regular(loop) == broken_link(loop) == "a symbolic link that loops"
    assert broken_link(gone) == "a symbolic link to 'absent', which does not exist"
    assert (not_regular(tmp_path / "absent") or "").startswith("cannot be looked at (")
    with pytest.raises(TraceFormatError) as info:  # the path named (the rule alone passed a message without it)
        refuse_unreadable(tmp_path)
    check_message(str(info.value), tmp_path, "a directory: named as one of the trace's files, but cannot be read")
    refuse_unreadable(plain)


def test_read_file_reads_up_to_its_limit_and_raises_the_callers_error(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "ten"
    path.write_bytes(b"0123456789")
    assert read_file(path, 10) == b"0123456789"
    with pytest.raises(_OwnError, match="ten: file is more than the limit of 9 bytes"):
        read_file(path, 9, _OwnError)
    with pytest.raises(_OwnError, match="'': an empty path names no file"):
        read_file("", 9, _OwnError)
    with pytest.raises(_OwnError) as info:
        read_file(tmp_path / "absent", 9, _OwnError)
    assert str(info.value) == f"{tmp_path / 'absent'}: cannot read: No such file or directory"


def test_read_expanded_gunzips_and_raises_the_callers_error(tmp_path: pathlib.Path) -> None:
    zipped, fake = tmp_path / "a.json.gz", tmp_path / "b.JSON.GZ"
    zipped.write_bytes(gzip.compress(b"[1]"))
    fake.write_bytes(b"[1]")
    assert read_expanded(zipped, 100) == b"[1]"
    assert expand(b"[1]", "b.json", 100) == b"[1]"
    with pytest.raises(_OwnError, match=r"b\.JSON\.GZ: named \.gz but is not gzip"):
        read_expanded(fake, 100, _OwnError)
    zipped.write_bytes(gzip.compress(b"a" * 1000))  # some 30 bytes
    with pytest.raises(_OwnError) as info:
        read_expanded(zipped, 100, _OwnError)
    assert str(info.value) == f"{zipped}: gzip content expands beyond the limit of 100 bytes"
