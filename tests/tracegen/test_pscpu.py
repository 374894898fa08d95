"""The PS's CPU: cores shared by what runs, op threads, and request handlers taken in arrival order."""

from __future__ import annotations

import pytest

from tracegen.engine import ARRIVE, Call, Engine, Notify
from tracegen.pscpu import CfsQuota, PsCpu


def _finishes(cores: float, threads: int, ops: list[int], handles: list[int],
              quota: CfsQuota | None = None) -> tuple[list[int], list[int]]:
    engine = Engine()
    cpu = PsCpu(engine, cores=cores, threads=threads, quota=quota)
    op_ends: list[int] = []
    handle_ends: list[int] = []
    for work in ops:
        cpu.request(0, work, Notify(lambda _start, _slot: op_ends.append(engine.now)), 0)
    for work in handles:
        cpu.handle(work, 0, on_done=Notify(lambda _start, _slot: handle_ends.append(engine.now)))
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
        cpu.handle(300_000, 0)
        cpu.request(0, 300_000, Notify(lambda _s, _t: None), 0)
    engine.run()
    assert cpu.busy_ns() == pytest.approx(6 * 300_000, rel=1e-6)


QUOTA = CfsQuota(host_cores=2.0, period_ns=10_000_000)  # the testbed's: 10 ms periods on a 2-core host


def test_a_quota_lets_a_short_request_run_at_full_speed() -> None:
    # 0.3 cores as a CFS quota: 3 ms of CPU per 10 ms period; a 1 ms request on an idle PS takes 1 ms, not 3.3
    _, ends = _finishes(0.3, 1, [], [1_000_000], QUOTA)
    assert ends == pytest.approx([1e6], abs=2)
    # as a slower CPU it would take 1 / 0.3 ms
    _, slow = _finishes(0.3, 1, [], [1_000_000])
    assert slow == pytest.approx([1e6 / 0.3], abs=2)


def test_a_quota_stops_the_ps_once_its_budget_is_spent() -> None:
    # 10 ms of work: 3 ms in each of the first three periods, the last 1 ms at the start of the fourth
    op_ends, _ = _finishes(0.3, 1, [10_000_000], [], QUOTA)
    assert op_ends == pytest.approx([31e6], abs=2)
    # two ops run on both host cores at once while the budget lasts: 1.5 ms each, then throttled
    op_ends, _ = _finishes(0.3, 2, [2_000_000, 2_000_000], [], QUOTA)
    assert op_ends == pytest.approx([10.5e6, 10.5e6], abs=2)


@pytest.mark.parametrize("work_ns", [1, 999_999, 3_000_000, 3_000_001, 10_000_000, 123_456_789])
def test_work_of_a_traced_op_inverts_what_the_quota_did_to_it(work_ns: int) -> None:
    """An op alone on a capped PS, starting a period: the wall time the resource gives it, turned back into
    work, is its work."""
    op_ends, _ = _finishes(0.3, 1, [work_ns], [], QUOTA)
    assert QUOTA.work_ns(0.3, op_ends[0]) == pytest.approx(work_ns, abs=2)
    assert QUOTA.work_ns(2.0, op_ends[0]) == op_ends[0]  # no quota below the host's cores: wall time is work


def test_a_quota_costs_nothing_while_the_ps_is_idle_however_long() -> None:
    """A PS idle for years of simulated time (a link of a few bytes a second) resumes with the period it is in,
    at once: idle periods are skipped, not stepped through one by one (which took 10^10 steps here and hung)."""
    import signal

    def stuck(_signum: int, _frame: object) -> None:
        raise AssertionError("an idle PS was stepped through period by period")

    engine = Engine()
    cpu = PsCpu(engine, cores=0.3, threads=1, quota=QUOTA)
    ends: list[int] = []
    ended = Notify(lambda _start, _slot: ends.append(engine.now))
    cpu.handle(10_000_000, 0, on_done=ended)  # 10 ms of work at t = 0
    later = 10**17 + 5_000_000  # about three years on, half-way through a period
    engine.at(later, ARRIVE, Call(lambda _: cpu.handle(10_000_000, 0, on_done=ended)))
    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(60)
    try:
        engine.run()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    # the first: 3 ms in each of three periods, 1 ms of the fourth; the second starts mid-period with its full
    # budget: 3 ms, then 3, 3 and 1 in the next periods
    assert ends == pytest.approx([31e6, later + 5e6 + 21e6], abs=2)


@pytest.mark.parametrize("cores", [1.0, 1.5, 3.0])
def test_one_op_uses_one_core_of_a_quota_of_a_core_or_more(cores: float) -> None:
    quota = CfsQuota(host_cores=4.0, period_ns=10_000_000)
    op_ends, _ = _finishes(cores, 1, [31_000_000], [], quota)
    assert op_ends == [31_000_000]  # one thread: alone, its work in as much wall time
    assert quota.work_ns(cores, op_ends[0]) == 31_000_000
