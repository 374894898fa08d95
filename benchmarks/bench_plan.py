"""What a buyer waits for: ``tracegen plan`` with the CLI's defaults on a bundled trace and the example catalogue.

Runs ``tracegen plan data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace --catalogue
data/catalogue/example.csv --out TMP`` as a user would (through :func:`tracegen.cli.main`, in this process, its
own output silenced), once with ``--jobs 1``, once with the defaults (``--jobs``: the CPUs, used only when the
pairs would take :data:`tracegen.processes.PARALLEL_S` on one core), and once in that many processes whatever the
estimate (the threshold set to 0 here), and prints the wall seconds of each, start-up and reading included. The
issue's target: under 10 s on one core.

Run: ``python benchmarks/bench_plan.py [TRACE] [CATALOGUE]``.
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
TRACE = ROOT / "data" / "validation" / "dev" / "mlp_500mbit_q100_b128k_ps03" / "trace"
CATALOGUE = ROOT / "data" / "catalogue" / "example.csv"


def main(argv: list[str]) -> None:
    """Run the benchmark and print its figures: on one core (the issue's target), with the CLI's defaults and in as
    many processes as this machine has CPUs (module docstring)."""
    trace = argv[0] if argv else str(TRACE)
    catalogue = argv[1] if len(argv) > 1 else str(CATALOGUE)
    start = time.perf_counter()
    from tracegen import processes
    from tracegen.cli import main as tracegen
    from tracegen.native import engine
    from tracegen.processes import available_cpus

    imported = time.perf_counter() - start
    print(f"engine: {engine()}")
    threshold, cpus = processes.PARALLEL_S, available_cpus()
    for label, extra, parallel_s in (("one core (--jobs 1)", ["--jobs", "1"], threshold),
                                     (f"CLI defaults (--jobs {cpus} here)", [], threshold),
                                     (f"{cpus} processes whatever the estimate", [], 0.0)):
        processes.PARALLEL_S = parallel_s
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(said := io.StringIO()):
            code = tracegen(["plan", trace, "--catalogue", catalogue, *extra, "--out", tmp])
        wall = time.perf_counter() - start + imported
        processes.PARALLEL_S = threshold
        where = next((line.split(" in ")[-1].split(" (")[0] for line in said.getvalue().splitlines()
                      if " pairs in " in line), "one process")
        if code:
            raise SystemExit(f"tracegen plan failed (exit code {code})")
        print(f"tracegen plan {pathlib.Path(trace).parent.name} x {pathlib.Path(catalogue).name}, {label}: "
              f"{wall:.2f} s in {where} (start-up {imported:.2f} s included; target 10 s on one core)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
