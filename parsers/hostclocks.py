"""Several hosts' clocks put onto one, as far as causality requires and no further (:mod:`parsers.xplane`'s
hosts; the rule is told there).

Input: for pairs of hosts (a, b), how far b's clock may read ahead of a's at most, in ns (a tensor sent by a and
received by b bounds it: it cannot arrive before it left). :func:`least_offsets` gives each host the offset nearest 0
that every bound allows, hosts nearest the reference first; :func:`contradiction` words two hosts' bounds that no
offset satisfies; :func:`linked` tells which hosts some chain of bounds joins to the reference; :func:`span` words a
clock's range.
"""

from __future__ import annotations

import collections
import math
import pathlib
from collections.abc import Iterable, Mapping, Sequence

from parsers.errors import TraceContentError

MAX_CLOCK_HOSTS = 64  # hosts whose clocks are put onto one (cubic in their number) where some must move


def contradiction(a: str, b: str, bounds: Mapping[tuple[str, str], tuple[int, str]],
                  host_files: Mapping[str, str]) -> str:
    """What is wrong when hosts ``a`` and ``b``'s ``bounds`` (each with what set it: ``transfers`` or ``step
    calls``) contradict each other; ``host_files`` names each host's file."""
    (ahead_ns, why), (back_ns, back_why) = bounds[(a, b)], bounds[(b, a)]
    first = "the first's"
    return (f"{_two_files(host_files.get(a, a), host_files.get(b, b))}: no clock offset has every tensor received "
            f"after it was sent: their {why if why == back_why else 'transfers and step calls'} put the second's "
            f"clock {_ahead(ahead_ns, upper=True, of=first)} and {_ahead(-back_ns, upper=False)}")


def _two_files(first: str, second: str) -> str:
    """Two files named for a message: the second by its name alone when it is beside the first."""
    a, b = pathlib.PurePath(first), pathlib.PurePath(second)
    return f"{first} and {b.name if a.parent == b.parent and str(a.parent) != '.' else second}"


def _ahead(ns: float, *, upper: bool, of: str = "") -> str:
    """``ns`` as a bound on how far a clock reads ahead of ``of``'s, in words: an ``upper`` bound (at most 2 ms
    ahead; at least 2 ms behind when ``ns`` is -2 ms), or a lower one (at least 2 ms ahead; at most 2 ms behind)."""
    if ns >= 0:
        return f"at {'most' if upper else 'least'} {ns / 1e6:.3f} ms ahead{f' of {of}' if of else ''}"
    return f"at {'least' if upper else 'most'} {-ns / 1e6:.3f} ms behind{f' {of}' if of else ''}"


def span(lo: float, hi: float) -> str:
    """How far a clock reads ahead of another, from ``lo`` to ``hi`` ns, in words: '... ms behind', '... ahead of'."""
    if lo >= 0:
        return f"{lo / 1e6:.3f} to {hi / 1e6:.3f} ms ahead of"
    if hi <= 0:
        return f"{-hi / 1e6:.3f} to {-lo / 1e6:.3f} ms behind"
    return f"from {-lo / 1e6:.3f} ms behind to {hi / 1e6:.3f} ms ahead of"


def least_offsets(hosts: Sequence[str], reference: str, bounds: Mapping[tuple[str, str], int],
                  host_files: Mapping[str, str]) -> dict[str, tuple[int, float, float]]:
    """How far each host's clock reads ahead of ``reference``'s (ns), each the value nearest 0 that the ``bounds``
    (``(a, b)``: b's clock reads at most so far ahead of a's) allow once the hosts before it are fixed, hosts
    taken nearest the reference first; with the range it had."""
    hosts = [h for h in hosts if h == reference or any(h in pair for pair in bounds)]  # the others stay
    if len(hosts) > MAX_CLOCK_HOSTS:
        raise TraceContentError(f"{', '.join(host_files.get(h, h) for h in hosts[:2])}, ...: the clocks of "
                                f"{len(hosts)} hosts disagree with the order of their transfers; at most "
                                f"{MAX_CLOCK_HOSTS} are put onto one clock")
    index = {h: i for i, h in enumerate(hosts)}
    n = len(hosts)
    dist: list[list[float]] = [[0 if i == j else math.inf for j in range(n)] for i in range(n)]  # ints or inf
    for (a, b), ahead_ns in bounds.items():
        dist[index[a]][index[b]] = min(dist[index[a]][index[b]], ahead_ns)
    for k in range(n):  # Floyd-Warshall: the tightest bound along any chain of hosts
        for i in range(n):
            for j in range(n):
                dist[i][j] = min(dist[i][j], dist[i][k] + dist[k][j])
    cycle = [h for h in hosts if dist[index[h]][index[h]] < 0]
    if cycle:
        raise TraceContentError(f"{', '.join(host_files.get(h, h) for h in cycle)}: no offsets between these hosts' "
                                "clocks have every tensor received after it was sent: the bounds that their transfers "
                                "and step calls set contradict each other around a cycle of hosts")

    def fix(a: int, b: int, ahead: float) -> None:
        for i in range(n):
            for j in range(n):
                dist[i][j] = min(dist[i][j], dist[i][a] + ahead + dist[b][j])

    r = index[reference]
    out: dict[str, tuple[int, float, float]] = {}
    for host in _nearest_first(hosts, reference, bounds):
        h = index[host]
        if h == r:
            continue
        lo, hi = -dist[h][r], dist[r][h]
        ahead_ns = int(min(max(0, lo), hi))
        out[host] = (ahead_ns, lo, hi)
        fix(r, h, ahead_ns)
        fix(h, r, -ahead_ns)
    return out


def _nearest_first(hosts: Sequence[str], reference: str, bounds: Iterable[tuple[str, str]]) -> list[str]:
    """``hosts`` in breadth-first order from ``reference`` over the hosts that ``bounds`` join, each host's
    neighbours by name; hosts joined to none of them after, the same way from each one left, by name."""
    neighbours: dict[str, set[str]] = collections.defaultdict(set)
    for a, b in bounds:
        neighbours[a].add(b)
        neighbours[b].add(a)
    order: list[str] = []
    for root in [reference, *hosts]:
        if root in order:
            continue
        queue = collections.deque([root])
        order.append(root)
        while queue:
            for nxt in sorted(neighbours[queue.popleft()]):
                if nxt not in order:
                    order.append(nxt)
                    queue.append(nxt)
    return order


def linked(reference: str, bounds: Iterable[tuple[str, str]]) -> set[str]:
    """The hosts that ``bounds`` join to ``reference``, itself included."""
    return set(_nearest_first([reference], reference, bounds))
