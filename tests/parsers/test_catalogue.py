"""The instance catalogue: the schema read as documented; every bad value refused in one line naming the file, the
line and the column."""

from __future__ import annotations

import pathlib
import re
import shutil

import pytest

from parsers.catalogue import COLUMNS, FIRST_LINE, CatalogueError, read_catalogue
from parsers.linkprofile import ProfileError, read_link_profile

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROFILE = ROOT / "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace/link-profile.json"
HEADER = ",".join(COLUMNS)
GOOD = [
    "small,worker,0.17,1.0,4,1250000000,",
    "big,both,0.34,1.5,8,2.5e9,",
    "server,ps,2.04,2,48,12000000000,",
]


def _write(tmp_path: pathlib.Path, rows: list[str], *, first: str = FIRST_LINE, header: str = HEADER) -> pathlib.Path:
    path = tmp_path / "cat.csv"
    path.write_text("\n".join([first, "# a comment, with a comma", header, "", *rows]) + "\n", encoding="utf-8")
    return path


def test_the_example_catalogue_reads() -> None:
    cat = read_catalogue(ROOT / "data/catalogue/example.csv")
    assert len(cat.instances) >= 4
    assert cat.workers and cat.servers
    assert all(i.link_profile is None for i in cat.instances)  # the README says none is pinned


def test_schema_values_and_roles(tmp_path: pathlib.Path) -> None:
    cat = read_catalogue(_write(tmp_path, GOOD))
    small, big, server = cat.instances
    assert (small.name, small.role, small.usd_per_hour, small.compute_speed, small.cores) == (
        "small", "worker", 0.17, 1.0, 4.0)
    assert big.link_bits_per_s == 2_500_000_000 and server.link_bits_per_s == 12_000_000_000
    assert [i.name for i in cat.workers] == ["small", "big"]
    assert [i.name for i in cat.servers] == ["big", "server"]
    assert [i.line for i in cat.instances] == [5, 6, 7]


def test_a_link_profile_is_read_relative_to_the_catalogue(tmp_path: pathlib.Path) -> None:
    (tmp_path / "profiles").mkdir()
    shutil.copy(PROFILE, tmp_path / "profiles" / "server.json")
    cat = read_catalogue(_write(tmp_path, [*GOOD[:2], "server,ps,2.04,2,48,12e9,profiles/server.json"]))
    profile = cat.instances[2].link_profile
    assert profile is not None and profile.source == str(tmp_path / "profiles" / "server.json")


def test_a_bad_link_profile_names_the_catalogue_line_and_its_own_file(tmp_path: pathlib.Path) -> None:
    # the profile's own error named only the profile: which catalogue row (of up to 1000) named it was left to guess
    (tmp_path / "p.json").write_text('{"x": 1', encoding="utf-8")
    with pytest.raises(CatalogueError) as info:
        read_catalogue(_write(tmp_path, [*GOOD[:2], "server,ps,2.04,2,48,12e9,p.json"]))
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'cat.csv'}: line 7, column 7 (link_profile): PS link profile 'p.json': ")
    with pytest.raises(ProfileError) as own:  # what follows is the profile's own one line, file and position
        read_link_profile(tmp_path / "p.json")
    assert message.endswith(f": {own.value}") and f"{tmp_path / 'p.json'}:1:" in message


def test_a_link_profile_faster_than_the_rows_own_rate_is_refused(tmp_path: pathlib.Path) -> None:
    # the profile (pulls at 487 Mbit/s of payload) was used and the row's 100 Mbit/s dropped, without a word: one of
    # the two is not of this instance type, and the plan would price a link the row says it does not have
    shutil.copy(PROFILE, tmp_path / "p.json")
    with pytest.raises(CatalogueError) as info:
        read_catalogue(_write(tmp_path, [*GOOD[:2], "server,ps,2.04,2,48,1e8,p.json"]))
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'cat.csv'}: line 7, column 6 (link_bits_per_s): ")
    assert "link profile 'p.json' measured 487 Mbit/s of payload one way, more than this rate carries" in message
    assert message.endswith("(got '1e8')")
    # within 5 % of the rate it is measurement, not a mistake: 487 Mbit/s of payload on a 470 Mbit/s row is taken,
    # the profile and the rate both kept (not raising alone passed a row whose profile was dropped)
    server = read_catalogue(_write(tmp_path, [*GOOD[:2], "server,ps,2.04,2,48,470000000,p.json"])).instances[-1]
    assert (server.name, server.link_bits_per_s) == ("server", 470_000_000)
    assert server.link_profile == read_link_profile(tmp_path / "p.json")


@pytest.mark.parametrize(("row", "column", "why"), [
    ("", 1, "must be 1 to 64 characters"),
    ("bad name", 1, "must be 1 to 64 characters"),
    ("x" * 65, 1, "must be 1 to 64 characters"),
    ("small", 1, "is already on line 5"),
    # one type typed twice, its case changed: plan priced it as two instance types
    ("SMALL", 1, "'SMALL' is already on line 5 as 'small' (names are the same whatever their case)"),
    ("ok,driver", 2, "must be one of worker, ps, both"),
    ("ok,ps,0", 3, "must be a number >= 0.000001 and <= 10000 (US dollars an hour"),
    ("ok,ps,-1", 3, "must be a number >= 0.000001"),
    # a subnormal was read, and each cost divided down to $0.0: a free cluster, ranked the cheapest
    ("ok,ps,5e-324", 3, "must be a number >= 0.000001 and <= 10000 (US dollars an hour: less than a millionth of a "
                        "dollar is no instance's price) (got '5e-324')"),
    ("ok,ps,0.0000009", 3, "no instance's price) (got '0.0000009')"),
    ("ok,ps,1e5", 3, "<= 10000"),
    ("ok,ps,cheap", 3, "must be a number"),
    ("ok,ps,nan", 3, "must be a number"),
    ("ok,ps,1_0", 3, "must be a number"),
    # full-width 12 and Arabic-Indic 3 were read as 12 and 3, '+2' as 2: a measured CSV refused all three
    ("ok,ps,\uff11\uff12", 3, "no instance's price), written with the digits 0-9 (got '\uff11\uff12')"),
    ("ok,ps,\u0663", 3, "no instance's price), written with the digits 0-9"),
    ("ok,ps,+2", 3, "no instance's price) (got '+2')"),
    ("ok,ps,1,1,4,\uff11e9", 6, "must be bits per second from 1e3 to 1e13 (a plain number: 2.5e9 for 2.5 Gbit/s), "
                             "written with the digits 0-9"),
    ("ok,ps,1,0", 4, "must be a number >= 0.001 and <= 1000"),
    ("ok,ps,1,1e-6", 4, "must be a number >= 0.001 and <= 1000"),
    ("ok,ps,1,inf", 4, "must be a number"),
    ("ok,ps,1,1,0", 5, "must be a number >= 0.01 and <= 4096"),
    ("ok,ps,1,1,1e-300", 5, "must be a number >= 0.01 and <= 4096"),
    ("ok,ps,1,1,5000", 5, "<= 4096"),
    ("ok,ps,1,1,4,999", 6, "must be bits per second from 1e3 to 1e13"),
    # '10Gbit', as --bandwidth takes a rate, was told only 'must be a number', of a cell that holds one
    ("ok,ps,1,1,4,10Gbit", 6, "must be bits per second from 1e3 to 1e13 (a plain number: 2.5e9 for 2.5 Gbit/s) "
                              "(got '10Gbit')"),
    ("ok,ps,1,1,4,2500000000 bit/s", 6, "(a plain number: 2.5e9 for 2.5 Gbit/s) (got '2500000000 bit/s')"),
    ("ok,ps,1,1,4,1e14", 6, "from 1e3 to 1e13"),
    ("ok,ps,1,1,4,1000.5", 6, "must be a whole number of bits per second"),  # was rounded to 1000
    ("ok,ps,1,1,4,1.0000000000001e12", 6, "must be a whole number"),
    ("ok,ps,1,1,4,1e9,missing.json", 7, "no such file"),
    ("ok,ps,1,1,4,1e9,.", 7, "is a directory, not a file"),  # was 'no such file'
    # an OSError naming neither the catalogue nor the row, of 5000 characters: is_dir() raised ENAMETOOLONG
    ("ok,ps,1,1,4,1e9," + "p" * 5000, 7, "cannot be read: File name too long (a link profile, relative to the"),
    ("ok,worker,1,1,4,1e9,cat.csv", 7, "only a ps or both row may give one"),
])
def test_every_bad_value_is_one_line_naming_file_line_and_column(tmp_path: pathlib.Path, row: str, column: int,
                                                                  why: str) -> None:
    cells = row.split(",")
    full = ",".join(cells + ["1", "ps", "1", "1", "4", "1e9", ""][len(cells):])
    path = _write(tmp_path, [*GOOD, full])
    with pytest.raises(CatalogueError) as err:
        read_catalogue(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: line 8, column {column} ({COLUMNS[column - 1]}): "), msg
    assert why in msg and "\n" not in msg


def test_prices_at_the_bounds_are_read(tmp_path: pathlib.Path) -> None:
    path = _write(tmp_path, [*GOOD, "cheap,worker,0.000001,1,4,1e9,", "dear,ps,10000,1,4,1e9,"])
    assert [i.usd_per_hour for i in read_catalogue(path).instances[-2:]] == [1e-6, 10_000.0]


def test_a_link_profile_that_is_a_link_to_nothing_is_said_to_be_one(tmp_path: pathlib.Path) -> None:
    """It was 'no such file', of a name the user can see listed in the folder."""
    (tmp_path / "loop.json").symlink_to("loop.json")
    (tmp_path / "moved.json").symlink_to("elsewhere.json")
    for name, what in (("loop.json", "a symbolic link that loops"),
                       ("moved.json", "a symbolic link to 'elsewhere.json', which does not exist")):
        path = _write(tmp_path, [*GOOD, f"ok,ps,1,1,4,1e9,{name}"])
        with pytest.raises(CatalogueError) as err:
            read_catalogue(path)
        assert str(err.value).startswith(f"{path}: line 8, column 7 (link_profile): {what}: "), str(err.value)


@pytest.mark.parametrize(("change", "why"), [
    ({"first": "name,role"}, "line 1 must be '# tracegen-catalogue version 1'"),
    ({"first": "# tracegen-catalogue version 2"}, "line 1: version '2' is not supported"),
    ({"header": "name,role,usd_per_hour,compute_speed,cores,link_bits_per_s"}, "line 3: the header must be"),
    ({"header": "name,role,price,compute_speed,cores,link_bits_per_s,link_profile"}, "line 3: the header must be"),
    # the column left out of the header and of every row was named as missing on the first row (a hardening pass)
    ({"header": "name,role,usd_per_hour,compute_speed,cores,link_bits_per_s", "rows": [r[:-1] for r in GOOD]},
     "line 3: the header must be"),
    ({"rows": ["small,worker,0.17,1.0,4,1250000000"]}, "line 5: 6 cells, expected 7: column 7 (link_profile) is "
                                                       "missing"),
    ({"rows": ["small,worker,0.17,1.0,4,1250000000,,x"]}, "line 5: 8 cells, expected 7"),
    ({"rows": ['small,worker,"0.17,1.0,4,1250000000,']}, "not CSV"),
    ({"rows": GOOD[:1]}, "no instance type may be a ps"),
    # a header and no rows said 'no instance type may be a worker (a role of worker or both is needed)'
    ({"rows": []}, "cat.csv: line 3: the header and no instance types after it"),
    ({"rows": GOOD[2:]}, "no instance type may be a worker"),
])
def test_bad_files_are_one_line_naming_the_file_and_line(tmp_path: pathlib.Path, change: dict[str, object],
                                                         why: str) -> None:
    rows = change.pop("rows", GOOD)
    path = _write(tmp_path, rows, **change)  # type: ignore[arg-type]
    with pytest.raises(CatalogueError) as err:
        read_catalogue(path)
    assert str(err.value).startswith(f"{path}: ") and why in str(err.value) and "\n" not in str(err.value)


def test_not_utf8_and_not_a_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "cat.csv"
    path.write_bytes(FIRST_LINE.encode() + b"\n\xff\xfe\n")
    with pytest.raises(CatalogueError) as info:
        read_catalogue(path)
    # it said 'not UTF-8 text (byte 31)': which line of up to a thousand, and what there, was left to count
    assert str(info.value) == f"{path}: line 2: not UTF-8 text: b'\\xff' at byte 31; save it as UTF-8"
    path.write_bytes(FIRST_LINE.encode() + b"\r\r\n\r" + "name,r\u00f4le\xe9".encode("latin-1"))
    with pytest.raises(CatalogueError, match=r"cat\.csv: line 4: not UTF-8 text: b'\\xf4' at byte 40;"):
        read_catalogue(path)
    with pytest.raises(CatalogueError) as info:
        read_catalogue(tmp_path)
    assert str(info.value) == f"{tmp_path}: a directory, not a regular file: refused"


@pytest.mark.parametrize("row", [b"a\xc3\xa9ab\xff,both,1,1,1,1000,\n", b"a,both,1,1,1,1000,\n\xe9\n"])
def test_not_utf8_after_a_byte_order_mark_names_its_own_line_and_byte(tmp_path: pathlib.Path, row: bytes) -> None:
    """With a byte-order mark (a spreadsheet's 'CSV UTF-8'), the codec's offset counts from after it: the line was
    counted in the file's bytes 3 short, naming line 3 for a bad byte on line 4, or, where that cut 'é' in two, the
    count itself failed and plan printed a traceback."""
    path = tmp_path / "cat.csv"
    data = b"\xef\xbb\xbf" + f"{FIRST_LINE}\n{HEADER}\n".encode() + row
    path.write_bytes(data)
    bad = next(i for i in range(len(data)) if data[i] in (0xFF, 0xE9) and data[i - 1] != 0xC3)
    line = data[:bad].count(b"\n") + 1
    with pytest.raises(CatalogueError) as info:
        read_catalogue(path)
    assert str(info.value) == (f"{path}: line {line}: not UTF-8 text: {data[bad:bad + 1]!r} at byte {bad}; save it "
                               "as UTF-8")


@pytest.mark.parametrize("data", [b"", b"\n  \n", b"\xef\xbb\xbf\n"])
def test_an_empty_catalogue_or_worker_class_file_says_it_is_empty(tmp_path: pathlib.Path, data: bytes) -> None:
    """It said "line 1 must be '# tracegen-catalogue version 1' (got '')", as if a wrong line were there."""
    from parsers.workerclasses import WorkerClassError, read_worker_classes

    path = tmp_path / "cat.csv"
    path.write_bytes(data)
    with pytest.raises(CatalogueError) as info:
        read_catalogue(path)
    assert str(info.value) == f"{path}: file is empty; line 1 must be {FIRST_LINE!r}, then a header"
    with pytest.raises(WorkerClassError, match=r"cat\.csv: file is empty; line 1 must be '# tracegen-worker-classes "):
        read_worker_classes(path)


def test_a_comment_is_never_read_as_csv(tmp_path: pathlib.Path) -> None:
    """A comment's text was read as CSV: a quote after a comma in it opened a cell that ran on through the rows
    below to the next quote, and the row between ('big') was dropped without a word; a quoted word in a commented-out
    row was refused as "not CSV". Comments are lines, whatever they hold."""
    path = _write(tmp_path, [GOOD[0], '# spot prices,"from the console', GOOD[1], '# end of spot"', GOOD[2]])
    assert [i.name for i in read_catalogue(path).instances] == ["small", "big", "server"]
    assert [i.line for i in read_catalogue(path).instances] == [5, 7, 9]
    path = _write(tmp_path, [*GOOD, '# was: old,"worker" (dropped)'])
    assert [i.name for i in read_catalogue(path).instances] == ["small", "big", "server"]


def test_lines_ended_by_carriage_returns_alone_read_as_lines(tmp_path: pathlib.Path) -> None:
    """A file saved with old Mac line ends ('\\r' alone, as Excel for Mac's "CSV (Macintosh)" writes) was refused as
    "line 1 must be '# tracegen-catalogue version 1' (got '# tracegen-catalogue versio...')": its first line was
    taken to run to the first '\\n', which it has none of, though the CSV reader reads such lines."""
    path = _write(tmp_path, GOOD)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r"))
    cat = read_catalogue(path)
    assert [(i.name, i.line) for i in cat.instances] == [("small", 5), ("big", 6), ("server", 7)]


def test_a_file_of_its_first_line_alone_says_the_header_is_missing(tmp_path: pathlib.Path) -> None:
    """It said "line 1: the header must be name,role,... (got '')": line 1 is the version line, and is right."""
    path = tmp_path / "cat.csv"
    path.write_text(f"{FIRST_LINE}\n# no rows yet\n", encoding="utf-8")
    with pytest.raises(CatalogueError) as info:
        read_catalogue(path)
    assert str(info.value) == f"{path}: no header after line 1: it must be {HEADER}"


def test_a_gzipped_catalogue_reads_and_a_plain_one_named_gz_is_refused(tmp_path: pathlib.Path) -> None:
    """A gzipped catalogue was refused as "line 1: not UTF-8 text: b'\\x8b' at byte 1", naming no gzip, where a
    gzipped trace or measurements file reads; a plain one named .gz was read, where gunzip refuses it."""
    import gzip

    plain = _write(tmp_path, GOOD)
    zipped = tmp_path / "cat.csv.gz"
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    assert read_catalogue(zipped).instances == read_catalogue(plain).instances
    zipped.write_bytes(plain.read_bytes())
    with pytest.raises(CatalogueError, match=r"^\S+cat\.csv\.gz: named \.gz but is not gzip \(gzip begins with "
                                             r"bytes 1f 8b; this begins with b'# traceg'\)"):
        read_catalogue(zipped)


def test_an_unclosed_quote_is_named_on_the_line_it_opens(tmp_path: pathlib.Path) -> None:
    """The quoted cell runs on through the rows below to the end of the file, and the refusal named the line
    where the reader gave up (the last), not the row with the stray quote."""
    path = _write(tmp_path, [GOOD[0], 'big,both,"0.34,1.5,8,2.5e9,', *GOOD[2:], "more,worker,0.1,1,2,1e9,"])
    with pytest.raises(CatalogueError, match=rf"^{re.escape(str(path))}: line 6: not CSV: unexpected end of data"):
        read_catalogue(path)


def test_a_header_missing_a_column_names_that_column(tmp_path: pathlib.Path) -> None:
    """The refusal quoted the header shortened in the middle ('name,role,usd_per_hour,comp...link_bits_per_s,
    link_profile'), which hid the very column left out."""
    header = HEADER.replace("cores,", "")
    path = _write(tmp_path, [",".join(c for i, c in enumerate(r.split(",")) if i != 4) for r in GOOD], header=header)
    with pytest.raises(CatalogueError, match=r"line 3: the header must be .*: column 5 is 'link_bits_per_s', "
                                             r"not 'cores'"):
        read_catalogue(path)
