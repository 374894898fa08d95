"""The leave-one-step-out check: does a model built from some traced steps predict a step it has not seen?

For each complete traced step i, a model is built from the *other* complete steps only (and held to them as
``predict`` holds its model, :mod:`tracegen.selfreplay`: the replay of those steps gives back their mean), one worker
is simulated for ``steps`` steps (each drawing one of those timings, seeded; a job traced with several PS tasks keeps
each parameter on its traced PS, each with its own link, as ``predict`` does), and its mean step time is compared
with step i's measured length. Two figures summarise a trace: the mean absolute error over the held-out steps (how
well one unseen step is predicted, which includes that step's own luck), and the error of the mean (the mean of the
predictions against the mean of the held-out steps: the bias that throughput, a mean, inherits).
"""

from __future__ import annotations

import dataclasses
import statistics

from parsers.trace import Trace
from tracegen.errors import ModelError
from tracegen.link import LinkSpec
from tracegen.metrics import step_time_ns
from tracegen.model import complete_steps
from tracegen.selfreplay import step_model
from tracegen.simulate import SimConfig, simulate


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HeldOut:
    """One held-out step: its measured length and the prediction from the others."""

    step: int
    measured_ns: int
    predicted_ns: float

    @property
    def error(self) -> float:
        """Relative error of the prediction."""
        return self.predicted_ns / self.measured_ns - 1


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LeaveOneOut:
    """Every held-out step of a trace, and the summary figures of the module docstring."""

    source: str
    held_out: tuple[HeldOut, ...]

    @property
    def mean_abs_error(self) -> float:
        """Mean over held-out steps of |predicted / measured - 1|."""
        return statistics.fmean(abs(h.error) for h in self.held_out)

    @property
    def error_of_mean(self) -> float:
        """Mean prediction / mean held-out length - 1."""
        return (statistics.fmean(h.predicted_ns for h in self.held_out)
                / statistics.fmean(h.measured_ns for h in self.held_out) - 1)


def leave_one_out(trace: Trace, *, link_spec: LinkSpec | None = None, steps: int = 30,
                  seed: int = 0) -> LeaveOneOut:
    """The check of the module docstring for every complete step of ``trace`` (at least two are needed)."""
    complete, _why = complete_steps(trace)
    if len(complete) < 2:
        raise ModelError(f"{trace.source}: leave-one-step-out needs at least 2 complete traced steps "
                         f"(got {len(complete)})")
    lengths = dict(zip(trace.steps["step"].astype(int), (trace.steps["end_ns"] - trace.steps["start_ns"]).astype(int),
                       strict=True))
    held = []
    for step in complete:
        model = step_model(trace, use_steps=[s for s in complete if s != step])
        result = simulate(model, SimConfig(steps=steps, warmup_steps=0, seed=seed, link_spec=link_spec,
                                           ps_shard_of_task=model.traced_ps_task))
        held.append(HeldOut(step=step, measured_ns=int(lengths[step]),
                            predicted_ns=statistics.fmean(step_time_ns(result))))
    return LeaveOneOut(source=trace.source, held_out=tuple(held))
