"""Worker-count lists as the command line takes and prints them: ``1-16``, ``1,2,4,8``, ``1-4,8,16``
(:func:`parse_workers`, each N at most :data:`tracegen.simulate.MAX_WORKERS`, none twice) and back
(:func:`format_workers`).
"""

from __future__ import annotations

from collections.abc import Sequence

from parsers.errors import quoted
from tracegen.errors import ConfigError
from tracegen.simulate import MAX_WORKERS


def parse_workers(text: str, name: str = "workers") -> tuple[int, ...]:
    """``1-16`` → 1..16, ``1,2,4,8`` → those, ``1-4,8,16`` → both kinds; sorted, each ≥ 1. An N given twice
    (``1,1,2``, ``1-4,3``) is refused: a list typed with a repeat holds a slip, and dropping the repeat would
    answer a question that was not asked. ``name``: the option the list came from, for the error message."""
    out: dict[int, str] = {}  # N → the piece that gave it
    for part in text.split(","):
        piece = part.strip()
        lo_s, sep, hi_s = piece.partition("-")
        if not (lo_s.isascii() and lo_s.isdigit()) or (sep and not (hi_s.isascii() and hi_s.isdigit())):
            # "cannot read '' in ''" of an empty option, or of '1,,2', left the reader to find the nothing
            what = "" if piece else " (nothing given)" if not text.strip() else " (an empty entry)"
            raise ConfigError(f"'{name}': cannot read {quoted(piece)} in {quoted(text)}{what}; write e.g. 1-16 or "
                              "1,2,4,8")
        lo = _count(lo_s)
        hi = _count(hi_s) if sep else lo
        if lo < 1 or hi < lo or hi > MAX_WORKERS:
            raise ConfigError(f"'{name}': {quoted(piece)} must be N or LO-HI with 1 <= LO <= HI <= {MAX_WORKERS} "
                              f"(got {quoted(text)})")
        again = next((n for n in range(lo, hi + 1) if n in out), None)
        if again is not None:
            pieces = "" if out[again] == piece else f" ({quoted(out[again])} and {quoted(piece)})"
            raise ConfigError(f"'{name}': {quoted(text)} lists N={again} twice{pieces}; give each N once")
        out.update(dict.fromkeys(range(lo, hi + 1), piece))
    return tuple(sorted(out))


def _count(digits: str) -> int:
    """ASCII ``digits`` as a number, or a number beyond any N for more than 18 after leading zeros: ``int`` refuses
    4300 digits and more with a ValueError, which was a traceback of ``--workers``."""
    significant = digits.lstrip("0")
    return int(significant or "0") if len(significant) <= 18 else 10**18


def format_workers(workers: Sequence[int]) -> str:
    """The inverse of :func:`parse_workers`: ``(1, 2, 3, 8)`` → ``1-3,8``."""
    runs: list[list[int]] = []
    for n in sorted(set(workers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in runs)
