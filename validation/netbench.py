"""``tracegen netbench``: measure the PS link the way TensorFlow uses it, between two hosts.

``serve`` runs on the host that will be the PS. It listens on a control port and, when ``run`` asks, starts a
real TensorFlow PS task (:mod:`validation.netbench_node`) for a cluster whose workers are ``run``'s client
processes. ``run`` runs on one other host: it starts client processes there — each a TensorFlow worker task
with its own gRPC connection to the PS — and measures, in one common window per point, for k = 1, 2, 4, ...
connections per direction:

- ``pull``: k clients reading PS variables back to back (PS -> clients, as parameter reads), two steps in
  flight per client so that its connection never idles between steps;
- ``push``: k clients assigning PS variables (clients -> PS, as gradient pushes), likewise;
- ``both``: k clients pulling and k more pushing at once (the PS link busy both ways);
- ``cycle``: k clients each pulling then pushing, one step at a time (a worker's step without its
  computation): not an input of the link model but a check of it (:func:`tracegen.linkspec.check_profile`);
- ``rpc_pull`` / ``rpc_push``: k clients reading / assigning 64 tensors of 1 KiB per step: how many requests
  per second the PS serves, which bounds a model with many small tensors;
- meanwhile one more client reads a 4-byte variable back to back: the round trip of a small request under
  each load, and once on the idle link.

Steps are sized so that one takes about ``target_step_s`` at the first point's rate, and a window is
lengthened until every client completes enough steps inside it. Doubling k stops once no mode's rate changes
by more than ``tolerance`` (or at ``max_connections``). ``run`` writes ``link-profile.json``
(:mod:`parsers.linkprofile`), with the CPU the PS process used (read by ``serve`` from ``/proc``). The control
protocol is JSON lines over TCP (``hello``, ``start``, ``cpu``, ``stop``); like TensorFlow's own gRPC servers it
has no authentication: use it on a network you trust. Every process either side starts is killed when the
session ends, however it ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import importlib.metadata
import io
import json
import os
import pathlib
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from typing import Any

from parsers.linkprofile import LinkProfile, ProfilePoint
from tracegen import address, own_version
from tracegen.address import join_address, unmapped
from tracegen.errors import ConfigError as TracegenConfigError
from tracegen.metrics import fraction_in_window
from tracegen.signals import held
from validation import Progress
from validation.cpucap import cpu_allowance, cpu_quota
from validation.errors import ConfigError, JobError
from validation.netbench_node import SMALL_BYTES, SMALL_TENSORS, TENSOR_BYTES, TENSORS, payload_fault, step_sizes
from validation.ports import free_ports
from validation.signals import terminating, wait_readable
from validation.stderr import NO_OUTPUT, summarize_stderr
from validation.testbed_window import node_env

MAX_LINE_BYTES = 64 * 1024
MAX_ERROR_CHARS = 500  # of an error sent to the client
MAX_WORKERS = 256
MAX_CORES = 4096  # the most CPU a link profile records for the PS host (parsers.linkprofile)
# what serve says when it starts: the PS task is a TensorFlow server, which any host that reaches it may drive
TRUST_NOTE = ("netbench serve: the PS task a session starts is a TensorFlow server, which takes no authentication "
              "and runs what any client sends it: serve only on a network you trust (TensorFlow's SECURITY.md)")
_LEAD_S = 1.0  # clients start moving this long before the window opens, so flows are up to speed


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class NetbenchConfig:
    """What ``netbench run`` measures. ``ps``: the ``serve`` control address, ``HOST:PORT`` (``[IPV6]:PORT``)."""

    ps: str
    max_connections: int = 8
    window_s: float = 3.0
    tensors: int = TENSORS
    tensor_bytes: int = TENSOR_BYTES
    target_step_s: float = 0.15
    tolerance: float = 0.05
    timeout_s: float = 120.0
    connect_timeout_s: float = 10.0  # how long a 'serve' that refuses or does not answer is waited for

    def __post_init__(self) -> None:
        split_address(self.ps, "ps")
        if not 1 <= self.max_connections <= MAX_WORKERS // 2:
            raise ConfigError(f"'max_connections' must be from 1 to {MAX_WORKERS // 2} (got {self.max_connections})")
        if not 0.2 <= self.window_s <= 600:
            raise ConfigError(f"'window_s' must be from 0.2 to 600 seconds (got {self.window_s})")
        if fault := payload_fault(self.tensors, self.tensor_bytes):
            raise ConfigError(fault)
        if not 0.01 <= self.target_step_s <= 10:
            raise ConfigError(f"'target_step_s' must be from 0.01 to 10 seconds (got {self.target_step_s})")
        if not 0 < self.tolerance < 1:
            raise ConfigError(f"'tolerance' must be between 0 and 1 (got {self.tolerance})")
        if not self.timeout_s > 0:
            raise ConfigError(f"'timeout_s' must be > 0 (got {self.timeout_s})")
        if not 0 < self.connect_timeout_s <= 3600:
            raise ConfigError(f"'connect_timeout_s' must be > 0 and at most 3600 seconds "
                              f"(got {self.connect_timeout_s})")


def split_address(text: str, what: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``[IPV6]:PORT`` → (host, port) (:func:`tracegen.address.split_address`); this package's
    ConfigError."""
    try:
        return address.split_address(text, what)
    except TracegenConfigError as exc:
        raise ConfigError(str(exc)) from None


def tensorflow_version() -> str:
    """The installed TensorFlow's version, or ``unknown``."""
    for dist in ("tensorflow-cpu", "tensorflow"):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            return importlib.metadata.version(dist)
    return "unknown"


def _node_argv(job: dict[str, Any]) -> list[str]:
    return [sys.executable, "-m", "validation.netbench_node", json.dumps(job)]


class _Child:
    """One TensorFlow process of ours: JSON lines on its stdin/stdout, stderr to a file, killed by ``close``."""

    def __init__(self, job: dict[str, Any], log_dir: pathlib.Path, name: str) -> None:
        self.name = name
        self.stderr_path = log_dir / f"{name.replace(' ', '_')}.stderr"
        self._buffer = b""
        with self.stderr_path.open("wb") as err:
            self.popen = subprocess.Popen(_node_argv(job), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=err, env=node_env(), bufsize=0, start_new_session=True)

    def send(self, message: dict[str, Any]) -> None:
        assert self.popen.stdin is not None  # noqa: S101 - created with a pipe
        try:
            self.popen.stdin.write((json.dumps(message) + "\n").encode())
        except (BrokenPipeError, OSError) as exc:
            raise JobError(f"netbench {self.name} exited: {self.stderr_tail()}") from exc

    def receive(self, want: str, deadline_s: float) -> dict[str, Any]:
        """The next ``{"event": want}`` line; JobError when the process dies or the deadline passes."""
        assert self.popen.stdout is not None  # noqa: S101 - created with a pipe
        fd = self.popen.stdout.fileno()
        while True:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                if line.startswith(b"{"):
                    event = json.loads(line)
                    if isinstance(event, dict) and event.get("event") == want:
                        return event
            left = deadline_s - time.monotonic()
            if left <= 0:
                raise JobError(f"netbench {self.name}: no '{want}' in time ({self.stderr_tail()})")
            readable, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not readable:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                code = self.popen.wait(timeout=10)
                raise JobError(f"netbench {self.name} exited with code {code}: {self.stderr_tail()}")
            self._buffer += chunk
            if len(self._buffer) > 1 << 26:
                raise JobError(f"netbench {self.name}: more than 64 MiB of output without the expected reply")

    def stderr_tail(self) -> str:
        try:
            return summarize_stderr(self.stderr_path.read_text(errors="replace"))
        except OSError:
            return NO_OUTPUT

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)
        for stream in (self.popen.stdin, self.popen.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


@contextlib.contextmanager
def _children() -> Iterator[tuple[list[_Child], pathlib.Path]]:
    """A list to start children into, and a log folder; every child is killed and the folder removed on exit, with
    Ctrl-C, SIGTERM and SIGHUP held back meanwhile (a second Ctrl-C while they were killed left the rest running)."""
    log_dir = pathlib.Path(tempfile.mkdtemp(prefix="tracegen_netbench_"))
    children: list[_Child] = []
    try:
        with terminating():
            yield children, log_dir
    finally:
        with held():
            for child in children:
                child.close()
            for path in log_dir.iterdir():
                path.unlink(missing_ok=True)
            log_dir.rmdir()


# ------------------------------------------------------------------------------------------------- serve


def _read_line(stream: io.BufferedIOBase) -> dict[str, Any] | None:
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


def _send_line(stream: io.BufferedIOBase, message: dict[str, Any]) -> None:
    stream.write((json.dumps(message) + "\n").encode())
    stream.flush()


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
            _send_line(stream, {"ok": False, "error": str(exc)[:MAX_ERROR_CHARS]})
        raise


def _serve_requests(stream: io.BufferedIOBase, local_ip: str, tf_port: int, timeout_s: float, cores: float,
                    report: Progress) -> None:
    with _children() as (children, log_dir):
        while True:
            message = _read_line(stream)
            if message is None or message.get("op") == "stop":
                return
            op = message.get("op")
            if op == "hello":
                _send_line(stream, {"ok": True, "host": socket.gethostname(), "cores": cores,
                                    "cpu_quota": cpu_quota(), "tensorflow": tensorflow_version()})
            elif op == "start" and not children:
                workers = _check_workers(message.get("workers"))
                ps_address = join_address(local_ip, tf_port)  # [::1]:2222: gRPC's form of IPv6
                job = {"role": "ps", "cluster": {"ps": [ps_address], "worker": workers}}
                children.append(_Child(job, log_dir, "ps"))
                children[0].receive("ready", time.monotonic() + timeout_s)
                report(f"PS task up at {ps_address} for {len(workers)} client slots")
                _send_line(stream, {"ok": True, "ps": ps_address})
            elif op == "cpu" and children:
                _send_line(stream, {"ok": True, "cpu_s": _process_cpu_s(children[0].popen.pid),
                                    "at_s": time.monotonic()})
            else:
                _send_line(stream, {"ok": False, "error": f"unexpected request {str(op)[:40]!r}"})


# --------------------------------------------------------------------------------------------------- run


class _Control:
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
            _send_line(self.stream, message)
            reply = _read_line(self.stream)
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
            _send_line(self.stream, {"op": "stop"})
        with contextlib.suppress(OSError):
            self.stream.close()
            self.sock.close()


def connection_counts(max_connections: int) -> list[int]:
    """1, 2, 4, ... up to ``max_connections`` (which ends the list even when it is not a power of two)."""
    counts = [1]
    while counts[-1] * 2 <= max_connections:
        counts.append(counts[-1] * 2)
    if counts[-1] != max_connections:
        counts.append(max_connections)
    return counts


def run_netbench(config: NetbenchConfig, progress: Progress | None = None) -> LinkProfile:
    """Measure the link profile against a ``serve`` at ``config.ps`` (module docstring)."""
    report = progress or (lambda _line: None)
    control = _Control(config.ps, config.timeout_s, config.connect_timeout_s, report)
    try:
        hello = control.hello()
        client_ip = unmapped(control.sock.getsockname()[0])
        slots = 2 * config.max_connections + 1  # the last slot is the probe's
        workers = [join_address(client_ip, p) for p in free_ports(slots)]
        ps_address = control.ask({"op": "start", "workers": workers})["ps"]
        report(f"netbench: PS task at {ps_address} ({hello['cores']:g} cores, TensorFlow {hello['tensorflow']}); "
               f"clients on {client_ip}")
        with _children() as (children, log_dir):
            bench = _Bench(config, control, {"ps": [ps_address], "worker": workers}, children, log_dir, report)
            idle_rtt_ns = bench.idle_rtt_ns()
            points = bench.measure_all()
    finally:
        control.close()
    step_bytes = config.tensors * (config.tensor_bytes // 4) * 4
    return LinkProfile(
        tool=f"tracegen netbench {own_version()}",
        date=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        ps={"address": ps_address, "host": hello["host"], "cores": hello["cores"], "tensorflow": hello["tensorflow"],
            **({"cpu_quota": hello["cpu_quota"]} if hello.get("cpu_quota") else {})},
        client={"address": client_ip, "host": socket.gethostname(), "cores": cpu_allowance(),
                "processes": 2 * max(p.connections for p in points) + 1},
        tensors=config.tensors, tensor_bytes=step_bytes // config.tensors, window_s=config.window_s,
        idle_rtt_ns=idle_rtt_ns, points=tuple(points))


STREAMS = 2  # steps in flight per loading client: its connection never idles between steps, as a worker's
# does not while it has many tensors to move
MIN_STEPS_IN_WINDOW = 4  # every loading client completes this many steps inside a window, else it is lengthened
MAX_WINDOW_S = 40.0


class _Bench:
    """The client processes of one ``run`` and the measurement of each point."""

    def __init__(self, config: NetbenchConfig, control: _Control, cluster: dict[str, list[str]],
                 children: list[_Child], log_dir: pathlib.Path, report: Progress) -> None:
        self.config, self.control, self.cluster = config, control, cluster
        self.children, self.log_dir, self.report = children, log_dir, report
        self.tensor_bytes = (config.tensor_bytes // 4) * 4
        self.rate_1 = 0.0  # one connection's pull rate, once measured: sizes every later point's steps
        first, self.probe = self._start([0, len(cluster["worker"]) - 1])  # client 0 initialises the variables
        self._loaders = [first]

    def _start(self, indices: Sequence[int]) -> list[_Child]:
        started = []
        for i in indices:
            job = {"role": "client", "index": i, "cluster": self.cluster, "tensors": self.config.tensors,
                   "tensor_bytes": self.config.tensor_bytes}
            started.append(_Child(job, self.log_dir, f"client {i}"))
            self.children.append(started[-1])
        deadline = time.monotonic() + self.config.timeout_s
        for child in started:
            child.receive("ready", deadline)
        return started

    def loaders(self, count: int) -> list[_Child]:
        """The first ``count`` loading clients, started as needed (client 0 first: it initialises)."""
        if len(self._loaders) < count:
            self._loaders += self._start(range(len(self._loaders), count))
        return self._loaders[:count]

    def idle_rtt_ns(self) -> int | None:
        """The small request's round trip with nothing else moving (median over one window); None when none
        completed inside it (the profile then records it as unknown)."""
        start_s = time.monotonic() + 0.2
        end_s = start_s + min(self.config.window_s, 2.0)
        self.probe.send({"mode": "probe", "start_s": start_s, "end_s": end_s})
        rtt = _median_step_ns(self.probe.receive("done", end_s + self.config.timeout_s), start_s, end_s)
        if rtt is None:
            self.report(f"netbench: no small request completed in {end_s - start_s:.1f} s on the idle link; its round "
                        "trip is recorded as unknown")
        else:
            self.report(f"netbench: small request round trip, link idle: {rtt / 1e6:.2f} ms")
        return rtt

    def measure_all(self) -> list[ProfilePoint]:
        """Every point, doubling k until no mode's total rate moves by more than the tolerance."""
        points: list[ProfilePoint] = []
        previous: dict[str, float] = {}
        lead_s = 1.0
        for k in connection_counts(self.config.max_connections):
            current: dict[str, float] = {}
            for mode in ("pull", "push", "both", "cycle"):
                roles = {"pull": ["pull"] * k, "push": ["push"] * k, "both": ["pull"] * k + ["push"] * k,
                         "cycle": ["cycle"] * k}[mode]
                point, lead_s = self.point(mode, k, roles, lead_s)
                points.append(point)
                current[mode] = point.pull_bytes_per_s + point.push_bytes_per_s
                cpu = "" if point.ps_cpu_cores is None else f", PS CPU {point.ps_cpu_cores:.2f} cores"
                self.report(f"netbench: {mode:5s} k={k}: pull {point.pull_bytes_per_s / 1e6:7.1f} MB/s, push "
                            f"{point.push_bytes_per_s / 1e6:7.1f} MB/s, small request "
                            f"{(point.probe_rtt_ns or 0) / 1e6:.1f} ms{cpu}")
            for mode in ("rpc_pull", "rpc_push"):
                point, lead_s = self.point(mode, k, [mode] * k, lead_s)
                points.append(point)
                current[mode] = point.pull_bytes_per_s + point.push_bytes_per_s
                self.report(f"netbench: {mode:5s} k={k}: {point.transfers_per_s:8.0f} tensors of "
                            f"{SMALL_BYTES} B per second, small request {(point.probe_rtt_ns or 0) / 1e6:.1f} ms")
            tol = self.config.tolerance
            if previous and all(abs(current[m] - previous[m]) <= tol * previous[m] for m in current):
                self.report(f"netbench: no rate moved by more than {tol:.0%} from k={k // 2} to k={k}; done")
                break
            previous = current
        return points

    def tensors_for(self, k: int) -> int:
        """Tensors per step so that a step of one of k connections takes about ``target_step_s``."""
        if not self.rate_1:
            return self.config.tensors
        fit = self.rate_1 / k * self.config.target_step_s / self.tensor_bytes
        return max((n for n in step_sizes(self.config.tensors) if n <= fit), default=1)

    def point(self, mode: str, k: int, roles: Sequence[str], lead_s: float) -> tuple[ProfilePoint, float]:
        """One measurement, its window lengthened until every client completes enough steps in it."""
        clients = self.loaders(len(roles))
        window_s = self.config.window_s
        small = mode.startswith("rpc_")
        n = SMALL_TENSORS if small else self.tensors_for(k)
        step_bytes = n * (SMALL_BYTES if small else self.tensor_bytes)
        while True:
            start_s = time.monotonic() + lead_s
            end_s = start_s + window_s
            for child, role in zip(clients, roles, strict=True):
                streams = 1 if role == "cycle" else STREAMS  # a cycle is a worker's own sequence: one at a time
                child.send({"mode": role, "tensors": n, "start_s": start_s, "end_s": end_s, "streams": streams})
            self.probe.send({"mode": "probe", "start_s": start_s, "end_s": end_s})
            time.sleep(max(0.0, start_s - time.monotonic()))
            cpu_a = self.control.ask({"op": "cpu"})
            time.sleep(max(0.0, end_s - time.monotonic()))
            cpu_b = self.control.ask({"op": "cpu"})
            deadline = end_s + self.config.timeout_s
            done = [child.receive("done", deadline) for child in clients]
            rtt = _median_step_ns(self.probe.receive("done", deadline), start_s, end_s)
            inside = [sum(1 for s, e in d["steps"] if s >= start_s and e <= end_s) for d in done]
            longest_s = max(max((e - s for s, e in d["steps"]), default=0.0) for d in done)
            if min(inside) >= MIN_STEPS_IN_WINDOW or window_s >= MAX_WINDOW_S:
                break
            window_s = min(MAX_WINDOW_S, max(2 * window_s, (MIN_STEPS_IN_WINDOW + 1) * longest_s))
            self.report(f"netbench: {mode} k={k}: a client completed only {min(inside)} steps; measuring again "
                        f"over {window_s:.1f} s")
        rates = {"pull": 0.0, "push": 0.0}
        for d, role in zip(done, roles, strict=True):
            steps = [(float(s), float(e)) for s, e in d["steps"]]
            moved = fraction_in_window(steps, start_s, end_s) * step_bytes / window_s
            carries = {"cycle": ("pull", "push"), "rpc_pull": ("pull",), "rpc_push": ("push",)}
            for direction in carries.get(role, (role,)):
                rates[direction] += moved
        span = cpu_b["at_s"] - cpu_a["at_s"]
        cpu = (cpu_b["cpu_s"] - cpu_a["cpu_s"]) / span if span > 0 else None
        moved = rates["pull"] + rates["push"]
        point = ProfilePoint(mode=mode, connections=k, pull_bytes_per_s=rates["pull"],
                             push_bytes_per_s=rates["push"], ps_cpu_cores=cpu, probe_rtt_ns=rtt, window_s=window_s,
                             step_bytes=step_bytes, transfers_per_s=moved / (step_bytes / n))
        if mode == "pull" and k == 1:
            self.rate_1 = rates["pull"]
        return point, max(1.0, min(5.0, longest_s))


def _median_step_ns(done: dict[str, Any], start_s: float, end_s: float) -> int | None:
    inside = sorted(e - s for s, e in done["steps"] if s >= start_s and e <= end_s)
    return round(inside[len(inside) // 2] * 1e9) if inside else None
