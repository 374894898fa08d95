"""validation.ports: ports for TensorFlow tasks, chosen where outgoing connections never take theirs."""

from __future__ import annotations

import pathlib
import random
import socket

import pytest

from validation.ports import DEFAULT_EPHEMERAL, candidate_ports, ephemeral_range, free_ports


def test_the_ephemeral_range_is_read_from_the_kernel_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "ip_local_port_range"
    path.write_text("40000\t50000\n")
    assert ephemeral_range(path) == (40_000, 50_000)
    for bad in ("", "1 2 3", "x y", "50000 40000", "0 70000"):
        path.write_text(bad)
        assert ephemeral_range(path) == DEFAULT_EPHEMERAL, bad
    assert ephemeral_range(tmp_path / "missing") == DEFAULT_EPHEMERAL


def test_candidates_leave_out_the_ephemeral_range_and_low_ports() -> None:
    ports = candidate_ports((32_768, 60_999))
    assert ports[0] == 10_000 and ports[-1] == 65_535
    assert not any(32_768 <= p <= 60_999 for p in ports)
    assert candidate_ports((1, 65_535)) == []


def test_free_ports_are_distinct_bindable_and_outside_the_range() -> None:
    low, high = ephemeral_range()
    ports = free_ports(20)
    assert len(set(ports)) == 20
    assert not any(low <= p <= high for p in ports)
    assert min(free_ports(50, lowest=20_000)) >= 20_000  # clear of a range another program keeps (Ray's workers)
    for port in ports:
        with socket.socket() as s:
            s.bind(("", port))


def test_a_port_in_use_is_passed_over() -> None:
    first = candidate_ports(ephemeral_range())
    random.Random(7).shuffle(first)  # noqa: S311 - the seeded order free_ports draws, not a secret
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", first[0]))
        taken.listen()
        assert free_ports(1, random.Random(7)) == [first[1]]  # noqa: S311 - as above


def test_a_port_held_on_ipv6_alone_is_passed_over() -> None:
    """gRPC's server listens on IPv6 too: a port another program holds there only was once given out as free."""
    try:
        taken = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    except OSError:
        pytest.skip("this kernel has IPv6 turned off")
    first = candidate_ports(ephemeral_range())
    random.Random(7).shuffle(first)  # noqa: S311 - the seeded order free_ports draws, not a secret
    with taken:
        taken.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            taken.bind(("::1", first[0]))
        except OSError:
            pytest.skip("no IPv6 loopback here")
        taken.listen()
        assert free_ports(1, random.Random(7)) == [first[1]]  # noqa: S311 - as above
