"""A 1,000-point sweep through a local Ray instance, killed half-way and resumed.

The grid: the bundled MLP trace (``data/traces/mlp``), N = 1..50, policies tf and tictac, seeds 0..9, each point
with the sweep's default steps (10 measured after 2 warm-up), as a user's sweep would run them. The first run
(``tracegen sweep ... --ray local --jobs J``, a process of its own in a session of its
own) is killed with SIGKILL, with every process it started, once half the points are in the dataset; the same
command is then run again. It prints each run's points per second (wall time from the command's start, Ray's
start-up included) and the resume check: the second run computed exactly the points the first left, and the
dataset holds every point once.

Run: ``python benchmarks/bench_sweep.py [JOBS]`` (default 2). Needs the ``sweep`` extra (Ray).
"""

from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
TRACE = ROOT / "data" / "traces" / "mlp"
GRID = [str(TRACE), "--workers", "1-50", "--policy", "tf,tictac", "--seeds", "10", "--part-points", "25"]
TOTAL = 50 * 2 * 10
EXE = pathlib.Path(sys.executable).parent / "tracegen"


def _rows(out: pathlib.Path) -> int:
    from parsers.sweepdata import read_point_ids

    return len(read_point_ids(out))


def main(argv: list[str]) -> None:
    """Run the benchmark and print its figures."""
    from parsers.sweepdata import read_rows

    jobs = argv[0] if argv else "2"
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}  # a throw-away local instance
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        out = pathlib.Path(tmp) / "sweep"
        cmd = [str(EXE), "sweep", *GRID, "--ray", "local", "--jobs", jobs, "--out", str(out)]
        start = time.perf_counter()
        first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                 start_new_session=True)
        while first.poll() is None and _rows(out) < TOTAL // 2:
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)  # the driver and the Ray instance it started
        first.wait()
        first_s = time.perf_counter() - start
        left = _rows(out)
        start = time.perf_counter()
        second = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        second_s = time.perf_counter() - start
        if second.returncode:
            raise SystemExit(f"the resumed sweep failed: {second.stderr[-500:]}")
        found = re.search(r"computed (\d+) points, (\d+) were already in", second.stdout)
        if found is None:
            raise SystemExit(f"no summary line in: {second.stdout[-500:]}")
        computed, resumed = int(found[1]), int(found[2])
        ids = read_rows(out).point_id
        with_leftovers = subprocess.run(["pgrep", "-s", str(first.pid)], capture_output=True, check=False).stdout
    print(f"sweep of {TOTAL} points (mlp trace, N 1-50 x 2 policies x 10 seeds, default steps), local Ray, {jobs} CPUs")
    print(f"run 1, killed (SIGKILL) at {left} points in the dataset: {first_s:.1f} s, {left / first_s:.1f} points/s")
    print(f"run 2, resumed: computed {computed}, found {resumed} finished: {second_s:.1f} s, "
          f"{computed / second_s:.1f} points/s")
    ok = resumed == left and computed == TOTAL - left and len(ids) == TOTAL and ids.is_unique
    print(f"resume check: {'ok' if ok else 'FAILED'} (no point computed twice: {resumed} == {left} and "
          f"{computed} == {TOTAL} - {left}; {len(ids)} rows, ids unique: {ids.is_unique}); processes of the killed "
          f"run left: {len(with_leftovers.split())}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
