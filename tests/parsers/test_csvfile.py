"""The one rule for a number in a cell of any CSV tracegen reads (:mod:`parsers.csvfile`): what Python's ``int``
and ``float`` take besides (full-width and Arabic-Indic digits, ``1_000``, ``+5``, ``nan``, ``inf``) is refused
with the column's words, and what is left is read exactly."""

from __future__ import annotations

from decimal import Decimal

import pytest

from parsers.csvfile import MAX_NUMBER_CHARS, cell_float, cell_int


def _fail(why: str) -> ValueError:
    return ValueError(why)


@pytest.mark.parametrize(("cell", "why"), [
    ("\uff11\uff12", "must be a number, written with the digits 0-9"),  # full-width 12: float() reads 12.0
    ("\u0663", "must be a number, written with the digits 0-9"),  # Arabic-Indic 3
    ("1_000", "must be a number"), ("+5", "must be a number"), ("nan", "must be a number"),
    ("inf", "must be a number"), ("-Infinity", "must be a number"), ("1 000", "must be a number"),
    ("0x10", "must be a number"), ("", "must be a number"), ("1e", "must be a number"),
    ("1e999", "is too large"), ("9" * (MAX_NUMBER_CHARS + 1), f"has more than {MAX_NUMBER_CHARS} characters"),
    # a spreadsheet's way for people: it said only 'must be a number (got '1,234.5')', as of a word
    ("1,234.5", "must be a number, written without a comma: no thousands separators, and a decimal point \\(2.5\\)"),
    ("2,5", "must be a number, written without a comma: no thousands separators, and a decimal point \\(2.5\\)"),
    ("-1,000,000", "must be a number, written without a comma: no thousands separators, and a decimal point "
                   "\\(2.5\\)"),
])
def test_what_python_takes_besides_is_refused(cell: str, why: str) -> None:
    with pytest.raises(ValueError, match=f"^{why}$"):
        cell_float(cell, "must be a number", _fail)
    with pytest.raises(ValueError, match=f"^{why.replace('a number', 'a whole number')}$"):
        cell_int(cell, "must be a whole number", _fail, exponent=True)


@pytest.mark.parametrize(("cell", "value"), [(" 12 ", 12.0), ("-3", -3.0), (".5", 0.5), ("5.", 5.0),
                                             ("2.5e9", 2.5e9), ("1E-3", 1e-3)])
def test_ascii_numbers_are_read(cell: str, value: float) -> None:
    assert cell_float(cell, "must be a number", _fail) == value


def test_whole_numbers_are_exact_and_a_fraction_is_refused_not_rounded() -> None:
    assert cell_int("12345678901234567891", "w", _fail) == 12345678901234567891  # past a float's exact integers
    assert cell_int("1e19", "w", _fail, exponent=True) == 10**19
    assert cell_int("2.5e9", "w", _fail, exponent=True) == int(Decimal("2.5e9"))
    for cell in ("1000.4", "999.6", "1.0000000000000001e3"):
        with pytest.raises(ValueError, match=r"^w$"):
            cell_int(cell, "w", _fail, exponent=True)
    for cell in ("1e3", "2.0", "1e999999999"):  # an exponent or a decimal point only where the column takes them;
        # it said 'w' alone, of a number that is whole: which form the column takes, it did not say
        with pytest.raises(ValueError, match=r"^w, written in the digits 0-9 alone: no exponent or decimal point$"):
            cell_int(cell, "w", _fail)
    with pytest.raises(ValueError, match=r"^w$"):  # not whole: the rule is all there is to say
        cell_int("2.5", "w", _fail)
    with pytest.raises(ValueError, match=r"^is too large$"):  # short, but its int() would have a billion digits
        cell_int("1e999999999", "w", _fail, exponent=True)
    # 28 digits and up: 'value % 1' needed more than decimal's default precision and raised InvalidOperation
    # (DivisionImpossible), a traceback for '1e30' in a converted CSV table
    assert cell_int("1e30", "w", _fail, exponent=True) == 10**30
    assert cell_int("12345678901234567890123456789.5e1", "w", _fail, exponent=True) == 123456789012345678901234567895
    with pytest.raises(ValueError, match=r"^w$"):
        cell_int("12345678901234567890123456789.5", "w", _fail, exponent=True)
