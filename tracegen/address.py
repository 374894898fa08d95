"""``HOST:PORT`` network addresses, as users write them and as gRPC (TensorFlow's ``ClusterSpec``) reads them.

An IPv6 address goes in brackets, as in a URL (RFC 3986): ``[2001:db8::5]:7070``, ``[::1]:2222``. Written bare,
``::1:2222`` is ambiguous (it is itself an IPv6 address, one without a port) and is refused, with the bracketed
form to write instead; TensorFlow given the bare form for a task starts its server and then waits for good for
the task to answer. IPv4 addresses and host names are written as they are: ``10.0.0.5:7070``, ``ps-host:7070``.
"""

from __future__ import annotations

import ipaddress

from tracegen.errors import ConfigError


def split_address(text: str, what: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPV6]:PORT`` → (host, port), the host without brackets, as sockets take it;
    ConfigError naming ``what`` and quoting ``text``."""
    host, sep, port = text.rpartition(":")
    bracketed = host.startswith("[") and host.endswith("]")
    if bracketed:
        host = host[1:-1]
        if not _is_ipv6(host):
            raise ConfigError(f"'{what}': brackets hold an IPv6 address, and {host!r} is not one (got {text!r})")
    elif ":" in host or "[" in host or "]" in host:
        raise ConfigError(f"'{what}': an IPv6 address goes in brackets before its port: write "
                          f"{_bracketed(text)} (got {text!r})")
    if not sep or not host or not port.isascii() or not port.isdigit() or not 1 <= int(port) <= 65_535:
        raise ConfigError(f"'{what}' must be HOST:PORT (an IPv6 address in brackets: [::1]:PORT) with a port "
                          f"from 1 to 65535 (got {text!r})")
    return host, int(port)


def join_address(host: str, port: int) -> str:
    """(host, port) → ``HOST:PORT``, an IPv6 address in brackets: the form :func:`split_address` and gRPC read."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def unmapped(ip: str) -> str:
    """A socket's IP address as the other host can reach it: ``::ffff:10.0.0.5`` (an IPv4 peer of a socket that
    listens on every IPv6 and IPv4 address) → ``10.0.0.5``; any other address unchanged."""
    try:
        mapped = ipaddress.IPv6Address(ip).ipv4_mapped
    except ValueError:
        return ip
    return ip if mapped is None else str(mapped)


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _bracketed(text: str) -> str:
    """What to write instead of a bare IPv6 ``text``: ``::1:2222`` → ``[::1]:2222``; ``2001:db8::5`` (no port
    that leaves an address before it) → ``[2001:db8::5]:PORT``."""
    host, _, port = text.rpartition(":")
    if _is_ipv6(host) and port.isascii() and port.isdigit():
        return f"[{host}]:{port}"
    return f"[{text.strip('[]')}]:PORT" if _is_ipv6(text.strip("[]")) else "[IPV6]:PORT"
