"""Input limits: what the readers refuse before they parse, so that no input can exhaust memory or time.

A real traced step is far inside every limit (the bundled resnet step: 0.36 MB of binary protobuf, 0.86 MB as
text, 0.29 MB of Chrome JSON, about 1,200 records, nested 8 deep). The limits sit orders of magnitude above
that, and low enough that the worst input within them parses in well under 2 GB of address space and a few
seconds. Each is checked on the bytes themselves, before a parser builds anything:

- size: ``MAX_BYTES`` read from a file or expanded from gzip (counting bytes read, never a reported size),
  and in total over the files of one directory; text-format protobuf, which parses at about 1 MB/s, at most
  ``MAX_TEXT_BYTES``;
- nesting: JSON arrays and objects, text-format and binary submessages at most ``MAX_NESTING`` deep (parsers
  recurse once per level);
- count: at most ``MAX_VALUES`` JSON values or protobuf (sub)messages and repeated entries in one input (each
  costs a parser 50 to 130 bytes however few bytes it took in the file); at most ``MAX_RECORDS`` records
  (events, ops, transfers, graph nodes and edges) in one trace; at most ``MAX_FILES`` files in a directory.
  Binary protobuf is walked in Python to count (about 6 MB/s), so only inputs over ``SCAN_BYTES`` are: below
  that, what the parser builds is bounded by the size alone.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from parsers.errors import TraceFormatError, quoted

MAX_BYTES = 64 << 20
MAX_TEXT_BYTES = 32 << 20
MAX_NESTING = 64
MAX_VALUES = 4_000_000
MAX_RECORDS = 200_000
MAX_FILES = 10_000
SCAN_BYTES = 4 << 20  # binary protobuf up to this size is parsed unwalked: the parser builds at most ~270 MB

_CHUNK = 1 << 20


def _steps(opens: bytes, closes: bytes) -> np.ndarray[Any, np.dtype[np.int8]]:
    table = np.zeros(256, np.int8)
    table[list(opens)] = 1
    table[list(closes)] = -1
    return table


_JSON_STEPS = _steps(b"[{", b"]}")
_TEXT_STEPS = _steps(b"{<", b"}>")
_TEXT_STEP_BYTES = _TEXT_STEPS.tobytes()


def _deepen(steps: np.ndarray[Any, Any], depth: int, limit: int) -> tuple[int, int | None]:
    """(the depth after brackets ``steps`` (1 opening, -1 closing, 0 no bracket) entered at ``depth``, the index of
    the first that takes it past ``limit`` or None)."""
    running = np.cumsum(steps, dtype=np.int64) + depth
    over = np.flatnonzero(running > limit)
    return (int(running[-1]) if running.size else depth), (int(over[0]) if over.size else None)


def _too_deep_at(bare: bytes, steps: np.ndarray[Any, np.dtype[np.int8]], limit: int) -> int | None:
    """Offset in ``bare`` where bracket nesting first exceeds ``limit``; None when it never does."""
    depth = 0
    for start in range(0, len(bare), _CHUNK):
        chunk = np.frombuffer(bare, np.uint8, count=min(_CHUNK, len(bare) - start), offset=start)
        depth, over = _deepen(steps[chunk], depth, limit)
        if over is not None:
            return start + over
    return None


def _brackets(data: bytes, steps: np.ndarray[Any, np.dtype[np.int8]]) -> bytes:
    """Only the bracket characters of ``data``, in order (fast: one C pass)."""
    return data.translate(None, bytes(np.flatnonzero(steps == 0).astype(np.uint8)))


_BACKSLASH = ord("\\")


def _escapes(piece: bytes, escaped: bool) -> tuple[bytes, np.ndarray[Any, Any], bool]:
    """(``piece``, the offsets in it of the bytes a backslash escapes, whether its last byte is a backslash that
    escapes the first of the next piece); ``escaped``: whether the last piece's did. Each run of backslashes escapes
    in pairs from its start: the pairs, which escape nothing else, are overwritten by ``__`` (keeping every offset),
    so that every backslash left escapes the byte after it."""
    if escaped and piece.startswith(b"\\"):
        piece = b"_" + piece[1:]
    if b"\\" not in piece:
        return piece, np.arange(int(escaped)), False
    piece = piece.replace(b"\\\\", b"__")
    after = np.flatnonzero(np.frombuffer(piece, np.uint8) == _BACKSLASH) + 1
    if escaped:
        after = np.concatenate(([0], after))
    ends = bool(after.size) and int(after[-1]) == len(piece)
    return piece, after[: after.size - ends], ends


# Fast path: brackets and commas counted on the raw bytes, strings included. For the counts this is an upper
# bound; for the depth it is exact unless strings hold brackets, which no trace TensorFlow writes holds (then
# the precise pass, :func:`_json_scan` or :func:`_text_scan`, runs when the raw count is over a limit, and the
# parser's own recursion limit stands behind a depth the raw count underestimates).


def check_json_shape(data: bytes, source: str, error: type[TraceFormatError] = TraceFormatError) -> None:
    """Refuse JSON nested deeper than ``MAX_NESTING`` or holding more than ``MAX_VALUES`` values."""
    if not _json_over(data):
        return
    values, deep_at = _json_scan(data)
    if values > MAX_VALUES:
        raise error(f"{source}: JSON holds about {values} values, more than the limit of {MAX_VALUES}")
    if deep_at is not None:
        raise error(f"{source}: byte {deep_at}: JSON nested more than {MAX_NESTING} deep")


def _json_over(data: bytes) -> bool:
    values = data.count(b"[") + data.count(b"{") + data.count(b",") + 1
    return values > MAX_VALUES or _too_deep_at(_brackets(data, _JSON_STEPS), _JSON_STEPS, MAX_NESTING) is not None


_QUOTE, _COMMA = ord('"'), ord(",")
_OPENS, _CLOSES = b"[{", b"]}"


def _json_scan(data: bytes) -> tuple[int, int | None]:
    """(values, offset where nesting first passes ``MAX_NESTING`` or None) of JSON ``data``, what its strings
    hold left out; exact up to the first syntax error, the furthest ``json`` reads.

    The bytes are scanned ``_CHUNK`` at a time, so that memory stays near 20 chunks whatever the size: once the
    escaped quotes (:func:`_escapes`) are left out, the quotes alternate between opening and closing a string.
    (Replacing every string by ``""`` with a regular expression, as this did before, built a piece per string:
    1.1 GB for a 32 MB trace of small events.)"""
    values, depth, deep_at = 1, 0, None
    in_string = escaped = False
    for start in range(0, len(data), _CHUNK):
        piece, escaped_at, escaped = _escapes(data[start : start + _CHUNK], escaped)
        chunk = np.frombuffer(piece, np.uint8)
        quotes = chunk == _QUOTE
        quotes[escaped_at] = False
        inside = np.bitwise_xor.accumulate(quotes)
        if in_string:
            np.logical_not(inside, out=inside)
        in_string = bool(inside[-1])
        outside = np.logical_not(inside, out=inside)
        opens = ((chunk == _OPENS[0]) | (chunk == _OPENS[1])) & outside
        closes = ((chunk == _CLOSES[0]) | (chunk == _CLOSES[1])) & outside
        values += int(np.count_nonzero(opens)) + int(np.count_nonzero((chunk == _COMMA) & outside))
        if deep_at is None:
            brackets = np.flatnonzero(opens | closes)
            depth, over = _deepen(opens[brackets].view(np.int8) * 2 - 1, depth, MAX_NESTING)
            deep_at = None if over is None else start + int(brackets[over])
    return values, deep_at


def check_text_shape(data: bytes, source: str) -> None:
    """Refuse text-format protobuf over ``MAX_TEXT_BYTES``, nested deeper than ``MAX_NESTING`` or holding
    more than ``MAX_VALUES`` messages."""
    if len(data) > MAX_TEXT_BYTES:
        raise TraceFormatError(f"{source}: text-format protobuf of {len(data)} bytes, more than the limit of "
                               f"{MAX_TEXT_BYTES} for text (it parses at ~1 MB/s): convert it to binary")
    raw = _brackets(data, _TEXT_STEPS)
    if (raw.count(b"{") + raw.count(b"<") <= MAX_VALUES
            and _too_deep_at(raw, _TEXT_STEPS, MAX_NESTING) is None):
        return
    messages, at = _text_scan(data)
    if messages > MAX_VALUES:
        raise TraceFormatError(f"{source}: text-format protobuf holds {messages} messages, more than the limit "
                               f"of {MAX_VALUES}")
    if at is not None:
        line = data.count(b"\n", 0, at) + 1
        column = at - (data.rfind(b"\n", 0, at) + 1) + 1
        raise TraceFormatError(f"{source}:{line}:{column}: text-format messages nested more than {MAX_NESTING} "
                               "deep")


# ------------------------------------------------------------------------------------ text-format lexing

# Where a byte of text-format protobuf stands, as protobuf's tokenizer reads it: in code, in a string in double or
# single quotes (which runs to its closing quote, or else to the end of its line), or in a comment (from ``#`` to
# the end of the line). Only six kinds of byte move from one state to another; for each, the state it leads to from
# each state. An escaped quote (after an odd run of backslashes, :func:`_escapes`) closes no string but opens one
# in code, where a backslash escapes nothing.
_CODE, _DOUBLE, _SINGLE, _COMMENT = range(4)
_MOVES = (
    (_CODE, _DOUBLE, _SINGLE, _COMMENT),      # any other byte
    (_DOUBLE, _CODE, _SINGLE, _COMMENT),      # "
    (_SINGLE, _DOUBLE, _CODE, _COMMENT),      # '
    (_COMMENT, _DOUBLE, _SINGLE, _COMMENT),   # #
    (_CODE, _CODE, _CODE, _CODE),             # newline
    (_DOUBLE, _DOUBLE, _SINGLE, _COMMENT),    # escaped "
    (_SINGLE, _DOUBLE, _SINGLE, _COMMENT),    # escaped '
)
_KIND_BYTES = bytes(b'"\'#\n'.find(byte) + 1 for byte in range(256))  # for bytes.translate, which is fast
_ESCAPED_KINDS = np.array([0, 5, 6, 3, 4], np.uint8)


def _automaton() -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """(``moves``: every function from state to state that a run of bytes can be, by number, as its row of next
    states; ``then``: the number of the run of ``a`` then ``b`` at [a, b]; ``kinds``: the number of each kind of
    byte's). A handful: 67 (the identity is 0)."""
    moves = [tuple(range(len(_MOVES[0])))]
    number = {moves[0]: 0}
    for move in moves:  # grows as it goes, to the closure under composition
        for kind in _MOVES:
            composed = tuple(kind[state] for state in move)
            if composed not in number:
                number[composed] = len(moves)
                moves.append(composed)
    then = np.array([[number[tuple(b[state] for state in a)] for b in moves] for a in moves], np.uint8)
    return np.array(moves, np.uint8), then, np.array([number[kind] for kind in _MOVES], np.uint8)


_RUN_MOVES, _THEN, _KIND_MOVES = _automaton()
_BLOCK = 16


def _runs(moves: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Element i: the move of ``moves[0]`` then ... then ``moves[i]`` (numbers of :func:`_automaton`): a prefix
    scan, each doubling within blocks of ``_BLOCK``, then the blocks' own runs (by the same scan) put before."""
    rows = -(-len(moves) // _BLOCK)
    flat = np.zeros(rows * _BLOCK, np.uint8)
    flat[: len(moves)] = moves
    grid = flat.reshape(rows, _BLOCK)
    shift = 1
    while shift < _BLOCK:
        grid[:, shift:] = _THEN[grid[:, :-shift], grid[:, shift:]]
        shift *= 2
    if rows > 1:
        grid[1:] = _THEN[_runs(grid[:-1, -1])[:, None], grid[1:]]
    return flat[: len(moves)]


def _text_scan(data: bytes) -> tuple[int, int | None]:
    """(messages, offset where nesting first passes ``MAX_NESTING`` or None) of text-format ``data``, what its
    strings and comments hold left out, for any bytes. In each ``_CHUNK``, the bytes that move the lexer
    (:data:`_MOVES`) are found; the state before each is the state the chunk starts in moved by the run of those
    before it (:func:`_runs`), and a bracket counts where that is code. Memory stays near 20 chunks. (Replacing
    each string and comment with a regular expression, as this did before, built a piece per string, twice: 376 MiB
    for a 31 MiB step of small nodes refused for its depth.)"""
    messages, depth, deep_at = 0, 0, None
    state, escaped = _CODE, False
    for start in range(0, len(data), _CHUNK):
        piece, escaped_at, escaped = _escapes(data[start : start + _CHUNK], escaped)
        kinds = np.frombuffer(piece.translate(_KIND_BYTES), np.uint8)
        if escaped_at.size:
            kinds = kinds.copy()
            kinds[escaped_at] = _ESCAPED_KINDS[kinds[escaped_at]]
        movers = np.flatnonzero(kinds)
        states = np.empty(movers.size + 1, np.uint8)
        states[0] = state
        states[1:] = _RUN_MOVES[_runs(_KIND_MOVES[kinds[movers]]), state]
        state = int(states[-1])
        steps = np.frombuffer(piece.translate(_TEXT_STEP_BYTES), np.int8)
        brackets = np.flatnonzero(steps)
        brackets = brackets[states[np.searchsorted(movers, brackets)] == _CODE]
        steps = steps[brackets]
        messages += int(np.count_nonzero(steps > 0))
        if deep_at is None:
            depth, over = _deepen(steps, depth, MAX_NESTING)
            deep_at = None if over is None else start + int(brackets[over])
    return messages, deep_at


# ------------------------------------------------------------------------------------ binary protobuf

# Per message type, field number → the plan of its message type (a nested message) or None (a repeated
# non-message field). Singular scalars are not listed: parsing them allocates nothing.
_Plan = Mapping[int, Any]


@functools.cache
def _plan(descriptor: Any) -> _Plan:
    plan: dict[int, Any] = {}
    for field in descriptor.fields:
        if field.message_type is not None:
            plan[field.number] = field.message_type
        elif field.is_repeated:
            plan[field.number] = None
    return plan


def _fail(source: str, at: int, what: str) -> TraceFormatError:
    return TraceFormatError(f"{source}: byte {at}: {what}")


def _varint(data: bytes, pos: int, end: int, source: str) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    value = shift = 0
    start = pos
    while pos < end:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7
        if shift >= 70:
            raise _fail(source, start, "varint longer than 10 bytes")
    raise _fail(source, start, "varint runs past the end of its message")


def _delimited(data: bytes, start: int, end: int, source: str) -> Iterator[tuple[int, int, int, int]]:
    """Walk the fields of the message in ``data[start:end]``; yield each length-delimited one as (its offset,
    field number, payload start, payload end); TraceFormatError at the first field that breaks the format."""
    pos = start
    while pos < end:
        at = pos
        key = data[pos]
        pos += 1
        if key >= 0x80:
            key, pos = _varint(data, at, end, source)
        number, kind = key >> 3, key & 7
        if number == 0:
            raise _fail(source, at, "field number 0")
        if kind == 2:
            length, pos = _varint(data, pos, end, source)
            if length > end - pos:  # a step's own first fields (step_stats 1, ... function_graphs 4) that run past
                # the end of the file are a step cut short far likelier than bytes of something else
                whole_file = start == 0 and end == len(data)
                cut = "; the file ends first: cut short?" if whole_file and 1 <= number <= 4 else ""
                raise _fail(source, at, f"field {number} has length {length}, more than the {end - pos} bytes "
                                        f"left in its message{cut}")
            yield at, number, pos, pos + length
            pos += length
        elif kind == 0:
            _, pos = _varint(data, pos, end, source)
        elif kind in (1, 5):
            pos += 8 if kind == 1 else 4
            if pos > end:
                raise _fail(source, at, f"field {number} runs past the end of its message")
        else:
            raise _fail(source, at, f"field {number} has wire type {kind}, which TensorFlow's traces do not use")


@functools.cache
def _text_plan(descriptor: Any) -> Mapping[int, tuple[str, Any]]:
    """Field number -> (name, message descriptor, or None for a string field) of the fields that hold text."""
    return {field.number: (field.name, field.message_type) for field in descriptor.fields
            if field.message_type is not None or field.type == field.TYPE_STRING}


def check_wire_text(data: bytes, descriptor: Any, source: str) -> None:
    """Raise TraceFormatError at the byte where a string field of message ``descriptor`` in ``data`` stops being
    UTF-8, naming the field: protobuf's parser says only 'string field had bad UTF-8'. Call it on data that
    :func:`check_wire_shape` passed (its nesting is then bounded)."""
    stack: list[tuple[int, int, Any]] = [(0, len(data), descriptor)]
    while stack:
        start, end, message = stack.pop()
        plan = _text_plan(message)
        for _at, number, payload, stop in _delimited(data, start, end, source):
            if number not in plan:
                continue
            name, sub = plan[number]
            if sub is not None:
                stack.append((payload, stop, sub))
                continue
            try:
                data[payload:stop].decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _fail(source, payload + exc.start, f"string field {name!r} (field {number} of "
                                                         f"{message.name}) is not UTF-8: "
                                                         f"{quoted(data[payload:stop], 60)}") from None


def check_wire_shape(data: bytes, descriptor: Any, source: str) -> None:
    """Walk ``data`` as protobuf message ``descriptor`` without building it: refuse broken wire structure
    (with its byte offset), nesting deeper than ``MAX_NESTING`` and more than ``MAX_VALUES`` messages and
    repeated entries. Pure Python (about 6 MB/s): worth it only for inputs too large to parse blindly."""
    stack: list[tuple[int, int, _Plan, int]] = [(0, len(data), _plan(descriptor), 0)]
    values = 0
    while stack:
        start, end, plan, depth = stack.pop()
        for at, number, payload, stop in _delimited(data, start, end, source):
            if number not in plan:
                continue
            values += 1
            sub = plan[number]
            if sub is not None:
                if depth >= MAX_NESTING:
                    raise _fail(source, at, f"messages nested more than {MAX_NESTING} deep")
                stack.append((payload, stop, _plan(sub), depth + 1))
        if values > MAX_VALUES:
            raise _fail(source, start, f"more than {MAX_VALUES} protobuf messages and repeated values")
