"""Real multi-worker traces held against synthetic ones: what the PS link did with concurrent transfers.

The testbed traces every worker of an N-worker run after its measurement window (``workers/nN/wI``). This
module reduces such traces, and a simulation of the same N, to the same few figures per run:

- ``step_ms``: a worker's step period (start of one traced step to the start of its next), median;
- ``pull_ms``: a step's pull phase, first parameter requested to last parameter received, median;
- ``rest_ms``: from there to the last gradient received (compute and pushes), median;
- ``both_busy``: the share of the time in which some pull and some push were on the wire at once (over all
  workers), the duplex overlap that alternating workers create.

Only transfers of at least 64 KiB count (a small transfer's record measures latency and scheduling).
"""

from __future__ import annotations

import dataclasses
import itertools
import pathlib
import statistics
from collections.abc import Sequence

from parsers.read import read_trace
from parsers.spans import union
from parsers.trace import PULL, PUSH, Trace
from tracegen.model import StepModel, TaskKind
from tracegen.simulate import SimConfig, simulate
from tracegen.wire import LARGE_TRANSFER_BYTES

Interval = tuple[int, int]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class PhaseStats:
    """The figures of the module docstring, for one N-worker run (real or simulated)."""

    n_workers: int
    step_ms: float
    pull_ms: float
    rest_ms: float
    both_busy: float


def _overlap_ns(a: Sequence[Interval], b: Sequence[Interval]) -> int:
    total, j = 0, 0
    for start, end in a:
        while j < len(b) and b[j][1] <= start:
            j += 1
        k = j
        while k < len(b) and b[k][0] < end:
            total += min(end, b[k][1]) - max(start, b[k][0])
            k += 1
    return total


def _stats(n_workers: int, step_starts: Sequence[Sequence[int]], phases: dict[str, list[Interval]],
           wire: dict[str, list[Interval]]) -> PhaseStats:
    periods = [b - a for starts in step_starts for a, b in itertools.pairwise(starts)]
    pulls, pushes = union(wire[PULL]), union(wire[PUSH])
    lo = min(s for s, _ in pulls + pushes)
    hi = max(e for _, e in pulls + pushes)
    return PhaseStats(
        n_workers=n_workers, step_ms=statistics.median(periods) / 1e6 if periods else float("nan"),
        pull_ms=statistics.median(e - s for s, e in phases[PULL]) / 1e6,
        rest_ms=statistics.median(e - s for s, e in phases[PUSH]) / 1e6,
        both_busy=_overlap_ns(pulls, pushes) / max(1, hi - lo))


def real_stats(worker_dirs: Sequence[pathlib.Path]) -> PhaseStats:
    """The figures of one real run from its workers' trace directories (``workers/nN/w0`` ...)."""
    traces: list[Trace] = [read_trace(d) for d in worker_dirs]
    step_starts = [list(t.steps["start_ns"]) for t in traces]
    phases: dict[str, list[Interval]] = {PULL: [], PUSH: []}
    wire: dict[str, list[Interval]] = {PULL: [], PUSH: []}
    for t in traces:
        big = t.transfers[t.transfers["size_bytes"].fillna(0) >= LARGE_TRANSFER_BYTES]
        for _, g in big.groupby("step"):
            ends = g["start_ns"] + g["dur_ns"]
            pulls, pushes = g["direction"] == PULL, g["direction"] == PUSH
            if not pulls.any() or not pushes.any():
                continue
            pulled = int(ends[pulls].max())
            phases[PULL].append((int(g.loc[pulls, "start_ns"].min()), pulled))
            phases[PUSH].append((pulled, int(ends[pushes].max())))
            for direction, mask in ((PULL, pulls), (PUSH, pushes)):
                wire[direction] += [(int(a), int(b)) for a, b in zip(g.loc[mask, "start_ns"], ends[mask], strict=True)]
    return _stats(len(traces), step_starts, phases, wire)


def simulated_stats(model: StepModel, config: SimConfig) -> PhaseStats:
    """The same figures from a simulation of ``config.n_workers`` workers (first step of each left out)."""
    result = simulate(model, dataclasses.replace(config, record_tasks=True))
    phases: dict[str, list[Interval]] = {PULL: [], PUSH: []}
    wire: dict[str, list[Interval]] = {PULL: [], PUSH: []}
    pull_span: dict[tuple[int, int], Interval] = {}
    push_end: dict[tuple[int, int], int] = {}
    for r in result.tasks:
        kind = model.kinds[r.task]
        large = model.size_bytes[r.task] >= LARGE_TRANSFER_BYTES
        if r.step == 0 or kind not in (TaskKind.PULL, TaskKind.PUSH) or not large:
            continue
        key = (r.worker, r.step)
        if kind == TaskKind.PULL:
            wire[PULL].append((r.start_ns, r.end_ns))
            lo, hi = pull_span.get(key, (r.ready_ns, r.end_ns))
            pull_span[key] = (min(lo, r.ready_ns), max(hi, r.end_ns))
        else:
            wire[PUSH].append((r.start_ns, r.end_ns))
            push_end[key] = max(push_end.get(key, 0), r.end_ns)
    for key, (lo, hi) in pull_span.items():
        if key in push_end:
            phases[PULL].append((lo, hi))
            phases[PUSH].append((hi, push_end[key]))
    starts = [list(s[1:]) for s in result.step_start_ns]
    return _stats(config.n_workers, starts, phases, wire)
