"""Speed of the simulator on a ResNet-50-sized step (a benchmark, not a test).

Prints what issue 10 asks for, measured in one run on one core:
- a curve at every N from 1 to 64 as ``tracegen predict --workers 1-64`` runs it with its defaults
  (:class:`tracegen.config.PredictConfig`: link model ``conn``, 3 warm-up and 30 measured steps per worker, 3
  seeds; the N simulated in order until the rate stalls, :func:`tracegen.plateau.stalled_after`, the rest not
  simulated): wall time on one core, events, the N simulated (target: 5 s); then the same in as many local
  processes as this machine has CPUs, as ``predict --jobs`` does by default, and whether it is the same curve;
- the same curve with ``--every-n``: all 64 N simulated (192 simulations, the plateau search past 64 left out),
  on one core — about half a minute on this machine with the C core (30.9 s on 2026-12-06, 32.5 s that
  afternoon on a slower hour, 123 s compiled the day before; target 5 s), what a user who asks for every N waits for;
- one 1000-worker point (3 steps per worker): time and peak memory (targets: 5 s, 1 GiB);
- the time to stream the synthetic trace ``predict --emit-traces 16`` writes with its defaults, beside
  predict's estimate of it;
- last, in the same run, ``benchmarks/bench_yardstick.py``'s table: tracegen beside its SimPy yardstick on the
  bundled traces (every N from 1 to 16, predict's defaults, the ``fifo`` link; a plain SimPy model of the
  ResNet-50-sized step's 64-N curve would take hours). ``--no-yardstick`` leaves it out (about 5 minutes).

``benchmarks/bench_predict.py`` times ``predict`` on every bundled campaign trace.

Run: ``python benchmarks/bench_simulate.py [--no-yardstick]``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import pathlib
import resource
import sys
import tempfile
import time

from tracegen import native
from tracegen.config import PredictConfig
from tracegen.curve import scaling_curve, simulate_job
from tracegen.estimate import traces_seconds
from tracegen.metrics import steps_per_s
from tracegen.model import TaskKind
from tracegen.processes import Processes, available_cpus
from tracegen.simulate import SimConfig, simulate
from tracegen.synth import write_synthetic_trace
from tracegen.synthetic import synthetic_model
from tracegen.workercounts import format_workers

HERE = pathlib.Path(__file__).resolve().parent


def main(argv: list[str]) -> None:
    """Run the benchmark and print its figures."""
    model = synthetic_model(n_params=161, n_layers_ops=3, param_bytes=160_000, op_dur_ns=100_000,
                            bandwidth_bytes_per_s=1_250_000_000, latency_ns=50_000)
    print(f"engine: {native.engine()}")
    print(f"model: {model.n_tasks} tasks, {model.count(TaskKind.PULL)} parameters, "
          f"{model.count(TaskKind.COMPUTE)} ops, {model.bytes_of(TaskKind.PULL) / 1e6:.1f} MB pulled per step")
    defaults = PredictConfig()
    config = defaults.sim_config(None)
    what = (f"N = 1..64, predict's defaults (link {config.link}, {config.warmup_steps} + {config.steps} "
            f"steps, {defaults.seeds} seeds")
    t0 = time.perf_counter()
    curve = scaling_curve(model, config, range(1, 65), seeds=defaults.seeds, stop_at_plateau=not defaults.every_n)
    wall = time.perf_counter() - t0
    simulated = format_workers([p.n_workers for p in curve.points])
    print(f"{what}, N={simulated} simulated, the rest past the plateau), one core: {wall:.1f} s (target 5 s), "
          f"{curve.n_events} events, {curve.n_events / wall:,.0f} events/s; knee N={curve.knee_n_workers}, "
          f"plateau {curve.plateau_steps_per_s:.2f} steps/s", flush=True)
    jobs = available_cpus()
    if jobs > 1:  # what the CLI does by default on this machine: the same simulations in --jobs processes
        t0 = time.perf_counter()
        with Processes(simulate_job, jobs) as processes:
            side = scaling_curve(model, config, range(1, 65), seeds=defaults.seeds,
                                 stop_at_plateau=not defaults.every_n, processes=processes)
        par = time.perf_counter() - t0
        print(f"the same, {jobs} processes (predict's default --jobs here, used for a curve estimated to take "
              f"PARALLEL_S or more on one core): {par:.1f} s, {wall / par:.2f}x one core, the same curve: "
              f"{side == curve}", flush=True)
    t0 = time.perf_counter()
    every = scaling_curve(model, config, range(1, 65), seeds=defaults.seeds, find_plateau=False)
    wall = time.perf_counter() - t0
    print(f"{what}, --every-n: all 64 simulated), one core: {wall:.1f} s, {every.n_events} events, "
          f"{every.n_events / wall:,.0f} events/s; knee N={every.knee_n_workers}, N=64 at "
          f"{every.points[-1].steps_per_s:.2f} steps/s; its first N the same points: "
          f"{every.points[:len(curve.points)] == curve.points}", flush=True)
    t0 = time.perf_counter()
    result = simulate(model, SimConfig(n_workers=1000, steps=3, link=config.link))
    wall = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # peak RSS of the process (KiB on Linux)
    print(f"1000 workers x 3 steps: {wall:.2f} s, {result.n_events} events ({result.n_events / wall:,.0f}/s), "
          f"peak RSS {rss_mb:.0f} MiB (targets 5 s, 1024 MiB), {steps_per_s(result):.1f} steps/s", flush=True)
    with tempfile.TemporaryDirectory() as tmp:  # what 'predict --emit-traces 16' writes with its defaults
        path = pathlib.Path(tmp) / "n16.json"
        t0 = time.perf_counter()
        write_synthetic_trace(model, dataclasses.replace(config, n_workers=16), path)
        wall = time.perf_counter() - t0
        size = path.stat().st_size
        estimate = traces_seconds(model, dataclasses.replace(defaults, emit_traces=(16,)))
        print(f"synthetic trace, 16 workers, predict's defaults: {wall:.2f} s, {size / 2**20:.0f} MiB, "
              f"{size / wall / 1e6:.1f} MB/s; predict's estimate {estimate:.1f} s")
    if "--no-yardstick" not in argv:
        print("SimPy yardstick (bench_yardstick.py):", flush=True)
        yardstick()


def yardstick() -> None:
    """Run ``bench_yardstick.py`` beside this file (benchmarks is not a package)."""
    spec = importlib.util.spec_from_file_location("bench_yardstick", HERE / "bench_yardstick.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main()


if __name__ == "__main__":
    main(sys.argv[1:])
