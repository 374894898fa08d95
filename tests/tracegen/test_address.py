"""HOST:PORT addresses: IPv4, names and bracketed IPv6 read; a bare IPv6 address refused with what to write."""

from __future__ import annotations

import pytest

from tracegen.address import join_address, split_address, unmapped
from tracegen.errors import ConfigError


@pytest.mark.parametrize(("text", "host", "port"), [
    ("10.0.0.5:7070", "10.0.0.5", 7070), ("ps-host:1", "ps-host", 1), ("ps.example.org:65535", "ps.example.org", 65535),
    ("[::1]:2222", "::1", 2222), ("[2001:db8::5]:7070", "2001:db8::5", 7070),
    ("[::ffff:10.0.0.5]:80", "::ffff:10.0.0.5", 80), ("[fe80::1%eth0]:2222", "fe80::1%eth0", 2222),
])
def test_an_address_is_split_into_what_a_socket_takes_and_joined_back(text: str, host: str, port: int) -> None:
    assert split_address(text, "ps") == (host, port)
    assert join_address(host, port) == text  # the form gRPC reads: TensorFlow waited for good on '::1:2222'


@pytest.mark.parametrize(("text", "write"), [
    ("::1:2222", "[::1]:2222"),  # itself an IPv6 address (::0.1:2222), with no port: which was meant?
    ("2001:db8::5:7070", "[2001:db8::5]:7070"),
    ("2001:db8::5", "[2001:db8::5]:PORT"),  # the port forgotten: '5' would have been read as one
    ("[::1]", "[::1]:PORT"),
    ("fe80::1%eth0:2222", "[fe80::1%eth0]:2222"),
    ("ps]:80", "[IPV6]:PORT"),
])
def test_a_bare_ipv6_address_is_refused_with_what_to_write(text: str, write: str) -> None:
    with pytest.raises(ConfigError) as caught:
        split_address(text, "--ps")
    assert str(caught.value) == (f"'--ps': an IPv6 address goes in brackets before its port: write {write} "
                                 f"(got {text!r})")


@pytest.mark.parametrize(("text", "why"), [
    ("[ps-host]:80", "brackets hold an IPv6 address, and 'ps-host' is not one"),
    ("[10.0.0.5]:80", "brackets hold an IPv6 address, and '10.0.0.5' is not one"),
    ("[::g]:80", "brackets hold an IPv6 address, and '::g' is not one"),
    ("[]:80", "brackets hold an IPv6 address, and '' is not one"),
    ("[::1]:0", "must be HOST:PORT"), ("[::1]:65536", "must be HOST:PORT"), ("[::1]:", "must be HOST:PORT"),
    ("[::1]:x", "must be HOST:PORT"), ("[::1]:\u0663", "must be HOST:PORT"), ("ps-host", "must be HOST:PORT"),
])
def test_a_bad_address_names_the_flag_and_quotes_it(text: str, why: str) -> None:
    with pytest.raises(ConfigError) as caught:
        split_address(text, "--ps")
    assert why in str(caught.value) and str(caught.value).startswith("'--ps'")
    assert str(caught.value).endswith(f"(got {text!r})")


@pytest.mark.parametrize(("ip", "reachable"), [
    ("::ffff:10.0.0.5", "10.0.0.5"), ("::ffff:127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("10.0.0.5", "10.0.0.5"),
    ("2001:db8::5", "2001:db8::5"), ("fe80::1%eth0", "fe80::1%eth0"),
])
def test_an_ipv4_peer_of_an_ipv6_socket_is_named_by_its_ipv4_address(ip: str, reachable: str) -> None:
    assert unmapped(ip) == reachable
