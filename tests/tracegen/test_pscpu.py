"""The PS's CPU: cores shared by what runs, op threads, and request handlers taken in arrival order."""

from __future__ import annotations

import pytest

from tracegen.engine import Engine
from tracegen.pscpu import PsCpu


def _finishes(cores: float, threads: int, ops: list[int], handles: list[int]) -> tuple[list[int], list[int]]:
    engine = Engine()
    cpu = PsCpu(engine, cores=cores, threads=threads)
    op_ends: list[int] = []
    handle_ends: list[int] = []
    for work in ops:
        cpu.request(0, work, lambda _start, _slot: op_ends.append(engine.now))
    for work in handles:
        cpu.handle(work, lambda _start, _slot: handle_ends.append(engine.now))
    engine.run()
    return op_ends, handle_ends


def test_requests_that_arrive_together_are_served_one_after_another_on_a_fraction_of_a_core() -> None:
    # 1 ms of work each on half a core: 2 ms each, one after another, not all four together at 8 ms
    _, ends = _finishes(0.5, 1, [], [1_000_000] * 4)
    assert ends == pytest.approx([2e6, 4e6, 6e6, 8e6], abs=2)


def test_handlers_share_the_cores_with_ops() -> None:
    # one op and one handle of 1 ms on one core: both run at once at half speed, both end at 2 ms
    op_ends, handle_ends = _finishes(1.0, 1, [1_000_000], [1_000_000])
    assert op_ends == pytest.approx([2e6], abs=2) and handle_ends == pytest.approx([2e6], abs=2)


def test_whole_cores_give_as_many_handlers() -> None:
    # two cores, four 1 ms requests: two at a time at full speed
    _, ends = _finishes(2.0, 1, [], [1_000_000] * 4)
    assert ends == pytest.approx([1e6, 1e6, 2e6, 2e6], abs=2)
    # the busy time is the work done, whatever the order
    engine = Engine()
    cpu = PsCpu(engine, cores=0.3, threads=2)
    for _ in range(3):
        cpu.handle(300_000, lambda _s, _t: None)
        cpu.request(0, 300_000, lambda _s, _t: None)
    engine.run()
    assert cpu.busy_ns() == pytest.approx(6 * 300_000, rel=1e-6)
