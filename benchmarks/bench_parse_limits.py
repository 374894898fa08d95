"""Memory and time of refusing oversized JSON and text-format protobuf, and time to read the bundled JSON traces (a
benchmark, not a test).

Each oversized input is written to a temporary directory and read by ``parsers.read_trace`` in a child process of
its own, which reports its peak resident memory (``VmHWM``) and how much of it came after the import, its wall
time and the one line it was refused with:

- ``numbers``: a 32 MiB JSON list of 7-digit integers, about 4.2 million values (over ``MAX_VALUES``);
- ``numbers-under``: the same with 3.9 million values, within ``MAX_VALUES`` (not a Chrome trace);
- ``events``: a 32 MiB Chrome trace of small events, about 4.2 million values;
- ``events-under``: a 32 MiB Chrome trace of 500,000 events, within ``MAX_VALUES``, over ``MAX_RECORDS``;
- ``gzip-events``: a gzipped Chrome trace that expands to ``MAX_BYTES`` exactly (over ``MAX_VALUES``);
- ``gzip-long-names``: the same with long event names, within ``MAX_VALUES``, over ``MAX_RECORDS``;
- ``deep``: 32 MiB of ``[``;
- ``brackets-in-strings``: a 32 MiB list of strings full of ``[`` and ``,`` (the raw count is over the limits,
  the values are not; refused as not a Chrome trace);
- ``text-small``: a 32 MB text-format StepStats of a million ``node_stats { node_name: "x" }``, one a line, ending
  in messages nested 65 deep (the shape check reads it all to find where);
- ``text-comments``: the same with a ``#`` comment holding quotes and a brace before every node;
- ``text-limit``: the same on one line, as ``MessageToString(as_one_line=True)`` writes, of ``MAX_TEXT_BYTES``;
- ``text-brackets-in-strings``: ``MAX_TEXT_BYTES`` of text whose one string is full of ``{`` (the raw count is over
  the limit, the messages are not; refused by the parser at its second ``device``).

Then the bundled JSON traces (``data/traces/*/*.json*``, the trace-viewer profile) are read in this process: the
best of ``--repeat`` reads of each.

Run: ``python benchmarks/bench_parse_limits.py [--only NAME ...] [--repeat 20]``.

Figures on 2026-12-05 on this repository's 2-core machine, before -> after (peak resident memory of the child,
of which Python with the parsers imported is 111 MiB; wall time of the read). JSON, when its scan was made chunked:

========================  ==================  ==============
case                      peak MiB            time s
========================  ==================  ==============
numbers                   175 -> 150          0.18 -> 0.14
numbers-under             320 -> 321          0.41 -> 0.38
events                    1099 -> 151         1.05 -> 0.15
events-under              372 -> 344          0.81 -> 0.80
gzip-events               2030 -> 183         3.17 -> 0.33
gzip-long-names           403 -> 401          0.82 -> 0.76
deep                      175 -> 175          0.16 -> 0.27
brackets-in-strings       228 -> 229          0.32 -> 0.23
========================  ==================  ==============

Text format, before -> after its scan was made chunked too (no bundled trace is text format):

========================  ==================  ==============
case                      peak MiB            time s
========================  ==================  ==============
text-small                487 -> 160          1.27 -> 0.33
text-comments             534 -> 162          1.19 -> 0.53
text-limit                524 -> 163          1.31 -> 0.32
text-brackets-in-strings  335 -> 338          0.71 -> 0.86
========================  ==================  ==============

The last is let through by the check and refused by the parser, which costs most of it; its scan takes 0.13 s
where the regular expression took one match. The JSON cases and bundled traces measured the same again.

The bundled traces read in the same time before and after (best of 30: mlp 14.0, cnn 14.3-14.6, resnet 19.7-19.8,
the trace-viewer profile 45 ms). The cases refused after parsing (``-under``, ``long-names``) cost what parsing
that much JSON costs: the shape check lets through up to ``MAX_VALUES`` values.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from parsers import read_trace
from parsers.limits import MAX_BYTES, MAX_NESTING, MAX_TEXT_BYTES

ROOT = pathlib.Path(__file__).resolve().parents[1]

MIB = 1 << 20


def _numbers(count: int) -> bytes:
    return b"[" + b",".join(b"%07d" % (1_000_000 + i % 9_000_000) for i in range(count)) + b"]"


def _events(count: int, name: bytes = b"a") -> bytes:
    events = b",".join(b'{"ph":"X","ts":%d,"dur":1,"pid":1,"tid":1,"name":"%s"}' % (i, name) for i in range(count))
    return b'{"traceEvents":[' + events + b"]}"


def _fill(make: Callable[[int], bytes], size: int) -> bytes:
    """``make(n)`` with the largest n whose output fits in ``size`` bytes, padded with spaces to ``size``."""
    per = len(make(1000)) / 1000
    n = int(size / per)
    while len(data := make(n)) > size:
        n -= max(1, (len(data) - size) // int(per) + 1)
    return data + b" " * (size - len(data))


def _strings(size: int) -> bytes:
    item = b'"' + b"[,{" * 30 + b'"'
    n = (size - 2) // (len(item) + 1)
    return b"[" + b",".join([item] * n) + b"]"


def _text(size: int, node: bytes, *, one_line: bool = False) -> bytes:
    """A text-format StepStats of ``size`` bytes: one device whose nodes are ``node`` over and over, ending in
    messages nested ``MAX_NESTING + 1`` deep, so that the shape check reads it all and refuses it."""
    end = b"x { " * (MAX_NESTING + 1) + b"} " * (MAX_NESTING + 2)
    head = b'dev_stats { device: "/job:worker/replica:0/task:0/device:CPU:0"' + (b" " if one_line else b"\n")
    if not one_line:
        node, end = b"  " + node + b"\n", end + b"\n"
    n = (size - len(head) - len(end)) // len(node)
    return (head + node * n + end).ljust(size)


CASES: dict[str, Callable[[], bytes]] = {
    "numbers": lambda: _fill(_numbers, 32 * MIB),
    "numbers-under": lambda: _numbers(3_900_000),
    "events": lambda: _fill(_events, 32 * MIB),
    "events-under": lambda: _fill(lambda n: _events(n, b"x" * ((32 * MIB // 500_000) - 52)), 32 * MIB),
    "gzip-events": lambda: gzip.compress(_fill(_events, MAX_BYTES), 6),
    "gzip-long-names": lambda: gzip.compress(_fill(lambda n: _events(n, b"y" * 150), MAX_BYTES), 6),
    "deep": lambda: b"[" * (32 * MIB),
    "brackets-in-strings": lambda: _strings(32 * MIB),
    "text-small": lambda: _text(32_000_000, b'node_stats { node_name: "x" }'),
    "text-comments": lambda: _text(32_000_000, b"# it's a \"node\" {\n  node_stats { node_name: 'x' }"),
    "text-limit": lambda: _text(MAX_TEXT_BYTES, b'node_stats { node_name: "x" } ', one_line=True),
    "text-brackets-in-strings": lambda: b'dev_stats { device: "' + b"{" * (MAX_TEXT_BYTES - 40) + b'" device: "" }',
}

# The peak is VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec, so a child would report its parent's peak.
CHILD = """
import json, re, sys, time
from parsers import read_trace
from parsers.errors import TraceError
def hwm_kib():
    with open("/proc/self/status") as status:
        return int(re.search(r"VmHWM:\\s*(\\d+)", status.read())[1])
base = hwm_kib()
start = time.perf_counter()
try:
    read_trace(sys.argv[1])
    outcome = "read"
except TraceError as exc:
    outcome = str(exc)
wall = time.perf_counter() - start
peak = hwm_kib()
print(json.dumps({"outcome": outcome, "wall_s": wall, "base_kib": base, "peak_kib": peak}))
"""


def run_case(name: str, folder: pathlib.Path) -> None:
    """Write case ``name`` into ``folder``, read it in a child, print one row."""
    data = CASES[name]()
    suffix = ".json.gz" if name.startswith("gzip") else ".pbtxt" if name.startswith("text") else ".json"
    path = folder / f"{name}{suffix}"
    path.write_bytes(data)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, env=env,
                          check=False)
    path.unlink()
    if done.returncode != 0:
        print(f"{name:24} child failed ({done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
        return
    got = json.loads(done.stdout.strip().splitlines()[-1])
    extra_mib = (got["peak_kib"] - got["base_kib"]) / 1024
    outcome = got["outcome"].replace(str(folder) + os.sep, "")
    print(f"{name:24} {len(data) / MIB:6.1f} MiB  peak {got['peak_kib'] / 1024:7.1f} MiB (+{extra_mib:7.1f})  "
          f"{got['wall_s']:6.2f} s  {outcome[:110]}")


def bundled(repeat: int) -> None:
    """Best-of-``repeat`` time to read each bundled JSON trace."""
    paths = sorted(ROOT.glob("data/traces/*/step_*.json"))  # a trace-viewer profile is read by its run directory
    paths += sorted({p.parent for p in ROOT.glob("data/traces/*/plugins/profile/*/*.trace.json.gz")})
    for path in paths:
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            read_trace(path)
            best = min(best, time.perf_counter() - start)
        print(f"{path.relative_to(ROOT)!s:72} {best * 1000:8.2f} ms")


def main() -> None:
    """Run the cases asked for, then time the bundled traces."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(CASES), help="run only these cases")
    parser.add_argument("--repeat", type=int, default=20, help="reads of each bundled trace; the best counts")
    parser.add_argument("--no-bundled", action="store_true", help="leave out the bundled traces")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench_parse_limits") as tmp:
        for name in args.only or CASES:
            run_case(name, pathlib.Path(tmp))
    if not args.no_bundled:
        bundled(args.repeat)


if __name__ == "__main__":
    main()
