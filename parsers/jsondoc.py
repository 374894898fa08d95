"""JSON documents read strictly: UTF-8 only, no NaN or Infinity, no lone surrogates, no key twice in one object,
bounded in size and depth.

Python's ``json`` accepts what JSON does not (``NaN``, ``Infinity``, UTF-16 and UTF-32 input), what text
cannot hold (``"\\ud800"``, a lone surrogate, which no encoder can write back) and an object with a key twice
(it keeps the last value; other readers keep the first, so the file means different things to different tools).
Every JSON this package reads goes through :func:`load_json`, which refuses those with the file and the position.
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from parsers.errors import TraceFormatError, quoted
from parsers.files import not_utf8_at
from parsers.limits import check_json_shape

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_BOM = "\ufeff"
# A string (skipped), or a token that json.loads may refuse after the fact: a constant, a number.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|(?P<constant>-?Infinity|NaN)|(?P<integer>-?\d+)(?:\.\d*)?(?:[eE][+-]?\d+)?')


class _TooLargeError(ValueError):
    """A number literal beyond a float's range (``1e400``), which ``float`` would make infinity."""

    def __init__(self, literal: str) -> None:
        super().__init__(f"number {literal} is too large (beyond a float's range)")
        self.literal = literal


def finite_float(literal: str) -> float:
    """A JSON number as a float, for ``load_json``'s ``parse_float``; one beyond a float's range is refused (with
    its position) rather than read as infinity, which a later check would quote as ``inf``, not as written."""
    value = float(literal)
    if math.isinf(value):
        raise _TooLargeError(literal)
    return value


def finite_decimal(literal: str) -> Decimal:
    """A JSON number as an exact Decimal (``load_json``'s default: a Chrome trace's microseconds with three
    decimals), refused beyond a float's range as :func:`finite_float` refuses it: no other reader of the file
    (a browser's, a viewer's) could hold it, and a later check would quote ``Decimal('1E+400')``."""
    finite_float(literal)
    return Decimal(literal)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_BROKEN_STRING = {"Unterminated string starting at": "a string that does not end",
                  "Invalid control character at": "a control character (a tab or a line end) inside a string"}


def load_json(data: bytes, source: str, *, parse_float: Callable[[str], Any] = finite_decimal,
              error: type[TraceFormatError] = TraceFormatError) -> Any:
    """Parse ``data`` as strict JSON; ``error`` names ``source`` and the line and column, byte or key path."""
    check_json_shape(data, source, error)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # the line too: a timeline holds a line per field, tens of megabytes of them
        line, at = not_utf8_at(data, exc)
        raise error(f"{source}: line {line}, byte {at}: JSON is not valid UTF-8") from None
    if not text.removeprefix(_BOM).strip():  # else json's "Expecting value" at 1:1, as if the content were wrong
        raise error(f"{source}: file is empty")  # white space alone too, as a trace file's reader says
    try:
        twice: list[tuple[dict[str, Any], str]] = []
        doc = json.loads(text.removeprefix(_BOM), parse_float=parse_float, parse_constant=_refuse_constant,
                         object_pairs_hook=functools.partial(_unique_keys, twice))
    except json.JSONDecodeError as exc:
        what = _BROKEN_STRING.get(exc.msg, exc.msg)  # Python's own ends in 'at', its position cut off for ours
        raise error(f"{source}:{exc.lineno}:{exc.colno}: invalid JSON: {what}") from None
    except RecursionError:
        raise error(f"{source}: JSON nested too deeply to be read") from None
    except _TooLargeError as exc:
        raise error(f"{source}{_where_refused(text.removeprefix(_BOM), exc.literal)}: {exc}") from None
    except ValueError as exc:  # NaN/Infinity, or an integer literal with more digits than Python converts
        why = str(exc).split("; use sys.set_int_max_str_digits()")[0]  # advice for a programmer, not a user
        raise error(f"{source}{_where_refused(text.removeprefix(_BOM))}: unreadable JSON value: {why}") from None
    if twice:
        obj, key = twice[0]
        raise error(f"{source}: {_path_of(doc, obj) or 'the top-level object'}: key {quoted(key)} appears twice; "
                    "refused, as readers differ on which value counts")
    if _SURROGATE_ESCAPE.search(data):
        _check_no_surrogates(doc, source, error)
    return doc


def _where_refused(text: str, literal: str | None = None) -> str:
    """``:line:column`` of the first NaN, Infinity or integer too long for Python outside a string in ``text``
    (with ``literal``: of that number), as :class:`json.JSONDecodeError` gives one (``parse_constant``, ``int``
    and ``parse_float`` are told no position); '' if none."""
    longest = sys.get_int_max_str_digits() or sys.maxsize  # 0: no limit
    for m in _TOKEN.finditer(text):
        if m[0] == literal if literal is not None else (
                m["constant"] or (m["integer"] and m[0] == m["integer"] and len(m[0].lstrip("-")) > longest)):
            line_start = text.rfind("\n", 0, m.start()) + 1
            return f":{text.count(chr(10), 0, m.start()) + 1}:{m.start() - line_start + 1}"
    return ""


def _unique_keys(twice: list[tuple[dict[str, Any], str]], pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's dict; when a key comes twice, the dict and the key are added to ``twice`` (the first only)."""
    obj = dict(pairs)
    if len(obj) < len(pairs) and not twice:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                twice.append((obj, key))
                break
            seen.add(key)
    return obj


def _path_of(doc: Any, target: dict[str, Any]) -> str:
    """The key path of the object ``target`` (by identity) in ``doc``; '' for ``doc`` itself."""
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        value, path = stack.pop()
        if value is target:
            return path
        if isinstance(value, dict):
            stack.extend((item, f"{path}.{key}" if path else key) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value))
    return ""


def _check_no_surrogates(doc: Any, source: str, error: type[TraceFormatError]) -> None:
    """Raise ``error`` at the first string (key or value) holding a lone surrogate, named by its key path."""
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise error(f"{source}: {path or 'the document'}: string {quoted(value)} holds a lone UTF-16 "
                            "surrogate, which is not text")
        elif isinstance(value, dict):
            for key, item in value.items():
                if _SURROGATE.search(key):
                    raise error(f"{source}: {path or 'the document'}: key {quoted(key)} holds a lone UTF-16 "
                                "surrogate, which is not text")
                stack.append((item, f"{path}.{key}" if path else key))
        elif isinstance(value, list):
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(value))
