"""The PS link resource on its own (tracegen/link.py): completion times worked out by hand from the max-min sharing."""

from __future__ import annotations

import pytest

from tracegen.engine import ARRIVE, Call, Engine, Notify
from tracegen.link import PULL, PUSH, FlowLink, link_model, uniform_link

S = 1_000_000_000  # ns


def _run(model: str, starts: list[tuple[float, int, int]], *, two_way: float | None = None) -> tuple[list[int], int]:
    """Each ``(at_s, direction, size_bytes)`` starts on a link of 1000 B/s each way (``two_way`` B/s each while both
    are busy); when each arrives, and how many events the engine ran."""
    engine = Engine()
    link = FlowLink(engine, uniform_link((1000.0, 1000.0), connection_bytes_per_s=(1e9, 1e9),
                                         two_way_bytes_per_s=None if two_way is None else (two_way, two_way)),
                    link_model(model))
    arrived = [-1] * len(starts)

    def start(i: int) -> None:
        _, direction, size = starts[i]
        link.start(direction, i, size, 0, Notify(lambda _start, _slot: arrived.__setitem__(i, engine.now)), i)

    for i, (at_s, _, _) in enumerate(starts):
        engine.at(round(at_s * S), ARRIVE, Call(start), i)
    engine.run()
    return arrived, engine.n_events


def test_heads_finish_in_the_order_of_what_they_still_need() -> None:
    # fair: 3000 and 1000 bytes share 1000 B/s from 0 (500 each): the small one arrives at 2 s, the large one has
    # 2000 left; at 2.5 s it has 1500 left and 500 bytes join, which arrive first (3.5 s), then the large (4.5 s)
    arrived, _ = _run("fair", [(0, PULL, 3000), (0, PULL, 1000), (2.5, PULL, 500)])
    assert arrived == pytest.approx([4.5 * S, 2 * S, 3.5 * S], abs=2)


def test_a_direction_is_rescheduled_only_when_the_other_starts_or_stops_being_busy() -> None:
    # a 3000-byte pull alone at 1000 B/s; from 0.5 s pushes keep the push direction busy until 1.2 s, so each
    # direction gets 500 B/s (two pushes share theirs: 250 each from 0.6 s): 250 bytes pushed from 0.5 s, 100 from
    # 0.6 s arrive at 1.2 s and 1.0 s; the pull moved 500 + 0.7 * 500 bytes by then, 2150 left at 1000 B/s
    arrived, n_events = _run("conn", [(0, PULL, 3000), (0.5, PUSH, 250), (0.6, PUSH, 100)], two_way=500.0)
    assert arrived == pytest.approx([3.35 * S, 1.2 * S, 1.0 * S], abs=2)
    # 3 starts, 3 launches, 3 arrivals, and a superseded completion each time the pull's rate changed (0.5 s and
    # 1.2 s) or the pushes' did before their first arrival (0.6 s): the pushes' comings and goings at 0.6 and 1.0 s
    # leave the pull's completion where it was
    assert n_events == 3 + 3 + 3 + 3
