"""The discrete-event engine and its CPU resource, in SimPy's shape: one :class:`Engine` owns the clock and the
event heap; each thing that can be busy is an object with a small interface (``request``, and a call back when
the work is done). The PS link, the other resource kind, lives in :mod:`tracegen.link`.

Events (:meth:`Engine.at`) are ordered by ``(time_ns, priority, seq)``: at equal times lower priorities run first
(work that finishes before work that starts; last, the transfers requested at that instant begin, so that they
begin in their policy's order whichever was requested first), and ``seq`` keeps the order of scheduling among
equals, so a run is deterministic. Time is integer nanoseconds; nothing here reads a clock or draws a random number.

An event calls ``handler.fire(argument)``, and finished work calls ``client.done(token, start_ns, slot)``: a
:class:`Handler` or :class:`Client` is an object, and the integers say what happened to what (each resource and
the simulation decode their own). Compiled, these are direct calls with no object made per event; closures
would cost one or two allocations per task and a Python-level call (docs/model.md, "The compiled engine"). For the
same reason the engine's heap is integers in ``vec[i64]`` that its own code sifts, and the smaller heaps of the
resources hold small objects that compare themselves (compiled, about twice as fast as comparing tuples item by
item). Run as plain Python, the engine with its hand-written heap is about 1.7 times as slow as with ``heapq``: the
price of one source for both.
:class:`Call` and :class:`Notify` wrap a plain function for code that has one.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Final

from librt.vecs import append as vec_append
from librt.vecs import vec
from mypy_extensions import i64, trait

# the heap functions as constants: compiled, a call then reads no module attribute
_push: Final = heapq.heappush
_pop: Final = heapq.heappop

# priorities at equal times: completions first, then arrivals and dispatches, then step starts, then the launch of
# the transfers requested at that instant
DONE: Final = 0
ARRIVE: Final = 1
START: Final = 2
LAUNCH: Final = 3


@trait
class Handler:
    """What an event calls."""

    def fire(self, argument: int) -> None:
        """The event's moment has come (``argument``: what the scheduler said when it scheduled it)."""
        raise NotImplementedError


@trait
class Client:
    """What a resource calls when work it was given is done."""

    def done(self, token: int, start_ns: int, slot: int) -> None:
        """The work given with ``token`` is done; it began at ``start_ns`` on thread ``slot`` (-1: none)."""
        raise NotImplementedError


class Call(Handler):
    """A handler that calls ``function(argument)``."""

    def __init__(self, function: Callable[[int], None]) -> None:
        self.function = function

    def fire(self, argument: int) -> None:
        """Calls the function."""
        self.function(argument)


class Notify(Client):
    """A client that calls ``function(start_ns, slot)``."""

    def __init__(self, function: Callable[[int, int], None]) -> None:
        self.function = function

    def done(self, token: int, start_ns: int, slot: int) -> None:
        """Calls the function."""
        del token
        self.function(start_ns, slot)


class _Nobody(Handler):
    """The handler of a spent event's slot (it holds no reference to anything)."""

    def fire(self, argument: int) -> None:
        """Never called: a spent event is not in the heap."""
        raise AssertionError(f"a spent event fired ({argument})")


_NOBODY: Final = _Nobody()
_PRIORITY_BITS: Final = 2  # DONE .. LAUNCH
MAX_TIME_NS: Final = (1 << (63 - _PRIORITY_BITS)) - 1  # 73 years: an event's key is (time << 2 | priority) in an i64


class Engine:
    """The clock and the event heap. An event is ``handler.fire(argument)`` at ``time_ns``, ordered by ``(time_ns,
    priority, seq)``. The heap is three ``vec[i64]`` (librt): each event's ``time_ns << 2 | priority``, its seq,
    and its slot, where its handler and argument wait. Compiled, sifting compares and moves C integers; a heap of
    event objects (``heapq``) called each one's ``__lt__`` through Python's protocol at every level, a fifth of
    a 16-worker run. Any heap pops the same events in the same order: no two have the same ``(key, seq)``. Slots
    are reused: a run makes one only while more events are pending than ever before."""

    __slots__ = ("_arguments", "_free", "_handlers", "_keys", "_n", "_n_free", "_seq", "_seqs", "_slots",
                 "n_events", "now")

    def __init__(self) -> None:
        self.now = 0
        self.n_events = 0
        # the heap: its first _n items (the vecs only grow, so that taking an event resizes nothing)
        self._keys: vec[i64] = vec[i64]()
        self._seqs: vec[i64] = vec[i64]()
        self._slots: vec[i64] = vec[i64]()
        self._n: i64 = 0
        self._handlers: list[Handler] = []  # per slot
        self._arguments: vec[i64] = vec[i64]()
        self._free: vec[i64] = vec[i64]()  # its first _n_free: slots of spent events
        self._n_free: i64 = 0
        self._seq: i64 = 0

    def at(self, time_ns: int, priority: int, handler: Handler, argument: int = 0) -> None:
        """Call ``handler.fire(argument)`` at ``time_ns`` (never earlier than now)."""
        time_ns = max(time_ns, self.now)
        if time_ns > MAX_TIME_NS:
            raise OverflowError(f"an event at {time_ns} ns is past the engine's last instant ({MAX_TIME_NS} ns)")
        slot: i64
        if self._n_free:
            self._n_free -= 1
            slot = self._free[self._n_free]
            self._handlers[slot] = handler
            self._arguments[slot] = argument
        else:
            slot = len(self._handlers)
            self._handlers.append(handler)
            self._arguments = vec_append(self._arguments, argument)
        key: i64 = time_ns << _PRIORITY_BITS | priority
        seq = self._seq
        self._seq = seq + 1
        i = self._n
        self._n = i + 1
        if i == len(self._keys):
            self._keys = vec_append(self._keys, key)
            self._seqs = vec_append(self._seqs, seq)
            self._slots = vec_append(self._slots, slot)
        keys = self._keys
        seqs = self._seqs
        slots = self._slots
        while i > 0:  # up while the parent comes later: with a seq above all others, only a later key does
            parent = (i - 1) >> 1
            parent_key = keys[parent]
            if parent_key <= key:
                break
            keys[i] = parent_key
            seqs[i] = seqs[parent]
            slots[i] = slots[parent]
            i = parent
        keys[i] = key
        seqs[i] = seq
        slots[i] = slot

    def _next(self) -> i64:
        """Take the first event off the heap (not empty): its slot; the clock moves to its time."""
        keys = self._keys
        seqs = self._seqs
        slots = self._slots
        first_key = keys[0]
        first_slot = slots[0]
        n = self._n - 1
        self._n = n
        if n:  # the last one sinks from the top to its place
            key = keys[n]
            seq = seqs[n]
            slot = slots[n]
            i: i64 = 0
            child: i64 = 1
            while child < n:
                child_key = keys[child]
                child_seq = seqs[child]
                right = child + 1
                if right < n:
                    right_key = keys[right]
                    if right_key < child_key or (right_key == child_key and seqs[right] < child_seq):
                        child = right
                        child_key = right_key
                        child_seq = seqs[right]
                if key < child_key or (key == child_key and seq < child_seq):
                    break
                keys[i] = child_key
                seqs[i] = child_seq
                slots[i] = slots[child]
                i = child
                child = 2 * i + 1
            keys[i] = key
            seqs[i] = seq
            slots[i] = slot
        self.now = first_key >> _PRIORITY_BITS
        return first_slot

    def run(self, stop: Callable[[], bool] | None = None) -> None:
        """Process events in order until none is left (or ``stop()`` turns true after one)."""
        handlers, nobody = self._handlers, _NOBODY
        while self._n:
            slot = self._next()
            self.n_events += 1
            handler = handlers[slot]
            argument = self._arguments[slot]
            handlers[slot] = nobody
            if self._n_free == len(self._free):
                self._free = vec_append(self._free, slot)
            else:
                self._free[self._n_free] = slot
            self._n_free += 1
            handler.fire(argument)
            if stop is not None and stop():
                return


class _Waiting:
    """Work waiting for a thread, in order of its key, then of its request."""

    __slots__ = ("client", "dur_ns", "key", "seq", "token")

    def __init__(self, key: int, seq: int, dur_ns: int, client: Client, token: int) -> None:
        self.key = key
        self.seq = seq
        self.dur_ns = dur_ns
        self.client = client
        self.token = token

    def __lt__(self, other: _Waiting) -> bool:
        if self.key != other.key:
            return self.key < other.key
        return self.seq < other.seq


class _Thread:
    """What runs on one thread of a pool: since when, and whom to tell when it is done."""

    __slots__ = ("client", "start_ns", "token")

    def __init__(self) -> None:
        self.start_ns = 0
        self.client: Client | None = None
        self.token = 0


class CpuPool(Handler):
    """``threads`` identical threads. A request waits until a thread is free; waiting requests start in order of
    their key (lowest first; ties in request order)."""

    __slots__ = ("_free", "_queue", "_seq", "_threads", "engine", "threads")

    def __init__(self, engine: Engine, threads: int) -> None:
        self.engine = engine
        self.threads = threads
        self._free = list(range(threads))
        self._queue: list[_Waiting] = []
        self._seq = 0
        self._threads = [_Thread() for _ in range(threads)]

    def request(self, key: int, dur_ns: int, client: Client, token: int) -> None:
        """Run work of ``dur_ns`` on a thread; ``client.done(token, start_ns, thread)`` is called when it ends."""
        if self._free and not self._queue:  # starts at once: no need to queue it
            self._run(dur_ns, client, token)
            return
        _push(self._queue, _Waiting(key, self._seq, dur_ns, client, token))
        self._seq += 1
        self._dispatch()

    def idle(self) -> bool:
        """Whether a request made now would start at once."""
        return bool(self._free) and not self._queue

    def _run(self, dur_ns: int, client: Client, token: int) -> None:
        engine = self.engine
        thread = _pop(self._free)
        running = self._threads[thread]
        running.start_ns = engine.now
        running.client = client
        running.token = token
        engine.at(engine.now + dur_ns, DONE, self, thread)

    def _dispatch(self) -> None:
        queue = self._queue
        while queue and self._free:
            waiting = _pop(queue)
            self._run(waiting.dur_ns, waiting.client, waiting.token)

    def fire(self, argument: int) -> None:
        """The work on thread ``argument`` is done: its thread is free, and what the work's end makes ready is
        requested before the waiting work takes the thread, so that all of it starts in key order."""
        thread = argument
        running = self._threads[thread]
        client = running.client
        assert client is not None  # noqa: S101  (a thread's end is scheduled only with its work)
        running.client = None  # the pool keeps no client between runs (no reference cycle)
        _push(self._free, thread)
        client.done(running.token, running.start_ns, thread)
        if self._queue:
            self._dispatch()
