from __future__ import annotations

import argparse
import math
from typing import Any

import pytest

from tracegen.errors import ConfigError
from tracegen.units import (
    BRIEF_LIMIT,
    brief,
    counted,
    fixed,
    format_duration,
    format_rate,
    format_wait,
    parse_count,
    parse_duration,
    parse_number,
    parse_rate,
    parse_whole,
    percent,
)


@pytest.mark.parametrize(("text", "bytes_per_s"), [
    ("500Mbit/s", 62_500_000), ("1Gbit/s", 125_000_000), ("125MB/s", 125_000_000), ("10G", 1_250_000_000),
    ("10Gbps", 1_250_000_000), ("1.5GB/s", 1_500_000_000), ("64KiB/s", 65_536),
    ("100 kbit/s", 12_500), ("1e9bit/s", 125_000_000), ("1.25e8B/s", 125_000_000), ("1E3Mbit/s", 125_000_000),
    ("5e-1Gbit/s", 62_500_000),
])
def test_parse_rate(text: str, bytes_per_s: int) -> None:
    assert parse_rate(text) == bytes_per_s


@pytest.mark.parametrize(("text", "ns"), [("50us", 50_000), ("50µs", 50_000), ("2ms", 2_000_000), ("0", 0),
                                          ("1.5s", 1_500_000_000), ("100ns", 100), ("250", 250),
                                          ("5e-5s", 50_000), ("2E3us", 2_000_000)])
def test_parse_duration(text: str, ns: int) -> None:
    assert parse_duration(text) == ns


@pytest.mark.parametrize("text", ["", "fast", "10 parsecs", "-5Mbit/s", "1Gbit/h", "0", "0.01b/s", "10^9",
                                  "1e999Gbit/s", "1e-999Gbit/s", "1e1000bit/s", "1e", "e9bit/s",
                                  "\uff15\uff10\uff10Mbit/s", "\u0665Mbit/s"])  # full-width 500, Arabic-Indic 5: read
def test_bad_rates_quote_the_value(text: str) -> None:
    with pytest.raises(ConfigError, match="bandwidth") as info:
        parse_rate(text)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize("text", ["soon", "5 minutes", "-1ms", "2h", "7200s", "1e999s", "1e1000s", "\uff15ms"])
def test_bad_durations_quote_the_value(text: str) -> None:
    with pytest.raises(ConfigError, match="latency") as info:
        parse_duration(text)
    assert repr(text) in str(info.value)


def test_formats_echo_units() -> None:
    assert format_rate(62_500_000) == "500 Mbit/s (62.5 MB/s)"
    assert format_rate(parse_rate("1Gbit/s")).startswith("1 Gbit/s")
    assert format_duration(50_000) == "50 us"
    assert format_duration(2_000_000) == "2 ms"
    assert format_duration(12) == "12 ns"


@pytest.mark.parametrize(("seconds", "text"), [
    (42.4, "42 s"), (89.4, "89 s"), (90, "2 min"), (5399, "90 min"), (5400, "1.5 h"), (9.96 * 3600, "10 h"),
    (47 * 3600, "47 h"), (86400 * 2, "2 days"), (86400 * 400, "400 days"), (365 * 86400, "365 days"),
    (730 * 86400, "2 years"), (1.4 * 365 * 86400 * 2, "3 years"), (3e7 * 365 * 86400, "3e+07 years")])
def test_a_wait_is_said_in_the_unit_a_person_reads(seconds: float, text: str) -> None:
    # a refused sweep said "about 1e+14 events, 1 years on one core", a long predict "about 7262 s left"
    assert format_wait(seconds) == text


def test_one_of_a_unit_is_singular() -> None:
    assert format_wait(1) == "1 s"
    assert format_wait(365 * 86400 * 2.6) == "3 years"
    assert format_wait(729.6 * 86400) == "730 days"  # under two years: days, and never "1 years"


def test_a_count_too_large_says_so_not_that_it_is_no_number() -> None:
    import argparse

    from tracegen.units import parse_count

    with pytest.raises(argparse.ArgumentTypeError, match=r"must be less than 10\^18 \(got '99999999999999999999'\)"):
        parse_count("99999999999999999999")


def test_a_rate_slower_than_any_link_is_refused_and_a_bare_number_for_want_of_a_unit() -> None:
    assert parse_rate("1kbit/s") == 125  # the slowest rate taken
    # 100 Mbit/s meant, read as bytes/s: a plateau of 0.00 steps/s; 800000000 meant as bits, read as bytes: a link
    # eight times as fast, and a plateau eight times as high, without a word (800M is bits: as links are quoted)
    for bare in ("100", "800000000", "1e8", "0"):
        with pytest.raises(ConfigError, match=rf"^'bandwidth': '{bare}' has no unit \(bits or bytes per second\?\)"):
            parse_rate(bare)
    assert parse_rate("800M") == parse_rate("800Mbit/s") == parse_rate("100MB/s")
    with pytest.raises(ConfigError, match="between 1 kbit/s"):
        parse_rate("900bit/s")
    # checked as written, not once rounded to whole bytes: 124.875 B/s became 125 and was taken (a hardening pass)
    for under in ("0.999kbit/s", "999bit/s", "124.6B/s"):
        with pytest.raises(ConfigError, match="between 1 kbit/s"):
            parse_rate(under)


def test_brief_keeps_fixed_decimals_below_its_limit_and_three_digits_above() -> None:
    assert brief(1234.5678, 2) == fixed(1234.5678, 2) == "1234.57"
    assert brief(0.0001234, 2) == fixed(0.0001234, 2)  # the small end is fixed's
    assert brief(BRIEF_LIMIT * 1.2345, 2) == "1.23e+07"
    assert brief(-BRIEF_LIMIT * 3, 0) == "-3e+07"


def test_fixed_never_rounds_a_figure_to_one_digit() -> None:
    """plan.csv wrote 6.72e-05 steps/s as 0.0001 (50 % off; its samples/s beside it said 0.0022 at a batch of 32),
    and the table a band of 0.72 to 1.16 samples/s as '1-1', one that looks pinned: a figure its fixed decimals
    would show with one digit gets its first three."""
    assert fixed(6.72e-05, 4) == "6.72e-05" and fixed(0.000149, 4) == "0.000149"
    assert fixed(0.72, 0) == "0.72" and fixed(1.16, 0) == "1.16" and fixed(9.6, 0) == "9.6"
    assert fixed(0.0223, 2) == "0.0223" and fixed(0.7, 1) == "0.7"
    for value, decimals in ((6.72e-05, 4), (0.000149, 4), (0.714, 0), (1.49, 0), (0.0286, 2), (0.0149, 1)):
        assert math.isclose(float(fixed(value, decimals)), value, rel_tol=0.005), (value, decimals)
    assert fixed(12.345, 0) == "12" and fixed(0.0123, 4) == "0.0123" and fixed(0.1234, 2) == "0.12"  # as before
    assert fixed(0.0, 4) == "0.0000" and fixed(1e-9, 4) == "1e-09"


def test_percent_rounds_down_so_a_share_never_looks_past_the_busy_threshold() -> None:
    """predict printed a PS's CPU 0.7952 busy as '80%' beside the label 'workers' (80 % is where a resource is
    named the bottleneck): shares are shown rounded down."""
    from tracegen.bottleneck import BUSY_THRESHOLD

    assert percent(0.7952) == "79%" and percent(BUSY_THRESHOLD) == "80%"
    assert [percent(x / 100) for x in range(101)] == [f"{x}%" for x in range(101)]  # 0.29 * 100 is 28.999...
    assert percent(0.99999) == "99%" and percent(0.0) == "0%"


@pytest.mark.parametrize("text", ["1_000", "0_5", "+0.5", "nan", "inf", "1e999", "\u0665", "\uff10.5", "0x1", ""])
def test_a_command_line_number_is_written_as_a_csv_cell_is(text: str) -> None:
    """``--payload-fraction``, ``--target-rate``, a sweep's worker speeds: ``float`` read '1_000' as 1000 and '0_5'
    as 5; the command line now takes the numbers a CSV cell takes (parsers.csvfile.NUMBER), nothing more."""
    import argparse

    from tracegen.units import parse_number

    with pytest.raises(argparse.ArgumentTypeError) as refused:
        parse_number(text)
    said = str(refused.value)  # the rule and the value as typed (the rule alone passed a message without it)
    assert said.startswith(("must be a number", "must be a finite number")) and said.endswith(f"(got {text!r})"), said
    assert [parse_number(t) for t in ("0.5", ".5", "5.", "2e3", " 1 ", "-1")] == [0.5, 0.5, 5.0, 2000.0, 1.0, -1.0]


@pytest.mark.parametrize("text", ["1e-400", "-2.5e-999", "0.000001e-330"])
def test_a_command_line_number_a_float_rounds_to_0_is_refused_as_typed(text: str) -> None:
    # --payload-fraction 1e-400 was refused as '(got 0.0)', a value the user never gave
    import argparse

    from tracegen.units import parse_number

    with pytest.raises(argparse.ArgumentTypeError) as refused:
        parse_number(text)
    assert str(refused.value) == (f"{text!r} is too small for a 64-bit float, which rounds it to 0; write 0 where 0 "
                                  "is meant")
    assert [parse_number(t) for t in ("0", "0.000", "0e-400", "-0", "5e-324")] == [0.0, 0.0, 0.0, 0.0, 5e-324]


@pytest.mark.parametrize(("text", "meant"), [
    ("1gbit/s", "1Gbit/s"), ("1MBIT/S", "1Mbit/s"), ("500 mbit/s", "500Mbit/s"), ("2.5Gbit/S", "2.5Gbit/s"),
    ("1KBITS/S", "1kbit/s"), ("10gbit", "10Gbit/s"), ("1gibit/s", "1Gibit/s"), ("1KIBIT/S", "1Kibit/s"),
    ("1e3mBits", "1e3Mbit/s"),
])
def test_a_bit_rate_with_a_letter_in_the_wrong_case_names_the_spelling_taken(text: str, meant: str) -> None:
    """'1gbit/s' was told only 'cannot read ... as a rate; write e.g. 500Mbit/s, 1Gbit/s, ...': which letter was
    wrong, the user had to find. 'bit' spelled out is bits in any case, so the hint names the rate it means."""
    with pytest.raises(ConfigError, match="case matters") as info:
        parse_rate(text)
    assert f"{text!r} as a rate; did you mean {meant}?" in str(info.value)
    assert parse_rate(meant) > 0  # what it suggests is taken


@pytest.mark.parametrize("text", ["1gb/s", "1gbps", "1GBPS", "1mB/s"])  # b, bps: bits or bytes? nothing tells
def test_a_rate_whose_case_leaves_bits_or_bytes_open_gets_no_guess(text: str) -> None:
    with pytest.raises(ConfigError, match=r"write e\.g\. 500Mbit/s") as info:
        parse_rate(text)
    assert "did you mean" not in str(info.value)


def test_a_count_of_one_takes_the_singular() -> None:
    # output said '1 transfers' (a model note) and '1 other variables' (inspect)
    assert (counted(1, "transfer"), counted(0, "transfer"), counted(3, "transfer")) == (
        "1 transfer", "0 transfers", "3 transfers")
    assert counted(1, "other variable") == "1 other variable"
    assert counted(2, "entry", "entries") == "2 entries"


@pytest.mark.parametrize(("parse", "text", "rule"), [
    (parse_rate, "1" * 5000, "has no unit (bits or bytes per second?)"),
    (parse_rate, "1" * 5000 + "x", "as a rate; write e.g. 500Mbit/s"),
    (parse_rate, "1" * 390 + "Gbit/s", "must be between 1 kbit/s and 8000 Tbit/s"),
    (parse_duration, "1" * 5000 + "us", "must be at most 1 hour"),
])
def test_a_value_of_thousands_of_characters_is_quoted_short_beside_what_was_wrong(parse: Any, text: str,
                                                                                    rule: str) -> None:
    """'--bandwidth 111...1' (5000 digits) was quoted whole: the command line's one line of 300 characters was cut
    before it said what was wrong ('has no unit')."""
    with pytest.raises(ConfigError) as refused:
        parse(text)
    said = str(refused.value)
    assert rule in said and len(said) < 250 and "'" + "1" * 20 in said  # the value, quoted shortened


@pytest.mark.parametrize(("parse", "rule"), [(parse_count, "must be less than 10^18"),
                                              (parse_number, "must be a finite number"),
                                              (parse_whole, "must be a whole number from 1 to 1e18")])
def test_a_numeric_option_of_thousands_of_digits_is_quoted_short(parse: Any, rule: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        parse("9" * 5000)
    said = str(refused.value)
    assert said.startswith(rule) and len(said) < 150
