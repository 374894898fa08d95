"""The PS's CPU as a fluid resource: ``cores`` of capacity (fractional for a CPU-capped host) shared by the ops
the trace shows on the PS and by the PS's own handling of each transfer request.

- An op (apply, variable read, ...) needs a thread: at most ``threads`` ops run at once (what the trace showed),
  the others wait in arrival order. A request's handling needs no op thread but one of ``handlers`` (one per
  whole core, at least one), taken in arrival order: the PS serves the requests that arrive together one after
  another, so the first tensor is on the wire while the next is being prepared, rather than all of them at
  once and none early (what processor sharing among the requests would give).
- Everything running shares the cores equally (processor sharing), each at most one core: with ``r`` items
  running, each progresses at ``min(1, cores / r)`` ns of work per ns. With whole cores and fewer items than
  cores, items run at full speed, as threads do. Work is CPU nanoseconds at full speed: an op's traced
  duration, a request's ``rpc_cpu_ns`` (:mod:`tracegen.linkspec`).

Like the link, it keeps a virtual clock of the work each running item has received, so an event costs a heap
operation, not a pass over everything running.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable

from tracegen.engine import DONE, Engine

OnDone = Callable[[int, int], None]  # (start_ns, slot): slot is the op thread, -1 for a request's handling
_EPS = 1e-6


class PsCpu:
    """The resource of the module docstring."""

    __slots__ = ("_busy", "_free_handlers", "_free_threads", "_handles", "_items", "_rate", "_seq", "_t", "_v",
                 "_version", "_waiting", "cores", "engine", "threads")

    def __init__(self, engine: Engine, *, cores: float, threads: int) -> None:
        self.engine = engine
        self.cores = cores
        self.threads = threads
        self._free_threads = list(range(threads))
        self._waiting: deque[tuple[int, OnDone]] = deque()
        self._handles: deque[tuple[int, OnDone]] = deque()
        self._free_handlers = max(1, math.ceil(cores - 1e-9))
        self._items: list[tuple[float, int, int, int, OnDone]] = []  # (v_end, seq, slot, start, on_done)
        self._v = 0.0
        self._rate = 1.0
        self._t = 0
        self._seq = 0
        self._version = 0
        self._busy = 0.0  # core-ns used

    def idle(self) -> bool:
        """Whether an op requested now would get a thread at once (an op of no work then ends at once)."""
        return bool(self._free_threads) and not self._waiting

    def busy_ns(self) -> float:
        """Core-nanoseconds used up to now."""
        return self._busy + min(len(self._items), self.cores) * (self.engine.now - self._t)

    def request(self, key: int, dur_ns: int, on_done: OnDone) -> None:
        """Run an op of ``dur_ns`` CPU work on one of the threads (``key`` is ignored: the PS serves in arrival
        order, and the engine's event order already is arrival order)."""
        del key
        self._waiting.append((dur_ns, on_done))
        self._admit()

    def handle(self, work_ns: int, on_done: OnDone) -> None:
        """Spend ``work_ns`` of CPU on a transfer request, once a handler is free; ``on_done`` when done."""
        self._handles.append((work_ns, on_done))
        self._admit()

    def _admit(self) -> None:
        if not ((self._waiting and self._free_threads) or (self._handles and self._free_handlers)):
            return
        self._advance()
        self._take()
        self._reschedule()

    def _take(self) -> None:
        while self._waiting and self._free_threads:
            work, on_done = self._waiting.popleft()
            self._start(work, heapq.heappop(self._free_threads), on_done)
        while self._handles and self._free_handlers:
            work, on_done = self._handles.popleft()
            self._free_handlers -= 1
            self._start(work, -1, on_done)

    def _start(self, work: int, slot: int, on_done: OnDone) -> None:
        self._seq += 1
        heapq.heappush(self._items, (self._v + work, self._seq, slot, self.engine.now, on_done))

    def _advance(self) -> None:
        now = self.engine.now
        dt = now - self._t
        if dt and self._items:
            self._v += self._rate * dt
            self._busy += min(len(self._items), self.cores) * dt
        self._t = now

    def _reschedule(self) -> None:
        self._version += 1
        n = len(self._items)
        if not n:
            return
        self._rate = min(1.0, self.cores / n)
        need = self._items[0][0] - self._v
        at = self._t if need <= _EPS else self._t + max(1, math.ceil(need / self._rate - 1e-9))
        self.engine.at(at, DONE, self._wake, self._version)

    def _wake(self, version: int) -> None:
        if version != self._version:
            return
        self._advance()
        done = []
        while self._items and self._items[0][0] <= self._v + _EPS:
            _, _, slot, start, on_done = heapq.heappop(self._items)
            if slot >= 0:
                heapq.heappush(self._free_threads, slot)
            else:
                self._free_handlers += 1
            done.append((start, slot, on_done))
        self._take()
        self._reschedule()
        for start, slot, on_done in done:
            on_done(start, slot)
