"""Where a replay of one worker misses its own traced step (a diagnosis, not a test):
``python benchmarks/replay_gaps.py [TRACE ...]`` (default: the `deep` traces whose leave-one-step-out error of
the mean was over 5 % before :mod:`tracegen.selfreplay`, two that were within it for contrast, and the four of
``data/remeasured/deep_caps/``, the CPU caps lifted in turn).

For each complete traced step, a model built from that step alone (:func:`tracegen.model.build_model` with
``use_steps``) replays one worker for 3 steps with the trace's own link estimate as it is (as
:func:`tracegen.replay.leave_one_out` did before :mod:`tracegen.selfreplay` held its replay to the traced
steps), and its mean step time is compared with the step it was built from:
the *in-sample* error, which no step-to-step variability explains. Then the same with the traced gaps before one
kind of task set to zero (the gap is the time from a task's last input being ready to its start, which the replay
adds after the task's inputs are ready in the replay) and with an unlimited link, to show which part of the
replay carries the miss. Printed per trace: the mean and the range over steps of each.
"""

from __future__ import annotations

import dataclasses
import statistics
import sys

from parsers import read_trace
from tracegen.metrics import step_time_ns
from tracegen.model import StepModel, TaskKind, build_model, complete_steps
from tracegen.simulate import SimConfig, simulate

DEFAULT = ("data/pastknee/test/deep_2000mbit_q20_b16k_ps03/trace", "data/atcap/test/deep_500mbit_q100_b16k_ps03/trace",
           "data/fresh/test/deep_200mbit_q5_b16k_ps05/trace",
           "data/remeasured/deep_replay/deep_150mbit_q5_b128k_ps03/trace",
           "data/validation/dev/deep_1000mbit_q100_b16k_ps05/trace",
           "data/validation/dev/mlp_500mbit_q100_b128k_ps03/trace",
           *(f"data/remeasured/deep_caps/{caps}/trace" for caps in ("w0.25_ps0.3", "w0.9_ps0.3", "w0.25_ps0.9",
                                                                   "w0.9_ps0.9")))
VARIANTS = ("as traced", "no compute gaps", "no PS-op gaps", "no transfer gaps", "unlimited link")


def _replayed_ns(model: StepModel) -> float:
    result = simulate(model, SimConfig(steps=3, warmup_steps=0, seed=0, ps_shard_of_task=model.traced_ps_task))
    return statistics.fmean(step_time_ns(result))


def _without_gaps(model: StepModel, kinds: set[TaskKind]) -> StepModel:
    timing = model.timings[0]
    delay = tuple(0 if model.kinds[i] in kinds else d for i, d in enumerate(timing.delay_ns))
    return dataclasses.replace(model, timings=(dataclasses.replace(timing, delay_ns=delay),))


def variants(model: StepModel) -> tuple[StepModel, ...]:
    """The model of one step and its variants, in the order of :data:`VARIANTS`."""
    fast = dataclasses.replace(model.link, pull_bandwidth_bytes_per_s=10**12, push_bandwidth_bytes_per_s=10**12)
    return (model, _without_gaps(model, {TaskKind.COMPUTE}), _without_gaps(model, {TaskKind.PS_OP, TaskKind.APPLY}),
            _without_gaps(model, {TaskKind.PULL, TaskKind.PUSH}), dataclasses.replace(model, link=fast))


def in_sample(folder: str) -> list[list[float]]:
    """Per variant, the relative error of each complete step replayed from its own timing."""
    trace = read_trace(folder)
    complete, _why = complete_steps(trace)
    lengths = dict(zip(trace.steps["step"].astype(int), (trace.steps["end_ns"] - trace.steps["start_ns"]).astype(int),
                       strict=True))
    errors: list[list[float]] = [[] for _ in VARIANTS]
    for step in complete:
        for i, model in enumerate(variants(build_model(trace, use_steps=[step]))):
            errors[i].append(_replayed_ns(model) / lengths[step] - 1)
    return errors


def main(argv: list[str]) -> int:
    """Print one row per trace."""
    print("| trace | " + " | ".join(f"{v}: mean (range)" for v in VARIANTS) + " |")
    print("|---|" + "---|" * len(VARIANTS))
    for folder in argv or DEFAULT:
        cells = [f"{statistics.fmean(e):+.1%} ({min(e):+.0%}..{max(e):+.0%})" for e in in_sample(folder)]
        print(f"| {folder} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
