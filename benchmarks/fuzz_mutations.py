"""The text, JSON, gzip and bit-flip mutation families of ``fuzz_parsers.py`` (the protobuf one is in
``fuzz_protobuf.py``), and ``make_input``, which makes input ``k`` of any family.
"""

from __future__ import annotations

import gzip
import json
import pathlib
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from fuzz_corpus import FAMILIES, Corpus, Edit, Rng, pick, pick_seed
from fuzz_protobuf import mutate_protobuf

# ----------------------------------------------------------------------------------------------- text format

BAD_ESCAPES = (rb"\x", rb"\xZZ", rb"\u12", rb"\ud800", rb"\udc00", rb"\U00110000", rb"\777", rb"\q", b"\\",
               rb"\xed\xa0\x80", b"\xed\xa0\x80", b"\xff", b"\x00", b"\n", b"\\\n")
BAD_NUMBERS = (b"9223372036854775808", b"18446744073709551616", b"-9223372036854775809", b"1e400", b"9" * 50,
               b"0x" + b"f" * 20, b"inf", b"nan", b"-0", b"1.5", b"99999999999999999999999999999999",
               b"4611686018427387904")
NESTS = ((b"x {\n", b"}\n"), (b"dev_stats {\n", b"}\n"), (b"node_stats <\n", b">\n"), (b"step_stats {", b"}"))
_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
_NUMBER = re.compile(rb"(?<=: )-?[0-9]+")


def _random_match(pattern: re.Pattern[bytes], data: bytes, rng: Rng) -> re.Match[bytes] | None:
    start = int(rng.integers(len(data)))
    return pattern.search(data, start) or pattern.search(data)


def _line_start(data: bytes, rng: Rng) -> int:
    newline = data.find(b"\n", int(rng.integers(len(data))))
    return newline + 1 if newline >= 0 else 0


def text_nest(data: bytes, rng: Rng) -> Edit:
    at = _line_start(data, rng)
    opening, closing = pick(rng, NESTS)
    depth = int(pick(rng, (65, 200, 1000, 5000, 100_000)))
    close = closing * depth if rng.random() < 0.8 else b""
    return data[:at] + opening * depth + close + data[at:], f"nest {depth}"


def text_escape(data: bytes, rng: Rng) -> Edit:
    m = _random_match(_STRING, data, rng)
    bad = pick(rng, BAD_ESCAPES)
    pos = m.start() + 1 if m else _line_start(data, rng)
    return data[:pos] + bad + data[pos:], f"escape {bad!r}"


def text_number(data: bytes, rng: Rng) -> Edit:
    m = _random_match(_NUMBER, data, rng)
    bad = pick(rng, BAD_NUMBERS)
    if m is None:
        return data + b"all_start_micros: " + bad, f"number {bad!r}"
    return data[: m.start()] + bad + data[m.end() :], f"number {bad!r}"


def text_brace(data: bytes, rng: Rng) -> Edit:
    at = _line_start(data, rng)
    brace = pick(rng, (b"}", b"{", b">", b"<", b":", b"[", b"]"))
    return data[:at] + brace + data[at:], f"brace {brace!r}"


def text_truncate(data: bytes, rng: Rng) -> Edit:
    cut = int(rng.integers(len(data)))
    return data[:cut], f"truncate at {cut}"


def text_duplicate(data: bytes, rng: Rng) -> Edit:
    lo, hi = sorted((_line_start(data, rng), _line_start(data, rng)))
    return data[:hi] + data[lo:hi] + data[hi:], f"duplicate lines {lo}:{hi}"


TEXT_EDITS = (text_nest, text_escape, text_number, text_brace, text_truncate, text_duplicate)


def mutate_text(rng: Rng, corpus: Corpus) -> tuple[str, bytes, str]:
    seed = pick_seed(rng, corpus, corpus.names("text_"))
    edit: Callable[[bytes, Rng], Edit] = pick(rng, TEXT_EDITS)
    data, what = edit(corpus.read(seed), rng)
    return ".pbtxt", data, f"{seed}: {what}"


# ------------------------------------------------------------------------------------------------------ JSON

RAW = "@@raw@@"
JSON_VALUES: tuple[Any, ...] = ([], {}, [1], {"a": 1}, "x", "", None, True, False, 0, -1, 1.5, 2**31, 2**63,
                                2**64, 10**30, "\u2028", "\u00e9" * 3)
RAW_TOKENS = (b"NaN", b"Infinity", b"-Infinity", b"1e999999999", b"-1e999999999", b"1e-999999999", b"9" * 4000,
              b"9" * 5000, b'"\\ud800"', b'"\\udc00x"', b'"a\\ud83d"', b"-0", b"1E400", b"0.0000001",
              b"4611686018427387.904", b"4611686018427387.903")
NUMBER_TOKENS = RAW_TOKENS[:8] + RAW_TOKENS[11:]
EVENT_KEYS = ("pid", "tid", "ts", "dur", "ph", "name", "args", "cat", "id")
ARG_KEYS = ("name", "op", "input0", "input1", "step", "lane", "size_bytes", "tensor_name", "src_device",
            "dst_device", "direction", "node_name", "op_type")
TRACEGEN_KEYS = ("format_version", "source", "lost", "skipped", "tables", "cell", "columns")
SURROGATES = (rb"\ud800", rb"\udfff", rb"\ud83d", rb"\ud83d\ud83d", rb"\udc00\ud800")
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_JSON_NUMBER = re.compile(rb"(?<=[:\[,] )-?[0-9]+(?:\.[0-9]+)?|(?<=[:\[,])-?[0-9]+(?:\.[0-9]+)?")


def _swap_tracegen(doc: Any, rng: Rng, value: Any) -> str:
    """Put ``value`` in a field of the ``tracegen`` object of our own dialect; where it went."""
    extra = doc["tracegen"]
    target = pick(rng, TRACEGEN_KEYS)
    if target not in ("cell", "columns"):
        extra[target] = value
        return f"tracegen.{target}"
    name = pick(rng, sorted(extra["tables"]))
    table = extra["tables"][name]
    if target == "columns" or not table["rows"]:
        table["columns"] = value
        return f"tracegen.tables.{name}.columns"
    row = pick(rng, table["rows"])
    row[int(rng.integers(len(row)))] = value
    return f"tracegen.tables.{name} cell"


def _swap_event(doc: Any, rng: Rng, value: Any) -> str:
    """Put ``value`` under a key of a random event (or of its args); where it went."""
    events = doc["traceEvents"]
    i = int(rng.integers(len(events)))
    event = events[i]
    if rng.random() < 0.5 and isinstance(event.get("args"), dict):
        key = pick(rng, ARG_KEYS)
        event["args"][key] = value
        return f"traceEvents[{i}].args.{key}"
    key = pick(rng, EVENT_KEYS)
    event[key] = value
    return f"traceEvents[{i}].{key}"


def _swap(doc: Any, rng: Rng, value: Any) -> str:
    if "tracegen" in doc and rng.random() < 0.3:
        return _swap_tracegen(doc, rng, value)
    return _swap_event(doc, rng, value)


def json_swap(data: bytes, rng: Rng) -> Edit:
    """A value of another type in place of one of the trace's (RAW stands for a token json never writes)."""
    doc = json.loads(data)
    raw = pick(rng, RAW_TOKENS) if rng.random() < 0.4 else None
    value = RAW if raw is not None else pick(rng, JSON_VALUES)
    where = _swap(doc, rng, value)
    text = json.dumps(doc, ensure_ascii=bool(rng.random() < 0.5)).encode()
    if raw is not None:
        text = text.replace(json.dumps(RAW).encode(), raw, 1)
    return text, f"swap {where} = {(raw or repr(value))[:40]!r}"


def json_number(data: bytes, rng: Rng) -> Edit:
    m = _random_match(_JSON_NUMBER, data, rng)
    token = pick(rng, NUMBER_TOKENS)
    if m is None:
        return data, "no number"
    return data[: m.start()] + token + data[m.end() :], f"number {token[:20]!r}"


def json_surrogate(data: bytes, rng: Rng) -> Edit:
    m = _random_match(_JSON_STRING, data, rng)
    bad = pick(rng, SURROGATES)
    pos = (m.start() + 1) if m else 1
    return data[:pos] + bad + data[pos:], f"surrogate {bad!r}"


def json_deep(data: bytes, rng: Rng) -> Edit:
    doc = json.loads(data)
    depth = int(pick(rng, (65, 1000, 100_000, 1_000_000)))
    nest = b"[" * depth + b"]" * depth if rng.random() < 0.5 else b'{"a":' * depth + b"1" + b"}" * depth
    where = _swap(doc, rng, RAW)
    text = json.dumps(doc).encode()
    token = json.dumps(RAW).encode()
    if token not in text:  # the slot it went to was overwritten
        return nest, f"deep {depth} alone"
    return text.replace(token, nest, 1), f"deep {depth} at {where}"


def json_drop(data: bytes, rng: Rng) -> Edit:
    doc = json.loads(data)
    event = pick(rng, doc["traceEvents"])
    if event:
        del event[pick(rng, sorted(event))]
    if rng.random() < 0.3:
        doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("ph") != "M"]
    return json.dumps(doc).encode(), "drop"


def json_truncate(data: bytes, rng: Rng) -> Edit:
    cut = int(rng.integers(len(data)))
    return data[:cut], f"truncate at {cut}"


def json_many(data: bytes, rng: Rng, corpus: Corpus) -> Edit:
    """100,000 to 250,000 events (seconds to read each: one JSON input in 450 or so)."""
    if rng.random() >= 0.02 or corpus.quick:
        return json_swap(data, rng)
    doc = json.loads(data)
    events = doc["traceEvents"]
    complete = [json.dumps(e).encode() for e in events if e.get("ph") == "X"]
    others = [json.dumps(e).encode() for e in events if e.get("ph") != "X"]
    n = int(rng.integers(100_000, 250_001))
    body = b",\n".join(others + [complete[k % len(complete)] for k in range(n)])
    doc["traceEvents"] = []
    head = json.dumps(doc).encode()
    cut = head.index(b'"traceEvents": [') + len(b'"traceEvents": [')
    return head[:cut] + body + head[cut:], f"{n} events"


JSON_EDITS = (json_swap, json_swap, json_swap, json_number, json_surrogate, json_deep, json_drop, json_truncate,
              json_many)


def mutate_json(rng: Rng, corpus: Corpus) -> tuple[str, bytes, str]:
    seed = pick_seed(rng, corpus, corpus.names("tfjson_") + corpus.names("ownjson_") + corpus.names("viewer_"))
    edit = pick(rng, JSON_EDITS)
    data, what = json_many(corpus.read(seed), rng, corpus) if edit is json_many else edit(corpus.read(seed), rng)
    return ".json", data, f"{seed}: {what}"


# ------------------------------------------------------------------------------------------------------ gzip


def gzip_members(content: bytes, rng: Rng) -> Edit:
    cuts = sorted(int(c) for c in rng.integers(0, len(content) + 1, int(rng.integers(1, 5))))
    pieces = [content[a:b] for a, b in zip([0, *cuts], [*cuts, len(content)], strict=True)]
    return b"".join(gzip.compress(p, mtime=0) for p in pieces), f"{len(pieces)} members"


def gzip_trailing(content: bytes, rng: Rng) -> Edit:
    noise = bytes(rng.integers(0, 256, 100, dtype=np.uint8))
    tail = pick(rng, (b"\0" * 8, b"garbage", b"\x1f\x8b", b"\x1f", noise))
    return gzip.compress(content, mtime=0) + tail, f"trailing {tail[:8]!r}"


def gzip_truncate(content: bytes, rng: Rng) -> Edit:
    whole = gzip.compress(content, mtime=0)
    cut = int(rng.integers(1, len(whole)))
    return whole[:cut], f"gzip truncated at {cut}"


def gzip_corrupt(content: bytes, rng: Rng) -> Edit:
    buf = bytearray(gzip.compress(content, mtime=0))
    pos = pick(rng, (int(rng.integers(10, len(buf))), len(buf) - 8, len(buf) - 4, 3))
    buf[pos] ^= int(rng.integers(1, 256))
    return bytes(buf), f"gzip byte {pos} corrupted"


def gzip_nested(content: bytes, _rng: Rng) -> Edit:
    return gzip.compress(gzip.compress(content, mtime=0), mtime=0), "gzip in gzip"


def gzip_empty_members(content: bytes, rng: Rng) -> Edit:
    count = int(pick(rng, (100, 20_000)))
    return gzip.compress(b"", mtime=0) * count + gzip.compress(content, mtime=0), f"{count} empty members first"


GZIP_EDITS = (gzip_members, gzip_members, gzip_members, gzip_trailing, gzip_trailing, gzip_truncate, gzip_corrupt,
              gzip_nested, gzip_empty_members)


def mutate_gzip(rng: Rng, corpus: Corpus) -> tuple[str, bytes, str]:
    if rng.random() < 0.1:  # bombs: a third of a second each
        name = pick(rng, corpus.names("bomb_"))
        data = corpus.read(name)
        if rng.random() < 0.3:
            data += gzip.compress(corpus.read(pick(rng, corpus.names("tfjson_"))), mtime=0)
            return ".gz", data, f"{name} then a member"
        return ".gz", data, name
    seed = pick_seed(rng, corpus, corpus.names("pb_") + corpus.names("tfjson_") + corpus.names("ownjson_")
                     + corpus.names("text_"))
    edit: Callable[[bytes, Rng], Edit] = pick(rng, GZIP_EDITS)
    data, what = edit(corpus.read(seed), rng)
    return ".gz", data, f"{seed}: {what}"


# --------------------------------------------------------------------------------------------------- bitflip


def mutate(data: bytes, rng: Rng) -> bytes:
    """Up to four random bit flips, byte flips, truncations, deletions or insertions."""
    buf = bytearray(data)
    for _ in range(int(rng.integers(1, 5))):
        if not buf:
            break
        i = int(rng.integers(0, len(buf)))
        kind = int(rng.integers(0, 5))
        if kind == 0:
            buf[i] ^= 1 << int(rng.integers(0, 8))
        elif kind == 1:
            buf[i] ^= int(rng.integers(1, 256))
        elif kind == 2:
            del buf[i:]
        elif kind == 3:
            del buf[i : i + int(rng.integers(1, 64))]
        else:
            buf.insert(i, int(rng.integers(0, 256)))
    return bytes(buf)


def mutate_bitflip(rng: Rng, corpus: Corpus) -> tuple[str, bytes, str]:
    if rng.random() < 0.1:
        seed = pick_seed(rng, corpus, corpus.names("tfjson_"))
        data, suffix = gzip.compress(corpus.read(seed), mtime=0), ".json.gz"
    else:
        seed = pick_seed(rng, corpus, corpus.names("pb_") + corpus.names("tfjson_") + corpus.names("ownjson_")
                         + corpus.names("text_") + corpus.names("xplane_") + corpus.names("viewer_"))
        data, suffix = corpus.read(seed), "".join(pathlib.Path(seed).suffixes)
    return suffix, mutate(data, rng), f"{seed}: bit flips"


MUTATORS: dict[str, Callable[[Rng, Corpus], tuple[str, bytes, str]]] = {
    "protobuf": mutate_protobuf, "text": mutate_text, "json": mutate_json, "gzip": mutate_gzip,
    "bitflip": mutate_bitflip,
}


def make_input(family: str, seed: int, k: int, corpus: Corpus) -> tuple[str, bytes, str]:
    """Input ``k`` of ``family`` for run seed ``seed``: (file suffix, bytes, what was done)."""
    return MUTATORS[family](np.random.default_rng([seed, k, FAMILIES.index(family)]), corpus)
