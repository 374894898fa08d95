"""The report's SVG charts (``tracegen/svgchart.py``): ticks on a 1-2-5 step, points placed on the plot by hand,
a value of None left out, every name escaped."""

from __future__ import annotations

import re

import pytest

from tracegen.svgchart import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, Chart, Series, nice_ticks, render


@pytest.mark.parametrize(("high", "integer", "ticks"), [
    (7.0, False, [0, 2, 4, 6, 8]),  # 7 / 5 = 1.4: step 2
    (0.9, False, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),  # 0.18: step 0.2
    (12.0, False, [0, 2.5, 5, 7.5, 10, 12.5]),  # 2.4: step 2.5
    (12.0, True, [0, 3, 6, 9, 12]),  # 2.5 rounded up to a whole 3
    (10.0, False, [0, 2, 4, 6, 8, 10]),  # exactly on a step: no tick past it
    (3.0, True, [0, 1, 2, 3]),  # 0.6: step 1
    (0.0, False, [0, 1]), (float("nan"), False, [0, 1]), (-5.0, False, [0, 1]),
])
def test_nice_ticks_by_hand(high: float, integer: bool, ticks: list[float]) -> None:
    assert nice_ticks(high, integer=integer) == pytest.approx(ticks)


def test_points_are_placed_on_the_plot_and_a_missing_value_left_out() -> None:
    """xs 1..3 span the plot's width; the values' top 4.8 (x 1.04 = 4.992) gives ticks 0..5 (step 1), so y 5 is
    the plot's top and y 0 its bottom."""
    chart = Chart(chart_id="c", title="a <b> & c", xs=(1, 2, 3), x_label="N", y_label="steps/s",
                  tips=("one", "two", "three"),
                  series=(Series(name="s<1>", values=(0.0, None, 4.8), color="#123456"),))
    svg = render(chart)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    circles = re.findall(r'<circle cx="([0-9.]+)" cy="([0-9.]+)"', svg)
    assert circles == [(f"{LEFT:.1f}", f"{TOP + plot_h:.1f}"),
                       (f"{LEFT + plot_w:.1f}", f"{TOP + plot_h - 4.8 / 5 * plot_h:.1f}")]
    assert "a &lt;b&gt; &amp; c" in svg and "s&lt;1&gt;" in svg and "<b>" not in svg
    assert re.findall(r'data-n="(\d)"', svg) == ["1", "2", "3"]
    with pytest.raises(ValueError, match="one tip per x"):
        render(Chart(chart_id="c", title="t", xs=(1, 2), x_label="N", y_label="y", tips=("one",)))
