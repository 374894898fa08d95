"""The discrete-event engine and its CPU resource, in SimPy's shape: one :class:`Engine` owns the clock and the
event heap; each thing that can be busy is an object with a small interface (``request``, and a callback when
the work is done). The PS link, the other resource kind, lives in :mod:`tracegen.link`.

Events are ``(time_ns, priority, seq, callback, argument)``: at equal times lower priorities run first (work that
finishes before work that starts), and ``seq`` keeps the order of scheduling among equals, so a run is
deterministic. Time is integer nanoseconds; nothing here reads a clock or draws a random number.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

# priorities at equal times: completions first, then arrivals and dispatches, then step starts
DONE, ARRIVE, START = 0, 1, 2

Callback = Callable[[Any], None]


class Engine:
    """The clock and the event heap."""

    __slots__ = ("_heap", "_seq", "n_events", "now")

    def __init__(self) -> None:
        self.now = 0
        self.n_events = 0
        self._heap: list[tuple[int, int, int, Callback, Any]] = []
        self._seq = 0

    def at(self, time_ns: int, priority: int, callback: Callback, argument: Any = None) -> None:
        """Call ``callback(argument)`` at ``time_ns`` (never earlier than now)."""
        heapq.heappush(self._heap, (max(time_ns, self.now), priority, self._seq, callback, argument))
        self._seq += 1

    def run(self, stop: Callable[[], bool] | None = None) -> None:
        """Process events in order until none is left (or ``stop()`` turns true after one)."""
        heap, pop = self._heap, heapq.heappop
        while heap:
            time_ns, _, _, callback, argument = pop(heap)
            self.now = time_ns
            self.n_events += 1
            callback(argument)
            if stop is not None and stop():
                return


class CpuPool:
    """``threads`` identical threads. A request waits until a thread is free; waiting requests start in order of
    their key (lowest first; ties in request order). Tracks thread-busy time for utilisation."""

    __slots__ = ("_busy", "_free", "_queue", "_running", "_seq", "_t", "engine", "threads")

    def __init__(self, engine: Engine, threads: int) -> None:
        self.engine = engine
        self.threads = threads
        self._free = list(range(threads))
        self._queue: list[tuple[int, int, int, Callable[[int, int], None]]] = []
        self._seq = 0
        self._running = 0
        self._busy = 0
        self._t = 0

    def request(self, key: int, dur_ns: int, on_done: Callable[[int, int], None]) -> None:
        """Run work of ``dur_ns`` on a thread; ``on_done(start_ns, thread)`` is called when it ends."""
        heapq.heappush(self._queue, (key, self._seq, dur_ns, on_done))
        self._seq += 1
        self._dispatch()

    def idle(self) -> bool:
        """Whether a request made now would start at once."""
        return bool(self._free) and not self._queue

    def busy_ns(self) -> int:
        """Thread-nanoseconds of work done so far (up to now)."""
        return self._busy + self._running * (self.engine.now - self._t)

    def _account(self, change: int) -> None:
        now = self.engine.now
        self._busy += self._running * (now - self._t)
        self._t = now
        self._running += change

    def _dispatch(self) -> None:
        queue, free, engine = self._queue, self._free, self.engine
        while queue and free:
            _, _, dur_ns, on_done = heapq.heappop(queue)
            thread = heapq.heappop(free)
            self._account(1)
            engine.at(engine.now + dur_ns, DONE, self._finish, (engine.now, thread, on_done))

    def _finish(self, arg: tuple[int, int, Callable[[int, int], None]]) -> None:
        start, thread, on_done = arg
        self._account(-1)
        heapq.heappush(self._free, thread)
        self._dispatch()
        on_done(start, thread)
