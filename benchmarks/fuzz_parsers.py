"""Fuzz the trace readers with mutated real traces and print the figures: inputs tried, outcomes by kind.

Run: ``python benchmarks/fuzz_parsers.py [N]`` (default 3000 inputs). Exits non-zero if any input produced
anything but a Trace or one of the parsers package's own errors (a traceback, in the CLI's terms).
"""

from __future__ import annotations

import collections
import gzip
import pathlib
import sys
import tempfile
import time

import numpy as np

from parsers import TraceError, read_trace

TRACES = pathlib.Path(__file__).resolve().parents[1] / "data" / "traces"


def mutate(data: bytes, rng: np.random.Generator) -> bytes:
    """Up to four random byte flips, truncations, deletions or insertions."""
    buf = bytearray(data)
    for _ in range(int(rng.integers(1, 5))):
        if not buf:
            break
        i = int(rng.integers(0, len(buf)))
        kind = rng.integers(0, 4)
        if kind == 0:
            buf[i] ^= int(rng.integers(1, 256))
        elif kind == 1:
            del buf[i:]
        elif kind == 2:
            del buf[i : i + int(rng.integers(1, 64))]
        else:
            buf.insert(i, int(rng.integers(0, 256)))
    return bytes(buf)


def main(n: int) -> int:
    """Fuzz ``n`` inputs; print outcomes; return the number of unexpected exceptions."""
    seeds = {}
    for model in sorted(p.name for p in TRACES.iterdir() if p.is_dir()):
        seeds[f"{model}.pb"] = (TRACES / model / "step_000.pb").read_bytes()
        seeds[f"{model}.json"] = (TRACES / model / "step_000.json").read_bytes()
        seeds[f"{model}.json.gz"] = gzip.compress(seeds[f"{model}.json"], mtime=0)
    rng = np.random.default_rng(20261130)
    outcomes: collections.Counter[str] = collections.Counter()
    unexpected = 0
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        names = sorted(seeds)
        for k in range(n):
            name = names[k % len(names)]
            path = pathlib.Path(tmp) / f"in_{k}.{name.split('.', 1)[1]}"
            path.write_bytes(mutate(seeds[name], rng))
            try:
                read_trace(path)
                outcomes["read as a Trace"] += 1
            except TraceError as exc:
                outcomes[type(exc).__name__] += 1
            except Exception as exc:  # noqa: BLE001 - this is what the fuzzer looks for
                unexpected += 1
                outcomes[f"UNEXPECTED {type(exc).__name__}"] += 1
                print(f"unexpected {type(exc).__name__} on {name}: {exc}", file=sys.stderr)
            path.unlink()
    elapsed = time.perf_counter() - t0
    print(f"inputs tried: {n} (mutations of {len(seeds)} real traces) in {elapsed:.1f} s")
    for outcome, count in sorted(outcomes.items()):
        print(f"  {outcome}: {count}")
    print(f"tracebacks (exceptions other than TraceError): {unexpected}")
    return unexpected


if __name__ == "__main__":
    sys.exit(1 if main(int(sys.argv[1]) if len(sys.argv) > 1 else 3000) else 0)
