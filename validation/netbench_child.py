"""The TensorFlow processes netbench starts on either host (:mod:`validation.netbench_node`: the PS task on
``serve``'s, the clients on ``run``'s): each talks JSON lines on its stdin and stdout and writes its stderr to a file
that errors quote, and every one of them is killed, and its log folder removed, when the session ends, however it
ends (:func:`child_processes`).
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from tracegen.signals import held
from validation.errors import JobError
from validation.signals import terminating
from validation.stderr import NO_OUTPUT, summarize_stderr
from validation.testbed_window import node_env
from validation.windowcpu import process_cpu_s

# a starting process is waited for while it uses CPU (TensorFlow's import on a loaded host) up to this many times
# the time it may go using none
START_LIMIT = 4


def _node_argv(job: dict[str, Any]) -> list[str]:
    return [sys.executable, "-m", "validation.netbench_node", json.dumps(job)]


class Child:
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
        event = self._receive(want, deadline_s)
        if event is None:
            raise JobError(f"netbench {self.name}: no '{want}' in time ({self.stderr_tail()})")
        return event

    def receive_started(self, want: str, quiet_s: float, until_s: float) -> dict[str, Any]:
        """The next ``{"event": want}`` line of a process that is starting: importing TensorFlow takes seconds of
        CPU, and many more of the wall clock on a loaded host, so it is waited for while it keeps using CPU, until
        the monotonic clock reaches ``until_s``; JobError once it has used none for ``quiet_s`` (stuck), or then."""
        begun = last_busy = time.monotonic()
        last_cpu = process_cpu_s(self.popen.pid) or 0.0
        while True:
            event = self._receive(want, min(until_s, time.monotonic() + 1.0))
            if event is not None:
                return event
            now = time.monotonic()
            cpu = process_cpu_s(self.popen.pid)
            if cpu is not None and cpu > last_cpu:
                last_cpu, last_busy = cpu, now
            if now >= until_s or now - last_busy >= quiet_s:
                why = (f"no CPU used in the last {now - last_busy:.0f} s" if now < until_s
                       else "the limit for starting reached")
                raise JobError(f"netbench {self.name}: no '{want}' after {now - begun:.0f} s, {last_cpu:.1f} s of "
                               f"CPU used ({why}; {self.stderr_tail()})")

    def _receive(self, want: str, deadline_s: float) -> dict[str, Any] | None:
        """The next ``{"event": want}`` line, or None once the deadline passes; JobError when the process dies."""
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
                return None
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
def child_processes() -> Iterator[tuple[list[Child], pathlib.Path]]:
    """A list to start children into, and a log folder; every child is killed and the folder removed on exit, with
    Ctrl-C, SIGTERM and SIGHUP held back meanwhile (a second Ctrl-C while they were killed left the rest running)."""
    log_dir = pathlib.Path(tempfile.mkdtemp(prefix="tracegen_netbench_"))
    children: list[Child] = []
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
