"""Link models: how one direction of the PS link shares its bandwidth among the transfers in flight.

The PS link is full duplex: pulls of all workers share its outgoing direction, pushes its incoming direction,
each direction with its own bandwidth. A direction serves *queues* by processor sharing: every non-empty
queue's head transfer gets an equal share of the direction's bandwidth; inside a queue transfers go one at a
time, first come first served, and those that arrive together (a worker's requests at step start) in the
policy's order. A link model only says which queue a transfer joins:

- ``fair``: every transfer is its own queue, so all transfers in flight share the bandwidth equally.
- ``fifo`` (the default): one queue for everything: one transfer at a time, the whole bandwidth each. What real
  traces showed: at N = 1, replaying a traced step with ``fifo`` reproduced its step time within 1.3 % on the
  three bundled traces and 0.2-1.8 % on two testbed traces, where ``fair`` missed by up to 7.7 % (the transfer
  requested first finishes first; under ``fair`` the large early-needed tensors all finish last); at N = 2 on
  the testbed the two workers settled into alternation, one pulling while the other pushed, which ``fifo``
  reproduces and ``fair`` does not (equal sharing keeps workers in lock-step: a start offset neither grows
  nor shrinks).
- ``conn``: one queue per worker (its gRPC connection): a worker's transfers go one after the other, different
  workers share the link equally. The probe in DOMAIN.md saw two large pulls of one worker served mostly one
  after the other while transfers of different workers shared the link; this model is that observation.

Every model is work-conserving: whenever a transfer is in flight the direction moves bytes at its full rate,
so with zero latency the busy time is exactly bytes / bandwidth. Each transfer also pays ``latency_ns`` (the
request's trip and gRPC set-up) before it joins its queue; that time does not use the link.

Each worker's own link is assumed as fast as the PS link. Then it never binds: a worker with k of the M
transfers in flight gets k/M of the PS link's rate ≤ its own link's rate under ``fair``, and at most one
transfer at a time under ``fifo``/``conn``. Slower worker links are not modelled.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from typing import Protocol

from tracegen.errors import ConfigError


class LinkModel(Protocol):
    """Which queue of a link direction a transfer joins (see the module docstring)."""

    @property
    def name(self) -> str:
        """Short name used on the command line."""
        ...

    def queue_of(self, *, worker: int, transfer: int) -> Hashable:
        """Queue key for transfer instance ``transfer`` (unique per run) issued by ``worker``."""
        ...


@dataclasses.dataclass(frozen=True, slots=True)
class Fair:
    """Every transfer in flight gets an equal share."""

    name: str = "fair"

    def queue_of(self, *, worker: int, transfer: int) -> Hashable:
        """Its own queue."""
        del worker
        return transfer


@dataclasses.dataclass(frozen=True, slots=True)
class Fifo:
    """One transfer at a time over the whole direction."""

    name: str = "fifo"

    def queue_of(self, *, worker: int, transfer: int) -> Hashable:
        """The single queue."""
        del worker, transfer
        return -1


@dataclasses.dataclass(frozen=True, slots=True)
class Conn:
    """One queue per worker connection; connections share equally."""

    name: str = "conn"

    def queue_of(self, *, worker: int, transfer: int) -> Hashable:
        """The worker's queue."""
        del transfer
        return (worker,)


LINK_MODELS: dict[str, LinkModel] = {m.name: m for m in (Fair(), Fifo(), Conn())}


def link_model(name: str) -> LinkModel:
    """The link model called ``name``; ConfigError names the choices."""
    try:
        return LINK_MODELS[name]
    except KeyError:
        raise ConfigError(f"'link' must be one of {', '.join(LINK_MODELS)} (got {name!r})") from None
