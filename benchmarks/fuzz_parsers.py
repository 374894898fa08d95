"""Fuzz the trace readers with mutated real traces, each input in a child process with time and memory limits.

Run: ``python benchmarks/fuzz_parsers.py [N]`` (default 3000 inputs); ``--help`` lists the options. On two
cores 1,000 inputs take about 30 s (``--quick`` leaves out the few that take seconds each), so 100,000 take
40-60 minutes; the table's last column is the CPU time the children spent per input, by family.

Mutation families, reported separately:

- ``protobuf`` — structure-aware edits of the binary RunMetadata: huge varints and lengths written into fields
  (with the enclosing lengths fixed, or not), truncations and deletions at field boundaries, fields spliced in
  from other traces, wire types changed, and semantic edits through the protobuf API (times, sizes, labels,
  graph inputs, variable shapes, many records);
- ``text`` — text-format protobuf: deep nesting, bad escapes in strings, huge and malformed numbers, broken
  brackets, truncation;
- ``json`` — TensorFlow's timeline and our own Chrome JSON: type swaps, huge numbers, NaN and Infinity, lone
  surrogates, deep nesting, dropped keys, very many events;
- ``gzip`` — bombs (``--bomb-bytes``, 1 GiB by default, and just under the reader's limit), several members,
  trailing garbage, truncation, corruption, gzip inside gzip, thousands of members;
- ``bitflip`` — blind bit flips, byte edits and truncations of every seed.

Each input is made and run in a child forked by a worker process (``--jobs`` of them): the child writes the
input to a file, limits its address space (``--memory``, 2 GiB) and CPU time, and calls ``parsers.read_trace``;
on a Trace it also runs ``tracegen.model.build_model``, a two-worker ``simulate`` and ``steps_per_s`` (skip
with ``--no-model``). The worker kills a child that runs a stage for longer than ``--time-limit`` seconds.
Outcomes per stage: package errors (``TraceError``; on the model stage ``TracegenError`` too), results,
tracebacks (any other exception), hangs, memory blow-ups (MemoryError), crashes (killed by a signal), and on
the read stage error messages that are not one line of at most 300 characters naming the file.

Input ``k`` is of family ``k mod 5`` and made from ``numpy.random.default_rng([--seed, k, family])``, so a run
is the same however the work is scheduled, and ``--only K`` remakes input ``K`` alone. Inputs whose outcome is
a problem are kept in ``--repro`` (``fuzz_repro`` in the temp directory). Exits non-zero when any input had a
problem in any stage. ``--self-check`` shows that the harness tells each kind of problem apart.

The parts, each beside this file: ``fuzz_corpus.py`` (the seed files and gzip bombs), ``fuzz_protobuf.py`` (the
protobuf family), ``fuzz_mutations.py`` (the other families, and ``make_input``), ``fuzz_harness.py`` (the
children, the workers and the outcomes they tell apart); this file runs them and tallies the outcomes.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import pathlib
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # loaded by file name (as the tests do), not run: the parts beside it must import
    sys.path.append(str(HERE))  # last, so that nothing in benchmarks/ can hide an installed module

from fuzz_corpus import FAMILIES, Corpus, bomb, build_corpus  # noqa: E402 - found through HERE, put on the path above
from fuzz_harness import (  # noqa: E402 - found through HERE, put on the path above
    MODEL_OUTCOMES,
    PROBLEMS,
    READ_OUTCOMES,
    SELF_CHECKS,
    Limits,
    Pool,
    expected_outcome,
    pool,
    preload,
    self_check,
    serve,
)
from fuzz_mutations import make_input  # noqa: E402 - found through HERE, put on the path above

# What the tests (tests/parsers/conftest.py, test_fuzz.py) and other callers use, wherever it is defined.
__all__ = ["FAMILIES", "SELF_CHECKS", "Corpus", "Limits", "Pool", "Tally", "bomb", "build_corpus", "expected_outcome",
           "fuzz", "main", "make_input", "pool", "self_check", "table"]

ROOT = HERE.parent
REPROS_PER_KIND = 5

# --------------------------------------------------------------------------------------------- reporting


@dataclasses.dataclass
class Tally:
    """Outcomes by family and stage, and the inputs kept as reproducers."""

    read: dict[str, collections.Counter[str]] = dataclasses.field(
        default_factory=lambda: {f: collections.Counter() for f in FAMILIES})
    model: dict[str, collections.Counter[str]] = dataclasses.field(
        default_factory=lambda: {f: collections.Counter() for f in FAMILIES})
    problems: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    cpu_s: dict[str, float] = dataclasses.field(default_factory=lambda: dict.fromkeys(FAMILIES, 0.0))

    def add(self, result: dict[str, Any]) -> None:
        family = result["family"]
        self.cpu_s[family] += sum((result.get(stage) or {}).get("cpu_s", 0.0) for stage in ("read", "model"))
        read = result.get("read", {"outcome": "crash", "detail": "no result"})
        self.read[family][read["outcome"]] += 1
        model = result.get("model")
        if model is not None:
            self.model[family][model["outcome"]] += 1
        for stage, outcome in (("read", read), ("model", model)):
            if outcome is not None and outcome["outcome"] in PROBLEMS:
                self.problems.append({"stage": stage, **outcome, **{k: result.get(k) for k in
                                                                    ("k", "family", "input", "what", "size")}})

    def total(self, stage: str) -> collections.Counter[str]:
        counts: collections.Counter[str] = collections.Counter()
        for c in (self.read if stage == "read" else self.model).values():
            counts.update(c)
        return counts


def table(tally: Tally) -> str:
    """The per-family table and a final totals line."""
    lines = []
    head = (f"{'family':<9} | " + " ".join(f"{o:>9}" for o in READ_OUTCOMES) + " || model: "
            + " ".join(f"{o:>9}" for o in MODEL_OUTCOMES) + " || cpu ms/input")
    lines.append(head)
    lines.append("-" * len(head))
    for family in (*FAMILIES, "total"):
        read = tally.total("read") if family == "total" else tally.read[family]
        model = tally.total("model") if family == "total" else tally.model[family]
        cpu = sum(tally.cpu_s.values()) if family == "total" else tally.cpu_s[family]
        lines.append(f"{family:<9} | " + " ".join(f"{read[o]:>9}" for o in READ_OUTCOMES) + " ||        "
                     + " ".join(f"{model[o]:>9}" for o in MODEL_OUTCOMES)
                     + f" || {1000 * cpu / max(1, sum(read.values())):12.1f}")
    read, model = tally.total("read"), tally.total("model")
    bad_read = sum(read[o] for o in PROBLEMS)
    bad_model = sum(model[o] for o in PROBLEMS)
    lines.append(f"TOTAL inputs {sum(read.values())}: read stage {read['error']} package errors, {read['read']} "
                 f"read, {bad_read} problems ({read['traceback']} tracebacks, {read['hang']} hangs, "
                 f"{read['memory']} memory, {read['crash']} crashes, {read['bad message']} bad messages); model "
                 f"stage {model['ok']} ok, {model['error']} errors, {bad_model} problems ({model['traceback']} "
                 f"tracebacks, {model['hang']} hangs, {model['memory']} memory, {model['crash']} crashes, "
                 f"{model['odd']} odd)")
    return "\n".join(lines)


def keep_reproducers(tally: Tally, repro: pathlib.Path) -> list[str]:
    """Copy a few inputs of each kind of problem into ``repro``; lines describing them."""
    repro.mkdir(parents=True, exist_ok=True)
    kept: collections.Counter[tuple[str, str, str, str]] = collections.Counter()
    lines = []
    for p in sorted(tally.problems, key=lambda p: (p["stage"], p["family"], p["outcome"], p.get("size") or 0)):
        signature = (p["stage"], p["family"], p["outcome"], p["detail"].split(":")[0])
        kept[signature] += 1
        if kept[signature] > REPROS_PER_KIND or not p.get("input") or not pathlib.Path(p["input"]).exists():
            continue
        source = pathlib.Path(p["input"])
        kind = p["outcome"].replace(" ", "_")
        target = repro / f"{p['stage']}_{p['family']}_{kind}_{p['k']}{''.join(source.suffixes)}"
        shutil.copyfile(source, target)
        lines.append(f"  {target}  ({p['what']}): {p['detail'][:160]}")
    return lines


def fuzz(n: int, *, seed: int, jobs: int, limits: Limits, stages: tuple[str, ...], bomb_bytes: int,
         repro: pathlib.Path, only: int | None = None, quick: bool = False) -> Tally:
    """Run ``n`` inputs (or just input ``only``) round-robin over the families; the tally of outcomes."""
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="fuzz_parsers_") as tmp:
        corpus = build_corpus(pathlib.Path(tmp) / "corpus", bomb_bytes, quick=quick)
        work = pathlib.Path(tmp) / "inputs"
        work.mkdir()
        ks = [only] if only is not None else range(n)
        specs = ({"k": k, "family": FAMILIES[k % len(FAMILIES)], "seed": seed, "stages": list(stages)} for k in ks)
        with pool(corpus, work, limits, jobs, model="model" in stages) as p:
            for result in p.run(specs):
                tally.add(result)
                path = pathlib.Path(result.get("input", ""))
                problem = any(result.get(s, {}).get("outcome") in PROBLEMS for s in ("read", "model"))
                if problem or only is not None:
                    print(f"input {result['k']} ({result['family']}, {result.get('what')}): "
                          f"read {result.get('read')}, model {result.get('model')}", file=sys.stderr)
                if not problem and path.name:
                    path.unlink(missing_ok=True)
        kept = keep_reproducers(tally, repro) if tally.problems else []
    if kept:
        print(f"reproducers in {repro}:", *kept, sep="\n")
    return tally


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=3000, help="number of inputs (default 3000)")
    parser.add_argument("--seed", type=int, default=20261130, help="run seed: the same seed makes the same inputs")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes (default: CPUs)")
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per stage per input (default 10)")
    parser.add_argument("--memory", type=int, default=2 << 30, help="address-space limit in bytes (default 2 GiB)")
    parser.add_argument("--bomb-bytes", type=int, default=1 << 30,
                        help="what the big gzip bombs expand to, in bytes, whole MiB (default 1 GiB)")
    parser.add_argument("--no-model", action="store_true", help="only read; skip build_model and simulate")
    parser.add_argument("--quick", action="store_true",
                        help="leave out the edits that take seconds each (very many events or records)")
    parser.add_argument("--only", type=int, help="run just input K (as numbered in a run of this seed)")
    parser.add_argument("--repro", type=pathlib.Path, default=pathlib.Path(tempfile.gettempdir()) / "fuzz_repro",
                        help="where inputs with problems are kept (default: fuzz_repro in the temp directory)")
    parser.add_argument("--self-check", action="store_true",
                        help="check that the harness tells a traceback, a hang, a memory blow-up, a crash and a "
                             "bad message apart (readers that fail on purpose; takes --time-limit seconds)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=pathlib.Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=pathlib.Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    limits = Limits(time_s=args.time_limit, memory_bytes=args.memory)
    if args.serve:
        corpus = Corpus(args.corpus, quick=args.quick)
        preload(corpus, model=not args.no_model)
        serve(corpus, args.work, limits)
        return 0
    if args.self_check:
        with tempfile.TemporaryDirectory(prefix="fuzz_parsers_") as tmp, \
                pool(Corpus(pathlib.Path(tmp)), pathlib.Path(tmp), limits, 1, model=False) as p:
            seen = self_check(p)
        for family, outcome in seen.items():
            print(f"{family}: {outcome} ({'as expected' if outcome == expected_outcome(family) else 'WRONG'})")
        return 0 if all(outcome == expected_outcome(family) for family, outcome in seen.items()) else 1
    stages = ("read",) if args.no_model else ("read", "model")
    t0 = time.perf_counter()
    tally = fuzz(args.n, seed=args.seed, jobs=args.jobs, limits=limits, stages=stages, bomb_bytes=args.bomb_bytes,
                 repro=args.repro, only=args.only, quick=args.quick)
    print(f"inputs: {sum(tally.total('read').values())} in {time.perf_counter() - t0:.0f} s, seed {args.seed}, "
          f"{args.jobs} jobs, {limits.time_s:g} s and {limits.memory_bytes >> 20} MiB per child")
    print(table(tally))
    return 1 if tally.problems else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
