"""The discrete-event engine and its CPU resource, in SimPy's shape: one :class:`Engine` owns the clock and the
event heap; each thing that can be busy is an object with a small interface (``request``, and a callback when
the work is done). The PS link, the other resource kind, lives in :mod:`tracegen.link`.

Events are ``(time_ns, priority, seq, callback, argument)``: at equal times lower priorities run first (work that
finishes before work that starts; last, the transfers requested at that instant begin, so that they begin in
their policy's order whichever was requested first), and ``seq`` keeps the order of scheduling among equals, so
a run is deterministic. Time is integer nanoseconds; nothing here reads a clock or draws a random number.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any, Final

# priorities at equal times: completions first, then arrivals and dispatches, then step starts, then the launch of
# the transfers requested at that instant
DONE: Final = 0
ARRIVE: Final = 1
START: Final = 2
LAUNCH: Final = 3

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
        now = self.now
        heapq.heappush(self._heap, (time_ns if time_ns > now else now, priority, self._seq, callback, argument))
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
    their key (lowest first; ties in request order)."""

    __slots__ = ("_free", "_queue", "_seq", "engine", "threads")

    def __init__(self, engine: Engine, threads: int) -> None:
        self.engine = engine
        self.threads = threads
        self._free = list(range(threads))
        self._queue: list[tuple[int, int, int, Callable[[int, int], None]]] = []
        self._seq = 0

    def request(self, key: int, dur_ns: int, on_done: Callable[[int, int], None]) -> None:
        """Run work of ``dur_ns`` on a thread; ``on_done(start_ns, thread)`` is called when it ends."""
        if self._free and not self._queue:  # starts at once: no need to queue it
            engine = self.engine
            engine.at(engine.now + dur_ns, DONE, self._finish, (engine.now, heapq.heappop(self._free), on_done))
            return
        heapq.heappush(self._queue, (key, self._seq, dur_ns, on_done))
        self._seq += 1
        self._dispatch()

    def idle(self) -> bool:
        """Whether a request made now would start at once."""
        return bool(self._free) and not self._queue

    def _dispatch(self) -> None:
        queue, free, engine = self._queue, self._free, self.engine
        while queue and free:
            _, _, dur_ns, on_done = heapq.heappop(queue)
            engine.at(engine.now + dur_ns, DONE, self._finish, (engine.now, heapq.heappop(free), on_done))

    def _finish(self, arg: tuple[int, int, Callable[[int, int], None]]) -> None:
        """The work is done: its thread is free, and what the work's end makes ready is requested before the
        waiting work takes the thread, so that all of it starts in key order."""
        start, thread, on_done = arg
        heapq.heappush(self._free, thread)
        on_done(start, thread)
        if self._queue:
            self._dispatch()
