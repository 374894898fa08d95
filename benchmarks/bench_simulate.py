"""Speed of the simulator on a ResNet-50-sized step (a benchmark, not a test).

Prints: wall time of a 1..64-worker curve (N = 1, 2, 4, ..., 64, one seed, 5 steps per worker), events per
second, and time and peak memory of one 1000-worker point (3 steps per worker), plus the time to stream a
16-worker synthetic trace. Targets: curve <= 5 s, 1000-worker point <= 60 s and <= 2 GB.

These are stress shapes of the engine, not what a user runs; ``benchmarks/bench_predict.py`` times ``predict``
with the CLI's defaults on every bundled campaign trace.

Run: ``python benchmarks/bench_simulate.py``.
"""

from __future__ import annotations

import pathlib
import resource
import tempfile
import time

from tracegen.curve import scaling_curve
from tracegen.model import TaskKind
from tracegen.synthetic import synthetic_model
from tracegen.metrics import steps_per_s
from tracegen.simulate import SimConfig, simulate
from tracegen.synth import write_synthetic_trace


def main() -> None:
    """Run the benchmark and print its figures."""
    model = synthetic_model(n_params=161, n_layers_ops=3, param_bytes=160_000, op_dur_ns=100_000,
                            bandwidth_bytes_per_s=1_250_000_000, latency_ns=50_000)
    print(f"model: {model.n_tasks} tasks, {model.count(TaskKind.PULL)} parameters, "
          f"{model.count(TaskKind.COMPUTE)} ops, {model.bytes_of(TaskKind.PULL) / 1e6:.1f} MB pulled per step")
    config = SimConfig(steps=5, link="fair")
    t0 = time.perf_counter()
    curve = scaling_curve(model, config, [1, 2, 4, 8, 16, 32, 64], seeds=1)
    wall = time.perf_counter() - t0
    print(f"curve 1..64 workers (7 points, 5 steps each): {wall:.2f} s, {curve.n_events} events, "
          f"{curve.n_events / wall:,.0f} events/s; knee N={curve.knee_n_workers}")
    t0 = time.perf_counter()
    result = simulate(model, SimConfig(n_workers=1000, steps=3, link="fair"))
    wall = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # peak RSS of the process (KiB on Linux)
    print(f"1000 workers x 3 steps: {wall:.2f} s, {result.n_events} events ({result.n_events / wall:,.0f}/s), "
          f"peak RSS {rss_mb:.0f} MiB, {steps_per_s(result):.1f} steps/s")
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "n16.json"
        t0 = time.perf_counter()
        write_synthetic_trace(model, SimConfig(n_workers=16, steps=3), path)
        wall = time.perf_counter() - t0
        print(f"synthetic trace, 16 workers x 3 steps: {wall:.2f} s, {path.stat().st_size / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
