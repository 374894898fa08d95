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
would cost one or two allocations per task and a Python-level call (README, "The compiled engine"). For the
same reason the engine's heap is integers in ``vec[i64]`` that its own code sifts, and the smaller heaps of the
resources hold small objects that compare themselves (compiled, about twice as fast as comparing tuples item by
item). Run as plain Python, the engine's hand-written heap is about twice as slow as ``heapq`` would be: the
price of one source for both.
:class:`Call` and :class:`Notify` wrap a plain function for code that has one.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Final

from librt.vecs import append as vec_append
from librt.vecs import pop as vec_pop
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

    __slots__ = ("_arguments", "_free", "_handlers", "_keys", "_seq", "_seqs", "_slots", "n_events", "now")

    def __init__(self) -> None:
        self.now = 0
        self.n_events = 0
        self._keys: vec[i64] = vec[i64]()
        self._seqs: vec[i64] = vec[i64]()
        self._slots: vec[i64] = vec[i64]()
        self._handlers: list[Handler] = []  # per slot
        self._arguments: vec[i64] = vec[i64]()
        self._free: vec[i64] = vec[i64]()  # slots of spent events
        self._seq: i64 = 0

    def at(self, time_ns: int, priority: int, handler: Handler, argument: int = 0) -> None:
        """Call ``handler.fire(argument)`` at ``time_ns`` (never earlier than now)."""
        time_ns = max(time_ns, self.now)
        if time_ns > MAX_TIME_NS:
            raise OverflowError(f"an event at {time_ns} ns is past the engine's last instant ({MAX_TIME_NS} ns)")
        free = self._free
        if len(free):
            self._free, slot = vec_pop(free)
            self._handlers[slot] = handler
            self._arguments[slot] = argument
        else:
            slot = len(self._handlers)
            self._handlers.append(handler)
            self._arguments = vec_append(self._arguments, argument)
        key: i64 = time_ns << _PRIORITY_BITS | priority
        seq = self._seq
        self._seq = seq + 1
        keys, seqs, slots = self._keys, self._seqs, self._slots
        i: i64 = len(keys)
        keys = vec_append(keys, key)
        seqs = vec_append(seqs, seq)
        slots = vec_append(slots, slot)
        while i > 0:  # up while the parent comes later: with a seq above all others, only a later key does
            parent = (i - 1) >> 1
            if keys[parent] <= key:
                break
            keys[i], seqs[i], slots[i] = keys[parent], seqs[parent], slots[parent]
            i = parent
        keys[i], seqs[i], slots[i] = key, seq, slot
        self._keys, self._seqs, self._slots = keys, seqs, slots

    def _next(self) -> i64:
        """Take the first event off the heap (not empty): its slot; the clock moves to its time."""
        keys, seqs, slots = self._keys, self._seqs, self._slots
        first_key, first_slot = keys[0], slots[0]
        keys, key = vec_pop(keys)
        seqs, seq = vec_pop(seqs)
        slots, slot = vec_pop(slots)
        n = len(keys)
        if n:  # the last one sinks from the top to its place
            i: i64 = 0
            child: i64 = 1
            while child < n:
                ck, cs = keys[child], seqs[child]
                right = child + 1
                if right < n and (keys[right] < ck or (keys[right] == ck and seqs[right] < cs)):
                    child, ck, cs = right, keys[right], seqs[right]
                if key < ck or (key == ck and seq < cs):
                    break
                keys[i], seqs[i], slots[i] = ck, cs, slots[child]
                i = child
                child = 2 * i + 1
            keys[i], seqs[i], slots[i] = key, seq, slot
        self._keys, self._seqs, self._slots = keys, seqs, slots
        self.now = first_key >> _PRIORITY_BITS
        return first_slot

    def run(self, stop: Callable[[], bool] | None = None) -> None:
        """Process events in order until none is left (or ``stop()`` turns true after one)."""
        handlers, nobody = self._handlers, _NOBODY
        while len(self._keys):
            slot = self._next()
            self.n_events += 1
            handler, argument = handlers[slot], self._arguments[slot]
            handlers[slot] = nobody
            self._free = vec_append(self._free, slot)
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
