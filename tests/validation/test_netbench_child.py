"""How netbench waits for a process it started: a client importing TensorFlow on a loaded host (helpers' TF jobs on
both of this machine's cores) took over the 120 s a start was allowed and the link profile was refused ("netbench
client 8: no 'ready' in time"); one that uses CPU is now waited for, one that uses none is still refused. The
processes here are real ones of a few lines, standing in for the node's TensorFlow, so the test takes seconds."""

from __future__ import annotations

import pathlib
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from validation import netbench_child
from validation.errors import JobError
from validation.netbench_child import Child

_READY = "import json; print(json.dumps({'event': 'ready'}), flush=True)"
SLOW_START = f"import time\nend = time.monotonic() + 3\nwhile time.monotonic() < end: pass\n{_READY}\ntime.sleep(60)"
STUCK = "import time; time.sleep(60)"
BUSY = "while True: pass"


@pytest.fixture
def start(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Child]]:
    """Starts a Child running ``program`` in place of the node's TensorFlow; each is closed after the test."""
    started: list[Child] = []

    def child(program: str) -> Child:
        monkeypatch.setattr(netbench_child, "_node_argv", lambda _job: [sys.executable, "-c", program])
        started.append(Child({"role": "client"}, tmp_path, "client 1"))
        return started[-1]

    yield child
    for each in started:
        each.close()


def test_a_start_that_keeps_using_cpu_is_waited_for_past_the_quiet_limit(start: Callable[[str], Child]) -> None:
    child = start(SLOW_START)
    begun = time.monotonic()
    assert child.receive_started("ready", 1.5, begun + 60) == {"event": "ready"}
    assert time.monotonic() - begun > 1.5  # longer than a process may go without CPU: it was busy throughout


def test_a_start_that_uses_no_cpu_is_refused_once_quiet_for_the_limit(start: Callable[[str], Child]) -> None:
    child = start(STUCK)
    begun = time.monotonic()
    with pytest.raises(JobError, match=r"^netbench client 1: no 'ready' after \d+ s, [\d.]+ s of CPU used "
                                       r"\(no CPU used in the last \d+ s; "):
        child.receive_started("ready", 2.0, begun + 60)
    assert 2.0 <= time.monotonic() - begun < 30


def test_a_start_that_never_ends_is_refused_at_the_limit(start: Callable[[str], Child]) -> None:
    child = start(BUSY)
    begun = time.monotonic()
    with pytest.raises(JobError, match=r"\(the limit for starting reached; "):
        child.receive_started("ready", 30.0, begun + 3)
    assert 3 <= time.monotonic() - begun < 30
