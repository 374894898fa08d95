"""The PS link as one worker's trace shows it: :func:`estimate_wire` gives a :class:`LinkEstimate`.

Each transfer is taken to pay one fixed latency, the rest being bytes / rate: ``latency_ns`` = the median over
steps of the shortest sized transfer's duration, the smaller of the two directions; a direction's rate = bytes
moved / (time with a transfer of that direction on the wire, minus one latency per busy period), summed over the
complete steps (so that the mean transfer time is right; a median of per-step rates is not), for every sized
transfer, for those of at least ``LARGE_TRANSFER_BYTES``, and for only the largest that carry half the bytes: the
largest of the three (:func:`_wire_rate`). A transfer counts as on the wire from the later of its record's start
and its inputs' readiness (a push's record starts when the PS asks for the gradient, often long before the
worker has produced it). It is an *effective* rate: what one worker's connection achieved, including the
worker's own gRPC and CPU costs.

Known to fall short (docs/validation.md, "Leave one step out"): a lone small transfer whose record also covers time when
nothing moved counts as time on the wire and lowers the rate (in the ``deep`` trace where it was looked at, a
16 KiB pull recorded for 46 ms while no op ran on either host: a stall of the worker's process, not the wire).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence

from parsers.spans import union
from parsers.trace import PULL, PUSH, Trace
from tracegen.errors import ModelError

LARGE_TRANSFER_BYTES = 64 * 1024  # above this a transfer's duration is mostly bytes / bandwidth


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LinkEstimate:
    """The PS link as the trace shows it. ``bandwidth_*`` in bytes per second, ``latency_ns`` per transfer."""

    pull_bandwidth_bytes_per_s: int
    push_bandwidth_bytes_per_s: int
    latency_ns: int
    method: str


Observed = Sequence[Mapping[int, tuple[int, int]]]  # per task, per traced step: (start_ns, end_ns)


def estimate_wire(trace: Trace, tasks: Mapping[str, Sequence[int]], preds: Callable[[int], Iterable[int]],
                  obs: Observed, size: Sequence[int], complete: Sequence[int]) -> LinkEstimate:
    """The link estimate (module docstring) from the transfer tasks of each direction (``tasks[PULL]``,
    ``tasks[PUSH]``), their predecessors, what each task's record showed in each step (``obs``), the sizes, and
    the complete steps to use."""
    tr = trace.transfers[trace.transfers["size_bytes"].notna() & trace.transfers["direction"].isin([PULL, PUSH])]
    shortest = tr.groupby(["direction", "step"])["dur_ns"].min()
    latency = min((int(grp.median()) for _, grp in shortest.groupby(level=0)), default=0)
    rates = {d: _wire_rate(tasks.get(d, ()), preds, obs, size, complete, latency) for d in (PULL, PUSH)}
    for direction, rate in rates.items():
        if rate is None:
            raise ModelError(f"{trace.source}: no sized {direction} transfers in the complete traced steps "
                             "to estimate the link from")
    return LinkEstimate(
        pull_bandwidth_bytes_per_s=max(1, round(rates[PULL] or 1)),
        push_bandwidth_bytes_per_s=max(1, round(rates[PUSH] or 1)), latency_ns=latency,
        method=f"bytes / time on the wire per direction, over {len(complete)} complete traced steps")


def _wire_rate(tasks: Sequence[int], preds: Callable[[int], Iterable[int]], obs: Observed, size: Sequence[int],
               complete: Sequence[int], latency: int) -> float | None:
    """Bytes per second on the wire in one direction (module docstring): the largest of three estimates, each
    bytes over the time their transfers were on the wire, summed over the complete steps: one from every sized
    transfer, one from the transfers of at least ``LARGE_TRANSFER_BYTES``, one from only the largest that carry
    half the bytes. A record that also covers waiting (for the receiving host's CPU, for a throttled process)
    makes an estimate too low, never too high: a small transfer that waits (a 4-byte push recorded for 17 ms)
    hurts the first; a large one that shares the wire with another the third, which times it alone; the second
    is hurt only by a large transfer that waits."""
    every: list[tuple[int, int]] = []
    large: list[tuple[int, int]] = []
    largest: list[tuple[int, int]] = []
    for step in complete:
        sized = sorted((t for t in tasks if step in obs[t] and size[t] > 0), key=lambda t: (-size[t], t))
        total, kept, half = sum(size[t] for t in sized), 0, len(sized)
        for i, t in enumerate(sized):
            kept += size[t]
            if kept >= total / 2:
                half = i + 1
                break
        big = [t for t in sized if size[t] >= LARGE_TRANSFER_BYTES]
        for chosen, into in ((sized, every), (big, large), (sized[:half], largest)):
            spans = []
            for t in chosen:
                start, end = obs[t][step]
                ready = max((obs[p][step][1] for p in preds(t) if step in obs[p]), default=start)
                spans.append((min(max(start, ready), end), end))
            n_bytes = sum(size[t] for t in chosen)
            if n_bytes:
                busy_ns, periods = busy_time(spans)
                into.append((n_bytes, max(busy_ns - periods * latency, busy_ns // 10, 1)))
    estimates = [sum(b for b, _ in v) * 1e9 / sum(ns for _, ns in v) for v in (every, large, largest) if v]
    return max(estimates) if estimates else None


def busy_time(intervals: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """(total time covered, number of disjoint periods) of a set of intervals."""
    periods = union(intervals)
    return sum(end - start for start, end in periods), len(periods)
