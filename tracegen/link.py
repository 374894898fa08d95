"""The PS link as a flow-level resource: transfers in flight share each direction's rate, re-shared whenever one
starts or ends.

The link has two directions: *pull* (PS -> workers: parameters) and *push* (workers -> PS: gradients). What a
direction can carry is a :class:`LinkSpec`, built from a measured link profile (``tracegen netbench``), from a
given bandwidth, or from the trace alone:

- ``capacity(direction, k, other_busy)``: bytes/s the direction carries with ``k`` connections active, alone or
  while the other direction is busy too (the profile's ``pull``/``push`` and ``both`` points, interpolated
  linearly in k, flat beyond the largest k measured). Two-way traffic loses rate because each direction's
  acknowledgements and requests queue behind the other direction's data (DOMAIN.md; Zhang, Shenker & Clark 1991).
- ``connection_bytes_per_s``: the most one worker's connection moves (what the single-worker trace showed:
  the worker's own CPU and gRPC stack, which a profile taken with strong clients does not see).
- ``ps_cores`` and ``rpc_cpu_ns``: the PS host's CPU (cores; None when unknown) and the CPU it spends serving one
  transfer request beyond the ops a trace shows, per direction (:mod:`tracegen.pscpu` shares the cores with the
  PS's ops): from a single-worker measurement of the PS's CPU per step when there is one, else from netbench's
  small-tensor points (:mod:`tracegen.linkspec`). ``ps_quota``: how a fractional ``ps_cores`` is enforced
  (:class:`~tracegen.pscpu.CfsQuota`; None: the PS simply has that many cores).
- ``latency_ns`` and ``queue_delay_ns``: a transfer starts moving ``latency_ns`` after it is requested, plus the
  queue delay of the direction its request crosses if that direction is busy then: the request waits behind the
  data queued there (the profile's small request round trip under load, less its round trip on the idle link).
  In TensorFlow a worker requests its parameters at step start (the requests cross the push direction); the
  PS requests each gradient as its step begins, long before the gradient exists, so a push waits for no
  request; and the worker learns its step is over when the PS's reply has crossed the pull direction.

Within a direction, transfers join *queues* (:class:`LinkModel`): ``conn`` (default) one queue per worker
connection, served one transfer at a time, first come first served (those requested at the same nanosecond in
the policy's order, the first of them included: a transfer that finds its queue idle starts once everything else
of that nanosecond has happened, the engine's ``LAUNCH``); ``fifo`` one queue for everyone; ``fair`` a queue per
transfer. The heads of all non-empty queues share the direction's capacity equally (max-min with
equal limits), each at most ``connection_bytes_per_s``. A direction is thus work-conserving up to its capacity.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from typing import Final

from mypy_extensions import mypyc_attr, trait

from tracegen.engine import DONE, LAUNCH, Client, Engine, Handler
from tracegen.errors import ConfigError
from tracegen.pscpu import CfsQuota

PULL: Final = 0
PUSH: Final = 1
DIRECTIONS = ("pull", "push")
Table = tuple[tuple[int, float], ...]  # (connections, bytes per second), by connections
MAX_RPC_CPU_NS: Final = 1e9  # the most a transfer request may cost the PS's CPU (1 s)
_EPS_BYTES: Final = 1e-3


def interpolate(table: Table, k: int) -> float:
    """The table's rate at ``k`` connections: linear between measured counts, flat outside them."""
    if k <= table[0][0]:
        return table[0][1]
    for (k0, r0), (k1, r1) in itertools.pairwise(table):
        if k <= k1:
            return r0 + (r1 - r0) * (k - k0) / (k1 - k0)
    return table[-1][1]


@mypyc_attr(native_class=False)  # a plain class when compiled: pickles as one
@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class LinkSpec:
    """What the PS link can do (module docstring). Rates in bytes per second, delays in nanoseconds; every table
    is per direction (pull, push) and sorted by connections."""

    alone: tuple[Table, Table]
    both: tuple[Table, Table]
    connection_bytes_per_s: tuple[float, float]
    latency_ns: int
    queue_delay_ns: tuple[Table, Table] = (((1, 0.0),), ((1, 0.0),))
    ps_cores: float | None = None
    rpc_cpu_ns: tuple[float, float] = (0.0, 0.0)
    ps_quota: CfsQuota | None = None
    description: str = ""

    def __post_init__(self) -> None:
        for name in ("alone", "both", "queue_delay_ns"):
            for table in getattr(self, name):
                if not table or any(k < 1 or not math.isfinite(r) or r < 0 for k, r in table):
                    raise ConfigError(f"link {name} table must list (connections >= 1, rate >= 0) (got {table!r})")
                if [k for k, _ in table] != sorted({k for k, _ in table}):
                    raise ConfigError(f"link {name} table must be sorted by distinct connection counts")
        for name in ("alone", "both"):
            if any(r <= 0 for table in getattr(self, name) for _, r in table):
                raise ConfigError(f"link {name} rates must be > 0 bytes/s")
        if self.ps_cores is not None and not 0 < self.ps_cores <= 4096:
            raise ConfigError(f"'ps_cores' must be in (0, 4096] (got {self.ps_cores})")
        if not all(0 <= c <= MAX_RPC_CPU_NS for c in self.rpc_cpu_ns):
            raise ConfigError(f"'rpc_cpu_ns' must be from 0 to {MAX_RPC_CPU_NS:g} (got {self.rpc_cpu_ns})")
        if min(self.connection_bytes_per_s) <= 0 or self.latency_ns < 0:
            raise ConfigError(f"link per-connection rates must be > 0 and latency >= 0 (got "
                              f"{self.connection_bytes_per_s}, {self.latency_ns})")

    def capacity(self, direction: int, k: int, other_busy: bool) -> float:
        """Bytes/s the direction carries with ``k`` >= 1 active connections."""
        return interpolate((self.both if other_busy else self.alone)[direction], k)

    def peak_bytes_per_s(self, direction: int) -> float:
        """The most the direction ever carries (the reference for its utilisation)."""
        return max(r for table in (self.alone[direction], self.both[direction]) for _, r in table)

    def ps_work_ns(self, traced_ns: int) -> int:
        """CPU work of a PS op the trace timed at ``traced_ns`` (less than that under a quota it outlasted)."""
        if self.ps_quota is None or self.ps_cores is None:
            return traced_ns
        return self.ps_quota.work_ns(self.ps_cores, traced_ns)

    def queue_delay(self, direction: int, k: int) -> int:
        """Extra wait of anything crossing the direction while ``k`` connections keep it busy."""
        return round(interpolate(self.queue_delay_ns[direction], k))


def uniform_link(bytes_per_s: Sequence[float], *, connection_bytes_per_s: Sequence[float] | None = None,
                 latency_ns: int = 0, two_way_bytes_per_s: Sequence[float] | None = None,
                 description: str = "") -> LinkSpec:
    """A link whose capacity does not depend on the number of connections: ``bytes_per_s`` per direction (pull,
    push), ``two_way_bytes_per_s`` while both are busy (default: the same)."""
    alone = tuple(((1, float(r)),) for r in bytes_per_s)
    both = alone if two_way_bytes_per_s is None else tuple(((1, float(r)),) for r in two_way_bytes_per_s)
    conn = tuple(float(r) for r in (connection_bytes_per_s or bytes_per_s))
    return LinkSpec(alone=(alone[0], alone[1]), both=(both[0], both[1]), connection_bytes_per_s=(conn[0], conn[1]),
                    latency_ns=latency_ns, description=description)


@trait
class LinkModel:
    """Which queue of a direction a transfer joins. Queues are named by integers (compiled, a native call and an
    integer key cost a transfer far less than a Python-level call and a tuple)."""

    def queue_of(self, worker: int, transfer: int) -> int:
        """Queue key for transfer instance ``transfer`` (unique per run, > 0) issued by ``worker`` (>= 0)."""
        raise NotImplementedError


class Conn(LinkModel):
    """One queue per worker connection (gRPC serves one worker's tensors mostly one after another)."""

    def queue_of(self, worker: int, transfer: int) -> int:
        """The worker's queue."""
        del transfer
        return worker


class Fifo(LinkModel):
    """One queue for the whole direction: one transfer at a time."""

    def queue_of(self, worker: int, transfer: int) -> int:
        """The single queue."""
        del worker, transfer
        return -1


class Fair(LinkModel):
    """Every transfer its own queue: all in flight share equally."""

    def queue_of(self, worker: int, transfer: int) -> int:
        """Its own queue."""
        del worker
        return transfer


LINK_MODELS: dict[str, LinkModel] = {"conn": Conn(), "fifo": Fifo(), "fair": Fair()}  # by the name the CLI takes


def link_model(name: str) -> LinkModel:
    """The link model called ``name``; ConfigError names the choices."""
    try:
        return LINK_MODELS[name]
    except KeyError:
        raise ConfigError(f"'link' must be one of {', '.join(LINK_MODELS)} (got {name!r})") from None


class _Transfer:
    """A transfer, from its request to its arrival: first waiting in its queue, in the queue's order
    (:meth:`queued_before`: when it was requested, then its priority); then moving as its queue's head, done when
    its group's clock reaches ``v_end`` (heads in order of that, then of seq: :class:`_Heads`). One
    object for both, so that starting to move allocates nothing."""

    __slots__ = ("client", "key", "limit", "priority", "requested_ns", "seq", "size", "start_ns", "token", "v_end")

    def __init__(self, requested_ns: int, priority: int, seq: int, size: int, limit: float, client: Client,
                 token: int, key: int) -> None:
        self.requested_ns = requested_ns
        self.priority = priority
        self.seq = seq
        self.size = size
        self.limit = limit
        self.client = client
        self.token = token
        self.key = key  # its queue
        self.v_end = 0.0  # set when it starts to move
        self.start_ns = 0

    def queued_before(self, other: _Transfer) -> bool:
        """Whether it leaves its queue before ``other``."""
        if self.requested_ns != other.requested_ns:
            return self.requested_ns < other.requested_ns
        if self.priority != other.priority:
            return self.priority < other.priority
        return self.seq < other.seq


class _SortedFront:
    """Transfers in order, a list sorted from ``first`` on (:meth:`_before` says the order). Transfers mostly join
    in order, so joining is usually an append and leaving a step of ``first``, where a heap would sift through
    every one waiting (up to a step's tensors, or a thousand workers' heads) with a comparison called through
    Python's protocol at each level."""

    __slots__ = ("first", "items")

    def __init__(self) -> None:
        self.items: list[_Transfer] = []
        self.first = 0

    def __len__(self) -> int:
        return len(self.items) - self.first

    def _before(self, a: _Transfer, b: _Transfer) -> bool:
        """Whether ``a`` leaves before ``b``."""
        raise NotImplementedError

    def add(self, transfer: _Transfer) -> None:
        """``transfer`` joins in its place (after any it is not before: seq makes them all different)."""
        items = self.items
        if len(items) == self.first or self._before(items[-1], transfer):
            items.append(transfer)
            return
        low, high = self.first, len(items)
        while low < high:
            mid = (low + high) >> 1
            if self._before(transfer, items[mid]):
                high = mid
            else:
                low = mid + 1
        items.insert(low, transfer)

    def front(self) -> _Transfer:
        """The first transfer (not empty)."""
        return self.items[self.first]

    def take(self) -> _Transfer:
        """The first transfer, leaving (not empty)."""
        first = self.first
        transfer = self.items[first]
        first += 1
        if first == len(self.items):
            self.items.clear()
            first = 0
        elif first >= 64 and 2 * first >= len(self.items):  # the list's front is spent: drop it
            del self.items[:first]
            first = 0
        self.first = first
        return transfer


class _Queue(_SortedFront):
    """A queue's transfers not yet moving, in order (:meth:`_Transfer.queued_before`)."""

    __slots__ = ()

    def _before(self, a: _Transfer, b: _Transfer) -> bool:
        return a.queued_before(b)


class _Heads(_SortedFront):
    """A group's transfers moving, in the order they will be done (``<``: their ``v_end``, then seq): all of a
    group's heads receive the same rate, so that order holds until they are done."""

    __slots__ = ()

    def _before(self, a: _Transfer, b: _Transfer) -> bool:
        return a.v_end < b.v_end or (a.v_end == b.v_end and a.seq < b.seq)


class _Group:
    """The heads of one direction that share one rate limit: a virtual clock of the bytes each has received."""

    __slots__ = ("heads", "limit", "rate", "v")

    def __init__(self, limit: float) -> None:
        self.limit = limit  # bytes/s, the most each head receives
        self.heads = _Heads()
        self.v = 0.0  # bytes every head of the group has received since the run began (equal shares)
        self.rate = 0.0  # bytes/s each head receives now


class _Direction:
    """One direction: waiting queues, and the heads being served, grouped by their rate limit (one group unless
    some workers' own links limit their connections below the link's per-connection rate)."""

    __slots__ = ("by_limit", "groups", "moved", "n_heads", "pending", "queues", "version")

    def __init__(self) -> None:
        self.queues: dict[int, _Queue] = {}  # per queue, its transfers not yet moving
        self.pending: list[int] = []  # queues that had no head, to get one when this instant's requests are in
        self.by_limit: dict[float, _Group] = {}  # rate limit, bytes/s -> its group; never removed (clocks run on)
        self.groups: list[_Group] = []  # lowest limit first; replaced, not mutated
        self.n_heads = 0
        self.moved = 0.0  # bytes carried so far
        self.version = 0

    def group(self, limit: float) -> _Group:
        """The group of heads limited to ``limit`` bytes/s (made on first use)."""
        g = self.by_limit.get(limit)
        if g is None:
            g = self.by_limit[limit] = _Group(limit)
            self.groups = sorted(self.by_limit.values(), key=lambda group: group.limit)  # for the max-min sharing
        return g


class FlowLink(Handler):
    """The PS link resource (module docstring): ``start`` a transfer, get a call when it has arrived.

    ``worker_bytes_per_s``: per worker, the rate of its own link (each direction; 0 or absent: no limit of its
    own). A transfer of that worker then moves at most that fast, as if each of its connections had the worker's
    link to itself; the direction's capacity is shared max-min among heads with different limits."""

    __slots__ = ("_capacity", "_connection_bytes_per_s", "_dirs", "_latency_ns", "_queue_delay", "_seq", "_t",
                 "engine", "model", "spec", "worker_bytes_per_s")

    def __init__(self, engine: Engine, spec: LinkSpec, model: LinkModel,
                 worker_bytes_per_s: Sequence[float] = ()) -> None:
        self.engine, self.spec, self.model = engine, spec, model
        self.worker_bytes_per_s = tuple(worker_bytes_per_s)
        self._dirs = (_Direction(), _Direction())
        # the spec's answers, kept: by direction, other direction busy or not, then number of connections (-1: not
        # asked yet); and by direction, then number of connections
        self._capacity: list[list[float]] = [[], [], [], []]
        self._queue_delay: list[list[int]] = [[], []]
        # the spec's figures every transfer reads, as attributes of this (compiled) object
        self._latency_ns = spec.latency_ns
        self._connection_bytes_per_s = spec.connection_bytes_per_s
        self._seq = 0
        self._t = 0

    def busy(self, direction: int) -> bool:
        """Whether a transfer is moving in ``direction``."""
        return bool(self._dirs[direction].n_heads)

    def moved_bytes(self, direction: int) -> float:
        """Bytes carried in ``direction`` up to now."""
        d = self._dirs[direction]
        dt = self.engine.now - self._t
        return d.moved + sum(g.rate * len(g.heads) * dt / 1e9 for g in d.groups)

    def crossing_delay(self, direction: int) -> int:
        """How long a small message crossing ``direction`` now waits behind its queue (0 when it is idle)."""
        k = self._dirs[direction].n_heads
        if not k:
            return 0
        known = self._queue_delay[direction]
        while len(known) <= k:
            known.append(-1)
        if known[k] < 0:
            known[k] = self.spec.queue_delay(direction, k)
        return known[k]

    def request_delay(self, request_crosses: int | None) -> int:
        """From requesting a transfer to its data starting to move: the link's latency, plus the queue delay of
        the direction the request crosses (None when the request was made long before, as the PS's requests for
        gradients are)."""
        return self._latency_ns + (0 if request_crosses is None else self.crossing_delay(request_crosses))

    def limit(self, direction: int, worker: int) -> float:
        """The most one of ``worker``'s transfers in ``direction`` moves, bytes/s."""
        conn = self._connection_bytes_per_s[direction]
        own = self.worker_bytes_per_s[worker] if worker < len(self.worker_bytes_per_s) else 0.0
        return min(conn, own) if own > 0 else conn

    def start(self, direction: int, worker: int, size_bytes: int, priority: int, client: Client, token: int) -> None:
        """The transfer's data starts moving now, in its queue's order; ``client.done(token, start_ns, -1)`` when
        it has arrived (``start_ns``: when it began to move)."""
        self._seq += 1
        seq, size, now = self._seq, size_bytes, self.engine.now
        if size <= 0:
            client.done(token, now, -1)
            return
        d = self._dirs[direction]
        key = self.model.queue_of(worker, seq)
        queue = d.queues.get(key)
        limit = self.limit(direction, worker)
        transfer = _Transfer(now, priority, seq, size, limit, client, token, key)
        if queue is None:  # its queue is idle: it starts once every transfer requested at this instant has joined
            queue = d.queues[key] = _Queue()
            queue.add(transfer)
            if not d.pending:
                self.engine.at(now, LAUNCH, self, direction << 1)
            d.pending.append(key)
        else:
            queue.add(transfer)

    def fire(self, argument: int) -> None:
        """An event of this link: ``argument`` is ``(version << 2) | (direction << 1) | wake``: a launch of the
        direction's pending queues, or a wake for the completion the direction's schedule ``version`` expected."""
        direction = (argument >> 1) & 1
        if argument & 1:
            self._wake(direction, argument >> 2)
        else:
            self._launch(direction)

    def _launch(self, direction: int) -> None:
        """The idle queues that transfers joined at this instant start their first, in the queue's order (the
        policy's among transfers requested together, not the first to be requested)."""
        self._advance()
        d = self._dirs[direction]
        was_busy = d.n_heads > 0
        now = self.engine.now
        for key in d.pending:
            transfer = d.queues[key].take()
            g = d.group(transfer.limit)
            transfer.v_end, transfer.start_ns = g.v + transfer.size, now
            g.heads.add(transfer)
            d.n_heads += 1
        d.pending = []
        self._reshare(direction, was_busy)

    def _advance(self) -> None:
        """Bring both directions' clocks and byte counts to now at the rates that held since the last change."""
        now = self.engine.now
        dt = now - self._t
        if dt:
            for direction in range(2):  # (compiled, a plain loop: no iterator over the tuple)
                d = self._dirs[direction]
                if d.n_heads:
                    for g in d.groups:
                        if len(g.heads):
                            g.v += g.rate * dt / 1e9
                            d.moved += g.rate * len(g.heads) * dt / 1e9
            self._t = now

    def _reshare(self, changed: int, was_busy: bool) -> None:
        """New rates after the set of heads of direction ``changed`` changed (max-min: the lowest limits first, each
        group at most its limit, the rest shared equally), and the next completion of each direction. The other
        direction's rates change only if ``changed`` has started or stopped being busy (``was_busy``: before):
        otherwise its next completion stays as scheduled."""
        spec = self.spec
        flipped = was_busy != (self._dirs[changed].n_heads > 0)
        for direction in range(2):
            if direction != changed and not flipped:
                continue
            d = self._dirs[direction]
            k = d.n_heads
            d.version += 1
            if not k:
                continue
            other_busy = self._dirs[1 - direction].n_heads > 0
            known = self._capacity[2 * direction + other_busy]
            while len(known) <= k:
                known.append(-1.0)
            capacity = known[k]
            if capacity < 0:
                capacity = known[k] = spec.capacity(direction, k, other_busy)
            left = k
            at = -1
            for g in d.groups:
                n = len(g.heads)
                if not n:
                    continue
                g.rate = min(g.limit, capacity / left)
                capacity -= g.rate * n
                left -= n
                need = g.heads.front().v_end - g.v
                # done already (up to rounding): now; else at least 1 ns later, so that time always advances
                due = self._t if need <= _EPS_BYTES else self._t + max(1, math.ceil(need * 1e9 / g.rate - 1e-6))
                at = due if at < 0 else min(at, due)
            assert at >= 0  # noqa: S101  (k > 0 heads: some group has one)
            self.engine.at(at, DONE, self, (d.version << 2) | (direction << 1) | 1)

    def _wake(self, direction: int, version: int) -> None:
        d = self._dirs[direction]
        if version != d.version:
            return  # rescheduled since
        self._advance()
        now = self.engine.now
        was_busy = d.n_heads > 0
        finished = []
        for g in d.groups:  # a group made meanwhile replaces the list, not this one
            heads = g.heads
            while len(heads) and heads.front().v_end <= g.v + _EPS_BYTES:
                head = heads.take()
                d.n_heads -= 1
                queue = d.queues[head.key]
                if len(queue):
                    nxt = queue.take()
                    nxt_group = d.group(nxt.limit)
                    nxt.v_end, nxt.start_ns = nxt_group.v + nxt.size, now
                    nxt_group.heads.add(nxt)
                    d.n_heads += 1
                else:
                    del d.queues[head.key]
                finished.append(head)
        self._reshare(direction, was_busy)
        for head in finished:
            head.client.done(head.token, head.start_ns, -1)
