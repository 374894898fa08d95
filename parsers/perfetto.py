"""Perfetto's rules for JSON traces, as a checker: what makes it drop or misplace events.

Every Chrome JSON this project writes must pass :func:`check_perfetto` (tests check both the converted traces
and the synthetic multi-worker ones). The rules: complete events (``ph: "X"``) have numeric ``ts``/``dur`` ≥ 0
and integer ``pid``/``tid``; slices on one track never partly overlap (nesting is allowed, overlap is not);
every pid/tid with slices is named by ``process_name``/``thread_name`` metadata; every flow id has one start
(``s``) and one finish (``f``), each inside a slice of its own track.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

Track = tuple[Any, Any]


def _number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float | Decimal) and value >= 0


def _ns(value: Any) -> int:
    return round(Decimal(str(value)) * 1000)


def _overlaps(track: Track, slices: list[tuple[int, int]]) -> list[str]:
    problems = []
    stack: list[int] = []
    for start, end in sorted(slices, key=lambda s: (s[0], -s[1])):
        while stack and stack[-1] <= start:
            stack.pop()
        if stack and end > stack[-1]:
            problems.append(f"pid {track[0]} tid {track[1]}: slice [{start}, {end}] ns partly overlaps one "
                            f"ending at {stack[-1]} ns")
        stack.append(end)
    return problems


@dataclasses.dataclass(slots=True)
class _Seen:
    """What one pass over the events found."""

    tracks: dict[Track, list[tuple[int, int]]] = dataclasses.field(default_factory=dict)
    named_processes: set[Any] = dataclasses.field(default_factory=set)
    named_tracks: set[Track] = dataclasses.field(default_factory=set)
    flows: dict[Any, dict[str, tuple[Any, Any, int]]] = dataclasses.field(default_factory=dict)


def _scan(events: Sequence[Any], problems: list[str]) -> _Seen:
    seen = _Seen()
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            problems.append(f"traceEvents[{i}] is not an object")
            continue
        ph, pid, tid = e.get("ph"), e.get("pid"), e.get("tid")
        if ph == "M":
            if e.get("name") == "process_name":
                seen.named_processes.add(pid)
            elif e.get("name") == "thread_name":
                seen.named_tracks.add((pid, tid))
        elif not isinstance(pid, int) or not isinstance(tid, int):
            problems.append(f"traceEvents[{i}]: pid/tid must be integers (got {pid!r}, {tid!r})")
        elif not _number(e.get("ts")) or (ph == "X" and not _number(e.get("dur"))):
            problems.append(f"traceEvents[{i}]: 'ts' and 'dur' must be numbers >= 0 (got {e.get('ts')!r}, "
                            f"{e.get('dur')!r})")
        elif ph == "X":
            start = _ns(e["ts"])
            seen.tracks.setdefault((pid, tid), []).append((start, start + _ns(e["dur"])))
        elif ph in ("s", "f"):
            ends = seen.flows.setdefault(e.get("id"), {})
            if ph in ends:
                problems.append(f"traceEvents[{i}]: flow id {e.get('id')!r} has two '{ph}' events")
            ends[ph] = (pid, tid, _ns(e["ts"]))
    return seen


def check_perfetto(events: Sequence[Any]) -> list[str]:
    """Problems that break the rules in this module's docstring; empty when the trace is clean."""
    problems: list[str] = []
    seen = _scan(events, problems)
    for track, slices in seen.tracks.items():
        if track[0] not in seen.named_processes:
            problems.append(f"pid {track[0]} has slices but no process_name")
        if track not in seen.named_tracks:
            problems.append(f"pid {track[0]} tid {track[1]} has slices but no thread_name")
        problems += _overlaps(track, slices)
    for flow_id, ends in seen.flows.items():
        if set(ends) != {"s", "f"}:
            problems.append(f"flow id {flow_id!r} lacks its {'start' if 's' not in ends else 'finish'}")
            continue
        for phase, (pid, tid, ts_ns) in ends.items():
            if not any(s <= ts_ns <= e for s, e in seen.tracks.get((pid, tid), [])):
                problems.append(f"flow id {flow_id!r} '{phase}' at {ts_ns} ns is inside no slice of pid {pid} "
                                f"tid {tid}")
    return problems
