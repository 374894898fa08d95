"""tracegen's engine against its SimPy yardstick (``benchmarks/simpy_model.py``), measured in one run (a
benchmark, not a test; ``tests/benchmarks/test_simpy_yardstick.py`` checks the agreement on fewer steps).

For every bundled trace in ``data/traces/`` that makes a step model, the curve ``tracegen predict`` computes with
its defaults (:class:`tracegen.config.PredictConfig`: N from 1 to 16, 3 warm-up and 30 measured steps
per worker, seeds 0, 1, 2) and ``--every-n`` (every N simulated, none left out past the plateau), but on the
``fifo`` link model and the trace's own link with no PS CPU per transfer request — the job the SimPy model
covers. Both models run the same (N, seed) points, each point a simulation and
its steps/s (:func:`tracegen.metrics.steps_per_s`); the plateau search past 16 is left out, so both curves are the
same points. Prints per trace the wall time of each curve, their ratio, the largest steps/s disagreement of any
point, and at how many points the two gave exactly the same step start and end times.

Run: ``python benchmarks/bench_yardstick.py``.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import pathlib
import sys
import time
from collections.abc import Callable
from types import ModuleType

from parsers.read import read_trace
from tracegen import native
from tracegen.config import PredictConfig
from tracegen.errors import ModelError
from tracegen.metrics import steps_per_s
from tracegen.model import StepModel, build_model
from tracegen.simulate import SimConfig, SimResult, simulate

ROOT = pathlib.Path(__file__).resolve().parent.parent
Simulator = Callable[[StepModel, SimConfig], SimResult]


def load_yardstick() -> ModuleType:
    """``simpy_model.py`` beside this file, as a module (benchmarks is not a package)."""
    spec = importlib.util.spec_from_file_location("simpy_model", ROOT / "benchmarks" / "simpy_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["simpy_model"] = module
    spec.loader.exec_module(module)
    return module


def curve(model: StepModel, config: SimConfig, defaults: PredictConfig,
          run: Simulator) -> tuple[float, list[SimResult], list[float]]:
    """(wall seconds, results, steps/s) of every (N, seed) point of the curve, simulated by ``run``."""
    results, rates = [], []
    start = time.perf_counter()
    for n in defaults.workers:
        for s in range(defaults.seeds):
            result = run(model, dataclasses.replace(config, n_workers=n, seed=config.seed + s))
            results.append(result)
            rates.append(steps_per_s(result))
    return time.perf_counter() - start, results, rates


def main() -> None:
    """Run the benchmark and print its table."""
    simulate_simpy = load_yardstick().simulate_simpy
    defaults = dataclasses.replace(PredictConfig(), link="fifo")
    config = defaults.sim_config(None)  # no link given: the trace's own
    print(f"tracegen's engine: {native.engine()}")
    print(f"curves: N = {defaults.workers[0]}..{defaults.workers[-1]}, {defaults.seeds} seeds, "
          f"{config.warmup_steps} + {config.steps} steps per worker, link model {config.link}, the trace's link")
    print("| trace | tasks | tracegen s | SimPy s | SimPy / tracegen | max steps/s disagreement | identical runs |")
    print("|---|---|---|---|---|---|---|")
    for trace in sorted(p for p in (ROOT / "data" / "traces").iterdir() if p.is_dir()):
        try:
            model = build_model(read_trace(trace))
        except ModelError:
            print(f"| {trace.name} | no step model (TF2 profile) | | | | | |")
            continue
        ours_s, ours, ours_rates = curve(model, config, defaults, simulate)
        theirs_s, theirs, theirs_rates = curve(model, config, defaults, simulate_simpy)
        worst = max(abs(b - a) / a for a, b in zip(ours_rates, theirs_rates, strict=True))
        same = sum(a.step_start_ns == b.step_start_ns and a.step_end_ns == b.step_end_ns
                   for a, b in zip(ours, theirs, strict=True))
        print(f"| {trace.name} | {model.n_tasks} | {ours_s:.1f} | {theirs_s:.1f} | {theirs_s / ours_s:.1f}x | "
              f"{worst:.2%} | {same}/{len(ours)} |", flush=True)


if __name__ == "__main__":
    main()
