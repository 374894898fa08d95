"""How long simulated workers take to reach their steady state, and what their start has to do with it (a study,
not a test; figures in docs/validation.md, "What the development figures rest on").

Workers start at offsets drawn from ``[0, start_spread_ns)``; the default is one uncontended step
(:mod:`tracegen.simulate`). Far past the knee a step under contention lasts N / bound seconds, so the workers
start in a burst: they pull together, compute together and push together, one link direction idle while the
other is busy, and they drift apart only over tens of steps. This prints, for ``bench_simulate.py``'s step at
N = 64 (seeds 0-2), steps/s and the pull direction's utilisation over 30 and 90 measured steps, once with the
default start and once with the starts spread over one round (``max(uncontended step, N / the tighter of the
link and PS bounds)``: the phases workers hold in steady state). A steady estimate does not move with the
number of steps; the default start's does.

Run: ``python benchmarks/start_transient.py`` (about 8 minutes).
"""

from __future__ import annotations

import dataclasses
import math
import statistics

from tracegen.config import PredictConfig
from tracegen.metrics import link_bound_steps_per_s, link_utilisation, ps_bound_steps_per_s, steps_per_s
from tracegen.simulate import critical_path_ns, resolve_link, simulate
from tracegen.synthetic import synthetic_model

N_WORKERS = 64
SEEDS = 3


def main() -> None:
    """Run the study and print its table."""
    model = synthetic_model(n_params=161, n_layers_ops=3, param_bytes=160_000, op_dur_ns=100_000,
                            bandwidth_bytes_per_s=1_250_000_000, latency_ns=50_000)
    base = dataclasses.replace(PredictConfig().sim_config(None), n_workers=N_WORKERS)
    one = simulate(model, dataclasses.replace(base, n_workers=1))
    bound = min(link_bound_steps_per_s(model, one), ps_bound_steps_per_s(model, one))
    step_ns = critical_path_ns(model, resolve_link(model, base))
    starts = {"one uncontended step (default)": None,
              "one round": max(step_ns, math.ceil(N_WORKERS * 1e9 / bound))}
    print(f"N = {N_WORKERS}, bound {bound:.2f} steps/s, seeds 0-{SEEDS - 1}")
    print("| start spread | measured steps | steps/s, mean (seeds) | pull link busy |")
    print("|---|---|---|---|")
    for name, spread in starts.items():
        for steps in (30, 90):
            runs = [simulate(model, dataclasses.replace(base, steps=steps, seed=s, start_spread_ns=spread))
                    for s in range(SEEDS)]
            rates = [steps_per_s(r) for r in runs]
            busy = statistics.fmean(link_utilisation(r, "pull") for r in runs)
            print(f"| {name} | {steps} | {statistics.fmean(rates):.1f} ({', '.join(f'{x:.1f}' for x in rates)}) "
                  f"| {busy:.0%} |", flush=True)


if __name__ == "__main__":
    main()
