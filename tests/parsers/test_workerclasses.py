"""Worker classes: speeds per worker in file order; every bad value refused in one line naming it."""

from __future__ import annotations

import pathlib
import re

import pytest

from parsers.workerclasses import WorkerClassError, read_worker_classes

FIRST = "# tracegen-worker-classes version 1"


def _write(tmp_path: pathlib.Path, *rows: str, first: str = FIRST) -> pathlib.Path:
    path = tmp_path / "classes.csv"
    path.write_text("\n".join([first, "name,count,speed", *rows]) + "\n", encoding="utf-8")
    return path


def test_workers_take_their_class_in_file_order(tmp_path: pathlib.Path) -> None:
    classes = read_worker_classes(_write(tmp_path, "slow,2,0.5", "# a comment", "standard,*,1.0"))
    assert classes.speeds(1) == (0.5,)
    assert classes.speeds(4) == (0.5, 0.5, 1.0, 1.0)
    assert classes.describe() == "2 x slow (speed 0.5), then the rest x standard (speed 1)"
    fixed = read_worker_classes(_write(tmp_path, "fast,1,2", "slow,1,0.25"))
    assert fixed.speeds(4) == (2.0, 0.25, 1.0, 1.0)  # beyond the counts: like the traced node


def test_classes_listed_past_the_workers_asked_are_named_with_their_line(tmp_path: pathlib.Path) -> None:
    classes = read_worker_classes(_write(tmp_path, "slow,2,0.5", "# a comment", "mid,2,0.8", "fast,*,1.5"))
    assert [(c.name, c.line) for c in classes.unreached(2)] == [("mid", 5), ("fast", 6)]
    assert [c.name for c in classes.unreached(3)] == ["fast"]
    assert classes.unreached(5) == ()


@pytest.mark.parametrize(("rows", "why"), [
    (("slow,2,0",), "line 3, column 3 (speed): must be a number >= 0.001 and <= 1000 (got '0')"),
    (("slow,two,0.5",), "line 3, column 2 (count): must be a number >= 1 and <= 100000 (got 'two')"),
    (("slow,1.5,0.5",), "line 3, column 2 (count): must be a whole number of workers or '*' (got '1.5')"),
    # read as 2 workers at speed 0.5 (full-width digits), as a measured CSV would not have it
    (("slow,\uff12,0.5",), "line 3, column 2 (count): must be a number >= 1 and <= 100000, written with the digits"),
    (("slow,2,\uff10.5",), "line 3, column 3 (speed): must be a number >= 0.001 and <= 1000, written with the digits"),
    (("slow,+2,0.5",), "line 3, column 2 (count): must be a number >= 1 and <= 100000 (got '+2')"),
    # read as 1000 and 2 workers: a count is written in digits, as a rate is not
    (("slow,1e3,0.5",), "line 3, column 2 (count): must be a whole number of workers or '*', written in the digits "
                        "0-9 alone: no exponent or decimal point (got '1e3')"),
    (("slow,2.0,0.5",), "line 3, column 2 (count): must be a whole number of workers or '*', written in the digits "
                        "0-9 alone: no exponent or decimal point (got '2.0')"),
    (("slow,2E0,0.5",), "line 3, column 2 (count): must be a whole number of workers or '*', written in the digits "
                        "0-9 alone: no exponent or decimal point (got '2E0')"),
    (("rest,*,1", "slow,1,0.5"), "line 3, column 2 (count): '*' (all the remaining workers) may only be the last"),
    (("a,1,1", "a,1,2"), "line 4, column 1 (name): names the class of line 3 again (got 'a')"),
    # read as two classes, as a catalogue's C5.XLARGE and c5.xlarge are not
    (("Fast,1,2", "slow,1,0.5", "fast,1,1"), "line 5, column 1 (name): names the class of line 3 again ('Fast': "
                                            "names are the same whatever their case) (got 'fast')"),
    (("bad name,1,1",), "line 3, column 1 (name): must be 1 to 64 characters"),
    (("slow,1",), "line 3: 2 cells, expected 3: column 3 (speed) is missing"),
    (("slow",), "line 3: 1 cell, expected 3: column 2 (count) is missing"),  # said '1 cells'
    ((), "line 2: the header and no worker classes after it"),  # it named no line
])
def test_bad_rows_are_named(tmp_path: pathlib.Path, rows: tuple[str, ...], why: str) -> None:
    path = _write(tmp_path, *rows)
    with pytest.raises(WorkerClassError) as info:
        read_worker_classes(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and why in message and "\n" not in message


def test_version_2_gives_workers_links_of_their_own(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "classes.csv"
    path.write_text("# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\n"
                    "far,2,1,1e8\nstandard,*,1,-\n", encoding="utf-8")
    classes = read_worker_classes(path)
    assert classes.links(3) == (100_000_000, 100_000_000, 0) and classes.speeds(3) == (1.0, 1.0, 1.0)
    assert "2 x far (speed 1, own link 100 Mbit/s)" in classes.describe()
    assert read_worker_classes(_write(tmp_path, "slow,2,0.5")).links(3) == ()  # version 1: none of their own
    path.write_text("# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\nfar,1,1,fast\n",
                    encoding="utf-8")
    for bad in ("fast", "0", "100Mbit/s"):  # '0' is not "none": that is '-', and the error says so
        path.write_text(f"# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\nfar,1,1,{bad}\n",
                        encoding="utf-8")
        with pytest.raises(WorkerClassError, match=r"line 3, column 4 \(link_bits_per_s\): must be bits per second "
                                                   rf".* or '-' for no link of its own \(got '{re.escape(bad)}'\)"):
            read_worker_classes(path)


def test_a_link_rate_that_is_not_a_whole_number_is_refused_on_both_sides_of_the_minimum(
        tmp_path: pathlib.Path) -> None:
    """1000.4 bits/s was rounded to 1000 while 999.6 was refused: a catalogue refuses both, as fractions of a bit."""
    path = tmp_path / "classes.csv"
    head = "# tracegen-worker-classes version 2\nname,count,speed,link_bits_per_s\n"
    where = f"{path}: line 3, column 4 (link_bits_per_s)"
    for bits, why in (("999.6", "must be bits per second from 1e3 to 1e13 (a plain number: 1e8 for 100 Mbit/s), or "
                                "'-' for no link of its own"),
                      ("1000.4", "must be a whole number of bits per second")):
        path.write_text(f"{head}far,1,1,{bits}\n", encoding="utf-8")
        with pytest.raises(WorkerClassError) as info:
            read_worker_classes(path)
        assert str(info.value) == f"{where}: {why} (got {bits!r})"
    path.write_text(f"{head}far,1,1,2.5e9\n", encoding="utf-8")
    assert read_worker_classes(path).links(1) == (2_500_000_000,)  # a whole number, with an exponent


def test_wrong_version_and_not_a_file(tmp_path: pathlib.Path) -> None:
    at = f"^{re.escape(str(tmp_path / 'classes.csv'))}: "  # the file named first (the rule alone passed without it)
    with pytest.raises(WorkerClassError, match=at + r"line 1: version '3' is not supported \(this reader knows "
                                               r"version 1 or 2\)"):
        read_worker_classes(_write(tmp_path, "a,1,1", first="# tracegen-worker-classes version 3"))
    with pytest.raises(WorkerClassError, match=at + r"line 1 must be '# tracegen-worker-classes version 1'"):
        read_worker_classes(_write(tmp_path, "a,1,1", first="#  tracegen-worker-classes version 1"))
    with pytest.raises(WorkerClassError) as info:  # 'classes.csv' alone passed any error of any such file
        read_worker_classes(tmp_path / "missing" / "classes.csv")
    assert str(info.value).startswith(f"{tmp_path / 'missing' / 'classes.csv'}: cannot read: "), info.value


def test_a_header_of_another_version_is_named(tmp_path: pathlib.Path) -> None:
    """A version 1 first line over a version 2 header and rows said 'line 3: 4 cells, expected 3: column 4 is one
    more than the header's', of a header of 4 columns: the header is what is wrong, and is named (a hardening
    pass)."""
    path = tmp_path / "classes.csv"
    path.write_text("# tracegen-worker-classes version 1\nname,count,speed,link_bits_per_s\nfar,2,1,1e8\n",
                    encoding="utf-8")
    with pytest.raises(WorkerClassError) as info:
        read_worker_classes(path)
    assert str(info.value) == (f"{path}: line 2: the header must be name,count,speed: "
                               "column 4 ('link_bits_per_s') is one more than its columns")


@pytest.mark.parametrize("written", ["\N{SUPERSCRIPT TWO}", "1" * 5000])
def test_a_version_that_is_no_plain_number_is_named(tmp_path: pathlib.Path, written: str) -> None:
    """'version ²' ended in a traceback (ValueError: '²'.isdigit() is true, int() refuses it), and so did a version
    of 5000 digits (int() stops at 4300)."""
    with pytest.raises(WorkerClassError) as info:
        read_worker_classes(_write(tmp_path, "a,1,1", first=f"# tracegen-worker-classes version {written}"))
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'classes.csv'}: line 1: version '{written[:10]}")
    assert message.endswith("is not supported (this reader knows version 1 or 2)") and len(message) <= 300
