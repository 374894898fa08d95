"""Quantities as users write them, to the integers the model uses, and back for echoing.

Rates (→ bytes per second, an int):
- bits per second: ``500Mbit/s``, ``1Gbit/s``, ``10Gbps``, ``100kbit/s``, ``10G`` (a bare SI prefix means bits
  per second, as network links are quoted), ``800M``;
- bytes per second: ``125MB/s``, ``1.5GB/s``, ``64KiB/s``, ``1000B/s``;
from 1 kbit/s to 1000 TB/s. A number may carry an exponent: ``1e9bit/s``, ``1.25e8B/s``. A bare number is refused:
``800M`` is bits per second, as links are quoted, so ``800000000`` would be read by one user as bits and by another
as bytes, a link eight times as fast.
SI prefixes are powers of 1000 (k, M, G, T); ``Ki``/``Mi``/``Gi``/``Ti`` are powers of 1024. ``b``/``bit`` is a
bit, ``B`` a byte. Bit rates that are not whole bytes per second are rounded to the nearest byte per second.

Durations (→ ns, an int): ``50us`` (or ``50µs``), ``2ms``, ``1.5s``, ``100ns``, ``5e-5s``, ``0``; a bare number is
ns.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

from parsers.csvfile import NUMBER
from parsers.errors import counted as counted  # noqa: PLC0414 - a re-export (mypy --strict): one helper, both packages
from parsers.errors import quoted
from tracegen.errors import ConfigError

_PREFIX = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
# digits 0-9, as in every CSV cell (parsers.csvfile): \d would take full-width and Arabic-Indic digits
_NUMBER = r"(?P<num>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?)"  # an exponent of at most 3 digits: 1e999
_RATE = re.compile(r"^" + _NUMBER + r"\s*(?P<prefix>Ki|Mi|Gi|Ti|[kKMGT]?)"
                   r"(?P<unit>bit/s|bits/s|bps|b/s|B/s|Bps|bit|b|B|)$")
# a rate in bits spelled out ('bit', not 'b' or 'bps': 'gb/s' and 'GBPS' may mean bytes), a letter in the wrong case
_BIT_RATE_ANY_CASE = re.compile(r"^" + _NUMBER + r"\s*(?P<prefix>[kmgt]i?|)(?P<unit>bits?(?:/s)?)$", re.IGNORECASE)
_DURATION = re.compile(r"^" + _NUMBER + r"\s*(?P<unit>ns|us|µs|ms|s|)$")
_DURATION_NS = {"": 1, "ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
MIN_RATE_BYTES_PER_S = 125  # 1 kbit/s: no network link is slower, and below it a slip of unit is likelier
MAX_RATE_BYTES_PER_S = 10**15
MAX_DURATION_NS = 3600 * 10**9


def parse_rate(text: str, *, what: str = "bandwidth") -> int:
    """``500Mbit/s`` → 62500000 (bytes per second). Raises ConfigError quoting ``text``."""
    m = _RATE.match(text.strip())
    if m is None and (near := _BIT_RATE_ANY_CASE.match(text.strip())):  # '1gbit/s', '1MBIT/S': bits all the same
        prefix = near["prefix"].capitalize() if near["prefix"].lower() != "k" else "k"
        raise ConfigError(f"{what!r}: cannot read {quoted(text)} as a rate; did you mean {near['num']}{prefix}bit/s? "
                          "(case matters: Gbit/s is bits per second, GB/s bytes)")
    if m is None:
        raise ConfigError(f"{what!r}: cannot read {quoted(text)} as a rate; write e.g. 500Mbit/s, 1Gbit/s, 10G "
                          "(bits per second) or 125MB/s (bytes per second)")
    prefix, unit = m["prefix"], m["unit"]
    if unit == "" and prefix == "":
        raise ConfigError(f"{what!r}: {quoted(text)} has no unit (bits or bytes per second?); write e.g. 500Mbit/s, "
                          "10G (bits per second) or 62.5MB/s (bytes per second)")
    bits = unit in ("bit/s", "bits/s", "bps", "b/s", "bit", "b") or (unit == "" and prefix != "")
    value = Decimal(m["num"]) * _PREFIX[prefix]
    exact = value / 8 if bits else value
    # compared as written, before it is made an int: 1e999 would be a thousand-digit one, and 0.999 kbit/s 125 B/s
    if not MIN_RATE_BYTES_PER_S <= exact <= MAX_RATE_BYTES_PER_S:
        raise ConfigError(f"{what!r} must be between 1 kbit/s and 8000 Tbit/s (1000 TB/s) (got {quoted(text)})")
    return int(exact.to_integral_value())


def parse_duration(text: str, *, what: str = "latency") -> int:
    """``50us`` → 50000 (ns). Raises ConfigError quoting ``text``."""
    m = _DURATION.match(text.strip())
    if m is None:
        raise ConfigError(f"{what!r}: cannot read {quoted(text)} as a duration; write e.g. 50us, 2ms, 0")
    try:
        exact = Decimal(m["num"]) * _DURATION_NS[m["unit"]]
    except InvalidOperation as exc:  # pragma: no cover - the pattern admits only plain decimals
        raise ConfigError(f"{what!r}: cannot read {quoted(text)} as a duration") from exc
    if exact > MAX_DURATION_NS:  # (before it is made an int: 1e999 would be a thousand-digit one)
        raise ConfigError(f"{what!r} must be at most 1 hour (got {quoted(text)})")
    return int(exact.to_integral_value())


def format_rate(bytes_per_s: float) -> str:
    """62500000 → ``500 Mbit/s (62.5 MB/s)``: bits per second as links are quoted, bytes beside."""
    bits = bytes_per_s * 8
    return f"{_si(bits)}bit/s ({_si(bytes_per_s)}B/s)"


def format_duration(ns: float) -> str:
    """50000 → ``50 us``."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= scale:
            return f"{_num(ns / scale)} {unit}"
    return f"{_num(ns)} ns"


def format_wait(seconds: float) -> str:
    """A wait as a person reads it, rounded to its unit: ``42 s``, ``12 min``, ``3.5 h``, ``9 days``, ``1 year``,
    ``2.3e+04 years`` (what is left of a run, or what a refused one would have taken)."""
    for unit, scale, limit in (("s", 1, 90), ("min", 60, 90 * 60), ("h", 3600, 48 * 3600), ("day", 86400, 730 * 86400)):
        if seconds < limit:
            return _counted(seconds / scale, unit)
    return _counted(seconds / (365 * 86400), "year")


def _counted(value: float, unit: str) -> str:
    """``value`` of ``unit``: whole below 100 except hours (one decimal below 10), three digits past 10^6, and the
    unit's plural where the figure is not 1 (``s``, ``min`` and ``h`` have none)."""
    if value >= 1e6:
        text = f"{value:.2g}"
    elif unit == "h" and value < 9.95:
        text = f"{value:.1f}"
    else:
        text = f"{value:.0f}"
    plural = unit in ("day", "year") and text != "1"
    return f"{text} {unit}{'s' if plural else ''}"


def fixed(value: float, decimals: int) -> str:
    """``value`` with ``decimals`` decimals, or its first three digits where those would show one digit or none:
    a rate of 0.0007 steps/s is not none, one sample's hours are not 0.000000, a cluster of $0.00001/h instances
    not free, and 6.72e-05 steps/s is not 0.0001 (50 % off, beside its samples/s), nor a band of 0.72 to 1.16
    samples/s '1-1'. The usual figures keep their fixed decimals, so that equal results give equal bytes."""
    text = f"{value:.{decimals}f}"
    return f"{value:.3g}" if value and abs(value) < 10.0 ** (1 - decimals) else text


def percent(share: float) -> str:
    """A share as whole percent, rounded down: ``0.7952`` is ``79%``, so that a figure shown beside a label decided
    at a threshold (80 % busy, :data:`tracegen.bottleneck.BUSY_THRESHOLD`) never looks past it when it is not."""
    return f"{math.floor(share * 100 + 1e-9):.0f}%" if math.isfinite(share) else f"{share}"


BRIEF_LIMIT = 1e7


def brief(value: float, decimals: int) -> str:
    """:func:`fixed` for people to read: a figure of :data:`BRIEF_LIMIT` or more as its first three digits and
    its exponent (a slow cluster's 387593000040.54 h is 3.88e+11 h, not a number to count digits in). Files keep
    :func:`fixed`'s digits."""
    return f"{value:.3g}" if abs(value) >= BRIEF_LIMIT else fixed(value, decimals)


def format_bytes(n: float) -> str:
    """2678824 → ``2.68 MB``."""
    return f"{_si(n)}B"


def _si(value: float) -> str:
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{_num(value / scale)} {prefix}"
    return f"{_num(value)} "


def _num(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def parse_count(text: str) -> int:
    """A whole number written with ASCII digits only (``int`` would also take ``+3``, ``٣`` and ``1_000``):
    for the command line's counts. Raises ``argparse.ArgumentTypeError`` so argparse reports it."""
    import argparse

    stripped = text.strip()
    if not stripped.isascii() or not stripped.isdigit():
        raise argparse.ArgumentTypeError(f"must be a whole number written with digits 0-9 (got {quoted(text)})")
    if len(stripped) > 18:
        raise argparse.ArgumentTypeError(f"must be less than 10^18 (got {quoted(text)})")
    return int(stripped)


_WHOLE = re.compile(r"^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$")


def parse_whole(text: str, *, high: int = 10**18) -> int:
    """A whole number from 1 to ``high``, plain or with an exponent (``100000000``, ``1e8``, ``2.5e9``), written with
    ASCII digits: for the command line's large counts (training samples). Raises ``argparse.ArgumentTypeError``."""
    import argparse

    stripped = text.strip()
    value = Decimal(stripped) if _WHOLE.match(stripped) else None
    if value is None or not 1 <= value <= high or value % 1:
        top = f"{high:.0e}".replace("e+", "e")
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {top}, e.g. 100000000 or 1e8 "
                                         f"(got {quoted(text)})")
    return int(value)


def parse_number(text: str) -> float:
    """A finite decimal number written as a CSV cell's (:data:`parsers.csvfile.NUMBER`: digits 0-9, maybe a
    ``-``, a decimal point and an exponent; ``float`` would also take ``nan``, ``inf``, ``1_000``, ``+1`` and
    ``٣``): for the command line's fractions and seconds. A number too small for a float, which rounds it to 0,
    is refused with the text typed: ``--payload-fraction 1e-400`` was refused as '(got 0.0)', a value not given."""
    import argparse

    stripped = text.strip()
    if not NUMBER.fullmatch(stripped):
        raise argparse.ArgumentTypeError(f"must be a number written with the digits 0-9 (got {quoted(text)})")
    value = float(stripped)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {quoted(text)})")
    if value == 0 and any(c in "123456789" for c in re.split("[eE]", stripped)[0]):
        raise argparse.ArgumentTypeError(f"{quoted(text)} is too small for a 64-bit float, which rounds it to 0; "
                                         "write 0 where 0 is meant")
    return value
