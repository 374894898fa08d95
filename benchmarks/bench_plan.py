"""What a buyer waits for: ``tracegen plan`` with the CLI's defaults on a bundled trace and the example catalogue.

Runs ``tracegen plan data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace --catalogue
data/catalogue/example.csv --out TMP`` as a user would (through :func:`tracegen.cli.main`, in this process, its
own output silenced), and prints the wall seconds, start-up and reading included. The issue's target: under
10 s on one core.

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
    """Run the benchmark and print its figure."""
    trace = argv[0] if argv else str(TRACE)
    catalogue = argv[1] if len(argv) > 1 else str(CATALOGUE)
    start = time.perf_counter()
    from tracegen.cli import main as tracegen

    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        code = tracegen(["plan", trace, "--catalogue", catalogue, "--out", tmp])
    wall = time.perf_counter() - start
    if code:
        raise SystemExit(f"tracegen plan failed (exit code {code})")
    print(f"tracegen plan {pathlib.Path(trace).parent.name} x {pathlib.Path(catalogue).name}, CLI defaults: "
          f"{wall:.2f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
