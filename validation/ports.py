"""Free TCP ports for the TensorFlow tasks tracegen starts on this host.

A port found by binding port 0 comes from the kernel's ephemeral range, where every outgoing connection also
takes its source port. Between that check and the TensorFlow server's own bind, seconds later, one task's
connection to another can take the port, and the server then dies with "Could not start gRPC server" (CI saw
it once: a netbench client). Ports outside the ephemeral range are never handed out to outgoing connections, so
they are chosen there, at random, each one checked by binding it on every address as TensorFlow's server does
(IPv4 and IPv6: a port held on IPv6 alone, once passed as free, would stop the server just the same).
"""

from __future__ import annotations

import contextlib
import errno
import pathlib
import random
import socket

EPHEMERAL_RANGE_FILE = pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range")
DEFAULT_EPHEMERAL = (32_768, 60_999)  # Linux's default, for when the file cannot be read
LOWEST_PORT = 10_000  # below this sit the well-known and registered services people run
MAX_TRIES = 500


def ephemeral_range(path: pathlib.Path = EPHEMERAL_RANGE_FILE) -> tuple[int, int]:
    """(lowest, highest) source port the kernel gives outgoing connections."""
    try:
        low, high = (int(field) for field in path.read_text().split())
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL
    return (low, high) if 0 < low <= high <= 65_535 else DEFAULT_EPHEMERAL


def candidate_ports(ephemeral: tuple[int, int], lowest: int = LOWEST_PORT) -> list[int]:
    """Ports from ``lowest`` to 65535 outside ``ephemeral`` (empty when the range covers them all)."""
    low, high = ephemeral
    return [p for p in range(lowest, 65_536) if not low <= p <= high]


def free_ports(count: int, rng: random.Random | None = None, *, lowest: int = LOWEST_PORT) -> list[int]:
    """``count`` distinct TCP ports from ``lowest`` up that nothing is bound to now, outside the ephemeral range
    where it leaves room (module docstring); the kernel's choice otherwise. The ports are not held: start the
    servers soon. ``lowest`` keeps clear of ranges a program reserves for itself (Ray's workers: 10002-19999)."""
    rng = rng or random.SystemRandom()
    candidates = candidate_ports(ephemeral_range(), lowest)
    rng.shuffle(candidates)
    with contextlib.ExitStack() as stack:
        held: list[int] = []
        for port in candidates[:MAX_TRIES]:
            if len(held) == count:
                break
            if _bind_everywhere(stack, port):
                held.append(port)
        while len(held) < count:
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind(("", 0))
            held.append(int(sock.getsockname()[1]))
        return held


def _bind_everywhere(stack: contextlib.ExitStack, port: int) -> bool:
    """Whether ``port`` binds on every IPv4 address and, where the host has IPv6, every IPv6 one (gRPC's server
    listens on both: a port another program holds on IPv6 alone would make it fail); the sockets stay in
    ``stack``, so that the ports asked for next are other ones."""
    v4 = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    try:
        v4.bind(("", port))
    except OSError:
        return False
    if not socket.has_ipv6:
        return True
    try:
        v6 = stack.enter_context(socket.socket(socket.AF_INET6, socket.SOCK_STREAM))
    except OSError:  # the kernel has IPv6 turned off
        return True
    v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)  # beside the IPv4 socket, not over it
    try:
        v6.bind(("::", port))
    except OSError as exc:
        return exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT)  # no IPv6 address to bind: IPv4 only
    return True


def free_port(*, lowest: int = LOWEST_PORT) -> int:
    """One port as :func:`free_ports` chooses them."""
    return free_ports(1, lowest=lowest)[0]
