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
- A fractional cap is not a slower CPU. Linux enforces ``cores`` < the host's cores as CFS bandwidth control
  (:class:`CfsQuota`): each period of ``period_ns`` the group may use ``cores * period_ns`` of CPU, on as many
  of the host's cores as it has runnable threads, and is stopped until the next period once that is spent
  (unused quota is not carried over). A short request on an otherwise idle PS runs at full speed; a busy PS
  averages ``cores``. With a quota the items share ``host_cores`` (each at most one core) while the period's
  budget lasts, and nothing runs after. And an op the trace timed on such a PS took longer than its CPU work
  when it outlasted its period's budget: :meth:`CfsQuota.work_ns` turns a traced duration back into work, as
  if the op had started a period alone (the trace cannot say where in a period it started).

Like the link, it keeps a virtual clock of the work each running item has received, so an event costs a heap
operation, not a pass over everything running.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections import deque
from typing import Final

from mypy_extensions import mypyc_attr

from tracegen.engine import ARRIVE, DONE, Client, Engine, Handler

# the heap functions as constants: compiled, a call then reads no module attribute
_push: Final = heapq.heappush
_pop: Final = heapq.heappop

_EPS: Final = 1e-6


@mypyc_attr(native_class=False)  # a plain class when compiled: pickles as one
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CfsQuota:
    """How a fractional CPU cap is enforced (module docstring): ``host_cores`` the group may run on, budget
    renewed every ``period_ns``."""

    host_cores: float
    period_ns: int

    def __post_init__(self) -> None:
        if not 0 < self.host_cores <= 4096:
            raise ValueError(f"'host_cores' must be in (0, 4096] (got {self.host_cores})")
        if not 1_000 <= self.period_ns <= 10**9:
            raise ValueError(f"'period_ns' must be from 1 us to 1 s (got {self.period_ns})")

    def applies(self, cores: float) -> bool:
        """Whether a cap of ``cores`` is a quota here (a cap of all the host's cores is none)."""
        return cores < self.host_cores

    def work_ns(self, cores: float, wall_ns: int) -> int:
        """CPU work of an op that took ``wall_ns`` alone under a cap of ``cores``: the budget of every whole
        period it spanned, plus what it ran of the last one (at most that period's budget). One op is one thread:
        of a budget of a core or more it can use one core's worth a period."""
        if not self.applies(cores):
            return wall_ns
        budget = min(cores, 1.0) * self.period_ns
        whole, rest = divmod(wall_ns, self.period_ns)
        return round(whole * budget + min(rest, budget))


class _Item:
    """Work for the CPU: waiting, then running until the CPU's clock reaches ``v_end``; running items in order of
    that, then of seq."""

    __slots__ = ("client", "on_start", "seq", "slot", "start_ns", "token", "v_end", "work_ns")

    def __init__(self, work_ns: int, client: Client | None, token: int, on_start: Handler | None) -> None:
        self.work_ns = work_ns
        self.client = client
        self.token = token
        self.on_start = on_start
        self.v_end = 0.0  # set when it starts
        self.seq = 0
        self.slot = -1
        self.start_ns = 0

    def __lt__(self, other: _Item) -> bool:
        if self.v_end != other.v_end:
            return self.v_end < other.v_end
        return self.seq < other.seq


class PsCpu(Handler):
    """The resource of the module docstring. Done work calls ``client.done(token, start_ns, slot)``: ``slot`` is
    the op thread, -1 for a request's handling."""

    __slots__ = ("_budget", "_busy", "_free_handlers", "_free_threads", "_handles", "_items", "_period_end",
                 "_rate", "_seq", "_t", "_v", "_version", "_waiting", "cores", "engine", "period_ns", "quota_ns",
                 "speed", "threads")

    def __init__(self, engine: Engine, *, cores: float, threads: int, quota: CfsQuota | None = None) -> None:
        self.engine = engine
        self.cores = cores
        self.threads = threads
        limited = quota is not None and quota.applies(cores)
        self.speed = quota.host_cores if quota is not None and limited else cores  # cores usable at once
        self.period_ns = quota.period_ns if quota is not None and limited else None
        self.quota_ns = cores * quota.period_ns if quota is not None and limited else math.inf
        self._budget = self.quota_ns  # CPU left in this period
        self._period_end = self.period_ns or 0
        self._free_threads = list(range(threads))
        self._waiting: deque[_Item] = deque()  # ops waiting for a thread
        self._handles: deque[_Item] = deque()  # requests waiting for a handler
        self._free_handlers = max(1, math.ceil(self.speed - 1e-9))
        self._items: list[_Item] = []
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
        self._advance()
        return self._busy

    def request(self, key: int, dur_ns: int, client: Client, token: int) -> None:
        """Run an op of ``dur_ns`` CPU work on one of the threads; ``client.done(token, start_ns, thread)`` when
        it ends (``key`` is ignored: the PS serves in arrival order, and the engine's event order already is
        arrival order)."""
        del key
        self._waiting.append(_Item(dur_ns, client, token, None))
        self._admit()

    def handle(self, work_ns: int, token: int, *, on_start: Handler | None = None,
               on_done: Client | None = None) -> None:
        """Spend ``work_ns`` of CPU on a transfer request, once a handler is free: ``on_start.fire(token)`` when
        a handler takes it (an event of its own), ``on_done.done(token, start_ns, -1)`` when done."""
        self._handles.append(_Item(work_ns, on_done, token, on_start))
        self._admit()

    def _admit(self) -> None:
        if not ((self._waiting and self._free_threads) or (self._handles and self._free_handlers)):
            return
        self._advance()
        self._take()
        self._reschedule()

    def _take(self) -> None:
        while self._waiting and self._free_threads:
            self._start(self._waiting.popleft(), _pop(self._free_threads))
        while self._handles and self._free_handlers:
            item = self._handles.popleft()
            self._free_handlers -= 1
            self._start(item, -1)
            if item.on_start is not None:
                self.engine.at(self.engine.now, ARRIVE, item.on_start, item.token)

    def _start(self, item: _Item, slot: int) -> None:
        self._seq += 1
        item.v_end, item.seq, item.slot, item.start_ns = self._v + item.work_ns, self._seq, slot, self.engine.now
        _push(self._items, item)

    def _advance(self) -> None:
        """Bring the clocks to now: the items ran at the current rate while the period's budget lasted."""
        now = self.engine.now
        if not self._items:  # idle: every period since ran nothing, so only the current one's budget matters
            self._t = now
            self._renew()
            return
        self._renew()
        while self._t < now:
            end = now if self.period_ns is None else min(now, self._period_end)
            n = len(self._items)
            if n and self._budget > 0:
                using = min(n, self.speed)
                dt = min(end - self._t, self._budget / using)
                self._v += self._rate * dt
                self._busy += using * dt
                self._budget -= using * dt
            self._t = end
            self._renew()

    def _renew(self) -> None:
        """At a period's end: the next period and its full budget."""
        period = self.period_ns
        if period is not None and self._t >= self._period_end:
            self._period_end = (self._t // period + 1) * period
            self._budget = self.quota_ns

    def _reschedule(self) -> None:
        self._version += 1
        n = len(self._items)
        if not n:
            return
        self._rate = min(1.0, self.speed / n)
        need = self._items[0].v_end - self._v
        if need <= _EPS:
            at = self._t
        elif self._budget <= _EPS:  # throttled: nothing runs until the next period
            at = self._period_end
        else:  # the first to finish, the budget running out, or the period ending, whichever comes first
            at = self._t + max(1, math.ceil(min(need / self._rate, self._budget / min(n, self.speed)) - 1e-9))
            if self.period_ns is not None:
                at = min(at, max(self._t + 1, self._period_end))
        self.engine.at(at, DONE, self, self._version)

    def fire(self, argument: int) -> None:
        """The first item may be done (``argument``: the version of the schedule that expected it; a later one
        replaced it if they differ)."""
        if argument != self._version:
            return
        self._advance()
        done = []
        while self._items and self._items[0].v_end <= self._v + _EPS:
            item = _pop(self._items)
            if item.slot >= 0:
                _push(self._free_threads, item.slot)
            else:
                self._free_handlers += 1
            if item.client is not None:
                done.append(item)
        self._take()
        self._reschedule()
        for item in done:
            client = item.client
            assert client is not None  # noqa: S101  (only items with a client are kept)
            client.done(item.token, item.start_ns, item.slot)
