"""The event engine (tracegen/engine.py): events run in (time, priority, scheduling) order, whatever schedules them."""

from __future__ import annotations

import heapq

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tracegen.engine import MAX_TIME_NS, Call, Engine

# (time_ns, priority, how many later events it schedules when it runs, at what delay)
EVENTS = st.lists(st.tuples(st.integers(0, 50), st.integers(0, 3), st.integers(0, 2), st.integers(0, 3)),
                  min_size=1, max_size=60)


def _run(events: list[tuple[int, int, int, int]], engine: Engine | None) -> list[int]:
    """The order the events run in, on the engine, or (None) on a reference: ``heapq`` of (time, priority, seq)."""
    reference: list[tuple[int, int, int]] = []
    now = 0
    count = 0
    ran: list[int] = []

    def schedule(time_ns: int, priority: int) -> None:
        nonlocal count
        if engine is None:
            heapq.heappush(reference, (max(time_ns, now), priority, count))
        else:
            engine.at(time_ns, priority, handler, count)
        count += 1

    def fire(event: int) -> None:
        ran.append(event)
        _, priority, children, delay = events[event % len(events)]
        for _ in range(children if count < 200 else 0):
            schedule((engine.now if engine else now) + delay - 1, priority)  # delay 0: a ns in the past: now

    handler = Call(fire)
    for time_ns, priority, _, _ in events:
        schedule(time_ns, priority)
    if engine is not None:
        engine.run()
        assert engine.n_events == count
    while reference:
        now, _, event = heapq.heappop(reference)
        fire(event)
    return ran


@settings(max_examples=300, deadline=None)
@given(EVENTS)
def test_events_run_in_time_then_priority_then_scheduling_order(events: list[tuple[int, int, int, int]]) -> None:
    assert _run(events, Engine()) == _run(events, None)


def test_an_event_past_the_last_instant_is_refused() -> None:
    engine = Engine()
    with pytest.raises(OverflowError, match="past the engine's last instant"):
        engine.at(MAX_TIME_NS + 1, 0, Call(lambda _: None))
