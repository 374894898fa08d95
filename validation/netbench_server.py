"""``tracegen netbench serve``: the PS host's end of netbench. It listens on a control port and, when ``run``
asks (:mod:`validation.netbench_control`), starts a real TensorFlow PS task (:mod:`validation.netbench_node`) for a
cluster whose workers are ``run``'s client processes, and reports the CPU that PS process used (from ``/proc``) and
what the profile records of this host (its cores, CPU quota, TensorFlow). One session at a time; a request it cannot
serve ends the session, and the client is told why. It takes no authentication (:data:`TRUST_NOTE`).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import os
import pathlib
import socket
import time
from typing import Any

from tracegen.address import join_address, unmapped
from validation import Progress
from validation.cpucap import cpu_allowance, cpu_quota
from validation.errors import ConfigError, JobError
from validation.netbench_child import START_LIMIT, Child, child_processes
from validation.netbench_control import MAX_WORKERS, read_line, send_line, split_address
from validation.signals import terminating, wait_readable

MAX_ERROR_CHARS = 500  # of an error sent to the client
MAX_CORES = 4096  # the most CPU a link profile records for the PS host (parsers.linkprofile)
# what serve says when it starts: the PS task is a TensorFlow server, which any host that reaches it may drive
TRUST_NOTE = ("netbench serve: the PS task a session starts is a TensorFlow server, which takes no authentication "
              "and runs what any client sends it: serve only on a network you trust (TensorFlow's SECURITY.md)")


def tensorflow_version() -> str:
    """The installed TensorFlow's version, or ``unknown``."""
    for dist in ("tensorflow-cpu", "tensorflow"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            return importlib.metadata.version(dist)
    return "unknown"


def _process_cpu_s(pid: int) -> float:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _check_workers(workers: Any) -> list[str]:
    if not isinstance(workers, list) or not 1 <= len(workers) <= MAX_WORKERS:
        raise ConfigError(f"'workers' must be a list of 1 to {MAX_WORKERS} HOST:PORT strings")
    for w in workers:
        if not isinstance(w, str):
            raise ConfigError(f"'workers' must hold HOST:PORT strings (got {w!r:.60})")
        split_address(w, "workers")
    return workers


def serve(*, bind: str = "0.0.0.0", port: int = 7070, tf_port: int = 2222, once: bool = False,  # noqa: S104
          timeout_s: float = 120.0, cores: float | None = None, progress: Progress | None = None) -> None:
    """Serve netbench sessions on ``bind:port`` until interrupted (one session with ``once``). ``bind`` may be an
    IPv6 address (``::`` for every address, IPv4 ones too), bracketed or not. ``cores`` is what the profile records
    as the PS host's CPU (default: this process's affinity and cgroup quota)."""
    report = progress or (lambda _line: None)
    if bind.startswith("[") and bind.endswith("]"):  # as in [::1]:7070
        bind = bind[1:-1]
    for what, value in (("port", port), ("tf_port", tf_port)):  # 0 would be a port nobody is told
        if not 1 <= value <= 65_535:
            raise ConfigError(f"'{what}' must be from 1 to 65535 (got {value})")
    if tf_port == port:  # the PS task could not listen where serve does: found out at the first session
        raise ConfigError(f"'tf_port' must differ from 'port', where serve listens (both {port})")
    if cores is not None and not 0 < cores <= MAX_CORES:  # what the profile records, checked before any session
        raise ConfigError(f"'cores' must be > 0 and at most {MAX_CORES} (got {cores:g})")
    with contextlib.ExitStack() as stack:
        try:
            listener = stack.enter_context(_listen(bind, port))
        except OSError as exc:  # an address not of this host, a port in use, a name that does not resolve
            raise JobError(f"netbench serve cannot listen on {join_address(bind, port)}: {_why(exc)}") from None
        _check_tf_port(bind, tf_port)
        stack.enter_context(terminating())
        report(f"netbench serve: listening on {join_address(bind, port)}; the PS task will use port {tf_port}")
        report(TRUST_NOTE)
        while True:
            wait_readable(listener)  # not accept() alone: a SIGTERM could go unhandled there
            conn, peer = listener.accept()
            with conn:
                client = unmapped(peer[0])
                report(f"session from {client}")
                try:
                    _serve_session(conn, tf_port, timeout_s, cores or cpu_allowance(), report)
                except (ConfigError, JobError, OSError) as exc:
                    report(f"session from {client} ended: {exc}")
            if once:
                return


def _check_tf_port(bind: str, tf_port: int) -> None:
    """JobError when the PS task could not listen on ``tf_port`` now (another server has it): it was found out
    only when a client came, by the client, as 'connection closed'."""
    try:
        with _listen(bind, tf_port):
            pass
    except OSError as exc:
        raise JobError(f"netbench serve: the PS task cannot listen on {join_address(bind, tf_port)} "
                       f"(--tf-port): {_why(exc)}") from None


def _listen(bind: str, port: int) -> socket.socket:
    """A socket listening on ``bind:port``: an IPv6 one where ``bind`` is an IPv6 address or a name with IPv6
    addresses only (create_server makes an IPv4 one unless told, and said 'Address family for hostname not
    supported' for ``::1``). ``::`` takes IPv4 connections too, as ``0.0.0.0`` is every IPv4 address and as the PS
    task's gRPC server listens (create_server's IPv6 sockets take IPv6 alone unless told)."""
    try:
        infos = socket.getaddrinfo(bind or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError):
        infos = []  # a name that does not resolve: create_server says so, in its own words
    if infos and all(info[0] == socket.AF_INET6 for info in infos):
        return socket.create_server((bind, port), family=socket.AF_INET6, dualstack_ipv6=socket.has_dualstack_ipv6())
    return socket.create_server((bind, port))


def _why(exc: OSError) -> str:
    """create_server's reason, without the address it repeats."""
    return (exc.strerror or str(exc)).split(" (while attempting", 1)[0]


class _SessionIO(io.RawIOBase):
    """A session's socket, whose reads wait in slices (:func:`validation.signals.wait_readable`): a SIGTERM that
    came just before a blocking read began would wait there, unhandled, for the client's next request."""

    def __init__(self, conn: socket.socket) -> None:
        super().__init__()
        self._conn = conn

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        wait_readable(self._conn)
        return self._conn.recv_into(buffer)

    def write(self, data: Any) -> int:
        self._conn.sendall(data)
        return len(data)


def _serve_session(conn: socket.socket, tf_port: int, timeout_s: float, cores: float, report: Progress) -> None:
    """One session; a request it cannot serve ends it, and the client is told why first (it said only 'refused
    'start': connection closed', the reason, a PS task that could not start, printed on the PS host alone)."""
    raw = _SessionIO(conn)
    stream = io.BufferedRWPair(raw, raw)
    try:
        _serve_requests(stream, unmapped(conn.getsockname()[0]), tf_port, timeout_s, cores, report)
    except (ConfigError, JobError) as exc:
        with contextlib.suppress(OSError):
            send_line(stream, {"ok": False, "error": str(exc)[:MAX_ERROR_CHARS]})
        raise


def _serve_requests(stream: io.BufferedIOBase, local_ip: str, tf_port: int, timeout_s: float, cores: float,
                    report: Progress) -> None:
    with child_processes() as (children, log_dir):
        while True:
            message = read_line(stream)
            if message is None or message.get("op") == "stop":
                return
            op = message.get("op")
            if op == "hello":
                send_line(stream, {"ok": True, "host": socket.gethostname(), "cores": cores,
                                    "cpu_quota": cpu_quota(), "tensorflow": tensorflow_version()})
            elif op == "start" and not children:
                workers = _check_workers(message.get("workers"))
                ps_address = join_address(local_ip, tf_port)  # [::1]:2222: gRPC's form of IPv6
                job = {"role": "ps", "cluster": {"ps": [ps_address], "worker": workers}}
                children.append(Child(job, log_dir, "ps"))
                children[0].receive_started("ready", timeout_s, time.monotonic() + START_LIMIT * timeout_s)
                report(f"PS task up at {ps_address} for {len(workers)} client slots")
                send_line(stream, {"ok": True, "ps": ps_address})
            elif op == "cpu" and children:
                send_line(stream, {"ok": True, "cpu_s": _process_cpu_s(children[0].popen.pid),
                                    "at_s": time.monotonic()})
            else:
                send_line(stream, {"ok": False, "error": f"unexpected request {str(op)[:40]!r}"})
