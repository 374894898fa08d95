"""``tracegen netbench``: the control protocol, a real run on this machine, and one inside the emulated cluster."""

from __future__ import annotations

import contextlib
import io
import json
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from parsers.linkprofile import read_link_profile
from tracegen.address import join_address
from tracegen.cli import main
from validation import netbench_child, netbench_control, netbench_server
from validation.cluster_config import ClusterConfig, LinkShape
from validation.cluster_host import leftovers
from validation.errors import ConfigError, JobError, TerminatedError
from validation.netbench import NetbenchConfig, connection_counts
from validation.netbench_control import split_address
from validation.netbench_server import serve
from validation.ports import free_port, free_ports
from validation.testbed_link import measure_link_profile


def test_connection_counts_double_up_to_the_limit() -> None:
    assert connection_counts(1) == [1]
    assert connection_counts(8) == [1, 2, 4, 8]
    assert connection_counts(6) == [1, 2, 4, 6]


@pytest.mark.parametrize("bad", ["host", "host:", ":80", "host:0", "host:65536", "host:8o", "host:\u0663"])
def test_addresses_are_checked(bad: str) -> None:
    # the option, the rule and the value: 'HOST:PORT' alone passed a message that dropped what was given
    for refuse in (lambda: split_address(bad, "ps"), lambda: NetbenchConfig(ps=bad)):
        with pytest.raises(ConfigError) as info:
            refuse()
        said = str(info.value)
        assert said.startswith("'ps' must be HOST:PORT") and said.endswith(f"(got {bad!r})"), said


@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_run_against_a_closed_port_fails_within_its_connect_timeout(host: str, tmp_path: pathlib.Path,
                                                                    request: pytest.FixtureRequest,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing listens: 'run' says so at once, asks again until --connect-timeout and ends in one line (it waited
    120 s in silence, as if it hung). On IPv6 alike, the address quoted as the user wrote it, in brackets."""
    if ":" in host:
        request.getfixturevalue("ipv6_loopback")
    ps = join_address(host, free_port())
    out = tmp_path / "link-profile.json"
    start = time.monotonic()
    assert main(["netbench", "run", "--ps", ps, "--connect-timeout", "1", "--out", str(out)]) == 2
    assert time.monotonic() - start < 5
    captured = capsys.readouterr()
    assert f"nothing listens at {ps} yet; trying again for up to 1 s" in captured.out
    assert captured.err.count("\n") == 1, captured.err
    ipv6 = " and listening on IPv6 (serve --bind ::)" if ":" in host else ""  # its default, 0.0.0.0, is IPv4 alone
    assert captured.err.endswith(f"cannot reach 'tracegen netbench serve' at {ps}: Connection refused for 1 s; is it "
                                 f"running there, on that port{ipv6}?\n")
    assert not out.exists()


@pytest.mark.parametrize(("ps", "host"), [("192.0.2.1:7070", "192.0.2.1"), ("[2001:db8::1]:7070", "2001:db8::1")])
def test_run_against_a_host_that_does_not_answer_names_the_wait(ps: str, host: str, tmp_path: pathlib.Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A host that drops the connection's packets (down, or a firewall): the connect attempt itself is bounded by
    --connect-timeout, not by the 120 s the measurement's replies may take. An IPv6 host is asked for without
    its brackets."""
    waits: list[float | None] = []

    def no_answer(address: tuple[str, int], timeout: float | None = None) -> socket.socket:
        assert address == (host, 7070)
        waits.append(timeout)
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", no_answer)
    assert main(["netbench", "run", "--ps", ps, "--connect-timeout", "3", "--out", str(tmp_path / "p.json")]) == 2
    assert waits and all(w is not None and w <= 3 for w in waits)
    assert f"at {ps}: no answer within 3 s" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["netbench", "run", "--ps", "::1:2222", "--out", "{out}/link-profile.json"],
    ["profile", "--model", "mlp", "--netbench", "::1:2222", "--out", "{out}"],
])
def test_a_bare_ipv6_address_is_refused_with_what_to_write(argv: list[str], tmp_path: pathlib.Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """'::1:2222' is itself an IPv6 address, without a port; it was read as [::1]:2222 and so handed to
    TensorFlow, which waits for good on a task written that way."""
    assert main([a.format(out=tmp_path) for a in argv]) == 2
    flag = argv[argv.index("::1:2222") - 1]
    assert capsys.readouterr().err.endswith(f": error: '{flag}': an IPv6 address goes in brackets before its port: "
                                            "write [::1]:2222 (got '::1:2222')\n")
    assert list(tmp_path.iterdir()) == []


def test_run_against_a_server_of_another_kind_says_so_within_its_connect_timeout(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A real listener that accepts and says nothing (a server waiting for its own protocol's first bytes, given
    by mistake for netbench serve's port): 'run' waited the measurement's 120 s for the reply to 'hello' and said
    only 'timed out'. Now --connect-timeout bounds the wait, and the line asks what listens there. This one hangs
    up after 10 s, which 'run' reported as the server having 'refused 'hello': connection closed'."""
    done = threading.Event()
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def silent() -> None:
            conn, _ = listener.accept()
            with conn:
                done.wait(10)

        thread = threading.Thread(target=silent, daemon=True)
        thread.start()
        out = tmp_path / "link-profile.json"
        start = time.monotonic()
        assert main(["netbench", "run", "--ps", f"127.0.0.1:{port}", "--connect-timeout", "1", "--out",
                     str(out)]) == 2
        assert time.monotonic() - start < 5
        assert capsys.readouterr().err == (
            f"tracegen netbench: error: netbench serve at 127.0.0.1:{port}: no reply to 'hello' within 1 s; is "
            "'tracegen netbench serve' what listens there, on that port?\n")
        assert not out.exists()
        done.set()
        thread.join()


def test_run_against_an_http_server_says_what_it_heard_and_asks_what_listens(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Python's own http.server on the port: its error page is not a netbench reply."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        out = tmp_path / "link-profile.json"
        assert main(["netbench", "run", "--ps", f"127.0.0.1:{port}", "--connect-timeout", "10", "--out",
                     str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"netbench serve at 127.0.0.1:{port}: control line is not JSON: " in err
        assert err.endswith("; is 'tracegen netbench serve' what listens there, on that port?\n"), err
        assert not out.exists()
    finally:
        server.kill()
        server.wait()


@pytest.mark.parametrize(("args", "why"), [
    (["--port", "99999"], "'port' (--port) must be from 1 to 65535 (got 99999)"),  # was a traceback (OverflowError)
    (["--port", "0"], "'port' (--port) must be from 1 to 65535 (got 0)"),  # was a server on a port nobody is told
    (["--tf-port", "0"], "'tf_port' (--tf-port) must be from 1 to 65535 (got 0)"),
    (["--cores", "0"], "'cores' (--cores) must be > 0 and at most 4096 (got 0)"),  # was the measured CPU, silently
    # was refused after the whole run
    (["--cores", "5000"], "'cores' (--cores) must be > 0 and at most 4096 (got 5000)"),
    # the PS task failed at the first session, and the client was told only 'connection closed'
    (["--port", "7071", "--tf-port", "7071"],
     "'tf_port' (--tf-port) must differ from 'port', where serve listens (both 7071)"),
])
def test_serve_refuses_bad_settings_before_it_listens(args: list[str], why: str, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    def listen(*_args: object, **_kwargs: object) -> socket.socket:
        raise AssertionError("listened with settings it should have refused")  # (and would wait for a session)

    monkeypatch.setattr(socket, "create_server", listen)
    assert main(["netbench", "serve", "--once", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err, err


@pytest.mark.parametrize(("bind", "where"), [("192.0.2.1", "192.0.2.1:7070"), ("2001:db8::1", "[2001:db8::1]:7070"),
                                             ("[2001:db8::1]", "[2001:db8::1]:7070")])
def test_serve_on_an_address_not_of_this_host_says_so(bind: str, where: str, request: pytest.FixtureRequest,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """It said 'cannot write its output', the words for an output file, and create_server's address twice; for an
    IPv6 address, 'Address family for hostname not supported': it listened on IPv4 alone."""
    if ":" in bind:
        request.getfixturevalue("ipv6_loopback")
    assert main(["netbench", "serve", "--once", "--bind", bind]) == 2
    err = capsys.readouterr().err
    assert err == (f"tracegen netbench: error: netbench serve cannot listen on {where}: Cannot assign "
                   "requested address\n"), err


def test_serve_on_a_port_in_use_says_so() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(JobError, match=f"cannot listen on 127.0.0.1:{port}: Address already in use$"):
            serve(bind="127.0.0.1", port=port, once=True)


def test_serve_with_its_tf_port_in_use_says_so_before_any_session() -> None:
    """The PS task that could not listen was found out when a client came, and the client was told 'refused
    'start': connection closed'."""
    errors: list[str] = []

    def serving(tf_port: int) -> None:
        try:
            serve(bind="127.0.0.1", port=free_port(), tf_port=tf_port, once=True)
        except JobError as exc:
            errors.append(str(exc))

    with socket.create_server(("127.0.0.1", 0)) as taken:
        tf_port = taken.getsockname()[1]
        thread = threading.Thread(target=serving, args=(tf_port,), daemon=True)  # it waited for a session
        thread.start()
        thread.join(timeout=30)
    assert errors == [f"netbench serve: the PS task cannot listen on 127.0.0.1:{tf_port} (--tf-port): Address "
                      "already in use"]


def test_serve_waiting_for_a_session_stops_on_a_sigterm_another_thread_took() -> None:
    """A SIGTERM whose handler had not run when serve entered ``accept()`` (it came just after the last check, or
    the kernel gave it to another thread) left serve waiting for a connection for good: a CI run timed out after
    60 s on 'netbench serve' killed right after it said it was listening. Here the signal goes to a helper thread,
    which leaves the main thread in its wait; a connection made after 20 s would wake the old code."""
    port = free_port()
    listening = threading.Event()
    woken: list[bool] = []

    def signal_then_wake() -> None:
        listening.wait(timeout=30)
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)  # this thread, not the one in serve
        time.sleep(20)
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=5):
            woken.append(True)

    helper = threading.Thread(target=signal_then_wake, daemon=True)
    helper.start()
    with pytest.raises(TerminatedError, match="received SIGTERM"):
        serve(bind="127.0.0.1", port=port, tf_port=free_port(), progress=lambda _line: listening.set())
    assert not woken, "serve ran the SIGTERM handler only when a connection came"


def test_serve_in_a_session_stops_on_a_sigterm_another_thread_took() -> None:
    """The same, while a session waits for the client's next request: the read began with the handler not yet
    run, and serve went on waiting until the client spoke again (here, closes after 20 s)."""
    port = free_port()
    listening = threading.Event()
    replies: list[bytes] = []

    def session_then_signal() -> None:
        listening.wait(timeout=30)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
            client.sendall(b'{"op": "hello"}\n')
            replies.append(client.makefile("rb").readline())
            signal.pthread_kill(threading.get_ident(), signal.SIGTERM)  # this thread, not the one in serve
            time.sleep(20)

    helper = threading.Thread(target=session_then_signal, daemon=True)
    helper.start()
    start = time.monotonic()
    with pytest.raises(TerminatedError, match="received SIGTERM"):
        serve(bind="127.0.0.1", port=port, tf_port=free_port(), progress=lambda _line: listening.set())
    assert replies and json.loads(replies[0])["ok"]
    assert helper.is_alive(), f"serve stopped only when the client closed, {time.monotonic() - start:.0f} s on"


def test_a_ps_task_that_cannot_start_is_explained_to_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reason was printed on the PS host only; 'netbench run' on the other host said 'refused 'start':
    connection closed'."""
    monkeypatch.setattr(netbench_child, "_node_argv",
                        lambda _job: [sys.executable, "-c", "raise SystemExit('no TF here')"])
    with _session() as (stream, _):
        stream.write(b'{"op": "start", "workers": ["127.0.0.1:1"]}\n')
        stream.flush()
        assert json.loads(stream.readline()) == {"ok": False, "error": "netbench ps exited with code 1: no TF here"}
        assert stream.readline() == b""


def test_run_refuses_an_out_it_cannot_write_before_it_measures(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """--out in a folder where no file can be made (here /proc; a read-only mount alike) was found out when the
    profile was written, minutes of measuring later, and the profile lost."""
    def connect(*_args: object, **_kwargs: object) -> socket.socket:
        raise AssertionError("connected to measure with an --out it cannot write")

    monkeypatch.setattr(socket, "create_connection", connect)
    assert main(["netbench", "run", "--ps", "127.0.0.1:7070", "--out", "/proc/link-profile.json"]) == 2
    assert capsys.readouterr().err.startswith("tracegen netbench: error: /proc: cannot write the profile there: ")


def test_run_refuses_a_directory_as_its_out_before_it_measures(tmp_path: pathlib.Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """With --force, a directory --out was found out only when the profile was written, after the measurement."""
    def connect(*_args: object, **_kwargs: object) -> socket.socket:
        raise AssertionError("connected to measure with an --out it cannot write")

    monkeypatch.setattr(socket, "create_connection", connect)
    assert main(["netbench", "run", "--ps", "127.0.0.1:7070", "--out", str(tmp_path), "--force"]) == 2
    assert f"{tmp_path}: a directory; --out names the profile's file, e.g. {tmp_path}/link-profile.json" in (
        capsys.readouterr().err)


class _Closing:
    """A stand-in for a netbench child process: records its close; the first one closed meets a second Ctrl-C."""

    def __init__(self, closed: list[int], index: int) -> None:
        self.closed, self.index = closed, index

    def close(self) -> None:
        if not self.closed:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C pressed again while the children are killed
        self.closed.append(self.index)


def test_a_second_ctrl_c_while_the_children_are_killed_kills_them_all() -> None:
    """Ctrl-C twice: the second KeyboardInterrupt stopped the loop that kills netbench's TensorFlow processes
    after the first of them, leaving the others running (each in a session of its own, out of the terminal's
    reach). It is held back until all are killed, then raised."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a foreground run
    closed: list[int] = []
    try:
        with pytest.raises(KeyboardInterrupt), netbench_child.child_processes() as (children, _log_dir):  # noqa: PT012
            children.extend(_Closing(closed, i) for i in range(3))  # type: ignore[misc]
            raise KeyboardInterrupt  # the first Ctrl-C
    finally:
        signal.signal(signal.SIGINT, previous)
    assert closed == [0, 1, 2]


@contextlib.contextmanager
def _session(bind: str = "127.0.0.1", host: str = "127.0.0.1") -> Iterator[tuple[io.BufferedRWPair, list[str]]]:
    """One session with ``netbench serve --once --bind BIND`` run in a thread, reached at ``host``: the
    connection's stream, and what the server says on its terminal (complete once the block has ended, and the
    server with it)."""
    port = free_port()
    said: list[str] = []
    thread = threading.Thread(target=serve, kwargs={"bind": bind, "port": port, "once": True,
                                                    "progress": said.append}, daemon=True)
    thread.start()
    with _connect(port, host) as conn, conn.makefile("rwb") as stream:
        yield stream, said
    thread.join(timeout=30)
    assert not thread.is_alive()


def _connect(port: int, host: str = "127.0.0.1", within_s: float = 30.0) -> socket.socket:
    """A connection to the server starting in a thread: it may not listen yet on a busy machine."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            return socket.create_connection((host, port), timeout=30)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_serve_ends_a_session_on_a_bad_request_and_says_why() -> None:
    with _session() as (stream, said):
        stream.write(b'{"op": "hello"}\n')
        stream.flush()
        hello = json.loads(stream.readline())
        assert hello["ok"] and hello["cores"] > 0 and "tensorflow" in hello
        stream.write(b'{"op": "start", "workers": ["no-port"]}\n')
        stream.flush()
        refused = json.loads(stream.readline())  # the client is told why, then the session is over
        assert not refused["ok"] and "must be HOST:PORT" in refused["error"]
        assert stream.readline() == b""  # nothing was started
    assert any("must be HOST:PORT" in line and "'no-port'" in line for line in said)


_READY_THEN_WAIT = "import json, time; print(json.dumps({'event': 'ready'}), flush=True); time.sleep(300)"


@pytest.mark.usefixtures("ipv6_loopback")
@pytest.mark.parametrize(("host", "bracketed"), [("::1", "[::1]"), ("127.0.0.1", "127.0.0.1")])
def test_serve_on_every_address_hands_out_the_ps_task_where_the_client_came(host: str, bracketed: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve --bind ::``, every IPv6 and IPv4 address: it could not listen there ('Address family for hostname
    not supported'). The PS task's address it hands out, and gives TensorFlow, is the one the client came to, an
    IPv6 one in brackets as gRPC reads it (TensorFlow waited for good on '::1:2222'); an IPv4 client is not
    handed '::ffff:127.0.0.1', which an IPv4-only host cannot reach."""
    jobs: list[dict[str, object]] = []

    def ps_task(job: dict[str, object]) -> list[str]:  # the PS task's own run: the real run below
        jobs.append(job)
        return [sys.executable, "-c", _READY_THEN_WAIT]

    monkeypatch.setattr(netbench_child, "_node_argv", ps_task)
    worker = f"{bracketed}:1"
    with _session(bind="::", host=host) as (stream, said):
        stream.write(json.dumps({"op": "start", "workers": [worker]}).encode() + b"\n")
        stream.flush()
        reply = json.loads(stream.readline())
        assert reply["ok"] and reply["ps"].startswith(f"{bracketed}:"), reply
        assert split_address(reply["ps"], "ps")[0] == host
    assert jobs == [{"role": "ps", "cluster": {"ps": [reply["ps"]], "worker": [worker]}}]
    assert said[0].startswith("netbench serve: listening on [::]:"), said
    assert said[1] == netbench_server.TRUST_NOTE and "no authentication" in said[1]  # said before any session
    assert f"session from {host}" in said


def _real_run(tmp_path: pathlib.Path, bind: str, host: str, *options: str) -> pathlib.Path:
    """``netbench serve --once --bind BIND`` as a user starts it, and ``netbench run --ps HOST:PORT`` against it:
    the profile written."""
    port, tf_port = free_ports(2)
    server = subprocess.Popen([sys.executable, "-m", "tracegen", "netbench", "serve", "--bind", bind,
                               "--port", str(port), "--tf-port", str(tf_port), "--once"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        out = tmp_path / "new" / "link-profile.json"  # its folder made, as other commands' --out are
        assert main(["netbench", "run", "--ps", join_address(host, port), "--max-connections", "1", *options,
                     "--out", str(out)]) == 0
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:  # SIGTERM first: the server then stops the PS task it started
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        assert server.stderr is not None
        server.stderr.close()
    return out


@pytest.mark.slow
@pytest.mark.usefixtures("ipv6_loopback")
def test_a_real_run_over_ipv6_writes_a_profile(tmp_path: pathlib.Path) -> None:
    """Serve on ::1, run --ps [::1]:PORT: serve could not listen on an IPv6 address, and TensorFlow's tasks must
    be written [::1]:PORT in the cluster. Small steps and short windows: the addresses are under test (about 35 s
    here, most of it TensorFlow starting its processes)."""
    out = _real_run(tmp_path, "::1", "::1", "--window", "0.2", "--tensors", "1", "--tensor-bytes", "4096")
    profile = read_link_profile(out)
    assert profile.ps["address"].startswith("[::1]:") and profile.client["address"] == "::1"
    assert {p.mode for p in profile.points} == {"pull", "push", "both", "cycle", "rpc_pull", "rpc_push"}
    assert all(p.pull_bytes_per_s + p.push_bytes_per_s > 0 for p in profile.points)


@pytest.mark.slow
def test_a_real_run_on_this_machine_writes_a_profile(tmp_path: pathlib.Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = _real_run(tmp_path, "127.0.0.1", "127.0.0.1", "--window", "1")
    assert "wrote" in capsys.readouterr().out
    profile = read_link_profile(out)
    assert {p.mode for p in profile.points} == {"pull", "push", "both", "cycle", "rpc_pull", "rpc_push"}
    assert all(p.connections == 1 for p in profile.points)
    pull = profile.of_mode("pull")[0]
    assert pull.pull_bytes_per_s > 1e6 and pull.push_bytes_per_s == 0  # loopback moves far more than 1 MB/s
    assert profile.idle_rtt_ns is not None and profile.idle_rtt_ns > 0
    assert main(["netbench", "run", "--ps", f"127.0.0.1:{free_port()}", "--out", str(out)]) == 2  # exists: refused


@pytest.mark.slow
@pytest.mark.root
def test_inside_the_emulated_cluster_the_profile_sees_the_shaped_link(tmp_path: pathlib.Path) -> None:
    rate = 100_000_000
    config = ClusterConfig(n_workers=1, link=LinkShape(rate_bits_per_s=rate, burst_bytes=16384, latency_ms=20.0),
                           cpu_cap_ps=0.5, cpu_cap_worker=1.0, subnet="10.79.6.0/24")
    lines: list[str] = []
    profile = measure_link_profile(config, tmp_path / "link-profile.json", max_connections=2, window_s=1.0,
                                   progress=lines.append, tensors=8, tensor_bytes=65536)
    assert (profile.tensors, profile.tensor_bytes) == (8, 65536)  # testbed --netbench-tensors/--netbench-tensor-bytes
    payload = rate / 8 * 1448 / 1514
    for point in profile.points:
        # a point counts the tensors completed in its window; with two steps in flight per client, up to one
        # step's bytes of them moved before the window opened
        slack = (point.step_bytes or 0) / (point.window_s or profile.window_s)
        assert point.pull_bytes_per_s <= payload * 1.03 + slack and point.push_bytes_per_s <= payload * 1.03 + slack
    assert profile.of_mode("pull")[-1].pull_bytes_per_s >= 0.5 * payload
    assert profile.ps["cores"] == 0.5  # what the PS was capped at, not the machine's cores
    # and how: a CFS quota, which the PS's process cannot see from inside its namespace (profiles lacked it)
    stored = read_link_profile(tmp_path / "link-profile.json")
    assert stored.cpu_quota is not None and stored.cpu_quota.period_us == config.cfs_period_us
    assert stored.cpu_quota.host_cores > 0.5
    run_ids = [line.split("cluster ")[1].split()[0] for line in lines if "cluster " in line and " is up" in line]
    assert run_ids and not [x for x in leftovers() if any(f"_{r}_" in x for r in run_ids)]


def test_a_server_that_goes_away_mid_run_is_not_said_to_refuse() -> None:
    """A serve stopped while 'run' measured was reported as 'netbench serve at ... refused 'cpu': connection
    closed', as if it had turned the request down."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        def serve_once() -> None:
            conn, _ = server.accept()
            with conn, conn.makefile("rb") as stream:
                stream.readline()  # the request, never answered: the server stops here

        helper = threading.Thread(target=serve_once, daemon=True)
        helper.start()
        control = netbench_control.Control(f"127.0.0.1:{server.getsockname()[1]}", 10.0, 5.0, lambda _line: None)
        try:
            with pytest.raises(JobError) as caught:
                control.ask({"op": "cpu"})
        finally:
            control.close()
        helper.join(timeout=10)
    assert str(caught.value).endswith("closed the connection during 'cpu' without a reply: was it stopped?")
    assert "refused" not in str(caught.value)
