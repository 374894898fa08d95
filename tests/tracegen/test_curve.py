"""The scaling curve's points (tracegen/curve.py): what each point says of its runs."""

from __future__ import annotations

import pathlib

from parsers import read_trace
from tracegen.curve import BUSY_THRESHOLD, scaling_curve
from tracegen.link import uniform_link
from tracegen.model import build_model
from tracegen.simulate import SimConfig


def test_a_point_s_bottleneck_agrees_with_the_utilisations_beside_it(mlp_trace_dir: pathlib.Path) -> None:
    """The bottleneck of a point was a vote of its seeds' own labels: the quick start's table printed push 78 %
    'link-push' at N = 2 and push 80 % 'workers' at N = 4. It is now the busiest of the utilisations averaged over
    the seeds, the figures printed beside it: 80 % or more names that resource, below it none."""
    model = build_model(read_trace(mlp_trace_dir))
    spec = uniform_link((6_000_000.0, 6_000_000.0), latency_ns=100_000)
    curve = scaling_curve(model, SimConfig(steps=6, warmup_steps=1, link_spec=spec), range(1, 7), seeds=3,
                          find_plateau=False)
    labels = set()
    for p in curve.points:
        name, value = max((("link-pull", p.pull_link_utilisation), ("link-push", p.push_link_utilisation),
                           ("ps-cpu", p.ps_cpu_utilisation)), key=lambda kv: kv[1])
        expected = {name} if value >= BUSY_THRESHOLD else {"workers", "contention"}
        assert p.bottleneck in expected, (p.n_workers, p.bottleneck, value)
        labels.add(p.bottleneck in ("workers", "contention"))
    assert labels == {True, False}  # the curve has points on both sides of the threshold


def test_a_link_that_carries_less_both_ways_is_the_bottleneck_at_what_it_carries_then(
        mlp_trace_dir: pathlib.Path) -> None:
    """A link given by its bandwidth alone carries 3/4 of it each way while the other direction is busy. Measured
    against its peak a direction never reached 80 %, and `predict --bandwidth 200Mbit/s` labelled every point of
    its link-bound plateau 'contention' (pull and push 69 %). A direction is now weighed against its two-way
    share, as the stall rule weighs it."""
    from tracegen.curve import two_way_share
    from tracegen.link import PULL, PUSH

    model = build_model(read_trace(mlp_trace_dir))
    spec = uniform_link((6_000_000.0, 6_000_000.0), latency_ns=100_000, two_way_bytes_per_s=(4_500_000.0, 4_500_000.0))
    assert two_way_share(spec, PULL) == two_way_share(spec, PUSH) == 0.75
    curve = scaling_curve(model, SimConfig(steps=6, warmup_steps=1, link_spec=spec), range(1, 9), seeds=2,
                          find_plateau=False)
    last = curve.points[-1]
    busiest = max(last.pull_link_utilisation, last.push_link_utilisation)
    assert 0.75 * BUSY_THRESHOLD <= busiest < BUSY_THRESHOLD  # under 80 % of the peak, over 80 % of 3/4 of it
    assert last.bottleneck in ("link-pull", "link-push")
