"""Errors raised by the parsers package.

    TraceError                 base of everything this package raises on purpose
    ├── TraceFormatError       a file that is not a trace in any supported format, or is damaged
    │                          (names the path, the position and what was wrong)
    │   ├── ProfileError       (parsers.linkprofile) a link profile that is unreadable or breaks its schema
    │   └── CatalogueError     (parsers.catalogue) an instance catalogue that is unreadable or breaks its schema
    ├── TraceContentError      a well-formed file whose content cannot be a PS training trace
    │                          (no worker device, no ops, times that run backwards, ...)
    └── SchemaError            a table that does not match its documented column schema

Every message is one line of at most :data:`MAX_MESSAGE_CHARS` characters, whatever the input held: values are
quoted through :func:`quoted`, and the base class escapes line breaks and other unprintable characters and
shortens what is still too long, keeping the start (file and position) and the end (what was wrong).
"""

from __future__ import annotations

import reprlib
from typing import Any

MAX_MESSAGE_CHARS = 300
MAX_QUOTED_CHARS = 60
MIN_WORD_CHARS = 24  # one_line shortens a word no further than this, its ' ... ' included

_REPR = reprlib.Repr()
_REPR.maxlevel = 2
_REPR.maxstring = MAX_QUOTED_CHARS
_REPR.maxother = MAX_QUOTED_CHARS
_REPR.maxlong = 40


def quoted(value: Any, limit: int = MAX_QUOTED_CHARS) -> str:
    """``repr(value)`` for a message, at most ``limit`` characters however large or deep the value is."""
    text = _REPR.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def counted(n: int, noun: str, plural: str = "") -> str:
    """``n`` and ``noun``, plural where ``n`` is not 1 (``plural``, or ``noun`` + ``s``): ``1 transfer``, ``3 other
    variables``; output said '1 transfers' and '1 other variables'. Here, beside :func:`quoted`, so that the
    parsers' messages count as ``tracegen.units.counted`` does ('line 2: 1 cells, expected 4')."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def one_line(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` with line breaks and unprintable characters escaped, at most ``limit`` characters: the longest
    word (a value quoted whole, a path) shortened in its middle by what is too much, then the next longest, each
    to no less than :data:`MIN_WORD_CHARS` (the first word, the file and position, to no less than half the
    line), so that the start and the end (what was wrong) both survive; only then the middle of the whole. The
    command line cut the end: a 400-character path with a bad value at 'm.csv:3' lost the line and the rule."""
    safe = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in _bounded(text, limit))
    if len(safe) <= limit:
        return safe
    words = safe.split(" ")
    floors = [max(MIN_WORD_CHARS, limit // 2), *[MIN_WORD_CHARS] * (len(words) - 1)]
    total = len(safe)
    while total > limit:
        longer = [i for i, w in enumerate(words) if len(w) > floors[i]]
        if not longer:
            break
        i = max(longer, key=lambda k: len(words[k]))
        word = words[i]
        words[i] = _middle_cut(word, max(floors[i], len(word) - (total - limit)))
        total -= len(word) - len(words[i])
    safe = " ".join(words)
    if len(safe) <= limit:
        return safe
    keep_end = limit // 3
    return safe[: limit - keep_end - 5] + " ... " + safe[-keep_end:]


def _middle_cut(word: str, length: int) -> str:
    """``word`` shortened to ``length`` characters by an ellipsis in its middle."""
    keep = length - 5
    return f"{word[:keep // 2]} ... {word[len(word) - (keep - keep // 2):]}"


def _bounded(text: str, limit: int) -> str:
    """``text`` with no word over ``2 * limit`` characters and no more than ``8 * limit`` in all (the start and
    the end kept): what :func:`one_line` shortens, in time that does not grow with a megabyte of input."""
    if len(text) <= 2 * limit:
        return text
    words = [w if len(w) <= 2 * limit else f"{w[:limit]}...{w[-limit:]}" for w in text.split(" ")]  # one word still
    text = " ".join(words)
    return text if len(text) <= 8 * limit else f"{text[:4 * limit]} ... {text[-4 * limit:]}"


class TraceError(Exception):
    """Base class of the parsers package's errors; the message is made one bounded line."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(str(message)))


class TraceFormatError(TraceError):
    """A file that is not a readable trace: wrong format, truncated, corrupt or too large."""


class TraceContentError(TraceError):
    """A readable file whose content is not a usable parameter-server training trace."""


class SchemaError(TraceError):
    """A table whose columns or types differ from the documented schema."""
