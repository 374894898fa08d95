"""The measurements CSV: its contract, and malformed files refused with the file, the line and the value."""

from __future__ import annotations

import gzip
import os
import pathlib
import re

import pytest

from tracegen.planreport import CSV_COLUMNS as PLAN_COLUMNS
from tracegen.plots import CSV_COLUMNS as CURVE_COLUMNS
from validation.errors import ConfigError
from validation.measured import CORE_COLUMNS, SWITCH_COLUMNS, read_measured, suspect_per_worker, suspect_repeats


def _csv(tmp_path: pathlib.Path, text: str) -> pathlib.Path:
    path = tmp_path / "m.csv"
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "message"), [
    ("n_workers,throughput\n1,2\n", "missing column 'steps_per_s'"),
    # a spreadsheet's capitals: the column list showed it, but not that case was all that was wrong
    ("N_workers,steps_per_s\n1,2\n", "missing column 'n_workers' (columns: N_workers, steps_per_s; required: "
     "n_workers, steps_per_s); the header's 'N_workers' would be it: column names are lower case"),
    ("n_workers,steps_per_s\n", "no measurement rows"),
    ("n_workers,steps_per_s\n1,2\n2,fast\n", "m.csv:3: 'steps_per_s' must be a number (got 'fast')"),
    ("n_workers,steps_per_s\n0,2\n", "m.csv:2: 'n_workers' must be > 0 (got '0')"),
    ("n_workers,steps_per_s\n1.5,2\n", "'n_workers' must be an integer (got '1.5')"),
    ("n_workers,steps_per_s\n1,nan\n", "m.csv:2: 'steps_per_s' must be a number (got 'nan')"),
    ("n_workers,steps_per_s\n1,inf\n", "m.csv:2: 'steps_per_s' must be a number (got 'inf')"),
    ("n_workers,steps_per_s\n1,1e300\n", "m.csv:2: 'steps_per_s' must be from 1e-06 to 1e+06 (got '1e300')"),
    # a rate of one step in 11 days is a unit mixed up, as a million a second is; it gave errors of 1e300 %
    ("n_workers,steps_per_s\n1,2\n2,1e-300\n", "m.csv:3: 'steps_per_s' must be from 1e-06 to 1e+06 (got '1e-300')"),
    ("n_workers,steps_per_s\n1,-3\n", "m.csv:2: 'steps_per_s' must be > 0 (got '-3')"),
    ("n_workers,steps_per_s\n1,\n", "m.csv:2: 'steps_per_s' must be a number (got '')"),
    ("n_workers,steps_per_s,bandwidth,bandwidth_bits_per_s\n1,2,500Mbit/s,1e8\n", "both give the link's rate"),
    ("n_workers,steps_per_s\n1_000,2\n", "m.csv:2: 'n_workers' must be an integer (got '1_000')"),
    ("n_workers,steps_per_s\n+5,2\n", "m.csv:2: 'n_workers' must be an integer (got '+5')"),
    # a count takes digits alone, a rate (worker_links) an exponent too: of '1e0' it said 'must be an integer'
    ("n_workers,steps_per_s\n1e0,2\n", "m.csv:2: 'n_workers' must be an integer, written in the digits 0-9 alone: "
                                        "no exponent or decimal point (got '1e0')"),
    ("n_workers,steps_per_s,batch_size\n1,2,3.2e1\n", "m.csv:2: 'batch_size' must be an integer, written in the "
                                                       "digits 0-9 alone: no exponent or decimal point (got '3.2e1')"),
    # the same rule as a catalogue's, which read full-width digits (parsers.csvfile.cell_int), and says what is wrong
    ("n_workers,steps_per_s\n\uff11\uff12,2\n", "m.csv:2: 'n_workers' must be an integer, written with the digits 0-9 "
                                                "(got '\uff11\uff12')"),
    # read as 500 Mbit/s: tracegen.units took any Unicode digit
    ("n_workers,steps_per_s,bandwidth\n1,2,\uff15\uff10\uff10Mbit/s\n", "m.csv:2: 'bandwidth': cannot read "
                                                                        "'\uff15\uff10\uff10Mbit/s' as a rate"),
    ("n_workers,steps_per_s\n1,2_5\n", "m.csv:2: 'steps_per_s' must be a number (got '2_5')"),
    ("n_workers,steps_per_s,bandwidth\n1,2,fast\n", "m.csv:2: 'bandwidth': cannot read 'fast' as a rate"),
    ("n_workers,steps_per_s,bandwidth\n1,2,500Mbit/s\n2,3,62.5MB/s\n3,4,0.4Gbit/s\n",
     "m.csv:4: the link's rate is 400000000 bits/s, not 500000000 as on line 2"),
    ('n_workers,steps_per_s\n1,"2\n', "not a readable CSV"),
    ("n_workers,steps_per_s,host_steal_cores\n1,2,-0.5\n", "m.csv:2: 'host_steal_cores' must be >= 0 (got '-0.5')"),
    # read, then refused by validate as "'batch_size' must be from 1 to 10^9 (got ...)", naming no file or line
    # it said 'm.csv:2: 3 cells, the header has 1 (got 'n_workers,steps_per_s,repeat')', blaming the real header
    ("# runs of 2026-12-01\nn_workers,steps_per_s,repeat\n1,2,0\n", "m.csv:1: a comment where the header should be "
                                                                   "(got '# runs of 2026-12-01'): this CSV has no "
                                                                   "comment lines"),
    ("n_workers,steps_per_s,batch_size\n1,2,1000000001\n", "m.csv:2: 'batch_size' must be at most 10^9 (got "
                                                          "'1000000001')"),
])
def test_malformed_measurements_name_file_line_and_value(tmp_path: pathlib.Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        read_measured(_csv(tmp_path, text))
    assert message in str(info.value) and str(tmp_path / "m.csv") in str(info.value)


@pytest.mark.parametrize("bits", ["0.5", "7", "999", "1e300", "-8"])
def test_a_bandwidth_outside_1_kbit_to_1000_terabytes_per_second_is_refused(tmp_path: pathlib.Path, bits: str) -> None:
    text = f"n_workers,steps_per_s,bandwidth_bits_per_s\n1,2,8e8\n2,3,{bits}\n"
    with pytest.raises(ConfigError, match=rf"m\.csv:3: 'bandwidth_bits_per_s' must be .*\(got '{bits}'\)"):
        read_measured(_csv(tmp_path, text))
    assert read_measured(_csv(tmp_path, "n_workers,steps_per_s,bandwidth_bits_per_s\n1,2,1000\n"))[
        "bandwidth_bytes_per_s"].tolist() == [125.0]


@pytest.mark.parametrize("cell", ["500000000", " 5e8 ", "62500000.0"])
def test_a_bandwidth_cell_without_a_unit_is_refused(tmp_path: pathlib.Path, cell: str) -> None:
    """A bare number in 'bandwidth' was read as bytes per second, as --bandwidth read one: 500000000 meant as
    bits was a 4 Gbit/s link, and every prediction beside it was made for it without a word."""
    text = f"n_workers,steps_per_s,bandwidth\n1,2,500Mbit/s\n2,3,{cell}\n"
    with pytest.raises(ConfigError, match=rf"m\.csv:3: 'bandwidth': '{cell}' has no unit \(bits or bytes per "):
        read_measured(_csv(tmp_path, text))
    assert read_measured(_csv(tmp_path, "n_workers,steps_per_s,bandwidth\n1,2,500Mbit/s\n2,3,62.5MB/s\n"))[
        "bandwidth_bytes_per_s"].tolist() == [62_500_000.0, 62_500_000.0]


@pytest.mark.parametrize(("text", "line", "what"), [
    # a column at a time, the later line of the first column checked was named: n_workers is checked first
    ("n_workers,steps_per_s\n1,2\n2,x\n3,4\n0,5\n", 3, "'steps_per_s' must be a number (got 'x')"),
    ("n_workers,steps_per_s,repeat\n1,2,0\n1,2,0\n2,x,0\n", 3, "the run of line 2 again"),
    ("n_workers,steps_per_s,batch_size\n1,2,0\nx,3,32\n", 2, "'batch_size'"),
    ("n_workers,steps_per_s,bandwidth_bits_per_s\n1,2,7\n2,x,8e8\n", 2, "'bandwidth_bits_per_s'"),
])
def test_of_several_bad_lines_the_first_in_the_file_is_named(tmp_path: pathlib.Path, text: str, line: int,
                                                              what: str) -> None:
    with pytest.raises(ConfigError) as info:
        read_measured(_csv(tmp_path, text))
    assert f"m.csv:{line}: " in str(info.value) and what in str(info.value), str(info.value)


def test_blank_lines_do_not_shift_the_line_numbers(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigError, match=r"m\.csv:5: 'steps_per_s' must be a number \(got 'x'\)"):
        read_measured(_csv(tmp_path, "n_workers,steps_per_s\n\n1,2\n\n2,x\n"))
    assert read_measured(_csv(tmp_path, "\nn_workers,steps_per_s\n\n1,2\n\n")).to_dict("records") == [
        {"n_workers": 1, "steps_per_s": 2.0}]


@pytest.mark.parametrize(("text", "message"), [
    ("n_workers,steps_per_s\n3,2,7\n", r"m\.csv:2: 3 cells, the header has 2"),  # pandas took 3 as an index
    ("n_workers,steps_per_s\n1,2\n2\n", r"m\.csv:3: 1 cell, the header has 2"),  # said "1 cells"
    ("n_workers,steps_per_s,n_workers\n1,2,5\n", r"m\.csv:1: column 'n_workers' appears twice in the header"),
])
def test_rows_as_wide_as_the_header_and_unique_column_names(tmp_path: pathlib.Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        read_measured(_csv(tmp_path, text))


def test_a_header_of_more_columns_than_any_run_has_is_refused(tmp_path: pathlib.Path) -> None:
    """Each name was matched against the columns read (difflib) and made a frame's column: 400000 of them, a 4 MB
    header, took 36 s, and the 16 MB a file may hold minutes. A spreadsheet's trailing empty columns do not count:
    they are dropped before either."""
    names = [f"c{i}" for i in range(999)]
    assert len(read_measured(_csv(tmp_path, ",".join(["n_workers", "steps_per_s", *names[:998]]) + "\n"
                                  + "1,2" + ",0" * 998 + "\n"))) == 1  # 1000: read
    with pytest.raises(ConfigError, match=r"m\.csv:1: the header names 1001 columns, more than 1000"):
        read_measured(_csv(tmp_path, ",".join(["n_workers", "steps_per_s", *names]) + "\n1,2" + ",0" * 999 + "\n"))
    blank = "n_workers,steps_per_s" + "," * 5000 + "\n1,2" + "," * 5000 + "\n"
    assert read_measured(_csv(tmp_path, blank)).to_dict("records") == [{"n_workers": 1, "steps_per_s": 2.0}]


DEV_MEASURED = pathlib.Path(__file__).resolve().parents[2] / "data" / "validation" / "dev" / \
    "mlp_500mbit_q100_b128k_ps03" / "measured.csv"  # as the testbed wrote it


def test_a_spreadsheets_trailing_empty_columns_are_ignored(tmp_path: pathlib.Path) -> None:
    """The testbed's measured.csv saved by a spreadsheet, its header '...,tensorflow_version,,' and every row
    ending ',,', was refused with "column '' appears twice in the header": columns with no name and no cell hold
    nothing to read, and are ignored as any column not read is."""
    lines = DEV_MEASURED.read_text().splitlines()
    exported = _csv(tmp_path, "".join(f"{line},,\r\n" for line in lines))
    assert exported.read_text().splitlines()[0].endswith(",tensorflow_version,,")
    assert read_measured(exported).equals(read_measured(DEV_MEASURED))
    held = "".join(f"{line},,{'9' if k == 3 else ''}\n" for k, line in enumerate(lines))
    with pytest.raises(ConfigError, match=r"m\.csv:4: column 21 has no name in the header \(line 1\) but holds "
                                          r"'9'; name it or remove it$"):
        read_measured(_csv(tmp_path, held))
    with pytest.raises(ConfigError, match=r"m\.csv:1: column 'n_workers' appears twice"):  # named: still refused
        read_measured(_csv(tmp_path, "n_workers,steps_per_s,n_workers,,\n1,2,1,,\n"))


def test_numbers_in_the_usual_notations_are_read(tmp_path: pathlib.Path) -> None:
    frame = read_measured(_csv(tmp_path, "n_workers,steps_per_s\n1,2.\n2,.5\n3,1e1\n4,2.5E-1\n"))
    assert frame["steps_per_s"].tolist() == [2.0, 0.5, 10.0, 0.25]


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: pathlib.Path) -> None:
    fifo = tmp_path / "m.csv"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match=rf"{re.escape(str(fifo))}: .*regular file"):
        read_measured(fifo)
    with pytest.raises(ConfigError) as info:
        read_measured(tmp_path / "absent.csv")
    assert str(info.value) == f"{tmp_path / 'absent.csv'}: no such measurements file"


@pytest.mark.parametrize("text", ["\ufeffn_workers,steps_per_s\n1,2\n", "n_workers, steps_per_s\n1,2\n"])
def test_a_spreadsheets_bom_and_spaces_after_commas_in_the_header_are_read(tmp_path: pathlib.Path,
                                                                        text: str) -> None:
    """Both were refused as 'missing column' while the printed column list showed the column (a hardening pass)."""
    path = tmp_path / "m.csv"
    path.write_bytes(text.encode())
    assert read_measured(path).to_dict("records") == [{"n_workers": 1, "steps_per_s": 2.0}]


def test_a_run_written_twice_is_refused(tmp_path: pathlib.Path) -> None:
    """A measurements file with one run's row appended twice more was read as three repeats of N = 2: the report
    said '3' repeats of one run and weighed it three times in the mean (a hardening pass). Every cell the same,
    the repeat number included, is one run written again; the same N and repeat with other values (two campaigns
    appended) are still read."""
    dev = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev"
    measured = dev / "mlp_500mbit_q100_b128k_ps03" / "measured.csv"
    lines = measured.read_text().splitlines(keepends=True)
    path = tmp_path / "m.csv"
    path.write_text("".join(lines) + lines[2])
    with pytest.raises(ConfigError, match=rf"m\.csv:{len(lines) + 1}: the run of line 3 again \(n_workers 2, "
                                          r"repeat 0, every cell the same\)"):
        read_measured(path)
    path.write_text("".join(lines) + lines[2].replace("17.4012", "17.5"))
    assert len(read_measured(path)) == len(lines)


def test_settings_beyond_a_floats_range_are_compared_as_written(tmp_path: pathlib.Path) -> None:
    """1e400 and 1e401 were both read as infinity, and the runs taken for one setting's repeats."""
    with pytest.raises(ConfigError) as info:
        read_measured(_csv(tmp_path, "n_workers,steps_per_s,latency_ms\n1,2,1e400\n2,2,1e401\n"))
    assert str(info.value).startswith(f"{tmp_path / 'm.csv'}:3: 'latency_ms' is '1e401', not '1e400' as on line 2")


@pytest.mark.parametrize(("column", "value"), [("model", "cnn"), ("widths", "256;256"), ("cpu_cap_ps", "0.5"),
                                               ("latency_ms", "5")])
def test_runs_of_two_settings_are_refused(tmp_path: pathlib.Path, column: str, value: str) -> None:
    """Two campaigns of different jobs or clusters in one file were averaged as repeats of each N, without a word
    (the model's only when the trace's meta.json said another; a PS's cap never): a hardening pass. A setting
    written two ways (0.30 and 0.3) is one setting."""
    dev = pathlib.Path(__file__).resolve().parents[2] / "data/validation/dev"
    lines = (dev / "mlp_500mbit_q100_b128k_ps03" / "measured.csv").read_text().splitlines(keepends=True)
    index = lines[0].strip().split(",").index(column)
    cells = lines[3].split(",")
    original = cells[index]
    path = tmp_path / "m.csv"

    def with_cell(value: str) -> None:
        path.write_text("".join([*lines[:3], ",".join([*cells[:index], value, *cells[index + 1:]]), *lines[4:]]))

    with_cell("0.30" if original == "0.3" else original)
    assert len(read_measured(path)) == len(lines) - 1
    with_cell(value)
    with pytest.raises(ConfigError) as info:
        read_measured(path)
    assert str(info.value) == (f"{path}:4: '{column}' is '{value}', not {original!r} as on line 2: runs of two "
                               "settings would be averaged as repeats of one; compare one setting at a time")


@pytest.mark.parametrize(("text", "said"), [
    # two runs numbered alike: two campaigns appended, or a row copied and edited; averaged, but said
    ("n_workers,repeat,steps_per_s\n1,0,10\n4,0,16.8\n4,1,17\n4,0,16.9\n",
     ["m.csv:5: n_workers 4 and repeat 0 as on line 3: the same run twice? Averaged with it as a repeat of N=4"]),
    # no repeat column: one row pasted twice
    ("n_workers,steps_per_s\n1,10\n4,16.8\n\n4,16.8\n4,17.9\n",
     ["m.csv:5: every value as on line 3: the same run twice? Averaged with it as a repeat of N=4"]),
    ("n_workers,repeat,steps_per_s\n1,0,10\n4,0,16.8\n4,1,16.8\n4,2,17.9\n", []),  # repeats, one equal by chance
    ("n_workers,steps_per_s\n1,10\n4,16.8\n4,16.9\n", []),
])
def test_rows_that_look_like_one_run_twice_are_named(tmp_path: pathlib.Path, text: str, said: list[str]) -> None:
    """Rows of one N are repeats and are averaged, as documented; but one run written twice (the same N and repeat
    number, or without a repeat column every value the same) was averaged in without a word (a hardening pass)."""
    path = _csv(tmp_path, text)
    assert suspect_repeats(read_measured(path), str(path)) == [f"{tmp_path}/{w}" for w in said]


@pytest.mark.parametrize(("data", "message"), [
    # each was 'm.csv: byte N: not UTF-8 text': no line, no column, no bytes
    (b"n_workers,steps_per_s\n1,2\n2,3\xe9\n",
     r"m.csv:3: column 'steps_per_s': not UTF-8 text: byte b'\xe9' in b'3\xe9'; save it as CSV, UTF-8"),
    (b'n_workers,model,steps_per_s\r\n1,"a,\xff",2\r\n',  # a quoted comma does not shift the column
     r"m.csv:2: column 'model': not UTF-8 text: byte b'\xff' in b'a,\xff'; save it as CSV, UTF-8"),
    (b"n_w\xe9rkers,steps_per_s\n1,2\n", r"m.csv:1: the header: not UTF-8 text: byte b'\xe9' in b'n_w\xe9rkers'"),
    # after a spreadsheet's byte-order mark the codec counts 3 bytes short: the line break before the cell was
    # missed, and it named 'm.csv:1: the header' and the header's bytes
    (b"\xef\xbb\xbfn_workers,steps_per_s\n1,\xff\n",
     r"m.csv:2: column 'steps_per_s': not UTF-8 text: byte b'\xff' in b'\xff'; save it as CSV, UTF-8"),
    (b"\xef\xbb\xbfn_w\xe9rkers,steps_per_s\n1,2\n",
     r"m.csv:1: the header: not UTF-8 text: byte b'\xe9' in b'n_w\xe9rkers'; save it as CSV, UTF-8"),
    # lines that end at a '\r' alone (as the CSV reader, and every other message here, counts them): it named line 1
    (b"n_workers,steps_per_s\r1,2\r2,3\xe9\r",
     r"m.csv:3: column 'steps_per_s': not UTF-8 text: byte b'\xe9' in b'3\xe9'; save it as CSV, UTF-8"),
    ("n_workers,steps_per_s\n1,2\n".encode("utf-16"), r"m.csv: UTF-16 text, not CSV text (it begins with b'\xff\xfe')"),
    (b"PK\x03\x04\x14\x00", r"m.csv: a zip archive (a spreadsheet's .xlsx or .ods?), not CSV text"),
    # were 'missing column 'n_workers' (columns: none; ...)'
    (b"", "m.csv: empty file; a CSV needs a header line naming its columns and a row per run"),
    (b"\n  \r\n", "m.csv: only blank lines; a CSV needs a header line"),
    # no line: which one is the header, which the rows?
    (b"\nn_workers,steps_per_s\n\n", "m.csv:2: the header and no measurement rows after it"),
    (b"\nn_workers,throughput\n1,2\n", "m.csv:2: missing column 'steps_per_s' (columns: n_workers, throughput"),
    (b"n_workers;steps_per_s\n1;2\n", "m.csv:1: missing column 'n_workers' (columns: n_workers;steps_per_s; "
                                      "required: n_workers, steps_per_s); its columns are separated by ';': a CSV's "
                                      "are by commas"),
    # was 'm.csv: 'n_workers' must be at most 100000 (got 100000000)': no line
    (b"n_workers,steps_per_s\n1,2\n100000000,2\n", "m.csv:3: 'n_workers' must be at most 100000 (got '100000000')"),
    # was ''n_workers' must be an integer', of an integer of 5000 digits (int() refuses more than 4300)
    (b"n_workers,steps_per_s\n" + b"9" * 5000 + b",2\n", "m.csv:2: 'n_workers' has more than 400 characters (got '999"),
    # was ''steps_per_s' must be > 0 (got '1e999')': a number too large for a float is not below zero
    (b"n_workers,steps_per_s\n1,1e999\n", "m.csv:2: 'steps_per_s' is too large (got '1e999')"),
    (b"n_workers,steps_per_s\n1,2,7\n", "m.csv:2: 3 cells, the header has 2 (got '1,2,7')"),
    # a spreadsheet in a locale of decimal commas separates by ';': its rows split on the commas, and it said only
    # 'm.csv:2: 2 cells, the header has 1 (got '1;5,1')'
    (b"n_workers;steps_per_s\r\n1;5,1\r\n", "m.csv:2: 2 cells, the header has 1 (got '1;5,1'); its columns are "
                                            "separated by ';': a CSV's are by commas"),
    (b'n_workers,steps_per_s\n1,"1,234.5"\n', "m.csv:2: 'steps_per_s' must be a number, written without a comma: no "
                                           "thousands separators, and a decimal point (2.5) (got '1,234.5')"),
])
def test_files_that_are_no_csv_of_measurements_are_named_with_their_line_column_and_bytes(
        tmp_path: pathlib.Path, data: bytes, message: str) -> None:
    path = tmp_path / "m.csv"
    path.write_bytes(data)
    with pytest.raises(ConfigError) as info:
        read_measured(path)
    assert f"{tmp_path}/{message}" in str(info.value), str(info.value)


def test_a_gzipped_measurements_file_is_read(tmp_path: pathlib.Path) -> None:
    """It was refused as 'byte 1: not UTF-8 text'; traces are read gzipped, and so are measurements now."""
    path = tmp_path / "m.csv.gz"
    path.write_bytes(gzip.compress(b"n_workers,steps_per_s\n1,2\n2,x\n"))
    with pytest.raises(ConfigError, match=r"m\.csv\.gz:3: 'steps_per_s' must be a number \(got 'x'\)"):
        read_measured(path)
    path.write_bytes(gzip.compress(b"n_workers,steps_per_s\n1,2\n"))
    assert read_measured(path).to_dict("records") == [{"n_workers": 1, "steps_per_s": 2.0}]


@pytest.mark.parametrize(("column", "meant"), [("ps_task", "ps_tasks"), ("batch_sise", "batch_size"),
                                               ("Bandwidth_bits_per_s", "bandwidth_bits_per_s"),
                                               ("bandwidth_bit_per_s", "bandwidth_bits_per_s")])
def test_a_misspelt_optional_column_is_refused_naming_the_one_meant(tmp_path: pathlib.Path, column: str,
                                                                    meant: str) -> None:
    """Columns validate does not read are ignored; one a letter off a column it reads was ignored too, and the
    prediction made without it: 'ps_task,2' predicted one PS, 'Bandwidth_bits_per_s' dropped the bandwidth-only
    predictors, without a word."""
    path = _csv(tmp_path, f"n_workers,steps_per_s,{column}\n1,2,2000000\n")
    with pytest.raises(ConfigError) as info:
        read_measured(path)
    assert str(info.value) == (f"{path}:1: column {column!r} is no column validate reads; is it {meant!r}? (the "
                               "columns it does not read are ignored, so a misspelt one would be)")


def test_columns_validate_does_not_read_are_still_ignored(tmp_path: pathlib.Path) -> None:
    path = _csv(tmp_path, "n_workers,steps_per_s,operator,note\n1,2,ana,first run\n")
    assert read_measured(path).to_dict("records") == [{"n_workers": 1, "steps_per_s": 2.0}]


def test_a_measurements_file_named_gz_that_is_not_gzip_says_so(tmp_path: pathlib.Path) -> None:
    """Plain CSV under a .gz name was read without a word, where gunzip and a spreadsheet refuse it."""
    path = tmp_path / "m.csv.gz"
    path.write_bytes(b"n_workers,steps_per_s\n1,2\n")
    with pytest.raises(ConfigError, match=r"m\.csv\.gz: named \.gz but is not gzip \(gzip begins with bytes 1f 8b; "
                                          r"this begins with b'n_worker'\)"):
        read_measured(path)


@pytest.mark.parametrize("columns", [CURVE_COLUMNS, PLAN_COLUMNS])
def test_a_csv_tracegen_predicted_is_refused_as_measurements(tmp_path: pathlib.Path, columns: tuple[str, ...]) -> None:
    """predict's curve.csv (or plan's plan.csv) given as --measured was read, its n_workers and steps_per_s taken
    for runs: validate scored the simulator against its own prediction (MAPE near 0) without a word."""
    row = ["1" if c == "n_workers" else "10.8" if c == "steps_per_s" else "0" for c in columns]
    path = _csv(tmp_path, ",".join(columns) + "\n" + ",".join(row) + "\n")
    with pytest.raises(ConfigError, match=r"m\.csv:1: a (curve tracegen predicted|plan tracegen made) .*, not "
                                          "measurements"):
        read_measured(path)


def test_an_unclosed_quote_is_named_on_the_line_it_opens(tmp_path: pathlib.Path) -> None:
    """The quoted cell runs on to the end of the file, and the refusal named the last line, not the quote's."""
    path = _csv(tmp_path, 'n_workers,steps_per_s\n1,10\n"2,17\n3,18\n4,19\n')
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:3: not a readable CSV: unexpected end of data"):
        read_measured(path)


@pytest.mark.parametrize(("column", "cell"), [("worker_caps", "0.25;;0.125"), ("worker_links", "100000000;;0")])
def test_an_empty_part_of_a_per_worker_cell_is_refused(tmp_path: pathlib.Path, column: str, cell: str) -> None:
    """The empty part was dropped, so the third worker's value became the second's: a silently shifted cluster."""
    first = cell.split(";", maxsplit=1)[0]
    path = _csv(tmp_path, f"n_workers,steps_per_s,{column}\n1,10,{first}\n3,18,{cell}\n")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}:3: '{column}' has an empty part in "
                                          rf"'{re.escape(cell)}'"):
        read_measured(path)


def test_a_worker_link_is_read_in_exponent_form_as_a_rate_is(tmp_path: pathlib.Path) -> None:
    """``1e8`` was refused ('must be an integer') by a message that itself wrote the range as 1e3 to 1e13, while the
    same rate in a worker-class file or in ``bandwidth_bits_per_s`` is read; a fraction of a bit is still refused."""
    path = _csv(tmp_path, "n_workers,steps_per_s,worker_links\n2,18,1e8;2.5e6\n")
    assert read_measured(path)["worker_links"].tolist() == [(100_000_000, 2_500_000)]
    path = _csv(tmp_path, "n_workers,steps_per_s,worker_links\n2,18,1e8;1.5e-1\n")
    with pytest.raises(ConfigError, match=r"m\.csv:2: 'worker_links' must be a whole number \(got '1.5e-1'\)"):
        read_measured(path)


@pytest.mark.parametrize(("column", "cell", "parts"), [("worker_caps", "0.25;0.5;0.5", "3 parts"),
                                                      ("worker_caps", "0.25", "1 part"),
                                                      ("worker_links", "100000000;0;0", "3 parts")])
def test_a_per_worker_cell_with_other_than_n_workers_parts_is_refused(tmp_path: pathlib.Path, column: str, cell: str,
                                                                       parts: str) -> None:
    """A run of 2 workers with 3 caps (or 1) was read, and validate took the longest run's parts for the cluster
    without a word: the testbed writes one part per worker of the run."""
    first = cell.split(";", maxsplit=1)[0]
    path = _csv(tmp_path, f"n_workers,steps_per_s,{column}\n1,10,{first}\n2,18,{cell}\n")
    with pytest.raises(ConfigError) as caught:
        read_measured(path)
    assert str(caught.value) == (f"{path}:3: {column!r} has {parts} for n_workers 2; give each worker's "
                                 "value, ';'-joined, one per worker of the run")


def test_an_empty_per_worker_cell_says_none_given(tmp_path: pathlib.Path) -> None:
    path = _csv(tmp_path, "n_workers,steps_per_s,worker_caps\n1,10,\n2,18,\n")
    assert read_measured(path)["worker_caps"].tolist() == [(), ()]


@pytest.mark.parametrize("column", CORE_COLUMNS)
@pytest.mark.parametrize("cell", ["1e300", "10000.5", "123456"])
def test_cores_beyond_any_hosts_are_refused(tmp_path: pathlib.Path, column: str, cell: str) -> None:
    # read as they were, 1e300 cores were shown in the report as where a window's CPU went
    path = _csv(tmp_path, f"n_workers,steps_per_s,{column}\n1,10,3.5\n2,18,{cell}\n")
    with pytest.raises(ConfigError) as info:
        read_measured(path)
    assert str(info.value) == f"{path}:3: {column!r} must be from 0 to 10000 cores: no host has more (got {cell!r})"


@pytest.mark.parametrize(("cell", "part"), [("0.25;1e300", "1e300"), ("1E+5;0.5", "1E+5"), ("0.5;0.0001", "0.0001"),
                                           ("0.5;5e-324", "5e-324")])
def test_a_worker_cap_beyond_any_host_or_below_a_cfs_quota_is_refused_naming_its_cell(
        tmp_path: pathlib.Path, cell: str, part: str) -> None:
    """1e300 was read, and refused only by validate, as '1e+300 cores is 8e+300 x the traced worker's cap': the
    value not as typed, nor which worker's part of the cell it was."""
    path = _csv(tmp_path, f"n_workers,steps_per_s,worker_caps\n1,10,0.25\n2,18,{cell}\n")
    k = cell.split(";").index(part)
    with pytest.raises(ConfigError) as info:
        read_measured(path)
    assert str(info.value) == (f"{path}:3: 'worker_caps' part {k + 1} (worker {k}) must be from 0.001 to 10000 "
                               f"cores (got {part!r})")


def test_worker_caps_at_the_bounds_are_read(tmp_path: pathlib.Path) -> None:
    path = _csv(tmp_path, "n_workers,steps_per_s,worker_caps\n2,18,0.001;10000\n")
    assert read_measured(path)["worker_caps"].tolist() == [(0.001, 10000.0)]


def test_cores_up_to_a_large_hosts_and_minus_zero_as_zero_are_read(tmp_path: pathlib.Path) -> None:
    runs = read_measured(_csv(tmp_path, "n_workers,steps_per_s,host_busy_cores\n1,10,10000\n2,18,-0\n3,20,\n"))
    cores = runs["host_busy_cores"].tolist()
    assert cores[:2] == [10000.0, 0.0] and str(cores[1]) == "0.0" and cores[2] != cores[2]  # NaN: unknown


@pytest.mark.parametrize("column", SWITCH_COLUMNS)
def test_more_context_switches_than_any_host_makes_are_refused(tmp_path: pathlib.Path, column: str) -> None:
    path = _csv(tmp_path, f"n_workers,steps_per_s,{column}\n1,10,1e10\n2,18,1e300\n")
    with pytest.raises(ConfigError) as info:
        read_measured(path)
    assert str(info.value) == (f"{path}:3: {column!r} must be from 0 to 1e+10 per second: a switch takes a core over "
                               "a microsecond (got '1e300')")


@pytest.mark.parametrize(("text", "message"), [
    # a unit in the header, as a spreadsheet's column titles carry: the columns were listed, the unit not blamed
    ("n_workers,steps_per_s (steps/s)\n1,2\n", "m.csv:1: missing column 'steps_per_s' (columns: n_workers, "
     "steps_per_s (steps/s); required: n_workers, steps_per_s); the header's 'steps_per_s (steps/s)' would be it: "
     "write the name alone, its unit is the name's own"),
    ("n_workers [N],steps_per_s\n1,2\n", "the header's 'n_workers [N]' would be it: write the name alone"),
    # an optional column with its unit was ignored without a word: the trace's batch size taken instead
    ("n_workers,steps_per_s,batch_size (samples)\n1,2,64\n", "m.csv:1: column 'batch_size (samples)' is no column "
     "validate reads; is it 'batch_size'? Write the name alone, its unit is the name's own"),
    # samples per second, as a training log prints them: which column to give instead
    ("n_workers,samples_per_s\n1,346\n", "'samples_per_s' is not read: give the steps per second of all workers "
     "together (samples/s over the batch size)"),
    # a rate with its unit in the column of bits per second: where such a rate goes
    ("n_workers,steps_per_s,bandwidth_bits_per_s\n1,2,500Mbit/s\n", "m.csv:2: 'bandwidth_bits_per_s' must be a "
     "number (got '500Mbit/s'); a rate with its unit goes in a column named 'bandwidth' instead"),
])
def test_a_unit_where_a_name_or_number_goes_is_named(tmp_path: pathlib.Path, text: str, message: str) -> None:
    path = _csv(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        read_measured(path)
    said = str(error.value).replace(str(path), "m.csv")  # the rule's 300 characters, the file named short
    assert message in said and "\n" not in said and len(said) <= 300


def test_a_bare_number_that_is_no_rate_is_refused_as_before(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(tmp_path / 'm.csv'))}:2: 'bandwidth_bits_per_s' must be a "
                                          r"number \(got 'fast'\)$"):
        read_measured(_csv(tmp_path, "n_workers,steps_per_s,bandwidth_bits_per_s\n1,2,fast\n"))
    # a column with a bracketed note that names no column read is ignored, as any other
    assert list(read_measured(_csv(tmp_path, "n_workers,steps_per_s,notes (free text)\n1,2,x\n"))["n_workers"]) == [1]


@pytest.mark.parametrize(("text", "message"), [
    # a decimal comma in a comma-separated file: the row was refused for its width, the comma not named
    ("n_workers,steps_per_s\n1,10,8154\n", "m.csv:2: 3 cells, the header has 2 (got '1,10,8154'); a number with a "
     "decimal comma (10,5) splits in two at it: write a decimal point (10.5)"),
    # Excel's line naming the separator: taken for a header of columns 'sep=' and ''
    ("sep=,\nn_workers,steps_per_s\n1,10.8\n", "m.csv:1: a spreadsheet's separator line (got 'sep=,') where the "
     "header should be: remove it"),
    # a comment between the rows: refused for its width, as if a row had lost a cell
    ("n_workers,steps_per_s\n1,10.8\n# second batch\n2,17\n", "m.csv:3: a comment line (got '# second batch'): "
     "this CSV has no comment lines"),
    # a title line above the header: 'missing column', with the header one line down unsaid
    ("My runs,\nn_workers,steps_per_s\n1,10.8\n", "m.csv:1: missing column 'n_workers' (columns: My runs, ; "
     "required: n_workers, steps_per_s); line 2 names them: the header is the first line, so remove the lines "
     "above it"),
])
def test_a_spreadsheets_habits_are_named(tmp_path: pathlib.Path, text: str, message: str) -> None:
    path = _csv(tmp_path, text)
    with pytest.raises(ConfigError) as error:
        read_measured(path)
    said = str(error.value).replace(str(path), "m.csv")
    assert said.startswith(message) and "\n" not in said and len(said) <= 300


def test_a_row_as_wide_as_the_header_is_a_row_whatever_its_first_cell(tmp_path: pathlib.Path) -> None:
    runs = read_measured(_csv(tmp_path, "run,n_workers,steps_per_s\n#1,1,10.8\n#2,2,17.4\n"))
    assert list(runs["n_workers"]) == [1, 2]
    with pytest.raises(ConfigError, match=r"m\.csv:2: 3 cells, the header has 2 \(got '1,a,b'\)$"):
        read_measured(_csv(tmp_path, "n_workers,steps_per_s\n1,a,b\n"))  # no pair of numbers: no comma named


def test_rates_falling_as_each_workers_own_do_are_asked_about(tmp_path: pathlib.Path) -> None:
    """A user's log gives each worker's steps/s: 10.8 alone, 4.1 each of four. Read as all workers' together, every
    prediction was 4x too high, and nothing asked whether the column held what it names."""
    path = _csv(tmp_path, "n_workers,steps_per_s\n1,10.8\n2,8.7\n4,4.1\n4,4.3\n")
    (warning,) = suspect_per_worker(read_measured(path), str(path))
    assert warning == (f"{path}: steps_per_s at N=4 (4.2) is 0.39 of N=1's (10.8), as each worker's own rate falls; "
                       "steps_per_s counts the steps of all workers together: are these each worker's?")
    # a curve that flattens, or dips by less than 40 % past its top, is a curve of all workers' steps
    assert suspect_per_worker(read_measured(_csv(tmp_path, "n_workers,steps_per_s\n1,10.8\n2,17.4\n5,11\n")),
                              "m.csv") == []
    assert suspect_per_worker(read_measured(_csv(tmp_path, "n_workers,steps_per_s\n3,4\n")), "m.csv") == []


def test_no_stored_curve_is_asked_about_as_the_docstring_says() -> None:
    """``suspect_per_worker``'s docstring: over every curve measured in ``data/``, the lowest mean at a larger N
    over the smallest N's; none is warned of, and the threshold stays well below it."""
    from validation.measured import PER_WORKER_FALL

    data = pathlib.Path(__file__).resolve().parents[2] / "data"
    lowest = []
    for path in sorted(data.rglob("measured.csv")):
        runs = read_measured(path)
        assert suspect_per_worker(runs, str(path)) == [], path
        means = runs.groupby("n_workers")["steps_per_s"].mean()
        if len(means) > 1:
            lowest.append(float((means.iloc[1:] / means.iloc[0]).min()))
    doc = " ".join((suspect_per_worker.__doc__ or "").split())
    assert f"over the {len(lowest)} curves measured in ``data/`` the lowest is {min(lowest):.2f}" in doc
    assert min(lowest) > PER_WORKER_FALL


def test_the_least_cpu_cap_read_is_the_least_a_cfs_quota_enforces() -> None:
    """A worker cap in measured.csv and the PS's cores in a link profile or single-worker file share one floor, the
    testbed's: the parsers keep their own figure (they import nothing of validation), so it is held to it here."""
    from parsers.linkprofile import MIN_CPU_CORES
    from validation.cluster_config import MAX_PERIOD_US, MIN_QUOTA_US
    from validation.measured import MIN_WORKER_CAP_CORES

    assert MIN_CPU_CORES == MIN_WORKER_CAP_CORES == MIN_QUOTA_US / MAX_PERIOD_US
