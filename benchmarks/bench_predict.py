"""What a user waits for: ``tracegen predict`` with its defaults on every bundled campaign trace (a benchmark).

For each ``data/validation/{dev,test}/*/trace`` (its link profile and single-worker measurement beside it, as
the CLI picks them up): the CLI's defaults — every N from 1 to 16, 3 warm-up and 30 measured steps per worker,
3 seeds, the plateau searched past 16 when the bound says it lies beyond — through
:func:`tracegen.predict.predict`, writing its files into a temporary directory. Prints per trace the wall time,
the simulated events and events per second, and the total.

Run: ``python benchmarks/bench_predict.py``.
"""

from __future__ import annotations

import pathlib
import tempfile
import time

from parsers.linkprofile import read_link_profile
from parsers.singleworker import read_single_worker
from tracegen.config import PredictConfig
from tracegen.inputs import profile_beside, single_worker_beside
from tracegen.outputs import OutputDir
from tracegen.predict import predict

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> None:
    """Run the benchmark and print its figures."""
    total_s, total_events = 0.0, 0
    print("| trace | tasks | wall s | events | events/s |")
    print("|---|---|---|---|---|")
    for trace in sorted((ROOT / "data" / "validation").glob("*/*/trace")):
        profile, single = profile_beside(trace), single_worker_beside(trace)
        config = PredictConfig(link_profile=read_link_profile(profile) if profile else None,
                               single_worker=read_single_worker(single) if single else None)
        with tempfile.TemporaryDirectory() as tmp, OutputDir(tmp, ["curve.csv", "curve.png"], force=True) as out:
            start = time.perf_counter()
            result = predict(trace, config, out)
            wall = time.perf_counter() - start
        events = result.curve.n_events
        total_s, total_events = total_s + wall, total_events + events
        print(f"| {trace.parent.parent.name}/{trace.parent.name} | {result.model.n_tasks} | {wall:.1f} | {events:,} | "
              f"{events / wall:,.0f} |")
    print(f"total: {total_s:.1f} s, {total_events:,} events, {total_events / total_s:,.0f} events/s")


if __name__ == "__main__":
    main()
