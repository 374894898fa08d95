"""Synthetic step models of any size, for tests and benchmarks: a deep network's step, layered."""

from __future__ import annotations

import numpy as np

from tracegen.errors import ModelError
from tracegen.model import StepModel, StepTiming, TaskKind
from tracegen.wire import LinkEstimate


def synthetic_model(*, n_params: int = 4, n_layers_ops: int = 4, param_bytes: int = 1 << 20,
                    op_dur_ns: int = 100_000, apply_dur_ns: int = 10_000, seed: int = 0,
                    bandwidth_bytes_per_s: int = 125_000_000, latency_ns: int = 0) -> StepModel:
    """A layered model like a deep network's step: per parameter a pull, a forward chain of
    ``n_layers_ops`` ops reading it, a backward chain producing its gradient, a push and an apply (which takes
    the parameter's PS node as input, as TF's apply ops take the variable's handle).

    Sizes and durations vary ±50 % around the given values (seeded); used by tests and benchmarks.
    """
    if n_params < 1 or n_layers_ops < 1:
        raise ModelError(f"synthetic_model needs n_params >= 1 and n_layers_ops >= 1 (got {n_params}, "
                         f"{n_layers_ops})")
    rng = np.random.default_rng(seed)
    names: list[str] = []
    kinds: list[TaskKind] = []
    dur: list[int] = []
    size: list[int] = []
    data: list[tuple[int, ...]] = []

    def add(name: str, kind: TaskKind, d: int, s: int, preds: tuple[int, ...]) -> int:
        names.append(name)
        kinds.append(kind)
        dur.append(d)
        size.append(s)
        data.append(preds)
        return len(names) - 1

    def vary(x: int) -> int:
        return int(x * rng.uniform(0.5, 1.5))

    prev: tuple[int, ...] = ()
    pulls, reads, forward_last = [], [], []
    for p in range(n_params):
        read = add(f"ps:layer{p}/read", TaskKind.PS_OP, 1_000, 0, ())  # the variable's handle and read, in one
        reads.append(read)
        pull = add(f"edge_{p}_layer{p}/read", TaskKind.PULL, 0, vary(param_bytes), (read,))
        pulls.append(pull)
        for i in range(n_layers_ops):
            prev = (add(f"layer{p}/fwd{i}", TaskKind.COMPUTE, vary(op_dur_ns), 0,
                        prev + ((pull,) if i == 0 else ())),)
        forward_last.append(prev[0])
    applies = []
    for p in reversed(range(n_params)):
        for i in range(n_layers_ops):
            prev = (add(f"gradients/layer{p}/bwd{i}", TaskKind.COMPUTE, vary(op_dur_ns), 0, prev),)
        push = add(f"edge_g{p}_gradients/layer{p}", TaskKind.PUSH, 0, size[pulls[p]], prev)
        applies.append(add(f"ps:update_layer{p}", TaskKind.APPLY, vary(apply_dur_ns), 0, (push, reads[p])))
    gstep = add("ps:GradientDescent", TaskKind.APPLY, 2_000, 0, ())
    n = len(names)
    control: list[tuple[int, ...]] = [() for _ in range(n)]
    control[gstep] = tuple(applies)
    start = list(range(n))
    return StepModel(
        names=tuple(names), kinds=tuple(kinds), size_bytes=tuple(size), data_preds=tuple(data),
        control_preds=tuple(control), rank=tuple(start), first_need_ns=tuple(start),
        timings=(StepTiming(dur_ns=tuple(dur), delay_ns=(0,) * n, step_ns=0),),
        link=LinkEstimate(pull_bandwidth_bytes_per_s=bandwidth_bytes_per_s,
                          push_bandwidth_bytes_per_s=bandwidth_bytes_per_s, latency_ns=latency_ns,
                          method="given"),
        source=f"synthetic(n_params={n_params}, n_layers_ops={n_layers_ops}, seed={seed})",
    )
