"""The control connection between ``tracegen netbench run`` and ``serve``: JSON lines over TCP (``hello``,
``start``, ``cpu``, ``stop``), each at most :data:`MAX_LINE_BYTES`, read and written by both ends; ``run``'s end of
it (:class:`Control`), which waits for a ``serve`` still starting and says what it heard from anything else that
listens; and the addresses the two exchange (``HOST:PORT``, ``[IPV6]:PORT``), at most :data:`MAX_WORKERS` client
slots a session. Like TensorFlow's own gRPC servers it has no authentication: use it on a network you trust.
"""

from __future__ import annotations

import contextlib
import io
import json
import socket
import time
from typing import Any

from tracegen import address
from tracegen.errors import ConfigError as TracegenConfigError
from validation import Progress
from validation.errors import ConfigError, JobError

MAX_LINE_BYTES = 64 * 1024
MAX_WORKERS = 256


def split_address(text: str, what: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPV6]:PORT`` → (host, port) (:func:`tracegen.address.split_address`); this package's
    ConfigError."""
    try:
        return address.split_address(text, what)
    except TracegenConfigError as exc:
        raise ConfigError(str(exc)) from None


def read_line(stream: io.BufferedIOBase) -> dict[str, Any] | None:
    """The next control line, a JSON object; None at the end of the stream; ConfigError for a line too long, not
    JSON or not an object."""
    line = stream.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_LINE_BYTES:
        raise ConfigError(f"control line longer than {MAX_LINE_BYTES} bytes")
    try:
        message = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise ConfigError(f"control line is not JSON: {line[:60]!r}") from None
    if not isinstance(message, dict):
        raise ConfigError(f"control line is not a JSON object: {line[:60]!r}")
    return message


def send_line(stream: io.BufferedIOBase, message: dict[str, Any]) -> None:
    """``message`` as one JSON line, flushed."""
    stream.write((json.dumps(message) + "\n").encode())
    stream.flush()


class Control:
    """The client side of the control connection."""

    def __init__(self, address: str, timeout_s: float, connect_timeout_s: float, report: Progress) -> None:
        host, port = split_address(address, "ps")
        deadline = time.monotonic() + connect_timeout_s
        said = False
        while True:  # a server that is still starting refuses connections for a moment: retry until the deadline
            try:
                self.sock = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
                break
            except ConnectionRefusedError as exc:
                if time.monotonic() + 0.5 > deadline:
                    ipv6 = " and listening on IPv6 (serve --bind ::)" if ":" in host else ""  # 0.0.0.0 is IPv4 alone
                    raise JobError(f"cannot reach 'tracegen netbench serve' at {address}: {exc.strerror} for "
                                   f"{connect_timeout_s:g} s; is it running there, on that port{ipv6}?") from exc
                if not said:
                    report(f"netbench: nothing listens at {address} yet; trying again for up to "
                           f"{connect_timeout_s:g} s")
                    said = True
                time.sleep(0.5)
            except TimeoutError as exc:  # nothing answered: a host that is down, or a firewall dropping packets
                raise JobError(f"cannot reach 'tracegen netbench serve' at {address}: no answer within "
                               f"{connect_timeout_s:g} s") from exc
            except OSError as exc:
                raise JobError(f"cannot reach 'tracegen netbench serve' at {address}: {exc.strerror or exc}") from exc
        self.timeout_s = timeout_s
        self.sock.settimeout(timeout_s)
        self.stream = self.sock.makefile("rwb")
        self.address = address
        self.connect_timeout_s = connect_timeout_s

    def hello(self) -> dict[str, Any]:
        """The server's ``hello`` reply, waited for as long as the connection was (not the measurement's 120 s), and
        a JobError that asks whether a netbench serve is what listens: a server of another kind that accepts and
        says nothing (one that waits for its own protocol's first bytes) was waited for 120 s, then 'timed out'."""
        self.sock.settimeout(self.connect_timeout_s)
        try:
            return self.ask({"op": "hello"})
        except JobError as exc:
            if not isinstance(exc.__cause__, (OSError, ConfigError)):
                raise
            why = (f"no reply to 'hello' within {self.connect_timeout_s:g} s"
                   if isinstance(exc.__cause__, TimeoutError) else str(exc.__cause__))
            raise JobError(f"netbench serve at {self.address}: {why}; is 'tracegen netbench serve' what listens "
                           "there, on that port?") from exc
        finally:
            self.sock.settimeout(self.timeout_s)

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            send_line(self.stream, message)
            reply = read_line(self.stream)
        except (OSError, ConfigError) as exc:
            raise JobError(f"netbench serve at {self.address}: {exc}") from exc
        if reply is None:  # no refusal: the server went away (stopped, or its host down)
            raise JobError(f"netbench serve at {self.address} closed the connection during {message.get('op')!r} "
                           "without a reply: was it stopped?")
        if not reply.get("ok"):
            raise JobError(f"netbench serve at {self.address} refused {message.get('op')!r}: "
                           f"{reply.get('error', '(no reason given)')}")
        return reply

    def close(self) -> None:
        with contextlib.suppress(OSError):
            send_line(self.stream, {"op": "stop"})
        with contextlib.suppress(OSError):
            self.stream.close()
            self.sock.close()
